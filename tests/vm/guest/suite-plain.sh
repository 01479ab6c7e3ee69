#!/bin/bash
# suite-plain.sh - guest script of the VM suite, plain mode (busybox init, no
# systemd, no daemon): nictunectl --direct against real drivers.
#   tests/vm/run-vm --mode plain --script tests/vm/guest/suite-plain.sh \
#       --env NICTUNECTL=/path/to/build/ctl/nictunectl
# Run by tests/vm/suite/boot.sh (ctest: vm_boot_plain); each check below is
# one CTest test (vm_<id>), judged from $HARNESS_OUT/results.txt.
#
# Checks (issue 5, "What the VM suite must prove"):
#   netdevsim_audit          audit --json = ethtool -c/-g/-l/-a (adaptive, ring maxima 8192, ...)
#   netdevsim_apply_rollback apply adaptive-rx/tx, rx-usecs, rings, channels; verify; rollback exact
#   netdevsim_rings_above_max  rings above max refused before any change (exit 2)
#   e1000e_audit_adaptive    adaptive absent (unsupported), rx_usecs explained as the adaptive mode
#   e1000e_translate_diff    adaptive_rx = true -> rx_usecs 1, and diff says so
#   e1000e_kernel_error      the kernel's error text for a rejected request reaches the user
#   e1000e_mtu               MTU 9014 applies, 9213 refused before any change (max 9212)
#   e1000e_private_flags     private_flags = ethtool --show-priv-flags; an unknown flag refused
#   netdevsim_driver_table   what netdevsim refuses (tx-push, pause autoneg, cqe modes) is refused
#                            before any change, like the kernel; nothing resets its link
#   e1000e_driver_table      rx-usecs 2 and tx-push refused like the driver; 7000 and rings 100
#                            predicted as the driver stores them (7142, 104): "adjusted"
#   e1000e_blocked_features  LRO (fixed) and TSO without scatter-gather (off [requested on])
#                            are "blocked", not failed, and nothing changes
#   mid_transaction_rollback an early step applied, a later one rejected -> all rolled back (exit 3)
# Health checks (issue 14, guest/health.sh):
#   e1000e_health_counters   health.counters = ethtool -S and ip -s (within a window); the driver
#                            table's e1000e counter names are the real driver's
#   e1000e_health_irqs       health.irqs = msi_irqs, /proc/interrupts, smp/effective_affinity_list;
#                            every vector pinned to CPU 1 -> health.irqs.one_cpu, spread -> none
#   e1000e_health_pcie       behind a root port (run-vm --nic-root-port): health.pcie = the
#                            function's and the slot's sysfs link files; x1 card, no finding
#   netdevsim_health_unknown no PCI function: pcie, irqs, numa unknown with reasons, no finding
# Placement (issue 17, guest/irq.sh):
#   e1000e_irq_affinity      [irq] policy = "local": queue vectors placed (smp/effective_affinity_list),
#                            irqbalance told over its socket, rollback exact
set -u
# shellcheck source=lib.sh
. "$(dirname "$(readlink -f "$0")")/lib.sh"
# shellcheck source=health.sh
. "$GUEST_DIR/health.sh"
# shellcheck source=irq.sh
. "$GUEST_DIR/irq.sh"

NTC=${NICTUNECTL:-nictunectl}
PDIR=/tmp/nictune-vm-profiles
# Audits that must show nictune's own knowledge (driver facts), not what a
# matching profile of ours would say.
NOPROFILES=/tmp/nictune-vm-no-profiles
STATE=/run/nictune-vm-state
: >"$RESULTS"
# Driver facts without the driver table for netdevsim and e1000e: nictune then
# takes what they report as settable and the driver's own refusal comes from
# the kernel (the checks of kernel errors and mid-transaction rollbacks).
FACTS=/tmp/nictune-vm-facts
install -d -m 0755 "$FACTS"
write_profile "$FACTS" no-table <<'EOF'
[netdevsim]
description = "netdevsim, settability unknown (VM suite)"
[e1000e]
description = "e1000e, settability unknown (VM suite)"
EOF
NO_TABLE="$FACTS/no-table.toml"

echo "suite-plain: kernel $(uname -r), $("$NTC" --version 2>&1), $(ethtool --version)"

# nictunectl with the local engine: our profiles, our state dir.
install -d -m 0755 "$NOPROFILES" "$PDIR"
ntc() { run "$NTC" --color never --direct --profiles-dir "$PDIR" --state-dir "$STATE" "$@"; }
ntc_json() { run_split "$NTC" --color never --direct --profiles-dir "$PDIR" --state-dir "$STATE" "$@"; }
# The health checks' audits: no profile of ours matches.
# shellcheck disable=SC2034  # read by health.sh
NTC_AUDIT=("$NTC" --color never --direct --profiles-dir "$NOPROFILES" --state-dir "$STATE")

