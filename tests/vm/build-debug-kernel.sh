#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the debug test kernel (KUnit, KASAN, lockdep, kmemleak, UBSAN) from
# Debian's linux-source-6.12 (the current LTS; Debian 12's own kernel, 6.1,
# is what the stock runs test) into a cache outside the checkout, keyed by
# the source package version and the hash of tests/vm/debug.config.  A cache hit
# costs nothing; a cold build takes 15-20 minutes on two cores, a rebuild with
# a warm ccache a few minutes.  Prints the build directory on stdout.

set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

fragment="$here/debug.config"
src=$(source_tree "$SOFTCM_DEBUG_SERIES") ||
	die "linux-source-$SOFTCM_DEBUG_SERIES is not installed (run tests/vm/install-deps.sh)"
key="$(source_version "$SOFTCM_DEBUG_SERIES")-$(sha256sum "$fragment" | cut -c1-12)"
out="$SOFTCM_CACHE/debug-kernel/$key"

if [ -e "$out/.built" ]; then
	echo "$out"
	exit 0
fi

exec 3>&1 1>&2
echo "softcm: building the debug kernel $key (once per machine; 15-20 minutes cold)"
mkdir -p "$out"
export CCACHE_DIR="$SOFTCM_CACHE/ccache"
export KBUILD_BUILD_TIMESTAMP="softcm" KBUILD_BUILD_USER=softcm KBUILD_BUILD_HOST=softcm
mk() {
	make -C "$src" O="$out" CC="ccache gcc" HOSTCC="ccache gcc" "$@"
}

mk -s tinyconfig
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$fragment" >/dev/null
mk -s olddefconfig

# merge_config.sh only warns when Kconfig drops a requested option; we refuse.
missing=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		if ! grep -qxF "$line" "$out/.config"; then
			echo "softcm: debug.config: '$line' did not survive olddefconfig" \
			     "(got: $(grep -E "^(# )?${line%%=*}[= ]" "$out/.config" || echo unset))"
			missing=1
		fi
		;;
	esac
done <"$fragment"
[ "$missing" = 0 ] || exit 1

mk -j"$(nproc)" bzImage modules
mk -s INSTALL_MOD_PATH="$out/mods" INSTALL_MOD_STRIP=1 modules_install
touch "$out/.built"
echo "$out" >&3
