#!/bin/bash
# suite-package.sh - guest script of the VM suite's package boot (systemd
# mode): the operator's path. The guest has what a Debian host has before
# nictune: the package's dependencies, bash-completion and Debian's
# prometheus-node-exporter (installed into the guest's overlay by the
# harness, run-vm --guest-packages), running under systemd. The checks then
# do what the README tells an operator:
#   apt install ./dist/nictune_VERSION_ARCH.deb
# and check what they get, then remove and purge it. Run by
# tests/operators/run-vm-package (ctest vm_boot_package); each check below is
# one CTest test (vm_package_<id>), judged from $HARNESS_OUT/results.txt.
#
# Environment (from run-vm-package):
#   NICTUNE_DEB           the .deb scripts/package built (a host path the guest sees)
#   NICTUNE_SECURITY_MAX  the highest exposure score the installed unit may have
#
# Checks, in this order (each needs the ones before it):
#   install       apt installs it; the unit is enabled and started by the package (not by
#                 the boot), READY, answering on the system bus; conffile; verify, exposure
#   journal       a binding in the shipped nictune.toml and a reload: applied, drift, rollback
#                 and failed events with their MESSAGE_IDs and fields; the catalog indexed by
#                 the package's trigger explains each (journalctl -x, --list-catalog)
#   metrics       nictune.prom in node_exporter's textfile directory, written from inside
#                 the sandboxed unit (ReadWritePaths=); node_exporter serves it, health
#                 figures included, without a scrape error
#   man           man nictunectl, nictuned, nictune.toml, nictune-profile render
#   completion    bash-completion loads nictunectl's completion on demand: subcommands,
#                 shipped profiles (from nictuned), interfaces; zsh's compinit finds its own
#   remove        apt-get remove: the service stopped, programs, unit, bus name, man pages,
#                 catalog and the metrics file gone; the conffile kept
#   purge         apt-get purge: the configuration and every trace of the package gone
set -u
# shellcheck source=lib.sh
. "$(dirname "$(readlink -f "$0")")/lib.sh"

DEB=${NICTUNE_DEB:-}
SECURITY_MAX=${NICTUNE_SECURITY_MAX:-2.0}
SRC_DIR=$(cd "$GUEST_DIR/../../.." && pwd)
UNIT=nictuned.service
TEXTFILE=/var/lib/prometheus/node-exporter
PROM=$TEXTFILE/nictune.prom
# Two veth pairs of the guest's own: one bound to a shipped profile, one to
# a profile the plan refuses (channels above the maximum: the failed event).
IF_OK=ntpkg0
IF_BAD=ntpkg1
: >"$RESULTS"

# The message IDs, from the catalog the package ships (its source here).
declare -A ID
while read -r _ id; do
  read -r subject
  case $subject in
    *"could not be applied"*) ID[failed]=$id ;;
    *" applied to "*) ID[applied]=$id ;;
    *"restored"*) ID[rolled_back]=$id ;;
    *"drifted"*) ID[drift]=$id ;;
  esac
done < <(grep -A1 '^-- [0-9a-f]\{32\}$' "$SRC_DIR/systemd/nictune.catalog" | grep -v '^--$')

# run_long SECONDS CMD...: like lib.sh's run, with a longer bound (apt and
# dpkg load the whole package database through 9p under TCG).
run_long() {
  local limit=$1
  shift
  echo "  \$ $*"
  RUN_OUT=$(timeout -k 10 "$limit" "$@" 2>&1)
  RUN_RC=$?
  [[ -n $RUN_OUT ]] && tail -n 40 <<<"$RUN_OUT" | sed 's/^/    /'
  echo "    [exit $RUN_RC]"
  return "$RUN_RC"
}
apt_get() {
  DEBIAN_FRONTEND=noninteractive run_long 1200 apt-get -y -o Dpkg::Use-Pty=0 "$@"
}
is_active() { [[ $(systemctl is-active "$UNIT" 2>/dev/null) == "$1" ]]; }
prop() { systemctl show -P "$1" "$UNIT" 2>/dev/null; }
journal_has() {  # journal_has JOURNALCTL-MATCHES... : one entry, as JSON, in JOURNAL
  JOURNAL=$(timeout 60 journalctl -b --no-pager -o json "$@" 2>/dev/null)
  [[ -n $JOURNAL ]]
}
metric_line() {  # metric_line TEXT PREFIX: the sample lines of TEXT starting with PREFIX
  grep -F -- "$2" <<<"$1" | grep -v '^#'
}
# What of the package could be left: the files it ships (its file list),
# and anything named after it where packages and daemons write (/etc, /var,
# /run; /usr is ~170,000 entries through 9p under TCG, so only the file
# list there). Compared before the install and after the purge.
traces() {
  local f
  while IFS= read -r f; do
    [[ -e $f && ! -d $f ]] && echo "$f"
  done < <(dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's#^\./#/#')
  find /etc /var /run \( -path /var/cache -o -path /var/tmp -o -path /var/log/journal \) -prune -o \
    \( -iname '*nictune*' -o -name 'org.nictune1*' \) -print 2>/dev/null
}

