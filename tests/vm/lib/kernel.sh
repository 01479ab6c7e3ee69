# shellcheck shell=bash
# kernel.sh - the guest kernel: Debian's linux-image-6.1.0-N-amd64 fetched with
# `apt-get download` and unpacked with `dpkg -x` (nothing is installed on the
# host), plus netdevsim built out of tree, because Debian's config leaves it out.
#
# Cache entry: $CACHE/kernel/$KVER/ (KVER = kernel ABI release, 6.1.0-57-amd64)
#   image/boot/vmlinuz-$KVER         the kernel as Debian ships it
#   image/boot/vmlinux-$KVER         the same, uncompressed: qemu boots it
#                                    directly (PVH entry), which saves the ~7 s
#                                    the kernel's own xz decompression takes
#                                    under TCG
#   image/lib/modules/$KVER/         its modules + extra/netdevsim.ko + depmod output
#   stamp                            recipe=, version= (the entry is valid only if
#                                    recipe matches KERNEL_RECIPE)
#   netdevsim-build.log
# Downloaded packages stay in $CACHE/debs/ (named by apt, version included).

# kernel_select: set KVER. Order: NICTUNE_VM_KVER if it names a release; else
# the newest complete cache entry (a warm run never asks apt); else the newest
# linux-image-6.1.0-N-amd64 apt knows (NICTUNE_VM_KVER=latest forces this).
kernel_select() {
  local want=${NICTUNE_VM_KVER:-}
  if [[ -n $want && $want != latest ]]; then
    KVER=$want
    return
  fi
  if [[ -z $want ]]; then
    local d best=
    for d in "$CACHE"/kernel/6.1.0-*-amd64; do
      kernel_entry_valid "$d" && best=$(printf '%s\n%s\n' "$best" "${d##*/}" | sort -V | tail -n 1)
    done
    if [[ -n $best ]]; then
      KVER=$best
      return
    fi
  fi
  KVER=$(kernel_newest_in_apt)
  if [[ -z $KVER ]]; then
    apt_update_once || skip "apt cannot reach Debian's archive to fetch a kernel"
    KVER=$(kernel_newest_in_apt)
  fi
  [[ -n $KVER ]] || die "apt knows no linux-image-6.1.0-*-amd64 package"
}

kernel_newest_in_apt() {
  apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null |
    awk '{sub(/^linux-image-/, "", $1); print $1}' | sort -V | tail -n 1
}

kernel_entry_valid() {     # kernel_entry_valid DIR
  [[ -f $1/stamp ]] && grep -qx "recipe=$KERNEL_RECIPE" "$1/stamp"
}

