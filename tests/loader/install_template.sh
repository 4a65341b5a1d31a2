#!/bin/sh
# install_template.sh BUILD_DIR TEMPLATE_DIR: the SDK's installation test
# (ctest loader_install_template). Installs the build tree to a temporary
# prefix, checks the SDK files are there, builds plugin-sdk/template out of
# tree with find_package(calhost-plugin) and again with pkg-config, and runs
# the installed `calhost plugin check` on both results (exit 0 expected); the
# installed calhost must also find the installed example plugin by itself.
# The CMake package: its version is the plugin ABI (find_package(... 1)
# works, one past the newest ABI does not), it is found when the installed
# plugin directory does not exist, and calhost_plugin_add(... CHECK
# CHECK_ARGS ...) passes its arguments to `calhost plugin check`.
set -eu
build=$1
template=$2
work=$(mktemp -d /tmp/calhost-install-test-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
prefix="$work/prefix"

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install failed"; }

test -f "$prefix/include/calhost/plugin.h" || fail "plugin.h not installed"
test -x "$prefix/bin/calhost" || fail "calhost not installed"
pc=$(find "$prefix" -name calhost-plugin.pc | head -n 1)
test -n "$pc" || fail "calhost-plugin.pc not installed"
cfg=$(find "$prefix" -name calhost-plugin-config.cmake | head -n 1)
test -n "$cfg" || fail "calhost-plugin-config.cmake not installed"
example=$(find "$prefix" -path '*/calhost/plugins/example.so' | head -n 1)
test -n "$example" || fail "the example plugin is not installed"

step "build the template out of tree with find_package(calhost-plugin)"
cmake -S "$template" -B "$work/template-build" -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "template configure"; }
cmake --build "$work/template-build" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; fail "template build"; }
plugin="$work/template-build/my_backend.so"
test -f "$plugin" || fail "the template did not produce my_backend.so"
if nm -D --defined-only "$plugin" 2>/dev/null | grep -v ' _' | grep -vq calhost_plugin_negotiate; then
  nm -D --defined-only "$plugin"
  fail "the template plugin exports more than its entry point"
fi

step "calhost plugin check (CMake build)"
"$prefix/bin/calhost" plugin check "$plugin" || fail "plugin check failed on the template"

step "ctest in the template (calhost_plugin_add CHECK)"
ctest --test-dir "$work/template-build" --output-on-failure || fail "the template's ctest failed"

step "build the installed device backend example out of tree (ABI 2: devices, space, timers)"
ex="$prefix/share/calhost/examples/device_backend"
test -f "$ex/rowsum_device.c" || fail "the device backend example is not installed beside the template"
cmake -S "$ex" -B "$work/device-build" -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/device-configure.log" 2>&1 || { cat "$work/device-configure.log"; fail "device example configure"; }
cmake --build "$work/device-build" >"$work/device-build.log" 2>&1 ||
  { cat "$work/device-build.log"; fail "device example build"; }
ctest --test-dir "$work/device-build" --output-on-failure >"$work/device-ctest.log" 2>&1 ||
  { cat "$work/device-ctest.log"; fail "the device example's plugin checks failed"; }
grep -q "2 tests passed\|100% tests passed, 0 tests failed out of 2" "$work/device-ctest.log" ||
  { cat "$work/device-ctest.log"; fail "the device example registered no two checks"; }

step "find_package follows the ABI; no plugin directory needed"
abi=$(sed -n 's/^#define CALHOST_ABI_VERSION \([0-9]*\)u*$/\1/p' "$prefix/include/calhost/plugin.h")
test -n "$abi" || fail "cannot read CALHOST_ABI_VERSION"
plugindir=$(find "$prefix" -type d -path '*/calhost/plugins' | head -n 1)
test -n "$plugindir" || fail "no installed plugin directory"
mv "$plugindir" "$plugindir.away"
probe() { # probe VERSION: configures a project asking for calhost-plugin VERSION
  mkdir -p "$work/probe-$1"
  printf '%s\n' "cmake_minimum_required(VERSION 3.18)" "project(probe LANGUAGES C)" \
    "find_package(calhost-plugin $1 REQUIRED)" >"$work/probe-$1/CMakeLists.txt"
  cmake -S "$work/probe-$1" -B "$work/probe-$1/build" -DCMAKE_PREFIX_PATH="$prefix" \
    >"$work/probe-$1.log" 2>&1
}
probe 1 || { cat "$work/probe-1.log"; fail "find_package(calhost-plugin 1) (no plugin directory)"; }
next=$((abi + 1))
if probe "$next"; then fail "find_package(calhost-plugin $next) accepted by an ABI $abi SDK"; fi
mv "$plugindir.away" "$plugindir"

