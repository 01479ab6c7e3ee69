# shellcheck shell=bash
# accel.sh - choose KVM or TCG.
#
# /dev/kvm existing is not enough: on a nested paravirtual hypervisor (this
# project's build machines) a stock kernel hangs early under KVM. `auto` boots
# the real kernel once under KVM with a tiny init (/kvm-probe in the initramfs)
# and falls back to TCG when it does not print its marker within
# KVM_PROBE_TIMEOUT. The verdict is cached in $CACHE/accel/, keyed by host
# kernel, guest kernel and qemu version.

readonly KVM_PROBE_TIMEOUT=20

accel_select() {
  case $ACCEL in
    kvm | tcg) return ;;
    auto) ;;
    *) usage_error "--accel must be auto, kvm or tcg" ;;
  esac
  if [[ ! -c /dev/kvm || ! -w /dev/kvm ]]; then
    ACCEL=tcg
    log "accel: tcg (no usable /dev/kvm)"
    return
  fi
  local qver key file
  qver=$(qemu-system-x86_64 --version | awk 'NR == 1 {print $4}')
  key="host-$(uname -r)_guest-${KVER}_qemu-${qver}"
  file=$CACHE/accel/${key//[^A-Za-z0-9._+-]/_}
  if [[ -f $file ]]; then
    ACCEL=$(<"$file")
    log "accel: $ACCEL (cached probe result)"
    return
  fi
  local t0
  t0=$(date +%s.%N)
  if accel_probe_kvm; then ACCEL=kvm; else ACCEL=tcg; fi
  mkdir -p "$CACHE/accel"
  echo "$ACCEL" >"$file.tmp.$$" && mv "$file.tmp.$$" "$file"
  log "accel: $ACCEL (KVM probe took $(elapsed_since "$t0")s; cached in ${file#"$CACHE"/})"
}

accel_probe_kvm() {
  local out rc=0
  # ulimit -c 0: qemu aborts (and would dump core) on some nested hosts.
  out=$(ulimit -c 0
        bounded "$KVM_PROBE_TIMEOUT" qemu-system-x86_64 -accel kvm -cpu host -m 256 \
          -nodefaults -no-user-config -display none -monitor none -no-reboot -serial stdio \
          -kernel "$(kernel_boot_image)" -initrd "$INITRAMFS" \
          -append "console=ttyS0 rdinit=/kvm-probe panic=-1 quiet" </dev/null 2>&1) || rc=$?
  [[ $out == *NICTUNE_KVM_PROBE_OK* ]] && return 0
  if ((rc == 124 || rc == 137)); then
    log "accel: KVM probe: the kernel did not finish booting within ${KVM_PROBE_TIMEOUT}s"
  else
    log "accel: KVM probe: qemu exited $rc: $(tail -n 1 <<<"$out")"
  fi
  return 1
}

# accel_qemu_args: the qemu arguments for the chosen accelerator.
accel_qemu_args() {
  # shellcheck disable=SC2054  # commas belong to qemu option syntax
  case $ACCEL in
    kvm) QEMU_ACCEL_ARGS=(-accel kvm -cpu host) ;;
    tcg) QEMU_ACCEL_ARGS=(-accel tcg,thread=multi -cpu max) ;;
  esac
}
