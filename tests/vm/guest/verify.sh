# verify.sh - the VM suite's checks of a binding's peer check under a real
# systemd (issue 15), sourced by suite-systemd.sh after lib.sh.
#
# A [[bind]] with verify_peer is applied by nictuned, held open, and nictuned
# asks systemd (D-Bus StartUnit) for nictune-verify@TRANSACTION.service, which
# runs `nictunectl confirm TRANSACTION` under its own hardening (CAP_NET_RAW
# only, no CAP_NET_ADMIN, read-only file system). The integration tests run
# what the unit runs by hand (no systemd on their private bus); here systemd
# starts the installed unit itself.
#
# Two veth pairs, the peers in network namespaces of the guest (a throwaway
# VM): vp0 -> 10.60.0.2 with the peer end at MTU 9000 (the path carries the
# jumbo profile: kept), vq0 -> 10.61.0.2 with the peer end at 1500 (veth drops
# the larger frames without ICMP, a silent black hole: rolled back). One
# reload of nictuned binds both; each gets its own transaction and unit.
#
# Check:
#   verify_unit   systemd runs nictune-verify@TX.service for each binding; the
#                 path that carries 9000 keeps MTU 9000 (unit result success),
#                 the black hole is rolled back to 1500 (unit failed, exit 3,
#                 the reason in nictuned's journal); nothing is left pending

VERIFY_PROFILE=vm-jumbo

verify_topology() {  # verify_topology IF NS NET PEER_MTU
  local dev=$1 ns=$2 net=$3 peer_mtu=$4
  ip netns add "$ns" &&
    ip link add "$dev" type veth peer name "${dev}p" &&
    ip link set "${dev}p" netns "$ns" &&
    ip addr add "$net.1/24" dev "$dev" &&
    ip link set "$dev" up &&
    ip -n "$ns" link set lo up &&
    ip -n "$ns" link set "${dev}p" mtu "$peer_mtu" &&
    ip -n "$ns" addr add "$net.2/24" dev "${dev}p" &&
    ip -n "$ns" link set "${dev}p" up
}

# write_verify_config: the suite's e1000e binding plus the two peer-checked ones.
write_verify_config() {
  printf '[[bind]]\nprofile = "%s"\ndriver = "e1000e"\nenforce = false\n\n[[bind]]\nprofile = "%s"\ninterface = "vp0"\nverify_peer = "10.60.0.2"\nconfirm_timeout = 240\n\n[[bind]]\nprofile = "%s"\ninterface = "vq0"\nverify_peer = "10.61.0.2"\nconfirm_timeout = 240\n' \
    "$BOOT_PROFILE" "$VERIFY_PROFILE" "$VERIFY_PROFILE" >"$CONFIG.tmp"
  chmod 0644 "$CONFIG.tmp"
  mv -f "$CONFIG.tmp" "$CONFIG"
}

# Both bindings' transactions got their verifier ("started nictune-verify@TX.service").
verify_units_started() {
  [[ $(journal nictuned.service | grep -c 'started nictune-verify@') -ge 2 ]]
}
# unit_done UNIT: the oneshot ran to its end: no job of it queued and not
# activating (a oneshot is "activating" while ExecStart= runs). A unit that
# succeeded is garbage-collected at once (`systemctl show` then prints
# defaults), a failed one stays loaded, so "inactive" or "failed".
unit_done() {
  local s
  timeout 30 systemctl list-jobs --no-legend 2>/dev/null | grep -qF "$1" && return 1
  s=$(timeout 30 systemctl is-active "$1" 2>/dev/null)
  [[ $s == inactive || $s == failed ]]
}
unit_result() {  # unit_result UNIT: success, exit-code or what systemd says, once done
  local j
  j=$(journal "$1")
  if grep -q "Failed with result 'exit-code'" <<<"$j"; then echo exit-code
  elif grep -Eq 'Deactivated successfully|Finished ' <<<"$j"; then echo success
  elif [[ $(timeout 30 systemctl is-active "$1" 2>/dev/null) == inactive ]]; then echo success
  else echo "unknown ($(timeout 30 systemctl is-active "$1" 2>&1))"
  fi
}

