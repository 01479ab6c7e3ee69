# shellcheck shell=bash
# shellcheck disable=SC2016  # jq programs, in single quotes on purpose
# health.sh - the health checks of the VM suite (issue 14), sourced by
# suite-plain.sh and suite-systemd.sh after lib.sh. Each check_* function is
# run by run_check in one of them; what it needs from the suite script:
#   NTC_AUDIT   a command (array) that runs nictunectl audit with the suite's
#               options (plain: --direct and its dirs; systemd: over the bus)
#   E1K, NSIM   the interfaces (need_e1k, need_nsim)
#   NICTUNE_FACTS  the source tree's profiles/facts/driver-facts.toml (--env)
#
# The oracles are the kernel's own files and tools: ethtool -S, ip -s -j,
# /proc/interrupts, /proc/irq/N/*_affinity_list, the PCI function's sysfs
# files, udevadm. Audits run with --json; jq compares.

HJSON=
# health_audit IFACE [ARGS...]: audit --json of IFACE into HJSON (the
# interface's object), the whole report in RUN_OUT. 0 if it parsed.
health_audit() {
  local ifc=$1
  shift
  run_split "${NTC_AUDIT[@]}" audit "$ifc" --json "$@"
  if [[ $RUN_RC != 0 && $RUN_RC != 1 ]]; then
    bad "audit $ifc --json $*: exit $RUN_RC: $(head -c 300 <<<"$RUN_ERR")"
    return 1
  fi
  HJSON=$(jq -c --arg n "$ifc" '.interfaces[] | select(.name == $n)' <<<"$RUN_OUT" 2>&1)
  if [[ -z $HJSON ]] || ! jq -e '.health | type == "object"' >/dev/null 2>&1 <<<"$HJSON"; then
    bad "audit $ifc --json: no health object for $ifc: $(head -c 300 <<<"$HJSON")"
    return 1
  fi
}

# ethtool_stats_json DEV: `ethtool -S DEV` as one JSON object {name: value}.
ethtool_stats_json() {
  timeout 30 ethtool -S "$1" 2>/dev/null | awk -F': ' '
    NR > 1 && NF >= 2 { gsub(/^[ \t]+/, "", $1); v[n++] = sprintf("\"%s\":%s", $1, $2) }
    END { printf "{"; for (i = 0; i < n; i++) printf "%s%s", (i ? "," : ""), v[i]; print "}" }'
}

# ip_stats_json DEV: the stats64 counters `ip -s -j link show` prints, keyed
# like health.counters.kernel.
ip_stats_json() {
  timeout 30 ip -s -j link show dev "$1" | jq -c '.[0].stats64 | {
    rx_packets: .rx.packets, rx_bytes: .rx.bytes, rx_errors: .rx.errors,
    rx_dropped: .rx.dropped, multicast: .rx.multicast, tx_packets: .tx.packets,
    tx_bytes: .tx.bytes, tx_errors: .tx.errors, tx_dropped: .tx.dropped,
    collisions: .tx.collisions}'
}

# irq_table: "IRQ COUNT NAME" per line of /proc/interrupts (COUNT summed over
# the CPU columns; NAME the last word, as the kernel's action name).
irq_table() {
  awk 'NR == 1 { ncpu = NF; next }
       $1 ~ /^[0-9]+:$/ { s = 0; for (i = 2; i <= ncpu + 1; i++) s += $i;
                          sub(/:$/, "", $1); print $1, s, $NF }' /proc/interrupts
}

