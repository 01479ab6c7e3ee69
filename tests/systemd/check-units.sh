#!/usr/bin/env bash
# check-units.sh CHECK: the checks behind `ctest -L units` (systemd/CMakeLists.txt).
#   verify    systemd-analyze verify of the test copies of nictuned.service (its
#             ExecStart= is the built daemon) and of an instance of
#             nictune-verify@.service (the built nictunectl); any message about
#             the unit fails
#   security  systemd-analyze security --offline=true: overall exposure at most
#             $NICTUNE_SECURITY_MAX (2.0) for nictuned.service and
#             $NICTUNE_VERIFY_SECURITY_MAX (2.5) for nictune-verify@.service,
#             which needs IP sockets; prints every exposure item left; the
#             verify unit must not get CAP_NET_ADMIN, nictuned no AF_INET
#   policy    the D-Bus policy and polkit action are well-formed XML (xmllint;
#             the polkit one against polkit's DTD: the host's, or else the one
#             in Debian's polkitd .deb, downloaded and unpacked in a temporary
#             directory, never installed: polkitd is a service); dbus-daemon
#             loads the policy on a private bus; as root, with
#             nictune_unit_probe owning org.nictune1 there: root may own the
#             name and call anything, nobody (uid 65534) may call the listed
#             methods and nothing else and may not own the name
#   install   DESTDIR installs with --prefix /usr and /opt/nictune: every file
#             in place, ExecStart= follows the prefix, the installed unit
#             verifies and scores like the test copy
# Exit 77 (skip) with the reason when a needed tool is missing.
# Environment (set by ctest): NICTUNE_SOURCE_DIR, NICTUNE_BINARY_DIR,
# NICTUNE_TEST_UNIT, NICTUNE_UNIT_PROBE, NICTUNE_SECURITY_MAX.
set -uo pipefail

