#!/bin/sh
# relocated_prefix.sh BUILD_DIR [CFLAGS]: the deployment runtime finds the
# plugins of its own prefix after the prefix moved (ctest runtime_relocated).
# Installs the build tree to a temporary prefix, moves the whole prefix
# elsewhere (nothing is left at the old place), builds the installed
# deployment example with pkg-config against the moved prefix (with an
# rpath to its libdir) into a directory outside it, and runs it with a
# configuration that names no plugin directory: libcalhost_runtime.so must
# find <its libdir>/calhost/plugins. With that directory renamed, the error
# must list the directories searched, the library's among them. Also checks
# the pkg-config files: calhost-runtime's Cflags carry no visibility flag,
# calhost-plugin's Version is the ABI of the installed plugin.h. CFLAGS
# (a sanitizer build's) go to the program built here.
set -eu
build=$1
cflags=${2:-}
work=$(mktemp -d /tmp/calhost-runtime-relocated-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "install to $work/old, then move the prefix to $work/moved/prefix"
cmake --install "$build" --prefix "$work/old" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install failed"; }
mkdir "$work/moved"
mv "$work/old" "$work/moved/prefix"
prefix="$work/moved/prefix"
test ! -e "$work/old" || fail "the old prefix is still there"

PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name calhost-runtime.pc | head -n 1)")
export PKG_CONFIG_PATH
step "pkg-config files"
rt_cflags=$(pkg-config --cflags calhost-runtime) || fail "pkg-config calhost-runtime"
case "$rt_cflags" in
*visibility*) fail "calhost-runtime's cflags carry a visibility flag: $rt_cflags" ;;
esac
abi=$(sed -n 's/^#define CALHOST_ABI_VERSION \([0-9][0-9]*\)u*$/\1/p' "$prefix/include/calhost/plugin.h")
test -n "$abi" || fail "no CALHOST_ABI_VERSION in the installed plugin.h"
v=$(pkg-config --modversion calhost-plugin)
test "$v" = "$abi" || fail "calhost-plugin.pc says version $v, plugin.h ABI $abi"
test "$(pkg-config --variable=abi_version calhost-plugin)" = "$abi" || fail "abi_version"

step "build the deployment example against the moved prefix"
libdir=$(pkg-config --variable=libdir calhost-runtime)
mkdir "$work/bin"
# shellcheck disable=SC2046,SC2086
cc -std=c11 -Wall -Wextra -Werror $cflags "$prefix/share/calhost/examples/deployment/deploy_example.c" \
  $(pkg-config --cflags --libs calhost-runtime) -Wl,-rpath,"$libdir" -o "$work/bin/deploy" ||
  fail "pkg-config build"

plugins=$(dirname "$(find "$prefix" -name example.so | head -n 1)")
test -d "$plugins" || fail "no example.so installed"
cat >"$work/deploy.ini" <<INI
[store]
path = $work/store.txt
[plugins]
enabled = example
[calibration]
threads = 1
[workload sum_4k]
operator = ReduceSum
shape = 4096
INI

step "select with no plugin directory configured"
rc=0
"$work/bin/deploy" "$work/deploy.ini" sum_4k >"$work/out.txt" 2>&1 || rc=$?
cat "$work/out.txt"
# 1: the plugin was loaded, the (empty) store has no profile
test "$rc" -eq 1 || fail "the deployment did not load the example plugin from the moved prefix (exit $rc)"
grep -q "^example sum_4k: no calibrated policy" "$work/out.txt" || fail "unexpected output"

step "without the prefix's plugin directory: the error lists what was searched"
mv "$plugins" "$plugins.off"
rc=0
"$work/bin/deploy" "$work/deploy.ini" sum_4k >"$work/out.txt" 2>&1 || rc=$?
cat "$work/out.txt"
test "$rc" -eq 2 || fail "expected exit 2 without plugins, got $rc"
grep -q "no plugin serves operator ReduceSum of workload 'sum_4k'" "$work/out.txt" ||
  fail "no 'no plugin serves' message"
real_plugins=$(cd "$(dirname "$plugins")" && pwd -P)/$(basename "$plugins")
grep -F -q "searched: " "$work/out.txt" || fail "the message does not list the directories searched"
grep -F -q "$real_plugins (libcalhost_runtime's prefix, missing)" "$work/out.txt" ||
  fail "the message does not name $real_plugins"
echo "PASS the runtime finds the plugins of its relocated prefix"
