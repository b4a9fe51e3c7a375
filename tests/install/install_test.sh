#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make install` on a real host, inside the test VM; TAP on stdout.  The
# build staged `make install DESTDIR=... PREFIX=/usr` as a tarball
# (lib/install/softcm-install.tar, its file list in lib/install/files);
# we unpack it into the guest's root, load the module with modprobe,
# check the udev rule, the modules-load.d and pkg-config files, that
# `softcm exec` finds the compat libraries, connect
# with the installed `softcm ping` between two namespaces, then remove
# every installed file and check that nothing of softcm is left:
#
#   +------ netns sc-inst-s -------+        +------ netns sc-inst-c -------+
#   |  /usr/bin/softcm ping -l     |        |  /usr/bin/softcm ping        |
#   |  veth0  10.77.0.1/24  <------+--------+----->  veth1  10.77.0.2/24   |
#   +------------------------------+        +------------------------------+
#
# The tarball holds the module built for the stock kernel; on another
# kernel (the debug one) the module built for it ($SOFTCM_KO) takes its
# place, at the path modules_install chose.  softcm is left unloaded, and
# its dependencies loaded, as init.sh set them up for the other programs.

set -u
lib=$PWD/lib/install
tar=$lib/softcm-install.tar
srv=sc-inst-s cli=sc-inst-c
slow=1
[ "${SOFTCM_KERNEL:-stock}" = debug ] && slow=4
T=$((30 * slow))
kver=$(uname -r)
tmp=$(mktemp -d)
server=
n=0

cases=(unpack depmod modprobe udev-rule modules-load pkg-config installed-library
	exec-compat-libraries ping uninstall make-uninstall)
echo "1..${#cases[@]}"

# ok, not_ok, say, skip_rest, poll
. "$(dirname "$0")/lib/tap.sh"

# check NAME CMD...: one case, passed when CMD succeeds; its output goes
# into the report when it fails.
check() {
	local name=$1
	shift
	if "$@" >"$tmp/$name" 2>&1; then
		ok "$name"
	else
		not_ok "$name" "$tmp/$name"
	fi
}

# The installed files as the guest sees them (the module at the booted
# kernel's path).  No process substitution or /dev/stderr in here: the
# guest has no /dev/fd.
installed_files() {
	sed -e 's|^\./|/|' -e "s|^/lib/modules/[^/]*/|/lib/modules/$kver/|" "$lib/files"
}
# The installed files whose name or contents say softcm, wherever
# install may have put them.
leftovers() {
	find /usr/bin /usr/lib /usr/include /usr/share/man /etc/udev /etc/modules-load.d \
		"/lib/modules/$kver" -name '*softcm*' 2>/dev/null
	grep -l softcm "/lib/modules/$kver"/modules.dep 2>/dev/null
}

cleanup() {
	[ -z "$server" ] || kill "$server" 2>/dev/null
	ip netns del $srv 2>/dev/null
	ip netns del $cli 2>/dev/null
}
trap 'cleanup; rm -rf "$tmp"' EXIT

# The module a previous program left loaded goes first: modprobe must
# load the installed one.  Its dependencies go too when nothing else
# holds them (rdma_rxe does, after the interop test), so that modprobe
# is seen to load them.
[ -e /sys/module/softcm ] && rmmod softcm
deps_unloaded=0
if rmmod ip6_udp_tunnel udp_tunnel 2>/dev/null; then
	deps_unloaded=1
fi

