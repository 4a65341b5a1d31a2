#!/bin/sh
# install_deployment.sh BUILD_DIR [CFLAGS]: the deployment runtime's installation test
# (ctest runtime_install). Installs the build tree to a temporary prefix,
# checks the public headers, libraries, CMake packages and pkg-config files
# of libcalstore and the runtime are there, builds the installed deployment
# example (share/calhost/examples/deployment) out of tree with
# find_package(calhost-runtime) and again with pkg-config, calibrates a
# workload with the installed calhost, and runs both builds: the default
# configuration selects the exact calibrated profile, a deployment
# configuration with force_portable the portable one; the same for each node
# of a model (tests/model/make_models.py's three.onnx, calibrated with
# calibrate --model, selected with the example's --model form). A program linking
# libcalstore alone (find_package(calstore)) builds and runs too. CFLAGS
# (e.g. -fsanitize=address,undefined for a sanitizer build) go to every
# program built here.
set -eu
build=$1
cflags=${2:-}
cmake_flags() { # the CMake arguments that pass CFLAGS on
  if [ -n "$cflags" ]; then
    printf '%s\n' "-DCMAKE_C_FLAGS=$cflags" "-DCMAKE_EXE_LINKER_FLAGS=$cflags"
  fi
}
work=$(mktemp -d /tmp/calhost-runtime-install-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
prefix="$work/prefix"

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install failed"; }
for h in runtime.h calstore.h plugin.h; do
  test -f "$prefix/include/calhost/$h" || fail "$h not installed"
done
for f in calstore-config.cmake calstore-config-version.cmake calhost-runtime-config.cmake \
         calhost-runtime-config-version.cmake calstore.pc calhost-runtime.pc \
         libcalhost_runtime.so libcalhost_runtime_static.a libcalstore.so libcalstore_static.a; do
  test -n "$(find "$prefix" -name "$f" | head -n 1)" || fail "$f not installed"
done
example="$prefix/share/calhost/examples/deployment"
test -f "$example/CMakeLists.txt" || fail "the deployment example is not installed"
# only the runtime's API is exported
if nm -D --defined-only "$(find "$prefix" -name libcalhost_runtime.so | head -n 1)" |
   awk '$2 ~ /[TDB]/ {print $3}' | grep -v '^calhost_runtime_' | grep -v '^_' | grep -q .; then
  fail "libcalhost_runtime.so exports more than calhost_runtime_*"
fi

step "build the deployment example with find_package(calhost-runtime)"
# shellcheck disable=SC2046
cmake -S "$example" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" $(cmake_flags) \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "example configure"; }
cmake --build "$work/cmake-build" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; fail "example build"; }
cmake_bin="$work/cmake-build/calhost-deploy-example"
test -x "$cmake_bin" || fail "no calhost-deploy-example from the CMake build"

step "build the deployment example with pkg-config"
PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name calhost-runtime.pc | head -n 1)")
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs calhost-runtime) || fail "pkg-config calhost-runtime"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror $cflags "$example/deploy_example.c" $flags -o "$work/pc-deploy" ||
  fail "pkg-config build"
libdir=$(dirname "$(find "$prefix" -name libcalhost_runtime.so | head -n 1)")

step "a program with libcalstore alone (find_package(calstore))"
mkdir -p "$work/store-only"
cat >"$work/store-only/main.c" <<'C'
#include <stdio.h>
#include "calhost/calstore.h"
int main(void) {
  printf("calstore %s\n", calstore_version(NULL));
  return calstore_version(NULL)[0] ? 0 : 1;
}
C
printf '%s\n' "cmake_minimum_required(VERSION 3.18)" "project(store_only LANGUAGES C)" \
  "find_package(calstore 1 REQUIRED)" "add_executable(store_only main.c)" \
  "target_link_libraries(store_only PRIVATE calhost::calstore)" >"$work/store-only/CMakeLists.txt"
