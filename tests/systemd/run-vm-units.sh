#!/usr/bin/env bash
# run-vm-units.sh: installs the build tree into a DESTDIR tree with
# --prefix /usr, as a package would, and runs tests/systemd/vm-units.sh in the
# VM harness with systemd as PID 1 (tests/vm/README.md). ctest: units_vm
# (labels vm, systemd-vm). Exits 77 (skip) when the harness cannot run here.
# Environment: NICTUNE_SOURCE_DIR, NICTUNE_BINARY_DIR, NICTUNE_UNIT_PROBE.
set -uo pipefail

SRC=${NICTUNE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${NICTUNE_BINARY_DIR:-$SRC/build}
PROBE=${NICTUNE_UNIT_PROBE:-$BIN/systemd/nictune_unit_probe}

[[ $(id -u) == 0 ]] || { echo "SKIP: the VM harness needs root"; exit 77; }
[[ -x $PROBE ]] || { echo "FAIL: no probe $PROBE (build nictune_unit_probe)"; exit 1; }

root=$BIN/systemd/vm-root
out=$BIN/systemd/vm-out
rm -rf "$root" "$out"
mkdir -p "$out"
if ! log=$(DESTDIR=$root cmake --install "$BIN" --prefix /usr 2>&1); then
  echo "FAIL: DESTDIR=$root cmake --install $BIN --prefix /usr"
  echo "$log"
  exit 1
fi
# The probe goes into the installed tree: the unit's PrivateTmp= hides a
# build tree under /tmp (a clone in /tmp, as CI may make) from the service.
install -D -m 0755 "$PROBE" "$root/usr/libexec/nictune/nictune_unit_probe"
# polkitd only in the guest's overlay (a service: never on the host), so that
# polkit's view of the installed action is checked on every host.
"$SRC/tests/vm/run-vm" --mode systemd --timeout 900 --quiet --out "$out" \
  --guest-packages polkitd --install-dir "$root" --env "NICTUNE_UNIT_PROBE=/usr/libexec/nictune/nictune_unit_probe" \
  --script "$SRC/tests/systemd/vm-units.sh"
rc=$?
[[ -f $out/units-vm.txt ]] && cat "$out/units-vm.txt"
exit $rc
