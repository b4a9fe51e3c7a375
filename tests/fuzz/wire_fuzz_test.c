// SPDX-License-Identifier: GPL-2.0
/*
 * A wire fuzzer: malformed and hostile RoCEv2/CM packets, crafted with a
 * raw socket in sc-w1, to softcm's UDP port in sc-w2, while sc-w2 has a
 * listener and an established connection with sc-w1:
 *
 *   +-- sc-w1 ----------------+         +-- sc-w2 -----------+
 *   | w1 10.84.0.1 (the peer) |--veth---| w2 10.84.0.2       |
 *   |    raw socket, sources  |         |    listener :7200  |
 *   |    10.84.0.1 and others |         |    one connection  |
 *   +-------------------------+         +--------------------+
 *
 * Packets: truncated and oversized, bad ICRC, BTH/DETH bytes changed,
 * MAD bytes changed (lengths, attributes, status), unknown attributes,
 * well-formed messages of every CM attribute with random comm IDs and
 * with the connection's own comm IDs (learnt by sniffing its RTU) and
 * guesses near them, from addresses that are not the peer; and the same
 * from the peer's own address with a correct ICRC but comm IDs that are
 * not the connection's.
 *
 * Checked, burst by burst: every packet sent shows up in sc-w2's
 * /proc/net/softcm_stats as either a message received (rx_*) or a drop
 * before decoding (drop_length, _header, _qkey, _pkey, _icrc, _queue,
 * _mad, _nomem), counting what softcm in sc-w1 itself sent to sc-w2 in
 * answer (its tx_*), and each under the counter its bytes predict
 * (wire_oracle.h); at the end the connection is still established on
 * both sides, neither side got an event for it, and it still disconnects
 * cleanly.  The debug kernel must stay silent throughout.
 *
 * Three more generators check one packet at a time against every counter
 * of both namespaces: mutated_requests (the connection's real REQ as new
 * connections that reach the listener, one field mutated),
 * replayed_connection_messages (the connection's own messages from the
 * real peer's address) and forged_header_addresses (rdma_cm headers that
 * name addresses other than the packet's: issue 16, A3).
 *
 * And the data path (the data fixture, hostile_data_packets): RC packets
 * of every opcode, crafted from the peer's address to a live RC QP, with
 * hostile PSNs, rkeys, addresses and lengths, by the raw socket or by a
 * plain UDP socket (whose packets arrive with their checksum partial and
 * their ICRC trusted); see its comment.
 *
 * SOFTCM_FUZZ_SECONDS (5 s, 15 s on the debug kernel: make check's
 * share; a campaign sets more) and
 * SOFTCM_FUZZ_SEED as for ioctl_fuzz_test: from the environment or from
 * build/tests/lib/fuzz.env.
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "rng.h"
#include "ioctl_helpers.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "wire_helpers.h"
#include "rc_wire.h"
#include "wire_oracle.h"

/* Two namespaces joined by a veth pair, made over rtnetlink (netlink_helpers.h). */
static const struct topo_end end1 = { "sc-w1", "w1", { "10.84.0.1/24" } };
static const struct topo_end end2 = { "sc-w2", "w2", { "10.84.0.2/24" } };

/* The pair, and a local address of sc-w2 that is not on the veth. */
static int make_topology(void)
{
	int ret = topo_pair(&end1, &end2), ns;

	if (ret)
		return ret;
	ns = netns_open("sc-w2");
	if (ns < 0)
		return ns;
	ret = addr_add(ns, "lo", "10.84.9.2/32", false, false);
	close(ns);
	return ret;
}

#define WAIT_MS		30000
#define BURST		32
#define PEER		"10.84.0.1"
#define TARGET		"10.84.0.2"
#define PORT		7200
#define ACTIVE_QPN	0xabcdef
#define PASSIVE_QPN	0x123457
#define MAD_SIZE	256

/* Counted when a packet reaches softcm and is not a decodable CM MAD. */
static const char *const early_drops[] = {
	"drop_length", "drop_header", "drop_qkey", "drop_pkey", "drop_icrc",
	"drop_queue", "drop_mad", "drop_nomem",
	/* a mutated BTH's other QPN: the data path's, with no QP there */
	"drop_qpn",
};

static const char *const msgs[] = {
	"req", "mra", "rej", "rep", "rtu", "dreq", "drep", "sidr_req", "sidr_rep",
};

/* Every packet sc-w2's softcm took: decoded (rx_*) or dropped before. */
static long long taken(int st)
{
	char name[32];
	long long sum = 0, v;
	size_t i;

	for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		snprintf(name, sizeof(name), "rx_%s", msgs[i]);
		v = stats_get(st, name);
		if (v == STATS_MISSING)
			return STATS_MISSING;
		sum += v;
	}
	for (i = 0; i < sizeof(early_drops) / sizeof(early_drops[0]); i++) {
		v = stats_get(st, early_drops[i]);
		if (v == STATS_MISSING)
			return STATS_MISSING;
		sum += v;
	}
	return sum;
}

/* What softcm in sc-w1 sent (all of it to sc-w2, its only peer). */
static long long peer_sent(int st)
{
	char name[32];
	long long sum = 0;
	size_t i;

	for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		snprintf(name, sizeof(name), "tx_%s", msgs[i]);
		sum += stats_get(st, name);
	}
	return sum - stats_get(st, "tx_errors");
}

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);
	char buf[512], *p;
	size_t len = strlen(name);

	if (v && *v)
		return strtol(v, NULL, 0);
	if (read_text("lib/fuzz.env", buf, sizeof(buf)) <= 0)
		return def;
	for (p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == '=')
			return strtol(p + len + 1, NULL, 0);
	return def;
}

static int open_in(int nsfd, int home)
{
	int fd;

	if (netns_enter(nsfd))
		return -errno;
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	netns_enter(home);
	return fd;
}

FIXTURE(wire) {
	int home, ns1, ns2;
	int a, p;		/* files in sc-w1 and sc-w2 */
	int st1, st2;		/* their softcm_stats */
	__u32 ha, hl, hp;	/* active id, listener, passive id */
	uint32_t aid, pid;	/* the connection's comm IDs */
	uint8_t req[MAD_SIZE];	/* its REQ, as sent */
	uint8_t rep[MAD_SIZE];	/* its REP */
	uint8_t rtu[MAD_SIZE];	/* its RTU */
};

/* Both namespaces' CM timers (exponents; MRA's as the response's); 0 or -errno. */
static int wire_timers(FIXTURE_DATA(wire) *self, int response, int life)
{
	int ret = 0;

	for (int n = 0; n < 2 && !ret; n++) {
		int ns = n ? self->ns2 : self->ns1;

		ret = netns_softcm_sysctl(ns, self->home, "cm_response_timeout", response);
		ret = ret ?: netns_softcm_sysctl(ns, self->home, "packet_life_time", life);
		ret = ret ?: netns_softcm_sysctl(ns, self->home, "mra_timeout", response);
		ret = ret ?: netns_softcm_sysctl(ns, self->home, "cm_retries", 2);
	}
	return ret;
}

FIXTURE_SETUP(wire)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct softcm_resolve_addr ra = { .timeout_ms = 5000, .dst_len = sizeof(struct sockaddr_in) };
	struct softcm_resolve_route rr = { .timeout_ms = 5000 };
	struct softcm_bind b = { .addr_len = sizeof(struct sockaddr_in) };
	struct sockaddr_in *sin;
	struct softcm_connect c = { 0 };
	struct softcm_accept acc = { .uid = 2 };
	struct softcm_listen l = { .backlog = 8 };
	struct softcm_event ev;
	int shift = softcm_slow_shift(), pfd;

	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, make_topology());
	self->home = netns_self();
	ASSERT_LE(0, self->home);
	self->ns1 = netns_open("sc-w1");
	self->ns2 = netns_open("sc-w2");
	ASSERT_LE(0, self->ns1);
	ASSERT_LE(0, self->ns2);
	/*
	 * The real connection's handshake gets timers a loaded host keeps
	 * (this thread may wait well over the fuzz's 16 ms between the REP
	 * and its RTU); the fuzz's below, once it is established.
	 */
	ASSERT_EQ(0, wire_timers(self, 16 + shift, 10 + shift));
	self->st1 = stats_open(self->ns1, self->home);
	self->st2 = stats_open(self->ns2, self->home);
	ASSERT_LE(0, self->st1);
	ASSERT_LE(0, self->st2);
	self->a = open_in(self->ns1, self->home);
	self->p = open_in(self->ns2, self->home);
	ASSERT_LE(0, self->a);
	ASSERT_LE(0, self->p);

	/* a packet socket on w2, to learn the connection's comm IDs */
	ASSERT_EQ(0, netns_enter(self->ns2));
	pfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	sll.sll_ifindex = if_nametoindex("w2");
	ASSERT_EQ(0, netns_enter(self->home));
	ASSERT_LE(0, pfd);
	ASSERT_EQ(0, bind(pfd, (struct sockaddr *)&sll, sizeof(sll)));

	ASSERT_EQ(0, create_id(self->p, SOFTCM_PS_TCP, 1, &self->hl));
	sin = (struct sockaddr_in *)b.addr;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(PORT);
	b.handle = self->hl;
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_BIND, &b));
	l.handle = self->hl;
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_LISTEN, &l));

	ASSERT_EQ(0, create_id(self->a, SOFTCM_PS_TCP, 3, &self->ha));
	sin = (struct sockaddr_in *)ra.dst;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(PORT);
	inet_pton(AF_INET, TARGET, &sin->sin_addr);
	ra.handle = self->ha;
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_RESOLVE_ADDR, &ra));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
	rr.handle = self->ha;
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_RESOLVE_ROUTE, &rr));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ROUTE_RESOLVED, ev.event);
	c.handle = self->ha;
	c.param.qp_num = ACTIVE_QPN;
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_CONNECT, &c));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	self->hp = ev.handle;
	acc.handle = self->hp;
	acc.param.qp_num = PASSIVE_QPN;
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_ACCEPT, &acc));
	ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_RESPONSE, ev.event);
	/* rdma_establish(): the RTU */
	memset(&acc, 0, sizeof(acc));
	acc.handle = self->ha;
	acc.flags = SOFTCM_ACCEPT_ESTABLISH;
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_ACCEPT, &acc));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	/* the fuzz's half-open requests time out within the run */
	ASSERT_EQ(0, wire_timers(self, 12 + shift, 10 + shift));
	/* in the order they crossed the veth */
	ASSERT_EQ(0, wire_sniff(pfd, 0x10, self->req, WAIT_MS));
	ASSERT_EQ(0, wire_sniff(pfd, 0x13, self->rep, WAIT_MS));
	ASSERT_EQ(0, wire_sniff(pfd, 0x14, self->rtu, WAIT_MS));
	close(pfd);
	self->aid = get32(self->rtu + 24);
	self->pid = get32(self->rtu + 28);
}

FIXTURE_TEARDOWN(wire)
{
	close(self->a);
	close(self->p);
	EXPECT_EQ(0, stats_wait_idle(self->st1, WAIT_MS));
	EXPECT_EQ(0, stats_wait_idle(self->st2, WAIT_MS));
	close(self->st1);
	close(self->st2);
	netns_del("sc-w1");
	netns_del("sc-w2");
	close(self->ns1);
	close(self->ns2);
	close(self->home);
}

static const uint16_t attrs[] = {
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
};

/* A comm ID for a packet: random, or the connection's, or next to it. */
static uint32_t guess_id(struct rng *r, uint32_t real, bool may_match)
{
	uint32_t v;

	do {
		switch (below(r, 5)) {
		case 0:
			v = real;
			break;
		case 1:
			v = real + 1 - 2 * below(r, 2);
			break;
		case 2:
			v = 0;
			break;
		default:
			v = rnd(r);
			break;
		}
	} while (!may_match && v == real);
	return v;
}

/* One hostile packet, built from the seed's next choices. */
static void craft(struct rng *r, struct wire *w, uint32_t aid, uint32_t pid, bool *keep_icrc)
{
	bool peer = !below(r, 4);
	char src[32];
	uint8_t *mad;
	int i, n;

	if (peer)
		snprintf(src, sizeof(src), PEER);
	else
		snprintf(src, sizeof(src), "10.84.0.%u", 3 + below(r, 250));
	wire_init(w, src, TARGET, below(r, 10) ? attrs[below(r, 9)] : rnd(r));
	mad = wire_mad(w);
	/* the body: random, with comm IDs that may be the connection's */
	for (i = 24; i < 256; i++)
		mad[i] = rnd(r);
	put32(mad + 24, guess_id(r, below(r, 2) ? aid : pid, !peer));
	put32(mad + 28, guess_id(r, below(r, 2) ? pid : aid, !peer));
	if (peer) {
		/* from the real peer, never this connection's */
		put32(mad + 24, rnd(r) | 0x1000);
		if (get32(mad + 24) == aid || get32(mad + 24) == pid)
			put32(mad + 24, ~aid ^ pid);
	}
	*keep_icrc = false;
	switch (below(r, 8)) {
	case 0:					/* bad length */
		w->paylen = below(r, WIRE_MAX + 1);
		break;
	case 1:					/* bad ICRC */
		*keep_icrc = true;
		w->paylen = ROCE_LEN;
		wire_finish(w, false);
		w->pkt[28 + below(r, ROCE_LEN)] ^= 1 << below(r, 8);
		break;
	case 2:					/* BTH, DETH */
		n = 1 + below(r, 3);
		for (i = 0; i < n; i++)
			w->pkt[28 + below(r, MAD_OFF)] = rnd(r);
		break;
	case 3:					/* MAD header */
		n = 1 + below(r, 3);
		for (i = 0; i < n; i++)
			mad[below(r, 24)] = rnd(r);
		break;
	default:				/* well framed */
		break;
	}
}

