#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a newcomer types, on the host and without touching its kernel:
# build/bin/softcm runs from the build tree with no LD_LIBRARY_PATH (it
# finds libsoftcm through its $ORIGIN run path), and the tree `make
# dkms-install` puts in /usr/src is one DKMS adds, builds and installs for
# the stock kernel.  DKMS works in a scratch directory (--sourcetree,
# --dkmstree, --installtree): nothing reaches the host's /usr/src or
# /lib/modules (DKMS does make its module-signing key in /var/lib/dkms the
# first time, as any DKMS build on the host would).

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/static/tap.sh"
. "$top/tests/vm/lib.sh"

# DKMS compiles the whole module again: through ccache, in a scratch
# directory of a fixed path (the source's path is part of ccache's key),
# a warm machine's run finds the objects of the last one.  A lock keeps
# two make checks on one machine out of each other's way.
tmp=$SOFTCM_CACHE/dkms-check
mkdir -p "$SOFTCM_CACHE"
exec 9>"$tmp.lock"
flock 9
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
if [ -d /usr/lib/ccache ]; then
	export PATH=/usr/lib/ccache:$PATH CCACHE_DIR=$SOFTCM_CACHE/ccache
fi
version=$(sed -n 's/.*SOFTCM_VERSION "\(.*\)"/\1/p' "$top/drivers/softcm/version.h")
kver=$(stock_kver)

tool_runs_from_build_tree() {
	env -u LD_LIBRARY_PATH "$top/build/bin/softcm" --help >/dev/null &&
		ldd "$top/build/bin/softcm" | grep -q "libsoftcm.so.1 => $top/build/bin/../lib/"
}

dkms_builds_and_installs() {
	local dk=(--sourcetree "$tmp/usr/src" --dkmstree "$tmp/dkms" --installtree "$tmp/modules")
	mkdir -p "$tmp/dkms" "$tmp/modules/$kver"
	make -C "$top" --no-print-directory dkms-install DESTDIR="$tmp" &&
		[ -f "$tmp/usr/src/softcm-$version/dkms.conf" ] &&
		dkms add -m softcm -v "$version" "${dk[@]}" &&
		dkms build -m softcm -v "$version" -k "$kver" "${dk[@]}" &&
		dkms install -m softcm -v "$version" -k "$kver" "${dk[@]}" --force &&
		find "$tmp/modules" -name softcm.ko | grep -q . &&
		modinfo -F vermagic "$(find "$tmp/modules" -name softcm.ko | head -n 1)" | grep -q "^$kver "
}

tap_check "static/tools/softcm-runs-from-the-build-tree" tool_runs_from_build_tree
tap_check "static/tools/dkms-install-tree-builds" dkms_builds_and_installs
tap_finish tools
