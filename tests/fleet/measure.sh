#!/bin/bash
# measure.sh: the wall time of a fleet calibration through Slurm (N shards
# on the single-host cluster of slurm_cluster.sh, array + merge, submitted
# with config/fleet/submit.sh --wait) against the unsharded run of the same
# configuration, each into a fresh store, alternating, REPS times each.
# Prints every run and the medians. Needs root and the Slurm packages.
#
#   tests/fleet/measure.sh BUILD_DIR [N [REPS]] -- [calibrate flags]
#   e.g. tests/fleet/measure.sh build 2 3 -- --config config/calhost.ini --rigor quick
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: measure.sh BUILD_DIR [N [REPS]] -- [calibrate flags]}" && pwd)
shift
n=2 reps=3
[ $# -gt 0 ] && [ "$1" != "--" ] && n=$1 && shift
[ $# -gt 0 ] && [ "$1" != "--" ] && reps=$1 && shift
[ "${1:-}" = "--" ] && shift
calhost=$build/bin/calhost
. "$src/tests/fleet/slurm_cluster.sh"
missing=$(slurm_missing)
[ -z "$missing" ] || { echo "measure: missing $missing" >&2; exit 2; }

T=$(mktemp -d /tmp/calhost-fleet-measure-XXXXXX)
trap 'slurm_stop; rm -rf "$T"' EXIT
slurm_start "$T/slurm" || exit 1

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
"$calhost" plan --shards "$n" "$@" | tail -n 1
for ((r = 1; r <= reps; r++)); do
  t0=$(now)
  "$calhost" --quiet calibrate --store "$T/full-$r.txt" "$@" || echo "measure: unsharded run $r failed" >&2
  t1=$(now)
  "$src/config/fleet/submit.sh" --dir "$T/fleet-$r" --shards "$n" --calhost "$calhost" --wait -- "$@" \
    >/dev/null 2>&1 || echo "measure: sharded run $r failed" >&2
  t2=$(now)
  u=$(echo "$t1 - $t0" | bc) s=$(echo "$t2 - $t1" | bc)
  echo "run $r: unsharded ${u} s, $n shards via Slurm ${s} s (load $(cut -d' ' -f1 /proc/loadavg))"
  echo "$u" >>"$T/u" && echo "$s" >>"$T/s"
done
mu=$(median <"$T/u") ms=$(median <"$T/s")
printf 'median of %d: unsharded %.1f s, %d shards via Slurm (array + merge) %.1f s: speed-up %.2fx\n' \
  "$reps" "$mu" "$n" "$ms" "$(echo "$mu / $ms" | bc -l)"