check=${1:-}
SRC=${NICTUNE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${NICTUNE_BINARY_DIR:-$SRC/build}
UNIT=${NICTUNE_TEST_UNIT:-$BIN/systemd/test/nictuned.service}
VERIFY_UNIT=${NICTUNE_TEST_VERIFY_UNIT:-$BIN/systemd/test/nictune-verify@.service}
PROBE=${NICTUNE_UNIT_PROBE:-$BIN/systemd/nictune_unit_probe}
MAX=${NICTUNE_SECURITY_MAX:-2.0}
SD=$SRC/systemd

failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
skip() { echo "SKIP: $*"; exit 77; }
need() { command -v "$1" >/dev/null || skip "$1 not installed ($2)"; }
finish() {
  if ((failures)); then echo "$failures check(s) failed"; exit 1; fi
  exit 0
}

# verify_unit LABEL ARGS... UNIT: systemd-analyze verify; fails on a non-zero
# exit or any message that names the unit (warnings such as "Unknown key"
# leave the exit code at 0).
verify_unit() {
  local label=$1 out rc name
  shift
  name=$(basename "${*: -1}")
  out=$(systemd-analyze verify --man=no "$@" 2>&1)
  rc=$?
  if ((rc != 0)) || grep -qF "$name" <<<"$out"; then
    fail "$label: systemd-analyze verify (exit $rc)"
    echo "$out"
  else
    pass "$label: systemd-analyze verify"
    [[ -n $out ]] && echo "  (messages about other units: $out)"
  fi
}

# score_unit LABEL ARGS...: overall exposure <= MAX, enforced with --threshold
# (exact) and by the printed figure; prints the items that are not fully set.
score_unit() {
  local label=$1 table rc overall threshold
  shift
  threshold=$(awk -v m="$MAX" 'BEGIN { printf "%d", m * 10 }')
  table=$(systemd-analyze security --offline=true --no-pager --threshold="$threshold" "$@" 2>&1)
  rc=$?
  overall=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$table" | tail -n 1)
  if [[ -z $overall ]]; then
    fail "$label: no overall exposure in systemd-analyze security's output (exit $rc)"
    echo "$table"
    return
  fi
  if ((rc == 0)) && awk -v o="$overall" -v m="$MAX" 'BEGIN { exit !(o <= m) }'; then
    pass "$label: exposure $overall <= $MAX"
    echo "  exposure items left (weight as printed):"
    grep '✗' <<<"$table" | sed 's/^/    /'
  else
    fail "$label: exposure $overall, want <= $MAX (systemd-analyze exit $rc)"
    echo "$table"
  fi
}

check_verify() {
  need systemd-analyze "package systemd"
  [[ -f $UNIT ]] || { fail "no test unit $UNIT (build the nictune_test_unit target)"; finish; }
  verify_unit "test unit $(basename "$UNIT")" "$UNIT"
  # The template's placeholders are all substituted.
  if grep -n '@[A-Z_]*@' "$UNIT"; then fail "unsubstituted placeholders in $UNIT"; fi
  # A template is verified as an instance (a copy named like one: verify
  # reads the instance name from the file name).
  [[ -f $VERIFY_UNIT ]] || { fail "no test unit $VERIFY_UNIT (build the nictune_test_unit target)"; finish; }
  local vdir
  vdir=$(mktemp -d /tmp/nictune-verify-unit.XXXXXX)
  cp "$VERIFY_UNIT" "$vdir/nictune-verify@20261201T000000Z-1-0.service"
  verify_unit "test unit nictune-verify@.service (an instance)" "$vdir/nictune-verify@20261201T000000Z-1-0.service"
  rm -rf "$vdir"
  if grep -n '@[A-Z_]*@' "$VERIFY_UNIT"; then fail "unsubstituted placeholders in $VERIFY_UNIT"; fi
  if grep -q "^ExecStart=.*/nictunectl confirm %i$" "$VERIFY_UNIT"; then
    pass "nictune-verify@.service runs nictunectl confirm %i"
  else
    fail "nictune-verify@.service: ExecStart= is not nictunectl confirm %i"
  fi
  finish
}

check_security() {
  need systemd-analyze "package systemd"
  [[ -f $UNIT ]] || { fail "no test unit $UNIT (build the nictune_test_unit target)"; finish; }
  score_unit "test unit" "$UNIT"
  # The split: nictuned changes NICs and opens no IP socket; the verifier
  # opens IP sockets and cannot change a NIC.
  if grep -q '^RestrictAddressFamilies=AF_UNIX AF_NETLINK$' "$UNIT" && grep -q '^IPAddressDeny=any$' "$UNIT"; then
    pass "nictuned.service: no AF_INET/AF_INET6, IPAddressDeny=any"
  else
    fail "nictuned.service allows IP sockets or traffic"
  fi
  if [[ -f $VERIFY_UNIT ]]; then
    # (The unit's comments name CAP_NET_ADMIN; its settings must not.)
    if grep -q '^CapabilityBoundingSet=CAP_NET_RAW$' "$VERIFY_UNIT" &&
       ! grep -v '^[[:space:]]*#' "$VERIFY_UNIT" | grep -q 'CAP_NET_ADMIN'; then
      pass "nictune-verify@.service: CAP_NET_RAW only"
    else
      fail "nictune-verify@.service: the capability bounding set is not CAP_NET_RAW alone"
    fi
    MAX=${NICTUNE_VERIFY_SECURITY_MAX:-2.5} score_unit "test unit nictune-verify@.service" "$VERIFY_UNIT"
  else
    fail "no test unit $VERIFY_UNIT (build the nictune_test_unit target)"
  fi
  # For reference: systemd-networkd's own unit on this machine.
  local ref=/lib/systemd/system/systemd-networkd.service
  if [[ -f $ref ]]; then
    echo "  reference: $(systemd-analyze security --offline=true --no-pager "$ref" 2>/dev/null |
                       grep 'Overall exposure')"
  fi
  finish
}

