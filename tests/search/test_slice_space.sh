#!/bin/sh
# test_slice_space.sh: tests/bench/search/slice-space.awk keeps exactly the
# slice's configurations of a recording, narrows the sliced parameter, names
# the space, and refuses a recording that ends inside the slice (not proof
# that the slice is complete) unless the recording says it is complete.
set -eu
awk_script="$1/tests/bench/search/slice-space.awk"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/rec.space" <<'SPACE'
calhost-search-space 1
space rec
meta plugin fake
param a ordered 0 1 2
param b ordered 0 1
config 2 1 9.5 0.1 0.01 0.02 a=2,b=1
config 0 0 5 0.1 0.01 0.02 a=0,b=0
config 0 1 4 0.1 0.01 0.02 a=0,b=1
config 1 0 3 0.1 0.01 0.02 a=1,b=0
SPACE
fail() { echo "FAIL: $*" >&2; exit 1; }
"$awk_script" -v slice=a=0 -v name=sliced "$dir/rec.space" > "$dir/out.space" || fail "complete slice refused"
grep -qx 'space sliced' "$dir/out.space" || fail "space not renamed"
grep -qx 'param a ordered 0' "$dir/out.space" || fail "sliced parameter not narrowed"
grep -qx 'param b ordered 0 1' "$dir/out.space" || fail "other parameter changed"
grep -q '^meta slice a=0 ' "$dir/out.space" || fail "no meta slice line"
[ "$(grep -c '^config' "$dir/out.space")" = 2 ] || fail "expected the 2 configurations with a=0"
grep -q '^config 0 0 5 ' "$dir/out.space" || fail "lost a=0,b=0"
grep -q '^config [12] ' "$dir/out.space" && fail "kept a configuration outside the slice"
# a recording that stops inside the slice: refused
head -n 7 "$dir/rec.space" > "$dir/cut.space"
if "$awk_script" -v slice=a=0 -v name=x "$dir/cut.space" > /dev/null 2> "$dir/err"; then
  fail "an incomplete slice was accepted"
fi
grep -q 'not complete' "$dir/err" || fail "no reason given: $(cat "$dir/err")"
# the same cut recording that says it is complete: any slice of it is
sed 's/^meta plugin fake$/meta complete 1/' "$dir/cut.space" > "$dir/complete.space"
"$awk_script" -v slice=a=0 -v name=x "$dir/complete.space" > "$dir/out2.space" ||
  fail "a slice of a complete recording was refused"
[ "$(grep -c '^config' "$dir/out2.space")" = 1 ] || fail "expected the 1 recorded configuration with a=0"
# a slice over a trailing parameter of a complete recording
sed 's/^meta plugin fake$/meta complete 1/' "$dir/rec.space" > "$dir/complete.space"
"$awk_script" -v slice=b=1 -v name=x "$dir/complete.space" > "$dir/out3.space" ||
  fail "a slice over b of a complete recording was refused"
[ "$(grep -c '^config' "$dir/out3.space")" = 2 ] || fail "expected the 2 configurations with b=1"
grep -q '^config 0 1 4 ' "$dir/out3.space" || fail "lost a=0,b=1"
echo "slice-space: PASS"
