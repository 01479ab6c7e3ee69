#!/bin/bash
# smoke.sh - guest script: proves the VM environment the VM suite relies on.
#   tests/vm/run-vm --mode plain   --script tests/vm/guest/smoke.sh
#   tests/vm/run-vm --mode systemd --script tests/vm/guest/smoke.sh
# Checks: a netdevsim device with 1 port and 4 queues; its ring maximum raised
# to 8192 through debugfs; an e1000e interface (driver from sysfs); ethtool -c
# on both; in systemd mode a running (or degraded) system and a system bus that
# answers. Exits non-zero, naming each failed check. Writes a summary to
# $HARNESS_OUT/smoke-$HARNESS_MODE.txt.
set -u

MODE=${HARNESS_MODE:-plain}
SUMMARY=${HARNESS_OUT:-/tmp}/smoke-$MODE.txt
FAILED=()

pass() { echo "PASS: $*"; echo "PASS: $*" >>"$SUMMARY"; }
fail() { echo "FAIL: $*"; echo "FAIL: $*" >>"$SUMMARY"; FAILED+=("$1"); }

# poll SECONDS CMD...: retry CMD every 0.2 s until it succeeds or time is up.
poll() {
  local tries=$(($1 * 5))
  shift
  while ((tries-- > 0)); do
    "$@" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

: >"$SUMMARY"
echo "smoke: kernel $(uname -r), mode $MODE, ethtool $(ethtool --version | awk '{print $3}')"

# --- netdevsim: one device, one port, four queues --------------------------
NSIM_ID=1
NSIM_SYS=/sys/bus/netdevsim/devices/netdevsim$NSIM_ID
NSIM_DBG=/sys/kernel/debug/netdevsim/netdevsim$NSIM_ID/ports/0/ethtool
# The port's net device (udev renames it in systemd mode, so read it late).
nsim_netdev() {
  local d
  for d in "$NSIM_SYS"/net/*; do
    [[ -e $d ]] && { echo "${d##*/}"; return 0; }
  done
  return 1
}

NSIM=
if [[ ! -d /sys/bus/netdevsim ]] && ! modprobe netdevsim; then
  fail "netdevsim: module not loadable"
elif ! echo "$NSIM_ID 1 4" >/sys/bus/netdevsim/new_device; then
  fail "netdevsim: writing '$NSIM_ID 1 4' to /sys/bus/netdevsim/new_device failed"
elif ! poll 10 nsim_netdev >/dev/null; then
  fail "netdevsim: no net device under $NSIM_SYS/net after 10 s"
else
  # Under systemd, udev gives the new port its predictable name; wait for it.
  [[ $MODE == systemd ]] && timeout 60 udevadm settle
  NSIM=$(nsim_netdev)
  rxqs=("/sys/class/net/$NSIM/queues/rx-"*)
  txqs=("/sys/class/net/$NSIM/queues/tx-"*)
  rxq=${#rxqs[@]} txq=${#txqs[@]}
  if [[ $rxq == 4 && $txq == 4 ]]; then
    pass "netdevsim: $NSIM with 4 rx and 4 tx queues"
  else
    fail "netdevsim: $NSIM has $rxq rx / $txq tx queues, want 4/4"
  fi
fi

# --- netdevsim: raise the ring maximum to 8192 through debugfs ---------------
if [[ -n $NSIM ]]; then
  # systemd mounts debugfs itself (sys-kernel-debug.mount); give it time.
  if ! poll 30 test -d "$NSIM_DBG/ring"; then
    fail "netdevsim-rings: $NSIM_DBG/ring missing (debugfs mounted: $(mountpoint /sys/kernel/debug 2>&1))"
  else
    for f in rx_max_pending rx_jumbo_max_pending rx_mini_max_pending tx_max_pending; do
      [[ -w $NSIM_DBG/ring/$f ]] && echo 8192 >"$NSIM_DBG/ring/$f"
    done
    rings=$(ethtool -g "$NSIM" 2>&1)
    rx_max=$(awk '/^Pre-set maximums:/ {m=1} m && /^RX:/ {print $2; exit}' <<<"$rings")
    if [[ $rx_max == 8192 ]] && ethtool -G "$NSIM" rx 8192 tx 8192 &&
       [[ $(ethtool -g "$NSIM" | awk '/^Current hardware settings:/ {c=1} c && /^RX:/ {print $2; exit}') == 8192 ]]; then
      pass "netdevsim-rings: RX max 8192 via debugfs, rx 8192 applied"
    else
      fail "netdevsim-rings: want RX max 8192 and rx 8192 settable; ethtool -g says:"$'\n'"$rings"
    fi
  fi
fi

# --- e1000e: the emulated Intel 82574L, found by driver ----------------------
E1000E=
for dev in /sys/class/net/*; do
  [[ -e $dev/device/driver ]] || continue
  if [[ $(basename "$(readlink -f "$dev/device/driver")") == e1000e ]]; then
    E1000E=${dev##*/}
    break
  fi
done
if [[ -n $E1000E ]]; then
  pass "e1000e: $E1000E is driven by e1000e ($(cat "/sys/class/net/$E1000E/device/vendor"):$(cat "/sys/class/net/$E1000E/device/device"))"
else
  all=(/sys/class/net/*)
  fail "e1000e: no interface with driver e1000e in /sys/class/net (${all[*]##*/})"
fi

# --- ethtool -c on both ------------------------------------------------------
for dev in $NSIM $E1000E; do
  if out=$(ethtool -c "$dev" 2>&1); then
    pass "coalesce: ethtool -c $dev ($(grep -E '^(Adaptive RX|rx-usecs):' <<<"$out" | tr -s ' \n' ' '))"
  else
    fail "coalesce: ethtool -c $dev failed: $out"
  fi
done

# --- systemd mode: a booted system and a system bus -------------------------
if [[ $MODE == systemd ]]; then
  state=$(timeout 120 systemctl is-system-running --wait 2>&1)
  case $state in
    running) pass "systemd: is-system-running = running" ;;
    degraded)
      pass "systemd: is-system-running = degraded"
      systemctl --failed --no-pager --no-legend | sed 's/^/  failed unit: /'
      ;;
    *) fail "systemd: is-system-running = '$state'" ;;
  esac
  if names=$(timeout 30 busctl list --no-pager 2>&1) && grep -q '^org\.freedesktop\.systemd1 ' <<<"$names"; then
    pass "dbus: busctl list answers ($(grep -c . <<<"$names") lines, org.freedesktop.systemd1 present)"
  else
    fail "dbus: busctl list failed: $names"
  fi
fi

if ((${#FAILED[@]})); then
  echo "smoke: FAILED: ${FAILED[*]}"
  exit 1
fi
echo "smoke: all checks passed"
exit 0
