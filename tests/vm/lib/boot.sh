# shellcheck shell=bash
# boot.sh - one run: its directory, the settings the guest reads, qemu, and
# turning the console's result marker into run-vm's exit code.
#
# Per run: $CACHE/runs/$RUN_ID/
#   boot.conf    POSIX-sh settings for the busybox /init and guest-setup.sh
#   run.conf     bash settings for guest-run.sh (script, args, environment)
#   console.log  the guest's serial console
#   out/         default HARNESS_OUT (writable 9p share), unless --out DIR

run_prepare() {
  RUN_ID=$(date +%Y%m%d-%H%M%S)-$$
  RUN_DIR=$CACHE/runs/$RUN_ID
  mkdir -p "$RUN_DIR"
  OUT_DIR=${OUT_DIR:-$RUN_DIR/out}
  mkdir -p "$OUT_DIR"
  CONSOLE_LOG=$RUN_DIR/console.log

  {
    echo "# written by tests/vm/run-vm for run $RUN_ID"
    echo "MODE=$(sh_quote "$MODE")"
    echo "OUT=$(sh_quote "$OUT_DIR")"
    echo "KVER=$(sh_quote "$KVER")"
    echo "KMODDIR=$(sh_quote "$KDIR/image/lib/modules/$KVER")"
    echo "LIBDIR=$(sh_quote "$LIBDIR")"
    echo "INSTALL_DIR=$(sh_quote "$INSTALL_DIR")"
    echo "ENABLE_UNITS=$(sh_quote "${ENABLE_UNITS[*]}")"
    echo "KEEP_HOST_UNITS=$KEEP_HOST_UNITS"
    echo "GUEST_DPKG=$GUEST_DPKG"
    echo "GUEST_DEBS=$(sh_quote "${GUEST_DEBS[*]}")"
  } >"$RUN_DIR/boot.conf"

  local HARNESS_MODE=$MODE HARNESS_OUT=$OUT_DIR
  {
    echo "# written by tests/vm/run-vm for run $RUN_ID"
    declare -p RUN_ID SCRIPT HARNESS_MODE HARNESS_OUT SCRIPT_ARGS EXTRA_ENV
  } >"$RUN_DIR/run.conf"
}

# vm_qemu_args: the whole machine, in QEMU_ARGS.
vm_qemu_args() {
  # no_timer_check: under TCG on a busy host the kernel's IO-APIC timer check
  # can miss its ticks and panic ("IO-APIC + timer doesn't work!", seen at load
  # average 16 on 2 cores); the emulated timer works, the check is the problem.
  local append="console=ttyS0 panic=-1 quiet loglevel=4 random.trust_cpu=on no_timer_check"
  append+=" nictune.run=$RUN_DIR nictune.id=$RUN_ID"
  if [[ $MODE == systemd ]]; then
    append+=" systemd.unit=multi-user.target systemd.show_status=error systemd.log_level=warning"
  fi
  accel_qemu_args
  # shellcheck disable=SC2054  # commas belong to qemu option syntax
  QEMU_ARGS=(
    "${QEMU_ACCEL_ARGS[@]}" -machine q35 -m "$MEM" -smp "$SMP"
    -nodefaults -no-user-config -display none -monitor none -no-reboot
    -kernel "$(kernel_boot_image)" -initrd "$INITRAMFS" -append "$append"
    # The host's / read-only: the guest runs the host's binaries and sees the
    # project's source and build trees at their usual paths.
    -fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap"
    -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot
    -fsdev "local,id=out,path=${OUT_DIR//,/,,},security_model=none,multidevs=remap"
    -device virtio-9p-pci,fsdev=out,mount_tag=out
  )
  # Intel 82574L NICs on hub ports with no host-side backend: nothing on the
  # host's network changes (qemu warns "hub N is not connected to host
  # network": that is the point). romfile= skips the PXE option ROM, useless
  # with -kernel.
  # --nic-root-port: each NIC in a pcie-root-port of its own (chassis i), so
  # that the guest sees real link registers for the NIC and its slot.
  local i bus
  for ((i = 1; i <= NICS; i++)); do
    bus=
    if ((NIC_ROOT_PORT_SET)); then
      QEMU_ARGS+=(-device "pcie-root-port,id=nicrp$i,chassis=$i${NIC_ROOT_PORT:+,$NIC_ROOT_PORT}")
      bus=",bus=nicrp$i"
    fi
    QEMU_ARGS+=(-netdev "hubport,id=nic$i,hubid=$i"
      -device "e1000e,netdev=nic$i$bus,mac=52:54:00:4e:54:$(printf '%02x' "$i"),romfile=")
  done
  if ((QUIET)); then
    QEMU_ARGS+=(-chardev "file,id=con,path=$CONSOLE_LOG")
  else
    QEMU_ARGS+=(-chardev "stdio,id=con,signal=off,logfile=$CONSOLE_LOG")
  fi
  QEMU_ARGS+=(-serial chardev:con)
}

