# shellcheck shell=bash
# common.sh - shared by the VM suite's host-side scripts (prepare.sh, boot.sh,
# result.sh), which CTest runs (tests/vm/CMakeLists.txt, label vm).
#
# Environment (set by CTest, defaults for running by hand):
#   NICTUNE_SOURCE_DIR   the source tree (default: two levels above this dir)
#   NICTUNE_BINARY_DIR   the build tree (default: $NICTUNE_SOURCE_DIR/build)
#   NICTUNE_VM_WORK      where the suite keeps its state (default: BINARY_DIR/tests/vm)
#     skip               written by prepare.sh when this host cannot run VMs (the reason)
#     out-MODE/          a boot's results (results.txt, ID.log, ID.reasons)
#     root/              the tree the systemd boot copies over the guest's / (tuned's drop-in)
# shellcheck disable=SC2034  # used by the scripts that source this
SUITE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_DIR=$(dirname "$SUITE_DIR")
SRC=${NICTUNE_SOURCE_DIR:-$(cd "$VM_DIR/../.." && pwd)}
BIN=${NICTUNE_BINARY_DIR:-$SRC/build}
WORK=${NICTUNE_VM_WORK:-$BIN/tests/vm}
RUN_VM=$VM_DIR/run-vm
# What each boot's guest needs besides the host's tools, installed into the
# guest's overlay only (run-vm --guest-packages), never on the host: jq (the
# checks read nictune's JSON), irqbalance (vm_e1000e_irq_affinity), tuned
# (vm_tuned) and polkitd (vm_unprivileged);
# for the package checks of the systemd boot (vm_package_*), what an
# operator's Debian host has before nictune: bash-completion and zsh (the
# completion check). A package the host has already costs nothing. Not
# Debian's prometheus-node-exporter: its postinst runs adduser and
# deb-systemd-helper (perl) ~20 times, 50-140 s under TCG; the metrics check
# runs its binary, unpacked on the host (suite/boot.sh).
GUEST_PACKAGES_plain="jq irqbalance"
GUEST_PACKAGES_systemd="jq tuned polkitd bash-completion zsh"

say() { printf '[vm-suite] %s\n' "$*"; }

# skip_now REASON: this host cannot run the VM suite; not a failure.
skip_now() {
  say "SKIP: $*"
  exit 77
}
