# shellcheck shell=bash
# common.sh - logging, exit codes, bounded commands and the cache lock.
# Sourced by tests/vm/run-vm; every function here runs on the host.

# Exit codes of run-vm besides the guest script's own code.
readonly RC_USAGE=2
readonly RC_SKIP=77        # this host cannot run VMs (ctest SKIP_RETURN_CODE)
readonly RC_TIMEOUT=124    # the guest did not power off within --timeout
readonly RC_NO_RESULT=125  # qemu ended without the result marker (crash, panic)
readonly RC_HARNESS=126    # preparing the VM failed (host side or guest init)

# Bumped whenever the way a cached artefact is produced changes, so that
# caches made by an older harness are rebuilt rather than trusted.
readonly KERNEL_RECIPE=3

HARNESS_T0=$(date +%s.%N)

log() {
  local now
  now=$(date +%s.%N)
  printf '[run-vm %6.1fs] %s\n' "$(awk -v a="$now" -v b="$HARNESS_T0" 'BEGIN{print a-b}')" "$*" >&2
}

die() {      # die MESSAGE: the harness itself failed
  log "ERROR: $*"
  exit "$RC_HARNESS"
}

skip() {     # skip REASON: this host cannot run the VM; not a test failure
  log "SKIP: $*"
  exit "$RC_SKIP"
}

usage_error() {
  echo "run-vm: $*" >&2
  echo "try: tests/vm/run-vm --help" >&2
  exit "$RC_USAGE"
}

# bounded SECONDS CMD...: run CMD, killing it after SECONDS (and SIGKILL 10 s
# later). Every external step that can hang goes through this.
bounded() {
  local secs=$1
  shift
  timeout --kill-after=10 "$secs" "$@"
}

# elapsed_since T0: seconds (one decimal) since a `date +%s.%N` stamp.
elapsed_since() {
  awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN{printf "%.1f", a-b}'
}

# sh_quote VALUE: VALUE quoted for a POSIX shell (busybox ash reads these).
sh_quote() {
  printf "'%s'" "${1//\'/\'\\\'\'}"
}

# cache_lock: hold an exclusive lock on the cache while it is being prepared.
# Concurrent runs wait here (bounded) instead of building the same thing twice
# or reading half-written artefacts. The lock is released by cache_unlock or at
# exit, when the kernel closes the descriptor.
cache_lock() {
  mkdir -p "$CACHE" || die "cannot create cache dir $CACHE"
  exec {CACHE_LOCK_FD}>"$CACHE/lock" || die "cannot open $CACHE/lock"
  if ! flock -n "$CACHE_LOCK_FD"; then
    log "cache $CACHE is busy (another run is preparing it); waiting up to ${LOCK_WAIT}s"
    flock -w "$LOCK_WAIT" "$CACHE_LOCK_FD" || die "timed out waiting for the cache lock $CACHE/lock"
  fi
}

cache_unlock() {
  if [[ -n ${CACHE_LOCK_FD:-} ]]; then
    exec {CACHE_LOCK_FD}>&-
    CACHE_LOCK_FD=
  fi
}

# publish_dir TMP FINAL: atomically move a fully built TMP dir into place.
# Cache entries are only ever created this way, so a killed run leaves at most
# a stale *.tmp.* dir behind, never a half-built entry under its real name.
publish_dir() {
  local tmp=$1 final=$2
  rm -rf "$final"
  mv -T "$tmp" "$final"
}

# Remove leftovers of runs that were killed mid-way (caller holds the lock).
cache_sweep() {
  find "$CACHE" -mindepth 2 -maxdepth 2 -name '*.tmp.*' -exec rm -rf {} + 2>/dev/null || true
  # Per-run dirs (console logs, default out dirs) are kept two days for inspection.
  find "$CACHE/runs" -mindepth 1 -maxdepth 1 -type d -mmin +2880 -exec rm -rf {} + 2>/dev/null || true
}
