#!/usr/bin/awk -f
# slice-space.awk: cuts a recorded search space (host/search/README.md,
# "Space files") to a slice: the configurations whose parameters have the
# values of -v slice="NAME=VALUE[,NAME=VALUE]"; each sliced parameter's
# `param` line keeps only its slice value, the space is renamed to
# -v name=NAME and a `meta slice` line says what was cut. The slice must be
# complete: either the recording says `meta complete 1` (every valid
# configuration recorded: a Kernel Tuner cache, so any slice of it is
# complete), or the slice is over the leading parameters of an exhaustive
# recording in the plugin's order and the last configuration recorded lies
# past it (proof that the recording covered all of it); else the script
# fails.
BEGIN {
  n = split(slice, parts, ",")
  for (i = 1; i <= n; i++) {
    split(parts[i], kv, "=")
    want[kv[1]] = kv[2]
  }
  np = 0
  kept = 0
  last_in = 1
}
/^space / { print "space " name; next }
/^meta complete 1$/ { complete = 1; print; next }
/^param / {
  if (!meta_done) {
    print "meta slice " slice " (the complete slice of the recorded space)"
    meta_done = 1
  }
  np++
  pname[np] = $2
  if ($2 in want) {
    print "param " $2 " " $3 " " want[$2]
    next
  }
  print
  next
}
/^config / {
  inside = 1
  for (i = 1; i <= np; i++)
    if ((pname[i] in want) && $(i + 1) != want[pname[i]])
      inside = 0
  last_in = inside
  if (inside) {
    print
    kept++
  }
  next
}
{ print }
END {
  if (last_in && !complete) {
    print "slice-space: the recording ends inside the slice " slice ": it is not complete" > "/dev/stderr"
    exit 1
  }
  if (kept == 0) {
    print "slice-space: no configuration in the slice " slice > "/dev/stderr"
    exit 1
  }
}