# deb_fetch PKG VERSION: set DEB to the path of PKG_VERSION_*.deb in
# $CACHE/debs, downloading it first if needed (retried once after
# `apt-get update`). Returns 1 if apt cannot download it.
deb_fetch() {
  local pkg=$1 ver=$2 debs=$CACHE/debs
  local pattern="${pkg}_${ver//:/%3a}_*.deb"
  DEB=$(compgen -G "$debs/$pattern" | head -n 1) || true
  [[ -n $DEB ]] && return 0
  mkdir -p "$debs"
  local tmp
  tmp=$(mktemp -d "$debs/.tmp.XXXXXX")
  chmod 755 "$tmp"   # apt downloads as the unprivileged _apt user
  log "apt-get download $pkg=$ver"
  if apt_download "$tmp" "$pkg=$ver" || { apt_update_once && apt_download "$tmp" "$pkg=$ver"; }; then
    mv "$tmp"/*.deb "$debs/"
    rm -rf "$tmp" "$tmp.log"
    DEB=$(compgen -G "$debs/$pattern" | head -n 1) || die "downloaded $pkg but found no $debs/$pattern"
    return 0
  fi
  tail -n 5 "$tmp.log" >&2
  rm -rf "$tmp" "$tmp.log"
  return 1
}

apt_download() {   # apt_download DIR PKG=VER
  (cd "$1" && bounded 900 apt-get "${APT_OPTS[@]}" download "$2") >"$1.log" 2>&1
}

# apt_candidate PKG: the version apt would install. awk reads to the end: an
# early `exit` kills apt-cache with SIGPIPE when its version table follows,
# and pipefail turns that into status 141 (seen on a cold cache: busybox-static).
apt_candidate() {
  apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && v == "" {v = $2} END {print v}'
}

# kernel_prepare: make $CACHE/kernel/$KVER valid (download, unpack, build).
kernel_prepare() {
  KDIR=$CACHE/kernel/$KVER
  if kernel_entry_valid "$KDIR"; then
    log "kernel $KVER: cached ($(grep '^version=' "$KDIR/stamp"))"
    return
  fi
  local t0 ver abi=${KVER%-amd64}
  t0=$(date +%s.%N)
  ver=$(apt_candidate "linux-image-$KVER")
  if [[ -z $ver || $ver == '(none)' ]]; then
    apt_update_once || skip "apt cannot reach Debian's archive to fetch linux-image-$KVER"
    ver=$(apt_candidate "linux-image-$KVER")
  fi
  [[ -n $ver && $ver != '(none)' ]] || die "apt has no linux-image-$KVER (NICTUNE_VM_KVER=latest picks the newest)"
  log "kernel $KVER ($ver): preparing cache entry"

  if ! deb_fetch "linux-image-$KVER" "$ver"; then
    # Debian drops superseded ABIs from bookworm-security: with lists that
    # were stale, the newest ABI after the update is the one to use.
    local newest
    newest=$(kernel_newest_in_apt)
    if [[ ${NICTUNE_VM_KVER:-latest} == latest && -n $newest && $newest != "$KVER" ]]; then
      log "kernel $KVER is gone from the archive; using $newest"
      KVER=$newest
      kernel_prepare
      return
    fi
    die "apt-get download linux-image-$KVER=$ver failed"
  fi
  local image=$DEB headers common kbuild source pkg
  for pkg in "linux-headers-$KVER" "linux-headers-$abi-common" linux-kbuild-6.1 linux-source-6.1; do
    deb_fetch "$pkg" "$ver" || die "apt-get download $pkg=$ver failed"
    case $pkg in
      *-common) common=$DEB ;;
      linux-headers-*) headers=$DEB ;;
      linux-kbuild-*) kbuild=$DEB ;;
      linux-source-*) source=$DEB ;;
    esac
  done
  log "kernel $KVER: downloads done after $(elapsed_since "$t0")s"

  local tmp
  mkdir -p "$CACHE/kernel"
  tmp=$(mktemp -d "$CACHE/kernel/$KVER.tmp.XXXXXX")
  dpkg -x "$image" "$tmp/image" || die "dpkg -x $image failed"
  [[ -f $tmp/image/boot/vmlinuz-$KVER ]] || die "linux-image-$KVER has no boot/vmlinuz-$KVER"

  kernel_build_deps "$headers" "$kbuild"
  netdevsim_build "$tmp" "$abi" "$headers" "$common" "$kbuild" "$source"

  rm -rf "$tmp/hdr" "$tmp/src"
  kernel_uncompress "$tmp/image/boot"
  depmod -b "$tmp/image" "$KVER" || die "depmod for $KVER failed"
  log "kernel $KVER: vmlinux extracted, modules indexed"
  printf 'recipe=%s\nversion=%s\nkver=%s\nbuilt=%s\n' "$KERNEL_RECIPE" "$ver" "$KVER" "$(date -Is)" >"$tmp/stamp"
  publish_dir "$tmp" "$KDIR"
  log "kernel $KVER: ready in $(elapsed_since "$t0")s"
}

# kernel_uncompress BOOTDIR: extract vmlinux from Debian's xz-compressed
# bzImage (the payload starts at the first xz magic). On failure the image is
# simply booted compressed.
kernel_uncompress() {
  local boot=$1 off
  off=$(LC_ALL=C grep -abo $'\xfd7zXZ\x00' "$boot/vmlinuz-$KVER" | head -n 1 | cut -d: -f1) || true
  if [[ -n $off ]]; then
    # --single-stream: the bzImage has more data after the xz stream.
    tail -c +"$((off + 1))" "$boot/vmlinuz-$KVER" >"$boot/.payload.xz"
    if xz -dc --single-stream "$boot/.payload.xz" >"$boot/vmlinux-$KVER" 2>/dev/null &&
       [[ $(head -c 4 "$boot/vmlinux-$KVER") == $'\x7fELF' ]]; then
      rm -f "$boot/.payload.xz"
      return 0
    fi
    rm -f "$boot/.payload.xz"
  fi
  rm -f "$boot/vmlinux-$KVER"
  log "kernel $KVER: could not extract an uncompressed vmlinux; booting vmlinuz (slower under TCG)"
}

# kernel_boot_image: the file qemu -kernel should load.
kernel_boot_image() {
  if [[ -f $KDIR/image/boot/vmlinux-$KVER ]]; then
    echo "$KDIR/image/boot/vmlinux-$KVER"
  else
    echo "$KDIR/image/boot/vmlinuz-$KVER"
  fi
}

# kernel_build_deps HEADERS_DEB KBUILD_DEB: install what the unpacked kbuild
# tools and headers need to run (compiler metapackage, libelf, libssl...),
# read from the packages' own Depends so it follows Debian's choices.
kernel_build_deps() {
  local deps
  deps=$(for deb in "$@"; do dpkg-deb -f "$deb" Depends; echo; done |
    tr ',' '\n' | sed -E 's/\|.*//; s/\(.*\)//; s/[[:space:]]+//g' |
    grep -vE '^$|^linux-(headers|kbuild)-' | sort -u)
  # shellcheck disable=SC2086  # one package name per word
  host_install $deps || skip "cannot install the kernel build dependencies: ${deps//$'\n'/ }"
}

