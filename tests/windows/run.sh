#!/usr/bin/env bash
# tests/windows/run.sh: runs the Windows tests (test_store_win.exe,
# test_loader_win.exe of the mingw-w64 cross build) under Wine, headless:
# a fresh WINEPREFIX in a temporary folder, WINEDEBUG=-all, no display, no
# Mono or Gecko. Each program prints one PASS/FAIL line per case and an
# "N passed, N failed" summary; this script adds them up.
#
#   tests/windows/run.sh [MINGW_BUILD_DIR]     (default: build-mingw)
#
# The cross build must exist (cmake -S . -B build-mingw
# -DCMAKE_TOOLCHAIN_FILE=.ci/mingw-w64.cmake && cmake --build build-mingw
# --target test_store_win test_loader_win). WINE may name the Wine loader
# (default: wine64 on PATH, else Debian's /usr/lib/wine/wine64). Exit
# status: 0 when every case of every program passed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-build-mingw}
case "$build" in /*) ;; *) build="$here/$build" ;; esac

if [ -z "${WINE:-}" ]; then
  for w in wine64 /usr/lib/wine/wine64 wine; do
    if command -v "$w" >/dev/null 2>&1; then WINE=$(command -v "$w"); break; fi
  done
fi
if [ -z "${WINE:-}" ]; then
  echo "wine: no Wine loader found (apt-get install wine64)" >&2
  exit 1
fi
for exe in test_store_win test_loader_win; do
  if [ ! -f "$build/bin/$exe.exe" ]; then
    echo "wine: $build/bin/$exe.exe is not built (cross build: see the opening comment)" >&2
    exit 1
  fi
done

# Windows paths of this checkout and of the DLLs: Wine maps / to Z:.
winpath() { printf 'Z:%s' "$(printf '%s' "$1" | tr / '\\')"; }

prefix=$(mktemp -d "${TMPDIR:-/tmp}/calhost-wine-XXXXXX")
server="$(dirname "$WINE")/wineserver"
[ -x "$server" ] || server=$(command -v wineserver || echo "")
cleanup() {
  [ -n "$server" ] && WINEPREFIX="$prefix" "$server" -k >/dev/null 2>&1
  rm -rf "$prefix"
}
trap cleanup EXIT
export WINEPREFIX="$prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY WAYLAND_DISPLAY
export CALHOST_SOURCE_DIR
CALHOST_SOURCE_DIR=$(winpath "$here")
export CALHOST_TEST_DLL_DIR
CALHOST_TEST_DLL_DIR=$(winpath "$build/tests/windows/dlls")

t0=$(date +%s)
timeout 300 "$WINE" wineboot --init >/dev/null 2>&1
echo "wine: $("$WINE" --version 2>/dev/null || echo "$WINE"), prefix ready in $(( $(date +%s) - t0 )) s"

passed=0 failed=0 broken=""
for exe in test_store_win test_loader_win; do
  t1=$(date +%s)
  out=$(cd "$prefix" && timeout 600 "$WINE" "$build/bin/$exe.exe" 2>&1)
  rc=$?
  out=${out//$'\r'/} # the programs' text-mode stdout ends lines with CRLF
  printf '%s\n' "$out" | sed "s/^/  $exe: /"
  p=$(grep -c '^PASS ' <<<"$out")
  f=$(grep -c '^FAIL ' <<<"$out")
  passed=$((passed + p))
  failed=$((failed + f))
  if ! grep -qE '^[0-9]+ passed, [0-9]+ failed$' <<<"$out" || [ "$rc" -ne 0 ]; then
    [ "$f" -gt 0 ] || broken="$broken $exe(exit $rc)"
  fi
  echo "  $exe: $p passed, $f failed in $(( $(date +%s) - t1 )) s"
done
echo "wine: $passed passed, $failed failed${broken:+, did not finish:$broken} ($(( $(date +%s) - t0 )) s)"
[ "$failed" -eq 0 ] && [ -z "$broken" ] && [ "$passed" -gt 0 ]
