#!/bin/bash
# suite-systemd.sh - guest script of the VM suite, systemd mode: the project
# installed with `cmake --install --prefix /usr`, nictuned.service (and
# tuned.service) enabled, a binding for the e1000e NIC in nictune.toml.
#   tests/vm/run-vm --mode systemd --install-dir TREE --script tests/vm/guest/suite-systemd.sh
# TREE is made by tests/vm/suite/boot.sh (ctest: vm_boot_systemd), which also
# ships the profiles and the configuration below; each check is one CTest
# test (vm_<id>), judged from $HARNESS_OUT/results.txt.
#
# Environment (from boot.sh):
#   NICTUNE_VM_CONFIG   the configuration file the installed nictuned reads
#                       (its compiled-in NICTUNE_SYSCONFDIR/nictune.toml)
#
# Checks:
#   installed_paths     the installed daemon reads /etc/nictune/nictune.toml and the shipped profiles
#   boot_apply          the bound profile is applied at boot, nobody calling the CLI; active; status
#   driver_reload       rmmod/modprobe e1000e: driver defaults, then the daemon re-applies
#   drift_reported      ethtool -C behind the daemon's back: drift in status and the journal
#   drift_enforced      with enforce = true the drift is repaired
#   tuned               [tuned] profile = "latency-performance" through tuned's D-Bus API; rollback
#   unprivileged        nobody is refused Apply on the system bus (installed policy, polkit); Audit works
# Health checks (issue 14, guest/health.sh), audits through nictuned:
#   e1000e_root_bus_unknown  on q35's root bus the NIC has no link registers: pcie unknown, no finding
#   link_file_foreign        a .link file udev applied (trigger): the finding names the file:line,
#                            the key and both values
set -u
# shellcheck source=lib.sh
. "$(dirname "$(readlink -f "$0")")/lib.sh"
# shellcheck source=health.sh
. "$GUEST_DIR/health.sh"

CONFIG=${NICTUNE_VM_CONFIG:-/etc/nictune/nictune.toml}
NTC=/usr/bin/nictunectl
: >"$RESULTS"