# netdevsim_build DIR ABI HEADERS COMMON KBUILD SOURCE: build netdevsim.ko
# against the unpacked headers and drop it into DIR/image/lib/modules/$KVER/extra.
netdevsim_build() {
  local dir=$1 abi=$2 t0 deb
  shift 2
  t0=$(date +%s.%N)
  local hdr=$dir/hdr src=$dir/src
  mkdir -p "$hdr" "$src"
  for deb in "$1" "$2" "$3"; do
    dpkg -x "$deb" "$hdr" || die "dpkg -x $deb failed"
  done
  local ktree=$hdr/usr/src/linux-headers-$KVER
  # The flavour's Makefile includes the common half by its installed path.
  echo "include $hdr/usr/src/linux-headers-$abi-common/Makefile" >"$ktree/Makefile"

  # Only drivers/net/netdevsim is needed out of the ~140 MB source tarball;
  # stream it instead of writing the tarball to disk.
  dpkg-deb --fsys-tarfile "$4" |
    tar -xO --wildcards '*/linux-source-6.1.tar.xz' |
    xz -dc | tar -x -C "$src" --wildcards 'linux-source-6.1/drivers/net/netdevsim/*' ||
    die "extracting netdevsim sources from $4 failed"
  local nsim=$src/linux-source-6.1/drivers/net/netdevsim
  [[ -f $nsim/Makefile ]] || die "no drivers/net/netdevsim in $4"
  log "netdevsim: sources unpacked after $(elapsed_since "$t0")s; compiling"

  if ! bounded 900 make -C "$ktree" M="$nsim" CONFIG_NETDEVSIM=m -j"$(nproc)" modules \
       >"$dir/netdevsim-build.log" 2>&1; then
    tail -n 20 "$dir/netdevsim-build.log" >&2
    die "building netdevsim failed (log: $dir/netdevsim-build.log)"
  fi
  local extra=$dir/image/lib/modules/$KVER/extra
  mkdir -p "$extra"
  cp "$nsim/netdevsim.ko" "$extra/" || die "netdevsim.ko was not built"
  log "netdevsim: built in $(elapsed_since "$t0")s"
}
