#!/bin/sh
# runtime_symbols.sh BUILD_DIR: the installed deployment runtime links no
# tuner and exports only its public API (ctest runtime_symbols).
# Installs the runtime's component to a temporary prefix and reads the
# installed libcalhost_runtime.so:
#  - nm (every symbol, local ones included, as linked in): no sweep_ or
#    search_ function or object (the measurement engine, the search); an
#    isolate_ symbol only of the child runner and its framed protocol, which
#    the runtime uses itself (the loader probes a plugin in a child, the
#    device listing runs in one): isolate_run, isolate_in_child,
#    isolate_signal_name,
#    isolate_proto_*, isolate_props_free, and the child protocol's codec,
#    isolate_rec_* (isolate/codec.c: one file with every child's records,
#    linked whole; the sweeps' records in it carry no engine code);
#  - nm -D: the dynamic exports are exactly the functions that
#    include/calhost/runtime.h declares CALHOST_RUNTIME_API.
set -eu
build=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/calhost-runtime-symbols-XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/prefix" --component runtime >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install --component runtime failed"; }
lib=$(find "$work/prefix" -name 'libcalhost_runtime.so.*' -type f | head -n 1)
test -n "$lib" || fail "no libcalhost_runtime.so.* installed under $work/prefix"
echo "== $lib"

nm "$lib" | awk 'NF == 3 { print $3 }' | sort -u >"$work/all"
test -s "$work/all" || fail "nm lists no symbols in $lib (stripped?): cannot check it"
grep -E '^(sweep|search)_' "$work/all" >"$work/tuner" || true
grep -E '^isolate_' "$work/all" |
  grep -vE '^isolate_(run|in_child|signal_name|props_free|proto_[a-z0-9_]+|rec_[a-z0-9_]+)$' \
    >>"$work/tuner" || true
if [ -s "$work/tuner" ]; then
  echo "the runtime links tuner code ($(wc -l <"$work/tuner") symbols):" >&2
  cat "$work/tuner" >&2
  fail "libcalhost_runtime.so holds sweep_/search_ symbols or isolate_ ones beyond the child runner"
fi
echo "no sweep_ or search_ symbol; isolate_: $(grep -cE '^isolate_' "$work/all" || true) (child runner, protocol, codec)"

nm -D --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sed 's/@.*//' | sort -u >"$work/exported"
# each declaration, joined across lines: CALHOST_RUNTIME_API ... NAME(
tr '\n' ' ' <"$src/include/calhost/runtime.h" | grep -oE 'CALHOST_RUNTIME_API[^(;]*\(' |
  grep -oE 'calhost_[a-z0-9_]*\($' | tr -d '(' | sort -u >"$work/declared"
test -s "$work/declared" || fail "no CALHOST_RUNTIME_API function found in runtime.h"
if ! cmp -s "$work/exported" "$work/declared"; then
  echo "exported (<) versus declared in runtime.h (>):" >&2
  diff "$work/exported" "$work/declared" >&2 || true
  fail "libcalhost_runtime.so's exports differ from runtime.h's CALHOST_RUNTIME_API functions"
fi
echo "exports: the $(wc -l <"$work/declared") functions of runtime.h, nothing else"