TEST_F_TIMEOUT(wire, hostile_packets, 600)
{
	long seconds = env_long("SOFTCM_FUZZ_SECONDS", softcm_on_debug() ? 10 : 5);
	unsigned int seed = env_long("SOFTCM_FUZZ_SEED", 0);
	long long base_taken, base_peer, now_taken, now_peer;
	static struct snap base1, base2, now1, now2;
	struct expect pred = { 0 };
	struct rng r;
	struct softcm_event ev;
	struct wire w;
	long end, sent = 0;
	int raw, one = 1;
	bool keep;

	if (!seed)
		seed = ((unsigned int)time(NULL) ^ getpid() << 16) | 1;
	printf("# SOFTCM_FUZZ_SEED=%u\n", seed);
	fflush(stdout);
	r.s = (__u64)seed * 0x9E3779B97F4A7C15ULL | 1;

	ASSERT_EQ(0, netns_enter(self->ns1));
	raw = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	ASSERT_EQ(0, netns_enter(self->home));
	ASSERT_LE(0, raw);
	ASSERT_EQ(0, setsockopt(raw, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)));

	/* the connection's own traffic is over: RTU seen, nothing pending */
	base_taken = taken(self->st2);
	base_peer = peer_sent(self->st1);
	ASSERT_NE(STATS_MISSING, base_taken);

	ASSERT_EQ(0, snap_take(self->st1, &base1));
	ASSERT_EQ(0, snap_take(self->st2, &base2));
	end = topo_now_ms() + seconds * 1000;
	while (topo_now_ms() < end) {
		long deadline;

		for (int i = 0; i < BURST; i++) {
			craft(&r, &w, self->aid, self->pid, &keep);
			wire_finish(&w, keep);
			expect_add(&pred, wire_predict(&w), 1);
			ASSERT_EQ(0, wire_send_on(raw, &w, keep));
			sent++;
		}
		/* the burst is accounted for before the next one goes */
		deadline = topo_now_ms() + WAIT_MS;
		do {
			now_taken = taken(self->st2) - base_taken;
			now_peer = peer_sent(self->st1) - base_peer;
			if (now_taken == sent + now_peer)
				break;
			usleep(2000);
		} while (topo_now_ms() < deadline);
		ASSERT_EQ(sent + now_peer, now_taken) {
			TH_LOG("after %ld packets: %lld taken, %lld from the peer",
			       sent, now_taken, now_peer);
		}
		/* and each under the counter its mutation must move */
		ASSERT_EQ(0, snap_take(self->st1, &now1));
		ASSERT_EQ(0, snap_take(self->st2, &now2));
		for (size_t i = 0; i < sizeof(early_drops) / sizeof(early_drops[0]); i++) {
			const char *d = early_drops[i];

			ASSERT_EQ(expect_get(&pred, d), snap_get(&now2, d) - snap_get(&base2, d)) {
				TH_LOG("after %ld packets: %s", sent, d);
			}
		}
		for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
			char rx[32], tx[32];
			long long got, peer;

			snprintf(rx, sizeof(rx), "rx_%s", msgs[i]);
			snprintf(tx, sizeof(tx), "tx_%s", msgs[i]);
			got = snap_get(&now2, rx) - snap_get(&base2, rx);
			peer = snap_get(&now1, tx) - snap_get(&base1, tx);
			/* ours, plus what sc-w1's softcm answered with */
			ASSERT_LE(expect_get(&pred, rx), got) {
				TH_LOG("after %ld packets: %s", sent, rx);
			}
			ASSERT_GE(expect_get(&pred, rx) + peer, got) {
				TH_LOG("after %ld packets: %s", sent, rx);
			}
		}
	}
	close(raw);
	printf("# %ld packets; drops: length %lld header %lld icrc %lld mad %lld unknown %lld peer %lld stale %lld\n",
	       sent, stats_get(self->st2, "drop_length"), stats_get(self->st2, "drop_header"),
	       stats_get(self->st2, "drop_icrc"), stats_get(self->st2, "drop_mad"),
	       stats_get(self->st2, "drop_unknown"), stats_get(self->st2, "drop_peer"),
	       stats_get(self->st2, "drop_stale"));

	/* the connection stands: same state, no event on either side */
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->a, self->ha));
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, self->hp));
	while (!next_event(self->a, &ev, 0))
		EXPECT_NE(self->ha, ev.handle);
	while (!next_event(self->p, &ev, 0))
		EXPECT_NE(self->hp, ev.handle);
	/* and it still ends as connections do */
	ASSERT_EQ(0, ioctl(self->a, SOFTCM_IOCTL_DISCONNECT,
			   &(struct softcm_disconnect){ .handle = self->ha }));
	do {
		ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	} while (ev.handle != self->hp);
	EXPECT_EQ(SOFTCM_EVENT_DISCONNECTED, ev.event);
}

/* MAD offsets of a REQ (rdma_cm's header at the private data's start). */
#define REQ_SID		32
#define REQ_GUID	40
#define REQ_QPN		56
#define REQ_TRANSPORT	67
#define REQ_HDR		164
#define REQ_HDR_SRC	(REQ_HDR + 4)
#define REQ_HDR_DST	(REQ_HDR + 20)
#define REQ_PDATA	(REQ_HDR + 36)
#define SIDR_HDR	40

/*
 * A flood of valid REQs, each a new connection (its own comm ID, CA GUID
 * and QPN) from a host that never completes it: the listener's backlog
 * (8) and what it may hold beyond (max_held_requests, 8 here) bound what
 * the kernel keeps; the rest are dropped and counted.
 */
TEST_F(wire, req_flood_is_bounded_by_backlog)
{
	const int n = 200, backlog = 8, hold = 8;
	long long base_taken, base_peer, base_drop;
	struct softcm_event ev;
	int raw, one = 1, got = 0;
	struct wire w;
	char src[32];

	ASSERT_EQ(0, netns_enter(self->ns1));
	raw = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	ASSERT_EQ(0, netns_enter(self->home));
	ASSERT_LE(0, raw);
	ASSERT_EQ(0, setsockopt(raw, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)));
	base_taken = taken(self->st2);
	base_peer = peer_sent(self->st1);
	base_drop = stats_get(self->st2, "drop_backlog");
	ASSERT_EQ(0, netns_softcm_sysctl(self->ns2, self->home, "max_held_requests", hold));

	for (int i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "10.84.0.%d", 3 + i % 250);
		wire_init(&w, src, TARGET, 0x10);
		memcpy(wire_mad(&w), self->req, MAD_SIZE);
		put32(wire_mad(&w) + 24, 0x5000 + i);		/* local comm ID */
		put32(wire_mad(&w) + 44, 0x7000 + i);		/* CA GUID, low half */
		put32(wire_mad(&w) + 56, (0x100 + i) << 8);	/* QPN */
		/* the rdma_cm header names the packet's source, or A3 refuses it */
		inet_pton(AF_INET, src, wire_mad(&w) + REQ_HDR_SRC + 12);
		ASSERT_EQ(0, wire_send_on(raw, &w, false));
	}
	close(raw);
	/* every REQ taken, and each either a request or a backlog drop */
	for (long end = topo_now_ms() + WAIT_MS; topo_now_ms() < end; usleep(2000))
		if (taken(self->st2) - base_taken == n + peer_sent(self->st1) - base_peer)
			break;
	EXPECT_EQ(n + peer_sent(self->st1) - base_peer, taken(self->st2) - base_taken);
	while (!next_event(self->p, &ev, 200))
		got += ev.event == SOFTCM_EVENT_CONNECT_REQUEST;
	TH_LOG("%d requests, %lld dropped", got, stats_get(self->st2, "drop_backlog") - base_drop);
	EXPECT_LE(1, got);
	EXPECT_GE(backlog + hold, got);
	EXPECT_EQ(n - got, stats_get(self->st2, "drop_backlog") - base_drop);
	/* what the kernel holds: the connection, and the requests it took */
	EXPECT_GE(1 + backlog + hold, stats_get(self->st2, "connections"));
}

/*
 * The generators below check each packet alone: they send it, then a
 * sentinel (a MAD of an unknown attribute, which the receive work counts
 * as drop_mad) to each side, the side the packet went to first; once a
 * sentinel is counted, everything that came before it on that side has
 * been handled, answers included.  Then every counter of both sides must
 * have moved by exactly what the case says and no other.  The test
 * thread stays on one CPU, so that its packets reach the receive queue in
 * the order they were sent.
 */
struct side {
	int raw;		/* a raw socket whose packets go to this side */
	int st;			/* its softcm_stats */
	const char *from, *to;	/* its peer's address, and its own */
	struct snap a, b;	/* before and after a case */
	struct expect e;	/* what the case must move here */
};

static int raw_in(int nsfd, int home)
{
	int fd, one = 1;

	if (netns_enter(nsfd))
		return -errno;
	fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (fd < 0)
		fd = -errno;
	netns_enter(home);
	if (fd >= 0 && setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one))) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* A UDP socket in @nsfd's namespace, sending from @from to @to's RoCEv2 port. */
static int udp_in(int nsfd, int home, const char *from, const char *to)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(4791) };
	int fd;

	inet_pton(AF_INET, from, &src.sin_addr);
	inet_pton(AF_INET, to, &dst.sin_addr);
	if (netns_enter(nsfd))
		return -errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fd = -errno;
	netns_enter(home);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&src, sizeof(src)) ||
			connect(fd, (struct sockaddr *)&dst, sizeof(dst)))) {
		close(fd);
		return -errno;
	}
	return fd;
}

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static unsigned int fuzz_seed(void)
{
	unsigned int seed = env_long("SOFTCM_FUZZ_SEED", 0);

	if (!seed)
		seed = ((unsigned int)time(NULL) ^ getpid() << 16) | 1;
	printf("# SOFTCM_FUZZ_SEED=%u\n", seed);
	fflush(stdout);
	return seed;
}

static void case_begin(struct side *s)
{
	memset(&s->e, 0, sizeof(s->e));
	snap_take(s->st, &s->a);
}

/* The sentinel, and the wait until it is counted; 0 or -ETIME. */
static int settle(struct side *s)
{
	struct wire w;
	long long want;
	long end = topo_now_ms() + WAIT_MS;

	wire_init(&w, s->from, s->to, 0x00ff);
	if (wire_send_on(s->raw, &w, false))
		return -EIO;
	expect_add(&s->e, "drop_mad", 1);
	want = snap_get(&s->a, "drop_mad") + expect_get(&s->e, "drop_mad");
	while (stats_get(s->st, "drop_mad") < want) {
		if (topo_now_ms() > end)
			return -ETIME;
		usleep(1000);
	}
	return 0;
}

/*
 * Both sides settled and compared; how many counters are wrong.  The
 * sentinel says the packets before it arrived, not that the CM has
 * handled them: the CM spreads MADs over several queues (by sender and
 * comm ID), each with its own work, and the sentinel's queue may run
 * before the case's.  So the counters are compared until they match, or
 * until WAIT_MS say they never will.
 */
static int case_end(struct side *to, struct side *other, char *why, size_t size)
{
	long end = topo_now_ms() + WAIT_MS;
	char one[512], two[512];
	int bad, bad2;

	why[0] = '\0';
	if (settle(to) || settle(other)) {
		snprintf(why, size, "a sentinel was not counted");
		return 1;
	}
	for (;;) {
		snap_take(to->st, &to->b);
		snap_take(other->st, &other->b);
		bad = expect_check(&to->e, &to->a, &to->b, one, sizeof(one));
		bad2 = expect_check(&other->e, &other->a, &other->b, two, sizeof(two));
		if (!(bad || bad2) || topo_now_ms() > end)
			break;
		usleep(2000);
	}
	if (bad)
		snprintf(why, size, "here:%s", one);
	if (bad2) {
		bad++;
		snprintf(why + strlen(why), size - strlen(why), " there:%s", two);
	}
	return bad;
}