unpack() {
	local m f
	[ -s "$tar" ] || { echo "no $tar"; return 1; }
	tar -C / -xf "$tar" || return 1
	m=$(grep '^\./lib/modules/.*\.ko' "$lib/files") || { echo "no module in the tarball"; return 1; }
	m=${m#.}
	case $m in
	"/lib/modules/$kver/"*) ;;
	*)
		echo "the tarball's module is for another kernel: $m"
		echo "installing $SOFTCM_KO, built for $kver, at the same place"
		mkdir -p "$(dirname "/lib/modules/$kver/${m#/lib/modules/*/}")"
		cp "$SOFTCM_KO" "/lib/modules/$kver/${m#/lib/modules/*/}"
		rm -rf "/lib/modules/$(echo "$m" | cut -d/ -f4)"
		;;
	esac
	# What install must deliver, whatever the list says; then the list.
	installed_files >"$tmp/files"
	for f in /usr/bin/softcm /usr/lib/libsoftcm.so.1 /usr/lib/libsoftcm.so \
		 /usr/lib/libsoftcm.a /usr/include/softcm.h /usr/include/linux/softcm.h \
		 /usr/share/man/man7/softcm.7 /usr/share/man/man8/softcm.8 \
		 /usr/share/man/man3/softcm_getpeername.3 \
		 /usr/lib/softcm/compat/libibverbs.so.1 /usr/lib/softcm/compat/librdmacm.so.1; do
		grep -qxF "$f" "$tmp/files" || { echo "not installed: $f"; return 1; }
	done
	[ "$(readlink /usr/lib/libsoftcm.so)" = libsoftcm.so.1 ] || { echo "bad .so link"; return 1; }
	while read -r f; do
		[ -e "$f" ] || { echo "missing $f"; return 1; }
	done <"$tmp/files"
	cat "$tmp/files"
}
if ! unpack >"$tmp/unpack" 2>&1; then
	not_ok unpack "$tmp/unpack"
else
	sed 's/^/# /' "$tmp/unpack"
	ok unpack
fi
module=$(installed_files | grep '\.ko$')

# depmod finds the module where modules_install put it.
depmod_check() {
	local f
	depmod -a "$kver" || return 1
	f=$(modinfo -n softcm) || return 1
	echo "$f"
	[ "$f" = "$module" ]
}
check depmod depmod_check

modprobe_check() {
	modprobe softcm || return 1
	[ -e /sys/module/softcm ] && [ -c /dev/softcm ] || return 1
	if [ $deps_unloaded = 1 ]; then
		[ -e /sys/module/udp_tunnel ] && [ -e /sys/module/ip6_udp_tunnel ] ||
			{ echo "modprobe did not load the dependencies"; return 1; }
	else
		echo "udp_tunnel held by another module: dependencies not checked"
	fi
	echo "abi_version $(cat /sys/class/misc/softcm/abi_version)"
}
check modprobe modprobe_check
sed 's/^/# /' "$tmp/modprobe"

# The rule's mode is the device's (the module creates it 0666 in devtmpfs;
# there is no udevd in the guest to apply the rule).
udev_check() {
	local rule=/etc/udev/rules.d/60-softcm.rules mode
	cat "$rule" || return 1
	grep -v '^#' "$rule" | grep -q 'KERNEL=="softcm", SUBSYSTEM=="misc", MODE="0666"' || return 1
	mode=$(stat -c %a /dev/softcm)
	echo "/dev/softcm: $mode"
	[ "$mode" = 666 ]
}
check udev-rule udev_check

check modules-load eval 'grep -v "^#" /etc/modules-load.d/softcm.conf | grep -qx softcm'

# No pkg-config in the guest: the file's contents, and that it points
# at what was installed.
pc_check() {
	local pc=/usr/lib/pkgconfig/libsoftcm.pc ver
	cat "$pc" || return 1
	grep -qx 'prefix=/usr' "$pc" && grep -qx 'libdir=/usr/lib' "$pc" &&
		grep -qx 'includedir=/usr/include' "$pc" &&
		grep -qx 'Libs: -L${libdir} -lsoftcm' "$pc" &&
		grep -qx 'Cflags: -I${includedir}' "$pc" || return 1
	[ -e /usr/lib/libsoftcm.so ] && [ -e /usr/include/softcm.h ] || return 1
	ver=$(env -u LD_LIBRARY_PATH /usr/bin/softcm version | sed -n '1s/^softcm \([^ ]*\) .*/\1/p')
	grep -qx "Version: $ver" "$pc"
}
check pkg-config pc_check

