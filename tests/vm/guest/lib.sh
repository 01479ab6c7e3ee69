# shellcheck shell=bash
# lib.sh - sourced by the VM suite's guest scripts (suite-plain.sh,
# suite-systemd.sh). Runs in the guest, as root.
#
# A check is a shell function run by `run_check ID TITLE FUNCTION`. Inside it,
# `bad REASON` records a failure and carries on (so one run reports every
# broken assertion), `ok TEXT` notes what held. run_check writes
#   $HARNESS_OUT/results.txt   one line per check: "PASS ID: TITLE" or
#                              "FAIL ID: first reason (N reasons)"
#   $HARNESS_OUT/ID.log        everything the check printed, commands included
#   $HARNESS_OUT/ID.reasons    every failure reason, one a line
# The host side (tests/vm/suite/result.sh) turns each line into a CTest test.
# Every command that can hang is bounded (timeout); the VM itself is bounded
# by run-vm --timeout.

OUT=${HARNESS_OUT:-/tmp/nictune-vm-out}
MODE=${HARNESS_MODE:-plain}
GUEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AWK_ETHTOOL=$GUEST_DIR/ethtool2json.awk
export SYSTEMD_PAGER=cat SYSTEMD_COLORS=0 TERM=dumb NO_COLOR=1
RESULTS=$OUT/results.txt
CHECK=
FAILED_CHECKS=()

mkdir -p "$OUT"
# Files the scripts write (profiles, configuration) must not be writable by
# others: nictune refuses them as root.
umask 022

# --- reporting ----------------------------------------------------------------
ok() { echo "  ok: $*"; }
bad() {
  echo "  FAIL: $*"
  printf '%s\n' "$*" >>"$OUT/$CHECK.reasons"
}
note() { echo "  -- $*"; }
t_now() { local u _; read -r u _ </proc/uptime; echo "$u"; }

# run_check ID TITLE FUNCTION [ARGS...]
run_check() {
  local id=$1 title=$2 fn=$3
  shift 3
  CHECK=$id
  : >"$OUT/$id.reasons"
  local t0 t1 rc
  t0=$(t_now)
  echo "=== $id: $title (t=${t0}s)"
  # The details go to the log only: the serial console is slow under TCG,
  # and result.sh prints the log of the check it judges.
  {
    echo "=== $id: $title"
    "$fn" "$@"
  } >"$OUT/$id.log" 2>&1
  rc=$?
  t1=$(t_now)
  if ((rc != 0)) && [[ ! -s $OUT/$id.reasons ]]; then
    bad "the check stopped with status $rc"
  fi
  local n
  n=$(grep -c . "$OUT/$id.reasons")
  if ((n == 0)); then
    echo "PASS $id: $title" >>"$RESULTS"
    echo "=== PASS $id ($(awk -v a="$t1" -v b="$t0" 'BEGIN{printf "%.1f", a-b}')s)"
  else
    echo "FAIL $id: $(head -n 1 "$OUT/$id.reasons")$( ((n > 1)) && echo " (and $((n - 1)) more)")" >>"$RESULTS"
    echo "=== FAIL $id: $(head -n 1 "$OUT/$id.reasons")"
    FAILED_CHECKS+=("$id")
  fi
  CHECK=
}

