#!/bin/sh
# configure-without-cuda.sh SOURCE_DIR WORK_DIR: the tree configures without
# the CUDA plugins, and says so in one line: once with -DCALHOST_CUDA=OFF,
# once with the toolkit hidden from find_package (what a fresh Debian
# machine without a toolkit sees). Tests and benchmarks are left out to
# keep it short. (ctest: cuda_configure_without_toolkit)
set -u
src=$1
work=$2
rc=0
for variant in "-DCALHOST_CUDA=OFF|not built (CALHOST_CUDA=OFF)" \
  "-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON|not built (no CUDA toolkit found"; do
  flag=${variant%%|*}
  want=${variant#*|}
  rm -rf "$work"
  if ! cmake -S "$src" -B "$work" -DCALHOST_TESTS=OFF -DCALHOST_BENCH=OFF "$flag" >"$work.log" 2>&1; then
    echo "FAIL: configure with $flag failed:"
    tail -20 "$work.log"
    rc=1
    continue
  fi
  n=$(grep -c "CUDA plugins (cuda_gemm, cublaslt)" "$work.log")
  if [ "$n" != 1 ] || ! grep -q "$want" "$work.log"; then
    echo "FAIL: with $flag, expected one line saying '$want':"
    grep -i cuda "$work.log"
    rc=1
  elif grep -q "cuda_gemm" "$work/Makefile" 2>/dev/null || [ -d "$work/plugins/cuda_gemm" ]; then
    echo "FAIL: with $flag the CUDA plugins are still configured"
    rc=1
  else
    echo "ok: $flag: $(grep 'CUDA plugins' "$work.log")"
  fi
done
rm -rf "$work" "$work.log"
exit $rc
