#!/bin/bash
# package-units.sh - guest script (tests/vm/run-vm --mode systemd): the
# operator's path. Installs nictune's .deb ($NICTUNE_DEB, built by
# scripts/package) with dpkg into the guest's throwaway root and checks what
# an operator gets, under systemd as PID 1:
#   - dpkg installs it; the unit is enabled and running (dh_installsystemd's
#     postinst), READY=1 reached, nictunectl status answers on the system bus
#   - the installed unit verifies and scores <= $NICTUNE_SECURITY_MAX online
#   - /etc/nictune/nictune.toml is a conffile; a binding added there and a
#     reload tune a dummy interface; journalctl MESSAGE_ID= finds the applied
#     and drift events, and journalctl's catalog (indexed by systemd's dpkg
#     trigger) explains them
#   - metrics: with /var/lib/prometheus/node-exporter present, nictune.prom
#     appears there after a restart
#   - man nictunectl (and the other three pages) render; the bash completion
#     completes subcommands
#   - dpkg --remove stops the service, --purge removes the conffile
# Run by tests/operators/run-vm-package (not yet in ctest: see its header).
# Exits non-zero naming each failed check; writes $HARNESS_OUT/package-vm.txt.
set -u

MODE=${HARNESS_MODE:-plain}
SUMMARY=${HARNESS_OUT:-/tmp}/package-vm.txt
DEB=${NICTUNE_DEB:-}
MAX=${NICTUNE_SECURITY_MAX:-2.0}
UNIT=nictuned.service
IFACE=ntpkg0
APPLIED_ID=049c911bfe3d4497be65b67ac0d9bcb4
DRIFT_ID=8433f0fc3d4c4448ba84f4e29cd04d30
export SYSTEMD_PAGER=cat SYSTEMD_COLORS=0 TERM=dumb
FAILED=()