/* rdma_cm's header at @hdr: IPv4 addresses (or IPv6 ones if @v6). */
static void put_hdr(uint8_t *hdr, int ipver, const char *src, const char *dst,
		    uint16_t sport)
{
	int af = ipver == 6 ? AF_INET6 : AF_INET;
	int off = ipver == 6 ? 0 : 12;

	hdr[0] = 0;
	hdr[1] = ipver << 4;
	hdr[2] = sport >> 8;
	hdr[3] = sport;
	memset(hdr + 4, 0, 32);
	inet_pton(af, src, hdr + 4 + off);
	inet_pton(af, dst, hdr + 20 + off);
}

/* A new connection's REQ: the sniffed one with fresh IDs and addresses. */
static void new_req(struct rng *r, const uint8_t *real, struct wire *w,
		    const char *src, uint16_t sport, uint32_t qpn)
{
	uint8_t *mad;

	wire_init(w, src, TARGET, 0x10);
	mad = wire_mad(w);
	memcpy(mad, real, MAD_SIZE);
	put32(mad + 8, rnd(r));				/* TID */
	put32(mad + 24, rnd(r) | 1);			/* local comm ID */
	put32(mad + REQ_GUID + 4, rnd(r));
	mad[REQ_QPN] = qpn >> 16;
	mad[REQ_QPN + 1] = qpn >> 8;
	mad[REQ_QPN + 2] = qpn;
	put_hdr(mad + REQ_HDR, 4, src, TARGET, sport);
	for (int i = REQ_PDATA; i < MAD_SIZE; i++)
		mad[i] = rnd(r);
}

/* The CONNECT_REQUEST of a REQ, if any: its handle, or 0. */
static __u32 read_request(int fd, struct softcm_event *ev, int timeout_ms)
{
	if (next_event(fd, ev, timeout_ms) || ev->event != SOFTCM_EVENT_CONNECT_REQUEST)
		return 0;
	return ev->handle;
}

/* Reject the request and destroy its id, as an application would. */
static int refuse(int fd, __u32 h)
{
	struct softcm_reject rej = { .handle = h };

	if (ioctl(fd, SOFTCM_IOCTL_REJECT, &rej))
		return -errno;
	return destroy_id(fd, h, NULL);
}

/* Whether id @h's peer is @ip:@port; what it is goes to @seen. */
static bool peer_is(int fd, __u32 h, const char *ip, uint16_t port, char *seen, size_t size)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	char want[48], addr[INET_ADDRSTRLEN] = "?";
	__u32 len = sizeof(ss);

	snprintf(seen, size, "none");
	if (query_addr(fd, h, SOFTCM_QUERY_PEER, &ss, &len))
		return false;
	if (sin->sin_family == AF_INET)
		inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof(addr));
	snprintf(seen, size, "%s:%u", addr, ntohs(sin->sin_port));
	snprintf(want, sizeof(want), "%s:%u", ip, port);
	return !strcmp(seen, want);
}

enum req_kind {
	K_VALID, K_PORT, K_PS, K_HDR_VERSION, K_HDR_IPVER, K_HDR_MAPPED,
	K_TRANSPORT, K_LENGTH, K_ICRC, K_BTH, K_MAD, K_COUNT
};

static const char *const kind_names[K_COUNT] = {
	"valid", "port", "port space", "header version", "header IP version",
	"IPv6 header, mapped addresses", "transport", "length", "ICRC", "BTH/DETH",
	"MAD header",
};

/*
 * Mutate a new REQ as @kind says; what sc-w2 must count goes to @e.
 * Returns the reason of the REJ sc-w2 must answer with, 0 for none.
 */
static int mutate_req(struct rng *r, struct wire *w, enum req_kind kind,
		      struct expect *e, bool *keep_icrc)
{
	uint8_t *mad = wire_mad(w), *bth = w->pkt + 28;
	uint16_t ps, port;

	*keep_icrc = false;
	switch (kind) {
	case K_VALID:
		expect_add(e, "rx_req", 1);
		return 28;				/* our REJECT */
	case K_PORT:
		port = PORT + 1 + below(r, 99);
		mad[REQ_SID + 6] = port >> 8;
		mad[REQ_SID + 7] = port;
		expect_add(e, "rx_req", 1);
		return 8;
	case K_PS:
		do {
			ps = below(r, 2) ? 0x0111 : rnd(r);
		} while (ps == 0x0106);
		mad[REQ_SID + 4] = ps >> 8;
		mad[REQ_SID + 5] = ps;
		if (!below(r, 4))
			put32(mad + REQ_SID, rnd(r) | 1);
		expect_add(e, "rx_req", 1);
		return 8;
	case K_HDR_VERSION:
	case K_HDR_IPVER:
	case K_HDR_MAPPED:
		if (kind == K_HDR_VERSION) {
			mad[REQ_HDR] = 1 + below(r, 255);
		} else if (kind == K_HDR_IPVER) {
			do {
				mad[REQ_HDR + 1] = rnd(r);
			} while (mad[REQ_HDR + 1] >> 4 == 4 || mad[REQ_HDR + 1] >> 4 == 6);
		} else {
			char src[48];

			snprintf(src, sizeof(src), "::ffff:%u.%u.%u.%u", w->pkt[12],
				 w->pkt[13], w->pkt[14], w->pkt[15]);
			put_hdr(mad + REQ_HDR, 6, src, "::ffff:" TARGET, rnd(r));
		}
		expect_add(e, "rx_req", 1);
		/* not rdma_cm's header for this packet: the A3 fix may count it */
		expect_add(e, "bad_address", SNAP_ANY);
		return 28;
	case K_TRANSPORT:
		mad[REQ_TRANSPORT] |= (1 + below(r, 3)) << 1;
		expect_add(e, "rx_req", 1);
		return 28;
	case K_LENGTH:
		/* cut in rdma_cm's header or the private data, or anything */
		do {
			w->paylen = below(r, 2) ? MAD_OFF + REQ_HDR + below(r, MAD_SIZE - REQ_HDR)
						: below(r, WIRE_MAX + 1);
		} while (w->paylen == ROCE_LEN);
		expect_add(e, "drop_length", 1);
		return 0;
	case K_ICRC:
		*keep_icrc = true;
		wire_finish(w, false);
		/* in the MAD or the ICRC: the headers stay valid */
		w->pkt[28 + MAD_OFF + below(r, ROCE_LEN - MAD_OFF)] ^= 1 << below(r, 8);
		expect_add(e, "drop_icrc", 1);
		return 0;
	case K_BTH:
		switch (below(r, 4)) {
		case 0:
			bth[0] ^= 1 + below(r, 255);		/* opcode */
			expect_add(e, "drop_header", 1);
			break;
		case 1:
			bth[7] ^= 1 + below(r, 255);		/* QPN */
			expect_add(e, "drop_header", 1);
			break;
		case 2:
			bth[3] ^= 1 + below(r, 255);		/* P_Key */
			expect_add(e, "drop_pkey", 1);
			break;
		default:
			bth[12 + below(r, 4)] ^= 1 + below(r, 255);	/* Q_Key */
			expect_add(e, "drop_qkey", 1);
			break;
		}
		return 0;
	case K_MAD:
		mad[2] ^= 1 + below(r, 255);			/* class version */
		expect_add(e, "drop_mad", 1);
		return 0;
	default:
		return 0;
	}
}

/* The counter names of REJ reasons, which the expectations point to. */
static const char *rej_reason(bool tx, unsigned int reason)
{
	static char names[2][64][32];

	reason = reason > 63 ? 63 : reason;
	snprintf(names[tx][reason], sizeof(names[tx][reason]), "%s_rej_reason_%u",
		 tx ? "tx" : "rx", reason);
	return names[tx][reason];
}

/* A REJ of @reason from sc-w2 to @to, and sc-w1's view of it if it is there. */
static void expect_rej(struct side *from, struct side *to, int reason, bool reaches)
{
	expect_add(&from->e, "tx_rej", 1);
	expect_add(&from->e, rej_reason(true, reason), 1);
	if (!reaches)
		return;
	/* a REJ for comm IDs sc-w1 never had */
	expect_add(&to->e, "rx_rej", 1);
	expect_add(&to->e, rej_reason(false, reason), 1);
	expect_add(&to->e, "drop_unknown", 1);
}

/*
 * A second generator: the connection's real REQ, as a new connection
 * each time (comm ID, CA GUID, QPN), with the service ID kept so that it
 * reaches the listener, mutated in one way at a time: rdma_cm's header
 * (version, IP version, source port), the service ID, the transport, the
 * length (cut in the header or the private data), the ICRC, the BTH/DETH,
 * the MAD header.  Its rdma_cm header always names the packet's own
 * addresses here; the forgeries are forged_header_addresses'.
 */
TEST_F_TIMEOUT(wire, mutated_requests, 600)
{
	long seconds = env_long("SOFTCM_FUZZ_SECONDS", softcm_on_debug() ? 10 : 5);
	static struct side w2, w1;
	long count[K_COUNT] = { 0 }, end, n = 0;
	struct softcm_event ev;
	struct rng r;
	struct wire w;
	char why[1024];

	r.s = (__u64)fuzz_seed() * 0x9E3779B97F4A7C15ULL | 1;
	pin_cpu0();
	w2 = (struct side){ .raw = raw_in(self->ns1, self->home), .st = self->st2,
			    .from = PEER, .to = TARGET };
	w1 = (struct side){ .raw = raw_in(self->ns2, self->home), .st = self->st1,
			    .from = TARGET, .to = PEER };
	ASSERT_LE(0, w2.raw);
	ASSERT_LE(0, w1.raw);

	end = topo_now_ms() + seconds * 1000;
	while (topo_now_ms() < end) {
		/* every kind once first, then at random */
		enum req_kind kind = n < K_COUNT ? (enum req_kind)n : below(&r, K_COUNT);
		bool spoofed = below(&r, 2), keep;
		uint16_t sport = 1 + below(&r, 65535);
		uint32_t qpn = rnd(&r) & 0xffffff;
		char src[32], seen[48];
		int reason;
		__u32 h;

		if (spoofed)
			snprintf(src, sizeof(src), "10.84.0.%u", 3 + below(&r, 250));
		else
			snprintf(src, sizeof(src), PEER);
		new_req(&r, self->req, &w, src, sport, qpn);
		case_begin(&w2);
		case_begin(&w1);
		reason = mutate_req(&r, &w, kind, &w2.e, &keep);
		if (reason)
			expect_rej(&w2, &w1, reason, !spoofed);
		/* answers to an address nobody has may fail to go out */
		if (spoofed)
			expect_add(&w2.e, "tx_errors", SNAP_ANY);
		ASSERT_EQ(0, wire_send_on(w2.raw, &w, keep));
		count[kind]++;
		n++;
		if (kind == K_VALID) {
			uint8_t *mad = wire_mad(&w);

			h = read_request(self->p, &ev, WAIT_MS);
			ASSERT_NE(0, h) {
				TH_LOG("request %ld (%s from %s): no CONNECT_REQUEST", n,
				       kind_names[kind], src);
			}
			EXPECT_EQ(1, ev.uid);
			EXPECT_EQ(0, ev.status);
			EXPECT_EQ(qpn, ev.param.qp_num);
			EXPECT_EQ(SOFTCM_REQ_PRIVATE_DATA, ev.param.private_data_len);
			EXPECT_EQ(0, memcmp(ev.param.private_data, mad + REQ_PDATA,
					    SOFTCM_REQ_PRIVATE_DATA));
			EXPECT_TRUE(peer_is(self->p, h, src, sport, seen, sizeof(seen))) {
				TH_LOG("peer %s, sent from %s port %u", seen, src, sport);
			}
			EXPECT_EQ(0, refuse(self->p, h));
		}
		EXPECT_EQ(0, case_end(&w2, &w1, why, sizeof(why))) {
			TH_LOG("request %ld (%s from %s):%s", n, kind_names[kind], src, why);
		}
		/* no other request came of it */
		EXPECT_EQ(-ETIME, next_event(self->p, &ev, 0)) {
			TH_LOG("request %ld (%s): event %u", n, kind_names[kind], ev.event);
			if (ev.event == SOFTCM_EVENT_CONNECT_REQUEST)
				destroy_id(self->p, ev.handle, NULL);
		}
		if (_metadata->passed == 0)
			break;
	}
	printf("# %ld requests:", n);
	for (int k = 0; k < K_COUNT; k++)
		printf(" %s %ld%s", kind_names[k], count[k], k + 1 < K_COUNT ? "," : "\n");
	/* (a run cut short before every kind was sent checked too little) */
	for (int k = 0; k < K_COUNT && _metadata->passed; k++) {
		EXPECT_LT(0, count[k]) TH_LOG("no %s request in %ld", kind_names[k], n);
	}
	close(w2.raw);
	close(w1.raw);
	/* the connection never noticed */
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, self->hp));
}

