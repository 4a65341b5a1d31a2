#!/bin/bash
# test_fleet_slurm.sh: fleet calibration on a real Slurm cluster (issue 14).
# Starts a single-host cluster (slurm_cluster.sh: munged, slurmctld, two
# slurmd nodes on this machine, all in a temporary directory), then with
# config/fleet/submit.sh and a small configuration (quick rigor; cpu_gemm
# and example on two small workloads each; threads 1,max, where one
# MatMul is large enough for cpu_gemm to use 2 threads):
#   1. a 2-shard array and its merge job, shard 1 failing once: the merge is
#      cancelled; shard 1 resubmitted alone (--retry 1) completes the
#      campaign: every work item of `calhost plan` in exactly one shard,
#      shards disjoint, `check` ok, the fleet store holding exactly the keys
#      of an unsharded run of the same configuration;
#   2. shard 0 resubmitted (a rerun): it skips everything (already
#      calibrated) and the merge leaves the fleet store as it was;
#   3. the heterogeneous variant: one array per partition (p1: 2 shards,
#      p2: 1 shard) and one merge after both.
# The daemons are stopped whatever happens (trap). Without root or the
# Slurm/munge binaries the test is skipped (exit 77, ctest SKIP_RETURN_CODE).
# Environment: CALHOST_SOURCE_DIR, CALHOST_BUILD_DIR (set by ctest);
# CALHOST_KEEP_TEST_DIR=1 keeps the temporary directory.
set -u
src=${CALHOST_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CALHOST_BUILD_DIR:?set CALHOST_BUILD_DIR to the build tree}
calhost=$build/bin/calhost
submit=$src/config/fleet/submit.sh
check=$src/tests/fleet/check_fleet.py
. "$src/tests/fleet/slurm_cluster.sh"

missing=$(slurm_missing)
if [ -n "$missing" ]; then
  echo "SKIP: the Slurm fleet test needs root and Debian's slurmctld, slurmd, slurm-client," \
    "munge and python3 (scripts/setup.sh deps installs them); missing here: $missing"
  exit 77
fi
[ -x "$calhost" ] || { echo "FAIL: $calhost not built"; exit 1; }

T=$(mktemp -d /tmp/calhost-fleet-XXXXXX)
cleanup() {
  local rc=$?
  slurm_stop
  if [ -n "${CALHOST_KEEP_TEST_DIR:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

show_logs() {
  for f in "$T"/slurm/log/*.log "$T"/*/logs/*.out; do
    [ -f "$f" ] || continue
    echo "---- $f (last 30 lines)"
    tail -n 30 "$f"
  done
}
fail() {
  echo "FAIL: $*"
  show_logs
  exit 1
}
# every campaign within a limit, so that a stuck job fails the test with
# its logs and the trap still stops the daemons (ctest's own TIMEOUT kills)
submit() { timeout 180 "$submit" "$@"; }

slurm_start "$T/slurm" || fail "could not start the single-host Slurm cluster"
echo "slurm: $(sinfo -h -o '%P %D %T' | tr '\n' ';')"

cfg=$T/fleet.ini
cat >"$cfg" <<EOF
[plugins]
directories = $build/lib/calhost/plugins
enabled = cpu_gemm, example
[calibration]
threads = 1, max
rigor = quick
time_budget = 30s
plugin_timeout = 120s
[workload mm_32]
operator = MatMul
shape = 32,32,32
[workload mm_128x128x256]
operator = MatMul
shape = 128,128,256
[workload sum_4k]
operator = ReduceSum
shape = 4096
[workload sum_8k]
operator = ReduceSum
shape = 8192
EOF

# the unsharded run of the same configuration (the reference)
"$calhost" --quiet calibrate --config "$cfg" --store "$T/full.txt" || fail "unsharded calibrate"

# 1. a 2-shard campaign whose shard 1 fails once (a calhost that exits 3
#    the first time it is asked for shard 1/2): the merge is cancelled and
#    submit --wait says so; resubmitting shard 1 alone completes it
"$calhost" plan --config "$cfg" --shards 2 --json >"$T/plan2.json" || fail "plan --shards 2"
"$calhost" plan --config "$cfg" --shards 1 --json >"$T/plan1.json" || fail "plan --shards 1"
"$calhost" plan --config "$cfg" --shards 2 | tail -n 1
flaky=$T/flaky-calhost
cat >"$flaky" <<EOF
#!/bin/bash
case " \$* " in
*" --shard 1/2 "*) [ -e "$T/failed-once" ] || { touch "$T/failed-once"; echo "flaky: shard 1 fails" >&2; exit 3; } ;;
esac
exec "$calhost" "\$@"
EOF
chmod 755 "$flaky"
if submit --dir "$T/fleet" --shards 2 --calhost "$flaky" --wait -- --config "$cfg"; then
  fail "submit --wait succeeded although shard 1 failed"
fi
[ -e "$T/failed-once" ] || fail "shard 1 never ran"
[ ! -e "$T/fleet/fleet.txt" ] || fail "the merge ran although shard 1 failed"
submit --dir "$T/fleet" --shards 2 --retry 1 --calhost "$flaky" --wait -- --config "$cfg" ||
  fail "the resubmitted shard 1 (and its merge) failed"
python3 "$check" campaign "$calhost" "$T/fleet" "$T/full.txt" "$T/fleet/stores:2:$T/plan2.json" ||
  fail "the 2-shard campaign's fleet store"
"$calhost" --store "$T/fleet/fleet.txt" list --by-processor

# 2. a rerun of shard 0: it skips what is calibrated, the store stays
before=$("$calhost" --store "$T/fleet/fleet.txt" check --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["profiles"])')
submit --dir "$T/fleet" --shards 2 --retry 0 --calhost "$calhost" --wait -- --config "$cfg" ||
  fail "the resubmitted shard 0 (and its merge) failed"
python3 "$check" rerun "$calhost" "$T/fleet" "$T/fleet/stores" 0 "$before" || fail "the rerun"

# 3. heterogeneous: one array per partition (node type), one merge
submit --dir "$T/hetero" --type p1:2 --type p2:1 --calhost "$calhost" --wait -- --config "$cfg" ||
  fail "the heterogeneous campaign failed"
python3 "$check" campaign "$calhost" "$T/hetero" "$T/full.txt" \
  "$T/hetero/stores/p1:2:$T/plan2.json" "$T/hetero/stores/p2:1:$T/plan1.json" ||
  fail "the heterogeneous campaign's fleet store"

echo "PASS: fleet calibration on Slurm (2 shards, retry, heterogeneous)"