step "calhost_plugin_add CHECK_ARGS reaches plugin check"
mkdir -p "$work/args"
cp "$template/my_backend.c" "$work/args/"
sed 's/calhost_plugin_add(my_backend SOURCES my_backend.c CHECK)/calhost_plugin_add(my_backend SOURCES my_backend.c CHECK CHECK_ARGS --operator Add --shape 64,8 --threads 2 -v)/' \
  "$template/CMakeLists.txt" >"$work/args/CMakeLists.txt"
grep -q CHECK_ARGS "$work/args/CMakeLists.txt" || fail "could not add CHECK_ARGS to the template"
{ cmake -S "$work/args" -B "$work/args/build" -DCMAKE_PREFIX_PATH="$prefix" &&
  cmake --build "$work/args/build"; } >"$work/args.log" 2>&1 ||
  { cat "$work/args.log"; fail "template with CHECK_ARGS"; }
ctest --test-dir "$work/args/build" -V >"$work/args-ctest.log" 2>&1 ||
  { cat "$work/args-ctest.log"; fail "the CHECK_ARGS ctest failed"; }
{ grep -q "Add float32 64,8" "$work/args-ctest.log" && grep -q "\"--threads\" \"2\"" "$work/args-ctest.log"; } ||
  { cat "$work/args-ctest.log"; fail "CHECK_ARGS did not reach plugin check"; }

step "build the template with pkg-config"
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
cflags=$(pkg-config --cflags calhost-plugin) || fail "pkg-config --cflags calhost-plugin"
# The guide's documented cc line, as installed, builds optimised code; build
# with it (plus warnings).
guide="$prefix/share/doc/calhost/plugin-sdk.md"
ccline=$(grep -E '^cc .*pkg-config --cflags calhost-plugin' "$guide" | head -n 1)
test -n "$ccline" || fail "no cc line in $guide"
echo "$ccline" | grep -Eq ' -O[23s]( |$)' || fail "the guide's cc line does not optimise: $ccline"
echo "$ccline" | grep -q ' -O2 ' || fail "the guide's cc line changed: update this test ($ccline)"
# shellcheck disable=SC2086
cc -std=c11 -O2 -Wall -Wextra -shared -fPIC $cflags "$template/my_backend.c" -o "$work/pc_backend.so" ||
  fail "pkg-config build"
"$prefix/bin/calhost" plugin check "$work/pc_backend.so" || fail "plugin check (pkg-config build)"

step "CALHOST_PLUGIN_DEFINE refuses a mistyped or missing entry at compile time"
# the template with run()'s result of another type: a compile error naming
# the type, not an incompatible-pointer warning that builds
sed 's/calhost_run_result \*result) {/int *result) {/' "$template/my_backend.c" >"$work/mistyped.c"
grep -q 'int \*result) {' "$work/mistyped.c" || fail "could not mistype run() in the template (update this test)"
# shellcheck disable=SC2086
if cc -std=c11 -fsyntax-only $cflags "$work/mistyped.c" >"$work/mistyped.log" 2>&1; then
  fail "a run() of the wrong type compiled"
fi
grep -q '_Generic' "$work/mistyped.log" || { cat "$work/mistyped.log"; fail "no type error"; }
# without my_backend_prepare (renamed): undeclared
sed 's/my_backend_prepare(/my_backend_prepared(/' "$template/my_backend.c" >"$work/missing.c"
# shellcheck disable=SC2086
if cc -std=c11 -fsyntax-only $cflags "$work/missing.c" >"$work/missing.log" 2>&1; then
  fail "a plugin without my_backend_prepare compiled"
fi
grep -q "my_backend_prepare" "$work/missing.log" || { cat "$work/missing.log"; fail "no error naming it"; }

step "the installed calhost finds the installed plugins"
(cd "$work" && "$prefix/bin/calhost" --config /dev/null plugins) >"$work/plugins.txt" 2>&1 ||
  { cat "$work/plugins.txt"; fail "calhost plugins"; }
cat "$work/plugins.txt"
grep -q "backend example" "$work/plugins.txt" || fail "the example plugin was not found"
echo "PASS install + out-of-tree template + plugin check"