/* One of the connection's messages, with its comm IDs, from @from to @to. */
static void conn_msg(struct rng *r, struct wire *w, const char *from, const char *to,
		     uint16_t attr, uint32_t local, uint32_t remote)
{
	uint8_t *mad;

	wire_init(w, from, to, attr);
	mad = wire_mad(w);
	put32(mad + 8, rnd(r));				/* TID */
	for (int i = 32; i < MAD_SIZE; i++)
		mad[i] = rnd(r);
	put32(mad + 24, local);
	put32(mad + 28, remote);
}

/* A REJ's or MRA's fields that decide how it is taken. */
static int rej_fields(struct rng *r, uint8_t *mad)
{
	int reason = below(r, 2) ? below(r, 64) : rnd(r) & 0xffff;

	mad[32] &= 0x3f;			/* message REJected: REQ */
	mad[33] = below(r, 73) << 1;		/* ARI length, at most 72 */
	mad[34] = reason >> 8;
	mad[35] = reason;
	return reason;
}

static void mra_fields(struct rng *r, uint8_t *mad)
{
	mad[32] = below(r, 3) << 6;		/* REQ, REP or other */
	mad[33] = below(r, 32) << 3;		/* service timeout */
}

static void put_qpn(uint8_t *p, uint32_t qpn)
{
	p[0] = qpn >> 16;
	p[1] = qpn >> 8;
	p[2] = qpn;
}

/* A comm ID that is not @real (nor 0). */
static uint32_t other_id(struct rng *r, uint32_t real)
{
	uint32_t v = real ^ (1 + below(r, 0xfffe));

	return v ? v : 1;
}

enum replay_kind {
	/* to sc-w2, the passive side, from 10.84.0.1 */
	P_REQ, P_RTU, P_REP, P_MRA, P_DREP, P_DREQ_QPN, P_THEIR_ID, P_OUR_ID,
	/* to sc-w1, the active side, from 10.84.0.2 */
	A_REP, A_RTU, A_MRA, A_DREP, A_DREQ_QPN, A_REQ,
	R_COUNT
};

static const char *const replay_names[R_COUNT] = {
	"REQ to passive", "RTU to passive", "REP to passive", "MRA to passive",
	"DREP to passive", "DREQ (other QPN) to passive",
	"their comm ID wrong", "our comm ID wrong",
	"REP to active", "RTU to active", "MRA to active",
	"DREP to active", "DREQ (other QPN) to active", "REQ to active",
};

/*
 * One replayed message of the connection's, as @kind says; @to and @other
 * get what they must count.  The connection is established throughout:
 * a duplicate REQ, REP or RTU is counted as such (a REP is answered by
 * the RTU, as the Linux CM's cm_dup_rep_handler() does, on either side);
 * an MRA or DREP is stale; a DREQ that names another QP, or any message
 * with a comm ID that is not the connection's, is not for it.  (A REJ
 * with the right comm IDs ends the connection, as a DREQ does: the test
 * sends those last.)
 */
static void replay(struct rng *r, FIXTURE_DATA(wire) *self, enum replay_kind kind,
		   struct wire *w, struct side *w2, struct side *w1, struct side **to,
		   struct side **other)
{
	static const uint16_t some[] = { 0x11, 0x12, 0x14, 0x15, 0x16 };
	static const char *const some_rx[] = {
		"rx_mra", "rx_rej", "rx_rtu", "rx_dreq", "rx_drep",
	};
	uint32_t a = self->aid, p = self->pid;
	uint8_t *mad;
	int i;

	*to = kind < A_REP ? w2 : w1;
	*other = kind < A_REP ? w1 : w2;
	switch (kind) {
	case P_REQ:
		wire_init(w, PEER, TARGET, 0x10);
		memcpy(wire_mad(w), self->req, MAD_SIZE);
		put32(wire_mad(w) + 8, rnd(r));
		expect_add(&w2->e, "rx_req", 1);
		expect_add(&w2->e, "duplicates", 1);
		break;
	case P_RTU:
		conn_msg(r, w, PEER, TARGET, 0x14, a, p);
		expect_add(&w2->e, "rx_rtu", 1);
		expect_add(&w2->e, "duplicates", 1);
		break;
	case P_REP:
		conn_msg(r, w, PEER, TARGET, 0x13, a, p);
		memcpy(wire_mad(w) + 32, self->rep + 32, MAD_SIZE - 32);
		expect_add(&w2->e, "rx_rep", 1);
		expect_add(&w2->e, "duplicates", 1);
		expect_add(&w2->e, "tx_rtu", 1);
		expect_add(&w1->e, "rx_rtu", 1);
		expect_add(&w1->e, "duplicates", 1);
		break;
	case P_MRA:
	case A_MRA:
		if (kind == P_MRA)
			conn_msg(r, w, PEER, TARGET, 0x11, a, p);
		else
			conn_msg(r, w, TARGET, PEER, 0x11, p, a);
		mra_fields(r, wire_mad(w));
		expect_add(&(*to)->e, "rx_mra", 1);
		expect_add(&(*to)->e, "drop_stale", 1);
		break;
	case P_DREP:
	case A_DREP:
		if (kind == P_DREP)
			conn_msg(r, w, PEER, TARGET, 0x16, a, p);
		else
			conn_msg(r, w, TARGET, PEER, 0x16, p, a);
		expect_add(&(*to)->e, "rx_drep", 1);
		expect_add(&(*to)->e, "drop_stale", 1);
		break;
	case P_DREQ_QPN:
	case A_DREQ_QPN:
		if (kind == P_DREQ_QPN) {
			conn_msg(r, w, PEER, TARGET, 0x15, a, p);
			put_qpn(wire_mad(w) + 32, PASSIVE_QPN ^ (1 + below(r, 0xfffffe)));
		} else {
			conn_msg(r, w, TARGET, PEER, 0x15, p, a);
			put_qpn(wire_mad(w) + 32, ACTIVE_QPN ^ (1 + below(r, 0xfffffe)));
		}
		expect_add(&(*to)->e, "rx_dreq", 1);
		expect_add(&(*to)->e, "drop_unknown", 1);
		break;
	case P_THEIR_ID:
	case P_OUR_ID:
		i = below(r, 5);
		if (kind == P_THEIR_ID)
			conn_msg(r, w, PEER, TARGET, some[i], other_id(r, a), p);
		else
			conn_msg(r, w, PEER, TARGET, some[i], a, other_id(r, p));
		mad = wire_mad(w);
		if (some[i] == 0x12)
			rej_fields(r, mad);
		if (some[i] == 0x15)
			put_qpn(mad + 32, PASSIVE_QPN);
		expect_add(&w2->e, some_rx[i], 1);
		if (some[i] == 0x12)
			expect_add(&w2->e, rej_reason(false, mad[34] << 8 | mad[35]), 1);
		if (kind == P_THEIR_ID) {
			/* ours, from the peer's address, but not the peer's */
			expect_add(&w2->e, "drop_peer", 1);
		} else {
			expect_add(&w2->e, "drop_unknown", 1);
			if (some[i] == 0x15) {
				/* a DREQ for no connection still gets its DREP */
				expect_add(&w2->e, "tx_drep", 1);
				expect_add(&w1->e, "rx_drep", 1);
				expect_add(&w1->e, "drop_peer", 1);
			}
		}
		break;
	case A_REP:
		wire_init(w, TARGET, PEER, 0x13);
		memcpy(wire_mad(w), self->rep, MAD_SIZE);
		put32(wire_mad(w) + 8, rnd(r));
		expect_add(&w1->e, "rx_rep", 1);
		expect_add(&w1->e, "duplicates", 1);
		expect_add(&w1->e, "tx_rtu", 1);
		expect_add(&w2->e, "rx_rtu", 1);
		expect_add(&w2->e, "duplicates", 1);
		break;
	case A_RTU:
		conn_msg(r, w, TARGET, PEER, 0x14, p, a);
		expect_add(&w1->e, "rx_rtu", 1);
		expect_add(&w1->e, "duplicates", 1);
		break;
	case A_REQ:
		/* the connection's REQ back to its sender: nothing listens there */
		wire_init(w, TARGET, PEER, 0x10);
		memcpy(wire_mad(w), self->req, MAD_SIZE);
		expect_add(&w1->e, "rx_req", 1);
		expect_rej(w1, w2, 8, true);
		break;
	default:
		break;
	}
}

/*
 * The connection's own messages (REQ, REP, RTU, MRA, DREP, DREQ with its
 * comm IDs, learnt from its packets), sent from the real peer's address
 * to either side, in a random order, each checked alone; then the peer's
 * DREQ, which must end the connection on the passive side, and a REJ,
 * which ends it on the active side, as the Linux CM's cm_rej_handler():
 * REJECTED, then timewait, where the next REJ is stale.
 */
TEST_F_TIMEOUT(wire, replayed_connection_messages, 600)
{
	long seconds = env_long("SOFTCM_FUZZ_SECONDS", softcm_on_debug() ? 10 : 5);
	static struct side w2, w1;
	struct side *to, *other;
	long count[R_COUNT] = { 0 }, end, n = 0;
	struct softcm_event ev;
	struct rng r;
	struct wire w;
	char why[1024];

	r.s = (__u64)fuzz_seed() * 0x9E3779B97F4A7C15ULL | 1;
	pin_cpu0();
	w2 = (struct side){ .raw = raw_in(self->ns1, self->home), .st = self->st2,
			    .from = PEER, .to = TARGET };
	w1 = (struct side){ .raw = raw_in(self->ns2, self->home), .st = self->st1,
			    .from = TARGET, .to = PEER };
	ASSERT_LE(0, w2.raw);
	ASSERT_LE(0, w1.raw);

	end = topo_now_ms() + seconds * 1000;
	while (topo_now_ms() < end && _metadata->passed) {
		enum replay_kind kind = below(&r, R_COUNT);

		case_begin(&w2);
		case_begin(&w1);
		replay(&r, self, kind, &w, &w2, &w1, &to, &other);
		ASSERT_EQ(0, wire_send_on(to->raw, &w, false));
		count[kind]++;
		n++;
		EXPECT_EQ(0, case_end(to, other, why, sizeof(why))) {
			TH_LOG("message %ld (%s):%s", n, replay_names[kind], why);
		}
		EXPECT_EQ(-ETIME, next_event(self->a, &ev, 0)) {
			TH_LOG("message %ld (%s): active event %u", n, replay_names[kind], ev.event);
		}
		EXPECT_EQ(-ETIME, next_event(self->p, &ev, 0)) {
			TH_LOG("message %ld (%s): passive event %u", n, replay_names[kind],
			       ev.event);
		}
	}
	printf("# %ld messages:", n);
	for (int k = 0; k < R_COUNT; k++)
		printf(" %s %ld%s", replay_names[k], count[k], k + 1 < R_COUNT ? "," : "\n");
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->a, self->ha));
	EXPECT_EQ(SOFTCM_STATE_CONNECT, state_of(self->p, self->hp));

	/* the peer's DREQ, with the right QPN: the connection ends */
	case_begin(&w2);
	case_begin(&w1);
	conn_msg(&r, &w, PEER, TARGET, 0x15, self->aid, self->pid);
	put_qpn(wire_mad(&w) + 32, PASSIVE_QPN);
	expect_add(&w2.e, "rx_dreq", 1);
	ASSERT_EQ(0, wire_send_on(w2.raw, &w, false));
	EXPECT_EQ(0, case_end(&w2, &w1, why, sizeof(why))) {
		TH_LOG("DREQ:%s", why);
	}
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	EXPECT_EQ(self->hp, ev.handle);
	EXPECT_EQ(SOFTCM_EVENT_DISCONNECTED, ev.event);
	EXPECT_EQ(0, ev.status);
	/* again: a duplicate, the DREP still waits for the application */
	case_begin(&w2);
	case_begin(&w1);
	put32(wire_mad(&w) + 8, rnd(&r));
	expect_add(&w2.e, "rx_dreq", 1);
	expect_add(&w2.e, "duplicates", 1);
	ASSERT_EQ(0, wire_send_on(w2.raw, &w, false));
	EXPECT_EQ(0, case_end(&w2, &w1, why, sizeof(why))) {
		TH_LOG("second DREQ:%s", why);
	}
	/* the application's DREP reaches the real peer, which never asked */
	case_begin(&w2);
	case_begin(&w1);
	expect_add(&w2.e, "tx_drep", 1);
	expect_add(&w1.e, "rx_drep", 1);
	expect_add(&w1.e, "drop_stale", 1);
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_DISCONNECT,
			   &(struct softcm_disconnect){ .handle = self->hp }));
	EXPECT_EQ(0, case_end(&w1, &w2, why, sizeof(why))) {
		TH_LOG("DREP:%s", why);
	}
	/* a REJ of whatever reason from the peer ends the active side's */
	for (int k = 0; k < 2; k++) {
		int reason;

		case_begin(&w1);
		case_begin(&w2);
		conn_msg(&r, &w, TARGET, PEER, 0x12, self->pid, self->aid);
		reason = rej_fields(&r, wire_mad(&w));
		expect_add(&w1.e, "rx_rej", 1);
		expect_add(&w1.e, rej_reason(false, reason), 1);
		if (k)
			expect_add(&w1.e, "drop_stale", 1);
		ASSERT_EQ(0, wire_send_on(w1.raw, &w, false));
		EXPECT_EQ(0, case_end(&w1, &w2, why, sizeof(why))) {
			TH_LOG("REJ %d (reason %d):%s", k, reason, why);
		}
		if (k) {
			EXPECT_EQ(-ETIME, next_event(self->a, &ev, 0));
			continue;
		}
		ASSERT_EQ(0, next_event(self->a, &ev, WAIT_MS));
		EXPECT_EQ(self->ha, ev.handle);
		EXPECT_EQ(SOFTCM_EVENT_REJECTED, ev.event);
		EXPECT_EQ(reason, ev.status);
	}
	close(w2.raw);
	close(w1.raw);
}

