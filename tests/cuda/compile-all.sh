#!/bin/sh
# compile-all.sh [BUILD_DIR] [THREADS]: on demand (not in ctest): NVRTC
# compiles every valid point of cuda_gemm's space for sm_80 and sm_90 (no
# GPU needed; about an hour of CPU per architecture) and prints how many
# failed. Builds cuda-compile-all in BUILD_DIR (default build) first.
set -eu
build=${1:-build}
threads=${2:-2}
cmake --build "$build" --target cuda-compile-all >/dev/null
"$build/bin/cuda-compile-all" "$threads" sm_80 sm_90 | grep -v ' rc=0 ' || true