# --- policy -------------------------------------------------------------------
BUS_PID=
PROBE_PID=
TMP=
cleanup() {
  [[ -n $PROBE_PID ]] && kill "$PROBE_PID" 2>/dev/null && wait "$PROBE_PID" 2>/dev/null
  [[ -n $BUS_PID ]] && kill "$BUS_PID" 2>/dev/null
  [[ -n $TMP ]] && rm -rf "$TMP"
}

# call EXPECT USER ARGS...: busctl call on the private bus as USER (root or
# nobody); EXPECT is "delivered" (the probe's answer came back) or "denied"
# (the bus refused it).
call() {
  local expect=$1 user=$2 out rc
  shift 2
  local cmd=(busctl --address="$ADDR" --timeout=10 call "$@")
  [[ $user == nobody ]] && cmd=(setpriv --reuid=65534 --regid=65534 --clear-groups "${cmd[@]}")
  out=$("${cmd[@]}" 2>&1)
  rc=$?
  local what="$user: ${*:2}"
  case $expect in
    delivered)
      if ((rc == 0)); then pass "$what -> delivered"; else fail "$what: want delivered, got: $out"; fi ;;
    denied)
      if ((rc != 0)) && grep -qiE 'denied|rejected' <<<"$out"; then
        pass "$what -> refused by the bus"
      else
        fail "$what: want refused by the bus, got (exit $rc): $out"
      fi ;;
  esac
}

# polkit_dtd DIR: print the path of polkit's policyconfig DTD, taken from
# the host or from polkitd's .deb unpacked in DIR; non-zero when apt cannot
# download it.
polkit_dtd() {
  local dtd=/usr/share/polkit-1/policyconfig-1.dtd dir=$1
  if [[ -f $dtd ]]; then echo "$dtd"; return 0; fi
  chmod 755 "$dir"   # apt downloads as _apt
  (cd "$dir" && timeout 300 apt-get -q download polkitd) >"$dir/apt.log" 2>&1 || {
    sed 's/^/  /' "$dir/apt.log" >&2
    return 1
  }
  dpkg-deb --fsys-tarfile "$dir"/polkitd_*.deb | tar -xOf - ./usr/share/polkit-1/policyconfig-1.dtd \
    >"$dir/policyconfig-1.dtd" && [[ -s $dir/policyconfig-1.dtd ]] || return 1
  echo "$dir/policyconfig-1.dtd"
}