ntc() { run "$NTC" --color never "$@"; }
ntc_json() { run_split "$NTC" --color never "$@"; }
# shellcheck disable=SC2034  # read by health.sh
NTC_AUDIT=("$NTC" --color never)
as_nobody() { run_split setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
journal() { timeout 60 journalctl -b --no-pager -o cat -u "$1" 2>&1; }
tuned_active() {
  timeout 60 busctl --system call com.redhat.tuned /Tuned com.redhat.tuned.control active_profile 2>&1 |
    sed -n 's/^s "\(.*\)"$/\1/p'
}

echo "suite-systemd: kernel $(uname -r), config $CONFIG"
state=$(timeout 240 systemctl is-system-running --wait 2>&1)
echo "systemd: is-system-running = $state"
[[ $state == running ]] || systemctl --failed --no-pager --no-legend 2>&1 | sed 's/^/  failed unit: /'
# Where the boot's time went (for the suite's timings; not a check).
{
  timeout 60 systemd-analyze time
  timeout 60 systemd-analyze blame | head -n 15
  timeout 60 systemd-analyze critical-chain nictune-vm-harness.service
} >"$OUT/boot-info.txt" 2>&1
E1K=$(iface_by_driver e1000e)
echo "e1000e: '${E1K:-}'"
need_e1k() { [[ -n $E1K ]] || { bad "no interface bound to e1000e in /sys/class/net"; return 1; }; }

# The profile bound at boot (shipped by boot.sh in the install tree) and its
# values on e1000e; the driver's defaults on qemu's 82574L.
BOOT_PROFILE=vm-boot
# shellcheck disable=SC2034  # read through namerefs (values_of)
declare -A WANT=([mtu]=9014 [rx_usecs]=1 [rx]=1024 [tx]=1024)
# shellcheck disable=SC2034
declare -A DEFAULTS=([mtu]=1500 [rx_usecs]=3 [rx]=256 [tx]=256)

# e1k_values DEV: "mtu=.. rx_usecs=.. rx=.. tx=.." as ethtool and sysfs say.
e1k_values() {
  echo "mtu=$(mtu_of "$1") rx_usecs=$(eth_value -c "$1" rx-usecs) rx=$(eth_value -g "$1" RX) tx=$(eth_value -g "$1" TX)"
}
values_of() {  # values_of ARRAYNAME
  local -n a=$1
  echo "mtu=${a[mtu]} rx_usecs=${a[rx_usecs]} rx=${a[rx]} tx=${a[tx]}"
}
e1k_is() {  # e1k_is DEV ARRAYNAME
  [[ $(e1k_values "$1") == "$(values_of "$2")" ]]
}

# status_json: nictunectl status --json over the system bus, into STATUS.
STATUS=
status_json() {
  STATUS=$(timeout 60 "$NTC" status --json 2>/dev/null) && jq -e . >/dev/null 2>&1 <<<"$STATUS"
}
status_has() {  # status_has JQ-CONDITION (on the entry for $E1K)
  status_json && jq -e --arg n "$E1K" "[.interfaces[] | select(.name == \$n) | select($1)] | length > 0" <<<"$STATUS" >/dev/null
}

write_config() {  # write_config ENFORCE: the binding of vm-boot to e1000e, to every file nictuned may read
  local f
  for f in /etc/nictune/nictune.toml "$CONFIG"; do
    install -d -m 0755 "$(dirname "$f")"
    printf '# VM suite: bind vm-boot to the e1000e NIC by driver\n[[bind]]\nprofile = "%s"\ndriver = "e1000e"\nenforce = %s\n' \
      "$BOOT_PROFILE" "$1" >"$f.tmp"
    chmod 0644 "$f.tmp"
    mv -f "$f.tmp" "$f"
  done
}

# --- checks ----------------------------------------------------------------------

check_boot_apply() {
  need_e1k || return
  # Nothing below ran nictunectl before this point: what we see is the daemon's work.
  local a
  a=$(timeout 30 systemctl is-active nictuned.service)
  [[ $a == active ]] && ok "systemctl is-active nictuned: active" || bad "systemctl is-active nictuned: '$a'"
  local now
  now=$(e1k_values "$E1K")
  if [[ $now == "$(values_of WANT)" ]]; then
    ok "after boot $E1K has the profile's values: $now (driver defaults: $(values_of DEFAULTS))"
  else
    bad "after boot $E1K has $now, want $(values_of WANT)"
  fi
  local j
  j=$(journal nictuned.service)
  sed 's/^/    journal: /' <<<"$j" | tail -n 20
  if grep -q "applied profile $BOOT_PROFILE (boot)" <<<"$j"; then
    ok "journal: applied profile $BOOT_PROFILE (boot)"
  else
    bad "journal has no 'applied profile $BOOT_PROFILE (boot)'"
  fi
  ntc status
  expect_rc 0 "nictunectl status over the system bus"
  expect_out "^  $E1K \\(ifindex [0-9]+\\): profile $BOOT_PROFILE, applied" \
    "status shows $E1K with profile $BOOT_PROFILE, applied"
  if status_has ".profile == \"$BOOT_PROFILE\" and .last_result == \"applied\" and (.drifted | length) == 0"; then
    ok "status --json: $E1K profile $BOOT_PROFILE, applied, no drift"
  else
    bad "status --json: no entry for $E1K with profile $BOOT_PROFILE applied: $STATUS"
  fi
}

check_installed_paths() {
  status_json || { bad "nictunectl status --json failed: $STATUS"; return; }
  local cfg
  cfg=$(jq -r .config <<<"$STATUS")
  if [[ $cfg == /etc/nictune/nictune.toml ]]; then
    ok "the installed nictuned reads /etc/nictune/nictune.toml"
  else
    bad "the daemon installed with --prefix /usr reads '$cfg', not /etc/nictune/nictune.toml (paths are compiled in at configure time: NICTUNE_SYSCONFDIR)"
  fi
  ntc_json profiles --json
  local shipped
  shipped=$(jq -r '.profiles[] | select(.name == "x520-lowlatency") | .path' <<<"$RUN_OUT" 2>/dev/null)
  if [[ $shipped == /usr/share/nictune/profiles/x520-lowlatency.toml ]]; then
    ok "nictuned finds the shipped profiles in /usr/share/nictune/profiles"
  else
    bad "nictuned does not list the shipped x520-lowlatency from /usr/share/nictune/profiles (installed: $(ls /usr/share/nictune/profiles 2>&1 | tr '\n' ' '); listed: $(jq -c '[.profiles[].path]' <<<"$RUN_OUT" 2>/dev/null))"
  fi
}

check_driver_reload() {
  need_e1k || return
  local old_idx new_idx dev
  old_idx=$(ifindex_of "$E1K")
  # Freeze the daemon so that the driver's defaults can be seen before it
  # re-applies; its netlink sockets queue the events meanwhile.
  run systemctl kill --signal=SIGSTOP nictuned.service
  run rmmod e1000e
  run timeout 60 modprobe e1000e
  dev=
  poll 60 iface_by_driver e1000e && timeout 60 udevadm settle
  dev=$(iface_by_driver e1000e)
  new_idx=$(ifindex_of "$dev")
  note "after the reload: $dev ifindex $new_idx (was $E1K ifindex $old_idx)"
  if [[ -n $dev && $new_idx != "$old_idx" ]]; then
    ok "e1000e came back as $dev with a new ifindex $new_idx"
  else
    bad "no new e1000e interface after modprobe (dev '$dev', ifindex '$new_idx')"
    run systemctl kill --signal=SIGCONT nictuned.service
    return
  fi
  local now
  now=$(e1k_values "$dev")
  [[ $now == "$(values_of DEFAULTS)" ]] && ok "driver defaults before the daemon acts: $now" ||
    bad "after the reload $dev has $now, want the driver defaults $(values_of DEFAULTS)"
  run systemctl kill --signal=SIGCONT nictuned.service
  if poll 90 e1k_is "$dev" WANT; then
    ok "the daemon re-applied $BOOT_PROFILE: $(e1k_values "$dev")"
  else
    bad "90 s after the reload $dev has $(e1k_values "$dev"), want $(values_of WANT)"
  fi
  local a
  a=$(timeout 30 systemctl is-active nictuned.service)
  [[ $a == active ]] && ok "nictuned still active" || bad "nictuned is '$a' after the driver reload"
  E1K=$dev
  if poll 30 status_has ".ifindex == $new_idx and .profile == \"$BOOT_PROFILE\" and .last_result == \"applied\""; then
    ok "status: $E1K ifindex $new_idx, $BOOT_PROFILE applied"
  else
    bad "status has no $E1K ifindex $new_idx with $BOOT_PROFILE applied: $STATUS"
  fi
  if journal nictuned.service | grep -q "applied profile $BOOT_PROFILE (hotplug)"; then
    ok "journal: applied profile $BOOT_PROFILE (hotplug)"
  else
    bad "journal has no 'applied profile $BOOT_PROFILE (hotplug)'"
    journal nictuned.service | tail -n 15 | sed 's/^/    journal: /'
  fi
}

check_drift_reported() {
  need_e1k || return
  run ethtool -C "$E1K" rx-usecs 50
  if poll 30 status_has '.drifted | index("coalesce.rx_usecs") != null'; then
    ok "status --json: coalesce.rx_usecs drifted"
  else
    bad "status --json does not report coalesce.rx_usecs drifted within 30 s: $STATUS"
  fi
  ntc status
  expect_out "^  $E1K .*DRIFTED:.*coalesce\\.rx_usecs" "status text: DRIFTED: coalesce.rx_usecs"
  if journal nictuned.service | grep -q 'coalesce.rx_usecs drifted: 50, expected 1'; then
    ok "journal: coalesce.rx_usecs drifted: 50, expected 1"
  else
    bad "journal has no 'coalesce.rx_usecs drifted: 50, expected 1'"
    journal nictuned.service | tail -n 10 | sed 's/^/    journal: /'
  fi
  sleep 3
  local u
  u=$(eth_value -c "$E1K" rx-usecs)
  [[ $u == 50 ]] && ok "without enforce the drift stays (rx-usecs 50)" ||
    bad "without enforce rx-usecs changed to $u"
}

check_drift_enforced() {
  need_e1k || return
  write_config true
  ntc reload
  expect_rc 0 "nictunectl reload (enforce = true)"
  poll 30 e1k_is "$E1K" WANT && ok "reload re-applied the profile: $(e1k_values "$E1K")" ||
    bad "after reload $E1K has $(e1k_values "$E1K")"
  if poll 30 status_has '.enforce == true'; then ok "status: enforced"; else bad "status does not say enforce: $STATUS"; fi
  run ethtool -C "$E1K" rx-usecs 50
  if poll 30 e1k_is "$E1K" WANT; then
    ok "ethtool -C rx-usecs 50 repaired: $(e1k_values "$E1K")"
  else
    bad "30 s after ethtool -C rx-usecs 50 $E1K has $(e1k_values "$E1K"), want $(values_of WANT)"
  fi
  run ip link set dev "$E1K" mtu 1500
  if poll 30 e1k_is "$E1K" WANT; then
    ok "ip link set mtu 1500 repaired: $(e1k_values "$E1K")"
  else
    bad "30 s after ip link set mtu 1500 $E1K has $(e1k_values "$E1K"), want $(values_of WANT)"
  fi
  local j
  j=$(journal nictuned.service)
  grep -q 'drifted: .*re-applying' <<<"$j" && ok "journal: drifted ...; re-applying" ||
    bad "journal has no 'drifted ...; re-applying'"
  grep -q "applied profile $BOOT_PROFILE (drift)" <<<"$j" && ok "journal: applied profile $BOOT_PROFILE (drift)" ||
    bad "journal has no 'applied profile $BOOT_PROFILE (drift)'"
  write_config false
  ntc reload
}

NSIM=
check_tuned() {
  # tuned is a guest package (tests/vm/suite/common.sh), never the host's.
  if ! systemctl cat tuned.service >/dev/null 2>&1; then
    bad "tuned is not installed in the guest (run-vm --guest-packages tuned; see vm_boot_systemd's output)"
    return
  fi
  local a
  poll 240 systemctl is-active --quiet tuned.service
  a=$(systemctl is-active tuned.service)
  [[ $a == active ]] || { bad "tuned.service is '$a' after 240 s"; journal tuned.service | tail -n 20; return; }
  ok "tuned.service active"
  local initial
  initial=$(tuned_active)
  note "tuned's active profile: '$initial'"
  if [[ -z $initial || $initial == latency-performance ]]; then
    run busctl --system call com.redhat.tuned /Tuned com.redhat.tuned.control switch_profile s balanced
    initial=$(tuned_active)
    note "switched tuned to '$initial' first"
  fi
  [[ -n $initial && $initial != latency-performance ]] || { bad "cannot get tuned off latency-performance: '$initial'"; return; }
  NSIM=$(make_netdevsim) || { bad "no netdevsim device"; return; }
  note "netdevsim: $NSIM"
  ntc apply vm-tuned "$NSIM"
  expect_rc 0 "nictunectl apply vm-tuned $NSIM (through nictuned)"
  local now
  now=$(tuned_active)
  [[ $now == latency-performance ]] && ok "tuned (D-Bus active_profile): latency-performance" ||
    bad "tuned's active profile is '$now' after apply, want latency-performance"
  run timeout 120 tuned-adm active
  expect_out 'Current active profile: latency-performance' "tuned-adm active: latency-performance"
  ntc rollback "$NSIM"
  expect_rc 0 "nictunectl rollback $NSIM"
  now=$(tuned_active)
  [[ $now == "$initial" ]] && ok "rollback switched tuned back to $initial" ||
    bad "tuned's active profile is '$now' after rollback, want '$initial'"
}

check_unprivileged() {
  [[ -n $NSIM ]] || NSIM=$(make_netdevsim) || { bad "no netdevsim device"; return; }
  # polkitd is a guest package (tests/vm/suite/common.sh): the refusal below
  # must be polkit's, on every host.
  if systemctl cat polkit.service >/dev/null 2>&1; then
    run timeout 120 systemctl start polkit.service
    [[ $(systemctl is-active polkit.service) == active ]] && ok "polkit running" || bad "polkit.service did not start"
  else
    bad "polkit is not installed in the guest (run-vm --guest-packages polkitd)"
  fi
  local before after tuned_before
  before=$(snapshot "$NSIM")
  tuned_before=$(tuned_active)
  as_nobody "$NTC" --color never apply vm-tuned "$NSIM"
  [[ $RUN_RC == 5 ]] && ok "nictunectl apply as nobody: exit 5" || bad "nictunectl apply as nobody: exit $RUN_RC, want 5"
  expect_out 'uid 65534 (is not authorized for org\.nictune1\.apply|may not change settings)' \
    "nictunectl apply as nobody: says uid 65534 is not authorized"
  expect_out 'polkit said no' "the refusal is polkit's answer"
  as_nobody "$NTC" --color never rollback "$E1K"
  [[ $RUN_RC != 0 ]] && ok "nictunectl rollback as nobody refused (exit $RUN_RC)" || bad "nictunectl rollback as nobody: exit 0"
  expect_out 'not authorized|may not change' "rollback as nobody: not authorized"
  # The bus delivers Apply (installed policy) and nictuned answers PermissionDenied.
  as_nobody busctl --system call org.nictune1 /org/nictune1 org.nictune1.Manager Apply 'sasa{sv}' vm-tuned 1 "$NSIM" 0
  [[ $RUN_RC != 0 ]] && ok "busctl Apply as nobody fails" || bad "busctl Apply as nobody succeeded"
  expect_out 'not authorized for org\.nictune1\.apply' "busctl Apply as nobody: refused by nictuned (the bus delivered it)"
  after=$(snapshot "$NSIM")
  same_snapshot "nothing changed on $NSIM" "$before" "$after"
  [[ $(tuned_active) == "$tuned_before" ]] && ok "tuned profile unchanged" ||
    bad "tuned's profile changed to $(tuned_active)"
  # Reading works for anyone.
  as_nobody "$NTC" --color never audit --json "$E1K"
  if [[ $RUN_RC == 0 || $RUN_RC == 1 ]] && jq -e --arg n "$E1K" '.interfaces[0].name == $n and .interfaces[0].driver == "e1000e"' >/dev/null 2>&1 <<<"$RUN_OUT"; then
    ok "nictunectl audit --json as nobody works (exit $RUN_RC)"
  else
    bad "nictunectl audit --json $E1K as nobody: exit $RUN_RC"
  fi
  as_nobody busctl --system call org.nictune1 /org/nictune1 org.nictune1.Manager Audit 'assa{sv}' 1 "$E1K" '' 0
  [[ $RUN_RC == 0 ]] && ok "busctl Audit as nobody over the system bus works" || bad "busctl Audit as nobody: exit $RUN_RC"
  as_nobody "$NTC" --color never status
  [[ $RUN_RC == 0 ]] && ok "nictunectl status as nobody works" || bad "nictunectl status as nobody: exit $RUN_RC"
}

run_check boot_apply "systemd: the bound profile is applied at boot without the CLI; nictuned active; status shows it" check_boot_apply
run_check installed_paths "systemd: nictuned installed with --prefix /usr reads /etc/nictune and the shipped profiles" check_installed_paths
run_check driver_reload "systemd: rmmod/modprobe e1000e brings driver defaults, the daemon re-applies" check_driver_reload
run_check drift_reported "systemd: ethtool -C behind the daemon's back is reported as drift" check_drift_reported
run_check drift_enforced "systemd: with enforce = true drift is repaired" check_drift_enforced
run_check tuned "systemd: [tuned] profile switches tuned over D-Bus, rollback switches back" check_tuned
run_check unprivileged "systemd: an unprivileged caller is refused Apply on the system bus; Audit works" check_unprivileged
run_check e1000e_root_bus_unknown "systemd health: an e1000e without link registers is unknown with its reason, never a finding" check_e1000e_root_bus_unknown
run_check link_file_foreign "systemd health: a .link file udev applied is named with its key and both values" check_link_file_foreign
finish