check_verify_unit() {
  install -d -m 0755 /etc/nictune/profiles
  write_profile /etc/nictune/profiles "$VERIFY_PROFILE" <<'EOF'
# VM suite: a jumbo MTU that a binding keeps only if the path to its peer carries it.
[link]
mtu = 9000
EOF
  verify_topology vp0 vpeer 10.60.0 9000 || { bad "cannot build the vp0 topology"; return; }
  verify_topology vq0 vhole 10.61.0 1500 || { bad "cannot build the vq0 topology"; return; }
  [[ -f /usr/lib/systemd/system/nictune-verify@.service || -f /lib/systemd/system/nictune-verify@.service ]] &&
    ok "nictune-verify@.service is installed" || bad "nictune-verify@.service is not installed"
  write_verify_config
  run timeout 60 systemctl reload nictuned.service
  expect_rc 0 "systemctl reload nictuned"
  if poll 120 verify_units_started; then
    ok "nictuned asked systemd for a verifier per binding"
  else
    bad "nictuned did not start two nictune-verify@ units within 120 s"
  fi
  local j units u
  j=$(journal nictuned.service)
  grep -E 'nictune-verify@|vp0|vq0' <<<"$j" | sed 's/^/    journal: /' | tail -n 20
  mapfile -t units < <(grep -o 'started nictune-verify@[^ ]*\.service' <<<"$j" | sed 's/^started //' | sort -u)
  for u in "${units[@]}"; do
    if ! poll 200 unit_done "$u"; then
      bad "$u did not finish within 200 s"
      timeout 30 systemctl status --no-pager -l "$u" 2>&1 | sed 's/^/    status: /'
      timeout 30 systemctl list-jobs --no-pager 2>&1 | sed 's/^/    jobs: /'
    fi
    note "$u: $(unit_result "$u")"
    journal "$u" | tail -n 12 | sed 's/^/    unit: /'
  done
  # The outcomes, per interface: the kernel's MTU is the oracle.
  if poll 60 test "$(mtu_of vp0)" = 9000; then
    ok "vp0: the path carries 9000-byte packets, MTU 9000 kept"
  else
    bad "vp0: MTU $(mtu_of vp0), want 9000 kept (the path carries it)"
  fi
  if poll 60 test "$(mtu_of vq0)" = 1500; then
    ok "vq0: the black hole is found, MTU rolled back to 1500"
  else
    bad "vq0: MTU $(mtu_of vq0), want 1500 (the path drops jumbo frames)"
  fi
  local results
  results=$(for u in "${units[@]}"; do unit_result "$u"; done | sort | tr '\n' ' ')
  if [[ $results == "exit-code success " ]]; then
    ok "one verifier succeeded, the other failed with its exit status"
  else
    bad "the verifiers' results are '$results', want one success and one exit-code"
  fi
  # A failed unit stays loaded: its main process's status is there.
  local failed_status=
  for u in "${units[@]}"; do
    [[ $(unit_result "$u") == exit-code ]] && failed_status=$(systemctl show -P ExecMainStatus "$u")
  done
  [[ $failed_status == 3 ]] && ok "the failed verifier exited 3 (rolled back)" ||
    bad "the failed verifier exited '$failed_status', want 3"
  j=$(journal nictuned.service)
  # veth forwards the peer's MTU plus a VLAN tag: 1504-byte packets pass.
  local said
  said=$(for u in "${units[@]}"; do journal "$u"; done; echo "$j")
  said=$(grep -Eo 'carries 1[0-9]{3}-byte packets at most' <<<"$said" | head -n 1)
  [[ -n $said ]] && ok "the journal says the path $said" ||
    bad "no 'carries N-byte packets at most' (N < 2000) in the journal"
  status_json || { bad "nictunectl status --json failed"; return; }
  if jq -e '(.pending // []) | length == 0' >/dev/null <<<"$STATUS"; then
    ok "nothing is left pending"
  else
    bad "pending transactions left: $(jq -c .pending <<<"$STATUS")"
  fi
  # Leave the guest as the other checks expect it.
  write_config false
  run timeout 60 systemctl reload nictuned.service
  ip netns del vpeer
  ip netns del vhole
}