# finish: the guest script's exit status (0: every check passed).
finish() {
  echo "=== results (t=$(t_now)s)"
  cat "$RESULTS"
  echo "DONE" >>"$RESULTS"
  if ((${#FAILED_CHECKS[@]})); then
    echo "FAILED: ${FAILED_CHECKS[*]}"
    return 1
  fi
  return 0
}

# --- running things -----------------------------------------------------------
# run CMD...: print the command and its output, return its status. Bounded.
RUN_OUT=
RUN_RC=0
run() {
  echo "  \$ $*"
  RUN_OUT=$(timeout -k 5 180 "$@" 2>&1)
  RUN_RC=$?
  [[ -n $RUN_OUT ]] && sed 's/^/    /' <<<"$RUN_OUT"
  echo "    [exit $RUN_RC]"
  return "$RUN_RC"
}

# run_split CMD...: like run, but stdout in RUN_OUT and stderr in RUN_ERR
# (for --json output that must parse).
RUN_ERR=
run_split() {
  echo "  \$ $*"
  local errf
  errf=$(mktemp)
  RUN_OUT=$(timeout -k 5 180 "$@" 2>"$errf")
  RUN_RC=$?
  RUN_ERR=$(<"$errf")
  rm -f "$errf"
  if [[ -n $RUN_OUT ]]; then
    if ((${#RUN_OUT} > 6000)); then
      head -c 6000 <<<"$RUN_OUT" | sed 's/^/    /'
      echo "    ... (${#RUN_OUT} bytes)"
    else
      sed 's/^/    /' <<<"$RUN_OUT"
    fi
  fi
  [[ -n $RUN_ERR ]] && sed 's/^/    stderr: /' <<<"$RUN_ERR"
  echo "    [exit $RUN_RC]"
  return "$RUN_RC"
}

# expect_rc WANT WHAT: the last run's status must be WANT.
expect_rc() {
  if [[ $RUN_RC == "$1" ]]; then ok "$2: exit $1"; else bad "$2: exit $RUN_RC, want $1"; fi
}

# expect_out PATTERN WHAT: the last run's output (stdout+stderr) must match
# the extended regex PATTERN.
expect_out() {
  if grep -Eq -- "$1" <<<"$RUN_OUT"$'\n'"$RUN_ERR"; then
    ok "$2"
  else
    bad "$2: output does not match /$1/"
  fi
}

# poll SECONDS CMD...: retry CMD every 0.5 s until it succeeds or time is up.
poll() {
  local deadline
  deadline=$(($(date +%s) + $1))
  shift
  while :; do
    "$@" >/dev/null 2>&1 && return 0
    (($(date +%s) >= deadline)) && return 1
    sleep 0.5
  done
}

# --- devices ------------------------------------------------------------------
# iface_by_driver DRIVER: the first interface bound to DRIVER (names differ
# between plain mode, eth0, and systemd mode, enp0s2).
iface_by_driver() {
  local dev drv
  for dev in /sys/class/net/*; do
    [[ -e $dev/device/driver ]] || continue
    drv=$(readlink -f "$dev/device/driver")
    if [[ ${drv##*/} == "$1" ]]; then
      echo "${dev##*/}"
      return 0
    fi
  done
  return 1
}

ifindex_of() { cat "/sys/class/net/$1/ifindex" 2>/dev/null; }
mtu_of() { cat "/sys/class/net/$1/mtu" 2>/dev/null; }

NSIM_ID=1
NSIM_SYS=/sys/bus/netdevsim/devices/netdevsim$NSIM_ID
NSIM_DBG=/sys/kernel/debug/netdevsim/netdevsim$NSIM_ID/ports/0/ethtool
nsim_netdev() {
  local d
  for d in "$NSIM_SYS"/net/*; do
    [[ -e $d ]] && { echo "${d##*/}"; return 0; }
  done
  return 1
}

# make_netdevsim: one device, one port, 4 queues; ring maxima raised to 8192
# through debugfs (a large-ring NIC like ixgbe's 8192/i40e's 8160). Prints
# the interface name.
make_netdevsim() {
  if [[ ! -d /sys/bus/netdevsim ]]; then
    timeout 30 modprobe netdevsim || { echo "netdevsim: module not loadable" >&2; return 1; }
  fi
  if [[ ! -d $NSIM_SYS ]]; then
    echo "$NSIM_ID 1 4" >/sys/bus/netdevsim/new_device ||
      { echo "netdevsim: new_device failed" >&2; return 1; }
  fi
  poll 20 nsim_netdev || { echo "netdevsim: no net device after 20 s" >&2; return 1; }
  [[ $MODE == systemd ]] && timeout 60 udevadm settle
  poll 30 test -d "$NSIM_DBG/ring" || { echo "netdevsim: $NSIM_DBG/ring missing" >&2; return 1; }
  local f
  for f in rx_max_pending rx_jumbo_max_pending rx_mini_max_pending tx_max_pending; do
    [[ -w $NSIM_DBG/ring/$f ]] && echo 8192 >"$NSIM_DBG/ring/$f"
  done
  nsim_netdev
}

# --- ethtool as an oracle -----------------------------------------------------
# eth_json KIND DEV: ethtool's view (-c/-g/-l/-a) as JSON keyed like audit.
eth_json() {
  local opt
  case $1 in
    coalesce) opt=-c ;; rings) opt=-g ;; channels) opt=-l ;; pause) opt=-a ;;
    *) return 2 ;;
  esac
  timeout 30 ethtool "$opt" "$2" | awk -v kind="$1" -f "$AWK_ETHTOOL"
}

# eth_value OPT DEV LABEL: one value from ethtool text, e.g.
# eth_value -c eth0 rx-usecs; for -g/-l the current (not maximum) value.
eth_value() {
  timeout 30 ethtool "$1" "$2" 2>/dev/null | awk -F':[ \t]*' -v k="$3" '
    /^Current hardware settings/ { cur = 1 }
    /^Pre-set maximums/ { cur = 0; max = 1 }
    $1 == k && (!max || cur) { print $2; exit }'
}

# snapshot DEV: everything ethtool and ip say about the settings nictune may
# touch (the "full ethtool output" compared before/after a rollback).
snapshot() {
  local d=$1
  {
    timeout 30 ethtool -c "$d"
    timeout 30 ethtool -g "$d"
    timeout 30 ethtool -l "$d"
    timeout 30 ethtool -a "$d"
    timeout 30 ethtool -k "$d" | grep -v '^Features for'
    echo "mtu $(mtu_of "$d") txqueuelen $(cat "/sys/class/net/$d/tx_queue_len")"
  } 2>&1
}

# same_snapshot WHAT BEFORE AFTER: the two snapshots must be identical.
same_snapshot() {
  if [[ "$2" == "$3" ]]; then
    ok "$1: ethtool -c/-g/-l/-a/-k and MTU identical"
  else
    bad "$1: settings differ: $(diff <(echo "$2") <(echo "$3") | grep '^[<>]' | tr '\n\t' '; ' | head -c 400)"
    diff <(echo "$2") <(echo "$3") | sed 's/^/    /'
  fi
}

# --- profiles -----------------------------------------------------------------
# write_profile DIR NAME: the profile text on stdin, root-owned, 0644 (nictune
# refuses files others could modify). Shell builtins only: each process
# costs ~0.3 s under TCG. DIR must exist (mode 0755).
write_profile() {
  local text
  IFS= read -r -d '' text
  printf '%s' "$text" >"$1/$2.toml"
}

# jq_check WHAT FILTER JSON...: FILTER (jq -r) prints one line per problem;
# none means the check holds.
jq_check() {
  local what=$1 filter=$2 json=$3
  shift 3
  local problems
  if ! problems=$(jq -r "$@" "$filter" <<<"$json" 2>&1); then
    bad "$what: jq failed: $problems"
    return 1
  fi
  if [[ -n $problems ]]; then
    bad "$what: $(tr '\n' ';' <<<"$problems" | head -c 400)"
    return 1
  fi
  ok "$what"
}
