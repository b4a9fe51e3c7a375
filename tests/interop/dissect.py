#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a packet capture of softcm talking to the Linux RDMA CM.

dissect.py CAPTURE.pcap

Runs on the host, after the VM run, over a capture that an interop test
wrote in the guest (tests/interop/rxe_test.sh).  CAPTURE.hosts, beside it,
names the addresses of each side, one "softcm ADDR" or "rdma_cm ADDR" per
line.  Wireshark's dissector (tshark, from Debian) is the independent
reader: every softcm packet must dissect as InfiniBand over UDP 4791 with a
CM MAD, without malformed-packet or error-level expert info, and agree with
what the Linux CM (rdma_rxe) sent in the same run: base and class version,
lengths per attribute, comm IDs and transaction IDs that pair up.  The
ICRC of every packet is recomputed here, from the bytes, as RoCEv2 defines
it.  Prints TAP.
"""

import collections
import os
import struct
import subprocess
import sys
import zlib

CM_CLASS = 0x07
ATTRS = {
    0x0010: "REQ", 0x0011: "MRA", 0x0012: "REJ", 0x0013: "REP",
    0x0014: "RTU", 0x0015: "DREQ", 0x0016: "DREP",
    0x0017: "SIDR_REQ", 0x0018: "SIDR_REP",
}
# What the interop cases make softcm send; each must be in the capture.
SOFTCM_SENDS = ("REQ", "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP")
# Wireshark's expert severity for errors (PI_ERROR).
PI_ERROR = 0x00800000
# RoCEv2 over IPv6 leaves the UDP checksum zero (the ICRC covers the
# packet), as rdma_rxe and RoCE NICs do; Wireshark holds IPv6 UDP to RFC
# 8200's rule and reports it at error level.  softcm sends what rxe sends:
# this one item is accepted where the Linux CM's packets carry it too.
ZERO_CSUM6 = "Illegal checksum value (0)"

FIELDS = [
    "frame.number", "frame.len", "frame.protocols", "ip.src", "ipv6.src",
    "udp.dstport", "udp.length", "infiniband.bth.opcode", "infiniband.bth.a",
    "infiniband.bth.p_key", "infiniband.bth.destqp", "infiniband.bth.psn",
    "infiniband.mad.baseversion", "infiniband.mad.mgmtclass",
    "infiniband.mad.classversion", "infiniband.mad.method",
    "infiniband.mad.attributeid", "infiniband.mad.transactionid",
    "infiniband.cm.req", "infiniband.cm.rep", "infiniband.cm.rep.remotecommid",
    "infiniband.cm.rtu.localcommid", "infiniband.cm.rtu.remotecommid",
    "infiniband.cm.rej.localcommid", "infiniband.cm.rej.remotecommid",
    "infiniband.cm.dreq.localcommid", "infiniband.cm.dreq.remotecommid",
    "infiniband.cm.drsp.localcommid", "infiniband.cm.drsp.remotecommid",
    "_ws.malformed", "_ws.expert.severity", "_ws.expert.message",
]
LOCAL_COMM_ID = ("infiniband.cm.req", "infiniband.cm.rep",
                 "infiniband.cm.rtu.localcommid", "infiniband.cm.rej.localcommid",
                 "infiniband.cm.dreq.localcommid", "infiniband.cm.drsp.localcommid")
REMOTE_COMM_ID = ("infiniband.cm.rep.remotecommid", "infiniband.cm.rtu.remotecommid",
                  "infiniband.cm.dreq.remotecommid", "infiniband.cm.drsp.remotecommid")


class Tap:
    def __init__(self):
        self.n = 0
        self.lines = []

    def check(self, name, problems, note=""):
        self.n += 1
        self.lines.append(f"{'not ok' if problems else 'ok'} {self.n} {name}")
        if note:
            self.lines.append(f"# {note}")
        for p in problems[:10]:
            self.lines.append(f"# {p}")
        if len(problems) > 10:
            self.lines.append(f"# ... and {len(problems) - 10} more")

    def out(self, plan):
        print(f"1..{plan}")
        print("\n".join(self.lines))
        return 1 if any(l.startswith("not ok") for l in self.lines) else 0


def read_pcap(path):
    """The raw frames of a classic pcap file (what tcpdump -w writes)."""
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = {0xa1b2c3d4: "<", 0xa1b23c4d: "<", 0xd4c3b2a1: ">", 0x4d3cb2a1: ">"}[magic]
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    if linktype != 1:
        raise ValueError(f"link type {linktype}, not Ethernet")
    frames, off = [], 24
    while off + 16 <= len(data):
        incl = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


def icrc_ok(frame):
    """RoCEv2's invariant CRC: CRC-32 over 8 bytes of ones standing in for
    the LRH, the IP and UDP headers with their variant fields set to ones,
    and the BTH with its reserved byte set to ones, then the payload; sent
    as the last four bytes, least significant first."""
    ethertype = struct.unpack(">H", frame[12:14])[0]
    ip = bytearray(frame[14:])
    if ethertype == 0x0800:
        ihl = (ip[0] & 0x0f) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        ip = ip[:total]
        ip[1] = 0xff                       # TOS
        ip[8] = 0xff                       # TTL
        ip[10:12] = b"\xff\xff"            # header checksum
        l3 = ihl
    elif ethertype == 0x86dd:
        total = 40 + struct.unpack(">H", ip[4:6])[0]
        ip = ip[:total]
        ip[0:4] = bytes([ip[0] | 0x0f, 0xff, 0xff, 0xff])  # class, flow label
        ip[7] = 0xff                       # hop limit
        l3 = 40
    else:
        return False
    ip[l3 + 6:l3 + 8] = b"\xff\xff"        # UDP checksum
    bth = l3 + 8
    ip[bth + 4] = 0xff                     # BTH reserved byte before the QPN
    body, icrc = bytes(ip[:-4]), bytes(ip[-4:])
    crc = zlib.crc32(b"\xff" * 8 + body) & 0xffffffff
    return struct.pack("<I", crc) == icrc


def tshark(path):
    cmd = ["tshark", "-n", "-r", path, "-T", "fields", "-E", "separator=\t",
           "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in FIELDS:
        cmd += ["-e", f]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    rows = []
    for line in p.stdout.splitlines():
        vals = line.split("\t")
        vals += [""] * (len(FIELDS) - len(vals))
        rows.append(dict(zip(FIELDS, vals)))
    return p.returncode, p.stderr, rows


def num(v):
    return int(v, 0) if v else None


def main():
    path = sys.argv[1]
    tap = Tap()
    plan = 10
    hosts = {}
    try:
        for line in open(os.path.splitext(path)[0] + ".hosts"):
            side, addr = line.split()
            hosts[addr] = side
    except (OSError, ValueError):
        pass

    rc, err, rows = tshark(path)
    try:
        frames = read_pcap(path)
    except (OSError, ValueError, KeyError, struct.error) as e:
        frames = []
        err += str(e)
    problems = []
    if rc != 0:
        problems.append(f"tshark exit {rc}: {err.strip()}")
    if not rows or len(rows) != len(frames):
        problems.append(f"tshark read {len(rows)} frames, the file holds {len(frames)}")
    if not hosts:
        problems.append("no .hosts file: cannot tell softcm's packets from the peer's")
    tap.check("tshark-reads-the-capture", problems, f"{len(rows)} frames")
    if problems:
        return tap.out(plan)

    pkts = []
    for row, frame in zip(rows, frames):
        src = row["ip.src"] or row["ipv6.src"]
        row["side"] = hosts.get(src, "unknown")
        row["ipver"] = 4 if row["ip.src"] else 6
        row["attr"] = ATTRS.get(num(row["infiniband.mad.attributeid"]) or -1, "?")
        row["frame"] = frame
        pkts.append(row)
    sc = [p for p in pkts if p["side"] == "softcm"]
    peer = [p for p in pkts if p["side"] == "rdma_cm"]

    def where(p):
        return f"frame {p['frame.number']} from {p['side']} ({p['attr']})"

    tap.check("every-packet-from-a-known-side",
              [where(p) for p in pkts if p["side"] == "unknown"],
              f"{len(sc)} from softcm, {len(peer)} from the rdma_cm")

    problems = []
    for p in sc:
        protos = p["frame.protocols"].split(":")
        if "udp" not in protos or "infiniband" not in protos:
            problems.append(f"{where(p)}: protocols {p['frame.protocols']}")
        elif p["udp.dstport"] != "4791":
            problems.append(f"{where(p)}: UDP port {p['udp.dstport']}")
        elif num(p["infiniband.mad.mgmtclass"]) != CM_CLASS or p["attr"] == "?":
            problems.append(f"{where(p)}: class {p['infiniband.mad.mgmtclass']}"
                            f" attribute {p['infiniband.mad.attributeid']}")
    if not sc:
        problems.append("no packet from softcm")
    tap.check("softcm-packets-are-infiniband-cm-mads", problems)

    tap.check("no-malformed-packet",
              [where(p) for p in pkts if p["_ws.malformed"]])
    def errors(p):
        sev = p["_ws.expert.severity"].split(",")
        msg = p["_ws.expert.message"].split(",")
        return [m for s, m in zip(sev, msg) if s and int(s, 0) >= PI_ERROR]

    peer_zero6 = any(ZERO_CSUM6 in errors(p) for p in peer if p["ipver"] == 6)
    problems, excused = [], 0
    for p in pkts:
        for m in errors(p):
            if m == ZERO_CSUM6 and p["ipver"] == 6 and peer_zero6:
                excused += 1
            else:
                problems.append(f"{where(p)}: {m}")
    tap.check("no-error-expert-info", problems,
              f"{excused} IPv6 packets with a zero UDP checksum, as the rdma_cm's own"
              if excused else "")
    tap.check("icrc-valid-on-every-packet",
              [where(p) for p in pkts if not icrc_ok(p["frame"])])

    # What both sides must agree on: one base and class version, and for
    # each message, one length per IP version.
    problems = []
    for field in ("infiniband.mad.baseversion", "infiniband.mad.classversion",
                  "infiniband.bth.opcode", "infiniband.bth.a", "infiniband.bth.p_key",
                  "infiniband.bth.destqp"):
        mine = {p[field] for p in sc}
        theirs = {p[field] for p in peer}
        if mine != theirs:
            problems.append(f"{field}: softcm {sorted(mine)}, rdma_cm {sorted(theirs)}")
    # rxe numbers its QP1 packets in sequence; so does softcm, per
    # namespace (one sender here), when it builds each packet.  Packets
    # built on two CPUs at once may cross on the veth, and netem may drop
    # some: so no two may share a PSN, but gaps and order are not checked.
    psns = [num(p["infiniband.bth.psn"]) for p in sc]
    if len(set(psns)) != len(psns):
        problems.append(f"softcm sent BTH PSNs twice: {psns[:20]}")
    tap.check("bth-and-mad-header-as-the-linux-cm", problems)

    problems, compared = [], 0
    lengths = collections.defaultdict(set)
    for p in peer:
        lengths[(p["attr"], p["ipver"])].add((p["udp.length"], p["frame.len"]))
    for p in sc:
        want = lengths.get((p["attr"], p["ipver"]))
        if want is None:
            continue
        compared += 1
        if (p["udp.length"], p["frame.len"]) not in want:
            problems.append(f"{where(p)}: UDP length {p['udp.length']}, frame "
                            f"{p['frame.len']}; the rdma_cm's: {sorted(want)}")
    if not compared:
        # Nothing of a kind both sides sent: the check would prove nothing.
        problems.append("no softcm packet of a kind (message, IP version) the rdma_cm "
                        "also sent: nothing compared")
    tap.check("lengths-as-the-linux-cm", problems,
              f"{compared} softcm packets compared with the rdma_cm's of the same kind")

    # Every answer names an ID the other side used: comm IDs for the
    # connection messages, the transaction ID for SIDR.
    problems = []
    for me, other in ((sc, peer), (peer, sc)):
        theirs = set()
        for p in other:
            theirs.update(num(p[f]) for f in LOCAL_COMM_ID if p[f])
        for p in me:
            for f in REMOTE_COMM_ID + ("infiniband.cm.rej.remotecommid",):
                v = num(p[f])
                # A REJ to an unknown REQ may name 0 (rxe's reason 8 does not).
                if v is not None and v not in theirs and not (p["attr"] == "REJ" and v == 0):
                    problems.append(f"{where(p)}: remote comm ID {v:#x} never used by the other side")
        tids = {p["infiniband.mad.transactionid"] for p in other if p["attr"] == "SIDR_REQ"}
        for p in me:
            if p["attr"] == "SIDR_REP" and p["infiniband.mad.transactionid"] not in tids:
                problems.append(f"{where(p)}: transaction ID {p['infiniband.mad.transactionid']}"
                                " answers no SIDR_REQ")
    tap.check("ids-pair-up-between-the-sides", problems)

    sent = {p["attr"] for p in sc}
    tap.check("softcm-sent-every-message-kind",
              [f"no {a} from softcm" for a in SOFTCM_SENDS if a not in sent],
              "softcm sent " + ", ".join(sorted(sent)))
    return tap.out(plan)


if __name__ == "__main__":
    sys.exit(main())
