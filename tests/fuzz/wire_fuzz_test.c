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
 * answer (its tx_*); at the end the connection is still established on
 * both sides, neither side got an event for it, and it still disconnects
 * cleanly.  The debug kernel must stay silent throughout.
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

static const char *const setup_cmds =
	"set -e\n"
	"for n in sc-w1 sc-w2; do ip netns del $n 2>/dev/null || true; done\n"
	"for n in sc-w1 sc-w2; do ip netns add $n; ip -n $n link set lo up; done\n"
	"ip link add w1 netns sc-w1 type veth peer name w2 netns sc-w2\n"
	"ip -n sc-w1 addr add 10.84.0.1/24 dev w1\n"
	"ip -n sc-w2 addr add 10.84.0.2/24 dev w2\n"
	"ip -n sc-w1 link set w1 up\n"
	"ip -n sc-w2 link set w2 up\n";

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
	uint8_t rtu[MAD_SIZE];

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
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	ASSERT_EQ(0, wire_sniff(pfd, 0x10, self->req, WAIT_MS));
	ASSERT_EQ(0, wire_sniff(pfd, 0x14, rtu, WAIT_MS));
	close(pfd);
	self->aid = get32(rtu + 24);
	self->pid = get32(rtu + 28);
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

	end = topo_now_ms() + seconds * 1000;
	while (topo_now_ms() < end) {
		long deadline;

		for (int i = 0; i < BURST; i++) {
			craft(&r, &w, self->aid, self->pid, &keep);
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

/*
 * A flood of valid REQs, each a new connection (its own comm ID, CA GUID
 * and QPN) from a host that never completes it: the listener's backlog
 * (8) bounds what the kernel holds; the rest are dropped and counted.
 */
TEST_F(wire, req_flood_is_bounded_by_backlog)
{
	const int n = 200, backlog = 8;
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

	for (int i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "10.84.0.%d", 3 + i % 250);
		wire_init(&w, src, TARGET, 0x10);
		memcpy(wire_mad(&w), self->req, MAD_SIZE);
		put32(wire_mad(&w) + 24, 0x5000 + i);		/* local comm ID */
		put32(wire_mad(&w) + 44, 0x7000 + i);		/* CA GUID, low half */
		put32(wire_mad(&w) + 56, (0x100 + i) << 8);	/* QPN */
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
	EXPECT_GE(backlog, got);
	EXPECT_EQ(n - got, stats_get(self->st2, "drop_backlog") - base_drop);
	/* what the kernel holds: the connection, and the requests it took */
	EXPECT_GE(1 + backlog, stats_get(self->st2, "connections"));
}

TEST_HARNESS_MAIN
