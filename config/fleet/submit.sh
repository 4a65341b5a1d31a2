#!/bin/bash
# submit.sh: submits a fleet calibration to Slurm: one job array of N
# shards (calibrate-shard.sbatch) per node type, and a merge job
# (merge.sbatch) that runs after every shard succeeded. Step by step in
# config/fleet/README.md.
#
#   submit.sh --dir DIR --shards N [--partition P] [--retry LIST] [options] -- [calibrate flags]
#   submit.sh --dir DIR --type P:N [--type P:N]... [options] -- [calibrate flags]
#
#   --dir DIR         the fleet directory, on a file system every node sees:
#                     DIR/fleet.txt (the merged store), DIR/stores/ (the
#                     shards' stores and reports), DIR/logs/ (job output)
#   --shards N        one array of N shards (identical nodes) ...
#   --partition P     ... in partition P (default: the cluster's default)
#   --retry LIST      submit only these shards of the N (an sbatch array list,
#                     e.g. 3,5 or 2-4): the shards that failed; the merge
#                     imports all N again
#   --type P[:N]      heterogeneous clusters: one array of N shards (default 1)
#                     in partition P per node type, stores in DIR/stores/P/;
#                     repeat per type; one merge after all of them. Add :LIST
#                     (P:N:LIST) to resubmit only some shards of that type.
#   --calhost PATH    calhost on the nodes (default: calhost on PATH here)
#   --sbatch OPT      an extra sbatch option for every job (repeatable),
#                     e.g. --sbatch=--time=04:00:00 --sbatch=--account=x
#   --no-merge        submit the arrays only
#   --wait            wait until the merge job ends; exit 0 when it completed
#
# The calibrate flags (--config FILE, --plugin, --workload, --threads,
# --rigor, ...) go to every shard; `calhost plan --shards N FLAGS` shows the
# items and how they split (this script prints its summary line).
# Prints the job ids; exit 0 when everything was submitted (with --wait:
# when the merge job succeeded).
set -u
here=$(cd "$(dirname "$0")" && pwd)

die() {
  echo "submit: $*" >&2
  exit 2
}

dir="" shards="" partition="" retry="" calhost="" merge=1 wait=0
types=() extra=()
while [ $# -gt 0 ]; do
  case $1 in
  --dir) dir=${2:-} && shift ;;
  --dir=*) dir=${1#*=} ;;
  --shards) shards=${2:-} && shift ;;
  --shards=*) shards=${1#*=} ;;
  --partition) partition=${2:-} && shift ;;
  --partition=*) partition=${1#*=} ;;
  --retry) retry=${2:-} && shift ;;
  --retry=*) retry=${1#*=} ;;
  --type) types+=("${2:-}") && shift ;;
  --type=*) types+=("${1#*=}") ;;
  --calhost) calhost=${2:-} && shift ;;
  --calhost=*) calhost=${1#*=} ;;
  --sbatch) extra+=("${2:-}") && shift ;;
  --sbatch=*) extra+=("${1#*=}") ;;
  --no-merge) merge=0 ;;
  --wait) wait=1 ;;
  -h | --help)
    sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  --) shift && break ;;
  *) die "unknown option '$1' (calibrate flags go after --)" ;;
  esac
  shift
done
[ -n "$dir" ] || die "--dir DIR is required"
for f in "$@"; do # the shard script sets these itself
  case $f in
  --store | --store=* | --shard | --shard=* | --report | --report=* | --json)
    die "'$f' is set by the fleet scripts (stores under --dir); leave it out of the calibrate flags"
    ;;
  esac
done
command -v sbatch >/dev/null || die "sbatch not found (is this a Slurm login node?)"
if [ -z "$calhost" ]; then
  calhost=$(command -v calhost) || die "calhost not on PATH: give --calhost PATH"