check_policy() {
  local have=0
  if command -v xmllint >/dev/null; then
    have=1
    local f
    for f in org.nictune1.conf org.nictune1.policy; do
      if xmllint --noout --nonet "$SD/$f"; then pass "$f is well-formed XML"; else fail "$f is not well-formed XML"; fi
    done
    local dtd dtd_dir
    dtd_dir=$(mktemp -d /tmp/nictune-polkit-dtd-XXXXXX)
    if dtd=$(polkit_dtd "$dtd_dir"); then
      if xmllint --noout --nonet --dtdvalid "$dtd" "$SD/org.nictune1.policy"; then
        pass "org.nictune1.policy is valid against polkit's DTD ($dtd)"
      else
        fail "org.nictune1.policy is not valid against polkit's DTD ($dtd)"
      fi
    else
      fail "no polkit DTD: not on this host, and apt-get download polkitd failed"
    fi
    rm -rf "$dtd_dir"
  else
    echo "  (xmllint not installed, package libxml2-utils: XML checked by dbus-daemon only)"
  fi
  # The activation file: the keys dbus-daemon and systemd need.
  local key missing=0
  for key in '^\[D-BUS Service\]$' '^Name=org\.nictune1$' '^Exec=/bin/false$' '^User=root$' \
             '^SystemdService=nictuned\.service$'; do
    grep -qE "$key" "$SD/org.nictune1.service" || { fail "org.nictune1.service: no line matching $key"; missing=1; }
  done
  ((missing)) || pass "org.nictune1.service has Name, Exec=/bin/false, User=root, SystemdService=nictuned.service"
  if grep -q '<action id="org.nictune1.apply">' "$SD/org.nictune1.policy"; then
    pass "polkit action org.nictune1.apply is declared"
  else
    fail "no polkit action org.nictune1.apply"
  fi

  if ! command -v dbus-daemon >/dev/null; then
    ((have)) || skip "neither xmllint (libxml2-utils) nor dbus-daemon installed"
    echo "  (dbus-daemon not installed: policy not loaded)"
    finish
  fi
  TMP=$(mktemp -d /tmp/nictune-units.XXXXXX)
  chmod 755 "$TMP"
  trap cleanup EXIT
  # A private system-like bus: the tests' bus configuration (the default
  # policy of dbus's system.conf, then our file). dbus-daemon refuses to
  # start when an <include>d file is invalid.
  sed "s|@NICTUNE_DBUS_POLICY@|$SD/org.nictune1.conf|" \
    "$SRC/tests/data/dbus/system-bus.conf.in" >"$TMP/bus.conf"
  local out
  out=$(dbus-daemon --config-file="$TMP/bus.conf" --address="unix:path=$TMP/bus" --fork \
    --print-address=1 --print-pid=1 2>&1)
  ADDR=$(sed -n 1p <<<"$out")
  BUS_PID=$(sed -n 2p <<<"$out")
  if [[ $ADDR != unix:* || ! $BUS_PID =~ ^[0-9]+$ ]]; then
    BUS_PID=
    fail "dbus-daemon does not load org.nictune1.conf: $out"
    finish
  fi
  pass "dbus-daemon loads org.nictune1.conf"

  if [[ $(id -u) != 0 ]]; then
    echo "  (not root: the ownership and per-caller checks need uid 0 and setpriv; skipped)"
    finish
  fi
  command -v busctl >/dev/null || { echo "  (busctl not installed: calls not checked)"; finish; }
  command -v setpriv >/dev/null || { echo "  (setpriv not installed: calls not checked)"; finish; }
  [[ -x $PROBE ]] || { fail "no probe $PROBE (build nictune_unit_probe)"; finish; }

  DBUS_SYSTEM_BUS_ADDRESS=$ADDR "$PROBE" >"$TMP/probe.log" 2>&1 &
  PROBE_PID=$!
  local i
  for i in $(seq 50); do
    grep -q '^ready' "$TMP/probe.log" && break
    kill -0 "$PROBE_PID" 2>/dev/null || break
    sleep 0.1
  done
  if ! grep -q '^ready' "$TMP/probe.log"; then
    fail "root cannot own org.nictune1: $(cat "$TMP/probe.log")"
    finish
  fi
  pass "root owns org.nictune1"

  local M=(org.nictune1 /org/nictune1 org.nictune1.Manager)
  local P=(org.nictune1 /org/nictune1 org.freedesktop.DBus.Properties)
  local m
  for m in Audit Plan ListProfiles Status Apply Confirm Abort Rollback Reload; do
    call delivered nobody "${M[@]}" "$m"
  done
  call delivered nobody "${P[@]}" Get ss org.nictune1.Manager Version
  call delivered nobody "${P[@]}" GetAll s org.nictune1.Manager
  call delivered nobody org.nictune1 /org/nictune1 org.freedesktop.DBus.Introspectable Introspect
  call delivered nobody org.nictune1 /org/nictune1 org.freedesktop.DBus.Peer Ping
  call denied nobody "${P[@]}" Set ssv org.nictune1.Manager Version s x
  call denied nobody "${M[@]}" Frobnicate
  call denied nobody org.nictune1 /org/nictune1 org.example.Other Audit
  call denied nobody org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus RequestName su org.nictune1 4
  call delivered root "${M[@]}" Frobnicate
  call delivered root "${P[@]}" Set ssv org.nictune1.Manager Version s x
  # Root may own the name: the bus answers 3 (EXISTS: the probe has it), not AccessDenied.
  out=$(busctl --address="$ADDR" call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus RequestName su org.nictune1 4 2>&1)
  if [[ $out == "u 3" ]]; then pass "root: RequestName org.nictune1 -> allowed (3, exists)"; else fail "root: RequestName org.nictune1: $out"; fi
  finish
}

