#!/usr/bin/env bash
# calhost's coverage job: a gcov build (-DCALHOST_COVERAGE=ON), a chosen set
# of its tests, and the line and branch figures lcov reads from the counters,
# for libcalstore (host/store; its fault hooks, fault.c, left out: test
# builds only) and for the host (host/, the store included).
#
#   scripts/coverage.sh [--tests REGEX] [--html]
#       --tests REGEX  the ctest -R expression of the tests to run
#                      (default: '^store_', the store's tests; '.' is the
#                      whole suite)
#       --html         also write an HTML page per file (genhtml) in
#                      COV_BUILD_DIR/coverage/html
#
# COV_BUILD_DIR (default: build-coverage) is the build folder; the counters'
# summaries are left in COV_BUILD_DIR/coverage (*.info). Needs GCC's gcov and
# Debian's lcov: the script installs lcov when it is missing, nothing else
# installs it (the test job of scripts/setup.sh does not need it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
COV_BUILD_DIR=${COV_BUILD_DIR:-build-coverage}
JOBS=$(nproc 2>/dev/null || echo 2)
tests='^store_'
html=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tests) [ $# -ge 2 ] || { echo "coverage.sh: --tests needs a ctest expression" >&2; exit 2; }
             tests=$2; shift 2 ;;
    --html) html=1; shift ;;
    *) echo "usage: scripts/coverage.sh [--tests REGEX] [--html]" >&2; exit 2 ;;
  esac
done

if ! command -v lcov >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "coverage: installing lcov"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends lcov
fi

# The store's fault hooks are compiled everywhere (CALHOST_FAULT_INJECTION;
# inert unless CALSTORE_FAULT is set): the fault tests compile the store's
# sources themselves, and lcov adds up the counters of each copy of a file
# branch by branch, which holds only when every copy is the same code.
cmake -S . -B "$COV_BUILD_DIR" -DCALHOST_COVERAGE=ON -DCMAKE_BUILD_TYPE=Debug \
  -DCALHOST_FAULT_INJECTION=ON -DCALHOST_TESTS=ON -DCALHOST_BENCH=OFF -DCALHOST_FUZZ=OFF \
  -DCALHOST_SANITIZE=OFF >/dev/null
# Build what the chosen tests need (a test's target has the test's name and
# names its own dependencies); the whole tree when a test has no target.
mapfile -t names < <(cd "$COV_BUILD_DIR" && ctest -N -R "$tests" | sed -n 's/^ *Test *#[0-9]*: //p')
if [ ${#names[@]} -eq 0 ]; then
  echo "coverage: no test matches '$tests'" >&2
  exit 2
fi
cmake --build "$COV_BUILD_DIR" -j "$JOBS" --target "${names[@]}" 2>/dev/null ||
  cmake --build "$COV_BUILD_DIR" -j "$JOBS"

out="$COV_BUILD_DIR/coverage"
mkdir -p "$out"
rc=(--rc lcov_branch_coverage=1 --quiet)
# lcov 1.16's geninfo warns about its own redefined subroutines under newer Perl
quiet_perl() { grep -v 'redefined at /usr/bin/geninfo' >&2 || true; }
lcov "${rc[@]}" --zerocounters --directory "$COV_BUILD_DIR"
status=0
(cd "$COV_BUILD_DIR" && ctest -R "$tests" -j "$JOBS" --output-on-failure) || status=$?
lcov "${rc[@]}" --capture --directory "$COV_BUILD_DIR" --base-directory "$here" \
  --output-file "$out/all.info" 2> >(quiet_perl)
# The fault hooks (fault.c) are test scaffolding, never in the library.
lcov "${rc[@]}" --remove "$out/all.info" "$here/host/store/fault.c" --output-file "$out/all.info"
lcov "${rc[@]}" --extract "$out/all.info" "$here/host/*" --output-file "$out/host.info"
lcov "${rc[@]}" --extract "$out/all.info" "$here/host/store/*" --output-file "$out/store.info"

# figure INFO: "lines P% (HIT of FOUND), branches P% (HIT of FOUND)"
figure() {
  awk -F: '/^LF:/ {lf += $2} /^LH:/ {lh += $2} /^BRF:/ {bf += $2} /^BRH:/ {bh += $2}
    END { printf "lines %.1f%% (%d of %d), branches %.1f%% (%d of %d)\n",
          lf ? 100 * lh / lf : 0, lh, lf, bf ? 100 * bh / bf : 0, bh, bf }' "$1"
}
echo "coverage of the tests matching '$tests' (${#names[@]} programs):"
echo "  libcalstore (host/store): $(figure "$out/store.info")"
echo "  host (host/):             $(figure "$out/host.info")"
if [ "$html" -eq 1 ]; then
  genhtml "${rc[@]}" --branch-coverage --output-directory "$out/html" "$out/all.info"
  echo "  per file: $out/html/index.html"
fi
if [ "$status" -ne 0 ]; then
  echo "coverage: some tests failed (ctest exit $status); the figures count what ran" >&2
fi
exit "$status"
