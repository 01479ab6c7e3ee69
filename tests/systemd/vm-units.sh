#!/bin/bash
# vm-units.sh - guest script (tests/vm/run-vm --mode systemd): nictune's
# installed units under systemd as PID 1. Run by run-vm-units.sh, which
# installs the build tree with `cmake --install --prefix /usr` first.
#
# The daemon is still being written, so nictuned.service runs
# nictune_unit_probe ($NICTUNE_UNIT_PROBE) through a drop-in that changes only
# ExecStart= (and adds the probe to ExecPaths=): everything else is the
# installed unit's sandbox. The probe checks from inside that each permission
# the daemon needs works and each one the unit takes away is refused.
# Checks: files in place; verify and the security score under the real
# systemd; polkit sees the action; start (READY=1), the probe's own checks,
# D-Bus policy on the real system bus (root, nobody), reload (SIGHUP),
# restart after SIGKILL with /run/nictune preserved, watchdog, stop, D-Bus
# activation by an unprivileged caller.
# Exits non-zero naming each failed check; writes $HARNESS_OUT/units-vm.txt.
set -u

MODE=${HARNESS_MODE:-plain}
SUMMARY=${HARNESS_OUT:-/tmp}/units-vm.txt
PROBE=${NICTUNE_UNIT_PROBE:-}
MAX=${NICTUNE_SECURITY_MAX:-2.0}
IFACE=ntprobe0
UNIT=nictuned.service
DROPIN=/run/systemd/system/$UNIT.d
export SYSTEMD_PAGER=cat SYSTEMD_COLORS=0 TERM=dumb
FAILED=()

: >"$SUMMARY"
say() { echo "$*"; echo "$*" >>"$SUMMARY"; }
pass() { say "PASS: $*"; }
fail() { say "FAIL: $*"; FAILED+=("$1"); }

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
is_active() { [[ $(systemctl is-active "$UNIT") == "$1" ]]; }
prop() { systemctl show -P "$1" "$UNIT"; }
restarts_above() { (($(prop NRestarts) > $1)); }

[[ $MODE == systemd ]] || { echo "SKIP: needs --mode systemd"; exit 77; }
[[ -x $PROBE ]] || { fail "probe: NICTUNE_UNIT_PROBE='$PROBE' is not executable"; exit 1; }

# --- installed files ------------------------------------------------------------
frag=$(prop FragmentPath)
case $frag in
  /usr/lib/systemd/system/$UNIT | /lib/systemd/system/$UNIT) pass "unit installed at $frag" ;;
  *) fail "unit: FragmentPath '$frag'" ;;
esac
if grep -qx 'ExecStart=/usr/sbin/nictuned' "$frag" && [[ -x /usr/sbin/nictuned ]]; then
  pass "ExecStart=/usr/sbin/nictuned, installed"
else
  fail "ExecStart: $(grep '^ExecStart=' "$frag")"
fi
for f in /usr/share/dbus-1/system.d/org.nictune1.conf \
         /usr/share/dbus-1/system-services/org.nictune1.service \
         /usr/share/polkit-1/actions/org.nictune1.policy; do
  if [[ -f $f ]]; then pass "installed $f"; else fail "missing $f"; fi
done
out=$(systemd-analyze verify --man=no "$UNIT" 2>&1)
rc=$?
if ((rc == 0)) && ! grep -q "$UNIT" <<<"$out"; then
  pass "systemd-analyze verify $UNIT (the installed unit, real systemd)"
else
  fail "verify: exit $rc: $out"
fi
table=$(systemd-analyze security --no-pager "$UNIT" 2>&1)
overall=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$table")
if [[ -n $overall ]] && awk -v o="$overall" -v m="$MAX" 'BEGIN { exit !(o <= m) }'; then
  pass "systemd-analyze security (online, loaded unit): $overall"
else
  fail "security: '$overall', want <= $MAX"
  echo "$table"
