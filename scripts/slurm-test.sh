#!/usr/bin/env bash
# A one-node Slurm cluster on localhost, for tests (tests/cluster.rs) and for
# trying the job scripts in contrib/slurm/ by hand. Needs root and the
# Debian packages slurm-wlm and munge; systemd is not needed.
#
#   scripts/slurm-test.sh start DIR        bring the cluster up, state in DIR
#   scripts/slurm-test.sh stop DIR         stop what `start DIR` started
#   scripts/slurm-test.sh run DIR CMD...   start, run CMD, stop (even when
#                                          CMD fails or is interrupted)
#
# Everything lives in DIR (created if needed, ideally empty): slurm.conf,
# a munge key and socket of its own, state, spool, logs and pid files. The
# system's munge and Slurm configuration are neither read nor changed.
# Clients find the cluster through SLURM_CONF=DIR/slurm.conf (`start`
# prints it; `run` exports it to CMD). The daemons listen on ports
# LULL_SLURM_PORT and LULL_SLURM_PORT+1 (default 16817, 16818: not Slurm's
# own, so a real Slurm on this machine is left alone).
#
# `start` returns once `sinfo` shows the node idle, or fails after 60 s
# (tearing down what it started and printing the daemons' logs). `stop`
# stops the daemons by their pid files only (munged, slurmctld, slurmd and
# any slurmstepd of a job still running), waits for them to exit and
# kills those that will not; it never looks processes up by name.
set -euo pipefail

usage() {
  sed -n '6,9p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

port=${LULL_SLURM_PORT:-16817}

# The pid of a pid file, if the file is there and names a live process.
pid_of() {
  local f=$1 pid
  [[ -s $f ]] || return 1
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# Stops the daemon of pid file $1 (TERM, then KILL after 20 s).
stop_one() {
  local f=$1 name=$2 pid i
  pid=$(pid_of "$f") || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 200; i++)); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$f"; return 0; }
    sleep 0.1
  done
  echo "slurm-test: $name (pid $pid) did not stop on TERM in 20 s; killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$f"
}

stop() {
  local dir=$1
  [[ -d $dir ]] || return 0
  dir=$(cd "$dir" && pwd)
  # Jobs first, so nothing the cluster ran outlives it: cancel them and
  # wait (up to 20 s) until the controller lists none.
  local i
  # (SLURM_CONF is never exported here: the sweep below must not match
  # this script's own children.)
  unset SLURM_CONF
  local conf=$dir/slurm.conf
  if [[ -f $conf ]] && pid_of "$dir/slurmctld.pid" >/dev/null; then
    SLURM_CONF=$conf scancel --quiet --user=root 2>/dev/null || true
    for ((i = 0; i < 200; i++)); do
      [[ -z $(SLURM_CONF=$conf squeue --noheader --format=%i 2>/dev/null) ]] && break
      sleep 0.1
    done
  fi
  # Each takes a second or two to exit: stop them at once.
  stop_one "$dir/slurmd.pid" slurmd &
  stop_one "$dir/slurmctld.pid" slurmctld &
  stop_one "$dir/munge/munged.pid" munged &
  wait
  # A job step (slurmstepd, and what it ran) has no pid file; it carries
  # this cluster's SLURM_CONF in its environment, as nothing else does.
  local p
  for p in /proc/[0-9]*; do
    [[ ${p#/proc/} != "$$" ]] || continue
    if tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "SLURM_CONF=$conf"; then
      echo "slurm-test: killing ${p#/proc/} ($(tr '\0' ' ' 2>/dev/null <"$p/cmdline")), left by a job" >&2
      kill -KILL "${p#/proc/}" 2>/dev/null || true
    fi
  done
}

start() {
  local dir=$1
  if ((EUID != 0)); then
    echo "slurm-test: needs root (slurmd runs jobs as their user)" >&2
    return 1
  fi
  local tool
  for tool in munged slurmctld slurmd sinfo sbatch scontrol; do
    if ! command -v "$tool" >/dev/null 2>&1 && [[ ! -x /usr/sbin/$tool ]]; then
      echo "slurm-test: $tool is missing (apt-get install slurm-wlm munge)" >&2
      return 1
    fi
  done
  export PATH=$PATH:/usr/sbin
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if pid_of "$dir/slurmctld.pid" >/dev/null || pid_of "$dir/munge/munged.pid" >/dev/null; then
    echo "slurm-test: a cluster already runs in $dir (stop it first)" >&2
    return 1
  fi
  # From here on, a failure tears down whatever was started.
  trap 'status=$?; if ((status)); then echo "slurm-test: start failed; logs:" >&2; tail -n 20 "$dir"/*.log "$dir"/munge/*.log >&2 2>/dev/null; stop "$dir"; fi' EXIT

  mkdir -p "$dir/state" "$dir/spool/slurmd" "$dir/munge"
  chmod 0711 "$dir/munge"
  # munged wants its key owned by the user it runs as (root here) and
  # unreadable by anyone else.
  head -c 1024 /dev/urandom >"$dir/munge/munge.key"
  chmod 0400 "$dir/munge/munge.key"
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed"

  local host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  # RealMemory below the machine's, or slurmd would drain the node.
  mem=$(awk '/^MemTotal:/ { print int($2 / 1024 / 2) }' /proc/meminfo)
  cat >"$dir/slurm.conf" <<EOF
# A one-node cluster written by scripts/slurm-test.sh.
ClusterName=lulltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
# No cgroup delegation in containers: track and bind tasks without cgroups.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Short intervals: a test waits on them.
SchedulerParameters=sched_interval=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  # The daemons carry SLURM_CONF in their environment, and so do the job
  # steps slurmd starts: `stop` finds what a job left by it.
  local conf=$dir/slurm.conf
  SLURM_CONF=$conf slurmctld -f "$conf"
  SLURM_CONF=$conf slurmd -f "$conf"

  local i state="" d
  for ((i = 0; i < 600; i++)); do
    state=$(SLURM_CONF=$conf sinfo --noheader --nodes="$host" --format=%T 2>/dev/null || true)
    [[ $state == idle ]] && break
    for d in slurmctld slurmd; do
      if [[ -s $dir/$d.pid ]] && ! pid_of "$dir/$d.pid" >/dev/null; then
        echo "slurm-test: $d exited (see $dir/$d.log)" >&2
        return 1
      fi
    done
    sleep 0.1
  done
  if [[ $state != idle ]]; then
    echo "slurm-test: node $host is ${state:-not reported} after 60 s, not idle" >&2
    return 1
  fi
  trap - EXIT
  echo "SLURM_CONF=$conf"
}

(($# >= 2)) || usage
cmd=$1 dir=$2
shift 2
case $cmd in
start) start "$dir" ;;
stop) stop "$dir" ;;
run)
  (($# >= 1)) || usage
  start "$dir" >/dev/null
  trap 'stop "$dir"' EXIT
  trap 'exit 130' INT TERM
  SLURM_CONF=$(cd "$dir" && pwd)/slurm.conf "$@"
  ;;
*) usage ;;
esac
