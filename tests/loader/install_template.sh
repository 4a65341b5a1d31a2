#!/bin/sh
# install_template.sh BUILD_DIR TEMPLATE_DIR: the SDK's installation test
# (ctest loader_install_template). Installs the build tree to a temporary
# prefix, checks the SDK files are there, builds plugin-sdk/template out of
# tree with find_package(calhost-plugin) and again with pkg-config, and runs
# the installed `calhost plugin check` on both results (exit 0 expected); the
# installed calhost must also find the installed example plugin by itself.
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

step "build the template with pkg-config"
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
cflags=$(pkg-config --cflags calhost-plugin) || fail "pkg-config --cflags calhost-plugin"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -shared -fPIC $cflags "$template/my_backend.c" -o "$work/pc_backend.so" ||
  fail "pkg-config build"
"$prefix/bin/calhost" plugin check "$work/pc_backend.so" || fail "plugin check (pkg-config build)"

step "the installed calhost finds the installed plugins"
(cd "$work" && "$prefix/bin/calhost" --config /dev/null plugins) >"$work/plugins.txt" 2>&1 ||
  { cat "$work/plugins.txt"; fail "calhost plugins"; }
cat "$work/plugins.txt"
grep -q "backend example" "$work/plugins.txt" || fail "the example plugin was not found"
echo "PASS install + out-of-tree template + plugin check"