echo "suite-package: kernel $(uname -r), package $DEB"
state=$(timeout 240 systemctl is-system-running --wait 2>&1)
echo "systemd: is-system-running = $state"
[[ $state == running ]] || systemctl --failed --no-pager --no-legend 2>&1 | sed 's/^/  failed unit: /'
BEFORE_TRACES=$(traces | LC_ALL=C sort)
INSTALLED=0

# --- checks ----------------------------------------------------------------------

check_install() {
  [[ -f $DEB ]] || { bad "NICTUNE_DEB='$DEB' is not a file"; return; }
  if [[ -e /usr/sbin/nictuned || -n $(prop FragmentPath) ]]; then
    bad "nictune is on the guest before the package: $(ls -l /usr/sbin/nictuned 2>&1), unit $(prop FragmentPath)"
  fi
  # The guest's root is an overlay over the host's, and this host has a
  # container's /usr/sbin/policy-rc.d ("exit 101": start no service from a
  # package script). An operator's Debian host has none; without this, the
  # postinst enables nictuned.service but does not start it. Moved aside in
  # the overlay only.
  if [[ -e /usr/sbin/policy-rc.d ]]; then
    mv /usr/sbin/policy-rc.d /usr/sbin/policy-rc.d.host-disabled &&
      note "moved the host's /usr/sbin/policy-rc.d aside in the guest (it stops package scripts starting services)"
  fi
  local t0=$SECONDS
  # What the README tells the operator. Everything the package needs is on
  # the guest already (the guest has no network: a missing dependency fails
  # here with apt's message). Not --no-download: apt 2.6 then refuses a
  # local .deb ("Internal Error, Pathname to install is not absolute").
  apt_get install "$DEB"
  expect_rc 0 "apt-get install ./$(basename "$DEB") ($((SECONDS - t0)) s)"
  ((RUN_RC == 0)) || return
  INSTALLED=1
  local e
  e=$(systemctl is-enabled "$UNIT" 2>&1)
  [[ $e == enabled ]] && ok "$UNIT enabled by the package" || bad "systemctl is-enabled $UNIT: '$e'"
  if poll 120 is_active active; then
    ok "$UNIT started by the package (active, $(prop SubState))"
  else
    bad "$UNIT is '$(systemctl is-active "$UNIT")' 120 s after the install"
    timeout 30 journalctl -b --no-pager -u "$UNIT" -n 30 | sed 's/^/    journal: /'
  fi
  # Started by the install, not at boot: the unit did not exist then.
  local started boot_done
  started=$(prop ActiveEnterTimestampMonotonic)
  boot_done=$(systemctl show -P FinishTimestampMonotonic)
  if ((started > boot_done && boot_done > 0)); then
    ok "started after the boot had finished (at ${started} us, boot done at ${boot_done} us)"
  else
    bad "ActiveEnterTimestampMonotonic $started is not after the boot's end $boot_done"
  fi
  [[ $(prop Type) == notify && $(prop NRestarts) == 0 ]] && ok "Type=notify reached READY=1, no restarts" ||
    bad "Type $(prop Type), NRestarts $(prop NRestarts)"
  run timeout 60 nictunectl --color never status
  expect_rc 0 "nictunectl status over the system bus (the package's D-Bus policy)"
  expect_out "nictuned $(dpkg-deb -f "$DEB" Version)" "status names the packaged version"
  if dpkg-query -W -f='${Conffiles}\n' nictune | grep -q '^ /etc/nictune/nictune.toml '; then
    ok "/etc/nictune/nictune.toml is a conffile"
  else
    bad "conffiles: $(dpkg-query -W -f='${Conffiles}' nictune)"
  fi
  local frag
  frag=$(prop FragmentPath)
  run timeout 120 systemd-analyze verify --man=no "$frag"
  if ((RUN_RC == 0)) && ! grep -q . <<<"$RUN_OUT"; then
    ok "systemd-analyze verify $frag: clean"
  else
    bad "systemd-analyze verify $frag: exit $RUN_RC: $(head -c 300 <<<"$RUN_OUT")"
  fi
  local overall
  overall=$(timeout 120 systemd-analyze security --no-pager "$UNIT" 2>&1 |
    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  if [[ -n $overall ]] && awk -v o="$overall" -v m="$SECURITY_MAX" 'BEGIN { exit !(o <= m) }'; then
    ok "exposure of the running unit: $overall (at most $SECURITY_MAX)"
  else
    bad "systemd-analyze security: '$overall', want at most $SECURITY_MAX"
  fi
}

need_installed() { ((INSTALLED)) || { bad "the package is not installed (install failed)"; return 1; }; }

check_journal() {
  need_installed || return
  local id
  for id in applied rolled_back drift failed; do
    [[ ${ID[$id]:-} =~ ^[0-9a-f]{32}$ ]] || bad "no MESSAGE_ID for '$id' in $SRC_DIR/systemd/nictune.catalog"
  done
  cmp -s "$SRC_DIR/systemd/nictune.catalog" /usr/lib/systemd/catalog/nictune.catalog &&
    ok "the package ships systemd/nictune.catalog" || bad "/usr/lib/systemd/catalog/nictune.catalog differs from the source's"
  run ip link add name "$IF_OK" type veth peer name "${IF_OK}p"
  run ip link add name "$IF_BAD" type veth peer name "${IF_BAD}p"
  run ip link set "$IF_OK" up
  install -d -m 0755 /etc/nictune/profiles
  write_profile /etc/nictune/profiles vm-refused <<'EOF'
# More RX channels than veth has: the plan refuses it (the failed event).
[channels]
rx = 4096
EOF
  # The admin's edit of the shipped example: two bindings.
  printf '\n[[bind]]\nprofile = "jumbo-9014"\ninterface = "%s"\n\n[[bind]]\nprofile = "vm-refused"\ninterface = "%s"\n' \
    "$IF_OK" "$IF_BAD" >>/etc/nictune/nictune.toml
  run timeout 120 systemctl reload "$UNIT"
  expect_rc 0 "systemctl reload $UNIT"
  if poll 60 grep -qx 9014 "/sys/class/net/$IF_OK/mtu"; then
    ok "reload: jumbo-9014 applied to $IF_OK (MTU 9014)"
  else
    bad "$IF_OK has MTU $(mtu_of "$IF_OK") 60 s after the reload, want 9014"
  fi
  if poll 30 journal_has "MESSAGE_ID=${ID[applied]}" "INTERFACE=$IF_OK" PROFILE=jumbo-9014; then
    ok "journalctl MESSAGE_ID=${ID[applied]} INTERFACE=$IF_OK PROFILE=jumbo-9014"
    jq_check "applied: NICTUNE_RESULT=applied, NICTUNE_REASON=reload, NICTUNE_TRANSACTION set" \
      'select(.NICTUNE_RESULT != "applied" or .NICTUNE_REASON != "reload" or ((.NICTUNE_TRANSACTION // "") == "")) | "fields: \(.)"' \
      "$JOURNAL"
  else
    bad "no applied event (MESSAGE_ID=${ID[applied]}) for $IF_OK in the journal"
  fi
  if poll 30 journal_has "MESSAGE_ID=${ID[failed]}" "INTERFACE=$IF_BAD" PROFILE=vm-refused; then
    ok "journalctl MESSAGE_ID=${ID[failed]} INTERFACE=$IF_BAD: $(jq -r .NICTUNE_RESULT <<<"$JOURNAL" | head -n 1)"
  else
    bad "no failed event (MESSAGE_ID=${ID[failed]}) for $IF_BAD"
  fi
  run ip link set "$IF_OK" mtu 1500
  if poll 30 journal_has "MESSAGE_ID=${ID[drift]}" "INTERFACE=$IF_OK" SETTING=link.mtu; then
    jq_check "drift: NICTUNE_EXPECTED=9014 NICTUNE_ACTUAL=1500" \
      'select(.NICTUNE_EXPECTED != "9014" or .NICTUNE_ACTUAL != "1500") | "fields: \(.)"' "$JOURNAL"
  else
    bad "no drift event (MESSAGE_ID=${ID[drift]}) for $IF_OK SETTING=link.mtu"
  fi
  run timeout 60 nictunectl --color never rollback "$IF_OK"
  expect_rc 0 "nictunectl rollback $IF_OK"
  if poll 30 journal_has "MESSAGE_ID=${ID[rolled_back]}" "INTERFACE=$IF_OK"; then
    ok "journalctl MESSAGE_ID=${ID[rolled_back]} INTERFACE=$IF_OK (NICTUNE_REASON=$(jq -r .NICTUNE_REASON <<<"$JOURNAL" | tail -n 1))"
  else
    bad "no rolled-back event (MESSAGE_ID=${ID[rolled_back]}) for $IF_OK"
  fi
  # The catalog: indexed by systemd's dpkg trigger (journalctl --update-catalog).
  local catalog
  catalog=$(timeout 60 journalctl --list-catalog --no-pager 2>&1)
  for id in applied rolled_back drift failed; do
    grep -q "^${ID[$id]} nictune: " <<<"$catalog" && ok "journalctl --list-catalog: ${ID[$id]} ($id)" ||
      bad "journalctl --list-catalog has no nictune entry ${ID[$id]} ($id)"
  done
  local x
  x=$(timeout 60 journalctl -b -x --no-pager "MESSAGE_ID=${ID[applied]}" "INTERFACE=$IF_OK" 2>&1)
  sed 's/^/    journalctl -x: /' <<<"$x" | tail -n 14
  if grep -q "Subject: Profile jumbo-9014 applied to $IF_OK" <<<"$x" &&
    grep -q "Every setting was read" <<<"$x"; then
    ok "journalctl -x explains the applied event (the catalog's text, fields filled in)"
  else
    bad "journalctl -x shows no catalog text for MESSAGE_ID=${ID[applied]}"
  fi
}

check_metrics() {
  need_installed || return
  local owner
  owner=$(dpkg-query -S "$TEXTFILE" 2>/dev/null)
  [[ $owner == prometheus-node-exporter:* ]] && ok "$TEXTFILE comes from Debian's prometheus-node-exporter" ||
    bad "$TEXTFILE: dpkg -S says '$owner'"
  grep -qx -- "-$TEXTFILE" <<<"$(prop ReadWritePaths | tr ' ' '\n')" &&
    ok "the unit's ReadWritePaths= has -$TEXTFILE ($(prop ReadWritePaths))" ||
    bad "ReadWritePaths= of the running unit: '$(prop ReadWritePaths)'"
  # Written by the sandboxed daemon after the journal check's events settled.
  if poll 60 grep -q "^nictune_bound_profile_info{interface=\"$IF_OK\",profile=\"jumbo-9014\"" "$PROM"; then
    ok "$PROM written by nictuned (the bound profile of $IF_OK)"
  else
    bad "no nictune_bound_profile_info for $IF_OK in $PROM: $(ls -la "$TEXTFILE" 2>&1 | tr '\n' ';')"
    timeout 30 journalctl -b --no-pager -u "$UNIT" | grep -i metric | tail -n 5 | sed 's/^/    journal: /'
  fi
  local st
  st=$(stat -c '%U:%G %a' "$PROM" 2>&1)
  [[ $st == "root:root 644" ]] && ok "$PROM: $st" || bad "$PROM: '$st', want root:root 644"
  local leftovers
  leftovers=$(find "$TEXTFILE" -mindepth 1 ! -name '*.prom' 2>/dev/null)
  [[ -z $leftovers ]] && ok "no temporary file left in $TEXTFILE" || bad "left in $TEXTFILE: $leftovers"

  local e
  e=$(systemctl is-active prometheus-node-exporter.service)
  [[ $e == active ]] && ok "prometheus-node-exporter.service: active" || bad "prometheus-node-exporter.service: '$e'"
  local body=
  poll 60 curl -fsS -o /dev/null http://127.0.0.1:9100/metrics
  body=$(timeout 60 curl -fsS http://127.0.0.1:9100/metrics 2>&1)
  note "node_exporter: $(grep -c . <<<"$body") lines, $(grep -c '^nictune_' <<<"$body") of them nictune's"
  metric_line "$body" node_textfile_ | sed 's/^/    /'
  [[ $(metric_line "$body" 'node_textfile_scrape_error ') == "node_textfile_scrape_error 0" ]] &&
    ok "node_textfile_scrape_error 0" || bad "node_textfile_scrape_error: '$(metric_line "$body" node_textfile_scrape_error)'"
  local version
  version=$(dpkg-deb -f "$DEB" Version)
  local want
  # As node_exporter serves them (client_golang's text format): labels
  # sorted by name, values in Go's shortest form (125000000 is 1.25e+08).
  for want in "nictune_build_info{version=\"$version\"} 1" \
    "nictune_config_loaded 1" \
    "nictune_bound_profile_info{enforce=\"false\",interface=\"$IF_OK\",profile=\"jumbo-9014\"} 1" \
    "nictune_last_apply_result{interface=\"$IF_BAD\",profile=\"vm-refused\",result=\"refused\"} 1"; do
    grep -qxF -- "$want" <<<"$body" && ok "served: $want" || bad "node_exporter does not serve '$want'"
  done
  # The health figures of the audit: the e1000e NIC's negotiated speed
  # (qemu's 82574L links at 1000 Mb/s on its hub port).
  local e1k
  e1k=$(iface_by_driver e1000e)
  if [[ -n $e1k ]]; then
    want="nictune_health_link_speed_bytes_per_second{interface=\"$e1k\"} 1.25e+08"
    grep -qxF -- "$want" <<<"$body" && ok "served: $want" || {
      bad "node_exporter does not serve '$want'"
      metric_line "$body" "nictune_health_" | head -n 30 | sed 's/^/    /'
    }
  else
    bad "no e1000e interface in the guest"
  fi
}

check_man() {
  need_installed || return
  local page text
  for page in nictunectl nictuned nictune.toml nictune-profile; do
    text=$(MANWIDTH=80 timeout 60 man "$page" 2>&1)
    if (($? == 0)) && grep -q '^NAME' <<<"$text" && grep -qiF "${page^^}(" <<<"$(head -n 1 <<<"$text")"; then
      ok "man $page: $(grep -c . <<<"$text") lines ($(man -w "$page" 2>&1))"
    else
      bad "man $page: $(head -c 200 <<<"$text")"
    fi
  done
}

check_completion() {
  need_installed || return
  # As an interactive bash gets it: bash-completion's loader finds the file
  # by the command's name the first time <TAB> is pressed.
  complete_words() {
    timeout 60 bash --norc --noprofile -c '
      source /usr/share/bash-completion/bash_completion || exit 3
      complete -p nictunectl >/dev/null 2>&1 && { echo "loaded before use"; exit 4; }
      _completion_loader nictunectl
      complete -p nictunectl | grep -q -- "-F _nictunectl nictunectl$" || exit 5
      COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
      _nictunectl
      printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort | tr "\n" " "' bash "$@" 2>&1
  }
  local got
  got=$(complete_words nictunectl r)
  [[ $got == "reload rollback " ]] && ok "nictunectl r<TAB>: $got" || bad "nictunectl r<TAB>: '$got'"
  got=$(complete_words nictunectl apply x5)
  [[ $got == "x520-lowlatency x520-throughput " ]] && ok "nictunectl apply x5<TAB> (the shipped profiles, from nictuned): $got" ||
    bad "nictunectl apply x5<TAB>: '$got'"
  got=$(complete_words nictunectl audit ntpkg)
  [[ $got == "$IF_OK ${IF_OK}p $IF_BAD ${IF_BAD}p " ]] && ok "nictunectl audit ntpkg<TAB>: $got" ||
    bad "nictunectl audit ntpkg<TAB>: '$got'"
  # zsh: Debian's zsh finds _nictunectl on its own fpath (vendor-completions).
  local zdir
  zdir=$(timeout 60 zsh -f -c 'for d in $fpath; do [[ -f $d/_nictunectl ]] && print -r -- $d; done' 2>&1)
  [[ $zdir == /usr/share/zsh/vendor-completions ]] && ok "zsh's fpath has _nictunectl in $zdir" ||
    bad "zsh does not find _nictunectl on its fpath: '$zdir'"
  got=$(timeout 60 "$SRC_DIR/tests/operators/zsh-complete" "${zdir:-/nonexistent}" nictunectl apply x5 2>&1 |
    LC_ALL=C sort | tr '\n' ' ')
  [[ $got == "x520-lowlatency x520-throughput " ]] && ok "zsh: nictunectl apply x5<TAB>: $got" ||
    bad "zsh: nictunectl apply x5<TAB>: '$got'"
}

check_remove() {
  need_installed || return
  local pid
  pid=$(prop MainPID)
  apt_get remove nictune
  expect_rc 0 "apt-get remove nictune"
  is_active active && bad "$UNIT still active after the removal" || ok "$UNIT stopped ($(systemctl is-active "$UNIT" 2>&1))"
  [[ -n $pid && $pid != 0 && ! -e /proc/$pid ]] && ok "nictuned (pid $pid) is gone" || bad "nictuned pid '$pid' still runs"
  local f
  for f in /usr/bin/nictunectl /usr/sbin/nictuned /usr/lib/systemd/system/$UNIT \
    /usr/share/dbus-1/system.d/org.nictune1.conf /usr/share/man/man1/nictunectl.1.gz \
    /usr/share/bash-completion/completions/nictunectl /usr/lib/systemd/catalog/nictune.catalog; do
    [[ -e $f ]] && bad "$f is still there after the removal" || ok "removed: $f"
  done
  [[ $(prop LoadState) == not-found ]] && ok "systemd no longer knows $UNIT" || bad "$UNIT LoadState '$(prop LoadState)'"
  timeout 30 busctl --system status org.nictune1 >/dev/null 2>&1 && bad "org.nictune1 is still on the system bus" ||
    ok "org.nictune1 gone from the system bus"
  timeout 60 journalctl --list-catalog --no-pager 2>&1 | grep -q " nictune: " &&
    bad "journalctl --list-catalog still lists nictune's entries" || ok "the catalog index no longer has nictune's entries"
  # A metrics file left behind would be served by node_exporter for ever.
  [[ -e $PROM ]] && bad "$PROM is still there: node_exporter would serve stale metrics" || ok "removed: $PROM"
  [[ -f /etc/nictune/nictune.toml ]] && ok "the conffile /etc/nictune/nictune.toml stays (remove, not purge)" ||
    bad "/etc/nictune/nictune.toml is gone after a plain remove"
  [[ $(dpkg-query -W -f='${db:Status-Abbrev}' nictune 2>&1) == "rc " ]] && ok "dpkg: nictune rc (config files left)" ||
    bad "dpkg status: '$(dpkg-query -W -f='${db:Status-Abbrev}' nictune 2>&1)'"
}

check_purge() {
  need_installed || return
  # The test's own admin file (nictune.toml is the package's, edited).
  rm -f /etc/nictune/profiles/vm-refused.toml
  apt_get purge nictune
  expect_rc 0 "apt-get purge nictune"
  dpkg-query -W nictune >/dev/null 2>&1 && bad "dpkg still knows nictune: $(dpkg-query -W -f='${db:Status-Abbrev}' nictune)" ||
    ok "dpkg: nictune not installed, no config files"
  local after new
  after=$(traces | LC_ALL=C sort)
  new=$(comm -13 <(echo "$BEFORE_TRACES") <(echo "$after") | grep .)
  if [[ -z $new ]]; then
    ok "nothing of the package is left in /etc, /usr, /var, /run or /lib"
  else
    bad "left after the purge: $(tr '\n' ' ' <<<"$new")"
  fi
  local link
  for link in /etc/systemd/system/multi-user.target.wants/$UNIT /var/lib/systemd/deb-systemd-helper-enabled/$UNIT.dsh-also; do
    [[ -e $link || -L $link ]] && bad "$link is still there" || ok "gone: $link"
  done
  ip link del "$IF_OK" 2>/dev/null
  ip link del "$IF_BAD" 2>/dev/null
}

run_check install "apt installs the package: enabled and started, on the bus, conffile, verify" check_install
run_check journal "journal MESSAGE_IDs and fields; the catalog explains them" check_journal
run_check metrics "metrics from the sandboxed unit, served by node_exporter" check_metrics
run_check man "man pages render" check_man
run_check completion "bash-completion and zsh's compinit load nictunectl's completion" check_completion
run_check remove "apt-get remove stops it and removes it, keeping the conffile" check_remove
run_check purge "apt-get purge leaves nothing" check_purge
finish