/*
 * rdma_cm headers whose addresses are not the packet's (issue 16, A3): a
 * REQ or SIDR_REQ sent to sc-w2's veth address whose header names
 * 127.0.0.1 (a listener there may mean "local only"), another local
 * address, an address that is not local, ::1, or a source other than the
 * packet's.  The Linux rdma_cm refuses them (validate_net_dev()); softcm
 * must answer REJ 28 (a SIDR_REP with status 2, "rejected", for a
 * SIDR_REQ), count the packet under bad_address, and never report a
 * CONNECT_REQUEST.
 */
struct forgery {
	const char *what;
	bool sidr;
	int ipver;
	const char *hsrc, *hdst;
	uint16_t port;
};

static const struct forgery forgeries[] = {
	{ "header dst 127.0.0.1, wildcard listener", false, 4, PEER, "127.0.0.1", PORT },
	{ "header dst 127.0.0.1, listener on 127.0.0.1", false, 4, PEER, "127.0.0.1", PORT + 1 },
	{ "header dst another local address", false, 4, PEER, "10.84.9.2", PORT },
	{ "header dst not local", false, 4, PEER, "10.84.0.9", PORT },
	{ "header src not the packet's", false, 4, "10.84.0.77", TARGET, PORT },
	{ "header src 127.0.0.1", false, 4, "127.0.0.1", TARGET, PORT },
	{ "IPv6 header to ::1 in an IPv4 packet", false, 6, "::ffff:" PEER, "::1", PORT },
	{ "SIDR_REQ, header dst 127.0.0.1", true, 4, PEER, "127.0.0.1", PORT },
	{ "SIDR_REQ, header src not the packet's", true, 4, "10.84.0.77", TARGET, PORT },
};

static void forge(struct rng *r, const uint8_t *real_req, const struct forgery *f,
		  struct wire *w)
{
	uint8_t *mad;

	if (!f->sidr) {
		new_req(r, real_req, w, PEER, 1 + below(r, 65535), rnd(r) & 0xffffff);
		mad = wire_mad(w);
		mad[REQ_SID + 6] = f->port >> 8;
		mad[REQ_SID + 7] = f->port;
		put_hdr(mad + REQ_HDR, f->ipver, f->hsrc, f->hdst, 1 + below(r, 65535));
		return;
	}
	wire_init(w, PEER, TARGET, 0x17);
	mad = wire_mad(w);
	put32(mad + 8, rnd(r));
	put32(mad + 24, rnd(r) | 1);			/* request ID */
	mad[28] = mad[29] = 0xff;			/* P_Key */
	memset(mad + 32, 0, 8);
	mad[36] = 0x01;					/* SOFTCM_PS_UDP */
	mad[37] = 0x11;
	mad[38] = f->port >> 8;
	mad[39] = f->port;
	put_hdr(mad + SIDR_HDR, f->ipver, f->hsrc, f->hdst, 1 + below(r, 65535));
}

TEST_F_TIMEOUT(wire, forged_header_addresses, 600)
{
	struct softcm_bind b = { .addr_len = sizeof(struct sockaddr_in) };
	struct sockaddr_in *sin = (struct sockaddr_in *)b.addr;
	struct softcm_listen l = { .backlog = 8 };
	static struct side w2, w1;
	struct softcm_event ev;
	struct rng r;
	struct wire w;
	char why[1024], seen[48];
	bool has;
	__u32 h;

	r.s = (__u64)fuzz_seed() * 0x9E3779B97F4A7C15ULL | 1;
	pin_cpu0();
	has = stats_get(self->st2, "bad_address") != STATS_MISSING;
	EXPECT_TRUE(has) {
		TH_LOG("/proc/net/softcm_stats has no bad_address counter: the kernel lacks the A3 fix of issue 16 (rdma_cm header addresses checked against the packet's)");
	}
	/* a listener meant to be local only, and a UDP one for SIDR */
	ASSERT_EQ(0, create_id(self->p, SOFTCM_PS_TCP, 4, &l.handle));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(PORT + 1);
	inet_pton(AF_INET, "127.0.0.1", &sin->sin_addr);
	b.handle = l.handle;
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_BIND, &b));
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_LISTEN, &l));
	ASSERT_EQ(0, create_id(self->p, SOFTCM_PS_UDP, 5, &l.handle));
	sin->sin_port = htons(PORT);
	sin->sin_addr.s_addr = 0;
	b.handle = l.handle;
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_BIND, &b));
	ASSERT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_LISTEN, &l));

	w2 = (struct side){ .raw = raw_in(self->ns1, self->home), .st = self->st2,
			    .from = PEER, .to = TARGET };
	w1 = (struct side){ .raw = raw_in(self->ns2, self->home), .st = self->st1,
			    .from = TARGET, .to = PEER };
	ASSERT_LE(0, w2.raw);
	ASSERT_LE(0, w1.raw);
	for (size_t i = 0; i < sizeof(forgeries) / sizeof(forgeries[0]); i++) {
		const struct forgery *f = &forgeries[i];

		case_begin(&w2);
		case_begin(&w1);
		forge(&r, self->req, f, &w);
		if (f->sidr) {
			expect_add(&w2.e, "rx_sidr_req", 1);
			expect_add(&w2.e, "tx_sidr_rep", 1);
			/* sc-w1 has no such request */
			expect_add(&w1.e, "rx_sidr_rep", 1);
			expect_add(&w1.e, "drop_unknown", 1);
		} else {
			expect_add(&w2.e, "rx_req", 1);
			expect_rej(&w2, &w1, 28, true);
		}
		expect_add(&w2.e, "bad_address", 1);
		ASSERT_EQ(0, wire_send_on(w2.raw, &w, false));
		EXPECT_EQ(0, case_end(&w2, &w1, why, sizeof(why))) {
			TH_LOG("%s:%s", f->what, why);
		}
		h = read_request(self->p, &ev, 0);
		EXPECT_EQ(0, h) {
			peer_is(self->p, h, "", 0, seen, sizeof(seen));
			TH_LOG("%s: CONNECT_REQUEST, peer %s", f->what, seen);
			refuse(self->p, h);
		}
	}
	close(w2.raw);
	close(w1.raw);
	/* fail, not skip, on a kernel without the fix */
	ASSERT_TRUE(has);
}

/*
 * The data path (issue 29): an RC QP pair connected by hand between the
 * same two namespaces (a in sc-w1, b in sc-w2, path MTU 256, so that a
 * whole packet fits a struct wire), and thousands of RC packets crafted
 * in sc-w1 FROM a's address, so that they pass b's address check and
 * reach b's responder and completer: every RC opcode (SENDs and WRITEs
 * of one to three packets, with and without immediate or invalidate,
 * READ requests, atomics, READ responses, ACKs and atomic ACKs), at,
 * behind and ahead of the expected PSN (b's rq_psn is chosen anew for
 * every round of BURST packets, near the 24-bit wrap as often as not),
 * with RETHs and AtomicETHs whose rkeys (0, the region's own, one off,
 * its lkey, another region's, another PD's), addresses (the region's
 * start - 1, its end - len + 1, past 2^64) and DMA lengths (0, 2^31,
 * 2^31 + 1, 2^32 - 1, one off the payload) are hostile, and packets
 * whose opcode, pad count, version, P_Key, QPN, length or ICRC were
 * changed after the fact.  One packet in four leaves by a UDP socket of
 * a's address instead of the raw socket: over the veth its checksum stays
 * partial, so b trusts its ICRC (rcrecv.c, icrc_ok()) and takes one made
 * wrong as if it were right; any local user of a's host can send so.
 *
 * b's memory, one mapping: canary bytes around and between its regions,
 * a region it grants remote write, read and atomics (W), one remote
 * read only (R), one of another PD granting everything (O), one local
 * write only (N), and its receives' buffers (V); some receives name R
 * or O, or no region, as if b's program were wrong.  Checked after every
 * round:
 * - every byte of b's mapping outside W and V, and all of a's, is what
 *   it was: no packet wrote where no rkey allows (atomics, which softcm
 *   does not carry yet, are dropped or NAKed: executed, they may only
 *   change W); and no byte of b's is 0, which only the payloads of
 *   WRITEs b must refuse carry: none landed before its refusal, not
 *   even in W;
 * - sc-w2's counters moved by exactly what each packet's bytes predict
 *   (wire_oracle.h, rc_predict(): drop_length, drop_header, drop_icrc,
 *   drop_qpn, rc_rx_packets and rc_rx_bytes, the AETHs received by kind), b's
 *   answers (ACKs, NAKs, READ responses, refusals, duplicates) by no
 *   more than the requests that reached it, and nothing else at all;
 * - each receive completes exactly once and in order (success, a local
 *   length or protection error, or flushed when the round ends b with
 *   ERR), one that names R or O never with bytes, and b, which posts no
 *   send, completes none.
 * At the end b is made RTS once more and a SEND, a WRITE and a READ
 * between a and b carry their bytes.  The debug kernel must stay silent.
 */
#define D_MTU		256
#define D_SIZE		65536		/* b's mapping */
#define D_W		(4096 + 64)	/* remote write, read, atomic */
#define D_W_LEN		8192
#define D_R		(16384 + 32)	/* remote read only */
#define D_R_LEN		4096
#define D_O		(24576 + 16)	/* another PD, every access */
#define D_O_LEN		4096
#define D_N		(32768 + 8)	/* local write only */
#define D_N_LEN		2048
#define D_V		40960		/* the receives' buffers */
#define D_SLOT		512
#define D_RECV		8
#define D_A_SIZE	8192		/* a's mapping */
#define D_A_PSN		0x5a5a5a	/* a's first PSN, b's rq_psn at the end */
#define D_B_PSN		0xfffff0	/* b's first PSN: the stray responses near it */

FIXTURE(data) {
	int home, ns1, ns2, st1, st2;
	struct ibv_context *ca, *cb;
	struct ibv_pd *pa, *pb, *pb2;
	struct ibv_cq *sa, *ra, *sb, *rb;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *ma, *mw, *mr, *mo, *mn, *mv;
	uint8_t *a, *b, *orig_a, *orig_b;
	int gida, gidb;
};

/* The device of namespace @nsfd, through the library. */
static struct ibv_context *open_dev_in(int nsfd, int home)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int n;

	if (netns_enter(nsfd))
		return NULL;
	list = ibv_get_device_list(&n);
	if (list && n == 1)
		ctx = ibv_open_device(list[0]);
	if (list)
		ibv_free_device_list(list);
	netns_enter(home);
	return ctx;
}

static void v4_gid(union ibv_gid *gid, const char *ip)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	inet_pton(AF_INET, ip, &gid->raw[12]);
}

static int gid_index_of(struct ibv_context *ctx, const char *ip)
{
	union ibv_gid gid, want;

	v4_gid(&want, ip);
	for (int i = 0; i < 32; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) && !memcmp(&gid, &want, sizeof(gid)))
			return i;
	return -1;
}

/* @qp from any state to RTS, its peer QP @dqpn at @dst. */
static int d_connect(struct ibv_qp *qp, int sgid, const char *dst, uint32_t dqpn,
		     uint32_t rq_psn, uint32_t sq_psn, unsigned int access)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (ret)
		return ret;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_256;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 2;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = sgid;
	v4_gid(&a.ah_attr.grh.dgid, dst);
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 14 + softcm_slow_shift();
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 2;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

#define D_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		 IBV_ACCESS_REMOTE_ATOMIC)

