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
 * SOFTCM_FUZZ_SECONDS (10 s, 30 s on the debug kernel) and
 * SOFTCM_FUZZ_SEED as for ioctl_fuzz_test: from the environment or from
 * build/tests/lib/fuzz.env.
 */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "rng.h"
#include "ioctl_helpers.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "wire_helpers.h"
#include "wire_oracle.h"

static const char *const setup_cmds =
	"set -e\n"
	"for n in sc-w1 sc-w2; do ip netns del $n 2>/dev/null || true; done\n"
	"for n in sc-w1 sc-w2; do ip netns add $n; ip -n $n link set lo up; done\n"
	"ip link add w1 netns sc-w1 type veth peer name w2 netns sc-w2\n"
	"ip -n sc-w1 addr add 10.84.0.1/24 dev w1\n"
	"ip -n sc-w2 addr add 10.84.0.2/24 dev w2\n"
	"ip -n sc-w1 link set w1 up\n"
	"ip -n sc-w2 link set w2 up\n"
	/* a local address of sc-w2 that is not on the veth */
	"ip -n sc-w2 addr add 10.84.9.2/32 dev lo\n";

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
	ASSERT_EQ(0, system(setup_cmds));
	self->home = netns_self();
	ASSERT_LE(0, self->home);
	self->ns1 = netns_open("sc-w1");
	self->ns2 = netns_open("sc-w2");
	ASSERT_LE(0, self->ns1);
	ASSERT_LE(0, self->ns2);
	for (int n = 0; n < 2; n++) {
		int ns = n ? self->ns2 : self->ns1;

		/* the fuzz's half-open requests time out within the run */
		ASSERT_EQ(0, netns_softcm_sysctl(ns, self->home, "cm_response_timeout",
						 12 + shift));
		ASSERT_EQ(0, netns_softcm_sysctl(ns, self->home, "packet_life_time",
						 10 + shift));
		ASSERT_EQ(0, netns_softcm_sysctl(ns, self->home, "mra_timeout", 12 + shift));
		ASSERT_EQ(0, netns_softcm_sysctl(ns, self->home, "cm_retries", 2));
	}
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
	system("ip netns del sc-w1; ip netns del sc-w2");
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
	long seconds = env_long("SOFTCM_FUZZ_SECONDS", softcm_slow_shift() ? 30 : 10);
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

/* Both sides settled and compared; how many counters are wrong. */
static int case_end(struct side *to, struct side *other, char *why, size_t size)
{
	char one[512];
	int bad;

	why[0] = '\0';
	if (settle(to) || settle(other)) {
		snprintf(why, size, "a sentinel was not counted");
		return 1;
	}
	snap_take(to->st, &to->b);
	snap_take(other->st, &other->b);
	bad = expect_check(&to->e, &to->a, &to->b, one, sizeof(one));
	if (bad)
		snprintf(why, size, "here:%s", one);
	if (expect_check(&other->e, &other->a, &other->b, one, sizeof(one))) {
		bad++;
		snprintf(why + strlen(why), size - strlen(why), " there:%s", one);
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
	long seconds = env_long("SOFTCM_FUZZ_SECONDS", softcm_slow_shift() ? 30 : 10);
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
		enum req_kind kind = below(&r, K_COUNT);
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
	P_REQ, P_RTU, P_REP, P_MRA, P_REJ, P_DREP, P_DREQ_QPN, P_THEIR_ID, P_OUR_ID,
	/* to sc-w1, the active side, from 10.84.0.2 */
	A_REP, A_RTU, A_MRA, A_REJ, A_DREP, A_DREQ_QPN, A_REQ,
	R_COUNT
};

static const char *const replay_names[R_COUNT] = {
	"REQ to passive", "RTU to passive", "REP to passive", "MRA to passive",
	"REJ to passive", "DREP to passive", "DREQ (other QPN) to passive",
	"their comm ID wrong", "our comm ID wrong",
	"REP to active", "RTU to active", "MRA to active", "REJ to active",
	"DREP to active", "DREQ (other QPN) to active", "REQ to active",
};

/*
 * One replayed message of the connection's, as @kind says; @to and @other
 * get what they must count.  The connection is established throughout:
 * a duplicate REQ, REP or RTU is counted as such (a REP is answered by
 * the RTU, as the Linux CM's cm_dup_rep_handler() does, on either side);
 * an MRA, REJ or DREP is stale; a DREQ that names another QP, or any
 * message with a comm ID that is not the connection's, is not for it.
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
	case P_REJ:
	case A_REJ:
		if (kind == P_REJ)
			conn_msg(r, w, PEER, TARGET, 0x12, a, p);
		else
			conn_msg(r, w, TARGET, PEER, 0x12, p, a);
		i = rej_fields(r, wire_mad(w));
		expect_add(&(*to)->e, "rx_rej", 1);
		expect_add(&(*to)->e, rej_reason(false, i), 1);
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
 * The connection's own messages (REQ, REP, RTU, MRA, REJ, DREP, DREQ with
 * its comm IDs, learnt from its packets), sent from the real peer's
 * address to either side, in a random order, each checked alone; then the
 * peer's DREQ, which must end the connection on the passive side.
 */
TEST_F_TIMEOUT(wire, replayed_connection_messages, 600)
{
	long seconds = env_long("SOFTCM_FUZZ_SECONDS", softcm_slow_shift() ? 30 : 10);
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

TEST_HARNESS_MAIN
