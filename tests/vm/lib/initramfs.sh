# shellcheck shell=bash
# initramfs.sh - the busybox initramfs: /init (lib/guest-init), a tiny
# /kvm-probe init used by accel.sh, and the modules needed before the host
# root is reachable (9p, overlay) plus the NIC drivers, with a load order.
#
# Cache: $CACHE/tools/busybox-$VERSION/  busybox-static unpacked with dpkg -x
#        $CACHE/initrd/$KVER-$KEY.cpio.gz, KEY = hash of everything that
#        goes in (init script, module list, busybox version, kernel stamp), so
#        editing lib/guest-init produces a new image and never a stale one.

# Modules /init loads in this order (each after its dependencies). netdevsim
# and e1000e are loaded at boot in both modes so that every guest script finds
# the same devices; guest scripts can rmmod/modprobe them (the full module tree
# is mounted at /lib/modules/$KVER inside the guest).
readonly INITRAMFS_MODULES=(virtio_pci 9pnet_virtio 9p overlay e1000e netdevsim)

busybox_prepare() {
  local ver dir deb cached
  cached=$(compgen -G "$CACHE/tools/busybox-*/bin/busybox" | sort -V | tail -n 1) || true
  if [[ -n $cached ]]; then
    BUSYBOX=$cached
    return
  fi
  ver=$(apt_candidate busybox-static)
  if [[ -z $ver || $ver == '(none)' ]]; then
    apt_update_once || skip "apt cannot reach Debian's archive to fetch busybox-static"
    ver=$(apt_candidate busybox-static)
  fi
  [[ -n $ver && $ver != '(none)' ]] || die "apt has no busybox-static"
  deb_fetch busybox-static "$ver" || die "apt-get download busybox-static=$ver failed"
  deb=$DEB
  dir=$CACHE/tools/busybox-${ver//[^A-Za-z0-9.+~-]/_}
  local tmp
  mkdir -p "$CACHE/tools"
  tmp=$(mktemp -d "$CACHE/tools/busybox.tmp.XXXXXX")
  dpkg -x "$deb" "$tmp" || die "dpkg -x $deb failed"
  [[ -x $tmp/bin/busybox ]] || die "busybox-static has no bin/busybox"
  publish_dir "$tmp" "$dir"
  BUSYBOX=$dir/bin/busybox
}

# initramfs_modules: print the .ko files to load, dependencies first, once each.
initramfs_modules() {
  local m line seen=" "
  for m in "${INITRAMFS_MODULES[@]}"; do
    modprobe -d "$KDIR/image" -S "$KVER" --show-depends "$m" >"$CACHE/.deps.$$" 2>&1 ||
      { cat "$CACHE/.deps.$$" >&2; rm -f "$CACHE/.deps.$$"; die "module $m not found for $KVER"; }
    while read -r line; do
      [[ $line == insmod\ * ]] || continue     # "builtin NAME" needs no loading
      line=${line#insmod }
      line=${line%% *}
      [[ $seen == *" $line "* ]] && continue
      seen+="$line "
      echo "$line"
    done <"$CACHE/.deps.$$"
  done
  rm -f "$CACHE/.deps.$$"
}

initramfs_prepare() {
  busybox_prepare
  local mods key
  mods=$(initramfs_modules)
  key=$( { cat "$LIBDIR/guest-init"; echo "$mods"; echo "$BUSYBOX"; cat "$KDIR/stamp"; } |
    sha256sum | cut -c1-16)
  INITRAMFS=$CACHE/initrd/$KVER-$key.cpio.gz
  if [[ -f $INITRAMFS ]]; then
    log "initramfs: cached (${INITRAMFS##*/})"
    return
  fi
  mkdir -p "$CACHE/initrd"
  local tmp
  tmp=$(mktemp -d "$CACHE/initrd/build.tmp.XXXXXX")
  local root=$tmp/root
  mkdir -p "$root"/{bin,dev,proc,sys,lower,upper,newroot,modules}
  cp "$BUSYBOX" "$root/bin/busybox"
  install -m 0755 "$LIBDIR/guest-init" "$root/init"
  printf '#!/bin/busybox sh\n/bin/busybox echo NICTUNE_KVM_PROBE_OK\n/bin/busybox poweroff -f\n' >"$root/kvm-probe"
  chmod 0755 "$root/kvm-probe"
  local ko n=0
  while read -r ko; do
    n=$((n + 1))
    # Numbered names keep the load order visible and avoid name clashes.
    cp "$ko" "$root/modules/$(printf '%02d' "$n")-${ko##*/}"
  done <<<"$mods"
  log "initramfs: modules $(sed -E 's#.*/##; s/\.ko$//' <<<"$mods" | tr '\n' ' ')"
  (cd "$root" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null) | gzip -1 >"$tmp/img.cpio.gz" ||
    die "packing the initramfs failed"
  mv "$tmp/img.cpio.gz" "$INITRAMFS"
  rm -rf "$tmp"
  log "initramfs: built ${INITRAMFS##*/} ($(du -h "$INITRAMFS" | cut -f1))"
}
