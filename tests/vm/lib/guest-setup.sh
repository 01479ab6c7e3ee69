#!/bin/bash
# guest-setup.sh RUN_DIR - runs in the guest, chrooted into the overlay root
# (the host's filesystem with a throwaway tmpfs on top), as root, with the
# host's tools, before the payload: the script (plain mode) or systemd.
# Everything it changes lives in the guest's tmpfs; the host is read-only.
set -euo pipefail

RUN=$1
# shellcheck source=/dev/null  # written by run-vm
. "$RUN/boot.conf"

note() { echo "[guest-setup] $*"; }

# The harness's own files, at a fixed guest path that units can name.
mkdir -p /nictune-vm
cp "$RUN/run.conf" /nictune-vm/run.conf
cp "$LIBDIR/guest-run.sh" /nictune-vm/run.sh

# Markers that make systemd (and systemd-detect-virt) believe it runs in a
# container, inherited from a host that is one.
rm -f /.dockerenv /.containerenv /run/.containerenv
echo nictune-vm >/etc/hostname

# A fresh machine id: the guest is neither the host nor a first boot.
tr -d '-' </proc/sys/kernel/random/uuid >/etc/machine-id

install_tree() {   # the project installed with `cmake --install` into DESTDIR
  local dir=$1
  [[ -d $dir ]] || { note "install dir $dir does not exist"; return 1; }
  note "installing $dir into /"
  # --keep-directory-symlink: /lib, /bin, /sbin are symlinks into /usr on
  # Debian 12; a DESTDIR with lib/systemd/system must not replace them.
  tar -C "$dir" --exclude=./.vm-enable -cf - . |
    tar -C / --keep-directory-symlink --no-overwrite-dir -xpf -
  if find "$dir" -name '*.so*' -print -quit | grep -q .; then
    ldconfig
  fi
}

# The guest packages (run-vm --guest-packages): .debs in the host's cache,
# installed into this overlay. dpkg runs before any systemd of the guest, so
# package scripts enable units (symlinks) but start nothing (policy-rc.d);
# in systemd mode the host's /run (seen through 9p until systemd mounts its
# own) is covered first, so that deb-systemd-invoke does not mistake the
# host's systemd for the guest's.
#
# dpkg runs on a database of its own in the overlay (--admindir): the host's
# status (so dependencies are checked against what the host has installed)
# and an empty file list per installed package. Measured under TCG at load
# ~14: dpkg -i of one small package on the host's database took 45-64 s,
# nearly all of it loading the 140,000 files of the host's ~1,000 packages
# through 9p, and the ldconfig trigger another 68 s. With no file lists and
# no trigger interests of the host's packages, neither happens: the loader
# finds new libraries in the default multiarch paths without ld.so.cache,
# and nothing else the host's triggers do (man-db, daemon reloads) matters
# before the guest boots. Docs and man pages are not unpacked. Afterwards the
# new state is copied into the guest's /var/lib/dpkg, so dpkg in the guest
# knows the packages.
# --guest-dpkg: the guest script itself installs and removes packages with
# dpkg under the running systemd (the operator's path for nictune's .deb).
# Measured under TCG (2026-12-01, the package boot): `apt-get install
# ./nictune.deb` took 564 s: ~60 s to the postinst (apt rebuilding its cache
# from the host's lists, dpkg "Reading database ... 142479 files" through
# 9p), ~500 s in the man-db trigger (mandb -pq walking the host's 100 MB of
# man pages through 9p). So in the guest's overlay: the host's packages keep
# their status, maintainer scripts and trigger interests, but their file
# lists are emptied (dpkg reads only the guest packages' lists; `dpkg -S`
# knows only those), and man-db/auto-update is off (Debian's own switch:
# the trigger then says "Not building database"; `man PAGE` still finds
# pages by their paths). The guest packages' own trigger interests are
# merged in after their install (install_guest_packages).
light_dpkg_db() {
  [[ ${GUEST_DPKG:-0} == 1 ]] || return 0
  local t0=$SECONDS f n=0
  # ": >" opens with O_TRUNC: overlayfs copies such a file up without its data.
  for f in /var/lib/dpkg/info/*.list; do
    : >"$f"
    n=$((n + 1))
  done
  rm -f /var/lib/man-db/auto-update
  note "guest dpkg database: $n host file lists emptied, man-db auto-update off ($((SECONDS - t0)) s)"
}

install_guest_packages() {
  light_dpkg_db
  [[ -n ${GUEST_DEBS:-} ]] || return 0
  local debs t0=$SECONDS policy=/usr/sbin/policy-rc.d ours=0 admin=/nictune-vm/dpkg
  read -r -a debs <<<"$GUEST_DEBS"
  note "installing ${#debs[@]} guest packages: $(printf '%s\n' "${debs[@]##*/}" | sed 's/_.*//' | tr '\n' ' ')"
  mountpoint -q /run || mount -t tmpfs -o mode=0755,nosuid,nodev run /run
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    ours=1
  fi
  mkdir -p "$admin/info" "$admin/updates" "$admin/triggers"
  cp /var/lib/dpkg/status "$admin/status"
  : >"$admin/available"
  cp -a /var/lib/dpkg/diversions /var/lib/dpkg/statoverride "$admin/" 2>/dev/null || true
  (cd "$admin/info" && find /var/lib/dpkg/info -maxdepth 1 -name '*.list' -printf '%f\0' | xargs -0 -r touch)
  # Up to three passes: dpkg -i does not order a Pre-Depends among the
  # packages it is given (on a host without gawk, gawk comes with its
  # pre-dependency libsigsegv2: "pre-dependency problem - not installing
  # gawk", then tuned is left unconfigured). The first pass configures the
  # pre-dependency, the next installs what waited for it.
  local pass installed=0
  : >/nictune-vm/dpkg.log
  for pass in 1 2 3; do
    if DEBIAN_FRONTEND=noninteractive dpkg --admindir="$admin" --force-confdef --force-confold \
        --path-exclude='/usr/share/doc/*' --path-exclude='/usr/share/man/*' \
        --path-exclude='/usr/share/locale/*' -i "${debs[@]}" >>/nictune-vm/dpkg.log 2>&1; then
      installed=1
      break
    fi
    echo "[guest-setup] dpkg -i pass $pass did not install every package; again" >>/nictune-vm/dpkg.log
  done
  if ((!installed)); then
    tail -n 40 /nictune-vm/dpkg.log
    note "dpkg -i of the guest packages failed (3 passes)"
    return 1
  fi
  ((pass == 1)) || note "guest packages installed in $pass dpkg passes (a Pre-Depends among them)"
  cp "$admin/status" /var/lib/dpkg/status
  find "$admin/info" -maxdepth 1 -type f -size +0 -exec cp -a -t /var/lib/dpkg/info/ {} +
  # The guest packages' trigger interests (dbus's, if it is one), for the
  # packages the guest script installs later.
  if [[ ${GUEST_DPKG:-0} == 1 && -s $admin/triggers/File ]]; then
    sort -u "$admin/triggers/File" /var/lib/dpkg/triggers/File >/nictune-vm/triggers.File
    cp /nictune-vm/triggers.File /var/lib/dpkg/triggers/File
  fi
  ((ours)) && rm -f "$policy"
  note "guest packages installed in $((SECONDS - t0)) s"
}

