# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the VM scripts: where caches live and how we find the
# kernels.  Sourced, never executed.

SOFTCM_CACHE=${SOFTCM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/var/tmp}/.cache}/softcm}

die() {
	echo "softcm: $*" >&2
	exit 1
}

# The stock Debian kernel we test against: the newest installed
# linux-image whose headers are installed too.  Never the build host's
# running kernel, which has no headers here.
stock_kver() {
	local v
	for v in $(ls /usr/src | sed -n 's/^linux-headers-\(.*-amd64\)$/\1/p' | sort -V -r); do
		if [ -e "/boot/vmlinuz-$v" ] && [ -d "/lib/modules/$v/kernel" ]; then
			echo "$v"
			return 0
		fi
	done
	return 1
}

# The kernel source packages we use: 6.1 (Debian 12's kernel) for the tools
# taken from the tree (checkpatch.pl, kselftest_harness.h, kunit.py,
# extract-vmlinux), 6.12 (the current LTS, Debian 12's security archive)
# for the debug kernel.
SOFTCM_TOOLS_SERIES=6.1
SOFTCM_DEBUG_SERIES=6.12

# Version of the installed linux-source-SERIES package (default: the tools'
# series), the key of everything built from it.
source_version() {
	dpkg-query -W -f='${Version}' "linux-source-${1:-$SOFTCM_TOOLS_SERIES}" 2>/dev/null
}

# The unpacked kernel source tree of linux-source-SERIES (default: the
# tools' series).  Unpacked once per package version; concurrent callers
# each unpack into their own temporary directory and the first rename wins.
source_tree() {
	local series=${1:-$SOFTCM_TOOLS_SERIES} ver dir tmp
	local tarball=/usr/src/linux-source-$series.tar.xz
	ver=$(source_version "$series") || return 1
	[ -n "$ver" ] && [ -e "$tarball" ] || return 1
	dir="$SOFTCM_CACHE/src/linux-source-$ver"
	if [ ! -e "$dir/.unpacked" ]; then
		mkdir -p "$SOFTCM_CACHE/src"
		tmp=$(mktemp -d "$dir.tmp.XXXXXX") || return 1
		tar -C "$tmp" -xf "$tarball" --strip-components=1 || { rm -rf "$tmp"; return 1; }
		touch "$tmp/.unpacked"
		mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
		[ -e "$dir/.unpacked" ] || return 1
	fi
	echo "$dir"
}
