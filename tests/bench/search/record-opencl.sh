#!/bin/sh
# record-opencl.sh: records opencl_gemm's described search space (ABI 2, nine
# parameters, 10 272 valid points on PoCL) on OpenCL device 0 with
# `calhost calibrate --record`, one space per shape (64x64x64, 256x32x128,
# 128x128x128), and cuts each recording to a complete slice of the space:
# every valid configuration whose leading parameters have the slice's values
# (e.g. mwg=16: 3 744 points), written as
# spaces/opencl_gemm-SHAPE-SLICE.space for search-bench --replay.
#
#   tests/bench/search/record-opencl.sh BUILD_DIR [SLICE [BUDGET]]
#
# SLICE is NAME=VALUE[,NAME=VALUE] over the leading parameters in the
# plugin's order (mwg, nwg, ...); default mwg=16. The sweep evaluates the
# space in the plugin's order (its plausible starting configurations first,
# then every configuration with the first parameter varying slowest), so the
# slice is complete once the recording has gone past it; BUDGET (evaluations
# per sweep; default: the whole space) stops it there. The script checks that
# each recording went past the slice and fails otherwise.
#
# Cost on PoCL: the first shape compiles every configuration (0.5-1.5 s
# each: clBuildProgram and PoCL's work-group compile at the first launch),
# the later shapes reuse PoCL's kernel cache (about 0.13 s per
# configuration). Rigor quick: correctness check, 1 warm-up, median of 5
# samples of >= 0.5 ms, pruning.
set -eu
build=${1:?usage: record-opencl.sh BUILD_DIR [SLICE [BUDGET]]}
slice=${2:-mwg=16}
budget=${3:-0}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/record.ini" <<INI
[store]
path = $work/store.txt
[plugins]
paths = $build/lib/calhost/plugins/opencl_gemm.so
[calibration]
threads = 1
rigor = quick
strategy = exhaustive
budget = $budget
time_budget = 0
plugin_timeout = 10h
[workload matmul_64x64x64]
operator = MatMul
dtype = float32
shape = 64,64,64
[workload matmul_256x32x128]
operator = MatMul
dtype = float32
shape = 256,32,128
[workload matmul_128x128x128]
operator = MatMul
dtype = float32
shape = 128,128,128
INI
POCL_CACHE_DIR=${POCL_CACHE_DIR:-$work/pocl} "$build/bin/calhost" --config "$work/record.ini" \
  calibrate --force --record "$work/rec.space"
tag=$(printf '%s' "$slice" | tr ',=' '-_' | tr -d '_')
for f in "$work"/rec-opencl_gemm-matmul_*-d0-t1.space; do
  shape=${f##*matmul_}
  shape=${shape%-d0-t1.space}
  out="$here/spaces/opencl_gemm-$shape-$tag.space"
  "$here/slice-space.awk" -v slice="$slice" -v name="opencl_gemm-$shape-$tag" "$f" > "$out.tmp"
  mv "$out.tmp" "$out"
  echo "$out: $(grep -c '^config' "$out") configurations"
done
