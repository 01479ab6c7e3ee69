#!/bin/bash
# result.sh MODE CHECK - ctest vm_CHECK: the verdict of one check of the VM
# suite, from the boot that ran it (vm_boot_MODE, a fixture this test
# requires). Prints the check's log (commands, outputs, every reason).
# Exit: 0 PASS; 1 FAIL or no result; 77 the boot was skipped.
set -uo pipefail
# shellcheck source=common.sh
. "$(dirname "$(readlink -f "$0")")/common.sh"

MODE=${1:-}
CHECK=${2:-}
[[ -n $MODE && -n $CHECK ]] || { echo "usage: $0 plain|systemd CHECK" >&2; exit 2; }
OUT=$WORK/out-$MODE

# Results in $OUT may be an earlier root run's: not ours to report.
[[ $(id -u) == 0 ]] || skip_now "the VM suite needs root; running as uid $(id -u)"
[[ -f $OUT/skipped ]] && skip_now "vm_boot_$MODE was skipped: $(cat "$OUT/skipped")"
if [[ ! -f $OUT/results.txt ]]; then
  say "FAIL: no $OUT/results.txt: vm_boot_$MODE did not run or the VM broke (see its output)"
  exit 1
fi
[[ -f $OUT/$CHECK.log ]] && cat "$OUT/$CHECK.log"
line=$(grep -E "^(PASS|FAIL) $CHECK:" "$OUT/results.txt" | head -n 1)
if [[ -z $line ]]; then
  say "FAIL: $CHECK has no result in $OUT/results.txt (the guest script stopped before it?)"
  exit 1
fi
echo
echo "$line"
if [[ $line == PASS* ]]; then
  exit 0
fi
if [[ -s $OUT/$CHECK.reasons ]]; then
  echo "reasons:"
  sed 's/^/  - /' "$OUT/$CHECK.reasons"
fi
exit 1
