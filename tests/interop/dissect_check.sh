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

# make_data_capture FAULT: RC data between an "rxe" and a "softcm" address,
# both ways alike as rxe's requester and responder put them on the wire
# (a SEND of 3 packets, a READ of 2 MTUs and 100 bytes answered in 3, a
# WRITE of 70 with AckReq on its 66th and last packets, the ACKs), then
# softcm's stream of SENDs (req.c, "AckReq"; the first asking, the
# second not, its ACK probe, two more asking), with FAULT put into
# softcm's packets, into $tmp/FAULT_data.pcap (+ .hosts).  TTL 64 and one
# UDP source port (rdma_get_udp_sport() of flow label 0) both ways.  Frames are a
# second apart, the stream's a millisecond.
make_data_capture() {
	python3 - "$tmp/$1_data.pcap" "$1" <<'EOF2'
import struct, sys, zlib

path, fault = sys.argv[1], sys.argv[2]
RXE, SOFTCM = bytes([10, 91, 0, 1]), bytes([10, 91, 0, 2])
MTU = 1024


def udp_sport(lqpn, rqpn):
    """rdma_get_udp_sport() with flow label 0: the same at both ends."""
    v = lqpn * rqpn
    v ^= v >> 20
    v ^= v >> 40
    fl = v & 0xfffff
    return (fl & 0x3fff) ^ (fl >> 14) | 0xc000


SPORT = udp_sport(0x15, 0x16)


def frame(src, dst, opcode, qpn, psn, ackreq, ext, payload, bad_icrc=False):
    pad = -len(payload) % 4
    bth = bytes([opcode, pad << 4, 0xff, 0xff, 0]) + qpn.to_bytes(3, "big") + \
        bytes([0x80 if ackreq else 0]) + psn.to_bytes(3, "big")
    body = bth + ext + payload + bytes(pad)
    udp_len = 8 + len(body) + 4
    mine = src == SOFTCM
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 1, 0x4000,
                               1 if mine and fault == "ttl" else 64, 17, 0, src, dst))
    sport = SPORT ^ 1 if mine and fault == "sport" else SPORT
    udp = bytearray(struct.pack(">HHHH", sport, 4791, udp_len, 0))
    m_ip = bytearray(ip)
    m_ip[1], m_ip[8], m_ip[10:12] = 0xff, 0xff, b"\xff\xff"
    m_udp = bytearray(udp)
    m_udp[6:8] = b"\xff\xff"
    m_body = bytearray(body)
    m_body[4] = 0xff
    crc = zlib.crc32(b"\xff" * 8 + bytes(m_ip) + bytes(m_udp) + bytes(m_body))
    if bad_icrc:
        crc ^= 1
    eth = b"\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00"
    return eth + bytes(ip) + bytes(udp) + body + struct.pack("<I", crc)


def read(src, dst, dqp, sqp, psn, f, rf):
    """A READ request from src and dst's response (rf: dst's fault)."""
    n = 2 * MTU + 100
    reth = struct.pack(">QII", 0x2000, 0x4321, n)
    out = [frame(src, dst, 0x0c, dqp, psn, True, reth, b"")]
    aeth = bytes([0x1f, 0, 0, 1])
    last = 96 if rf == "read-length" else 100
    for i, (op, ext, m) in enumerate([(0x0d, aeth, MTU), (0x0e, b"", MTU), (0x0f, aeth, last)]):
        out.append(frame(dst, src, op, sqp, psn + i, False, ext, bytes(m)))
    return out, 1 if f == "read-psn" else 3


