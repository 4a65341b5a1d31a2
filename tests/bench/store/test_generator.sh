#!/usr/bin/env bash
# test_generator.sh: bench_store_generator: the store benchmark's generator
# (tests/bench/store/gen_profiles.py, in the repository) writes a store that
# libcalstore loads whole (calstore-bench load counts every profile) and a
# key list whose every line is a hit (calstore-bench lookup). Small: 300
# profiles.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${CALHOST_BUILD_DIR:?CALHOST_BUILD_DIR}
dir=$(mktemp -d /tmp/calhost-bench-gen-XXXXXX)
trap 'rm -rf "$dir"' EXIT
python3 "$here/gen_profiles.py" 300 "$dir/p.txt" --keys "$dir/k.tsv" --seed 3
keys=$(wc -l <"$dir/k.tsv")
[ "$keys" -eq 300 ] || { echo "FAIL: $keys keys for 300 profiles" >&2; exit 1; }
export CALSTORE_BENCH_REPEAT=1
out=$("$build/bin/calstore-bench" load "$dir/p.txt")
echo "$out"
grep -q '^profiles=300 ' <<<"$out" || { echo "FAIL: the generated store did not load whole" >&2; exit 1; }
out=$("$build/bin/calstore-bench" lookup "$dir/p.txt" "$dir/k.tsv" 300)
echo "$out"
grep -q '^lookups=300 hits=300 ' <<<"$out" || { echo "FAIL: a generated key missed" >&2; exit 1; }
echo "PASS"
