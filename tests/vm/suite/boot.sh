#!/bin/bash
# boot.sh plain|systemd - ctest vm_boot_plain / vm_boot_systemd: boots one VM
# and runs the suite's guest script for that mode (tests/vm/guest/suite-MODE.sh),
# which runs every check of the mode and writes $WORK/out-MODE/results.txt.
# The checks are judged one by one by result.sh (ctest vm_<check>), so this
# test passes when the VM ran the script to the end, whatever the checks said.
#
#   plain:   the build tree's nictunectl (NICTUNECTL) with --direct.
#   systemd: the Debian package debian_package built (BIN/dist/nictune_*.deb),
#            installed by the guest script with dpkg under systemd; skips (77)
#            when there is none. $WORK/root holds only the guest's tuned
#            drop-in (tuned.service enabled, .vm-enable).
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
    # The operator's path (issue 18): the .deb debian_package built and
    # checked (scripts/package into BIN/dist; ctest fixture nictune_deb).
    # The guest script installs it with dpkg under the running systemd, runs
    # every systemd check against the packaged daemon, unit, D-Bus policy and
    # polkit action, then the package's own checks, removal and purge. It is
    # never installed on this host.
    command -v dpkg-parsechangelog >/dev/null && command -v dpkg-architecture >/dev/null ||
      skip_boot "no dpkg-parsechangelog/dpkg-architecture (dpkg-dev): the .deb this boot installs cannot have been built (debian_package skips without the packaging tools)"
    version=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version) &&
      arch=$(dpkg-architecture -q DEB_HOST_ARCH) || { say "FAIL: cannot read the package version from $SRC/debian/changelog"; exit 1; }
    deb=$BIN/dist/nictune_${version}_$arch.deb
    [[ -f $deb ]] || skip_boot "no $deb: the debian_package test (tests/operators/check-package, scripts/package) builds it; it was skipped (no dpkg-dev or packaging tools) or did not run, so there is no package to install"
    # What of the package's dependencies this host lacks (as `apt-get
    # install ./DEB` would add them here; usually none, the build needs the
    # libraries): guest packages too. Nothing is installed (-s).
    if ! plan=$(LC_ALL=C apt-get -s install "$deb" 2>&1); then
      say "FAIL: apt-get -s install $deb: $(tail -n 5 <<<"$plan")"
      exit 1
    fi
    deps=$(awk '$1 == "Inst" && $2 != "nictune" { n = $2; sub(/:.*/, "", n); print n }' <<<"$plan" | tr '\n' ' ')
    say "package $deb; its dependencies missing on this host: ${deps:-none}"
    # node_exporter for the metrics check: Debian's binary, unpacked on this
    # host (tests/operators/fetch-node-exporter, as the integration test
    # gets it), run by the guest script. Without it that check fails and
    # says why; the other checks run.
    node_exporter=$("$SRC/tests/operators/fetch-node-exporter" "$BIN/test-cache/node-exporter" 2>"$OUT/fetch-node-exporter.log") ||
      { say "no node_exporter for vm_package_metrics: $(cat "$OUT/fetch-node-exporter.log")"; node_exporter=; }
    root=$WORK/root
    rm -rf "$root"
    # Not the package's: tuned (Python) starts in ~30 s under TCG on a quiet
    # host; at load 14 on 2 cores it passed systemd's default 90 s and
    # failed. tuned comes from the guest packages; its postinst enables it.
    install -d -m 0755 "$root/etc/systemd/system/tuned.service.d"
    printf '[Service]\nTimeoutStartSec=600\n' >"$root/etc/systemd/system/tuned.service.d/50-nictune-vm.conf"
    printf '%s\n' tuned.service >"$root/.vm-enable"
    args+=(--timeout 1200 --install-dir "$root" --guest-dpkg --guest-packages "$deps"
      --env "NICTUNE_DEB=$deb" --env "NICTUNE_SECURITY_MAX=${NICTUNE_SECURITY_MAX:-2.0}"
      --env "NICTUNE_NODE_EXPORTER=$node_exporter")
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
