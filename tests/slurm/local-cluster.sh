#!/usr/bin/env bash
# A single-node Slurm cluster on localhost for the tests, in a directory of its own: munged
# with its own key and socket, slurmctld and slurmd as root, no cgroups, ports of its own.
#   local-cluster.sh start DIR   writes DIR/slurm.conf, starts the three daemons and waits
#                                until the node is idle; prints the node's name
#   local-cluster.sh stop DIR    stops them
# Commands then find the cluster with SLURM_CONF=DIR/slurm.conf. HEALTH_CHECK_PROGRAM (and
# HEALTH_CHECK_INTERVAL, seconds) become slurm.conf's HealthCheckProgram and its interval.
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?a directory}

stop() {
  for p in slurmd slurmctld munged; do
    [[ -f $dir/$p.pid ]] && kill "$(cat "$dir/$p.pid")" 2>/dev/null || true
  done
  sleep 0.5
  for p in slurmd slurmctld munged; do
    [[ -f $dir/$p.pid ]] && kill -9 "$(cat "$dir/$p.pid")" 2>/dev/null || true
    rm -f "$dir/$p.pid"
  done
  # What the daemons started and the pid files do not name (a slurmd forked to launch a job's
  # step, the step itself) works in the cluster's directory: none of it outlives the cluster.
  local proc cwd
  for proc in /proc/[0-9]*; do
    cwd=$(readlink "$proc/cwd" 2>/dev/null) || continue
    [[ $cwd == "$dir" || $cwd == "$dir"/* ]] && kill -9 "${proc#/proc/}" 2>/dev/null
  done
  return 0
}

if [[ $cmd == stop ]]; then
  stop
  exit 0
fi

[[ $(id -u) -eq 0 ]] || { echo "local-cluster.sh: slurmd must run as root" >&2; exit 2; }
for b in munged mungekey slurmctld slurmd scontrol sinfo; do
  command -v "$b" >/dev/null || { echo "local-cluster.sh: $b is not installed (slurm-wlm, munge)" >&2; exit 2; }
done
node=$(hostname -s)
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 0700 "$dir/munge"
[[ -f $dir/munge/munge.key ]] || mungekey --create --keyfile="$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed"

# Ports away from the defaults (6817/6818), so that a real cluster on the machine is untouched.
port=$((20000 + RANDOM % 20000))
cpus=$(nproc)
cat > "$dir/slurm.conf" <<CONF
ClusterName=cudoctor-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
if [[ -n ${HEALTH_CHECK_PROGRAM:-} ]]; then
  printf 'HealthCheckProgram=%s\nHealthCheckInterval=%s\n' "$HEALTH_CHECK_PROGRAM" "${HEALTH_CHECK_INTERVAL:-300}" \
    >> "$dir/slurm.conf"
fi
export SLURM_CONF=$dir/slurm.conf
slurmctld -i
slurmd
for _ in $(seq 1 120); do
  state=$(sinfo -h -n "$node" -o %t 2>/dev/null || true)
  if [[ $state == idle || $state == drain || $state == drng ]]; then
    echo "$node"
    exit 0
  fi
  sleep 0.5
done
echo "local-cluster.sh: the node did not become idle (state '${state:-}'); logs in $dir" >&2
tail -5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
stop
exit 1
