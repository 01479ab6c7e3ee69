#!/bin/bash
# prepare.sh - ctest vm_prepare (FIXTURES_SETUP vm_cache): fills the VM
# harness's cache (guest kernel, netdevsim, initramfs, accelerator probe, and
# the .debs of the guest packages both boots install into their overlays:
# GUEST_PACKAGES_* in common.sh). Nothing is installed on the host but the
# harness's own tools (qemu, kmod...; lib/host.sh).
# Exit: 0 ready; 77 skip (the reason is in $WORK/skip and printed); 1 failure.
set -uo pipefail
# shellcheck source=common.sh
. "$(dirname "$(readlink -f "$0")")/common.sh"

# Not root: touch nothing (boot.sh and result.sh skip for the same reason).
[[ $(id -u) == 0 ]] || skip_now "the VM suite needs root (qemu, apt-get); running as uid $(id -u)"
mkdir -p "$WORK"
rm -f "$WORK/skip"
mark_skip() {
  echo "$*" >"$WORK/skip"
  skip_now "$*"
}

t0=$SECONDS
# shellcheck disable=SC2153  # GUEST_PACKAGES_* come from common.sh
"$RUN_VM" --prepare-only --guest-packages "$GUEST_PACKAGES_plain $GUEST_PACKAGES_systemd"
rc=$?
case $rc in
  0) ;;
  77) mark_skip "tests/vm/run-vm --prepare-only skipped: this host cannot run VMs (see its output above)" ;;
  *) say "FAIL: tests/vm/run-vm --prepare-only exited $rc"; exit 1 ;;
esac

say "prepared in $((SECONDS - t0)) s"
exit 0