FIXTURE_SETUP(data)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, make_topology());
	self->home = netns_self();
	self->ns1 = netns_open("sc-w1");
	self->ns2 = netns_open("sc-w2");
	ASSERT_LE(0, self->home);
	ASSERT_LE(0, self->ns1);
	ASSERT_LE(0, self->ns2);
	self->st1 = stats_open(self->ns1, self->home);
	self->st2 = stats_open(self->ns2, self->home);
	ASSERT_LE(0, self->st1);
	ASSERT_LE(0, self->st2);
	self->ca = open_dev_in(self->ns1, self->home);
	self->cb = open_dev_in(self->ns2, self->home);
	ASSERT_NE(NULL, self->ca);
	ASSERT_NE(NULL, self->cb);
	self->gida = gid_index_of(self->ca, PEER);
	self->gidb = gid_index_of(self->cb, TARGET);
	ASSERT_LE(0, self->gida);
	ASSERT_LE(0, self->gidb);
	self->pa = ibv_alloc_pd(self->ca);
	self->pb = ibv_alloc_pd(self->cb);
	self->pb2 = ibv_alloc_pd(self->cb);
	ASSERT_NE(NULL, self->pa);
	ASSERT_NE(NULL, self->pb);
	ASSERT_NE(NULL, self->pb2);
	self->sa = ibv_create_cq(self->ca, 32, NULL, NULL, 0);
	self->ra = ibv_create_cq(self->ca, 32, NULL, NULL, 0);
	self->sb = ibv_create_cq(self->cb, 64, NULL, NULL, 0);
	self->rb = ibv_create_cq(self->cb, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, self->sa);
	ASSERT_NE(NULL, self->ra);
	ASSERT_NE(NULL, self->sb);
	ASSERT_NE(NULL, self->rb);
	qa.send_cq = self->sa;
	qa.recv_cq = self->ra;
	self->qa = ibv_create_qp(self->pa, &qa);
	qa.send_cq = self->sb;
	qa.recv_cq = self->rb;
	self->qb = ibv_create_qp(self->pb, &qa);
	ASSERT_NE(NULL, self->qa);
	ASSERT_NE(NULL, self->qb);

	self->a = mmap(NULL, D_A_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	self->b = mmap(NULL, D_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->a);
	ASSERT_NE(MAP_FAILED, self->b);
	self->orig_a = malloc(D_A_SIZE);
	self->orig_b = malloc(D_SIZE);
	ASSERT_NE(NULL, self->orig_a);
	ASSERT_NE(NULL, self->orig_b);
	for (int i = 0; i < D_A_SIZE; i++)
		self->a[i] = i * 7 + 3;
	/* never 0: a region zeroed by mistake shows */
	for (int i = 0; i < D_SIZE; i++)
		self->b[i] = 1 + (i * 131 + (i >> 8)) % 255;
	memcpy(self->orig_a, self->a, D_A_SIZE);
	memcpy(self->orig_b, self->b, D_SIZE);
	self->ma = ibv_reg_mr(self->pa, self->a, D_A_SIZE, D_ALL);
	self->mw = ibv_reg_mr(self->pb, self->b + D_W, D_W_LEN, D_ALL);
	self->mr = ibv_reg_mr(self->pb, self->b + D_R, D_R_LEN, IBV_ACCESS_REMOTE_READ);
	self->mo = ibv_reg_mr(self->pb2, self->b + D_O, D_O_LEN, D_ALL);
	self->mn = ibv_reg_mr(self->pb, self->b + D_N, D_N_LEN, IBV_ACCESS_LOCAL_WRITE);
	self->mv = ibv_reg_mr(self->pb, self->b + D_V, D_RECV * D_SLOT, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, self->ma);
	ASSERT_NE(NULL, self->mw);
	ASSERT_NE(NULL, self->mr);
	ASSERT_NE(NULL, self->mo);
	ASSERT_NE(NULL, self->mn);
	ASSERT_NE(NULL, self->mv);
	ASSERT_EQ(0, d_connect(self->qa, self->gida, TARGET, self->qb->qp_num, D_B_PSN,
			       D_A_PSN, D_ALL));
}

FIXTURE_TEARDOWN(data)
{
	struct ibv_mr *mrs[] = { self->ma, self->mw, self->mr, self->mo, self->mn, self->mv };

	for (size_t i = 0; i < sizeof(mrs) / sizeof(mrs[0]); i++)
		if (mrs[i])
			ibv_dereg_mr(mrs[i]);
	if (self->qa)
		ibv_destroy_qp(self->qa);
	if (self->qb)
		ibv_destroy_qp(self->qb);
	if (self->sa)
		ibv_destroy_cq(self->sa);
	if (self->ra)
		ibv_destroy_cq(self->ra);
	if (self->sb)
		ibv_destroy_cq(self->sb);
	if (self->rb)
		ibv_destroy_cq(self->rb);
	if (self->pa)
		ibv_dealloc_pd(self->pa);
	if (self->pb)
		ibv_dealloc_pd(self->pb);
	if (self->pb2)
		ibv_dealloc_pd(self->pb2);
	if (self->ca)
		ibv_close_device(self->ca);
	if (self->cb)
		ibv_close_device(self->cb);
	if (self->a && self->a != MAP_FAILED)
		munmap(self->a, D_A_SIZE);
	if (self->b && self->b != MAP_FAILED)
		munmap(self->b, D_SIZE);
	free(self->orig_a);
	free(self->orig_b);
	EXPECT_EQ(0, stats_wait_idle(self->st1, WAIT_MS));
	EXPECT_EQ(0, stats_wait_idle(self->st2, WAIT_MS));
	close(self->st1);
	close(self->st2);
	netns_del("sc-w1");
	netns_del("sc-w2");
	close(self->ns1);
	close(self->ns2);
	close(self->home);
}

/* One round's crafting: where packets go and what they must move. */
struct dround {
	FIXTURE_DATA(data) *self;
	struct rng *r;
	/*
	 * Packets leave a's namespace by @raw (built whole, the checksum
	 * none: b checks the ICRC) or, one in four, by @udp, a plain UDP
	 * socket of a's (the checksum partial: b trusts the ICRC, as a
	 * batch's, and only the headers, the QPN and the PSN decide).
	 */
	int raw, udp;
	long via_udp, trusted;	/* sent by @udp; of those, taken with a wrong ICRC */
	uint32_t epsn;		/* b's expected PSN, as far as the round knows */
	/*
	 * A round begins with messages b may carry out, so that it is in
	 * the middle of things (a message begun, READs being answered)
	 * when the hostile ones come: each message is hostile with the
	 * odds sent / BURST, and a hostile one may also be mutated.
	 */
	bool hostile;
	unsigned int access;	/* b's QP's, this round */
	/*
	 * Every byte a packet carries is non-zero but for the payload of a
	 * WRITE whose RETH names a range b does not allow: b's mapping has
	 * no zero byte to begin with, so a zero found in it after a round is
	 * a byte that landed from a refused WRITE, even inside W (a refusal
	 * must come before a byte moves).  @marker says the packet being
	 * built is such a payload, @cur_hdr and @cur_pay where it is; a
	 * mutation fills it with non-zero bytes first, since a mutated packet
	 * may become part of another message.  @last_ok: the last packet
	 * reached b unchanged at its expected PSN.
	 */
	bool marker, last_ok;
	size_t cur_hdr, cur_pay;
	uint8_t last_read[16];	/* the RETH of the last READ, and its PSN */
	uint32_t last_read_psn;
	struct expect e;
	long sent, requests;	/* packets; requests that reach b */
	long kind[8];		/* how each prediction came out, for the summary */
};

enum { DK_LENGTH, DK_HEADER, DK_ICRC, DK_REQUEST, DK_RESPONSE, DK_COUNT };

/* A region of b's: its offset, length and MR. */
static void d_region(FIXTURE_DATA(data) *self, int i, uint64_t *start, uint32_t *len,
		     struct ibv_mr **mr)
{
	static const uint32_t off[] = { D_W, D_R, D_O, D_N, D_V };
	static const uint32_t lens[] = { D_W_LEN, D_R_LEN, D_O_LEN, D_N_LEN, D_RECV * D_SLOT };
	struct ibv_mr *mrs[] = { self->mw, self->mr, self->mo, self->mn, self->mv };

	*start = (uintptr_t)self->b + off[i];
	*len = lens[i];
	*mr = mrs[i];
}

/*
 * A RETH's or AtomicETH's target for @total bytes: before a round turns
 * hostile, a place in W that its rkey allows, so that b lives on to take
 * what follows.  A hostile one begins as a place that one of b's regions
 * (W for one in two, else R, O, N or V) holds, named by that region's
 * rkey, with the payload's length, the one thing wrong being the region
 * (for all but W); then one of rkey, address and DMA length, or each of
 * them with even odds, is made wrong in one of the ways that matter.
 */
static void d_target(struct dround *d, uint32_t total, bool dma_len, uint64_t *va,
		     uint32_t *rkey, uint32_t *len)
{
	struct rng *r = d->r;
	int reg = below(r, 8), m = below(r, 8);
	struct ibv_mr *mr;
	uint64_t start;
	uint32_t rlen;

	if (!d->hostile && total <= D_W_LEN) {
		*rkey = d->self->mw->rkey;
		*len = total;
		*va = (uintptr_t)d->self->b + D_W + below(r, D_W_LEN - total + 1);
		return;
	}
	d_region(d->self, reg < 4 ? 0 : reg - 3, &start, &rlen, &mr);
	*rkey = mr->rkey;
	if (m == 1 || m == 2 || (m == 7 && below(r, 2))) {
		switch (below(r, 6)) {
		case 0: *rkey = 0; break;
		case 1: *rkey = mr->rkey + 1 - 2 * below(r, 2); break;
		case 2: *rkey = mr->lkey; break;
		case 3: *rkey = d->self->mo->rkey; break;
		case 4: *rkey = d->self->mw->rkey; break;
		default: *rkey = rnd(r); break;
		}
	}
	*len = total;
	if (dma_len && (m == 3 || m == 4 || (m == 7 && below(r, 2)))) {
		switch (below(r, 6)) {
		case 0: *len = 0; break;
		case 1: *len = 0x80000000u; break;
		case 2: *len = 0x80000001u; break;
		case 3: *len = 0xffffffffu; break;
		case 4: *len = total + 1 - 2 * below(r, 2); break;
		default: *len = total + D_MTU * (1 + below(r, 4)); break;
		}
	}
	*va = start + (*len < rlen ? below(r, rlen - *len + 1) : 0);
	if (m == 5 || m == 6 || (m == 7 && below(r, 2))) {
		/* the bounds most: one byte before, one byte past the end */
		switch (below(r, 8)) {
		case 0: case 1: *va = start - 1; break;
		case 2: case 3: case 4: *va = start + rlen - *len + 1; break;
		case 5: *va = start + rlen - *len; break;
		case 6: *va = ~0ULL - below(r, 2 * D_MTU); break;
		default: *va = (uint64_t)rnd(r) << 32 | rnd(r); break;
		}
	}
}

/* Random bytes, never 0 (the refused WRITEs' mark). */
static void d_fill(struct rng *r, uint8_t *p, size_t n)
{
	while (n--)
		*p++ = 1 + below(r, 255);
}

static uint64_t d_nonzero64(struct rng *r)
{
	uint8_t b[8];

	d_fill(r, b, 8);
	return (uint64_t)get32(b) << 32 | get32(b + 4);
}

/*
 * The packet in @w, made wrong in one way or not at all (one in five),
 * finished, predicted and sent.
 */