# The installed tool finds the installed library by itself, not the
# test harness's copy (init.sh sets LD_LIBRARY_PATH=/softcm/lib).
lib_check() {
	local p
	env -u LD_LIBRARY_PATH /lib64/ld-linux-x86-64.so.2 --list /usr/bin/softcm >"$tmp/ldso" || return 1
	cat "$tmp/ldso"
	# /lib is /usr/lib in the guest, as on Debian.
	p=$(sed -n 's/^[[:space:]]*libsoftcm.so.1 => \([^ ]*\) .*/\1/p' "$tmp/ldso")
	[ -n "$p" ] && [ "$(readlink -f "$p")" = "$(readlink -f /usr/lib/libsoftcm.so.1)" ]
}
check installed-library lib_check

# The installed `softcm exec` finds the installed compat libraries by
# itself (next to /usr/lib/libsoftcm.so.1), and the dynamic linker takes
# both of rdma-core's sonames from there for rdma-core's ucmatose, with
# every version it needs (LD_TRACE_LOADED_OBJECTS: listed, not run).
compat_check() {
	local d=/usr/lib/softcm/compat
	env -u LD_LIBRARY_PATH /usr/bin/softcm exec env LD_TRACE_LOADED_OBJECTS=1 \
		/usr/bin/ucmatose >"$tmp/ldso" 2>&1 || { cat "$tmp/ldso"; return 1; }
	cat "$tmp/ldso"
	grep -q "^[[:space:]]*librdmacm.so.1 => $d/librdmacm.so.1 " "$tmp/ldso" &&
		grep -q "^[[:space:]]*libibverbs.so.1 => $d/libibverbs.so.1 " "$tmp/ldso" &&
		! grep -qi 'not found' "$tmp/ldso"
}
check exec-compat-libraries compat_check

# `softcm ping` as installed, between two namespaces.
ping_check() {
	local rc=0
	ip netns add $srv && ip netns add $cli &&
		ip link add veth0 netns $srv type veth peer name veth1 netns $cli &&
		ip -n $srv addr add 10.77.0.1/24 dev veth0 &&
		ip -n $cli addr add 10.77.0.2/24 dev veth1 &&
		ip -n $srv link set veth0 up && ip -n $cli link set veth1 up || return 1
	ip netns exec $srv env -u LD_LIBRARY_PATH timeout $T /usr/bin/softcm ping -l \
		-b 10.77.0.1 >"$tmp/server" 2>&1 &
	server=$!
	poll $((100 * slow)) grep -q '^listening on' "$tmp/server" || { cat "$tmp/server"; return 1; }
	ip netns exec $cli env -u LD_LIBRARY_PATH timeout $T /usr/bin/softcm ping \
		-d installed 10.77.0.1 || rc=$?
	wait "$server" || rc=$?
	server=
	echo "server:"
	cat "$tmp/server"
	[ $rc = 0 ]
}
check ping ping_check
cleanup

# What `make uninstall` removes, here by the file list: the module is
# unloaded, the files go, depmod forgets the module.
uninstall() {
	local f
	# modprobe -r takes the unused dependencies too; they come back below.
	modprobe -r softcm
	[ ! -e /sys/module/softcm ] || { echo "softcm still loaded"; return 1; }
	installed_files >"$tmp/files"
	while read -r f; do
		rm -f "$f"
	done <"$tmp/files"
	rmdir "$(dirname "$module")" "$(dirname "$(dirname "$module")")" \
		"$(dirname "$(dirname "$(dirname "$module")")")" 2>/dev/null
	rmdir /usr/lib/softcm/compat /usr/lib/softcm 2>/dev/null
	depmod -a "$kver" || return 1
	if modinfo -n softcm 2>/dev/null; then
		echo "depmod still knows softcm"
		return 1
	fi
	f=$(leftovers)
	[ -z "$f" ] || { echo "left: $f"; return 1; }
}
check uninstall uninstall

# The build ran `make uninstall` on its staging directory after packing
# it; whatever that left is listed here, and must be nothing.
check make-uninstall eval '[ -e "$lib/uninstall-leftovers" ] && ! grep . "$lib/uninstall-leftovers"'

# As init.sh left things for the next program.
modprobe -a udp_tunnel ip6_udp_tunnel
