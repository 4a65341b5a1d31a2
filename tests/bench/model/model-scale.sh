#!/bin/sh
# model-scale.sh BUILD_DIR [WORK_DIR]: the model path's cost as a model
# doubles: for N = 1000 to 16000 nodes (CALHOST_SCALE_SIZES) of N distinct structures
# (and of one structure), the best of 3 wall times of `model show`, `plan
# --model` (read, workloads, calibrate's selection; nothing runs) and
# `lookup --model` (the runtime: keys and a store lookup per structure,
# against an empty store) with cpu_gemm, and each time's ratio to the time
# at N/2: 2.0 is linear, 4.0 quadratic. On demand only (tests/bench).
set -eu
build=$(cd "${1:?usage: model-scale.sh BUILD_DIR [WORK_DIR]}" && pwd)
work=${2:-$(mktemp -d /tmp/calhost-model-scale-XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
calhost="$build/bin/calhost"
sizes=${CALHOST_SCALE_SIZES:-"1000 2000 4000 8000 16000"}
/usr/bin/python3 "$here/make_scale.py" "$work" $sizes
printf '[store]\npath = %s/store.txt\n[plugins]\npaths = %s/lib/calhost/plugins/cpu_gemm.so\nenabled = cpu_gemm\n[calibration]\nthreads = 1\n' \
  "$work" "$build" >"$work/scale.ini"
best() { # best CMD...: the best wall time of 3 runs, in ms
  b=""
  for _ in 1 2 3; do
    t0=$(date +%s%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s%N)
    t=$(( (t1 - t0) / 1000000 ))
    if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
  done
  echo "$b"
}
printf '%-9s %6s %10s %6s %10s %6s %10s %6s\n' model nodes show_ms x2 plan_ms x2 lookup_ms x2
for kind in distinct same; do
  ps=""; pp=""; pl=""
  for n in $sizes; do
    f="$work/${kind}_$n.onnx"
    s=$(best "$calhost" model show "$f")
    p=$(best "$calhost" --config "$work/scale.ini" plan --model "$f")
    l=$(best "$calhost" --config "$work/scale.ini" lookup --model "$f")
    r() { [ -n "$1" ] && awk "BEGIN{printf \"%.2f\", $2 / ($1 ? $1 : 1)}" || echo -; }
    printf '%-9s %6s %10s %6s %10s %6s %10s %6s\n' "$kind" "$n" "$s" "$(r "$ps" "$s")" "$p" \
      "$(r "$pp" "$p")" "$l" "$(r "$pl" "$l")"
    ps=$s; pp=$p; pl=$l
  done
done
