#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a packet capture of softcm's RC data path talking to rdma_rxe.

dissect_data.py CAPTURE.pcap

Runs on the host, after the VM run, over a capture of RoCEv2 data traffic
between softcm and rdma_rxe that tests/interop/exec_test.sh wrote in the
guest ("rxe datapath": ibv_rc_pingpong, ib_send_bw -R, ib_write_bw -R,
rping -V and ib_read_bw -R, each side once the requester).  CAPTURE.hosts, beside it, names the
address of each side, "softcm ADDR" or "rxe ADDR".  Wireshark's dissector
(tshark) is the independent reader: no malformed packet and no error-level
expert info; the ICRC of every packet is recomputed here from the bytes
(dissect.py's, as RoCEv2 defines it).  Then softcm's RC packets must look
like rxe's own from the same run:

- the same RC opcodes, each side having been requester and responder;
- each message's packets FIRST MIDDLE* LAST or ONLY, of one kind, PSNs
  consecutive (retransmissions aside), a READ request taking as many
  PSNs as its response has packets;
- each READ response FIRST MIDDLE* LAST or ONLY from the PSN of its
  request, carrying the request's DMA length;
- FIRST and MIDDLE carrying exactly the path MTU (the largest payload rxe
  sent in them), no payload above it, the pad as the length needs;
- AckReq where rxe puts it: rxe's on every LAST and ONLY; within a
  message at the packets rxe's requester marks (rxe_req.c: after more
  than 64 packets without one), compared message length by message
  length; softcm's, which counts those 64 across messages, on every LAST
  and ONLY but a stream's (req.c, "AckReq"): a SEND or WRITE that ends
  in the tick of jiffies the message before it ended in (seen here as:
  not after a pause of half a second, nor first after an ACK probe),
  15 such in a row at most (any packet that asks ends a row, one within
  a message or sent again too), each followed by a request that asks
  (the next message's, or the ACK probe's);
- ACKs of the same length, syndrome kind and with MSNs that grow; a
  sequence NAK of softcm's where rxe sent none is accepted when rxe, going
  back to the PSN it names, sent that PSN again after it (a packet of
  rxe's that the veth's per-CPU backlogs put behind a later one makes
  either side NAK; the capture, taken where rxe sends, shows them in
  order);
- the IP and UDP fields both derive the same way: DF, TTL (ib_core puts
  the route's in place of the application's: ibv_rc_pingpong asks for 1),
  DS field, zero UDP checksum, and one UDP source port for both ends of a
  connection (rdma_get_udp_sport() of the flow label the two share and of
  the two QPNs, symmetric in them), which each side's packets show: every
  source port softcm sends from, rxe sends from too, and the reverse.

