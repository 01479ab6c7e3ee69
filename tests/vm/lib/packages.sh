# shellcheck shell=bash
# packages.sh - Debian packages for the guest only (--guest-packages,
# --guest-packages-file): services such as tuned or polkitd that must never be
# installed on the host, and tools only guest scripts use (jq). The host
# downloads them, installs nothing; lib/guest-setup.sh installs them with
# `dpkg -i` into the guest's throwaway overlay before the payload runs.
#
# Which .debs: the guest's root is the host's /, so the guest needs exactly
# what `apt-get install PKGS` would install on the host now: the packages and
# those of their dependencies the host lacks (or has too old). `apt-get -s`
# computes that set from the host's dpkg status without changing anything;
# each package is then fetched at that version with deb_fetch (kernel.sh)
# into $CACHE/debs/, where it stays. A package the host already has is not
# in the set: the guest runs the host's copy, the same files either way.

# guest_packages_read FILE: append the names in FILE (one or more a line,
# `#` comments) to GUEST_PACKAGES.
guest_packages_read() {
  local line
  [[ -r $1 ]] || usage_error "cannot read --guest-packages-file $1"
  while IFS= read -r line || [[ -n $line ]]; do
    line=${line%%#*}
    # shellcheck disable=SC2206  # one package name per word
    GUEST_PACKAGES+=($line)
  done <"$1"
}

guest_packages_validate() {
  local p
  for p in "${GUEST_PACKAGES[@]}"; do
    [[ $p =~ ^[a-z0-9][a-z0-9+.-]+$ ]] || usage_error "not a Debian package name: $p"
  done
}

# guest_packages_plan: print "NAME VERSION" for each package `apt-get install`
# would install (or upgrade) on the host for GUEST_PACKAGES. Returns 1 when
# apt cannot resolve them (unknown package, broken dependencies).
guest_packages_plan() {
  local sim
  sim=$(LC_ALL=C bounded 300 apt-get "${APT_OPTS[@]}" -s --no-install-recommends install \
    "${GUEST_PACKAGES[@]}" 2>&1) || { printf '%s\n' "$sim" | tail -n 5 >&2; return 1; }
  # "Inst NAME [OLD] (VERSION ARCHIVE [ARCH])"
  awk '$1 == "Inst" { n = $2; sub(/:.*/, "", n)
                      for (i = 3; i <= NF; i++) if ($i ~ /^\(/) { print n, substr($i, 2); break } }' <<<"$sim"
}

# guest_packages_prepare: fetch the .debs into the cache and set GUEST_DEBS
# (their paths, in apt's install order). Under the cache lock.
guest_packages_prepare() {
  GUEST_DEBS=()
  ((${#GUEST_PACKAGES[@]})) || return 0
  local t0 plan attempt name ver ok
  t0=$(date +%s.%N)
  if apt_lists_missing; then apt_update_once || skip "apt cannot reach Debian's archive for the guest packages"; fi
  for attempt in 1 2; do
    if ! plan=$(guest_packages_plan); then
      ((attempt == 1)) && ((!APT_UPDATED)) && apt_update_once && continue
      die "apt cannot resolve the guest packages: ${GUEST_PACKAGES[*]}"
    fi
    ok=1
    GUEST_DEBS=()
    while read -r name ver; do
      [[ -n $name ]] || continue
      if deb_fetch "$name" "$ver"; then
        GUEST_DEBS+=("$DEB")
      else
        ok=0
        break
      fi
    done <<<"$plan"
    ((ok)) && break
    # The lists named a version the archive no longer has: refresh, re-plan.
    ((attempt == 1)) && ((!APT_UPDATED)) && apt_update_once && continue
    die "cannot download the guest packages (${GUEST_PACKAGES[*]}); see above"
  done
  if ((${#GUEST_DEBS[@]})); then
    log "guest packages ${GUEST_PACKAGES[*]}: ${#GUEST_DEBS[@]} .debs for the guest ($(elapsed_since "$t0")s)"
  else
    log "guest packages ${GUEST_PACKAGES[*]}: all installed on the host already; the guest uses those"
  fi
}