# in_window WHAT BEFORE NOW AFTER: three JSON objects of counters; every
# name of BEFORE must be in NOW and lie between BEFORE and AFTER (counters
# may move while nictune reads them).
in_window() {
  jq_check "$1" '
    $b | to_entries[] | select(($n[.key] // -1) < .value or ($n[.key] // -1) > ($a[.key] // -1))
    | "\(.key): before \(.value), nictune \($n[.key]), after \($a[.key])"' "" \
    -n --argjson b "$2" --argjson n "$3" --argjson a "$4"
}

# --- e1000e: its real counters ---------------------------------------------------
check_e1000e_health_counters() {
  need_e1k || return
  # A little traffic so that the TX counters move: ARP requests for an
  # address nobody has (the NIC's hub has no host-side backend).
  ip addr add 192.0.2.10/24 dev "$E1K" 2>/dev/null
  timeout 10 ping -q -c 3 -i 0.3 -W 1 192.0.2.20 >/dev/null 2>&1
  ip addr del 192.0.2.10/24 dev "$E1K" 2>/dev/null
  local es_b ip_b es_a ip_a
  es_b=$(ethtool_stats_json "$E1K")
  ip_b=$(ip_stats_json "$E1K")
  health_audit "$E1K" || return
  es_a=$(ethtool_stats_json "$E1K")
  ip_a=$(ip_stats_json "$E1K")
  note "ethtool -S $E1K: $(jq -r 'length' <<<"$es_b") counters"
  local drv kern
  drv=$(jq -c '.health.counters.driver' <<<"$HJSON")
  kern=$(jq -c '.health.counters.kernel' <<<"$HJSON")
  if [[ $(jq -r 'type' <<<"$drv") != object ]]; then
    bad "health.counters.driver is $drv (unknown: $(jq -c '.health.unknown' <<<"$HJSON"))"
    return
  fi
  jq_check "health.counters.driver has exactly ethtool -S's names" '
    (($n | keys) - ($b | keys) | .[] | "not in ethtool -S: \(.)"),
    (($b | keys) - ($n | keys) | .[] | "not in nictune: \(.)")' "" \
    -n --argjson b "$es_b" --argjson n "$drv"
  in_window "health.counters.driver = ethtool -S $E1K" "$es_b" "$drv" "$es_a"
  in_window "health.counters.kernel = ip -s -j link show $E1K" "$ip_b" "$kern" "$ip_a"
  jq_check "tx_packets moved (the check saw traffic)" \
    'if $n.tx_packets > 0 then empty else "tx_packets \($n.tx_packets)" end' "" -n --argjson n "$kern"
  # The driver table's e1000e counters are the driver's real strings.
  local facts=${NICTUNE_FACTS:-}
  if [[ ! -r $facts ]]; then
    bad "no driver facts file to compare with (NICTUNE_FACTS='$facts')"
    return
  fi
  local names
  names=$(awk '/^\[\[e1000e\.counters\]\]/ { t = 1; next } /^\[/ { t = 0 }
               t && /^name = / { gsub(/^name = "|"$/, ""); print }' "$facts")
  [[ -n $names ]] || { bad "no [[e1000e.counters]] rows in $facts"; return; }
  local n missing=
  for n in $names; do
    jq -e --arg k "$n" 'has($k)' >/dev/null <<<"$es_b" || missing+=" $n"
  done
  if [[ -z $missing ]]; then
    ok "every [[e1000e.counters]] name is in the real driver's ethtool -S: $(tr '\n' ' ' <<<"$names")"
  else
    bad "[[e1000e.counters]] names the real e1000e does not print:$missing"
  fi
}

# --- e1000e: MSI-X vectors and their CPUs ----------------------------------------
e1k_function() { basename "$(readlink -f "/sys/class/net/$1/device")"; }

# irqs_equal_kernel IFACE: health.irqs (in HJSON) against msi_irqs,
# /proc/interrupts (read before and after: counts move) and the affinity files.
irqs_equal_kernel() {
  local fn_dir=/sys/class/net/$1/device t_b=$2 t_a=$3
  local want=''
  local v
  for v in "$fn_dir"/msi_irqs/*; do [[ -e $v ]] && want+="${v##*/}"$'\n'; done
  want=$(sort -n <<<"$want" | grep . | tr '\n' ' ')
  [[ -n $want ]] || { bad "$1 has no msi_irqs (is it up?)"; return 1; }
  jq_check "health.irqs are msi_irqs ($want)" '
    [.health.irqs[]?.irq] | sort | map(tostring) | join(" ") as $got
    | if ($got + " ") == $w then empty else "nictune \($got), msi_irqs \($w)" end' "$HJSON" --arg w "$want"
  local irq name aff eff q c_b c_a i c n problems=
  for irq in $want; do
    c_b='' c_a='' name=''
    while read -r i c n; do [[ $i == "$irq" ]] && { c_b=$c name=$n; }; done <<<"$t_b"
    while read -r i c n; do [[ $i == "$irq" ]] && c_a=$c; done <<<"$t_a"
    aff=$(cat "/proc/irq/$irq/smp_affinity_list")
    eff=$(cat "/proc/irq/$irq/effective_affinity_list")
    case $name in
      *-rx-[0-9]* | *-tx-[0-9]*) q=${name##*-} ;;
      *) q=null ;;
    esac
    problems+=$(jq -r --argjson i "$irq" --arg name "$name" --arg aff "$aff" --arg eff "$eff" \
      --argjson q "$q" --argjson cb "${c_b:-0}" --argjson ca "${c_a:-0}" '
      (.health.irqs[] | select(.irq == $i)) as $e
      | (if $e.name != $name then "IRQ \($i): name \($e.name), /proc/interrupts \($name)" else empty end),
        (if $e.affinity != $aff then "IRQ \($i): affinity \($e.affinity), smp_affinity_list \($aff)" else empty end),
        (if $e.effective_affinity != $eff then "IRQ \($i): effective \($e.effective_affinity), effective_affinity_list \($eff)" else empty end),
        (if $e.queue != $q then "IRQ \($i): queue \($e.queue), want \($q) from \($name)" else empty end),
        (if $e.count < $cb or $e.count > $ca then "IRQ \($i): count \($e.count), /proc/interrupts \($cb)..\($ca)" else empty end)
      ' <<<"$HJSON")$'\n'
    note "IRQ $irq $name: smp_affinity_list $aff, effective $eff, count $c_b..$c_a"
  done
  problems=$(grep . <<<"$problems")
  if [[ -z $problems ]]; then
    ok "health.irqs: name, queue, affinity, effective affinity and count as the kernel says"
  else
    bad "health.irqs differ from the kernel: $(tr '\n' ';' <<<"$problems" | head -c 500)"
  fi
}

# set_affinity IRQ CPULIST: write smp_affinity_list and wait until the
# effective affinity follows. x86 moves an MSI vector at its next interrupt
# (until then effective_affinity_list keeps the old CPU, and that is where
# the interrupt goes: what nictune judges): rx-0 fires every 2 s on its own
# (e1000e's watchdog), tx-0 only when something is sent, so each round sends
# an ARP request (192.0.2.10 must be on the interface).
set_affinity() {
  echo "$2" >"/proc/irq/$1/smp_affinity_list" 2>/dev/null || { bad "cannot write /proc/irq/$1/smp_affinity_list = $2"; return 1; }
  local i
  for ((i = 0; i < 20; i++)); do
    grep -qx "$2" "/proc/irq/$1/effective_affinity_list" && return 0
    timeout 3 ping -q -c 1 -W 1 192.0.2.20 >/dev/null 2>&1
  done
  bad "IRQ $1: effective_affinity_list is still $(cat "/proc/irq/$1/effective_affinity_list") after writing $2 and 20 ARP requests"
  return 1
}

check_e1000e_health_irqs() {
  need_e1k || return
  local ncpu
  ncpu=$(grep -c '^processor' /proc/cpuinfo)
  ((ncpu >= 2)) || { bad "the guest has $ncpu CPU(s); the check needs 2 (run-vm --smp 2)"; return; }
  local dir=/sys/class/net/$E1K/device
  local t_b t_a
  t_b=$(irq_table)
  health_audit "$E1K" || return
  t_a=$(irq_table)
  irqs_equal_kernel "$E1K" "$t_b" "$t_a"
  jq_check "health.numa = numa_node and local_cpulist" '
    .health.numa as $m
    | (if ($m.node // -1 | tostring) != $node then "node \($m.node), numa_node \($node)" else empty end),
      (if $m.local_cpulist != $cpus then "local_cpulist \($m.local_cpulist), sysfs \($cpus)" else empty end)' \
    "$HJSON" --arg node "$(cat "$dir/numa_node")" --arg cpus "$(cat "$dir/local_cpulist")"

  # The queue vectors (rx-0, tx-0) and the other one; originals restored at the end.
  local irq name rxq='' txq='' other='' all=''
  while read -r irq _ name; do
    case $name in
      "$E1K"-rx-0) rxq=$irq ;;
      "$E1K"-tx-0) txq=$irq ;;
      "$E1K") other=$irq ;;
      *) continue ;;
    esac
    all+=" $irq"
  done < <(irq_table)
  if [[ -z $rxq || -z $txq ]]; then
    bad "no $E1K-rx-0/$E1K-tx-0 vectors in /proc/interrupts (the interface must be up)"
    return
  fi
  note "vectors: rx $rxq, tx $txq, other ${other:-none}"
  # An address of a documentation net: ARP requests for 192.0.2.20 make
  # tx-0 fire (the NIC's hub has no host-side backend; nobody answers).
  ip addr add 192.0.2.10/24 dev "$E1K" 2>/dev/null
  declare -A saved=()
  for irq in $all; do saved[$irq]=$(cat "/proc/irq/$irq/smp_affinity_list"); done

  # Spread: rx on CPU 0, tx on CPU 1: no "one CPU" finding.
  set_affinity "$rxq" 0
  set_affinity "$txq" 1
  t_b=$(irq_table)
  health_audit "$E1K" && {
    irqs_equal_kernel "$E1K" "$t_b" "$(irq_table)"
    jq_check "queues on CPUs 0 and 1: no health.irqs.one_cpu" \
      '.findings[] | select(.key == "health.irqs.one_cpu") | "finding: \(.message)"' "$HJSON"
  }
  # Every vector on CPU 1: the finding, naming the CPU and the queues. The
  # other vector (link changes) fires too seldom to wait for; the finding
  # looks at the queue vectors.
  set_affinity "$rxq" 1
  set_affinity "$txq" 1
  [[ -n $other ]] && echo 1 >"/proc/irq/$other/smp_affinity_list"
  t_b=$(irq_table)
  health_audit "$E1K" && {
    irqs_equal_kernel "$E1K" "$t_b" "$(irq_table)"
    jq_check "all vectors on CPU 1: health.irqs.one_cpu (warn) says CPU 1 and 2 queue interrupts" '
      [.findings[] | select(.key == "health.irqs.one_cpu")] as $f
      | if ($f | length) != 1 then "want one health.irqs.one_cpu finding, got \($f | length): \([.findings[].key])"
        elif $f[0].severity != "warn" then "severity \($f[0].severity)"
        elif ($f[0].actual | tostring) != "CPU 1" then "actual \($f[0].actual)"
        elif ($f[0].message | test("all 2 queue interrupts of \($d) are handled by CPU 1") | not) then "message: \($f[0].message)"
        else empty end' "$HJSON" --arg d "$E1K"
    jq_check "the verdict names it: health.limits has health.irqs.one_cpu" \
      'if [.health.limits[].key] | index("health.irqs.one_cpu") then empty else "limits: \([.health.limits[].key])" end' "$HJSON"
  }
  run_split "${NTC_AUDIT[@]}" audit "$E1K"
  expect_out "health.irqs.one_cpu: all 2 queue interrupts of $E1K are handled by CPU 1" "text report: the finding"
  for irq in $all; do echo "${saved[$irq]}" >"/proc/irq/$irq/smp_affinity_list" 2>/dev/null; done
  ip addr del 192.0.2.10/24 dev "$E1K" 2>/dev/null
}