def side(src, dst, dqp, sqp, psn, mine):
    """One side's SEND of 3 packets, READ and WRITE of 70, the other's ACKs."""
    out = []
    f = fault if mine else "none"
    rf = fault if not mine else "none"
    send = [(0x00, MTU), (0x01, MTU), (0x02, 100)]
    if f == "mtu":
        send[1] = (0x01, MTU - 4)
    if f == "opcode":
        send[2] = (0x03, 100)           # SEND_LAST with an immediate
    reth = struct.pack(">QII", 0x1000, 0x1234, 70 * MTU)
    write = [(0x06, MTU)] + [(0x07, MTU)] * 68 + [(0x08, MTU)]
    marks = {65, 69} if f != "ackreq" else {63, 69}
    # lastack: a SEND's LAST without AckReq, no message just before it
    msgs = [(send, set() if f == "lastack" else {2}, 1.0), ("read", None, 1.0),
            (write, marks, 1.0)]
    if mine:
        # probed: the first message after a probe without AckReq
        msgs += [(send, {2}, 0.001), (send, set(), 0.001), ("probe", None, 0.001),
                 (send, set() if f == "probed" else {2}, 0.001), (send, {2}, 0.001)]
    for ops, acks, dt in msgs:
        if ops == "probe":
            # the newest packet again, asking, and its ACK
            out.append((frame(src, dst, 0x02, dqp, psn - 1, True, b"", bytes(100)), dt))
            out.append((frame(dst, src, 0x11, sqp, psn - 1, False, bytes([0x1f, 0, 0, 1]),
                              b""), dt))
            continue
        if ops == "read":
            pkts, n = read(src, dst, dqp, sqp, psn, f, rf)
            out += pkts
            psn += n
            continue
        for i, (op, n) in enumerate(ops):
            ext = reth if op == 0x06 else (b"\0\0\0\x2a" if op == 0x03 else b"")
            out.append((frame(src, dst, op, dqp, psn, i in acks, ext, bytes(n),
                              bad_icrc=(f == "icrc" and i == 1)), dt))
            if i in acks:
                aeth = bytes([0x1f, 0, 0, 1])
                out.append((frame(dst, src, 0x11, sqp, psn, False, aeth, b""), dt))
            psn += 2 if f == "psn-gap" and i == 0 else 1
    next_psn[mine] = psn
    return out


def reordered(q):
    """A SEND of rxe's whose LAST came first at softcm: its sequence NAK."""
    ack, nak = bytes([0x1f, 0, 0, 1]), bytes([0x60, 0, 0, 1])
    send = [frame(RXE, SOFTCM, 0x00, 0x16, q, False, b"", bytes(MTU)),
            frame(RXE, SOFTCM, 0x02, 0x16, q + 1, True, b"", bytes(100))]
    out = send + [frame(SOFTCM, RXE, 0x11, 0x15, q, False, nak, b"")]
    if fault == "nak-answered":
        out += send             # rxe goes back to the PSN the NAK names
    return out + [frame(SOFTCM, RXE, 0x11, 0x15, q + 1, False, ack, b"")]


next_psn = {}
frames = side(RXE, SOFTCM, 0x16, 0x15, 100, False) + side(SOFTCM, RXE, 0x15, 0x16, 900, True)
if fault.startswith("nak-"):
    frames += reordered(next_psn[False])
with open(path, "wb") as fh:
    fh.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    t = 1000 * 1000000                  # in microseconds
    for fr in frames:
        fr, dt = fr if isinstance(fr, tuple) else (fr, 1.0)
        t += round(dt * 1000000)
        fh.write(struct.pack("<IIII", t // 1000000, t % 1000000, len(fr), len(fr)))
        fh.write(fr)
open(path[:-len(".pcap")] + ".hosts", "w").write("rxe 10.91.0.1\nsoftcm 10.91.0.2\n")
EOF2
}

# expect_data FAULT CHECK: dissect_data.py fails CHECK (only) on that
# capture; FAULT "none" passes every check.
expect_data() {
	local fault=$1 check=$2 out
	make_data_capture "$fault"
	out=$(python3 "$here/dissect_data.py" "$tmp/${fault}_data.pcap" 2>&1)
	if [ -z "$check" ]; then
		local name=good-capture-passes
		[ "$fault" = none ] || name=$fault-passes
		if ! echo "$out" | grep -q "^not ok" && echo "$out" | grep -q "^ok 11 "; then
			tap_ok "dissect-data/$name"
		else
			tap_fail "dissect-data/$name"
			echo "$out" | sed 's/^/#   /'
		fi
		return
	fi
	if echo "$out" | grep -q "^not ok [0-9]* $check$" &&
	   [ "$(echo "$out" | grep -c "^not ok")" = 1 ]; then
		tap_ok "dissect-data/$fault-fails-$check"
	else
		tap_fail "dissect-data/$fault-fails-$check"
		echo "$out" | sed 's/^/#   /'
	fi
}

expect_data none ""
expect_data icrc icrc-valid-on-every-packet
expect_data mtu payload-lengths-as-rxe
expect_data opcode rc-opcodes-as-rxe
expect_data ackreq messages-and-ackreq-as-rxe
expect_data lastack messages-and-ackreq-as-rxe
expect_data probed messages-and-ackreq-as-rxe
expect_data psn-gap messages-and-ackreq-as-rxe
expect_data read-psn messages-and-ackreq-as-rxe
expect_data read-length read-responses-as-rxe
expect_data ttl ip-and-udp-as-rxe
expect_data sport ip-and-udp-as-rxe
expect_data nak-answered ""
expect_data nak-unanswered acks-as-rxe
tap_finish dissect