static int d_send(struct dround *d, struct wire *w)
{
	struct rng *r = d->r;
	uint8_t *bth = rc_bth(w);
	bool bad_icrc = false;
	struct rc_pred p;
	uint32_t q;
	size_t n;
	int m = d->hostile ? below(r, 32) : 32;
	bool udp = !below(r, 4);
	uint8_t op = bth[0];

	if (d->marker && m < 12)
		d_fill(r, bth + d->cur_hdr, d->cur_pay);
	d->last_ok = false;
	switch (m) {
	case 0:
		bth[0] = below(r, 0x18);
		break;
	case 1:
		bth[0] = rnd(r);
		break;
	case 2:
		bth[1] = (bth[1] & ~0x30) | below(r, 4) << 4;
		break;
	case 3:
		bth[1] |= 1 + below(r, 15);
		break;
	case 4:
		n = 1 + below(r, w->paylen < 40 ? w->paylen - 4 : 36);
		w->paylen -= n;
		break;
	case 5:
		/* the old ICRC becomes payload: no zero in it either */
		n = 1 + below(r, 16);
		if (w->paylen + n <= WIRE_MAX) {
			d_fill(r, bth + w->paylen - RC_ICRC, RC_ICRC + n);
			w->paylen += n;
		}
		break;
	case 6:
		bth[2] = rnd(r);
		bth[3] = rnd(r);
		break;
	case 7:
		q = (get32(bth + 4) ^ (1 + below(r, 0xfffffe))) & 0xffffff;
		put32(bth + 4, q);
		break;
	case 8:
		bth[below(r, w->paylen)] = 1 + below(r, 255);
		break;
	case 9:
		bth[1] ^= 0xc0;		/* SE, MigReq */
		bth[8] ^= 0x80;		/* AckReq */
		break;
	case 10:
	case 11:
		bad_icrc = true;
		break;
	default:
		break;
	}
	/* an opcode with shorter headers makes header bytes payload: no zero */
	if (bth[0] != op && bth[0] < 0x18 && op < 0x18 && rc_ops[bth[0]].hdr &&
	    rc_ops[bth[0]].hdr < rc_ops[op].hdr && rc_ops[op].hdr <= w->paylen)
		d_fill(r, bth + rc_ops[bth[0]].hdr, rc_ops[op].hdr - rc_ops[bth[0]].hdr);
	rc_finish(w, false);
	/*
	 * By UDP a wrong ICRC is trusted: only its own bytes change, or a bit
	 * flipped elsewhere could make a zero, or header bytes payload, that
	 * land where the checks after the round would take them for a
	 * refused WRITE's.
	 */
	if (bad_icrc && udp)
		w->pkt[28 + w->paylen - RC_ICRC + below(r, RC_ICRC)] ^= 1 << below(r, 8);
	else if (bad_icrc)
		w->pkt[28 + below(r, w->paylen)] ^= 1 << below(r, 8);
	/* QP1 is the CM's: this oracle is the data path's */
	if (w->paylen >= RC_BTH && (get32(bth + 4) & 0xffffff) == 1)
		bth[7] = 3;
	rc_predict(w, d->self->qb->qp_num, udp, &p);
	expect_add(&d->e, p.counter, 1);
	if (!strcmp(p.counter, "rc_rx_packets")) {
		d->trusted += p.trusted;
		expect_add(&d->e, "rc_rx_bytes", p.payload);
		if (p.aeth)
			expect_add(&d->e, p.aeth, 1);
		d->requests += p.request;
		d->kind[p.request ? DK_REQUEST : DK_RESPONSE]++;
		/* at the PSN b expects: what it takes next, if it takes this */
		if (p.request && (get32(bth + 8) & 0xffffff) == (d->epsn & 0xffffff)) {
			d->last_ok = m >= 12;
			uint32_t dma = get32(bth + RC_BTH + 12);

			d->epsn += bth[0] != RC_READ_REQUEST ? 1 :
				   dma ? (dma + D_MTU - 1) / D_MTU : 1;
		}
	} else {
		d->kind[!strcmp(p.counter, "drop_length") ? DK_LENGTH :
			!strcmp(p.counter, "drop_icrc") ? DK_ICRC : DK_HEADER]++;
	}
	d->sent++;
	if (!udp)
		return wire_send_on(d->raw, w, true);
	d->via_udp++;
	return send(d->udp, bth, w->paylen, 0) == (ssize_t)w->paylen ? 0 : -errno;
}

/* A request's BTH from a's address to b's QP. */
static uint8_t *d_bth(struct dround *d, struct wire *w, uint8_t op, uint32_t psn)
{
	uint8_t *ext = rc_init(w, PEER, TARGET, op, d->self->qb->qp_num, psn,
			       below(d->r, 8) != 0);

	if (!below(d->r, 4))
		rc_bth(w)[1] |= 0x80;	/* SE */
	return ext;
}

/*
 * One message: a SEND or WRITE of one to three packets, a READ, an
 * atomic, a response for b's requester (which has nothing outstanding),
 * or a packet of random bytes.  At b's expected PSN or off it.
 */
static int d_message(struct dround *d)
{
	static const uint8_t resp_ops[] = { 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12 };
	static const int32_t offs[] = { -1, 1, -2, 2, 1 << 23, (1 << 23) - 1, -(1 << 23) };
	struct rng *r = d->r;
	uint32_t psn = d->epsn, total, rkey, len, pay, delta = 0;
	uint64_t wbase = (uintptr_t)d->self->b + D_W;
	int kind = below(r, 16), n, ret = 0;
	bool refused;
	uint8_t op, *ext, syn;
	struct wire w;
	uint64_t va;

	d->hostile = below(r, BURST) < d->sent;
	/* b's own: SENDs, WRITEs, READs (or the last one again), responses */
	if (!d->hostile && kind >= 12 && kind < 16)
		kind = kind == 15 && d->last_read_psn != ~0u ? 16 : 13;
	/* one hostile message in three off the expected PSN: behind, ahead, far */
	if (d->hostile && !below(r, 3))
		delta = below(r, 8) ? offs[below(r, 7)] : rnd(r);
	psn += delta;
	if (kind == 16) {
		/* a duplicate READ: answered again if b still keeps it */
		memcpy(d_bth(d, &w, RC_READ_REQUEST, d->last_read_psn), d->last_read, RC_RETH);
		rc_set_len(&w, RC_BTH + RC_RETH, 0);
		ret = d_send(d, &w);
	} else if (kind < 10) {
		bool write = kind >= 5;
		/* plain, immediate, invalidate (which a WRITE has not) */
		int v = below(r, 8) < 5 ? 0 : below(r, 3) ? 1 : 2;

		if (!d->hostile && v == 2)
			v = 1;

		if (write && v == 2)
			v = 0;

		n = 1 + below(r, 3);
		pay = below(r, D_MTU + 1);
		if (n > 1 && !pay)
			pay = 1;
		total = (n - 1) * D_MTU + pay;
		d_target(d, total, true, &va, &rkey, &len);
		refused = write && !((d->access & IBV_ACCESS_REMOTE_WRITE) &&
				     rkey == d->self->mw->rkey && len && len <= D_W_LEN &&
				     va >= wbase && va - wbase <= D_W_LEN - len);
		for (int i = 0; i < n && !ret; i++) {
			bool first = !i, last = i == n - 1;
			size_t hdr = RC_BTH, plen = last ? pay : D_MTU;

			if (!write)
				op = n == 1 ? (v == 1 ? RC_SEND_ONLY_IMM : v == 2 ? RC_SEND_ONLY_INV :
					       RC_SEND_ONLY) :
				     first ? RC_SEND_FIRST : !last ? RC_SEND_MIDDLE :
				     v == 1 ? RC_SEND_LAST_IMM : v == 2 ? RC_SEND_LAST_INV :
				     RC_SEND_LAST;
			else
				op = n == 1 ? (v == 1 ? RC_WRITE_ONLY_IMM : RC_WRITE_ONLY) :
				     first ? RC_WRITE_FIRST : !last ? RC_WRITE_MIDDLE :
				     v == 1 ? RC_WRITE_LAST_IMM : RC_WRITE_LAST;
			/* each packet where the last one left b, or off it */
			ext = d_bth(d, &w, op, d->epsn + (delta ? delta + i : 0));
			if (write && first) {
				rc_reth(ext, va, rkey, len);
				hdr += RC_RETH;
			}
			if (last && v) {
				d_fill(r, rc_bth(&w) + hdr, 4);	/* ImmDt or IETH */
				hdr += 4;
			}
			/* pad bytes too: a mutated pad count makes them payload */
			d_fill(r, rc_bth(&w) + hdr, (plen + 3) & ~(size_t)3);
			/* the mark, while the packets before reached b as they were */
			d->marker = refused && (first || d->last_ok);
			if (d->marker)
				memset(rc_bth(&w) + hdr, 0, plen);
			d->cur_hdr = hdr;
			d->cur_pay = (plen + 3) & ~(size_t)3;
			rc_set_len(&w, hdr, plen);
			ret = d_send(d, &w);
			d->marker = false;
		}
	} else if (kind < 12) {
		total = below(r, 4) ? 1 + below(r, 4 * D_MTU) : below(r, D_W_LEN + 1);
		d_target(d, total, true, &va, &rkey, &len);
		ext = d_bth(d, &w, RC_READ_REQUEST, psn);
		rc_reth(ext, va, rkey, len);
		memcpy(d->last_read, ext, RC_RETH);
		d->last_read_psn = psn;
		rc_set_len(&w, RC_BTH + RC_RETH, 0);
		ret = d_send(d, &w);
	} else if (kind < 13) {
		d_target(d, 8, false, &va, &rkey, &len);
		if (below(r, 4))
			va &= ~7ULL;
		/* executed in W, an atomic may not leave a zero there: swap no zero, add 0 */
		op = below(r, 2) ? RC_COMPARE_SWAP : RC_FETCH_ADD;
		rc_atomiceth(d_bth(d, &w, op, psn), va, rkey,
			     op == RC_COMPARE_SWAP ? d_nonzero64(r) : 0,
			     (uint64_t)rnd(r) << 32 | rnd(r));
		rc_set_len(&w, RC_BTH + RC_ATOMICETH, 0);
		ret = d_send(d, &w);
	} else if (kind < 15) {
		static const uint8_t syns[] = { 0x1f, 0x00, 0x20, 0x60, 0x61, 0x62, 0x63, 0x64 };

		op = resp_ops[below(r, 6)];
		psn = D_B_PSN + (below(r, 4) ? (int)below(r, 9) - 4 : (int)rnd(r));
		ext = rc_init(&w, PEER, TARGET, op, d->self->qb->qp_num, psn, false);
		syn = below(r, 8) ? syns[below(r, 8)] | (below(r, 2) ? 0 : below(r, 32) & 0x1f)
				  : rnd(r);
		pay = op == 0x0d || op == 0x0e ? D_MTU :
		      op == 0x0f || op == 0x10 ? below(r, D_MTU + 1) : 0;
		if (op == 0x0e) {
			d_fill(r, ext, pay);
			rc_set_len(&w, RC_BTH, pay);
		} else {
			rc_aeth(ext, syn, rnd(r));
			n = RC_BTH + RC_AETH + (op == 0x12 ? RC_ATOMICACKETH : 0);
			d_fill(r, rc_bth(&w) + RC_BTH + RC_AETH, n - RC_BTH - RC_AETH + pay);
			rc_set_len(&w, n, pay);
		}
		ret = d_send(d, &w);
	} else {
		ext = d_bth(d, &w, rnd(r), psn);
		pay = below(r, 300);
		d_fill(r, ext, pay);
		w.paylen = RC_BTH + pay + RC_ICRC;
		ret = d_send(d, &w);
	}
	return ret;
}

/* Every packet sc-w2's softcm took for the data path, by the counters that say so. */
static long long d_taken(const struct snap *s)
{
	return snap_get(s, "drop_length") + snap_get(s, "drop_header") +
	       snap_get(s, "drop_icrc") + snap_get(s, "drop_qpn") +
	       snap_get(s, "rc_rx_packets") + snap_get(s, "drop_address");
}

/* The first byte of @now that is not @then's outside [@w0, @w1) and [@v0, @v1); -1. */
static long d_changed(const uint8_t *now, const uint8_t *then, size_t size, size_t w0,
		      size_t w1, size_t v0, size_t v1)
{
	for (size_t i = 0; i < size; i++) {
		if ((i >= w0 && i < w1) || (i >= v0 && i < v1))
			continue;
		if (now[i] != then[i])
			return i;
	}
	return -1;
}

static const char *d_where(long off)
{
	if (off >= D_R && off < D_R + D_R_LEN)
		return "R (remote read only)";
	if (off >= D_O && off < D_O + D_O_LEN)
		return "O (another PD)";
	if (off >= D_N && off < D_N + D_N_LEN)
		return "N (local write only)";
	return "a canary (no region)";
}

/* A receive per slot of V; one in eight names R, O or no region instead. */
static int d_post_recvs(FIXTURE_DATA(data) *self, struct rng *r, uint64_t first, bool *bad)
{
	for (int i = 0; i < D_RECV; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)self->b + D_V + i * D_SLOT,
				       .length = D_SLOT, .lkey = self->mv->lkey };
		struct ibv_recv_wr wr = { .wr_id = first + i, .sg_list = &sge, .num_sge = 1 },
			*badwr;

		bad[i] = !below(r, 8);
		if (bad[i]) {
			switch (below(r, 3)) {
			case 0:
				sge.addr = (uintptr_t)self->b + D_R;
				sge.lkey = self->mr->lkey;
				break;
			case 1:
				sge.addr = (uintptr_t)self->b + D_O;
				sge.lkey = self->mo->lkey;
				break;
			default:
				sge.lkey = rnd(r);
				break;
			}
		}
		if (ibv_post_recv(self->qb, &wr, &badwr))
			return -1;
	}
	return 0;
}

/* @n completions of @cq within @ms, polled: how many came, or -1. */
static int poll_cq_until(struct ibv_cq *cq, struct ibv_wc *wc, int n, long ms)
{
	long end = topo_now_ms() + ms;
	int got = 0, ret;

	while (got < n) {
		ret = ibv_poll_cq(cq, n - got, wc + got);
		if (ret < 0)
			return -1;
		got += ret;
		if (got < n && topo_now_ms() > end)
			break;
		if (got < n && !ret)
			usleep(200);
	}
	return got;
}

static int d_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