# --- e1000e behind a PCIe root port ------------------------------------------------
# "2.5 GT/s PCIe" -> 2.5
gts_of() { awk '{ print $1 + 0 }' "$1"; }

check_e1000e_health_pcie() {
  need_e1k || return
  local fdir up fn port
  fdir=$(readlink -f "/sys/class/net/$E1K/device")
  fn=${fdir##*/}
  up=$(dirname "$fdir")
  port=${up##*/}
  note "$E1K: function $fn, upstream $port"
  local f
  for f in "$fdir" "$up"; do
    note "${f##*/}: current $(cat "$f/current_link_speed" 2>&1) x$(cat "$f/current_link_width" 2>&1), max $(cat "$f/max_link_speed" 2>&1) x$(cat "$f/max_link_width" 2>&1)"
  done
  if [[ ! -e $up/max_link_speed ]]; then
    bad "$E1K's function $fn has no PCIe slot above it (run-vm --nic-root-port)"
    return
  fi
  health_audit "$E1K" || return
  jq_check "health.pcie = the function's and the root port's sysfs link files" '
    .health.pcie as $p
    | if ($p | type) != "object" then "pcie is \($p) (\(.health.unknown.pcie))" else
      (if $p.function != $fn then "function \($p.function), want \($fn)" else empty end),
      (if [$p.current_speed, $p.current_width, $p.max_speed, $p.max_width] != [$cs, $cw, $ms, $mw]
       then "function link \([$p.current_speed, $p.current_width, $p.max_speed, $p.max_width]), sysfs \([$cs, $cw, $ms, $mw])" else empty end),
      (if $p.upstream_port != $port then "upstream_port \($p.upstream_port), want \($port)" else empty end),
      (if [$p.upstream.current_speed, $p.upstream.current_width, $p.upstream.max_speed, $p.upstream.max_width] != [$ucs, $ucw, $ums, $umw]
       then "slot link \($p.upstream), sysfs \([$ucs, $ucw, $ums, $umw])" else empty end),
      (($cs * $cw * 0.8) as $g | if $p.gbps - $g > 0.01 or $g - $p.gbps > 0.01
       then "gbps \($p.gbps), want \($g) (x\($cw) at \($cs) GT/s, 8b/10b)" else empty end)
      end' "$HJSON" --arg fn "$fn" --arg port "$port" \
    --argjson cs "$(gts_of "$fdir/current_link_speed")" --argjson cw "$(cat "$fdir/current_link_width")" \
    --argjson ms "$(gts_of "$fdir/max_link_speed")" --argjson mw "$(cat "$fdir/max_link_width")" \
    --argjson ucs "$(gts_of "$up/current_link_speed")" --argjson ucw "$(cat "$up/current_link_width")" \
    --argjson ums "$(gts_of "$up/max_link_speed")" --argjson umw "$(cat "$up/max_link_width")"
  # qemu 7.2's e1000e is an x1 2.5 GT/s endpoint: the slot (x16 at 8 GT/s
  # here) is wider than the card, the card runs at its own maximum, and
  # 2 Gbit/s carry its 1 Gbit/s: no finding (see tests/vm/README.md).
  jq_check "an x1 card at its maximum in a wider slot: no health.pcie finding" \
    '.findings[] | select(.key | startswith("health.pcie")) | "finding: \(.message)"' "$HJSON"
}

# --- no finding from missing data --------------------------------------------------
# The health sections that can be unknown, and the finding keys drawn from each.
JQ_UNKNOWN_NOT_FINDING='
  def section_of: if startswith("health.pcie") then "pcie"
    elif startswith("health.irqs") then "irqs"
    elif startswith("health.cpu.") then "cpus"
    elif startswith("health.driver") then "driver"
    elif startswith("health.link.carrier") then "carrier_changes"
    elif startswith("health.link.") then "link_modes"
    else null end;
  .health as $h
  | ( ["pcie", "link_modes", "carrier_changes", "irqs", "numa", "cpus", "driver"][]
      | select($h[.] == null)
      | select(($h.unknown[.] // "") | length == 0)
      | "health.\(.) is null without a reason in health.unknown" ),
    ( if $h.counters.driver == null and (($h.unknown["counters.driver"] // "") | length == 0)
      then "health.counters.driver is null without a reason" else empty end ),
    ( .findings[] | select(.key | startswith("health."))
      | (.key | section_of) as $s | select($s != null and $h[$s] == null)
      | "finding \(.key) although health.\($s) is unknown (\($h.unknown[$s])): \(.message)" )'

# health_unknown_is_no_finding IFACE WANT_NULL...: audit IFACE; each section
# in WANT_NULL must be null with its reason; no finding may come from a null
# section.
health_unknown_is_no_finding() {
  local ifc=$1
  shift
  health_audit "$ifc" || return
  note "health.unknown: $(jq -c '.health.unknown' <<<"$HJSON")"
  note "health findings: $(jq -c '[.findings[] | select(.key | startswith("health.")) | .key]' <<<"$HJSON")"
  local s
  for s in "$@"; do
    jq_check "$ifc: health.$s is null with its reason" '
      if .health[$s] != null then "health.\($s) = \(.health[$s] | tostring | .[0:200])"
      elif (.health.unknown[$s] // "") == "" then "no reason for \($s)" else empty end' "$HJSON" --arg s "$s"
  done
  jq_check "$ifc: every unknown has its reason and no finding comes from one" "$JQ_UNKNOWN_NOT_FINDING" "$HJSON"
}

check_netdevsim_health_unknown() {
  need_nsim || return
  # netdevsim: no PCI function (no PCIe link, no MSI vectors, no NUMA node).
  health_unknown_is_no_finding "$NSIM" pcie irqs numa
}

# --- systemd guest: a .link file udev applied ----------------------------------------
LINK_FILE=/etc/systemd/network/10-nictune-test.link
check_link_file_foreign() {
  need_e1k || return
  local mac
  mac=$(cat "/sys/class/net/$E1K/address")
  install -d -m 0755 /etc/systemd/network
  # The names as 99-default.link gives them (this file replaces it for the
  # NIC); MTUBytes and RxBufferSize differ from the bound profile vm-boot
  # (9014, 1024), TxBufferSize is the same.
  printf '%s\n' "# VM suite (health): udev applies this to the e1000e NIC" "[Match]" \
    "MACAddress=$mac" "[Link]" "NamePolicy=keep kernel database onboard slot path" \
    "AlternativeNamesPolicy=database onboard slot path" "MACAddressPolicy=persistent" \
    "MTUBytes=1500" "RxBufferSize=512" "TxBufferSize=1024" >"$LINK_FILE"
  run udevadm control --reload
  run udevadm trigger --action=add --settle "/sys/class/net/$E1K"
  run timeout 60 udevadm settle
  run udevadm info -q property "/sys/class/net/$E1K"
  expect_out "^ID_NET_LINK_FILE=$LINK_FILE$" "udev applied $LINK_FILE (ID_NET_LINK_FILE)"
  local mtu rx
  mtu=$(mtu_of "$E1K")
  rx=$(eth_value -g "$E1K" RX)
  if [[ $mtu == 1500 && $rx == 512 ]]; then
    ok "udev set MTU 1500 and RX ring 512 from the file"
  else
    bad "after the trigger $E1K has MTU $mtu, RX ring $rx (want 1500, 512 from $LINK_FILE)"
  fi
  local mline rxline txline
  mline=$(grep -n '^MTUBytes=' "$LINK_FILE" | cut -d: -f1)
  rxline=$(grep -n '^RxBufferSize=' "$LINK_FILE" | cut -d: -f1)
  txline=$(grep -n '^TxBufferSize=' "$LINK_FILE" | cut -d: -f1)
  # Through nictuned (the daemon reads udev's record), against the bound profile.
  health_audit "$E1K" --profile vm-boot || return
  jq_check "health.foreign: the .link file and its three keys with their lines" '
    [.health.foreign[] | select(.tool == "systemd.link")] as $l
    | if ($l | length) != 1 then "systemd.link entries: \($l)"
      elif $l[0].source != $f then "source \($l[0].source)"
      else ($l[0].settings | map({(.key): "\(.source_key)=\(.value)@\(.line)"}) | add) as $s
        | ({"link.mtu": "MTUBytes=1500@\($ml)", "rings.rx": "RxBufferSize=512@\($rl)",
            "rings.tx": "TxBufferSize=1024@\($tl)"} | to_entries[]
           | select($s[.key] != .value) | "\(.key): \($s[.key]), want \(.value)")
      end' "$HJSON" --arg f "$LINK_FILE" --argjson ml "$mline" --argjson rl "$rxline" --argjson tl "$txline"
  jq_check "warn findings name the file:line, the key and both values" '
    def want($k; $line; $src; $v; $p):
      [.findings[] | select(.key == "health.foreign." + $k)] as $x
      | if ($x | length) != 1 then "\($k): \($x | length) findings"
        elif $x[0].severity != "warn" then "\($k): severity \($x[0].severity)"
        elif ($x[0].message | contains("systemd.link \($f):\($line) sets \($src) = \($v) (\($k)), profile vm-boot wants \($p)") | not)
        then "\($k): message \($x[0].message)"
        elif ($x[0].fix | contains("remove \($src) from \($f):\($line) or set it to \($p)") | not)
        then "\($k): fix \($x[0].fix)"
        else empty end;
    want("link.mtu"; $ml; "MTUBytes"; "1500"; "9014"), want("rings.rx"; $rl; "RxBufferSize"; "512"; "1024")' \
    "$HJSON" --arg f "$LINK_FILE" --argjson ml "$mline" --argjson rl "$rxline"
  jq_check "the key set as the profile does is an info finding saying so" '
    [.findings[] | select(.key == "health.foreign.rings.tx")] as $x
    | if ($x | length) != 1 then "rings.tx: \($x | length) findings"
      elif $x[0].severity != "info" then "rings.tx: severity \($x[0].severity)"
      elif ($x[0].message | contains("systemd.link \($f):\($tl) sets TxBufferSize = 1024 (rings.tx); the device has 1024, as the profile does") | not)
      then "rings.tx: message \($x[0].message)"
      else empty end' "$HJSON" --arg f "$LINK_FILE" --argjson tl "$txline"
  # Put things back: no file, udev's record from 99-default.link, the
  # profile's values (the daemon does not enforce them at this point).
  rm -f "$LINK_FILE"
  run udevadm control --reload
  run udevadm trigger --action=add --settle "/sys/class/net/$E1K"
  run timeout 60 udevadm settle
  run ip link set dev "$E1K" mtu 9014
  run ethtool -G "$E1K" rx 1024
}

check_e1000e_root_bus_unknown() {
  need_e1k || return
  # q35's root bus: qemu gives the e1000e no link registers (current
  # "Unknown", width 0): unknown with the reason, never a finding.
  local fdir
  fdir=$(readlink -f "/sys/class/net/$E1K/device")
  note "$E1K (${fdir##*/}): current_link_speed '$(cat "$fdir/current_link_speed" 2>&1)', current_link_width '$(cat "$fdir/current_link_width" 2>&1)', max_link_width '$(cat "$fdir/max_link_width" 2>&1)'"
  health_unknown_is_no_finding "$E1K" pcie
}
