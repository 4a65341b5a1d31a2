#!/usr/bin/env bash
# calhost's set-up script: installs the Debian packages calhost needs, builds
# it, and runs one of the two jobs of the README.
#
#   scripts/setup.sh calibrate [--force]
#                                calibrate the built plugins with the default
#                                config, show the stored results and write the
#                                HTML report (BUILD_DIR/report); builds only
#                                calhost and the plugins (build output in
#                                BUILD_DIR/setup-build.log, shown on failure);
#                                --force recalibrates what is already stored
#   scripts/setup.sh test        run the whole test suite: the cmocka suite
#                                (its cpu_gemm tests also with the plugin
#                                capped at AVX2 and at portable kernels),
#                                again under ASan+UBSan, and the reliability
#                                checks (fuzzing, cross build, the Windows
#                                tests under Wine)
#   scripts/setup.sh deps        only install the packages
#
# BUILD_DIR (default: build) and SAN_BUILD_DIR (default: build-asan) may be
# set to build elsewhere.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
BUILD_DIR=${BUILD_DIR:-build}
SAN_BUILD_DIR=${SAN_BUILD_DIR:-build-asan}
JOBS=$(nproc 2>/dev/null || echo 2)

# Debian packages: build tools, libraries, test and reliability tooling
# (slurm*, munge: the single-host Slurm cluster of tests/fleet; go-md2man: the
# manual pages; bash-completion, lintian, dpkg-dev: tests/packages; protobuf-c
# and libonnx-dev: the ONNX model reader of host/model, generated from
# Debian's onnx.proto; libonnx-testdata and python3-onnx: its tests).
PACKAGES=(build-essential cmake pkg-config python3 libcmocka-dev libinih-dev
          slurmctld slurmd slurm-client munge
          libhwloc-dev libssl-dev libopenblas-dev libsqlite3-dev clang
          libclang-rt-14-dev valgrind gcc-mingw-w64-x86-64 wine64
          libjansson-dev chromium
          pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers libclblast-dev
          go-md2man bash-completion lintian dpkg-dev
          libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata python3-onnx)

install_deps() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() { # build DIR [cmake options...]
  local dir=$1; shift
  cmake -S . -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
}

# build_quietly DIR [cmake options...]: the calibrate job's build: calhost and
# the plugins only (no tests, benchmarks or fuzzers), its output in
# DIR/setup-build.log, printed only when the build fails.
build_quietly() {
  local dir=$1; shift
  mkdir -p "$dir"
  local log="$dir/setup-build.log"
  echo "setup: building calhost and the plugins in $dir (log: $log)"
  if ! { cmake -S . -B "$dir" -DCALHOST_TESTS=OFF -DCALHOST_BENCH=OFF -DCALHOST_FUZZ=OFF "$@" &&
         cmake --build "$dir" -j "$JOBS"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: the build failed (log above, also in $log)" >&2
    exit 1
  fi
}

case "${1:-}" in
  deps)
    install_deps ;;
  calibrate)
    shift
    calibrate_opt=()
    for a in "$@"; do
      case "$a" in
        --force) calibrate_opt+=(--force) ;;
        *) echo "usage: scripts/setup.sh calibrate [--force]" >&2; exit 2 ;;
      esac
    done
    install_deps
    # Warnings stay warnings here, also in a build folder that `test`
    # configured with -Werror before (the cache would keep it): a newer
    # compiler's new warning must not stop the main job.
    build_quietly "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCALHOST_WERROR=OFF
    # The default config and the store's default path (set CALHOST_STORE to
    # calibrate into another store file); plugins come from the build tree.
    store_opt=()
    [ -n "${CALHOST_STORE:-}" ] && store_opt=(--store "$CALHOST_STORE")
    calhost="$BUILD_DIR/bin/calhost"
    report_dir="$BUILD_DIR/report"
    "$calhost" "${store_opt[@]}" --config config/calhost.ini calibrate --report "$report_dir" \
      "${calibrate_opt[@]}"
    echo
    echo "== the store after calibration"
    "$calhost" "${store_opt[@]}" --config config/calhost.ini check
    "$calhost" "${store_opt[@]}" --config config/calhost.ini list
    echo
    echo "== the report of this run: $report_dir/report.html (run data: $report_dir/run.json)"
    ;;
  test)
    install_deps
    # explicit: a calibrate job may have configured BUILD_DIR without them
    build "$BUILD_DIR" -DCALHOST_TESTS=ON -DCALHOST_BENCH=ON -DCALHOST_WERROR=ON
    (cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS")
    # cpu_gemm's tests again as on processors without AVX-512 and without
    # AVX2 (its kernels capped by CALHOST_CPU_GEMM_MAX_ISA): no test may
    # depend on the processor it runs on
    for isa in avx2 portable; do
      echo "setup: the cpu_gemm tests with CALHOST_CPU_GEMM_MAX_ISA=$isa"
      (cd "$BUILD_DIR" && CALHOST_CPU_GEMM_MAX_ISA=$isa ctest -L cpu_gemm --output-on-failure -j "$JOBS")
    done
    build "$SAN_BUILD_DIR" -DCALHOST_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCALHOST_WERROR=ON
    (cd "$SAN_BUILD_DIR" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$JOBS")
    if [ -x tests/reliability/run.sh ]; then
      tests/reliability/run.sh
    fi
    ;;
  *)
    echo "usage: scripts/setup.sh calibrate [--force] | test | deps" >&2
    exit 2 ;;
esac