# shellcheck disable=SC2046
{ cmake -S "$work/store-only" -B "$work/store-only/build" -DCMAKE_PREFIX_PATH="$prefix" $(cmake_flags) &&
  cmake --build "$work/store-only/build"; } >"$work/store-only.log" 2>&1 ||
  { cat "$work/store-only.log"; fail "calstore package"; }
"$work/store-only/build/store_only" || fail "the calstore program"

step "calibrate with the installed calhost, then select with both builds"
plugins="$prefix/lib/calhost/plugins"
test -f "$plugins/example.so" || plugins=$(dirname "$(find "$prefix" -name example.so | head -n 1)")
cat >"$work/calib.ini" <<INI
[store]
path = $work/store.txt
[plugins]
directories = $plugins
enabled = example
[calibration]
threads = 1
rigor = quick
time_budget = 2
[workload sum_4k]
operator = ReduceSum
shape = 4096
INI
sed 's/^\[calibration\]/[lookup]\nforce_portable = true\n[calibration]/' "$work/calib.ini" \
  >"$work/deploy.ini"
"$prefix/bin/calhost" --config "$work/calib.ini" --quiet calibrate >"$work/cal.log" 2>&1 ||
  { cat "$work/cal.log"; fail "calhost calibrate"; }
for bin in "$cmake_bin" "$work/pc-deploy"; do
  LD_LIBRARY_PATH=$libdir "$bin" "$work/calib.ini" sum_4k >"$work/out.txt" 2>&1 ||
    { cat "$work/out.txt"; fail "$bin (exact)"; }
  cat "$work/out.txt"
  grep -q "exact calibrated profile" "$work/out.txt" || fail "$bin did not select the exact profile"
  LD_LIBRARY_PATH=$libdir "$bin" "$work/deploy.ini" sum_4k >"$work/out.txt" 2>&1 ||
    { cat "$work/out.txt"; fail "$bin (force_portable)"; }
  cat "$work/out.txt"
  grep -q "portable calibrated profile" "$work/out.txt" ||
    fail "$bin did not select the portable profile with force_portable"
  grep -q "force_portable" "$work/out.txt" || fail "$bin does not say force_portable"
done
step "the model form: calibrate --model with the installed calhost, select per node"
/usr/bin/python3 "$(dirname "$0")/../model/make_models.py" "$work/models" >/dev/null ||
  fail "make_models.py (python3-onnx)"
sed -e 's/^enabled = example$/enabled = cpu_gemm/' "$work/calib.ini" >"$work/model.ini"
sed 's/^\[calibration\]/[lookup]\nforce_portable = true\n[calibration]/' "$work/model.ini" \
  >"$work/model-deploy.ini"
"$prefix/bin/calhost" --config "$work/model.ini" --quiet calibrate --model "$work/models/three.onnx" \
  >"$work/cal.log" 2>&1 || { cat "$work/cal.log"; fail "calhost calibrate --model"; }
for bin in "$cmake_bin" "$work/pc-deploy"; do
  LD_LIBRARY_PATH=$libdir "$bin" "$work/model.ini" --model "$work/models/three.onnx" \
    >"$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "$bin --model (exact)"; }
  cat "$work/out.txt"
  test "$(grep -c 'node .*exact calibrated profile' "$work/out.txt")" = 3 ||
    fail "$bin --model did not select an exact profile for each of the 3 nodes"
  LD_LIBRARY_PATH=$libdir "$bin" "$work/model-deploy.ini" --model "$work/models/three.onnx" \
    >"$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "$bin --model (force_portable)"; }
  test "$(grep -c 'node .*portable calibrated profile' "$work/out.txt")" = 3 ||
    fail "$bin --model did not select a portable profile for each node with force_portable"
done
# the CMake build finds its libraries without LD_LIBRARY_PATH (RUNPATH)
"$cmake_bin" "$work/calib.ini" sum_4k >/dev/null 2>&1 || fail "the CMake build needs LD_LIBRARY_PATH"
echo "PASS install + out-of-tree deployment example (CMake and pkg-config)"