# --- the devices -----------------------------------------------------------------
NSIM=$(make_netdevsim)
E1K=$(iface_by_driver e1000e)
echo "netdevsim: '${NSIM:-}', e1000e: '${E1K:-}'"
for d in $NSIM $E1K; do timeout 30 ip link set dev "$d" up; done

need_nsim() { [[ -n $NSIM ]] || { bad "no netdevsim interface (see the suite's console)"; return 1; }; }
need_e1k() { [[ -n $E1K ]] || { bad "no interface bound to e1000e in /sys/class/net"; return 1; }; }

# --- profiles --------------------------------------------------------------------
write_profile "$PDIR" vm-nsim-tune <<'EOF'
[profile]
description = "VM suite: adaptive coalescing, rx-usecs, large rings, fewer channels"
[match]
drivers = ["netdevsim"]
[coalesce]
adaptive_rx = true
adaptive_tx = true
rx_usecs = 8
[rings]
rx = "max"
tx = 2048
[channels]
combined = 2
EOF

write_profile "$PDIR" vm-nsim-rings-too-big <<'EOF'
[profile]
description = "VM suite: RX ring above the device's maximum (8192), plus changes that must not happen"
[match]
drivers = ["netdevsim"]
[channels]
combined = 1
[rings]
rx = 9000
tx = 1024
[coalesce]
rx_usecs = 77
EOF

# netdevsim rejects pause autonegotiation (nsim_set_pauseparam: EINVAL), after
# channels, rings and MTU have been applied (nictune's order: channels, rings,
# link, pause, features, coalescing).
write_profile "$PDIR" vm-nsim-fails-midway <<'EOF'
[profile]
description = "VM suite: early steps succeed, pause autoneg is rejected by the driver"
[match]
drivers = ["netdevsim"]
[channels]
combined = 1
[rings]
rx = 1024
tx = 1024
[link]
mtu = 4000
[pause]
autoneg = true
[coalesce]
rx_usecs = 99
EOF

write_profile "$PDIR" vm-e1k-no-such-flag <<'EOF'
[profile]
description = "VM suite: a private flag e1000e does not have, plus an MTU that must not change"
[link]
mtu = 9000
[private_flags]
no-such-flag = true
EOF

write_profile "$PDIR" vm-e1k-adaptive <<'EOF'
[profile]
description = "VM suite: adaptive RX coalescing, which e1000e expresses as rx-usecs 1"
[match]
drivers = ["e1000e"]
[coalesce]
adaptive_rx = true
EOF

# e1000e_set_coalesce returns EINVAL for rx-usecs 2 and 5..9; the MTU step
# before it succeeds and must be rolled back.
write_profile "$PDIR" vm-e1k-bad-usecs <<'EOF'
[profile]
description = "VM suite: an rx-usecs value e1000e's driver rejects"
[match]
drivers = ["e1000e"]
[link]
mtu = 9000
[coalesce]
rx_usecs = 2
EOF

# The kernel's own validation (ethnl_set_channels) with an extack message.
write_profile "$PDIR" vm-nsim-no-channels <<'EOF'
[profile]
description = "VM suite: zero combined channels, which the kernel refuses with an extack message"
[match]
drivers = ["netdevsim"]
[channels]
combined = 0
EOF

write_profile "$PDIR" vm-e1k-jumbo <<'EOF'
[profile]
description = "VM suite: jumbo MTU 9014"
[match]
drivers = ["e1000e"]
[link]
mtu = 9014
EOF

write_profile "$PDIR" vm-e1k-too-big <<'EOF'
[profile]
description = "VM suite: MTU 9213, above e1000e's 9212"
[match]
drivers = ["e1000e"]
[link]
mtu = 9213
[coalesce]
rx_usecs = 1
EOF

# What the driver table says netdevsim and e1000e refuse (with a change that
# must not happen first), and e1000e values it predicts.
write_profile "$PDIR" vm-nsim-tx-push <<'EOF'
[profile]
description = "VM suite: tx-push, which netdevsim reports and the kernel will not set on it"
[match]
drivers = ["netdevsim"]
[rings]
rx = 1024
tx_push = true
EOF

write_profile "$PDIR" vm-nsim-cqe <<'EOF'
[profile]
description = "VM suite: CQE mode, which netdevsim accepts and never stores"
[match]
drivers = ["netdevsim"]
[coalesce]
rx_usecs = 60
cqe_mode_rx = true
EOF

write_profile "$PDIR" vm-e1k-tx-push <<'EOF'
[profile]
description = "VM suite: tx-push on e1000e"
[match]
drivers = ["e1000e"]
[link]
mtu = 9000
[rings]
tx_push = true
EOF

write_profile "$PDIR" vm-e1k-rounded <<'EOF'
[profile]
description = "VM suite: values e1000e stores differently (7000 us -> 7142, ring 100 -> 104)"
[match]
drivers = ["e1000e"]
[coalesce]
rx_usecs = 7000
[rings]
rx = 100
EOF

