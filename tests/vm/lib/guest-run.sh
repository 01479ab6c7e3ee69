#!/bin/bash
# guest-run.sh - installed in the guest as /nictune-vm/run.sh by guest-setup.sh.
# Runs the guest script with the run's environment and reports its exit code
# on the console as HARNESS_EXIT_CODE[<run id>]=<code>, which run-vm reads.
# It always exits 0 itself: in systemd mode that powers the machine off
# (SuccessAction=), in plain mode /init powers off after it.

# shellcheck source=/dev/null  # written by run-vm: RUN_ID SCRIPT SCRIPT_ARGS HARNESS_MODE HARNESS_OUT EXTRA_ENV
. /nictune-vm/run.conf

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
# The console is a tty: keep systemctl & co from paging or colouring it.
export SYSTEMD_PAGER=cat PAGER=cat SYSTEMD_COLORS=0
export HARNESS_MODE HARNESS_OUT HARNESS_RUN_ID=$RUN_ID
for kv in "${EXTRA_ENV[@]}"; do
  export "${kv?}"
done

read -r t0 _ </proc/uptime
echo "[guest-run ${t0}s] $SCRIPT ${SCRIPT_ARGS[*]} (mode $HARNESS_MODE, out $HARNESS_OUT)"
cd / || exit 0
if [[ -x $SCRIPT ]]; then
  "$SCRIPT" "${SCRIPT_ARGS[@]}" </dev/null
else
  /bin/bash "$SCRIPT" "${SCRIPT_ARGS[@]}" </dev/null
fi
rc=$?
read -r t1 _ </proc/uptime
sync
echo "[guest-run ${t1}s] script exited with $rc"
printf '\nHARNESS_EXIT_CODE[%s]=%d\n' "$RUN_ID" "$rc" >/dev/console
exit 0
