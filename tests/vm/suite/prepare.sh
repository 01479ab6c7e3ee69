#!/bin/bash
# prepare.sh - ctest vm_prepare (FIXTURES_SETUP vm_cache): fills the VM
# harness's cache (guest kernel, netdevsim, initramfs, accelerator probe) and
# installs on the host what the guests use besides the harness's own packages:
# jq (the guest checks read nictune's JSON with it) and tuned (the guest sees
# the host's filesystem; tuned.service runs only inside the VM, the host's
# systemd, if any, is not asked to start it).
# Exit: 0 ready; 77 skip (the reason is in $WORK/skip and printed); 1 failure.
set -uo pipefail
# shellcheck source=common.sh
. "$(dirname "$(readlink -f "$0")")/common.sh"

# Not root: touch nothing (boot.sh and result.sh skip for the same reason).
[[ $(id -u) == 0 ]] || skip_now "the VM suite needs root (qemu, apt-get); running as uid $(id -u)"
mkdir -p "$WORK"
rm -f "$WORK/skip" "$WORK/tuned-missing"
mark_skip() {
  echo "$*" >"$WORK/skip"
  skip_now "$*"
}

t0=$SECONDS
"$RUN_VM" --prepare-only
rc=$?
case $rc in
  0) ;;
  77) mark_skip "tests/vm/run-vm --prepare-only skipped: this host cannot run VMs (see its output above)" ;;
  *) say "FAIL: tests/vm/run-vm --prepare-only exited $rc"; exit 1 ;;
esac

# The harness's apt helpers: bounded, update lists only when needed.
# shellcheck source=../lib/common.sh
. "$VM_DIR/lib/common.sh"
# shellcheck source=../lib/host.sh
. "$VM_DIR/lib/host.sh"
# shellcheck disable=SC2034  # read by host.sh
CACHE=${NICTUNE_VM_CACHE:-/var/tmp/nictune-vm}
if ! host_install jq; then
  say "FAIL: cannot install jq on the host (the guest checks need it)"
  exit 1
fi
if host_install tuned && [[ -f /lib/systemd/system/tuned.service ]]; then
  say "tuned $(dpkg-query -W -f='${Version}' tuned) installed on the host (used in the systemd guest only)"
else
  echo "apt-get could not install tuned on this host" >"$WORK/tuned-missing"
  say "WARNING: could not install tuned; the vm_tuned test will fail"
fi
say "prepared in $((SECONDS - t0)) s"
exit 0
