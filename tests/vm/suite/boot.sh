#!/bin/bash
# boot.sh plain|systemd - ctest vm_boot_plain / vm_boot_systemd: boots one VM
# and runs the suite's guest script for that mode (tests/vm/guest/suite-MODE.sh),
# which runs every check of the mode and writes $WORK/out-MODE/results.txt.
# The checks are judged one by one by result.sh (ctest vm_<check>), so this
# test passes when the VM ran the script to the end, whatever the checks said.
#
#   plain:   the build tree's nictunectl (NICTUNECTL) with --direct.
#   systemd: the build installed into $WORK/root with
#            `DESTDIR=$WORK/root cmake --install BIN --prefix /usr`, plus the
#            suite's profiles and nictune.toml (bind vm-boot to the e1000e NIC),
#            nictuned.service and tuned.service enabled (.vm-enable).
# Each guest gets GUEST_PACKAGES_MODE (common.sh) in its overlay.
# Exit: 0 the script ran to the end; 77 skip; 1 the VM or the script broke.
set -uo pipefail
# shellcheck source=common.sh
. "$(dirname "$(readlink -f "$0")")/common.sh"

MODE=${1:-}
[[ $MODE == plain || $MODE == systemd ]] || { echo "usage: $0 plain|systemd" >&2; exit 2; }
OUT=$WORK/out-$MODE
# Not root: nothing here may be touched (result.sh skips for the same reason).
[[ $(id -u) == 0 ]] || skip_now "the VM suite needs root (qemu, apt-get); running as uid $(id -u)"
rm -rf "$OUT"
mkdir -p "$OUT"

skip_boot() {
  echo "$*" >"$OUT/skipped"
  skip_now "$*"
}
[[ -f $WORK/skip ]] && skip_boot "$(cat "$WORK/skip")"

packages=GUEST_PACKAGES_$MODE
args=(--mode "$MODE" --quiet --out "$OUT" --guest-packages "${!packages}")
case $MODE in
  plain)
    NICTUNECTL=${NICTUNECTL:-$BIN/ctl/nictunectl}
    [[ -x $NICTUNECTL ]] || { say "FAIL: no nictunectl at $NICTUNECTL (build first)"; exit 1; }
    # The NIC behind a PCIe root port (x16 slot at 8 GT/s): real link
    # registers for the NIC and its slot (the health checks' PCIe reading).
    # Two CPUs: the health IRQ check moves the NIC's vectors between them.
    args+=(--timeout 600 --smp 2 --env "NICTUNECTL=$NICTUNECTL" --nic-root-port x-speed=8,x-width=16
      --env "NICTUNE_FACTS=$SRC/profiles/facts/driver-facts.toml")
    ;;
  systemd)
    root=$WORK/root
    rm -rf "$root"
    # --strip: the guest copies the tree into its RAM at boot, through 9p
    # (~80 MB of debug info otherwise, ~10 s under TCG).
    if ! log=$(DESTDIR=$root cmake --install "$BIN" --prefix /usr --strip 2>&1); then
      say "FAIL: DESTDIR=$root cmake --install $BIN --prefix /usr --strip"
      echo "$log"
      exit 1
    fi
    # The configuration nictuned reads is compiled in (NICTUNE_SYSCONFDIR);
    # a /usr install should read /etc/nictune. Ship it to both when they
    # differ: the installed_paths check reports the difference, the other
    # checks still test the daemon.
    sysconf=${NICTUNE_VM_SYSCONFDIR:-/etc/nictune}
    for d in /etc/nictune "$sysconf"; do
      install -d -m 0755 "$root$d/profiles"
      install -m 0644 "$VM_DIR"/guest/profiles/*.toml "$root$d/profiles/"
      install -m 0644 "$VM_DIR/guest/nictune.toml" "$root$d/nictune.toml"
    done
    # tuned comes from the guest packages; its own postinst enables it too.
    printf '%s\n' nictuned.service tuned.service >"$root/.vm-enable"
    # tuned (Python) starts in ~30 s under TCG on a quiet host; at load 14 on
    # 2 cores it passed systemd's default 90 s and failed (seen with the
    # host's tuned and with the guest package's alike).
    install -d -m 0755 "$root/etc/systemd/system/tuned.service.d"
    printf '[Service]\nTimeoutStartSec=600\n' >"$root/etc/systemd/system/tuned.service.d/50-nictune-vm.conf"
    args+=(--timeout 900 --install-dir "$root" --env "NICTUNE_VM_CONFIG=$sysconf/nictune.toml")
    ;;
esac

t0=$SECONDS
"$RUN_VM" "${args[@]}" --script "$VM_DIR/guest/suite-$MODE.sh"
rc=$?
say "run-vm --mode $MODE exited $rc after $((SECONDS - t0)) s"
[[ -f $OUT/results.txt ]] && cat "$OUT/results.txt"
case $rc in
  77) skip_boot "tests/vm/run-vm skipped (see its output above)" ;;
  0 | 1)
    if [[ $(tail -n 1 "$OUT/results.txt" 2>/dev/null) == DONE ]]; then
      exit 0
    fi
    say "FAIL: the guest script exited $rc without finishing its checks"
    exit 1
    ;;
  *)
    say "FAIL: the VM did not complete (run-vm exit $rc: 124 timeout, 125 guest crashed, 126 harness failure)"
    exit 1
    ;;
esac
