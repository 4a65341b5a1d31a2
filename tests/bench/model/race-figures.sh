#!/bin/sh
# race-figures.sh BUILD_DIR [WORK_DIR]: issue 38's figures. For a PyTorch-
# style MLP, a BERT-base encoder layer and a GPT-style decoding step
# (race_models.py; BATCH, SEQ: 8, 128), each calibrated from an empty store
# with cpu_gemm and openblas (RIGOR: measure; THREADS: 1): the calibrate
# run's wall time and its race phase's ("races: N structures in X s"), then
# `calhost model bench`: the model's total with calhost's selection, each
# backend tuned, each default. Nodes no backend serves (on a branch without
# the Gemm/batched MatMul backends: the attention MatMuls) are left out of
# every total alike (bench counts calibrated nodes only). On demand only.
set -eu
build=${1:?usage: race-figures.sh BUILD_DIR [WORK_DIR]}
work=${2:-$(mktemp -d /tmp/calhost-race-figures-XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
calhost="$build/bin/calhost"
plugins="$build/lib/calhost/plugins"
: "${BATCH:=8}" "${SEQ:=128}" "${RIGOR:=measure}" "${THREADS:=1}"
/usr/bin/python3 "$here/race_models.py" "$work" "$BATCH" "$SEQ"
echo "batch $BATCH, seq $SEQ, rigor $RIGOR, threads $THREADS, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %6s %7s %7s %6s | %11s %11s %11s %11s %11s | %s\n' model nodes cal_s race_s race% \
  selection cpu_gemm cpu_gemm_def openblas openblas_def "selection / best tuned"
for m in mlp encoder decoder; do
  printf '[store]\npath = %s/%s.store\n[plugins]\npaths = %s/cpu_gemm.so, %s/openblas.so\nenabled = cpu_gemm, openblas\n[calibration]\nthreads = %s\nrigor = %s\n' \
    "$work" "$m" "$plugins" "$plugins" "$THREADS" "$RIGOR" >"$work/$m.ini"
  rm -f "$work/$m.store"
  t0=$(date +%s%N)
  "$calhost" --config "$work/$m.ini" calibrate --model "$work/$m.onnx" >"$work/$m.cal" 2>&1 || true
  t1=$(date +%s%N)
  cal=$(awk "BEGIN{printf \"%.1f\", ($t1 - $t0) / 1e9}")
  race=$(sed -n 's/^races: .* in \([0-9.]*\) s$/\1/p' "$work/$m.cal")
  race=${race:-0}
  "$calhost" --config "$work/$m.ini" model bench "$work/$m.onnx" --json >"$work/$m.bench.json" || true
  "$calhost" --config "$work/$m.ini" model bench "$work/$m.onnx" >"$work/$m.bench.txt" 2>&1 || true
  /usr/bin/python3 - "$work/$m.bench.json" "$m" "$cal" "$race" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
t = {x["name"]: x["total_us"] for x in b["totals"]}
def ms(v):
    return "-" if v is None else "%.2f ms" % (v / 1000)
sel = t.get("calhost selection")
best = min(v for k, v in t.items() if k.endswith(" tuned") and v is not None)
cal, race = float(sys.argv[3]), float(sys.argv[4])
print("%-8s %6s %7.1f %7.2f %5.1f%% | %11s %11s %11s %11s %11s | %.3fx" % (
    sys.argv[2], "%d/%d" % (b["calibrated_nodes"], b["node_count"]), cal, race,
    100 * race / cal if cal else 0, ms(sel), ms(t.get("cpu_gemm tuned")),
    ms(t.get("cpu_gemm default")), ms(t.get("openblas tuned")), ms(t.get("openblas default")),
    sel / best))
PY
done
echo "(work: $work; each model's calibrate output, races and bench in $work/MODEL.cal, MODEL.bench.txt)"
