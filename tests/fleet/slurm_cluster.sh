# shellcheck shell=bash
# slurm_cluster.sh: starts and stops a real single-host Slurm cluster for
# the fleet tests (sourced by test_fleet_slurm.sh and measure.sh): munged
# with a generated key, slurmctld and two slurmd (node1, node2, both
# localhost), every file (configuration, state, spool, logs, munge socket)
# in one temporary directory, ports chosen free at run time. Debian 12
# slurm-wlm 22.05; needs root. Partitions: batch (both nodes, default), p1
# (node1), p2 (node2).
#
#   slurm_missing            prints what is missing to run a cluster here (nothing: ready)
#   slurm_start DIR          starts the cluster in DIR; exports SLURM_CONF; 0 when both nodes are idle
#   slurm_stop               stops every daemon slurm_start started (safe to call twice)

SLURM_T=

slurm_missing() {
  local m=()
  [ "$(id -u)" = 0 ] || m+=("root")
  for b in slurmctld slurmd munged mungekey sbatch squeue sinfo scontrol python3; do
    command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || m+=("$b")
  done
  echo "${m[*]}"
}

# Four free TCP ports on 127.0.0.1 (bound and released; another program may
# still take one meanwhile: slurm_start then fails and says so).
slurm_free_ports() {
  python3 - <<'EOF'
import socket
socks = []
for _ in range(4):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

slurm_start() {
  local T=$1 host p_ctl p_d p_n1 p_n2
  PATH=$PATH:/usr/sbin
  mkdir -p "$T"/{state,spool,log,munge} && chmod 700 "$T/munge" || return 1
  mungekey -c -k "$T/munge/munge.key" -b 1024 && chmod 600 "$T/munge/munge.key" || return 1
  munged --key-file="$T/munge/munge.key" --socket="$T/munge/munge.sock" \
    --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
    --seed-file="$T/munge/seed" -f || { echo "slurm_start: munged failed" >&2; return 1; }
  SLURM_T=$T
  host=$(hostname)
  read -r p_ctl p_d p_n1 p_n2 <<<"$(slurm_free_ports)"
  cat >"$T/slurm.conf" <<EOF
ClusterName=calhost
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$p_ctl
SlurmdPort=$p_d
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool/%n
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd-%n.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
DebugFlags=NO_CONF_HASH
MinJobAge=300
NodeName=node1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$p_n1 CPUs=$(nproc) State=UNKNOWN
NodeName=node2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$p_n2 CPUs=$(nproc) State=UNKNOWN
PartitionName=batch Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP
PartitionName=p1 Nodes=node1 MaxTime=INFINITE State=UP
PartitionName=p2 Nodes=node2 MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$T/slurm.conf
  slurmctld -f "$SLURM_CONF" || { echo "slurm_start: slurmctld failed" >&2; return 1; }
  slurmd -f "$SLURM_CONF" -N node1 || { echo "slurm_start: slurmd node1 failed" >&2; return 1; }
  slurmd -f "$SLURM_CONF" -N node2 || { echo "slurm_start: slurmd node2 failed" >&2; return 1; }
  local i states
  for ((i = 0; i < 120; i++)); do
    states=$(sinfo -h -N -p batch -o %T 2>/dev/null | sort -u | tr '\n' ' ')
    [ "$states" = "idle " ] && return 0
    sleep 0.5
  done
  echo "slurm_start: the nodes did not become idle within 60 s (states: ${states:-none})" >&2
  return 1
}

slurm_stop() {
  local T=${SLURM_T:-} f pid pids=()
  [ -n "$T" ] || return 0
  # the daemons this cluster started, from their pid files (read first:
  # a daemon removes its file when it exits)
  for f in "$T/slurmctld.pid" "$T"/slurmd-*.pid "$T/munge/munged.pid"; do
    [ -f "$f" ] && pid=$(cat "$f" 2>/dev/null) && [ -n "$pid" ] && pids+=("$pid")
  done
  if [ -f "$T/slurm.conf" ]; then
    # jobs still queued or running (a failed test): cancel them first, so
    # that no job step outlives the cluster
    local jobs i
    jobs=$(SLURM_CONF=$T/slurm.conf timeout 10 squeue -h -o %A 2>/dev/null)
    if [ -n "$jobs" ]; then
      SLURM_CONF=$T/slurm.conf timeout 10 scancel $jobs >/dev/null 2>&1
      for ((i = 0; i < 20; i++)); do
        [ -z "$(SLURM_CONF=$T/slurm.conf timeout 10 squeue -h -o %A 2>/dev/null)" ] && break
        sleep 0.5
      done
    fi
    SLURM_CONF=$T/slurm.conf timeout 10 scontrol shutdown >/dev/null 2>&1
  fi
  for pid in "${pids[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$pid" 2>/dev/null || break
      kill "$pid" 2>/dev/null
      sleep 0.3
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  done
  SLURM_T=
}