fi
deps="$(prop Requires) $(prop After)"
if [[ $deps == *dbus.socket* ]]; then pass "BusName= pulls in dbus.socket"; else fail "dbus.socket: $deps"; fi
if systemctl enable "$UNIT" >/dev/null 2>&1 && [[ $(systemctl is-enabled "$UNIT") == enabled ]]; then
  pass "systemctl enable: WantedBy=multi-user.target works"
else
  fail "enable: $(systemctl is-enabled "$UNIT" 2>&1)"
fi
if command -v pkaction >/dev/null; then
  out=$(timeout 90 pkaction --verbose --action-id org.nictune1.apply 2>&1)
  if grep -q 'implicit active: *auth_admin_keep' <<<"$out" && grep -q 'implicit any: *no' <<<"$out"; then
    pass "polkit knows org.nictune1.apply (active: auth_admin_keep, any: no)"
  else
    fail "pkaction: $out"
  fi
else
  fail "pkaction not installed in the guest (run-vm --guest-packages polkitd)"
fi

# --- the sandbox, from inside -------------------------------------------------------
modprobe dummy 2>/dev/null
ip link del "$IFACE" 2>/dev/null
if ! ip link add name "$IFACE" type dummy; then
  fail "dummy interface $IFACE (needed by the probe)"
fi
mkdir -p "$DROPIN"
# A process of another user (dbus-daemon runs as messagebus): the probe says
# whether ProtectProc=invisible hides it (it does not for gid 0; see the unit).
other_pid=$(systemctl show -P MainPID dbus.service)
cat >"$DROPIN/probe.conf" <<EOF
[Service]
ExecStart=
ExecStart=$PROBE --checks --iface $IFACE --hidden-pid $other_pid --log /run/nictune/probe.log
ExecPaths=$PROBE
EOF
systemctl daemon-reload
rm -f /run/nictune/probe.log /tmp/nictune-probe
if timeout 120 systemctl start "$UNIT"; then
  pass "systemctl start: READY=1 received, $(prop ActiveState)/$(prop SubState)"
else
  fail "start: $(systemctl status --no-pager "$UNIT" 2>&1 | tail -n 20)"
fi
if [[ -f /run/nictune/probe.log ]]; then
  say "--- probe log (inside the sandbox) ---"
  sed 's/^/  /' /run/nictune/probe.log | tee -a "$SUMMARY"
  say "---"
  nfail=$(grep -c '^FAIL' /run/nictune/probe.log)
  npass=$(grep -c '^PASS' /run/nictune/probe.log)
  if ((nfail == 0 && npass > 20)); then
    pass "probe: $npass checks inside the sandbox passed"
  else
    fail "probe: $nfail of $((npass + nfail)) checks failed inside the sandbox"
  fi
else
  fail "probe: no /run/nictune/probe.log"
fi
if [[ ! -e /tmp/nictune-probe ]]; then pass "PrivateTmp: the probe's /tmp file is not in the host's /tmp"; else fail "PrivateTmp: /tmp/nictune-probe visible outside"; fi

# --- D-Bus policy on the real system bus ---------------------------------------------
# call EXPECT USER ARGS...: delivered (the probe answered) or denied (the bus refused).
call() {
  local expect=$1 user=$2 out rc
  shift 2
  local cmd=(busctl --timeout=30 call "$@")
  [[ $user == nobody ]] && cmd=(setpriv --reuid=65534 --regid=65534 --clear-groups "${cmd[@]}")
  out=$("${cmd[@]}" 2>&1)
  rc=$?
  case $expect in
    delivered) if ((rc == 0)); then pass "bus: $user ${*:3} -> delivered"; else fail "bus: $user ${*:3}: $out"; fi ;;
    denied) if ((rc != 0)) && grep -qiE 'denied|rejected' <<<"$out"; then pass "bus: $user ${*:3} -> refused"; else fail "bus: $user ${*:3}: want refused, got: $out"; fi ;;
  esac
}
M=(org.nictune1 /org/nictune1 org.nictune1.Manager)
call delivered root "${M[@]}" Apply
call delivered nobody "${M[@]}" Status
call delivered nobody "${M[@]}" Apply
call denied nobody "${M[@]}" Frobnicate
call denied nobody org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus RequestName su org.nictune1 4

