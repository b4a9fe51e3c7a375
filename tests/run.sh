#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole suite, as `make check` runs it: host-side static checks, the VM
# runner's self-check, every test program on Debian's stock kernel and on
# our debug kernel (KASAN, lockdep, kmemleak, UBSAN; built and cached on
# first use), then one closing line "N passed, N failed".
#
#   SOFTCM_KERNELS="stock debug"   which kernels to boot (default both)

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export COUNTS
COUNTS=$(mktemp)
trap 'rm -f "$COUNTS"' EXIT
start=$(date +%s)

stage() {
	echo "# === $* ==="
	"$@" || true
}

stage "$top/tests/static/checkpatch.sh"
stage "$top/tests/static/sparse.sh"
stage "$top/tests/static/library.sh"
stage "$top/tests/static/compat.sh"
stage "$top/tests/static/addrinfo.sh"
stage "$top/tests/static/dkms.sh"
stage "$top/tests/static/layering.sh"
stage "$top/tests/vm/parse_test.sh"
stage "$top/tests/interop/dissect_check.sh"
for k in ${SOFTCM_KERNELS:-stock debug}; do
	stage "$top/tests/vm/selfcheck.sh" --kernel "$k"
	stage "$top/tests/vm/run.sh" --kernel "$k" --counts "$COUNTS" \
		--inventory "$top/tests/vm/inventory"
done

read -r passed failed skipped < <(awk '{p += $1; f += $2; s += $3} END {print p+0, f+0, s+0}' "$COUNTS")
# A stage that died before reporting counts must not pass silently.
stages=$((9 + 2 * $(echo ${SOFTCM_KERNELS:-stock debug} | wc -w)))
reported=$(wc -l <"$COUNTS")
if [ "$reported" -lt "$stages" ]; then
	echo "not ok - $((stages - reported)) stage(s) reported no results"
	failed=$((failed + stages - reported))
fi
echo "# make check took $(( $(date +%s) - start ))s; $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
