#!/bin/sh
# compile-all.sh [BUILD_DIR] [THREADS] [LOG]: on demand (not in ctest): NVRTC
# compiles every valid point of cuda_gemm's space for sm_80 and sm_90 (no
# GPU needed; 7 478 modules, about 0.3 s of CPU each) and prints the modules
# that failed or broke the register/spill promise, then per architecture
# the counts and "cuda-compile-all: N failed". The full log (one line per
# module with ptxas's registers and spills) goes to LOG (default
# BUILD_DIR/cuda-compile-all.log). Builds cuda-compile-all first. Exit 0
# when nothing failed.
set -u
build=${1:-build}
threads=${2:-2}
log=${3:-$build/cuda-compile-all.log}
cmake --build "$build" --target cuda-compile-all >/dev/null || exit 2
"$build/bin/cuda-compile-all" "$threads" sm_80 sm_90 >"$log" 2>&1
rc=$?
grep -v ' rc=0 .* spill=\(-1\|[0-9]\|[1-5][0-9]\|6[0-4]\) ' "$log"
exit $rc
