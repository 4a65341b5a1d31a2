#!/bin/sh
# race-figures.sh BUILD_DIR [WORK_DIR]: issue 38's figures. For a PyTorch-
# style MLP, a BERT-base encoder layer and a GPT-style decoding step
# (race_models.py; BATCH, SEQ: 8, 128), each calibrated from an empty store
# with cpu_gemm and openblas (RIGOR: measure; THREADS: 1): the calibrate
# run's wall time and its race phase's ("races: N structures in X s"), then
# `calhost model bench`: the model's total with calhost's selection, each
# backend tuned, each default. Nodes no backend serves (on a branch without
# the Gemm/batched MatMul backends: the attention MatMuls) are left out of
# every total alike (bench counts calibrated nodes only). The bench takes
# ROUNDS (5) rounds over every structure: each total is the median of its
# rounds, and each ratio is printed as median (min-max of the rounds), the
# run's own noise. The race chooses per node: MODEL.choice (lookup --model
# --explain). On demand only.
set -eu
build=${1:?usage: race-figures.sh BUILD_DIR [WORK_DIR]}
build=$(cd "$build" && pwd) # the configurations live in WORK_DIR: absolute plugin paths
work=${2:-$(mktemp -d /tmp/calhost-race-figures-XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
calhost="$build/bin/calhost"
plugins="$build/lib/calhost/plugins"
: "${BATCH:=8}" "${SEQ:=128}" "${RIGOR:=measure}" "${THREADS:=1}" "${ROUNDS:=5}"
/usr/bin/python3 "$here/race_models.py" "$work" "$BATCH" "$SEQ"
echo "batch $BATCH, seq $SEQ, rigor $RIGOR, threads $THREADS, rounds $ROUNDS, load $(cut -d' ' -f1-3 /proc/loadavg)"
# the kernel OpenBLAS picks in this environment (the plugin dlopens libopenblas.so.0)
/usr/bin/python3 -c 'import ctypes; l = ctypes.CDLL("libopenblas.so.0"); l.openblas_get_corename.restype = ctypes.c_char_p; print("openblas core:", l.openblas_get_corename().decode())' || true
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)} CALHOST_CPU_GEMM_MAX_ISA=${CALHOST_CPU_GEMM_MAX_ISA:-(unset)}"
printf '%-8s %6s %7s %7s %6s | %11s %11s %11s %11s %11s | %-21s %s\n' model nodes cal_s race_s race% \
  selection cpu_gemm cpu_gemm_def openblas openblas_def "sel / best tuned" "openblas_def / sel"
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
  "$calhost" --config "$work/$m.ini" lookup --model "$work/$m.onnx" --explain >"$work/$m.choice" 2>&1 || true
  "$calhost" --config "$work/$m.ini" model bench "$work/$m.onnx" --rounds "$ROUNDS" --json >"$work/$m.bench.json" || true
  /usr/bin/python3 - "$work/$m.bench.json" "$m" "$cal" "$race" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
t = {x["name"]: x["total_us"] for x in b["totals"]}
def ms(v):
    return "-" if v is None else "%.2f ms" % (v / 1000)
sel = t.get("calhost selection")
r = b["selection_vs_best_tuned"]
ob = [x for x in b["totals"] if x["name"] == "openblas default"]
obr = "%.3fx (%.3f-%.3f)" % (ob[0]["vs_selection"], ob[0]["vs_selection_min"],
                             ob[0]["vs_selection_max"]) if ob and ob[0]["vs_selection"] else "-"
cal, race = float(sys.argv[3]), float(sys.argv[4])
print("%-8s %6s %7.1f %7.2f %5.1f%% | %11s %11s %11s %11s %11s | %-21s %s" % (
    sys.argv[2], "%d/%d" % (b["calibrated_nodes"], b["node_count"]), cal, race,
    100 * race / cal if cal else 0, ms(sel), ms(t.get("cpu_gemm tuned")),
    ms(t.get("cpu_gemm default")), ms(t.get("openblas tuned")), ms(t.get("openblas default")),
    "%.3fx (%.3f-%.3f)" % (r["median"], r["min"], r["max"]), obr))
PY
done
echo "(work: $work; each model's calibrate output and races in MODEL.cal, the choice per node in MODEL.choice, the bench in MODEL.bench.json)"
