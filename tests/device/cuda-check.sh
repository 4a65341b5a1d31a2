#!/bin/sh
# cuda-check.sh [--bundle DIR | --build DIR] OUT_DIR: the CUDA backends on a
# machine with an NVIDIA GPU (issues 39 and 40), from a prebuilt bundle
# (tests/device/make-bundle.sh, made on a build machine: nothing is built
# here, no -dev package is needed), in at most 7 minutes in all. Default:
# the bundle at build-bundle/ of the repository, else the build at build/.
#
# Finds NVIDIA's libraries where the GPU machine has them: libcuda.so.1 in
# the loader's path, /usr/local/nvidia/lib64, /usr/lib/x86_64-linux-gnu,
# /usr/lib64 (CALHOST_CUDA_DRIVER names the one found); NVRTC, cuBLASLt and
# the headers through the plugins' own search (the loader's path,
# CUDA_HOME, CUDA_PATH, /usr/local/cuda*, pip's nvidia/cu13 in every site
# folder), to which it adds python3's site folders (PYTHONPATH) and their
# nvidia/*/lib folders (LD_LIBRARY_PATH). The environment it settled on is
# the first lines of the summary.
#
# Steps (each under its own time limit; the limits add up to 380 s):
#   devices  calhost devices: cuda_gemm and cublaslt list the GPU (20 s)
#   check    calhost plugin check on both plugins (90 s)
#   quick    calibrate at rigor quick, 35 s of budget per plugin: MatMul
#            1024^3, 4096^3, 8192x64x4096, 128^3 in float32 and bfloat16,
#            1024^3 and 4096^3 in float16 (100 s)
#   lookup   lookup --device 0 of every workload, both plugins (20 s)
#   verify   calhost verify at rigor quick, 12 s per plugin (30 s)
#   bench    cuda-bench --quick: TFLOP/s, tuned against default (120 s)
# Without a GPU (no driver, the toolkit's stub) devices fails with the
# reason, check still runs (it must pass, skipping the device checks) and
# the rest is skipped: exit 3, "NO DEVICE".
#
# Writes at most 3 files to OUT_DIR: summary.txt (the environment, one line
# per step, the bench's figures; its last line "cuda-check: PASS|FAIL|NO
# DEVICE (N/M steps passed...) in S s"), run.json (the same as JSON) and
# logs.tar.gz (every step's log, the configuration, the store). Exit 0 when
# every step passed, 1 when one failed, 2 on bad usage, 3 without a device.
set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
root=$(cd "$(dirname "$self")/../.." && pwd)

# ---- the steps (run by --step, the environment sourced) ------------------------------------------------------------
devices() {
  nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)"
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>/dev/null
  $cal --verbose devices || return 1
  for p in cuda_gemm cublaslt; do
    $cal devices | grep -Eq "^$p: [1-9][0-9]* device" || { echo "$p lists no device"; return 1; }
  done
}
checks() {
  rc=0
  for p in cuda_gemm cublaslt; do
    "$bin/calhost" plugin check -v "$plugins/$p.so" || rc=1
  done
  return $rc
}
quick() {
  $cal calibrate --rigor quick --time-budget 35s || return 1
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>/dev/null
  return 0
}
lookups() {
  rc=0
  for w in $(cat "$(dirname "$CUDA_CHECK_ENV")/workloads"); do
    for p in cuda_gemm cublaslt; do
      echo "-- $w $p"
      $cal lookup --workload "$w" --plugin "$p" --device 0 || rc=1
    done
  done
  return $rc
}
verify() {
  $cal verify --rigor quick --time-budget 12s
}
bench() {
  "$bin/cuda-bench" --quick "$plugins"
}

if [ "${1:-}" = --step ]; then # a step run under timeout: --step FUNCTION ARGS...
  shift
  . "$CUDA_CHECK_ENV"
  "$@"
  exit $?
fi