TEST_F_TIMEOUT(data, hostile_data_packets, 600)
{
	static const char *const answers[] = {
		"rc_tx_packets", "rc_tx_bytes", "rc_acks_sent", "rc_seq_naks_sent",
		"rnr_naks_sent", "drop_access", "drop_rkey", "rc_duplicates", "read_replays",
		"rd_atomic_exhausted", "rc_resp_rcv", "rc_resp_work", "rc_tx_copied",
		"rc_tx_gso",
		/* what reaches b after a hostile packet took it to ERR */
		"drop_state",
	};
	static const uint32_t bases[] = { 0xffffff, 0xfffffe, 0xfffff0, 0, 0x7fffff, 0x800000 };
	long seconds = env_long("SOFTCM_FUZZ_SECONDS", softcm_on_debug() ? 10 : 5);
	static struct snap s0, s1, a0, a1;
	long end, rounds = 0, sent = 0, err_rounds = 0, recvs[4] = { 0 };
	long kind[DK_COUNT] = { 0 };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct dround d = { .self = self };
	struct ibv_wc wc[D_RECV];
	struct rng r;
	char why[1024];
	bool bad[D_RECV];

	r.s = (__u64)fuzz_seed() * 0x9E3779B97F4A7C15ULL | 1;
	pin_cpu0();
	d.r = &r;
	d.raw = raw_in(self->ns1, self->home);
	ASSERT_LE(0, d.raw);
	d.udp = udp_in(self->ns1, self->home, PEER, TARGET);
	ASSERT_LE(0, d.udp);
	ASSERT_EQ(0, snap_take(self->st1, &a0));

	end = topo_now_ms() + seconds * 1000;
	for (; topo_now_ms() < end && _metadata->passed; rounds++) {
		uint32_t base = below(&r, 2) ? bases[below(&r, 6)] : rnd(&r) & 0xffffff;
		unsigned int access = below(&r, 4) ? D_ALL :
				      below(&r, 2) ? D_ALL & ~IBV_ACCESS_REMOTE_WRITE :
				      D_ALL & ~IBV_ACCESS_REMOTE_READ;
		uint64_t first = (uint64_t)rounds * D_RECV + 1;
		long long want_b, got_b;
		int got, state;
		uint8_t *zero;
		long off;

		ASSERT_EQ(0, d_connect(self->qb, self->gidb, PEER, self->qa->qp_num, base,
				       D_B_PSN, access));
		ASSERT_EQ(0, d_post_recvs(self, &r, first, bad));
		memset(&d.e, 0, sizeof(d.e));
		for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++)
			expect_add(&d.e, answers[i], SNAP_ANY);
		d.epsn = base;
		d.access = access;
		d.last_read_psn = ~0u;
		d.sent = 0;
		d.requests = 0;
		memset(d.kind, 0, sizeof(d.kind));
		ASSERT_EQ(0, snap_take(self->st2, &s0));
		while (d.sent < BURST)
			ASSERT_EQ(0, d_message(&d));

		/* every packet taken; then ERR, under b's lock: none is still being handled */
		want_b = d_taken(&s0) + d.sent;
		for (long dl = topo_now_ms() + WAIT_MS; topo_now_ms() < dl; usleep(1000)) {
			ASSERT_EQ(0, snap_take(self->st2, &s1));
			if (d_taken(&s1) >= want_b)
				break;
		}
		got_b = d_taken(&s1);
		state = d_state(self->qb);
		err_rounds += state == IBV_QPS_ERR;
		EXPECT_TRUE(state == IBV_QPS_RTS || state == IBV_QPS_ERR) {
			TH_LOG("round %ld: b in state %d", rounds, state);
		}
		ASSERT_EQ(0, ibv_modify_qp(self->qb, &attr, IBV_QP_STATE));
		ASSERT_EQ(0, snap_take(self->st2, &s1));
		EXPECT_EQ(want_b, got_b) {
			TH_LOG("round %ld: %ld packets, %lld taken", rounds, d.sent,
			       got_b - d_taken(&s0));
		}
		EXPECT_EQ(0, expect_check(&d.e, &s0, &s1, why, sizeof(why))) {
			TH_LOG("round %ld (rq_psn %#x):%s", rounds, base, why);
		}
		/* b answers only requests that reached it, each at most once */
		EXPECT_GE(d.requests, snap_get(&s1, "rc_acks_sent") - snap_get(&s0, "rc_acks_sent") +
			  snap_get(&s1, "rc_seq_naks_sent") - snap_get(&s0, "rc_seq_naks_sent") +
			  snap_get(&s1, "rnr_naks_sent") - snap_get(&s0, "rnr_naks_sent")) {
			TH_LOG("round %ld: %ld requests", rounds, d.requests);
		}
		EXPECT_GE(d.requests, snap_get(&s1, "drop_access") - snap_get(&s0, "drop_access") +
			  snap_get(&s1, "drop_rkey") - snap_get(&s0, "drop_rkey") +
			  snap_get(&s1, "rc_duplicates") - snap_get(&s0, "rc_duplicates"));

		/* each receive once, in order: ERR flushed those left */
		got = poll_cq_until(self->rb, wc, D_RECV, WAIT_MS);
		EXPECT_EQ(D_RECV, got) TH_LOG("round %ld", rounds);
		for (int i = 0; i < got; i++) {
			EXPECT_EQ(first + i, wc[i].wr_id) TH_LOG("round %ld", rounds);
			EXPECT_EQ(self->qb->qp_num, wc[i].qp_num);
			switch (wc[i].status) {
			case IBV_WC_SUCCESS:
				recvs[0]++;
				EXPECT_TRUE(wc[i].opcode == IBV_WC_RECV ||
					    wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM);
				if (wc[i].opcode == IBV_WC_RECV)
					EXPECT_GE(bad[i] ? 0 : D_SLOT, wc[i].byte_len) {
						TH_LOG("round %ld: receive %d", rounds, i);
					}
				break;
			case IBV_WC_WR_FLUSH_ERR:
				recvs[1]++;
				break;
			case IBV_WC_LOC_LEN_ERR:
			case IBV_WC_LOC_PROT_ERR:
			/* a SEND with invalidate: b has no rkey it could invalidate (rxe) */
			case IBV_WC_REM_INV_REQ_ERR:
				recvs[2]++;
				break;
			default:
				recvs[3]++;
				EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status) {
					TH_LOG("round %ld: receive %d: %s", rounds, i,
					       ibv_wc_status_str(wc[i].status));
				}
				break;
			}
		}
		/* b posted no send: nothing may complete one */
		EXPECT_EQ(0, ibv_poll_cq(self->sb, 1, wc)) TH_LOG("round %ld", rounds);

		off = d_changed(self->b, self->orig_b, D_SIZE, D_W, D_W + D_W_LEN, D_V,
				D_V + D_RECV * D_SLOT);
		EXPECT_EQ(-1, off) {
			TH_LOG("round %ld (rq_psn %#x): b's byte %ld, in %s, is %#x, was %#x",
			       rounds, base, off, d_where(off), self->b[off], self->orig_b[off]);
		}
		zero = memchr(self->b, 0, D_SIZE);
		off = zero ? zero - self->b : -1;
		EXPECT_EQ(-1, off) {
			TH_LOG("round %ld (rq_psn %#x): b's byte %ld, in %s, is 0: a byte of a refused WRITE landed",
			       rounds, base, off, off >= D_W && off < D_W + D_W_LEN ? "W" :
			       off >= D_V && off < D_V + D_RECV * D_SLOT ? "V" : d_where(off));
		}
		off = d_changed(self->a, self->orig_a, D_A_SIZE, 0, 0, 0, 0);
		EXPECT_EQ(-1, off) TH_LOG("round %ld: a's byte %ld", rounds, off);
		sent += d.sent;
		for (int k = 0; k < DK_COUNT; k++)
			kind[k] += d.kind[k];
	}
	close(d.raw);
	close(d.udp);
	printf("# %ld rounds, %ld packets (%ld by a UDP socket, %ld of them taken with a wrong ICRC): drop_length %ld, drop_header %ld, drop_icrc %ld, requests to b %ld, responses to b %ld; b in ERR after %ld rounds; receives: %ld done, %ld flushed, %ld local errors\n",
	       rounds, sent, d.via_udp, d.trusted, kind[DK_LENGTH], kind[DK_HEADER],
	       kind[DK_ICRC], kind[DK_REQUEST], kind[DK_RESPONSE], err_rounds, recvs[0], recvs[1],
	       recvs[2]);
	printf("# b's answers: acks %lld, sequence NAKs %lld, RNR NAKs %lld, refused (drop_rkey) %lld (drop_access) %lld, duplicates %lld, READs replayed %lld, beyond rd_atomic %lld; packets sent %lld\n",
	       stats_get(self->st2, "rc_acks_sent"), stats_get(self->st2, "rc_seq_naks_sent"),
	       stats_get(self->st2, "rnr_naks_sent"), stats_get(self->st2, "drop_rkey"),
	       stats_get(self->st2, "drop_access"), stats_get(self->st2, "rc_duplicates"),
	       stats_get(self->st2, "read_replays"), stats_get(self->st2, "rd_atomic_exhausted"),
	       stats_get(self->st2, "rc_tx_packets"));
	/* thousands of packets, most of them past the parser and the ICRC */
	EXPECT_LE(BURST, sent);
	EXPECT_LT(kind[DK_LENGTH] + kind[DK_HEADER] + kind[DK_ICRC], kind[DK_REQUEST]);
	/* the partial-checksum family ran, and could tell a checked ICRC */
	EXPECT_LT(0, d.trusted);

	/* a took only b's answers, all from b's address; it is still RTS */
	ASSERT_EQ(0, snap_take(self->st1, &a1));
	for (size_t i = 0; i < sizeof(early_drops) / sizeof(early_drops[0]); i++) {
		EXPECT_EQ(snap_get(&a0, early_drops[i]), snap_get(&a1, early_drops[i])) {
			TH_LOG("sc-w1's %s", early_drops[i]);
		}
	}
	EXPECT_EQ(snap_get(&a0, "drop_address"), snap_get(&a1, "drop_address"));
	EXPECT_EQ(IBV_QPS_RTS, d_state(self->qa));

	/* and the pair still works: a SEND, a WRITE into W, a READ of R */
	ASSERT_EQ(0, d_connect(self->qb, self->gidb, PEER, self->qa->qp_num, D_A_PSN,
			       D_B_PSN, D_ALL));
	{
		struct ibv_sge rs = { .addr = (uintptr_t)self->b + D_V, .length = D_SLOT,
				      .lkey = self->mv->lkey };
		struct ibv_recv_wr rw = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 }, *badr;
		struct ibv_sge ss[3] = {
			{ .addr = (uintptr_t)self->a, .length = 300, .lkey = self->ma->lkey },
			{ .addr = (uintptr_t)self->a + 512, .length = 100, .lkey = self->ma->lkey },
			{ .addr = (uintptr_t)self->a + 4096, .length = 600, .lkey = self->ma->lkey },
		};
		struct ibv_send_wr sw[3] = {
			{ .wr_id = 1, .sg_list = &ss[0], .num_sge = 1, .opcode = IBV_WR_SEND,
			  .send_flags = IBV_SEND_SIGNALED },
			{ .wr_id = 2, .sg_list = &ss[1], .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			  .send_flags = IBV_SEND_SIGNALED,
			  .wr.rdma = { .remote_addr = (uintptr_t)self->b + D_W + 8,
				       .rkey = self->mw->rkey } },
			{ .wr_id = 3, .sg_list = &ss[2], .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
			  .send_flags = IBV_SEND_SIGNALED,
			  .wr.rdma = { .remote_addr = (uintptr_t)self->b + D_R + 16,
				       .rkey = self->mr->rkey } },
		}, *bads;

		ASSERT_EQ(0, ibv_post_recv(self->qb, &rw, &badr));
		sw[0].next = &sw[1];
		sw[1].next = &sw[2];
		ASSERT_EQ(0, ibv_post_send(self->qa, &sw[0], &bads));
		ASSERT_EQ(3, poll_cq_until(self->sa, wc, 3, WAIT_MS));
		for (int i = 0; i < 3; i++) {
			EXPECT_EQ(i + 1, wc[i].wr_id);
			EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("%s",
				ibv_wc_status_str(wc[i].status));
		}
		ASSERT_EQ(1, poll_cq_until(self->rb, wc, 1, WAIT_MS));
		EXPECT_EQ(7, wc[0].wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
		EXPECT_EQ(300, wc[0].byte_len);
		EXPECT_EQ(0, memcmp(self->b + D_V, self->a, 300));
		EXPECT_EQ(0, memcmp(self->b + D_W + 8, self->a + 512, 100));
		EXPECT_EQ(0, memcmp(self->a + 4096, self->orig_b + D_R + 16, 600));
	}
	EXPECT_EQ(IBV_QPS_RTS, d_state(self->qa));
	EXPECT_EQ(IBV_QPS_RTS, d_state(self->qb));
}

TEST_HARNESS_MAIN
