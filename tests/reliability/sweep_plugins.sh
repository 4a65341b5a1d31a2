#!/usr/bin/env bash
# sweep_plugins.sh: misbehaving plugins during `calhost calibrate` (issue 6,
# Faults): a plugin that aborts, calls exit() (with status 3, and with 0),
# floods stdout (bounded, endlessly, and from create() in the host itself),
# or returns an invalid policy (a line break, an embedded NUL, a length
# larger than its buffer, empty, oversized, refused by its own validator)
# must be reported by name, and every other plugin's results stored; the
# store must load afterwards, and valid but awkward policies (quotes and
# backslashes, exactly CALHOST_POLICY_MAX_LENGTH bytes) must be stored and
# read back intact. The crash and hang cases are tests/integration's.
# Registered as the ctest reliability_sweep_plugins (CALHOST_BUILD_DIR).
set -uo pipefail
build=${CALHOST_BUILD_DIR:?set CALHOST_BUILD_DIR to the build tree}
calhost="$build/bin/calhost"
dump="$build/bin/tests/store_dump"
tp="$build/lib/calhost/test-plugins"
rp="$build/lib/calhost/reliability-plugins"
good=(test_good example)
stored_ok=(rel_flood rel_quotes rel_max_policy)
must_fail=(test_abort test_exit rel_exit0 rel_flood_forever rel_newline rel_nul rel_length_lie
           test_refuse_all test_empty_policy test_oversized)
missing=()
for f in "$calhost" "$dump"; do [ -x "$f" ] || missing+=("$f"); done
for p in "${stored_ok[@]}" "${must_fail[@]}" test_good rel_flood_create; do
  case "$p" in rel_*) d=$rp ;; *) d=$tp ;; esac
  [ -f "$d/$p.so" ] || missing+=("$d/$p.so")
done
[ -f "$build/lib/calhost/plugins/example.so" ] || missing+=("$build/lib/calhost/plugins/example.so")
if [ ${#missing[@]} -gt 0 ]; then
  echo "sweep_plugins: not built: ${missing[*]}"
  exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/calhost-sweep-XXXXXX")
chmod 0755 "$dir"
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# config FILE NAME PLUGIN...: a configuration whose plugin directory
# $dir/NAME holds copies of exactly the test plugins named (example comes
# from the build tree, through the link $dir/pp; the other shipped plugins
# are disabled). Short lines: inih refuses lines over ~200 characters, and
# build trees can be deep.
config() {
  local file=$1 pdir=$dir/$2 p
  shift 2
  mkdir -p "$pdir"
  chmod 0755 "$pdir"
  for p in "$@"; do
    case "$p" in
      example) ;;
      rel_*) install -m 0644 "$rp/$p.so" "$pdir/$p.so" ;;
      *) install -m 0644 "$tp/$p.so" "$pdir/$p.so" ;;
    esac
  done
  [ -e "$dir/pp" ] || ln -s "$build/lib/calhost/plugins" "$dir/pp"
  cat >"$file" <<EOF
[store]
path = $dir/store.txt
[plugins]
directories = $pdir:$dir/pp
disabled = cpu_gemm, openblas
[calibration]
threads = 1
rigor = quick
time_budget = 3
plugin_timeout = 4
[workload sum_4k]
operator = ReduceSum
shape = 4096
EOF
}

echo "== misbehaving plugins during calibrate"
all=("${good[@]}" "${stored_ok[@]}" "${must_fail[@]}")
config "$dir/all.ini" p-all "${all[@]}"
t0=$(date +%s)
"$calhost" --config "$dir/all.ini" calibrate >"$dir/out.txt" 2>"$dir/err.txt"
rc=$?
secs=$(( $(date +%s) - t0 ))
echo "   calibrate of ${#all[@]} plugins exited $rc after $secs s" \
     "(stdout $(wc -c <"$dir/out.txt") bytes, stderr $(wc -c <"$dir/err.txt") bytes)"
[ $rc -eq 1 ] || fail "expected exit status 1 (some plugins failed), got $rc"
# The floods wrote megabytes; calhost may quote the start of a failed
# plugin's output in its report, never pass the flood through.
out_bytes=$(wc -c <"$dir/out.txt")
if [ "$out_bytes" -gt 65536 ]; then
  fail "a plugin's stdout flood reached calhost's own stdout ($out_bytes bytes)"