write_profile "$PDIR" vm-e1k-blocked <<'EOF'
[profile]
description = "VM suite: LRO (fixed off on e1000e) and TSO (kept off without scatter-gather)"
[match]
drivers = ["e1000e"]
[features]
lro = true
tx-tcp-segmentation = true
EOF

# --- checks ----------------------------------------------------------------------

# compare_section JSON SECTION DEV: audit's SECTION equals ethtool's view;
# n/a in ethtool means the key is absent in audit.
compare_section() {
  local audit=$1 sec=$2 dev=$3 eth
  eth=$(eth_json "$sec" "$dev") || { bad "$sec: ethtool failed"; return; }
  note "ethtool $sec: $eth"
  note "audit $sec: $(jq -c --arg s "$sec" '.interfaces[0][$s]' <<<"$audit")"
  jq_check "$sec: audit --json matches ethtool" '
    .interfaces[0][$s] as $a
    | if $a == null then "audit has no \($s) section"
      else ($e | to_entries[] | .key as $k | .value as $v
        | if $v == null then
            (if ($a | has($k)) then "\($k): ethtool says n/a, audit says \($a[$k])" else empty end)
          elif ($a | has($k) | not) then "\($k): ethtool says \($v), audit has no such key"
          elif $a[$k] != $v then "\($k): ethtool says \($v), audit says \($a[$k])"
          else empty end)
      end' "$audit" --arg s "$sec" --argjson e "$eth"
}

check_netdevsim_audit() {
  need_nsim || return
  # Non-default values everywhere, so that matching defaults prove nothing.
  run ethtool -C "$NSIM" adaptive-rx on adaptive-tx off rx-usecs 37 tx-usecs 11 rx-frames 5
  run ethtool -G "$NSIM" rx 1024 tx 768
  run ethtool -L "$NSIM" combined 3
  run ethtool -A "$NSIM" rx on tx off
  run_split "$NTC" --color never --direct --profiles-dir "$NOPROFILES" audit --json "$NSIM"
  if [[ $RUN_RC != 0 && $RUN_RC != 1 ]]; then
    bad "audit --json $NSIM: exit $RUN_RC, want 0 or 1"
    return
  fi
  local audit=$RUN_OUT
  jq -e . <<<"$audit" >/dev/null || { bad "audit --json: not JSON"; return; }
  local sec
  for sec in coalesce rings channels pause; do
    compare_section "$audit" "$sec" "$NSIM"
  done
  jq_check "audit: adaptive_rx true, adaptive_tx false, rx_max 8192 (debugfs), combined 3 of 4" '
    .interfaces[0] as $i
    | (if $i.coalesce.adaptive_rx != true then "adaptive_rx \($i.coalesce.adaptive_rx)" else empty end),
      (if $i.coalesce.adaptive_tx != false then "adaptive_tx \($i.coalesce.adaptive_tx)" else empty end),
      (if $i.rings.rx_max != 8192 then "rings.rx_max \($i.rings.rx_max)" else empty end),
      (if $i.rings.rx != 1024 then "rings.rx \($i.rings.rx)" else empty end),
      (if $i.channels.combined != 3 or $i.channels.combined_max != 4 then "channels \($i.channels)" else empty end),
      (if $i.pause.rx != true or $i.pause.tx != false then "pause \($i.pause)" else empty end),
      (if $i.driver != "netdevsim" then "driver \($i.driver)" else empty end)' "$audit"
}

check_netdevsim_apply_rollback() {
  need_nsim || return
  # A known starting point, different from the profile in every key.
  run ethtool -C "$NSIM" adaptive-rx off adaptive-tx off rx-usecs 50 tx-usecs 20
  run ethtool -G "$NSIM" rx 512 tx 512
  run ethtool -L "$NSIM" combined 4
  local before after
  before=$(snapshot "$NSIM")
  ntc audit --profile vm-nsim-tune "$NSIM"
  expect_rc 1 "audit against the profile before apply reports the differences"
  ntc apply vm-nsim-tune "$NSIM"
  expect_rc 0 "apply vm-nsim-tune"
  expect_out 'applied and verified' "apply says applied and verified"
  local c
  c=$(eth_json coalesce "$NSIM")
  note "ethtool -c after apply: $c"
  jq_check "ethtool -c after apply: adaptive-rx on, adaptive-tx on, rx-usecs 8" '
    (if .adaptive_rx != true then "adaptive_rx \(.adaptive_rx)" else empty end),
    (if .adaptive_tx != true then "adaptive_tx \(.adaptive_tx)" else empty end),
    (if .rx_usecs != 8 then "rx_usecs \(.rx_usecs)" else empty end),
    (if .tx_usecs != 20 then "tx_usecs \(.tx_usecs) (not in the profile: must stay 20)" else empty end)' "$c"
  c=$(eth_json rings "$NSIM")
  jq_check "ethtool -g after apply: rx 8192 (\"max\"), tx 2048" '
    (if .rx != 8192 then "rx \(.rx)" else empty end), (if .tx != 2048 then "tx \(.tx)" else empty end)' "$c"
  c=$(eth_value -l "$NSIM" Combined)
  if [[ $c == 2 ]]; then ok "ethtool -l after apply: combined 2"; else bad "ethtool -l after apply: combined '$c', want 2"; fi
  ntc audit --profile vm-nsim-tune "$NSIM"
  expect_rc 0 "verify: audit against the profile after apply finds nothing wrong"
  ntc rollback "$NSIM"
  expect_rc 0 "rollback"
  after=$(snapshot "$NSIM")
  same_snapshot "rollback restores the settings before apply" "$before" "$after"
}

