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

# Version of the installed linux-source-6.1 package, the key of everything
# built from it.
source_version() {
	dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null
}

# The unpacked kernel source tree (tools such as checkpatch.pl and
# kselftest_harness.h come from here).  Unpacked once per package version.
source_tree() {
	local ver dir tarball=/usr/src/linux-source-6.1.tar.xz
	ver=$(source_version) || return 1
	[ -n "$ver" ] && [ -e "$tarball" ] || return 1
	dir="$SOFTCM_CACHE/src/linux-source-$ver"
	if [ ! -e "$dir/.unpacked" ]; then
		rm -rf "$dir" "$dir.tmp"
		mkdir -p "$dir.tmp"
		tar -C "$dir.tmp" -xf "$tarball" --strip-components=1 || return 1
		touch "$dir.tmp/.unpacked"
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}