# --- install ------------------------------------------------------------------
# install_to PREFIX: DESTDIR install under the build tree; checks the files.
install_to() {
  local prefix=$1 root="$BIN/systemd/install-test${1//\//_}" out
  rm -rf "$root"
  if ! out=$(DESTDIR=$root cmake --install "$BIN" --prefix "$prefix" 2>&1); then
    fail "DESTDIR=$root cmake --install --prefix $prefix"
    echo "$out"
    return
  fi
  pass "DESTDIR install --prefix $prefix"
  local unit
  unit=$(find "$root" -path '*/systemd/system/nictuned.service' | head -n 1)
  if [[ -z $unit ]]; then
    fail "--prefix $prefix: no systemd/system/nictuned.service under $root"
    return
  fi
  pass "--prefix $prefix: unit at ${unit#"$root"}"
  local execstart
  execstart=$(sed -n 's/^ExecStart=//p' "$unit")
  if [[ $execstart == "$prefix/sbin/nictuned" && -x $root$execstart ]]; then
    pass "--prefix $prefix: ExecStart=$execstart, installed"
  else
    fail "--prefix $prefix: ExecStart=$execstart (want $prefix/sbin/nictuned, installed)"
  fi
  if grep -q "^ExecPaths=$prefix/sbin/nictuned /" "$unit"; then
    pass "--prefix $prefix: $(grep '^ExecPaths=' "$unit")"
  else
    fail "--prefix $prefix: ExecPaths= does not start with the daemon: $(grep '^ExecPaths=' "$unit")"
  fi
  local vunit
  vunit=$(find "$root" -path '*/systemd/system/nictune-verify@.service' | head -n 1)
  if [[ -n $vunit ]] && grep -q "^ExecStart=$prefix/bin/nictunectl confirm %i$" "$vunit" &&
     grep -q "^ExecPaths=$prefix/bin/nictunectl /" "$vunit"; then
    pass "--prefix $prefix: nictune-verify@.service runs $prefix/bin/nictunectl confirm %i"
  else
    fail "--prefix $prefix: nictune-verify@.service missing or not running $prefix/bin/nictunectl"
  fi
  local f dest
  for f in dbus-1/system.d/org.nictune1.conf dbus-1/system-services/org.nictune1.service \
           polkit-1/actions/org.nictune1.policy; do
    dest=$root$prefix/share/$f
    if cmp -s "$dest" "$SD/$(basename "$f")"; then pass "--prefix $prefix: $prefix/share/$f"; else fail "--prefix $prefix: $prefix/share/$f missing or different"; fi
  done
  if [[ $prefix == /usr ]] && command -v systemd-analyze >/dev/null; then
    # `verify --root` would need a whole system in the tree (sysinit.target,
    # /bin/kill): instead, the installed unit must be the verified test copy
    # with the daemon's path replaced.
    local built
    built=$(sed -n 's/^ExecStart=//p' "$UNIT")
    if [[ -n $built ]] && diff -u <(sed "s#${built%/*}/nictuned#$prefix/sbin/nictuned#g" "$UNIT") "$unit"; then
      pass "installed unit = verified test unit with ExecStart=$prefix/sbin/nictuned"
    else
      fail "installed unit differs from the test unit beyond the daemon's path (diff above)"
    fi
    score_unit "installed unit (--root)" --root="$root" nictuned.service
  fi
}

check_install() {
  need cmake "package cmake"
  [[ -f $BIN/cmake_install.cmake ]] || { fail "$BIN is not a configured build tree"; finish; }
  install_to /usr
  install_to /opt/nictune
  finish
}

case $check in
  verify) check_verify ;;
  security) check_security ;;
  policy) check_policy ;;
  install) check_install ;;
  *) echo "usage: $0 verify|security|policy|install" >&2; exit 2 ;;
esac