fi
"$dump" "$dir/store.txt" >"$dir/dump.txt"
drc=$?
head -n 1 "$dir/dump.txt" | sed 's/^/   store: /'
[ $drc -eq 0 ] || fail "the store does not load after the sweep: $(head -n 1 "$dir/dump.txt")"

for p in "${good[@]}" "${stored_ok[@]}"; do
  n=$(grep -c " $p|" "$dir/dump.txt")
  if [ "$n" -gt 0 ]; then
    echo "   ok   $p: $n profiles stored"
  else
    fail "$p: no profile stored ($(grep -E "^ +$p " "$dir/out.txt" | head -n 3 | tr '\n' ' '))"
  fi
done
for p in "${must_fail[@]}"; do
  n=$(grep -c " $p|" "$dir/dump.txt")
  why=$(grep -E "(^| )$p( |:|$)" "$dir/out.txt" "$dir/err.txt" | grep -viE '^\S+:\s*$' |
        grep -iE 'fail|refus|reject|invalid|exit|signal|timed out|too large|empty|line break|NUL|length|policy|error' |
        head -n 1 | sed -E 's/^[^:]*:\s*//')
  if [ "$n" -gt 0 ]; then
    fail "$p: $n profiles stored from a misbehaving plugin"
  elif [ -z "$why" ]; then
    fail "$p: not reported (no failure line names it)"
  else
    echo "   ok   $p: reported: ${why:0:150}"
  fi
done

# Policies that are valid but awkward come back byte for byte.
want='p=1 "quoted" \back\slash\ "" end\'
if grep -qF " rel_quotes|" "$dir/dump.txt"; then
  if grep -F " rel_quotes|" "$dir/dump.txt" | grep -qF " => ${want:0:2}"; then
    got=$(grep -F " rel_quotes|" "$dir/dump.txt" | head -n 1 | sed 's/.* => //')
    case "$got" in
      "p="?' "quoted" \back\slash\ "" end\') echo "   ok   rel_quotes: policy read back intact: $got" ;;
      *) fail "rel_quotes: policy changed on the way: $got" ;;
    esac
  fi
fi
if grep -F " rel_max_policy|" "$dir/dump.txt" | grep -q "(65536 bytes)"; then
  echo "   ok   rel_max_policy: a 65536-byte policy stored and read back whole"
elif grep -qF " rel_max_policy|" "$dir/dump.txt"; then
  fail "rel_max_policy: stored policy is not 65536 bytes: $(grep -F " rel_max_policy|" "$dir/dump.txt" | head -n 1)"
fi
# A 64 KiB policy must not be echoed whole on the progress lines.
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$dir/err.txt")
if [ "$longest" -le 1024 ]; then
  echo "   ok   progress lines stay short with 64 KiB policies (longest stderr line: $longest bytes)"
else
  fail "a progress line on stderr is $longest bytes long (a long policy printed whole)"
fi

echo "== a plugin flooding stdout from create(), with --json"
config "$dir/json.ini" p-json test_good rel_flood_create
"$calhost" --config "$dir/json.ini" calibrate --json --force >"$dir/json.txt" 2>"$dir/json-err.txt"
rc=$?
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$dir/json.txt" 2>"$dir/json-parse.txt"; then
  echo "   ok   calibrate --json exited $rc, stdout ($(wc -c <"$dir/json.txt") bytes) is one JSON document"
else
  fail "calibrate --json stdout is not JSON ($(wc -c <"$dir/json.txt") bytes; $(tail -n 1 "$dir/json-parse.txt"))"
fi

echo "sweep: plugins=${#all[@]} stored_as_expected=$(( ${#good[@]} + ${#stored_ok[@]} )) reported=${#must_fail[@]} seconds=$secs failures=$failures"
if [ $failures -ne 0 ]; then
  echo "--- calibrate stdout (tail)"; tail -n 40 "$dir/out.txt" | cut -c1-200
  echo "--- calibrate stderr (tail)"; tail -n 20 "$dir/err.txt" | cut -c1-200
  echo "sweep: FAILED"
  exit 1
fi
echo "sweep: PASSED"
