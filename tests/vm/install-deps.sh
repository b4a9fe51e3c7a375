#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything softcm needs to build and test, from Debian's archive
# only, or only the packages named as arguments (make dkms-install asks
# for dkms).  Idempotent: when every package is present this costs one
# dpkg-query.

set -eu

packages=(
	# build: module, library, tool, tests
	make gcc g++ libc6-dev pkg-config bc flex bison libelf-dev libssl-dev dwarves
	linux-image-amd64 linux-headers-amd64 linux-source-6.1 librdmacm-dev
	# the debug kernel (6.12, the current LTS) is built from source
	linux-source-6.12
	# static checks (checkpatch.pl comes from linux-source-6.1)
	sparse perl python3
	# the VM: kernel, initramfs contents
	qemu-system-x86 busybox-static bash iproute2 kmod cpio xz-utils
	rdma-core rdmacm-utils ibverbs-utils
	# static/programs and exec_test.sh: every program of these three
	# packages under softcm exec
	perftest
	# debug kernel build cache; packet capture (in the VM) and
	# dissection (on the host) for interop
	ccache tcpdump tshark
	# tracepoints read by trace-cmd in the VM
	trace-cmd
	# make bench: the chart; the data path's TCP stream and system calls
	# per message and a profile (in the VM)
	gnuplot-nox iperf3 strace linux-perf
	# static/dkms: make dkms-install's tree built by DKMS
	dkms
)
[ $# -gt 0 ] && packages=("$@")

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "softcm: missing packages: ${missing[*]}; run this as root" >&2
	exit 1
fi
echo "softcm: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# INITRD=No: the host never boots these kernels, so skip update-initramfs.
export INITRD=No
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