check_netdevsim_rings_above_max() {
  need_nsim || return
  local before after
  before=$(snapshot "$NSIM")
  ntc apply vm-nsim-rings-too-big "$NSIM"
  expect_rc 2 "apply with rings.rx 9000 > max 8192 is refused"
  expect_out 'rings\.rx' "the refusal names rings.rx"
  expect_out '8192' "the refusal gives the maximum 8192"
  expect_out 'nothing (was|will be) changed|nothing changed' "the output says nothing was changed"
  after=$(snapshot "$NSIM")
  same_snapshot "nothing changed (channels, tx ring, rx-usecs of the same profile included)" "$before" "$after"
  ntc diff vm-nsim-rings-too-big "$NSIM"
  expect_rc 2 "diff of the same profile: exit 2"
  expect_out 'REFUSED' "diff marks the step REFUSED"
}

check_e1000e_audit_adaptive() {
  need_e1k || return
  local state
  for state in default 1; do
    if [[ $state == 1 ]]; then
      run ethtool -C "$E1K" rx-usecs 1
    fi
    local usecs
    usecs=$(eth_value -c "$E1K" rx-usecs)
    note "e1000e rx-usecs is $usecs ($state)"
    run ethtool -c "$E1K"
    expect_out 'Adaptive RX: n/a +TX: n/a' "ethtool -c: e1000e has no adaptive-rx/tx"
    # No profile of ours may match: the explanation must come from nictune's driver facts.
    run_split "$NTC" --color never --direct --profiles-dir "$NOPROFILES" audit --json "$E1K"
    [[ $RUN_RC == 0 || $RUN_RC == 1 ]] || { bad "audit --json $E1K: exit $RUN_RC"; continue; }
    local audit=$RUN_OUT
    jq_check "rx-usecs $usecs: adaptive_rx/adaptive_tx absent, rx_usecs = $usecs" '
      .interfaces[0] as $i
      | (if $i.driver != "e1000e" then "driver \($i.driver)" else empty end),
        (if ($i.coalesce | has("adaptive_rx")) then "adaptive_rx present: \($i.coalesce.adaptive_rx)" else empty end),
        (if ($i.coalesce | has("adaptive_tx")) then "adaptive_tx present: \($i.coalesce.adaptive_tx)" else empty end),
        (if $i.coalesce.rx_usecs != ($u | tonumber) then "rx_usecs \($i.coalesce.rx_usecs), ethtool \($u)" else empty end)' \
      "$audit" --arg u "$usecs"
    note "profile audit compared against: $(jq -c '.interfaces[0].profile' <<<"$audit")"
    compare_section "$audit" coalesce "$E1K"
    note "findings: $(jq -c '[.interfaces[0].findings[] | select(.key | startswith("coalesce"))]' <<<"$audit")"
    jq_check "rx-usecs $usecs: a finding on coalesce.rx_usecs explains it as e1000e's adaptive (dynamic) mode" '
      [.interfaces[0].findings[] | select(.key == "coalesce.rx_usecs")
        | select((.message + " " + (.fix // "")) | test("adaptive|dynamic"; "i"))]
      | if length == 0 then "no finding on coalesce.rx_usecs explains rx-usecs \($u) (e1000e: 1 = dynamic, 3 = dynamic conservative, 4 = simplified dynamic)" else empty end' \
      "$audit" --arg u "$usecs"
  done
  run ethtool -C "$E1K" rx-usecs 3
}

check_e1000e_translate_diff() {
  need_e1k || return
  run ethtool -C "$E1K" rx-usecs 3
  ntc diff vm-e1k-adaptive "$E1K"
  expect_rc 0 "diff vm-e1k-adaptive"
  expect_out 'coalesce\.rx_usecs +3 -> 1' "diff: coalesce.rx_usecs 3 -> 1"
  expect_out 'from coalesce\.adaptive_rx = true' "diff says the step comes from adaptive_rx = true"
  ntc_json diff --json vm-e1k-adaptive "$E1K"
  jq_check "diff --json: one change, rx_usecs 1, translated from adaptive_rx" '
    [.interfaces[0].steps[] | select(.kind == "change")] as $c
    | if ($c | length) != 1 then "changes: \($c | map(.key))"
      else $c[0] | (if .key != "coalesce.rx_usecs" then "key \(.key)" else empty end),
                   (if (.target | tostring) != "1" then "target \(.target)" else empty end),
                   (if .resolution != "translated" then "resolution \(.resolution)" else empty end),
                   (if (.requested | test("adaptive_rx")) | not then "requested \(.requested)" else empty end)
      end' "$RUN_OUT"
  [[ $(eth_value -c "$E1K" rx-usecs) == 3 ]] && ok "diff changed nothing (rx-usecs still 3)" ||
    bad "diff changed rx-usecs to $(eth_value -c "$E1K" rx-usecs)"
  ntc apply vm-e1k-adaptive "$E1K"
  expect_rc 0 "apply vm-e1k-adaptive"
  local u
  u=$(eth_value -c "$E1K" rx-usecs)
  [[ $u == 1 ]] && ok "ethtool -c after apply: rx-usecs 1" || bad "ethtool -c after apply: rx-usecs $u, want 1"
  ntc rollback "$E1K"
  expect_rc 0 "rollback"
  u=$(eth_value -c "$E1K" rx-usecs)
  [[ $u == 3 ]] && ok "rollback: rx-usecs 3 again" || bad "rollback: rx-usecs $u, want 3"
}

check_e1000e_kernel_error() {
  need_e1k || return
  local before after
  before=$(snapshot "$E1K")
  # The driver's own rejection: e1000e_set_coalesce -> -EINVAL, no extack.
  # Without the driver table (which refuses rx-usecs 2 in the plan, see
  # e1000e_driver_table) the request reaches the driver.
  ntc --facts "$NO_TABLE" apply vm-e1k-bad-usecs "$E1K"
  expect_rc 3 "apply rx_usecs 2 on e1000e: a step failed, everything rolled back"
  expect_out 'driver table does not cover e1000e' "the plan says e1000e's settability is unknown"
  expect_out 'coalesce\.rx_usecs.*Invalid argument|Invalid argument.*coalesce\.rx_usecs' \
    "the user sees the kernel's error (EINVAL, 'Invalid argument') on coalesce.rx_usecs"
  after=$(snapshot "$E1K")
  same_snapshot "e1000e after the failed apply (MTU 9000 rolled back)" "$before" "$after"
  # The kernel's validation with an extack message (ethnl_set_channels).
  need_nsim || return
  before=$(snapshot "$NSIM")
  ntc_json apply --json vm-nsim-no-channels "$NSIM"
  local km
  km=$(jq -r '[.. | objects | select(has("kernel_message")) | .kernel_message | strings] | first // ""' <<<"$RUN_OUT" 2>/dev/null)
  if [[ -n $km ]]; then
    ok "apply --json carries the kernel's extack text: '$km'"
    ntc apply vm-nsim-no-channels "$NSIM"
    expect_rc 3 "apply combined 0 on netdevsim: refused by the kernel, rolled back"
    if grep -qF -- "$km" <<<"$RUN_OUT"; then
      ok "text output shows the kernel's message"
    else
      bad "text output does not show the kernel's message '$km'"
    fi
  else
    bad "apply combined 0 on netdevsim (exit $RUN_RC): no kernel_message in the JSON result (the kernel says 'requested channel counts would result in no RX or TX channel being configured')"
  fi
  after=$(snapshot "$NSIM")
  same_snapshot "netdevsim after the refused channel change" "$before" "$after"
}

check_e1000e_mtu() {
  need_e1k || return
  run ip -d link show dev "$E1K"
  expect_out 'maxmtu 9212' "ip -d link: e1000e's maxmtu is 9212"
  ntc apply vm-e1k-jumbo "$E1K"
  expect_rc 0 "apply MTU 9014"
  local m
  m=$(mtu_of "$E1K")
  [[ $m == 9014 ]] && ok "MTU is 9014" || bad "MTU is $m after applying 9014"
  ntc rollback "$E1K"
  expect_rc 0 "rollback"
  m=$(mtu_of "$E1K")
  [[ $m == 1500 ]] && ok "rollback: MTU 1500" || bad "rollback: MTU $m, want 1500"
  local before after
  before=$(snapshot "$E1K")
  ntc apply vm-e1k-too-big "$E1K"
  expect_rc 2 "apply MTU 9213 is refused"
  expect_out '9212' "the refusal gives the maximum 9212"
  after=$(snapshot "$E1K")
  same_snapshot "nothing changed (rx-usecs 1 of the same profile included)" "$before" "$after"
}

# [private_flags] on the one driver here that has one: e1000e lists
# s0ix-enabled (ethtool --show-priv-flags is the oracle). A name it does not
# list is refused before anything changes, naming the driver's flags; setting
# s0ix-enabled, which e1000e refuses on this MAC type (EINVAL), fails and
# rolls back.
check_e1000e_private_flags() {
  need_e1k || return
  run ethtool --show-priv-flags "$E1K"
  local want
  want=$(awk -F: '/^s0ix-enabled/ { gsub(/ /, "", $2); print ($2 == "on") ? "true" : "false" }' <<<"$RUN_OUT")
  [[ -n $want ]] || { bad "ethtool --show-priv-flags lists no s0ix-enabled: $RUN_OUT"; return; }
  ntc_json audit --json "$E1K"
  local got
  got=$(jq -r --arg n "$E1K" '.interfaces[] | select(.name == $n) | .private_flags["s0ix-enabled"]' <<<"$RUN_OUT" 2>&1)
  [[ $got == "$want" ]] && ok "audit: private_flags.s0ix-enabled = $got, as ethtool says" \
    || bad "audit: private_flags.s0ix-enabled = '$got', ethtool says $want"
  local before after
  before=$(snapshot "$E1K")
  ntc apply vm-e1k-no-such-flag "$E1K"
  expect_rc 2 "apply of an unknown private flag is refused"
  expect_out "vm-e1k-no-such-flag.toml:6:1: e1000e has no private flag 'no-such-flag' \\(its flags: s0ix-enabled\\)" \
    "the refusal names file:line:column, the driver and its flags"
  after=$(snapshot "$E1K")
  same_snapshot "nothing changed (the MTU 9000 of the same profile included)" "$before" "$after"
  local flip=true
  [[ $want == true ]] && flip=false
  printf '[link]\nmtu = 9000\n[private_flags]\ns0ix-enabled = %s\n' "$flip" | write_profile "$PDIR" vm-e1k-s0ix
  ntc apply vm-e1k-s0ix "$E1K"
  if [[ $RUN_RC == 0 ]]; then
    run ethtool --show-priv-flags "$E1K"
    expect_out "s0ix-enabled *: *$([[ $flip == true ]] && echo on || echo off)" "s0ix-enabled set"
    ntc rollback "$E1K"
    expect_rc 0 "rollback"
  else
    expect_rc 3 "e1000e refuses s0ix-enabled here: the step failed, everything rolled back"
    expect_out 'private_flags\.s0ix-enabled' "the failure names private_flags.s0ix-enabled"
  fi
  after=$(snapshot "$E1K")
  same_snapshot "e1000e as before" "$before" "$after"
  run ethtool --show-priv-flags "$E1K"
  expect_out "s0ix-enabled *: *$([[ $want == true ]] && echo on || echo off)" "s0ix-enabled as before"
}

check_mid_transaction_rollback() {
  need_nsim || return
  run ethtool -L "$NSIM" combined 4
  run ethtool -G "$NSIM" rx 512 tx 512
  run ethtool -C "$NSIM" rx-usecs 50
  run ethtool -A "$NSIM" autoneg off rx off tx off
  local before after
  before=$(snapshot "$NSIM")
  # Without the driver table, which refuses pause autoneg on netdevsim in the
  # plan (netdevsim_driver_table).
  ntc_json --facts "$NO_TABLE" apply --json vm-nsim-fails-midway "$NSIM"
  expect_rc 3 "apply: pause autoneg rejected by netdevsim after channels, rings and MTU were applied"
  # The early steps were applied: the rollback restored them. (Their step
  # outcome reads "not_reached" after a rollback, see the report's notes.)
  jq_check "apply --json: channels, rings, MTU applied then restored; pause.autoneg failed (EINVAL); coalescing not applied" '
    (if .result != "rolled_back" then "result \(.result)" else empty end),
    ([.rollback[] | select(.ok == true) | .key]) as $restored
    | ((["channels.combined", "rings.rx", "rings.tx", "link.mtu"][]
        | select(. as $k | $restored | index($k) | not)
        | "\(.) was not applied and restored (rollback: \($restored))")),
    (.rollback[] | select(.ok != true) | "not restored: \(.key) \(.message)"),
    (.interfaces[0].steps as $s
      | (if ([$s[] | select(.outcome == "failed") | .key] != ["pause.autoneg"])
           then "failed steps: \([$s[] | select(.outcome == "failed") | .key]), want [pause.autoneg]" else empty end),
        (if ([$s[] | select(.key == "pause.autoneg") | .error.errno] | first) != 22
           then "pause.autoneg error: \([$s[] | select(.key == "pause.autoneg") | .error] | first)" else empty end),
        (if ([$s[] | select(.key == "coalesce.rx_usecs") | .outcome] | first) != "not_reached"
           then "coalesce.rx_usecs (after the failure): \([$s[] | select(.key == "coalesce.rx_usecs") | .outcome] | first)" else empty end),
        (if ($restored | index("coalesce.rx_usecs")) != null then "coalesce.rx_usecs was written after the failure" else empty end)),
    (if (.left | length) != 0 then "left changed: \(.left)" else empty end)' "$RUN_OUT"
  after=$(snapshot "$NSIM")
  same_snapshot "everything rolled back (ethtool -c/-g/-l/-a, ip MTU)" "$before" "$after"
  ntc --facts "$NO_TABLE" apply vm-nsim-fails-midway "$NSIM"
  expect_rc 3 "the same apply, text output: exit 3"
  expect_out 'rolled back' "text output says rolled back"
  after=$(snapshot "$NSIM")
  same_snapshot "rolled back again" "$before" "$after"
}

# refused_untouched PROFILE DEV WHAT PATTERN: apply is refused in the plan
# (exit 2), the refusal matches PATTERN, and DEV reads back as before.
refused_untouched() {
  local profile=$1 dev=$2 what=$3 pattern=$4 before after
  before=$(snapshot "$dev")
  ntc apply "$profile" "$dev"
  expect_rc 2 "apply $profile: $what is refused before any change"
  expect_out "$pattern" "the refusal says why: /$pattern/"
  after=$(snapshot "$dev")
  same_snapshot "nothing changed ($profile's other keys included)" "$before" "$after"
}

check_netdevsim_driver_table() {
  need_nsim || return
  local before after
  before=$(snapshot "$NSIM")
  # The oracles: what the kernel and netdevsim do with each request.
  run ethtool -G "$NSIM" tx-push on
  expect_out 'tx push not supported' "ethtool -G tx-push on: the kernel refuses it (no supported_ring_params)"
  run ethtool -A "$NSIM" autoneg on
  ((RUN_RC != 0)) && ok "ethtool -A autoneg on: netdevsim refuses it" || bad "ethtool -A autoneg on was accepted"
  run ethtool -C "$NSIM" cqe-mode-rx on
  run ethtool -c "$NSIM"
  expect_out 'CQE mode RX: +off' "ethtool -C cqe-mode-rx on changes nothing: nsim_set_coalesce does not keep it"
  after=$(snapshot "$NSIM")
  same_snapshot "the oracles changed nothing" "$before" "$after"
  refused_untouched vm-nsim-tx-push "$NSIM" "rings.tx_push" \
    'netdevsim accepts only rx, rx_mini, rx_jumbo, tx in \[rings\] \(drivers/net/netdevsim/ethtool\.c'
  refused_untouched vm-nsim-fails-midway "$NSIM" "pause.autoneg" \
    'netdevsim accepts pause\.autoneg 0 \(drivers/net/netdevsim/ethtool\.c nsim_set_pauseparam'
  refused_untouched vm-nsim-cqe "$NSIM" "coalesce.cqe_mode_rx" \
    'coalesce\.cqe_mode_rx = true: netdevsim accepts only .* in \[coalesce\]'
  # netdevsim only stores values: no ring or channel change resets its link.
  ntc_json diff --json vm-nsim-tune "$NSIM"
  jq_check "diff --json vm-nsim-tune: changes, none of them resets the link" '
    [.interfaces[0].steps[] | select(.kind == "change")] as $c
    | (if ($c | length) == 0 then "no changes planned" else empty end),
      ($c[] | select(.resets_link) | "\(.key) resets the link")' "$RUN_OUT"
}

check_e1000e_driver_table() {
  need_e1k || return
  run ethtool -C "$E1K" rx-usecs 3
  run ethtool -G "$E1K" rx 256 tx 256
  local before after v
  before=$(snapshot "$E1K")
  run ethtool -C "$E1K" rx-usecs 2
  ((RUN_RC != 0)) && ok "ethtool -C rx-usecs 2: e1000e refuses it" || bad "ethtool -C rx-usecs 2 was accepted"
  run ethtool -G "$E1K" tx-push on
  expect_out 'tx push not supported' "ethtool -G tx-push on: the kernel refuses it on e1000e"
  refused_untouched vm-e1k-bad-usecs "$E1K" "rx_usecs 2" \
    'e1000e accepts coalesce\.rx_usecs 0, 1, 3, 4 or 10\.\.10000 .*drivers/net/ethernet/intel/e1000e/ethtool\.c e1000_set_coalesce'
  refused_untouched vm-e1k-tx-push "$E1K" "rings.tx_push" 'e1000e accepts only rx, tx in \[rings\]'
  # Values the driver stores differently: predicted, applied, "adjusted".
  ntc diff vm-e1k-rounded "$E1K"
  expect_rc 0 "diff vm-e1k-rounded"
  expect_out 'coalesce\.rx_usecs +3 -> 7142' "diff predicts rx-usecs 7000 as 7142 (1000000/(1000000/7000 & ~3))"
  expect_out 'rings\.rx +256 -> 104 +resets link' "diff predicts ring 100 as 104 and says the ring change resets the link"
  ntc_json apply --json vm-e1k-rounded "$E1K"
  expect_rc 0 "apply vm-e1k-rounded"
  jq_check "apply --json: both steps adjusted, as predicted" '
    (if .result != "applied" then "result \(.result)" else empty end),
    (.interfaces[0].steps[] | select(.key == "coalesce.rx_usecs" or .key == "rings.rx")
      | if .outcome != "adjusted" then "\(.key): outcome \(.outcome)" else empty end)' "$RUN_OUT"
  v=$(eth_value -c "$E1K" rx-usecs)
  [[ $v == 7142 ]] && ok "ethtool -c: rx-usecs 7142" || bad "ethtool -c: rx-usecs $v, want 7142"
  v=$(eth_value -g "$E1K" RX)
  [[ $v == 104 ]] && ok "ethtool -g: RX 104" || bad "ethtool -g: RX $v, want 104"
  ntc rollback "$E1K"
  expect_rc 0 "rollback"
  after=$(snapshot "$E1K")
  same_snapshot "rollback restores rx-usecs 3 and ring 256" "$before" "$after"
}

check_e1000e_blocked_features() {
  need_e1k || return
  run ethtool -K "$E1K" sg off
  run ethtool -k "$E1K"
  expect_out 'large-receive-offload: off \[fixed\]' "ethtool -k: LRO is fixed off on e1000e"
  expect_out 'tx-tcp-segmentation: off \[requested on\]' "ethtool -k: TSO is off [requested on] without scatter-gather"
  local before after
  before=$(snapshot "$E1K")
  ntc diff vm-e1k-blocked "$E1K"
  expect_rc 0 "diff vm-e1k-blocked: nothing refused"
  expect_out 'features\.rx-lro +blocked .*fixed off' "diff: rx-lro blocked (fixed)"
  expect_out 'features\.tx-tcp-segmentation +blocked .*although it is requested' "diff: TSO blocked (requested, kept off)"
  ntc_json apply --json vm-e1k-blocked "$E1K"
  expect_rc 0 "apply vm-e1k-blocked: exit 0, not a failure"
  jq_check "apply --json: applied, both features blocked, nothing failed" '
    (if .result != "applied" then "result \(.result)" else empty end),
    (.interfaces[0].steps[] | if .outcome != "blocked" then "\(.key): outcome \(.outcome)" else empty end)' "$RUN_OUT"
  after=$(snapshot "$E1K")
  same_snapshot "nothing changed" "$before" "$after"
  run ethtool -K "$E1K" sg on
}

run_check netdevsim_audit "netdevsim: audit --json reads coalescing (adaptive too), rings with max, channels, pause like ethtool" check_netdevsim_audit
run_check netdevsim_apply_rollback "netdevsim: --direct apply of adaptive-rx/tx, rx-usecs, rings, channels; verify; rollback restores exactly" check_netdevsim_apply_rollback
run_check netdevsim_rings_above_max "netdevsim: rings above max refused before any change (exit 2)" check_netdevsim_rings_above_max
run_check e1000e_audit_adaptive "e1000e: adaptive unsupported (absent), rx_usecs reported as the adaptive mode" check_e1000e_audit_adaptive
run_check e1000e_translate_diff "e1000e: adaptive_rx = true becomes rx_usecs 1 and diff says so" check_e1000e_translate_diff
run_check e1000e_kernel_error "e1000e: the kernel's error text for a rejected request is shown" check_e1000e_kernel_error
run_check e1000e_mtu "e1000e: MTU 9014 applies, 9213 refused before any change (max 9212)" check_e1000e_mtu
run_check e1000e_private_flags "e1000e: private_flags read like ethtool --show-priv-flags; an unknown flag refused before any change" check_e1000e_private_flags
run_check mid_transaction_rollback "failure mid-transaction: everything rolled back (exit 3)" check_mid_transaction_rollback
run_check netdevsim_driver_table "netdevsim: what it refuses is refused before any change; nothing resets its link" check_netdevsim_driver_table
run_check e1000e_driver_table "e1000e: what it refuses is refused before any change; what it rounds is predicted" check_e1000e_driver_table
run_check e1000e_blocked_features "e1000e: fixed and kernel-held features are blocked, not failed" check_e1000e_blocked_features
run_check e1000e_health_counters "e1000e health: counters equal ethtool -S and ip -s; the driver table's names are real" check_e1000e_health_counters
run_check e1000e_health_irqs "e1000e health: MSI-X vectors equal /proc/interrupts and the affinity files; all on one CPU is found" check_e1000e_health_irqs
run_check e1000e_health_pcie "e1000e health: link and slot equal sysfs behind a PCIe root port; an x1 card is no finding" check_e1000e_health_pcie
run_check netdevsim_health_unknown "netdevsim health: what cannot be read is unknown with its reason, never a finding" check_netdevsim_health_unknown
run_check e1000e_irq_affinity "e1000e [irq]: queue IRQs placed and verified in /proc/irq, irqbalance told to leave them, rollback exact" check_e1000e_irq_affinity
finish
