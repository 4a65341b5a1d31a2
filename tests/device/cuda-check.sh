#!/bin/sh
# cuda-check.sh OUT_DIR: the CUDA backends on a machine with an NVIDIA GPU
# (issue 26), in at most 8 minutes including the build. Run from anywhere
# inside the repository. Steps, each with its log in OUT_DIR:
#   1 build      configure and build Release with CUDA (build-cuda/; no
#                tests, no OpenCL/OpenBLAS plugins: fewer prerequisites)
#   2 devices    calhost devices (cuda_gemm must list a GPU)
#   3 check      calhost plugin check on cuda_gemm and cublaslt
#   4 quick      calibrate MatMul 1024^3, 4096^3, 8192x64x4096, 128^3 in
#                float32 and bfloat16 at rigor quick
#   5 measure    the same at rigor measure (time-budgeted)
#   6 lookup     lookup --device 0 of every workload, both plugins
#   7 verify     calhost verify
#   8 bench      build/bin/cuda-bench --quick: TFLOP/s and ratios
# and OUT_DIR/summary.txt, one line: "cuda-check: PASS|FAIL (N/8 steps
# passed: ...) in S s". Exit 0 when every step passed.
# Environment: CUDA_CHECK_JOBS (build jobs, default nproc), CUDAToolkit_ROOT
# (default /usr/local/cuda), CUDA_CHECK_BUILD_DIR (default build-cuda),
# CUDA_CHECK_SKIP_BUILD=1 (no configure: reuse the build folder as it is).
set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
if [ "${1:-}" = --step ]; then # a step run under timeout: cuda-check.sh --step OUT FUNCTION ARGS...
  stepmode=1
  out=$2
  shift 2
else
  stepmode=0
  out=${1:?usage: cuda-check.sh OUT_DIR}
  mkdir -p "$out" || exit 2
  out=$(cd "$out" && pwd)
fi
root=$(cd "$(dirname "$self")/../.." && pwd)
build=${CUDA_CHECK_BUILD_DIR:-"$root/build-cuda"}
jobs=${CUDA_CHECK_JOBS:-$(nproc 2>/dev/null || echo 4)}
start=$(date +%s)
passed=0
failed=""
cd "$root" || exit 2

step() { # step NAME SECONDS FUNCTION|COMMAND...: runs with a time limit, logs, counts
  name=$1 limit=$2
  shift 2
  t0=$(date +%s)
  timeout "$limit" sh "$self" --step "$out" "$@" >"$out/$name.log" 2>&1
  rc=$?
  echo "== $name: exit $rc in $(($(date +%s) - t0)) s" | tee -a "$out/steps.log"
  if [ $rc -eq 0 ]; then passed=$((passed + 1)); else failed="$failed $name"; fi
  return $rc
}

[ $stepmode = 1 ] || cat >"$out/cuda-check.ini" <<INI
[store]
path = $out/store.txt
[plugins]
directories = $build/lib/calhost/plugins
enabled = cuda_gemm, cublaslt
[calibration]
threads = 1
plugin_timeout = 300s
[workload square_1024_f32]
operator = MatMul
dtype = float32
shape = 1024,1024,1024
[workload square_4096_f32]
operator = MatMul
dtype = float32
shape = 4096,4096,4096
[workload tall_8192x64x4096_f32]
operator = MatMul
dtype = float32
shape = 8192,64,4096
[workload small_128_f32]
operator = MatMul
dtype = float32
shape = 128,128,128
[workload square_1024_bf16]
operator = MatMul
dtype = bfloat16
shape = 1024,1024,1024
[workload square_4096_bf16]
operator = MatMul
dtype = bfloat16
shape = 4096,4096,4096
[workload tall_8192x64x4096_bf16]
operator = MatMul
dtype = bfloat16
shape = 8192,64,4096
[workload small_128_bf16]
operator = MatMul
dtype = bfloat16
shape = 128,128,128
INI
cal="$build/bin/calhost --config $out/cuda-check.ini"

build_it() {
  if [ "${CUDA_CHECK_SKIP_BUILD:-0}" != 1 ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCALHOST_TESTS=OFF \
      -DCALHOST_BENCH=ON -DCALHOST_OPENCL=OFF -DCALHOST_OPENBLAS=OFF \
      -DCUDAToolkit_ROOT="${CUDAToolkit_ROOT:-/usr/local/cuda}" || return 1
  fi
  grep -q "CALHOST_CUDA_BUILT:INTERNAL=ON" "$build/CMakeCache.txt" ||
    { echo "the CUDA plugins are not configured (no toolkit found)"; return 1; }
  cmake --build "$build" -j "$jobs" --target calhost cuda_gemm cublaslt cuda-bench
}
devices() {
  nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)"
  $cal devices && $cal devices | grep -Eq '^cuda_gemm: [1-9][0-9]* device'
}
checks() {
  rc=0
  for p in cuda_gemm cublaslt; do
    $build/bin/calhost plugin check -v "$build/lib/calhost/plugins/$p.so" || rc=1
  done
  return $rc
}
run_cal() {
  $cal "$@"
}
lookups() {
  rc=0
  for w in square_1024_f32 square_4096_f32 tall_8192x64x4096_f32 small_128_f32 \
    square_1024_bf16 square_4096_bf16 tall_8192x64x4096_bf16 small_128_bf16; do
    for p in cuda_gemm cublaslt; do
      echo "-- $w $p"
      $cal lookup --workload "$w" --plugin "$p" --device 0 || rc=1
    done
  done
  return $rc
}

if [ $stepmode = 1 ]; then
  "$@"
  exit $?
fi

if step build 240 build_it; then
  step devices 30 devices
  step check 90 checks
  step quick 90 run_cal calibrate --rigor quick --time-budget 30s
  step measure 130 run_cal calibrate --rigor measure --time-budget 45s --force
  step lookup 30 lookups
  step verify 90 run_cal verify --rigor quick --time-budget 30s
  step bench 120 "$build/bin/cuda-bench" --quick
else
  failed="$failed devices check quick measure lookup verify bench"
fi
secs=$(($(date +%s) - start))
grep -E 'TFLOP/s|best:|cuda-bench:' "$out/bench.log" >"$out/figures.txt" 2>/dev/null
verdict=PASS
[ $passed -eq 8 ] || verdict=FAIL
line="cuda-check: $verdict ($passed/8 steps passed${failed:+; failed:$failed}) in $secs s; logs in $out"
echo "$line" | tee "$out/summary.txt"
[ $verdict = PASS ]