fi
case $calhost in /*) ;; *) calhost=$(cd "$(dirname "$calhost")" && pwd)/$(basename "$calhost") ;; esac
mkdir -p "$dir/stores" "$dir/logs" || die "cannot create $dir"
dir=$(cd "$dir" && pwd)

if [ ${#types[@]} -eq 0 ]; then
  [ -n "$shards" ] || die "give --shards N (or --type P:N per node type)"
  types=("${partition}:${shards}${retry:+:$retry}")
  homogeneous=1
else
  [ -z "$shards$partition$retry" ] || die "--type replaces --shards/--partition/--retry"
  homogeneous=0
fi

# Numbers are read once, in decimal (as calhost reads them): "010" is ten,
# "08" eight (bash arithmetic would read them as octal, or refuse them).
# decimal TEXT: prints TEXT's value without leading zeros; fails unless digits
decimal() { [[ $1 =~ ^[0-9]{1,9}$ ]] && echo "$((10#$1))"; }
# in_range LIST N: every index of an sbatch array list (3,5 or 2-4) below N;
# prints the list with its numbers in plain decimal
in_range() {
  local part lo hi out=""
  for part in ${1//,/ }; do
    [[ $part =~ ^([0-9]{1,9})(-([0-9]{1,9}))?$ ]] || return 1
    lo=$((10#${BASH_REMATCH[1]})) hi=$((10#${BASH_REMATCH[3]:-${BASH_REMATCH[1]}}))
    [ "$lo" -le "$hi" ] && [ "$hi" -lt "$2" ] || return 1
    [ "$lo" -eq "$hi" ] && out+=${out:+,}$lo || out+=${out:+,}$lo-$hi
  done
  echo "$out"
}
merge_force=()
for f in "$@"; do [ "$f" = --force ] && merge_force=(--force); done
jobs=() specs=()
for t in "${types[@]}"; do
  IFS=: read -r part n list <<<"$t"
  n=$(decimal "${n:-1}") && [ "$n" -ge 1 ] || die "bad shard count in '$t' (a decimal number, 1 or more)"
  if [ -n "$list" ]; then
    plain=$(in_range "$list" "$n") || die "bad shard list '$list' for $n shards (0 .. $((n - 1)), e.g. 1,3 or 0-2)"
    list=$plain
  fi
  [ $homogeneous = 1 ] || [ -n "$part" ] || die "--type needs a partition: '$t'"
  stores=$dir/stores${part:+/$part}
  [ $homogeneous = 1 ] && stores=$dir/stores
  mkdir -p "$stores" || die "cannot create $stores"
  # the plan's summary: how the items split (an empty shard is harmless);
  # flags calibrate would refuse, or a run of no item, stop the campaign here
  planned=$("$calhost" plan --shards "$n" "$@" 2>"$dir/logs/plan.err")
  rc=$?
  if [ $rc -ne 0 ]; then
    cat "$dir/logs/plan.err" >&2
    die "calhost plan refused this campaign (exit $rc): nothing submitted"
  fi
  tail -n 1 <<<"$planned" | sed "s|^|submit: ${part:-default partition}: |" >&2
  # the merge checks that it holds every planned item (merge.sbatch)
  printf '%s\n' "$planned" >"$stores/plan.txt" || die "cannot write $stores/plan.txt"
  opts=(--parsable --array="${list:-0-$((n - 1))}" --output="$dir/logs/%x-%A_%a.out")
  [ -n "$part" ] && opts+=(--partition="$part")
  jid=$(CALHOST=$calhost sbatch "${opts[@]}" "${extra[@]}" "$here/calibrate-shard.sbatch" \
    "$dir" "$stores" "$n" "$@") || die "sbatch of the ${part:-default} array failed"
  jid=${jid%%;*}
  echo "submit: array $jid: ${list:-0-$((n - 1))} of $n shards${part:+ in partition $part} -> $stores" >&2
  jobs+=("$jid")
  specs+=("$stores:$n")
done
echo "${jobs[*]}"
[ $merge = 1 ] || exit 0

dep=$(
  IFS=:
  echo "${jobs[*]}"
)
opts=(--parsable --dependency="afterok:$dep" --kill-on-invalid-dep=yes
  --output="$dir/logs/%x-%j.out")
[ -n "$partition" ] && opts+=(--partition="$partition")
mjid=$(CALHOST=$calhost sbatch "${opts[@]}" "${extra[@]}" "$here/merge.sbatch" "${merge_force[@]}" "$dir" "${specs[@]}") ||
  die "sbatch of the merge job failed"
mjid=${mjid%%;*}
echo "submit: merge job $mjid after $dep -> $dir/fleet.txt" >&2
echo "$mjid"
[ $wait = 1 ] || exit 0

# --wait: poll the merge job every second (sbatch --wait sleeps 2, 8, then
# 32 s between its polls) until it has ended; its exit code is ours.
while state=$(squeue -h -j "$mjid" -o %T 2>/dev/null) && [ -n "$state" ]; do
  case $state in
  PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | REQUEUED | RESIZING) sleep 1 ;;
  *) break ;;
  esac
done
info=$(scontrol show job -o "$mjid" 2>/dev/null)
state=$(sed -n 's/.* JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
code=$(sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p' <<<"$info")
if [ -z "$state" ] && command -v sacct >/dev/null; then # purged from slurmctld: accounting
  read -r state code <<<"$(sacct -n -X -P -j "$mjid" -o State,ExitCode 2>/dev/null | head -n 1 | tr '|' ' ')"
  state=${state%% *} code=${code%%:*}
fi
log="$dir/logs/calhost-merge-$mjid.out"
case $state in
COMPLETED) echo "submit: merge job $mjid completed: $dir/fleet.txt (log: $log)" >&2 && exit 0 ;;
"") echo "submit: merge job $mjid: its end state is unknown (purged; no accounting); see $log" >&2 && exit 1 ;;
*)
  echo "submit: merge job $mjid ended $state (exit ${code:-?}): when it was cancelled, a shard" \
    "failed or was cancelled first; see $dir/logs/ and resubmit the failed shards with" \
    "--retry LIST" >&2
  exit 1
  ;;
esac
