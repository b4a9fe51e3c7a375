#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The capture checker (dissect.py), offline on the host: a fabricated
# exchange between an "rdma_cm" and a "softcm" address must pass, and each
# fault put into softcm's packets must fail the check that names it.  The
# VM runs prove the same on real captures; this proves the checks can fail.

set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/static/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# make_capture FAULT: a REQ and an RTU from the rdma_cm, a REP, an RTU
# and a REJ from softcm, as RoCEv2 over IPv4, into $tmp/FAULT.pcap (+
# .hosts).
make_capture() {
	python3 - "$tmp/$1.pcap" "$1" <<'EOF'
import struct, sys, zlib

path, fault = sys.argv[1], sys.argv[2]
RDMA_CM, SOFTCM = bytes([10, 90, 0, 1]), bytes([10, 90, 0, 2])


def cm_mad(attr, tid, fields):
    mad = bytearray(256)
    cls_ver = 1 if fault == "class-version" and attr != 0x10 else 2
    struct.pack_into(">BBBBHHQHHI", mad, 0, 1, 7, cls_ver, 3, 0, 0, tid, attr, 0, 0)
    for off, val in fields:
        struct.pack_into(">I", mad, 24 + off, val)
    return bytes(mad)


def frame(src, dst, mad, psn, bad_icrc=False, cut=0):
    bth = bytearray([0x64, 0, 0xff, 0xff, 0, 0, 0, 1, 0x80]) + psn.to_bytes(3, "big")
    deth = bytes([0x80, 0x01, 0, 0, 0, 0, 0, 1])
    payload = bytes(bth) + deth + mad[:len(mad) - cut]
    udp_len = 8 + len(payload) + 4
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 1, 0x4000,
                               64, 17, 0, src, dst))
    udp = bytearray(struct.pack(">HHHH", 0xd872, 4791, udp_len, 0))
    m_ip = bytearray(ip)
    m_ip[1], m_ip[8], m_ip[10:12] = 0xff, 0xff, b"\xff\xff"
    m_udp = bytearray(udp)
    m_udp[6:8] = b"\xff\xff"
    m_bth = bytearray(payload)
    m_bth[4] = 0xff
    crc = zlib.crc32(b"\xff" * 8 + bytes(m_ip) + bytes(m_udp) + bytes(m_bth))
    if bad_icrc:
        crc ^= 1
    eth = b"\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00"
    return eth + bytes(ip) + bytes(udp) + payload + struct.pack("<I", crc)


req = cm_mad(0x10, 7, [(0, 0x1111)])
rep_fields = [(0, 0x2222), (4, 0x1111 if fault != "comm-id" else 0x3333)]
rep = cm_mad(0x13, 7, rep_fields)
rtu = cm_mad(0x14, 8, [(0, 0x2222), (4, 0x1111)])
rej = cm_mad(0x12, 7, [(0, 0x2222), (4, 0x1111), (8, 0x00080000)])
frames = [
    frame(RDMA_CM, SOFTCM, req, 5),
    frame(RDMA_CM, SOFTCM, cm_mad(0x14, 9, [(0, 0x1111), (4, 0x2222)]), 6),
    frame(SOFTCM, RDMA_CM, rep, 0, bad_icrc=(fault == "icrc")),
    frame(SOFTCM, RDMA_CM, rtu + (bytes(8) if fault == "padded" else b""), 1,
          cut=(200 if fault == "truncated" else 0)),
    frame(SOFTCM, RDMA_CM, rej, 2 if fault != "psn" else 0),
]
with open(path, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, fr in enumerate(frames):
        f.write(struct.pack("<IIII", 1000 + i, 0, len(fr), len(fr)))
        f.write(fr)
hosts = "rdma_cm 10.90.0.1\n" + ("softcm 10.90.0.2\n" if fault != "hosts" else "")
open(path[:-len(".pcap")] + ".hosts", "w").write(hosts)
EOF
}

# expect FAULT CHECK: dissect.py fails CHECK (only) on that capture; for
# FAULT "none", every check but the message-kind one (this fabricated
# exchange has no DREQ or SIDR) passes.
expect() {
	local fault=$1 check=$2 out
	make_capture "$fault"
	out=$(python3 "$here/dissect.py" "$tmp/$fault.pcap" 2>&1)
	if [ "$fault" = none ]; then
		if ! echo "$out" | grep "^not ok" | grep -qv softcm-sent-every-message-kind &&
		   echo "$out" | grep -q "^ok .* icrc-valid-on-every-packet"; then
			tap_ok "dissect/good-capture-passes"
		else
			tap_fail "dissect/good-capture-passes"
			echo "$out" | sed 's/^/#   /'
		fi
		return
	fi
	if echo "$out" | grep -q "^not ok [0-9]* $check$"; then
		tap_ok "dissect/$fault-fails-$check"
	else
		tap_fail "dissect/$fault-fails-$check"
		echo "$out" | sed 's/^/#   /'
	fi
}

expect none ""
expect icrc icrc-valid-on-every-packet
expect class-version bth-and-mad-header-as-the-linux-cm
expect psn bth-and-mad-header-as-the-linux-cm
expect comm-id ids-pair-up-between-the-sides
expect truncated softcm-packets-are-infiniband-cm-mads
expect padded lengths-as-the-linux-cm
expect hosts every-packet-from-a-known-side
expect none-needed softcm-sent-every-message-kind
tap_finish dissect
