# shellcheck shell=bash
# irq.sh - the [irq] check of the plain boot (issue 17), sourced by
# suite-plain.sh after lib.sh and health.sh:
#   e1000e_irq_affinity  [irq] policy = "local" on e1000e's MSI-X queue vectors
#                        (rx-0, tx-0; the link vector stays): applied as
#                        /proc/irq/N/smp_affinity_list and effective_affinity_list
#                        show, audit --json equal to them, a running irqbalance
#                        (Debian's 1.9.2, only in this VM's overlay) told over its
#                        socket to leave them alone while an admin's --banirq
#                        stays, restored exactly on rollback (also when
#                        irqbalance is gone by then).

# irqbalance_banned SOCKET: the IRQs irqbalance leaves alone, from its own
# "setup" answer (the oracle: python's socket, not nictune's client).
irqbalance_banned() {
  timeout 10 python3 - "$1" <<'EOF'
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
cred = struct.pack("iII", os.getpid(), os.geteuid(), os.getegid())
s.sendmsg([b"setup"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, cred)])
data = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    data += b
t = data.decode().split()
irqs = sorted({int(t[i + 1]) for i in range(len(t) - 1) if t[i] == "IRQ"})
print(" ".join(map(str, irqs)))
EOF
}

# wait_effective IRQ CPU: effective_affinity_list follows on the next
# interrupt; ARP requests for a documentation address make tx-0 fire.
wait_effective() {
  local i
  for ((i = 0; i < 20; i++)); do
    grep -qx "$2" "/proc/irq/$1/effective_affinity_list" && return 0
    timeout 3 ping -q -c 1 -W 1 192.0.2.20 >/dev/null 2>&1
  done
  return 1
}

check_e1000e_irq_affinity() {
  need_e1k || return
  local ncpu
  ncpu=$(grep -c '^processor' /proc/cpuinfo)
  ((ncpu >= 2)) || { bad "the guest has $ncpu CPU(s); the check needs 2 (run-vm --smp 2)"; return; }
  command -v irqbalance >/dev/null || { bad "no irqbalance in the guest (GUEST_PACKAGES_plain)"; return; }
  local irq name rxq='' txq='' other=''
  while read -r irq _ name; do
    case $name in
      "$E1K"-rx-0) rxq=$irq ;;
      "$E1K"-tx-0) txq=$irq ;;
      "$E1K") other=$irq ;;
    esac
  done < <(irq_table)
  if [[ -z $rxq || -z $txq || -z $other ]]; then
    bad "no $E1K-rx-0/$E1K-tx-0/$E1K vectors in /proc/interrupts (the interface must be up)"
    return
  fi
  note "vectors: rx $rxq, tx $txq, other $other"
  ip addr add 192.0.2.10/24 dev "$E1K" 2>/dev/null
  local saved_other
  saved_other=$(cat "/proc/irq/$other/smp_affinity_list")

  # irqbalance with an admin's ban of the link vector, one pass at its start
  # and then an hour's sleep, so that nothing moves while the check reads.
  local ibpid sock banned
  start_irqbalance 3600 "$other" || return
  local rx0 tx0
  rx0=$(cat "/proc/irq/$rxq/smp_affinity_list")
  tx0=$(cat "/proc/irq/$txq/smp_affinity_list")
  note "before: rx $rx0, tx $tx0 (irqbalance's)"

  write_profile "$PDIR" vm-e1k-irq-local <<'EOF'