: >"$SUMMARY"
say() { echo "$*"; echo "$*" >>"$SUMMARY"; }
pass() { say "PASS: $*"; }
fail() { say "FAIL: $*"; FAILED+=("$1"); }
poll() {
  local tries=$(($1 * 5))
  shift
  while ((tries-- > 0)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}
is_active() { [[ $(systemctl is-active "$UNIT") == "$1" ]]; }

[[ $MODE == systemd ]] || { echo "SKIP: needs --mode systemd"; exit 77; }
[[ -f $DEB ]] || { fail "NICTUNE_DEB='$DEB' is not a file"; exit 1; }
systemctl is-system-running --wait >/dev/null 2>&1

# --- install ----------------------------------------------------------------------
mkdir -p /var/lib/prometheus/node-exporter
if out=$(DEBIAN_FRONTEND=noninteractive dpkg -i "$DEB" 2>&1); then
  pass "dpkg -i $(basename "$DEB")"
else
  fail "dpkg -i: $out"
  exit 1
fi
[[ $(systemctl is-enabled "$UNIT" 2>&1) == enabled ]] && pass "$UNIT enabled by the package" \
  || fail "is-enabled: $(systemctl is-enabled "$UNIT" 2>&1)"
if poll 60 is_active active; then pass "$UNIT started by the package"; else
  fail "is-active: $(systemctl is-active "$UNIT"); $(journalctl -u "$UNIT" -n 20 --no-pager)"
fi
if poll 30 nictunectl status; then pass "nictunectl status answers on the system bus"; else
  fail "nictunectl status: $(nictunectl status 2>&1)"
fi
frag=$(systemctl show -P FragmentPath "$UNIT")
out=$(systemd-analyze verify --man=no "$UNIT" 2>&1)
if (($? == 0)) && ! grep -q "$UNIT" <<<"$out"; then pass "systemd-analyze verify ($frag)"; else
  fail "verify: $out"
fi
overall=$(systemd-analyze security --no-pager "$UNIT" 2>&1 \
          | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
if [[ -n $overall ]] && awk -v o="$overall" -v m="$MAX" 'BEGIN { exit !(o <= m) }'; then
  pass "exposure of the installed unit: $overall"
else
  fail "security: '$overall', want <= $MAX"
fi
grep -qx /etc/nictune/nictune.toml /var/lib/dpkg/info/nictune.conffiles \
  && pass "/etc/nictune/nictune.toml is a conffile" || fail "conffiles"

# --- a binding, its journal events and their catalog -------------------------------
modprobe dummy 2>/dev/null
ip link del "$IFACE" 2>/dev/null
ip link add name "$IFACE" type dummy && ip link set "$IFACE" up
cat >>/etc/nictune/nictune.toml <<EOF

[[bind]]
profile = "jumbo-9014"
interface = "$IFACE"
EOF
systemctl reload "$UNIT"
if poll 30 sh -c "ip -o link show $IFACE | grep -q 'mtu 9014'"; then
  pass "reload: the bound profile is applied to $IFACE"
else
  fail "binding: $(ip -o link show "$IFACE"); $(journalctl -u "$UNIT" -n 20 --no-pager)"
fi
if poll 10 sh -c "journalctl -o json MESSAGE_ID=$APPLIED_ID INTERFACE=$IFACE | grep -q jumbo-9014"; then
  pass "journalctl MESSAGE_ID=$APPLIED_ID INTERFACE=$IFACE"
else
  fail "journal: no applied event for $IFACE"
fi
ip link set "$IFACE" mtu 1500
if poll 10 sh -c "journalctl -o json MESSAGE_ID=$DRIFT_ID INTERFACE=$IFACE SETTING=link.mtu | grep -q NICTUNE_ACTUAL"; then
  pass "journalctl MESSAGE_ID=$DRIFT_ID: the drift, with its fields"
else
  fail "journal: no drift event for $IFACE"
fi
if journalctl -x --no-pager MESSAGE_ID=$APPLIED_ID | grep -q "Every setting was read"; then
  pass "journalctl -x shows the catalog entry (indexed by the package's trigger)"
else
  fail "catalog: $(journalctl --list-catalog | grep nictune)"
fi

# --- metrics --------------------------------------------------------------------------
if poll 30 test -s /var/lib/prometheus/node-exporter/nictune.prom \
   && grep -q "nictune_bound_profile_info{interface=\"$IFACE\",profile=\"jumbo-9014\"" \
        /var/lib/prometheus/node-exporter/nictune.prom; then
  pass "nictune.prom written in node_exporter's textfile directory (the sandbox allows it)"
else
  fail "metrics: $(ls -la /var/lib/prometheus/node-exporter); $(journalctl -u "$UNIT" -n 10 --no-pager | grep metrics)"
fi

# --- man pages, completion -------------------------------------------------------------
for page in nictunectl nictuned nictune.toml nictune-profile; do
  if MANWIDTH=80 man "$page" 2>/dev/null | grep -q .; then pass "man $page"; else fail "man $page"; fi
done
comp=$(bash -c 'source /usr/share/bash-completion/completions/nictunectl; COMP_WORDS=(nictunectl r); COMP_CWORD=1; _nictunectl; echo "${COMPREPLY[*]}"')
[[ $comp == "rollback reload" ]] && pass "bash completion: nictunectl r<TAB> -> $comp" \
  || fail "completion: '$comp'"

# --- remove, purge -------------------------------------------------------------------------
ip link del "$IFACE" 2>/dev/null
if dpkg --remove nictune >/dev/null 2>&1 && ! is_active active; then
  pass "dpkg --remove stops $UNIT"
else
  fail "remove: $(systemctl is-active "$UNIT")"
fi
if dpkg --purge nictune >/dev/null 2>&1 && [[ ! -e /etc/nictune/nictune.toml ]]; then
  pass "dpkg --purge removes the conffile"
else
  fail "purge: $(ls -la /etc/nictune 2>&1)"
fi

if ((${#FAILED[@]})); then
  say "${#FAILED[@]} check(s) failed: ${FAILED[*]}"
  exit 1
fi
say "all package checks passed"