units_to_enable() {   # --enable units, then DIR/.vm-enable (one per line, # comments)
  local u
  for u in ${ENABLE_UNITS:-}; do echo "$u"; done
  if [[ -n ${INSTALL_DIR:-} && -f $INSTALL_DIR/.vm-enable ]]; then
    sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$INSTALL_DIR/.vm-enable" | grep -v '^$' || true
  fi
}

setup_systemd() {
  local sys=/etc/systemd/system
  # No disks in the guest: the host's fstab would only make systemd wait.
  : >/etc/fstab
  # Debian's tmp.conf says "D /tmp": it would empty /tmp at boot, i.e. hide
  # the host's /tmp (where tests often keep their scripts and fixtures).
  mkdir -p /etc/tmpfiles.d
  echo 'd /tmp 1777 root root -' >/etc/tmpfiles.d/tmp.conf
  # Units the host's administrator enabled (databases, timers...) are not part
  # of the system under test; start from the distribution's defaults.
  if [[ ${KEEP_HOST_UNITS:-0} != 1 ]]; then
    find "$sys" -mindepth 2 -maxdepth 2 -path "$sys/*.wants/*" -delete
  fi
  # After that: what a package enables is the distribution's default.
  install_guest_packages
  # No login prompts on the console the harness reads, and none of the boot
  # chores that mean nothing in a diskless throwaway VM (every process costs
  # ~0.3 s under TCG): fstab remounts, utmp records, binfmt, pstore, hugepages,
  # random seed, persistent journal, static module loads.
  local unit
  for unit in getty.target serial-getty@ttyS0.service systemd-remount-fs.service \
              systemd-update-utmp.service systemd-update-utmp-runlevel.service \
              systemd-binfmt.service proc-sys-fs-binfmt_misc.automount systemd-pstore.service \
              dev-hugepages.mount systemd-random-seed.service systemd-journal-flush.service \
              systemd-ask-password-wall.path modprobe@drm.service modprobe@dm_mod.service \
              modprobe@loop.service modprobe@fuse.service; do
    ln -sf /dev/null "$sys/$unit"
  done

  # The payload: started once multi-user.target is reached. Type=exec so that
  # the boot transaction completes while the script runs (is-system-running
  # reports running/degraded, not starting). The wrapper always exits 0 after
  # printing the result marker; the machine then powers off.
  cat >"$sys/nictune-vm-harness.service" <<'EOF'
[Unit]
Description=nictune VM harness: run the guest script, then power off
After=multi-user.target
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=exec
ExecStart=/bin/bash /nictune-vm/run.sh
StandardInput=null
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/console
EOF
  mkdir -p "$sys/multi-user.target.wants"
  ln -sf ../nictune-vm-harness.service "$sys/multi-user.target.wants/nictune-vm-harness.service"

  local units
  units=$(units_to_enable)
  for unit in $units; do
    note "systemctl enable $unit"
    systemctl enable "$unit"
  done
}

if [[ -n ${INSTALL_DIR:-} ]]; then
  install_tree "$INSTALL_DIR"
fi
if [[ $MODE == systemd ]]; then
  setup_systemd
else
  install_guest_packages
fi