# --- reload, restart, watchdog, stop, activation ----------------------------------------
if timeout 60 systemctl reload "$UNIT" && poll 10 grep -q '^reload 1' /run/nictune/probe.log && is_active active; then
  pass "systemctl reload: SIGHUP reached the daemon (ExecReload=+/bin/kill outside the sandbox)"
else
  fail "reload: $(tail -n 3 /run/nictune/probe.log)"
fi

pid=$(prop MainPID)
kill -KILL "$pid"
if poll 30 restarts_above 0 && poll 60 is_active active && [[ $(prop MainPID) != "$pid" ]]; then
  pass "Restart=on-failure: restarted after SIGKILL (NRestarts=$(prop NRestarts))"
else
  fail "restart: NRestarts=$(prop NRestarts) state=$(prop ActiveState)"
fi
if [[ -f /run/nictune/probe-state ]]; then
  pass "RuntimeDirectoryPreserve: /run/nictune kept across the restart"
else
  fail "restart: /run/nictune/probe-state lost"
fi

# Watchdog: a short WatchdogSec and a frozen daemon (SIGSTOP).
cat >"$DROPIN/watchdog.conf" <<'EOF'
[Service]
WatchdogSec=4s
TimeoutAbortSec=3s
EOF
systemctl daemon-reload
timeout 60 systemctl restart "$UNIT"
before=$(prop NRestarts)
pid=$(prop MainPID)
kill -STOP "$pid"
if poll 60 restarts_above "$before" && poll 60 is_active active; then
  pass "WatchdogSec: a frozen daemon is killed and restarted ($(journalctl -u "$UNIT" --no-pager -o cat | grep -ci 'watchdog timeout') watchdog timeout(s) logged)"
else
  fail "watchdog: NRestarts=$(prop NRestarts) state=$(prop ActiveState)"
fi
rm -f "$DROPIN/watchdog.conf"
systemctl daemon-reload

if timeout 60 systemctl stop "$UNIT" && is_active inactive && grep -q '^stopping' /run/nictune/probe.log; then
  pass "systemctl stop: STOPPING=1, clean exit ($(prop Result))"
else
  fail "stop: $(prop ActiveState) $(prop Result)"
fi
if [[ -d /run/nictune && -f /run/nictune/probe-state ]]; then
  pass "RuntimeDirectoryPreserve: /run/nictune kept after stop"
else
  fail "stop: /run/nictune removed"
fi

# D-Bus activation by an unprivileged caller.
if setpriv --reuid=65534 --regid=65534 --clear-groups \
     busctl --timeout=90 call org.nictune1 /org/nictune1 org.freedesktop.DBus.Peer Ping >/dev/null 2>&1 &&
   is_active active; then
  pass "D-Bus activation: nobody's Ping started $UNIT"
else
  fail "activation: $(prop ActiveState)"
fi
timeout 60 systemctl stop "$UNIT"

# For the record (the unit's comment): execve cannot be filtered, systemd
# needs it to start the daemon once the filter is in place.
cat >"$DROPIN/execve.conf" <<'EOF'
[Service]
SystemCallFilter=~execve
Restart=no
EOF
systemctl daemon-reload
if timeout 60 systemctl start "$UNIT" 2>/dev/null; then
  say "NOTE: with SystemCallFilter=~execve the unit starts ($(prop ActiveState))"
  systemctl stop "$UNIT"
else
  say "NOTE: with SystemCallFilter=~execve the unit fails to start: $(prop Result), status $(prop ExecMainStatus)"
fi
rm -f "$DROPIN/execve.conf"
systemctl daemon-reload
systemctl reset-failed "$UNIT" 2>/dev/null

ip link del "$IFACE" 2>/dev/null
if ((${#FAILED[@]})); then
  say "units-vm: ${#FAILED[@]} check(s) failed: ${FAILED[*]}"
  exit 1
fi
say "units-vm: all checks passed"
exit 0
