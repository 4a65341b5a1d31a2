#!/bin/sh
# test-cuda-check.sh BUILD_DIR WORK_DIR: ctest cuda_check_bundle (issue 39):
# cuda-check.sh's bundle mode and no-device path on a machine without a
# GPU. Makes a bundle from BUILD_DIR (make-bundle.sh), runs cuda-check.sh
# --bundle with the toolkit's stub libcuda (no device) and checks: exit 3
# ("NO DEVICE"), at most 3 files written (summary.txt, run.json,
# logs.tar.gz), the summary's last line counting the passed steps (plugin
# check passes, skipping the device checks), run.json parses, the tarball
# holds the step logs; and that a folder without a bundle is refused
# (exit 2). Skips (77) without the stub.
set -u
build=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
stub=${CUDA_STUB:-/usr/local/cuda/lib64/stubs/libcuda.so}
[ -r "$stub" ] || { echo "no stub libcuda at $stub: skipped"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
sh "$here/make-bundle.sh" "$build" "$work/bundle" || fail "make-bundle.sh"
size=$(du -sk "$work/bundle" | cut -f1)
# a bundle of a release build is a few MB; a sanitizer build's binaries are
# several times larger (CMake passes BUNDLE_MAX_KIB for those)
max=${BUNDLE_MAX_KIB:-16384}
[ "$size" -lt "$max" ] || fail "the bundle takes $size KiB (at most $max)"
CALHOST_CUDA_DRIVER=$stub sh "$here/cuda-check.sh" --bundle "$work/bundle" "$work/out" >"$work/stdout" 2>&1
rc=$?
cat "$work/stdout"
[ $rc -eq 3 ] || fail "exit $rc, expected 3 (no device)"
n=$(find "$work/out" -type f | wc -l)
[ "$n" -le 3 ] || fail "$n files in OUT: $(ls "$work/out")"
for f in summary.txt run.json logs.tar.gz; do
  [ -s "$work/out/$f" ] || fail "no $f"
done
last=$(tail -1 "$work/out/summary.txt")
echo "$last" | grep -Eq '^cuda-check: NO DEVICE \(1/6 steps passed; failed: devices\) in [0-9]+ s$' ||
  fail "summary's last line: $last"
grep -q 'no NVIDIA device' "$work/out/summary.txt" || fail "the summary does not say why"
grep -q 'headers .*: ' "$work/out/summary.txt" || fail "the summary does not say which headers"
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["verdict"] == "NO DEVICE" and d["passed"] == 1, d' \
    "$work/out/run.json" || fail "run.json"
fi
tar tzf "$work/out/logs.tar.gz" >"$work/tar.txt" || fail "logs.tar.gz does not list"
for f in devices.log check.log cuda-check.ini; do
  grep -q "$f" "$work/tar.txt" || fail "logs.tar.gz lacks $f"
done
grep -q '7 of 7 checks passed' "$work/out/summary.txt" 2>/dev/null ||
  tar xzf "$work/out/logs.tar.gz" -O ./check.log | grep -q 'checks passed' || fail "plugin check's log"
# a folder without a bundle
mkdir -p "$work/empty"
sh "$here/cuda-check.sh" --bundle "$work/empty" "$work/out2" >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "an empty bundle folder gave exit $rc, expected 2"
[ ! -e "$work/out2" ] || [ -z "$(ls "$work/out2")" ] || fail "an empty bundle folder wrote files"
rm -rf "$work"
echo "cuda_check_bundle: ok"