vm_interrupted() {
  log "interrupted: stopping the VM (pid $VM_PID)"
  kill -TERM "$VM_PID" 2>/dev/null
  wait "$VM_PID" 2>/dev/null
  exit 130
}

# vm_run: boot, wait (bounded by TIMEOUT), return the run's exit code.
vm_run() {
  vm_qemu_args
  log "booting: mode $MODE, accel $ACCEL, timeout ${TIMEOUT}s, script $SCRIPT"
  log "guest output dir (HARNESS_OUT): $OUT_DIR"
  log "console log: $CONSOLE_LOG"
  local t0 qrc=0
  t0=$(date +%s.%N)
  # In the background so that a signal to run-vm (ctest's timeout, ^C) can
  # stop this VM, and only this one, by its PID.
  timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 "${QEMU_ARGS[@]}" </dev/null &
  VM_PID=$!
  trap vm_interrupted INT TERM HUP
  wait "$VM_PID" || qrc=$?
  trap - INT TERM HUP
  VM_WALL=$(elapsed_since "$t0")

  local code init_fail
  code=$(tr -d '\r' <"$CONSOLE_LOG" | sed -n "s/.*HARNESS_EXIT_CODE\[$RUN_ID\]=\([0-9][0-9]*\).*/\1/p" | tail -n 1)
  init_fail=$(tr -d '\r' <"$CONSOLE_LOG" | grep -o "HARNESS_INIT_FAILED\[$RUN_ID\]:.*" | tail -n 1) || true

  if [[ -n $code ]]; then
    if ((qrc == 124 || qrc == 137)); then
      log "WARNING: the script finished but the guest did not power off within ${TIMEOUT}s"
    fi
    RUN_RC=$code
  elif [[ -n $init_fail ]]; then
    log "guest init failed: ${init_fail#*: }"
    RUN_RC=$RC_HARNESS
  elif ((qrc == 124 || qrc == 137)); then
    log "TIMEOUT: no result after ${TIMEOUT}s"
    RUN_RC=$RC_TIMEOUT
  else
    log "no result marker on the console (qemu exit $qrc): the guest crashed or never ran the script"
    RUN_RC=$RC_NO_RESULT
  fi
  if ((RUN_RC != 0)) && ((QUIET)); then
    log "last lines of the console:"
    tail -n 40 "$CONSOLE_LOG" >&2
  fi
  printf '%s mode=%s accel=%s vm_s=%s total_s=%s rc=%s script=%s\n' "$(date -Is)" "$MODE" "$ACCEL" \
    "$VM_WALL" "$(elapsed_since "$HARNESS_T0")" "$RUN_RC" "$SCRIPT" >>"$CACHE/timings.log"
  log "result: exit $RUN_RC (vm ${VM_WALL}s, total $(elapsed_since "$HARNESS_T0")s)"
}