Prints TAP.
"""

import collections
import os
import subprocess
import sys

from dissect import PI_ERROR, Tap, icrc_ok, read_pcap

FIELDS = [
    "frame.number", "frame.len", "frame.protocols", "ip.src", "ip.flags.df",
    "ip.ttl", "ip.dsfield",
    "udp.dstport", "udp.length", "udp.checksum", "udp.srcport",
    "infiniband.bth.opcode", "infiniband.bth.a", "infiniband.bth.padcnt",
    "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.bth.p_key",
    "infiniband.aeth.syndrome", "infiniband.aeth.msn", "infiniband.reth.dmalen",
    "_ws.malformed", "_ws.expert.severity", "_ws.expert.message", "frame.time_epoch",
]
# softcm's stream (req.c, "AckReq"): a message's LAST or ONLY may go
# without AckReq if the message before it ended in the same tick of
# jiffies, at most this many in a row (SOFTCM_RC_ACKREQ_WRS - 1), and
# within rxe's 64 + 1 packets.  The tick is the sender's, when it built
# the packet; a capture's clock sees the packet later, by as long as the
# guest's CPU was not running between the two, which on a loaded host
# can be more than a tick.  So a capture shows only that a message after
# a pause of STREAM_GAP (far beyond a tick and a stall) asks, and that
# the first message after an ACK probe (which comes two ticks after the
# last message, so never in its tick) asks.
STREAM_GAP = 0.5
STREAM_RUN = 15
NOACK_MAX = 64

# RC opcodes (IBTA table 35): name, kind, position, extra header bytes.
RC = {
    0x00: ("SEND_FIRST", "send", "first", 0),
    0x01: ("SEND_MIDDLE", "send", "middle", 0),
    0x02: ("SEND_LAST", "send", "last", 0),
    0x03: ("SEND_LAST_IMM", "send", "last", 4),
    0x04: ("SEND_ONLY", "send", "only", 0),
    0x05: ("SEND_ONLY_IMM", "send", "only", 4),
    0x06: ("WRITE_FIRST", "write", "first", 16),
    0x07: ("WRITE_MIDDLE", "write", "middle", 0),
    0x08: ("WRITE_LAST", "write", "last", 0),
    0x09: ("WRITE_LAST_IMM", "write", "last", 4),
    0x0a: ("WRITE_ONLY", "write", "only", 16),
    0x0b: ("WRITE_ONLY_IMM", "write", "only", 20),
    0x0c: ("READ_REQUEST", "read", "only", 16),
    0x0d: ("READ_RESPONSE_FIRST", "rresp", "first", 4),
    0x0e: ("READ_RESPONSE_MIDDLE", "rresp", "middle", 0),
    0x0f: ("READ_RESPONSE_LAST", "rresp", "last", 4),
    0x10: ("READ_RESPONSE_ONLY", "rresp", "only", 4),
    0x11: ("ACKNOWLEDGE", "ack", "only", 4),
    0x12: ("ATOMIC_ACKNOWLEDGE", "atomicack", "only", 12),
    0x13: ("COMPARE_SWAP", "atomic", "only", 28),
    0x14: ("FETCH_ADD", "atomic", "only", 28),
}
# What a requester sends; the rest (ACKs, READ responses, atomic ACKs)
# the responder.
REQUESTS = ("send", "write", "read", "atomic")
NAK_SEQ = 0x60                          # AETH syndrome: NAK, PSN sequence error
BTH, ICRC = 12, 4


def tshark(path):
    # perftest's and rc_pingpong's payloads fool the RPC-over-RDMA
    # heuristic into "malformed" on both sides: it is not what they carry.
    cmd = ["tshark", "-n", "-r", path, "--disable-protocol", "rpcordma",
           "-T", "fields", "-E", "separator=\t",
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
    return int(v.split(",")[0], 0) if v else None


def psn_after(a, b):
    """Whether 24-bit PSN a comes after b."""
    return a != b and ((a - b) & 0xffffff) < 0x800000


def main():
    path = sys.argv[1]
    tap = Tap()
    plan = 11
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
    except (OSError, ValueError, KeyError) as e:
        frames = []
        err += str(e)
    problems = []
    if rc != 0:
        problems.append(f"tshark exit {rc}: {err.strip()}")
    if not rows or len(rows) != len(frames):
        problems.append(f"tshark read {len(rows)} frames, the file holds {len(frames)}")
    if sorted(set(hosts.values())) != ["rxe", "softcm"]:
        problems.append("the .hosts file does not name both sides")
    tap.check("tshark-reads-the-capture", problems, f"{len(rows)} frames")
    if problems:
        return tap.out(plan)

    pkts = []
    for row, frame in zip(rows, frames):
        row["side"] = hosts.get(row["ip.src"], "unknown")
        row["frame"] = frame
        op = num(row["infiniband.bth.opcode"])
        row["op"] = op
        row["rc"] = RC.get(op) if op is not None and num(row["infiniband.bth.destqp"]) != 1 \
            else None
        pkts.append(row)
    sides = {"softcm": [p for p in pkts if p["side"] == "softcm"],
             "rxe": [p for p in pkts if p["side"] == "rxe"]}
    data = {s: [p for p in ps if p["rc"]] for s, ps in sides.items()}

    def where(p):
        name = p["rc"][0] if p["rc"] else f"opcode {p['infiniband.bth.opcode']}"
        return f"frame {p['frame.number']} from {p['side']} ({name})"

    problems = [where(p) for p in pkts if p["side"] == "unknown"]
    for s in sides:
        if not data[s]:
            problems.append(f"no RC data packet from {s}")
    for p in pkts:
        if p["op"] is not None and num(p["infiniband.bth.destqp"]) != 1 and not p["rc"]:
            problems.append(f"{where(p)}: not an RC opcode of rxe's")
    tap.check("every-packet-rc-data-or-cm-from-a-known-side", problems,
              f"{len(data['softcm'])} RC packets from softcm, {len(data['rxe'])} from rxe")

    tap.check("no-malformed-packet", [where(p) for p in pkts if p["_ws.malformed"]])

    def errors(p):
        sev = p["_ws.expert.severity"].split(",")
        msg = p["_ws.expert.message"].split(",")
        return [m for s, m in zip(sev, msg) if s and int(s, 0) >= PI_ERROR]

    tap.check("no-error-expert-info", [f"{where(p)}: {m}" for p in pkts for m in errors(p)])
    tap.check("icrc-valid-on-every-packet", [where(p) for p in pkts if not icrc_ok(p["frame"])])

    problems = []
    ops = {s: {p["rc"][0] for p in data[s]} for s in sides}
    if ops["softcm"] != ops["rxe"]:
        problems.append(f"softcm sent {sorted(ops['softcm'])}, rxe {sorted(ops['rxe'])}")
    tap.check("rc-opcodes-as-rxe", problems, "both sent " + ", ".join(sorted(ops["rxe"])))

    # Payload lengths: the UDP payload less the headers, the pad and the ICRC.
    def payload(p):
        return (num(p["udp.length"]) - 8 - BTH - p["rc"][3] - ICRC
                - (num(p["infiniband.bth.padcnt"]) or 0))

    mtu = max((payload(p) for p in data["rxe"] if p["rc"][2] in ("first", "middle")),
              default=None)
    problems = []
    if mtu is None:
        problems.append("rxe sent no FIRST or MIDDLE: no path MTU to compare with")
    for s in sides:
        for p in data[s]:
            n, pos = payload(p), p["rc"][2]
            pad = num(p["infiniband.bth.padcnt"]) or 0
            if (n + pad) % 4 or pad != (-n) % 4:
                problems.append(f"{where(p)}: {n} bytes with a pad of {pad}")
            if p["rc"][1] == "ack":
                if n:
                    problems.append(f"{where(p)}: {n} bytes of payload in an ACK")
            elif mtu is not None and (n > mtu or (pos in ("first", "middle") and n != mtu)):
                problems.append(f"{where(p)}: {n} bytes, the path MTU is {mtu}")
    acklen = {s: {p["frame.len"] for p in data[s] if p["rc"][1] == "ack"} for s in sides}
    if acklen["softcm"] != acklen["rxe"]:
        problems.append(f"ACK frame lengths: softcm {sorted(acklen['softcm'])}, "
                        f"rxe {sorted(acklen['rxe'])}")
    tap.check("payload-lengths-as-rxe", problems, f"path MTU {mtu}")

    def read_pkts(p):
        """The PSNs a request takes: a READ's, one per response packet."""
        if p["rc"][1] != "read" or not mtu:
            return 1
        return max(1, -(-(num(p["infiniband.reth.dmalen"]) or 0) // mtu))

    def asks(p):
        return p["infiniband.bth.a"] in ("1", "True")

    def stamp(p):
        return float(p["frame.time_epoch"] or 0)

    # Each requester's messages, per destination QP, in capture order,
    # first transmissions only: FIRST MIDDLE* LAST or ONLY of one kind,
    # consecutive PSNs; and where AckReq was set, by message length (for
    # softcm, of the messages begun right after one asked for: its count
    # of packets without AckReq goes on across a stream's messages).
    problems = []
    ackreq = {s: collections.defaultdict(set) for s in sides}
    streamed = 0
    for s in sides:
        flows = collections.defaultdict(list)
        for p in data[s]:
            if p["rc"][1] in REQUESTS:
                flows[num(p["infiniband.bth.destqp"])].append(p)
        for qpn, ps in flows.items():
            top, msg = None, []
            # softcm: packets since the last AckReq (None: unknown, after
            # a go-back), messages without one in a row, the last end;
            # packets sent again in a row, and whether they were an ACK
            # probe (the newest packet alone, asking)
            noack, run, ended, begun = 0, 0, None, 0
            retx, probed = 0, False
            for i, p in enumerate(ps):
                psn = num(p["infiniband.bth.psn"])
                if top is not None and not psn_after(psn, top):
                    # a retransmission: a go-back counts from 0 again
                    noack = 0 if asks(p) else None
                    run = 0 if asks(p) else run
                    retx += 1
                    probed = retx == 1 and psn == top and asks(p)
                    continue
                retx = 0
                if top is not None and psn != (top + 1) & 0xffffff:
                    problems.append(f"{where(p)}: PSN {psn:#x} after {top:#x} to QP {qpn:#x}")
                    msg = []
                top = (psn + read_pkts(p) - 1) & 0xffffff
                kind, pos = p["rc"][1], p["rc"][2]
                if msg and (pos in ("first", "only") or kind != msg[0]["rc"][1]):
                    problems.append(f"{where(p)}: a message to QP {qpn:#x} left unfinished")
                    msg = []
                if not msg and pos in ("middle", "last"):
                    problems.append(f"{where(p)}: no FIRST before it")
                    continue
                if not msg:
                    begun = noack
                msg.append(p)
                end = pos in ("last", "only")
                if s == "softcm" and noack is not None and not end:
                    if asks(p) != (noack > NOACK_MAX):
                        problems.append(f"{where(p)}: AckReq {asks(p)} after {noack} packets"
                                        " without")
                if s == "softcm" and end and not asks(p):
                    streamed += 1
                    why = []
                    if kind not in ("send", "write"):
                        why.append(f"a {kind}")
                    if noack is not None and noack > NOACK_MAX:
                        why.append(f"{noack} packets without before it")
                    if ended is None or stamp(p) - ended >= STREAM_GAP:
                        why.append("no message just before it")
                    if run + 1 > STREAM_RUN:
                        why.append(f"{run + 1} such in a row")
                    if probed:
                        why.append("the first message after an ACK probe")
                    if not any(asks(q) for q in ps[i + 1:]):
                        why.append("no request asks after it")
                    if why:
                        problems.append(f"{where(p)}: no AckReq on a message's last: " +
                                        ", ".join(why))
                # any packet that asks ends a row (mid-message too)
                if asks(p):
                    noack, run = 0, 0
                elif noack is not None:
                    noack += 1
                if end:
                    probed = False
                    run = run if asks(p) else run + 1
                    ended = stamp(p)
                    marks = tuple(i for i, m in enumerate(msg) if asks(m))
                    if s == "rxe" or (begun == 0 and asks(p)):
                        ackreq[s][(kind, len(msg))].add(marks)
                    msg = []
    for (kind, n), marks in ackreq["rxe"].items():
        for m in marks:
            if n - 1 not in m:
                problems.append(f"rxe: a {kind} of {n} packets without AckReq on its last")
    compared = 0
    for key in set(ackreq["softcm"]) & set(ackreq["rxe"]):
        compared += 1
        if ackreq["softcm"][key] != ackreq["rxe"][key]:
            problems.append(f"AckReq in a {key[0]} of {key[1]} packets: softcm at "
                            f"{sorted(ackreq['softcm'][key])}, rxe at {sorted(ackreq['rxe'][key])}")
    longest = max((n for (k, n) in set(ackreq["softcm"]) & set(ackreq["rxe"])
                   if k != "read"), default=0)
    if longest <= 66:
        problems.append(f"the longest message both sent has {longest} packets: AckReq within"
                        " a message not compared")
    tap.check("messages-and-ackreq-as-rxe", problems,
              f"{compared} message shapes compared, the longest {longest} packets; "
              f"{streamed} of softcm's stream without AckReq on their last")

    # READ responses: per destination QP, first transmissions, each one
    # FIRST MIDDLE* LAST or ONLY, from the PSN of a READ request the
    # other side sent, with as many bytes as that request asked for.
    problems = []
    asked = {s: {} for s in sides}
    for s in sides:
        for p in data[s]:
            if p["rc"][1] == "read":
                asked[s][num(p["infiniband.bth.psn"])] = num(p["infiniband.reth.dmalen"]) or 0
    answered = {s: 0 for s in sides}
    for s in sides:
        other = "rxe" if s == "softcm" else "softcm"
        flows = collections.defaultdict(list)
        for p in data[s]:
            if p["rc"][1] == "rresp":
                flows[num(p["infiniband.bth.destqp"])].append(p)
        for qpn, ps in flows.items():
            top, resp = None, []
            for p in ps:
                psn, pos = num(p["infiniband.bth.psn"]), p["rc"][2]
                if top is not None and not psn_after(psn, top):
                    resp = []
                    continue        # a response sent again
                if pos in ("first", "only"):
                    if resp:
                        problems.append(f"{where(p)}: a response to QP {qpn:#x} left unfinished")
                    resp = [p]
                elif not resp or psn != (top + 1) & 0xffffff:
                    problems.append(f"{where(p)}: PSN {psn:#x} not after the response's "
                                    f"{top if top is None else hex(top)}")
                    resp = []
                else:
                    resp.append(p)
                top = psn
                if resp and pos in ("last", "only"):
                    first = num(resp[0]["infiniband.bth.psn"])
                    got = sum(payload(r) for r in resp)
                    if first not in asked[other]:
                        problems.append(f"{where(p)}: no READ request from {other} at PSN"
                                        f" {first:#x}")
                    elif asked[other][first] != got:
                        problems.append(f"{where(p)}: {got} bytes, the READ asked"
                                        f" {asked[other][first]}")
                    else:
                        answered[s] += 1
                    resp = []
    for s in sides:
        if not answered[s]:
            problems.append(f"{s} answered no READ")
    tap.check("read-responses-as-rxe", problems,
              f"READs answered: softcm {answered['softcm']}, rxe {answered['rxe']}")

    # ACKs: the syndrome kinds both use, MSNs never going back per flow.
    problems = []
    for s in sides:
        last = {}
        for p in data[s]:
            if p["rc"][1] != "ack":
                continue
            qpn, msn = num(p["infiniband.bth.destqp"]), num(p["infiniband.aeth.msn"])
            if qpn in last and psn_after(last[qpn], msn):
                problems.append(f"{where(p)}: MSN {msn} after {last[qpn]}")
            last[qpn] = msn
    syn = {s: {num(p["infiniband.aeth.syndrome"]) for p in data[s] if p["rc"][1] == "ack"}
           for s in sides}
    naks = [p for p in data["softcm"]
            if p["rc"][1] == "ack" and num(p["infiniband.aeth.syndrome"]) == NAK_SEQ]
    resent = [p for p in naks
              if any(num(q["frame.number"]) > num(p["frame.number"])
                     and q["rc"][1] in REQUESTS
                     and num(q["infiniband.bth.psn"]) == num(p["infiniband.bth.psn"])
                     for q in data["rxe"])]
    for p in naks:
        if p not in resent:
            problems.append(f"{where(p)}: sequence NAK for PSN "
                            f"{num(p['infiniband.bth.psn']):#x}, never sent again by rxe")
    if naks and len(resent) == len(naks):
        syn["softcm"].discard(NAK_SEQ)
    if 0x1f not in syn["softcm"] or not syn["softcm"] <= syn["rxe"] | {0x1f}:
        problems.append(f"ACK syndromes: softcm {sorted(map(hex, syn['softcm']))}, "
                        f"rxe {sorted(map(hex, syn['rxe']))}")
    tap.check("acks-as-rxe", problems,
              f"{len(naks)} sequence NAKs of softcm's, {len(resent)} answered by rxe"
              if naks else "")

    problems = []
    for field in ("ip.flags.df", "ip.ttl", "ip.dsfield", "udp.dstport"):
        v = {s: {p[field] for p in data[s]} for s in sides}
        if v["softcm"] != v["rxe"]:
            problems.append(f"{field}: softcm {sorted(v['softcm'])}, rxe {sorted(v['rxe'])}")
    sport = {s: {num(p["udp.srcport"]) for p in data[s]} for s in sides}
    for s, o in (("softcm", "rxe"), ("rxe", "softcm")):
        alone = sorted(sport[s] - sport[o])
        if alone:
            problems.append(f"UDP source ports only {s} sends from: {alone[:8]}")
    zero = {s: {num(p["udp.checksum"]) == 0 for p in data[s]} for s in sides}
    if zero["softcm"] != zero["rxe"]:
        problems.append(f"UDP checksum zero: softcm {zero['softcm']}, rxe {zero['rxe']}")
    tap.check("ip-and-udp-as-rxe", problems)
    return tap.out(plan)


if __name__ == "__main__":
    sys.exit(main())
