#!/bin/sh
# harness_only.sh TESTS_DIR: the check that the tests have one harness
# (tests/common/harness.h, issue 42 item 4). It fails when a test source
# outside tests/common
#   - defines its own slurp (a function whose name contains "slurp"), or
#   - runs bin/calhost itself: it names the program ("...bin/calhost" or
#     '.../bin/calhost' in a string) and execs, popens, system()s,
#     posix_spawns or forkptys.
# Benchmarks and fuzz targets (tests/bench, tests/fuzz) are programs, not
# cmocka tests, and are not checked. PENDING lists the files not converted
# yet, each with why; a file listed there that no longer offends fails the
# check too, so the list only shrinks.
set -u
dir=${1:?usage: harness_only.sh TESTS_DIR}
cd "$dir" || exit 2

# not converted yet: none (every test runs calhost and reads files through
# the harness)
PENDING="
"

pending() {
  case "$PENDING" in *"
$1
"*) return 0 ;; esac
  return 1
}

offenders=$(
  find . -path ./common -prune -o -path ./bench -prune -o -path ./fuzz -prune -o \
    -type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | sort |
    while read -r f; do
      why=""
      if grep -qE '^[A-Za-z_][A-Za-z0-9_ *]*[A-Za-z0-9_]*slurp[A-Za-z0-9_]*[[:space:]]*\([^;]*$' "$f"; then
        why="defines its own slurp"
      fi
      if grep -qE "bin/calhost[\"']" "$f" &&
        grep -qE '\b(execv|execvp|execve|execl|execlp|popen|system|posix_spawn|posix_spawnp|forkpty)[[:space:]]*\(' "$f"; then
        why="${why:+$why; }runs bin/calhost without the harness"
      fi
      [ -n "$why" ] && printf '%s\t%s\n' "$f" "$why"
    done
)

status=0
printf '%s\n' "$offenders" | while IFS='	' read -r f why; do
  [ -n "$f" ] || continue
  if pending "$f"; then
    echo "pending: $f: $why"
  else
    echo "FAIL: $f: $why (use tests/common/harness.h: harness_run, harness_slurp)"
  fi
done
new=$(printf '%s\n' "$offenders" | cut -f1 | while read -r f; do
  [ -n "$f" ] && ! pending "$f" && echo "$f"; done)
[ -n "$new" ] && status=1
for f in $PENDING; do
  if ! printf '%s\n' "$offenders" | cut -f1 | grep -qx "$f"; then
    echo "FAIL: $f is listed as pending but uses the harness now: drop it from PENDING"
    status=1
  fi
done
n=$(printf '%s\n' "$offenders" | grep -c .)
[ $status -eq 0 ] && echo "ok: no test outside tests/common reads files or runs calhost around the harness, but the $n pending"
exit $status
