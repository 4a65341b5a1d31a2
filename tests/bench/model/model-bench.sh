#!/bin/sh
# model-bench.sh BUILD_DIR [WORK_DIR]: how long `calhost model show` takes and
# how much memory it needs, against `sha256sum` of the same file measured in
# the same run (the baseline: reading and hashing the bytes once), on the
# largest model of Debian's libonnx-testdata, on a generated model of 10,000
# nodes and on a generated model with a 300 MB initializer (make_big.py).
# Prints, per model: bytes, nodes listed, model show's wall time (best of 5)
# and peak RSS (/usr/bin/time), sha256sum's, and the ratio. Then the key
# rule's worth: mixed.onnx calibrated with cpu_gemm (calibrate --model,
# rigor measure) and model-policy-bench's model totals with per-node
# winners, one winner for all, and the default. On demand only.
set -eu
build=${1:?usage: model-bench.sh BUILD_DIR [WORK_DIR]}
work=${2:-$(mktemp -d /tmp/calhost-model-bench-XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
calhost="$build/bin/calhost"
/usr/bin/python3 "$here/make_big.py" "$work"
largest=$(find /usr/share/libonnx-testdata -name '*.onnx' -printf '%s %p\n' | sort -n | tail -1 |
  cut -d' ' -f2)
best() { # best CMD...: the best wall time of 5 runs, in ms
  b=""
  for _ in 1 2 3 4 5; do
    t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N)
    t=$(( (t1 - t0) / 1000 ))
    if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
  done
  echo "$b"
}
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
printf '%-22s %12s %6s %12s %10s %12s %10s %7s\n' model bytes nodes show_us show_kb sha256_us sha_kb ratio
for f in "$largest" "$work/nodes10k.onnx" "$work/weights300m.onnx"; do
  n=$("$calhost" model show --json "$f" | grep -o '"onnx_operator"' | wc -l)
  s=$(best "$calhost" model show "$f")
  h=$(best sha256sum "$f")
  printf '%-22s %12s %6s %12s %10s %12s %10s %7s\n' "$(basename "$(dirname "$f")")/$(basename "$f")" \
    "$(stat -c %s "$f")" "$n" "$s" "$(rss "$calhost" model show "$f")" "$h" \
    "$(rss sha256sum "$f")" "$(awk "BEGIN{printf \"%.2f\", $s / $h}")"
done

echo
echo "== the key rule: mixed.onnx, cpu_gemm, per-node winners against one policy for all"
plugins="$build/lib/calhost/plugins"
printf '[store]\npath = %s/store.txt\n[plugins]\npaths = %s/cpu_gemm.so\nenabled = cpu_gemm\n[calibration]\nthreads = 1\nrigor = measure\n' \
  "$work" "$plugins" >"$work/bench.ini"
rm -f "$work/store.txt"
"$calhost" --config "$work/bench.ini" -q calibrate --model "$work/mixed.onnx"
winner() { "$calhost" --config "$work/bench.ini" lookup --model "$work/mixed.onnx" --node "$1" --json |
  grep -o '"policy":"[^"]*"' | cut -d'"' -f4; }
"$build/bin/model-policy-bench" "$plugins/cpu_gemm.so" "$work/mixed.onnx" "$(winner sq1)" "$(winner thin)"
