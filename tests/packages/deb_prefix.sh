#!/bin/bash
# deb_prefix.sh SOURCE_DIR: `cpack -G DEB` in a default build (CMake's
# /usr/local prefix) is refused, before anything is installed or packaged,
# with the commands that make correct packages (issue 36 item 9: it made
# packages under /usr/local, 222 lintian errors). The packages of a /usr
# build are packages_deb's test (packages.sh).
set -eu
src=$1
work=$(mktemp -d /tmp/calhost-deb-prefix-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake -S "$src" -B "$work/build" -DCALHOST_TESTS=OFF -DCALHOST_BENCH=OFF -DCALHOST_FUZZ=OFF \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure"; }
grep -q 'CMAKE_INSTALL_PREFIX:PATH=/usr/local$' "$work/build/CMakeCache.txt" ||
  fail "the default prefix is not /usr/local here"
rc=0
(cd "$work/build" && cpack -G DEB) >"$work/cpack.log" 2>&1 || rc=$?
cat "$work/cpack.log"
[ "$rc" -ne 0 ] || fail "cpack -G DEB succeeded in a /usr/local build"
grep -q 'need a build configured for the /usr prefix' "$work/cpack.log" || fail "no reason given"
grep -q -- '-DCMAKE_INSTALL_PREFIX=/usr' "$work/cpack.log" || fail "the message does not say how"
if ls "$work/build/packages"/*.deb >/dev/null 2>&1; then fail "a package was written"; fi
echo "PASS: cpack -G DEB refused in a /usr/local build, saying how"