[profile]
description = "VM suite: queue IRQs on the NIC's node (Intel's set_irq_affinity -x local)"
[match]
drivers = ["e1000e"]
[irq]
policy = "local"
EOF
  # The node's CPUs, or all online ones when the device has none (-1 here).
  local node cpus
  node=$(cat "/sys/class/net/$E1K/device/numa_node")
  if [[ $node -ge 0 ]]; then cpus=$(cat "/sys/devices/system/node/node$node/cpulist"); else cpus=$(cat /sys/devices/system/cpu/online); fi
  local -a list=()
  local part a b c
  IFS=, read -ra parts <<<"$cpus"
  for part in "${parts[@]}"; do
    a=${part%-*} b=${part#*-}
    for ((c = a; c <= b; c++)); do list+=("$c"); done
  done
  local want_rx=${list[0]} want_tx=${list[1 % ${#list[@]}]}

  ntc_json apply --json vm-e1k-irq-local "$E1K"
  expect_rc 0 "apply [irq] policy = \"local\""
  jq_check "apply --json: irqbalance told first, then IRQ $rxq -> $want_rx and $txq -> $want_tx, each applied" '
    [.interfaces[0].steps[] | select(.key | startswith("irq."))] as $s
    | (if ($s | map(.key)) != ["irq.irqbalance_banned", "irq.\($rx).cpus", "irq.\($tx).cpus"] then "steps \($s | map(.key))" else empty end),
      ($s[] | if .outcome != "applied" then "\(.key): \(.outcome) \(.note)" else empty end),
      (if ($s[1].target | tostring) != $wrx then "rx target \($s[1].target)" else empty end),
      (if ($s[2].target | tostring) != $wtx then "tx target \($s[2].target)" else empty end),
      (if ($s[0].note | test("nictune does not stop it")) | not then "irqbalance note: \($s[0].note)" else empty end),
      (if $node == "-1" and ($s[1].note | test("numa_node -1") | not) then "no-node note: \($s[1].note)" else empty end)' \
    "$RUN_OUT" --arg rx "$rxq" --arg tx "$txq" --arg wrx "$want_rx" --arg wtx "$want_tx" --arg node "$node"
  local got_rx got_tx
  got_rx=$(cat "/proc/irq/$rxq/smp_affinity_list")
  got_tx=$(cat "/proc/irq/$txq/smp_affinity_list")
  [[ $got_rx == "$want_rx" && $got_tx == "$want_tx" ]] && ok "smp_affinity_list: rx $got_rx, tx $got_tx" \
    || bad "smp_affinity_list: rx $got_rx, tx $got_tx; want $want_rx, $want_tx"
  wait_effective "$rxq" "$want_rx" && wait_effective "$txq" "$want_tx" &&
    ok "effective_affinity_list follows: rx $(cat "/proc/irq/$rxq/effective_affinity_list"), tx $(cat "/proc/irq/$txq/effective_affinity_list")" ||
    bad "effective_affinity_list: rx $(cat "/proc/irq/$rxq/effective_affinity_list"), tx $(cat "/proc/irq/$txq/effective_affinity_list")"
  [[ $(cat "/proc/irq/$other/smp_affinity_list") == "$saved_other" ]] && ok "the link vector $other stays where it was" \
    || bad "the link vector $other moved: $(cat "/proc/irq/$other/smp_affinity_list"), was $saved_other"
  banned=$(irqbalance_banned "$sock")
  local want_banned
  want_banned=$(printf '%s\n' "$other" "$rxq" "$txq" | sort -n | tr '\n' ' ')
  [[ "$banned " == "$want_banned" ]] && ok "irqbalance leaves $banned alone (its own answer), --banirq kept" \
    || bad "irqbalance's banned IRQs after apply: '$banned', want '$want_banned'"
  # audit --json: the irq section equals the kernel's files.
  ntc_json audit --json "$E1K"
  jq_check "audit --json irq equals /proc/irq/N/{smp,effective}_affinity_list" '
    .interfaces[] | select(.name == $n) | .irq as $i
    | (if ($i | keys | sort) != ([$rx, $tx] | sort) then "irq keys \($i | keys)" else empty end),
      ($i[$rx] | if .affinity != $arx or .effective != $erx or .name != ($n + "-rx-0") then "rx \(.)" else empty end),
      ($i[$tx] | if .affinity != $atx or .effective != $etx or .name != ($n + "-tx-0") then "tx \(.)" else empty end)' \
    "$RUN_OUT" --arg n "$E1K" --arg rx "$rxq" --arg tx "$txq" \
    --arg arx "$(cat "/proc/irq/$rxq/smp_affinity_list")" --arg erx "$(cat "/proc/irq/$rxq/effective_affinity_list")" \
    --arg atx "$(cat "/proc/irq/$txq/smp_affinity_list")" --arg etx "$(cat "/proc/irq/$txq/effective_affinity_list")"

  ntc rollback "$E1K"
  expect_rc 0 "rollback"
  [[ $(cat "/proc/irq/$rxq/smp_affinity_list") == "$rx0" && $(cat "/proc/irq/$txq/smp_affinity_list") == "$tx0" ]] &&
    ok "rollback: rx $rx0, tx $tx0 as before" ||
    bad "rollback: rx $(cat "/proc/irq/$rxq/smp_affinity_list"), tx $(cat "/proc/irq/$txq/smp_affinity_list"); were $rx0, $tx0"
  banned=$(irqbalance_banned "$sock")
  [[ $banned == "$other" ]] && ok "rollback: irqbalance leaves only $other alone again" \
    || bad "irqbalance's banned IRQs after rollback: '$banned', want '$other'"
  stop_irqbalance

  # An irqbalance that is gone by the rollback (stopped, crashed) makes the
  # ban's undo a note, not a failure; each IRQ still goes back to what the
  # plan saved. (Whether irqbalance would have moved unbanned IRQs within a
  # few seconds is not checked: on two idle CPUs it leaves placed IRQs where
  # they are, so such a check could not fail.)
  start_irqbalance 1 "$other" || return
  sleep 3
  ntc_json apply --json vm-e1k-irq-local "$E1K"
  expect_rc 0 "apply again, irqbalance running every second"
  local cur_rx cur_tx
  cur_rx=$(jq -r --arg k "irq.$rxq.cpus" '.interfaces[0].steps[] | select(.key == $k) | .current' <<<"$RUN_OUT")
  cur_tx=$(jq -r --arg k "irq.$txq.cpus" '.interfaces[0].steps[] | select(.key == $k) | .current' <<<"$RUN_OUT")
  stop_irqbalance
  ntc rollback "$E1K"
  expect_rc 0 "rollback with irqbalance gone meanwhile"
  expect_out 'irq\.irqbalance_banned.*irqbalance is not running' "the rollback says irqbalance is gone"
  [[ $(cat "/proc/irq/$rxq/smp_affinity_list") == "$cur_rx" && $(cat "/proc/irq/$txq/smp_affinity_list") == "$cur_tx" ]] &&
    ok "rollback: rx $cur_rx, tx $cur_tx, as the plan saved them" ||
    bad "rollback: rx $(cat "/proc/irq/$rxq/smp_affinity_list"), tx $(cat "/proc/irq/$txq/smp_affinity_list"); saved $cur_rx, $cur_tx"
  echo "$saved_other" >"/proc/irq/$other/smp_affinity_list"
}

# start_irqbalance INTERVAL BANIRQ: sets ibpid and sock.
start_irqbalance() {
  mkdir -p /run/irqbalance
  irqbalance --foreground --interval="$1" --banirq="$2" >>"$OUT/irqbalance.log" 2>&1 &
  ibpid=$!
  sock=/run/irqbalance/irqbalance$ibpid.sock
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -S $sock ]] && break
    sleep 0.2
  done
  if [[ ! -S $sock ]]; then
    bad "irqbalance (pid $ibpid) made no socket $sock: $(tail -n 5 "$OUT/irqbalance.log")"
    stop_irqbalance
    return 1
  fi
  sleep 2
  banned=$(irqbalance_banned "$sock")
  [[ $banned == "$2" ]] && ok "irqbalance (pid $ibpid, interval $1 s) runs, leaving IRQ $2 alone (--banirq)" \
    || bad "irqbalance's banned IRQs at its start: '$banned', want '$2'"
}

stop_irqbalance() {
  [[ -n ${ibpid:-} ]] || return 0
  kill "$ibpid" 2>/dev/null
  wait "$ibpid" 2>/dev/null
  ibpid=
}
