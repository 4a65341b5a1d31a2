#!/bin/bash
# test_fleet_scripts.sh: the fleet scripts (config/fleet) without Slurm: the
# array tasks run one after the other with SLURM_ARRAY_TASK_ID set, and
# sbatch is a stand-in that records its arguments.
#   1. two shards and their merge: the fleet store holds every published
#      profile;
#   2. a rerun calibrates nothing and publishes nothing new: the fleet store
#      is unchanged;
#   3. a rerun with --force, merged with --force (as submit.sh passes it):
#      the fleet store holds the new results. A shard used to republish the
#      other shard's old profiles (from fleet.txt), and the merge's later
#      import won over the new ones;
#   4. merge.sbatch refuses a spec without its shard count;
#   5. submit.sh submits nothing when `calhost plan` refuses the calibrate
#      flags or --retry names a shard past N, and passes --force on to the
#      merge;
#   6. every number is read once, in decimal (--shards 010 is ten shards,
#      08 eight, --retry 01 shard 1; the shard task's and the merge's N);
#   7. the merge fails when a shard holding planned items (plan.txt, written
#      by submit.sh) did not finish them, or the plan has another shard
#      count.
# Environment: CALHOST_SOURCE_DIR, CALHOST_BUILD_DIR (set by ctest).
set -u
src=${CALHOST_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CALHOST_BUILD_DIR:?set CALHOST_BUILD_DIR to the build tree}
calhost=$build/bin/calhost
fleet=$src/config/fleet
T=$(mktemp -d /tmp/calhost-fleet-scripts-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
export HOME=$T XDG_CACHE_HOME=$T/cache XDG_CONFIG_HOME=$T/config

# eight ReduceSum items of the example plugin: shard 0 of 2 holds f and g
{
  printf '[plugins]\ndirectories = %s/lib/calhost/plugins\nenabled = example\n' "$build"
  printf '[calibration]\nthreads = 1\nrigor = quick\ntime_budget = 10\n'
  for w in a:1024 b:2048 c:4096 d:8192 e:512 f:768 g:1536 h:3072; do
    printf '[workload %s]\noperator = ReduceSum\nshape = %s\n' "${w%%:*}" "${w#*:}"
  done
} >"$T/f.ini"
"$calhost" --config "$T/f.ini" plan --shards 2 | tail -n 1 |
  grep -q '8 items in 2 shards (shard 0: 2 items, shard 1: 6 items)' ||
  fail "the test's items no longer split 2/6 (change the workloads)"

shards() { # shards [calibrate flags]: runs both array tasks
  for i in 0 1; do
    SLURM_ARRAY_TASK_ID=$i CALHOST=$calhost CALHOST_LOCAL_DIR=$T \
      bash "$fleet/calibrate-shard.sbatch" "$T/F" "$T/F/stores" 2 --config "$T/f.ini" "$@" \
      >"$T/shard-$i.log" 2>&1 || { cat "$T/shard-$i.log"; fail "shard $i ($*)"; }
  done
}
merge() { # merge [--force]
  CALHOST=$calhost bash "$fleet/merge.sbatch" "$@" "$T/F" "$T/F/stores:2" >"$T/merge.log" 2>&1 ||
    { cat "$T/merge.log"; fail "merge $*"; }
}
# in_fleet: every profile record of the shard stores is in fleet.txt, whole
in_fleet() {
  awk 'FNR == 1 { next }
       /^profile / { rec = "" }
       { rec = rec $0 "|" }
       $0 == "end" { if (NR == FNR) have[rec] = 1; else if (!(rec in have)) { print "not merged: " rec; bad = 1 } }
       END { exit bad }' "$T/F/fleet.txt" "$T/F/stores/shard-0.txt" "$T/F/stores/shard-1.txt"
}
records() { grep -c '^profile ' "$1"; }

echo "== 1. two shards, merged"
shards
merge
in_fleet || fail "the fleet store misses published profiles"
[ "$(records "$T/F/fleet.txt")" -eq 16 ] || fail "8 items: 8 exact and 8 portable profiles expected"

echo "== 2. a rerun publishes nothing new; the fleet store stays as it was"
cp "$T/F/fleet.txt" "$T/fleet-1.txt"
shards
[ "$(records "$T/F/stores/shard-0.txt")" -eq 0 ] && [ "$(records "$T/F/stores/shard-1.txt")" -eq 0 ] ||
  fail "a rerun that calibrated nothing published profiles"
merge
cmp -s "$T/F/fleet.txt" "$T/fleet-1.txt" || fail "a rerun changed the fleet store"

echo "== 3. a rerun with --force reaches the fleet store"
shards --force
[ "$(records "$T/F/stores/shard-0.txt")" -eq 4 ] || fail "shard 0 (2 items) should publish 4 profiles"
[ "$(records "$T/F/stores/shard-1.txt")" -eq 12 ] || fail "shard 1 (6 items) should publish 12 profiles"
merge --force
in_fleet || fail "the forced results did not all reach the fleet store"

echo "== 4. merge.sbatch wants STORES:N"
if CALHOST=$calhost bash "$fleet/merge.sbatch" "$T/F" "$T/F/stores" >"$T/m.log" 2>&1; then
  fail "merge accepted a spec without :N"
fi
grep -q "is not STORES:N" "$T/m.log" || { cat "$T/m.log"; fail "merge's message"; }

echo "== 5. submit.sh checks the campaign before submitting"
mkdir -p "$T/bin"
cat >"$T/bin/sbatch" <<SBATCH
#!/bin/sh
echo "\$*" >>"$T/sbatch.log"
echo 42
SBATCH
chmod +x "$T/bin/sbatch"
sub() { PATH=$T/bin:$PATH bash "$fleet/submit.sh" --dir "$T/S" --calhost "$calhost" "$@" >"$T/sub.log" 2>&1; }
sub --shards 2 -- --config "$T/f.ini" --rigour quick && fail "submit accepted an unknown calibrate flag"
grep -q "calhost plan refused this campaign" "$T/sub.log" || { cat "$T/sub.log"; fail "submit's message"; }
sub --shards 2 --retry 5 -- --config "$T/f.ini" && fail "submit accepted --retry 5 of 2 shards"
grep -q "bad shard list '5' for 2 shards" "$T/sub.log" || { cat "$T/sub.log"; fail "--retry message"; }
[ ! -e "$T/sbatch.log" ] || fail "sbatch was called for a refused campaign"
sub --shards 2 -- --config "$T/f.ini" --force || { cat "$T/sub.log"; fail "submit"; }
grep -q "merge.sbatch --force $T/S " "$T/sbatch.log" || { cat "$T/sbatch.log"; fail "--force did not reach the merge"; }

echo "== 6. numbers are decimal everywhere (issue 22 item 14: 010 was octal 8, 08 no array)"
for spec in 010:10:0-9 08:8:0-7 02:2:0-1; do
  IFS=: read -r given n array <<<"$spec"
  rm -f "$T/sbatch.log"
  sub --shards "$given" -- --config "$T/f.ini" || { cat "$T/sub.log"; fail "submit --shards $given"; }
  grep -q -- "--array=$array .*calibrate-shard.sbatch $T/S $T/S/stores $n " "$T/sbatch.log" ||
    { cat "$T/sbatch.log"; fail "--shards $given: not an array $array of $n shards"; }
  grep -q -- "--dependency=afterok:42 .*merge.sbatch $T/S $T/S/stores:$n\$" "$T/sbatch.log" ||
    { cat "$T/sbatch.log"; fail "--shards $given: the merge is not after the array, over $n shards"; }
done
rm -f "$T/sbatch.log"
sub --shards 3 --retry 01,002 -- --config "$T/f.ini" || { cat "$T/sub.log"; fail "submit --retry 01,002"; }
grep -q -- "--array=1,2 " "$T/sbatch.log" || { cat "$T/sbatch.log"; fail "--retry 01,002 is not 1,2"; }
sub --shards 0x2 -- --config "$T/f.ini" && fail "submit accepted --shards 0x2"
grep -q "bad shard count" "$T/sub.log" || { cat "$T/sub.log"; fail "--shards 0x2's message"; }
# the shard task and the merge read 010 and 02 as ten and two
SLURM_ARRAY_TASK_ID=01 CALHOST=$calhost CALHOST_LOCAL_DIR=$T \
  bash "$fleet/calibrate-shard.sbatch" "$T/D" "$T/D/stores" 02 --config "$T/f.ini" >"$T/d.log" 2>&1 ||
  { cat "$T/d.log"; fail "shard 01 of 02"; }
grep -q "shard 1/2 " "$T/d.log" && [ -f "$T/D/stores/shard-1.txt" ] || { cat "$T/d.log"; fail "shard 01/02 is not 1/2"; }
CALHOST=$calhost bash "$fleet/merge.sbatch" "$T/D" "$T/D/stores:02" >"$T/m.log" 2>&1 &&
  fail "merge of 02 shards passed without shard 0"
grep -q "shard-0.txt" "$T/m.log" || { cat "$T/m.log"; fail "merge did not name the missing shard 0"; }

echo "== 7. a merge that does not hold every planned item fails the campaign"
rm -rf "$T/P" && mkdir -p "$T/P/stores"
"$calhost" --config "$T/f.ini" plan --shards 2 >"$T/P/stores/plan.txt"
for i in 0 1; do
  SLURM_ARRAY_TASK_ID=$i CALHOST=$calhost CALHOST_LOCAL_DIR=$T \
    bash "$fleet/calibrate-shard.sbatch" "$T/P" "$T/P/stores" 2 --config "$T/f.ini" >"$T/p.log" 2>&1 ||
    { cat "$T/p.log"; fail "planned shard $i"; }
done
CALHOST=$calhost bash "$fleet/merge.sbatch" "$T/P" "$T/P/stores:2" >"$T/m.log" 2>&1 ||
  { cat "$T/m.log"; fail "the merge of a whole campaign"; }
# shard 1 (6 planned items) reports a failure: the merge fails, naming it
sed -i 's/"exit_status":0/"exit_status":1/' "$T/P/stores/shard-1.json"
CALHOST=$calhost bash "$fleet/merge.sbatch" "$T/P" "$T/P/stores:2" >"$T/m.log" 2>&1 &&
  fail "the merge passed with shard 1's items not calibrated"
grep -q "did not calibrate every planned item.*shard-1 (6 planned items" "$T/m.log" ||
  { cat "$T/m.log"; fail "the merge's message for shard 1"; }
# a plan of another shard count than the merge's
CALHOST=$calhost bash "$fleet/merge.sbatch" "$T/P" "$T/P/stores:3" >"$T/m.log" 2>&1 &&
  fail "the merge of 3 shards passed a plan of 2"
grep -q "planned in 2 shards, not 3" "$T/m.log" || { cat "$T/m.log"; fail "the merge's shard-count message"; }
echo "PASS fleet scripts"
