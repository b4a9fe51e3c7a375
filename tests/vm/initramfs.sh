#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# initramfs.sh TAG KVER MODROOT
#
# Build (or reuse) the base initramfs for one test kernel: busybox for the
# basics, the real bash, iproute2 (ip, tc), rdma-core's tools and verbs
# provider for soft-RoCE, tcpdump for interop captures, trace-cmd, kmod, the libraries ldd lists for all of them, and
# the kernel modules the tests need with their dependency closure, taken
# from MODROOT/lib/modules/KVER.  Everything comes from Debian packages on
# the host.  The image is cached by kernel and by the hash of this script;
# prints its path.

set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

tag=$1 kver=$2 modroot=$3
modules_stamp=$(stat -c %Y "$modroot/lib/modules/$kver/modules.dep" 2>/dev/null || echo 0)
key=$(cat "$0" /var/lib/dpkg/info/{busybox-static,iproute2,rdma-core,bash,tcpdump,trace-cmd,perftest,ibverbs-utils,iperf3,strace,linux-perf}.list 2>/dev/null |
      { cat; echo "$kver $modules_stamp"; } | sha256sum | cut -c1-12)
out="$SOFTCM_CACHE/initramfs/$tag-$kver-$key.cpio"
if [ -e "$out" ]; then
	echo "$out"
	exit 0
fi

binaries=(
	/usr/bin/bash /usr/sbin/ip /usr/sbin/tc /usr/bin/rdma /usr/bin/kmod
	/usr/bin/ucmatose /usr/bin/udaddy /usr/bin/cmtime /usr/bin/rping
	/usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/tcpdump
	/usr/bin/trace-cmd
	# exec_test.sh: programs run to where they need the data path
	/usr/bin/ibv_rc_pingpong /usr/bin/ib_send_bw /usr/bin/ib_read_bw
	# exec_test.sh's rxe datapath: WRITEs both ways
	/usr/bin/ib_write_bw
	# exec_test.sh: librdmacm's examples and perftest's latency tests
	/usr/bin/rdma_server /usr/bin/rdma_client /usr/bin/rdma_xserver /usr/bin/rdma_xclient
	/usr/bin/ib_send_lat /usr/bin/ib_write_lat /usr/bin/ib_read_lat
	# make bench's data path (tests/bench/datapath.sh): TCP's stream
	# throughput, system calls per message, a profile
	/usr/bin/iperf3 /usr/bin/strace /usr/bin/perf
	# exec_test.sh: atomics softcm to softcm
	/usr/bin/ib_atomic_bw
)
# Modules for the tests' topologies (veth, netem) and for the soft-RoCE
# peer; crc32_generic is a hidden dependency of rdma_rxe.  crc32_pclmul is
# the "crc32" softcm's ICRC asks for on x86 (icrc.c); the debug kernel
# does not build it.
modules=(veth sch_netem sch_prio cls_u32 rdma_rxe rdma_ucm ib_uverbs crc32_generic crc32_pclmul
	 udp_tunnel ip6_udp_tunnel ip6_gre sit)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,etc,dev,proc,sys,tmp,run,mnt,root}
ln -s usr/bin "$stage/bin"
ln -s usr/sbin "$stage/sbin"
ln -s usr/lib "$stage/lib"
ln -s usr/lib64 "$stage/lib64"
ln -s ../run "$stage/var" 2>/dev/null || { mkdir -p "$stage/var"; ln -s ../run "$stage/var/run"; }

copy_with_libs() {
	local f src dst
	for f in "$@"; do
		mkdir -p "$stage$(dirname "$f")"
		cp -L "$f" "$stage$f"
		while read -r src; do
			# ldd reports /lib/...; the image keeps merged-/usr paths.
			case "$src" in
			/lib/* | /lib64/*) dst=/usr$src ;;
			*) dst=$src ;;
			esac
			[ -e "$stage$dst" ] && continue
			mkdir -p "$stage$(dirname "$dst")"
			cp -L "$src" "$stage$dst"
		done < <(ldd "$f" | awk '/=> \//{print $3} /^\t\//{print $1}')
	done
}

copy_with_libs "${binaries[@]}"

# soft-RoCE verbs provider, loaded by libibverbs with dlopen
prov=$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so 2>/dev/null | head -n1 || true)
if [ -n "$prov" ]; then
	copy_with_libs "$prov"
	mkdir -p "$stage/etc/libibverbs.d"
	cp /etc/libibverbs.d/rxe.driver "$stage/etc/libibverbs.d/"
fi

# busybox for everything we did not bring a real binary for
cp /usr/bin/busybox "$stage/usr/bin/busybox"
for applet in $(/usr/bin/busybox --list); do
	[ -e "$stage/usr/bin/$applet" ] || [ -e "$stage/usr/sbin/$applet" ] ||
		ln -s busybox "$stage/usr/bin/$applet"
done
for tool in modprobe insmod rmmod lsmod depmod modinfo; do
	ln -sf ../bin/kmod "$stage/usr/sbin/$tool"
	rm -f "$stage/usr/bin/$tool"
done
ln -sf bash "$stage/usr/bin/sh"

echo "root:x:0:0:root:/root:/bin/bash" >"$stage/etc/passwd"
echo "root:x:0:" >"$stage/etc/group"
echo "127.0.0.1 localhost" >"$stage/etc/hosts"
printf 'hosts: files\n' >"$stage/etc/nsswitch.conf"

# kernel modules with their dependency closure
mdir="lib/modules/$kver"
mkdir -p "$stage/usr/$mdir"
for m in "${modules[@]}"; do
	deps=$(modprobe -d "$modroot" -S "$kver" --show-depends "$m" 2>/dev/null) || {
		echo "initramfs: module $m not available for $kver" >&2
		continue
	}
	while read -r kind path _; do
		[ "$kind" = insmod ] || continue
		rel=${path#"$modroot"/}
		mkdir -p "$stage/usr/$(dirname "$rel")"
		cp "$path" "$stage/usr/$rel"
	done <<<"$deps"
done
cp "$modroot/$mdir"/modules.{order,builtin,builtin.modinfo} "$stage/usr/$mdir/" 2>/dev/null || true
depmod -b "$stage/usr" "$kver"

# The loader's cache.  Without it every exec probed each library
# directory and its glibc-hwcaps subdirectories for each library: the
# dynamic loader was 12 % of the debug guest's busy time (perf, under
# connect_test and protocol_test, whose fixtures exec ip and tc).
printf '%s\n' /usr/lib/x86_64-linux-gnu /usr/lib >"$stage/etc/ld.so.conf"
ldconfig -r "$stage"

mkdir -p "$(dirname "$out")"
# A temporary file of its own: make check's self-check and VM run may
# build the same image at once on a cold machine; the last rename wins.
tmp=$(mktemp "$out.XXXXXX")
(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet) >"$tmp"
mv "$tmp" "$out"
echo "$out"
