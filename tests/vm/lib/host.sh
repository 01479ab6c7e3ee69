# shellcheck shell=bash
# host.sh - what the host needs before a VM can be prepared: root, and Debian
# packages installed with apt (a CI machine starts from a clean Debian 12).

APT_UPDATED=0
APT_OPTS=(-q -o DPkg::Lock::Timeout=300 -o Acquire::Retries=3)

host_require_root() {
  [[ $(id -u) == 0 ]] || skip "run-vm needs root (qemu with a 9p export of /, apt-get); running as uid $(id -u)"
}

# apt_update_once: refresh the package lists at most once per run.
apt_update_once() {
  ((APT_UPDATED)) && return 0
  APT_UPDATED=1
  log "apt-get update"
  bounded 600 apt-get "${APT_OPTS[@]}" update >"$CACHE/apt-update.log" 2>&1 ||
    { log "apt-get update failed (see $CACHE/apt-update.log)"; return 1; }
}

# apt_lists_missing: true when apt has never been updated on this machine.
apt_lists_missing() {
  ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null
}

# host_missing_packages PKG...: print the ones not installed.
host_missing_packages() {
  local p status
  for p in "$@"; do
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null) || status=
    [[ $status == ii* ]] || echo "$p"
  done
}

apt_install_now() {
  DEBIAN_FRONTEND=noninteractive bounded 1200 apt-get "${APT_OPTS[@]}" install -y \
    --no-install-recommends "$@" >"$CACHE/apt-install.log" 2>&1
}

# host_install PKG...: install what is missing; returns non-zero when apt
# cannot install them (the caller decides whether that is a skip).
host_install() {
  local missing
  mapfile -t missing < <(host_missing_packages "$@")
  ((${#missing[@]})) || return 0
  log "installing host packages: ${missing[*]}"
  if apt_lists_missing; then apt_update_once || return 1; fi
  # A failed install is retried once after refreshing stale package lists.
  if apt_install_now "${missing[@]}" || { ((!APT_UPDATED)) && apt_update_once && apt_install_now "${missing[@]}"; }; then
    return 0
  fi
  log "apt-get install ${missing[*]} failed:"
  tail -n 5 "$CACHE/apt-install.log" >&2
  return 1
}

# host_prepare: the tools run-vm and the guest rely on (both modes, so that
# --prepare-only leaves a machine ready for either).
#  - qemu-system-x86: the VM; kmod: depmod for the guest's module tree;
#  - make, xz-utils: building netdevsim (the compiler comes from the kernel
#    headers' own dependencies, see kernel_build_deps);
#  - ethtool, iproute2, bash: guest scripts run the host's binaries;
#  - systemd, udev: systemd mode boots the host's systemd as PID 1 (both are
#    test tools too: systemd-analyze, the hwdb). The system bus's daemon and
#    units (package dbus) are a service: a guest package (run-vm adds it in
#    systemd mode, lib/packages.sh), never installed here.
host_prepare() {
  local pkgs=(qemu-system-x86 kmod make xz-utils ethtool iproute2 bash util-linux systemd udev)
  host_install "${pkgs[@]}" || skip "cannot install host packages with apt (${pkgs[*]})"
  command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not found after installing qemu-system-x86"
}