mode="" dir=""
case "${1:-}" in
--bundle | --build)
  mode=${1#--}
  dir=${2:?usage: cuda-check.sh [--bundle DIR | --build DIR] OUT_DIR}
  shift 2
  ;;
esac
out=${1:?usage: cuda-check.sh [--bundle DIR | --build DIR] OUT_DIR}
if [ -z "$mode" ]; then
  if [ -x "$root/build-bundle/bin/calhost" ]; then
    mode=bundle dir="$root/build-bundle"
  else
    mode=build dir="$root/build"
  fi
fi
dir=$(cd "$dir" 2>/dev/null && pwd) || { echo "cuda-check: no folder $dir" >&2; exit 2; }
if [ ! -x "$dir/bin/calhost" ] || [ ! -f "$dir/lib/calhost/plugins/cuda_gemm.so" ]; then
  echo "cuda-check: $dir has no bin/calhost and lib/calhost/plugins/cuda_gemm.so (make-bundle.sh)" >&2
  exit 2
fi
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cuda-check.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

# ---- the environment ----------------------------------------------------
env_file="$work/env.sh"
ld="$dir/lib"
driver="${CALHOST_CUDA_DRIVER:-}"
if [ -z "$driver" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib/wsl/lib; do
    if [ -e "$d/libcuda.so.1" ]; then
      driver="$d/libcuda.so.1"
      break
    fi
  done
fi
if [ -z "${CALHOST_CUDA_DRIVER:-}" ] && [ -n "$driver" ]; then
  ld="$ld:$(dirname "$driver")"
fi
sites=""
if command -v python3 >/dev/null 2>&1; then
  sites=$(python3 -c 'import sys, os; print(":".join(p for p in sys.path if p and os.path.isdir(os.path.join(p, "nvidia"))))' 2>/dev/null)
fi
for s in $(echo "$sites" | tr ':' ' '); do
  for l in "$s"/nvidia/cu13/lib "$s"/nvidia/*/lib; do
    [ -d "$l" ] && ld="$ld:$l"
  done
done
{
  echo "export LD_LIBRARY_PATH='$ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}'"
  [ -n "$driver" ] && echo "export CALHOST_CUDA_DRIVER='$driver'"
  [ -n "$sites" ] && echo "export PYTHONPATH='$sites${PYTHONPATH:+:$PYTHONPATH}'"
  echo "bin='$dir/bin'"
  echo "plugins='$dir/lib/calhost/plugins'"
  echo "cal=\"\$bin/calhost --config $work/cuda-check.ini\""
} >"$env_file"
export CUDA_CHECK_ENV="$env_file"

cat >"$work/cuda-check.ini" <<INI
[store]
path = $work/store.txt
[plugins]
directories = $dir/lib/calhost/plugins
enabled = cuda_gemm, cublaslt
[calibration]
threads = 1
plugin_timeout = 100s
INI
workloads=""
for spec in square_1024:1024,1024,1024 square_4096:4096,4096,4096 tall_8192x64x4096:8192,64,4096 \
  small_128:128,128,128; do
  for dt in float32 bfloat16 float16; do
    name=${spec%%:*} shape=${spec#*:}
    case "$dt:$name" in float16:tall_* | float16:small_*) continue ;; esac
    short=$(echo "$dt" | sed 's/float32/f32/; s/bfloat16/bf16/; s/float16/f16/')
    printf '[workload %s_%s]\noperator = MatMul\ndtype = %s\nshape = %s\n' "$name" "$short" "$dt" \
      "$shape" >>"$work/cuda-check.ini"
    workloads="$workloads ${name}_$short"
  done
done
echo "$workloads" >"$work/workloads"

passed=0 ran=0 failed="" lines=""
step() { # step NAME SECONDS FUNCTION
  name=$1 limit=$2
  t0=$(date +%s)
  timeout -k 5 "$limit" sh "$self" --step "$3" >"$work/$name.log" 2>&1
  rc=$?
  secs=$(($(date +%s) - t0))
  ran=$((ran + 1))
  if [ $rc -eq 0 ]; then passed=$((passed + 1)); else failed="$failed $name"; fi
  [ $rc -eq 124 ] && echo "(timed out after $limit s)" >>"$work/$name.log"
  line="$name: exit $rc in $secs s"
  echo "== $line"
  lines="$lines{\"step\":\"$name\",\"exit\":$rc,\"seconds\":$secs},"
  echo "$line" >>"$work/steps.txt"
  return $rc
}

verdict=PASS
if step devices 20 devices; then
  step check 90 checks
  step quick 100 quick
  step lookup 20 lookups
  step verify 30 verify
  step bench 120 bench
  [ $passed -eq $ran ] || verdict=FAIL
else
  step check 90 checks
  if grep -Eq 'no NVIDIA device|CUDA_ERROR_STUB_LIBRARY|no NVIDIA driver|reports no GPU' "$work/devices.log"; then
    verdict="NO DEVICE"
  else
    verdict=FAIL
  fi
fi
secs=$(($(date +%s) - start))
total=6
last="cuda-check: $verdict ($passed/$total steps passed${failed:+; failed:$failed}) in $secs s"

# ---- the three files ------------------------------------------------------
{
  echo "bundle: $dir ($mode)"
  head -2 "$dir/MANIFEST" 2>/dev/null | tail -1
  sed 's/^export //' "$env_file" | grep -E '^(LD_LIBRARY_PATH|CALHOST_CUDA_DRIVER|PYTHONPATH)='
  grep -E '^(cuda_gemm|cublaslt): |nvrtc [0-9]' "$work/devices.log" 2>/dev/null | sort -u | head -8
  cat "$work/steps.txt"
  grep -E 'TFLOP/s|open_session|ratio|best|cuda-bench:' "$work/bench.log" 2>/dev/null | head -60
  echo "$last"
} >"$out/summary.txt"
json_str() { # a file's text (first 64 KiB) as a JSON string
  head -c 65536 "$1" 2>/dev/null | sed 's/\\/\\\\/g; s/"/\\"/g; s/\t/\\t/g' | tr -d '\r' |
    awk 'BEGIN { ORS = "" } { gsub(/[\001-\037]/, "?"); print (NR > 1 ? "\\n" : "") $0 }'
}
{
  printf '{"verdict":"%s","passed":%d,"steps_total":%d,"seconds":%d,"bundle":"%s",' \
    "$verdict" "$passed" "$total" "$secs" "$dir"
  printf '"steps":[%s],' "${lines%,}"
  printf '"devices":"%s","bench":"%s","summary":"%s"}\n' "$(json_str "$work/devices.log")" \
    "$(json_str "$work/bench.log")" "$(json_str "$out/summary.txt")"
} >"$out/run.json"
cp "$work/cuda-check.ini" "$work/steps.txt" "$dir/MANIFEST" "$work/" 2>/dev/null
(cd "$work" && tar czf "$out/logs.tar.gz" --exclude=env.sh --exclude=workloads ./*.log ./*.ini \
  ./*.txt $(ls MANIFEST 2>/dev/null)) 2>/dev/null
echo "$last"
case "$verdict" in
PASS) exit 0 ;;
"NO DEVICE") exit 3 ;;
*) exit 1 ;;
esac
