// SPDX-License-Identifier: GPL-2.0
/*
 * What a peer may decide and what it may not (review A3, A7, A12, B2,
 * B10): the peer's packets are crafted here, in a namespace where softcm
 * never runs, and sent to a softcm namespace that listens or connects:
 *
 *   +-- sc-t1 (raw peer) -+         +-- sc-t2 (softcm) --+
 *   | t1 10.83.0.1        |--veth---| t2 10.83.0.2       |
 *   |  raw IP socket,     |         |  the test's file,  |
 *   |  packet socket      |         |  counters          |
 *   +---------------------+         +--------------------+
 *
 * sc-t1 never opens softcm's port, so softcm's answers to it are seen on
 * the packet socket and otherwise only draw ICMP port unreachables.
 * sc-t2 runs fast CM timers (sysctls, 8 times as long on the debug
 * kernel); no test sleeps to synchronise, each waits for what it expects
 * with a generous bound, and every fixture ends when sc-t2 holds nothing
 * of softcm's any more.
 */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "ioctl_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "wire_helpers.h"

#define WAIT_MS	20000
#define PEER	"10.83.0.1"
#define HOST	"10.83.0.2"
#define BCAST	"10.83.0.255"

/* CM attributes and the REJ reason of a refused request. */
#define REQ		0x10
#define MRA		0x11
#define REJ		0x12
#define REP		0x13
#define RTU		0x14
#define SIDR_REQ	0x17
#define SIDR_REP	0x18
#define REJ_CONSUMER	28
#define SIDR_REJECT	2

TOPO_NAMESPACES("sc-t1 sc-t2")

/* Made once per program, over rtnetlink (netlink_helpers.h says why). */
static const struct topo_end end1 = { "sc-t1", "t1", { "10.83.0.1/24 brd" } };
static const struct topo_end end2 = { "sc-t2", "t2", { "10.83.0.2/24 brd" } };

/* sc-t2's fast timers: responses and MRAs of 64 ms, 3 retries. */
static const struct softcm_timers fast = { .response = 14, .life = 10, .mra = 14, .retries = 3 };

FIXTURE(trust) {
	int home;
	int t1, t2;	/* the namespaces */
	int raw;	/* raw IP socket in sc-t1 */
	int pfd;	/* packet socket on t1 */
	int p;		/* softcm file in sc-t2 */
	int st;		/* sc-t2's softcm_stats */
};

FIXTURE_SETUP(trust)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int one = 1;

	ASSERT_EQ(0, softcm_ensure_loaded());
	if (access("/run/netns/sc-t1", F_OK)) {
		ASSERT_EQ(0, topo_pair(&end1, &end2));
		ASSERT_EQ(0, netns_set_timers_named("sc-t2", &fast));
	}
	self->home = netns_self();
	ASSERT_LE(0, self->home);
	self->t1 = netns_open("sc-t1");
	ASSERT_LE(0, self->t1);
	self->t2 = netns_open("sc-t2");
	ASSERT_LE(0, self->t2);

	ASSERT_EQ(0, netns_enter(self->t1));
	self->raw = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	ASSERT_LE(0, self->raw);
	ASSERT_EQ(0, setsockopt(self->raw, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)));
	ASSERT_EQ(0, setsockopt(self->raw, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)));
	self->pfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	ASSERT_LE(0, self->pfd);
	sll.sll_ifindex = if_nametoindex("t1");
	ASSERT_EQ(0, bind(self->pfd, (struct sockaddr *)&sll, sizeof(sll)));

	ASSERT_EQ(0, netns_enter(self->t2));
	self->p = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->p);
	self->st = stats_open(self->t2, self->t2);
	ASSERT_LE(0, self->st);
	/* the test runs in sc-t2: ids resolve and connect from there */
}

FIXTURE_TEARDOWN(trust)
{
	close(self->p);
	EXPECT_EQ(0, stats_wait_idle(self->st, WAIT_MS));
	close(self->st);
	close(self->pfd);
	close(self->raw);
	netns_enter(self->home);
	close(self->t1);
	close(self->t2);
	close(self->home);
}

/*
 * A counter of sc-t2, 0 for a REJ reason never seen (those lines appear
 * with their first REJ); STATS_MISSING for any other name it lacks.
 */
static long long counter(int st, const char *name)
{
	long long v = stats_get(st, name);

	return v == STATS_MISSING && strstr(name, "_rej_reason_") ? 0 : v;
}

static void set_sa(struct sockaddr_storage *ss, const char *ip, int port)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	inet_pton(AF_INET, ip, &s4->sin_addr);
}

static int do_listen(int fd, __u16 ps, const char *ip, int port, int backlog, __u32 *h)
{
	struct softcm_bind b = { 0 };
	struct softcm_listen l = { 0 };
	struct sockaddr_storage ss;
	int ret = create_id(fd, ps, 0x1000 + port, h);

	if (ret)
		return ret;
	set_sa(&ss, ip, port);
	b.handle = *h;
	b.addr_len = sizeof(struct sockaddr_in);
	memcpy(b.addr, &ss, b.addr_len);
	if (ioctl(fd, SOFTCM_IOCTL_BIND, &b))
		return -errno;
	l.handle = *h;
	l.backlog = backlog;
	return ioctl(fd, SOFTCM_IOCTL_LISTEN, &l) ? -errno : 0;
}

static int accept_id(int fd, __u32 h, __u32 qpn)
{
	struct softcm_accept c = { .uid = 7, .handle = h };

	c.param.qp_num = qpn;
	return ioctl(fd, SOFTCM_IOCTL_ACCEPT, &c) ? -errno : 0;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, (uint32_t)v);
}

static void put_v4(uint8_t *field, const char *ip)
{
	memset(field, 0, 16);
	inet_pton(AF_INET, ip, field + 12);
}

/* rdma_cm's header at @pdata: IPv4, @hsrc:@sport -> @hdst. */
static void put_cma_hdr(uint8_t *pdata, const char *hsrc, int sport, const char *hdst)
{
	pdata[0] = 0;
	pdata[1] = 4 << 4;
	pdata[2] = sport >> 8;
	pdata[3] = sport;
	put_v4(pdata + 4, hsrc);
	put_v4(pdata + 20, hdst);
}

/* The peer's times and options of a REQ, as the fields hold them. */
struct req_opts {
	uint8_t local_cm_timeout;
	uint8_t local_ack_timeout;
	uint8_t max_cm_retries;
	uint8_t traffic_class;
};

/*
 * A REQ for RDMA_PS_TCP port @dport, sent from @ipsrc to @ipdst, whose
 * rdma_cm header says @hsrc:5555 -> @hdst; comm ID @comm.
 */
static void build_req(struct wire *w, const char *ipsrc, const char *ipdst,
		      const char *hsrc, const char *hdst, int dport, uint32_t comm,
		      const struct req_opts *o)
{
	uint8_t *mad;

	wire_init(w, ipsrc, ipdst, REQ);
	mad = wire_mad(w);
	put32(mad + 24, comm);
	put64(mad + 32, (uint64_t)SOFTCM_PS_TCP << 16 | dport);
	put64(mad + 40, 0x0083008300830083ULL);		/* the peer's CA GUID */
	put32(mad + 56, 0x000077 << 8 | 4);		/* QPN, responder resources */
	mad[63] = 4;					/* initiator depth */
	mad[67] = 20 << 3;				/* remote CM timeout, RC */
	put32(mad + 68, 0x1234 << 8 | o->local_cm_timeout << 3 | 7);
	mad[72] = mad[73] = 0xff;			/* P_Key */
	mad[74] = 3 << 4 | 7;				/* MTU 1024, RNR retries */
	mad[75] = o->max_cm_retries << 4;
	mad[116] = o->traffic_class;
	mad[117] = 64;					/* hop limit */
	mad[119] = o->local_ack_timeout << 3;
	put_cma_hdr(mad + 164, hsrc, 5555, hdst);
}

static const struct req_opts plain = {
	.local_cm_timeout = 16, .local_ack_timeout = 10, .max_cm_retries = 3,
};

static void build_sidr_req(struct wire *w, const char *hsrc, const char *hdst,
			   int dport, uint32_t reqid)
{
	uint8_t *mad;

	wire_init(w, PEER, HOST, SIDR_REQ);
	mad = wire_mad(w);
	put32(mad + 24, reqid);
	mad[28] = mad[29] = 0xff;			/* P_Key */
	put64(mad + 32, (uint64_t)SOFTCM_PS_UDP << 16 | dport);
	put_cma_hdr(mad + 40, hsrc, 5555, hdst);
}

/*
 * The next CM MAD of attribute @attr seen on t1 whose 32-bit field at
 * @off is @val, whole frame in @frame (Ethernet on); 0 or -ETIME.
 */
static int sniff_frame(int pfd, uint8_t attr, int off, uint32_t val, uint8_t *frame)
{
	long end = topo_now_ms() + WAIT_MS;

	while (topo_now_ms() < end) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		const uint8_t *mad = frame + 14 + 28 + MAD_OFF;
		ssize_t len;

		if (poll(&p, 1, 100) <= 0)
			continue;
		len = recv(pfd, frame, 512, 0);
		if (len < 14 + 28 + ROCE_LEN || frame[12] != 0x08 || frame[13] != 0x00)
			continue;
		if (mad[1] == 7 && mad[17] == attr && get32(mad + off) == val)
			return 0;
	}
	return -ETIME;
}

static int sniff(int pfd, uint8_t attr, int off, uint32_t val, uint8_t *mad)
{
	uint8_t frame[512];
	int ret = sniff_frame(pfd, attr, off, val, frame);

	if (!ret)
		memcpy(mad, frame + 14 + 28 + MAD_OFF, 256);
	return ret;
}

/*
 * Send REQ @w (comm ID @comm) and expect REJ 28 for it, bad_address
 * counted once and no CONNECT_REQUEST on @fd.
 */
static void expect_refused(struct __test_metadata *_metadata, FIXTURE_DATA(trust) *self,
			   struct wire *w, uint32_t comm)
{
	long long bad = counter(self->st, "bad_address");
	struct softcm_event ev;
	uint8_t mad[256];

	ASSERT_EQ(0, wire_send_on(self->raw, w, false));
	ASSERT_EQ(0, sniff(self->pfd, REJ, 28, comm, mad));
	EXPECT_EQ(REJ_CONSUMER, mad[34] << 8 | mad[35]);
	EXPECT_EQ(0, stats_wait_eq(self->st, "bad_address", bad + 1, WAIT_MS));
	/* the REJ left after the decision: an event would be queued by now */
	EXPECT_EQ(-ETIME, next_event(self->p, &ev, 200));
}

/*
 * A listener on 127.0.0.1 is out of the network's reach: a REQ that
 * arrives on t2 but whose rdma_cm header names 127.0.0.1 is refused.
 */
TEST_F(trust, loopback_header_from_the_network_is_refused)
{
	struct wire w;
	__u32 l;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "127.0.0.1", 7101, 0, &l));
	build_req(&w, PEER, HOST, PEER, "127.0.0.1", 7101, 0x1001, &plain);
	expect_refused(_metadata, self, &w, 0x1001);
}

/* The header's source must be the packet's: no peer address made up. */
TEST_F(trust, header_source_not_the_sender_is_refused)
{
	struct wire w;
	__u32 l;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7102, 0, &l));
	build_req(&w, PEER, HOST, "10.83.0.77", HOST, 7102, 0x1002, &plain);
	expect_refused(_metadata, self, &w, 0x1002);
	/* and a header naming another of our addresses than the packet's */
	build_req(&w, PEER, HOST, PEER, "127.0.0.1", 7102, 0x1003, &plain);
	expect_refused(_metadata, self, &w, 0x1003);
}

/* The same for SIDR: the answer is a SIDR_REP with status REJECT. */
TEST_F(trust, sidr_header_must_match_the_packet)
{
	static const char *const bad[][2] = {
		{ PEER, "127.0.0.1" },		/* to a loopback listener */
		{ "10.83.0.77", HOST },		/* from somebody else */
	};
	struct softcm_event ev;
	uint8_t mad[256];
	struct wire w;
	__u32 l, m;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_UDP, "127.0.0.1", 7103, 0, &l));
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_UDP, "0.0.0.0", 7104, 0, &m));
	for (int i = 0; i < 2; i++) {
		long long before = counter(self->st, "bad_address");
		uint32_t reqid = 0x2001 + i;

		build_sidr_req(&w, bad[i][0], bad[i][1], 7103 + i, reqid);
		ASSERT_EQ(0, wire_send_on(self->raw, &w, false));
		ASSERT_EQ(0, sniff(self->pfd, SIDR_REP, 24, reqid, mad));
		EXPECT_EQ(SIDR_REJECT, mad[28]);
		EXPECT_EQ(0, stats_wait_eq(self->st, "bad_address", before + 1, WAIT_MS));
		EXPECT_EQ(-ETIME, next_event(self->p, &ev, 200));
	}
	/* one that tells the truth is the listener's */
	build_sidr_req(&w, PEER, HOST, 7104, 0x2003);
	ASSERT_EQ(0, wire_send_on(self->raw, &w, false));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	EXPECT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
}

/*
 * A REQ whose header tells the truth still connects, and the peer the
 * application sees is where the packets come from (with rdma_cm's port).
 */
TEST_F(trust, matching_request_reports_the_packet_source)
{
	long long bad = counter(self->st, "bad_address");
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct softcm_event ev;
	__u32 l, len = sizeof(ss);
	struct wire w;

	ASSERT_COUNTER(self->st, "bad_address");
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, HOST, 7105, 0, &l));
	build_req(&w, PEER, HOST, PEER, HOST, 7105, 0x1005, &plain);
	ASSERT_EQ(0, wire_send_on(self->raw, &w, false));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	ASSERT_EQ(0, query_addr(self->p, ev.handle, SOFTCM_QUERY_PEER, &ss, &len));
	EXPECT_EQ(AF_INET, sin->sin_family);
	EXPECT_EQ(htonl(0x0a530001), sin->sin_addr.s_addr);
	EXPECT_EQ(5555, ntohs(sin->sin_port));
	EXPECT_EQ(bad, counter(self->st, "bad_address"));
}

/*
 * A request to the subnet's broadcast address (review B2) is dropped
 * before the CM sees it, and counted; it would otherwise create an id on
 * every host of the link.
 */
TEST_F(trust, broadcast_request_is_dropped)
{
	long long bad = counter(self->st, "bad_address"), rx = counter(self->st, "rx_req");
	struct softcm_event ev;
	struct wire w;
	__u32 l;

	ASSERT_COUNTER(self->st, "bad_address");
	ASSERT_COUNTER(self->st, "rx_req");
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, "0.0.0.0", 7106, 0, &l));
	build_req(&w, PEER, BCAST, PEER, HOST, 7106, 0x1006, &plain);
	ASSERT_EQ(0, wire_send_on(self->raw, &w, false));
	EXPECT_EQ(0, stats_wait_eq(self->st, "bad_address", bad + 1, WAIT_MS));
	EXPECT_EQ(rx, counter(self->st, "rx_req"));
	EXPECT_EQ(-ETIME, next_event(self->p, &ev, 200));
}

static long long read_ll(const char *path)
{
	char buf[64];

	return read_text(path, buf, sizeof(buf)) > 0 ? atoll(buf) : -1;
}

#define MEMCG "/sys/fs/cgroup/softcm-trust"

/*
 * What a peer's requests cost (the new ids, their CONNECT_REQUESTs) is
 * charged to the listener's memory cgroup, not to nobody (review A7):
 * the listening process's cgroup grows with the requests it holds.
 */
TEST_F(trust, peer_requests_are_charged_to_the_listener_memcg)
{
	/*
	 * memory.current moves by the per-CPU charge batch (64 pages): the
	 * requests must cost several batches to tell charged from not.
	 */
	const int n = 1000, local = 4000;
	int status, up[2], down[2];
	long long delta = -1, per_id = -1;
	pid_t pid;
	char go = 1;

	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK))
		system("mount -t cgroup2 none /sys/fs/cgroup");
	if (write_text("/sys/fs/cgroup/cgroup.subtree_control", "+memory") ||
	    (mkdir(MEMCG, 0755) && errno != EEXIST))
		SKIP(return, "no cgroup v2 memory controller");
	ASSERT_EQ(0, write_text(MEMCG "/memory.max", "64M"));
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		long long before, after;
		char me[32];
		__u32 l;
		int fd;

		snprintf(me, sizeof(me), "%d", getpid());
		if (write_text(MEMCG "/cgroup.procs", me))
			_exit(1);
		fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);	/* in sc-t2 */
		if (fd < 0)
			_exit(2);
		/*
		 * What an id costs this kernel (its slab sizes, its debug
		 * options), from ids of our own, charged to us as any are
		 */
		before = read_ll(MEMCG "/memory.current");
		for (int i = 0; i < local; i++)
			if (create_id(fd, SOFTCM_PS_TCP, 0x9000 + i, &l))
				_exit(2);
		after = (read_ll(MEMCG "/memory.current") - before) / local;
		if (write(up[1], &after, sizeof(after)) != sizeof(after) ||
		    do_listen(fd, SOFTCM_PS_TCP, HOST, 7107, n, &l))
			_exit(2);
		before = read_ll(MEMCG "/memory.current");
		if (write(up[1], &before, sizeof(before)) != sizeof(before) ||
		    read(down[0], &go, 1) != 1)
			_exit(3);
		after = read_ll(MEMCG "/memory.current");
		after -= before;
		if (write(up[1], &after, sizeof(after)) != sizeof(after))
			_exit(4);
		close(fd);
		_exit(0);
	}
	ASSERT_EQ(sizeof(per_id), read(up[0], &per_id, sizeof(per_id)));
	ASSERT_EQ(sizeof(delta), read(up[0], &delta, sizeof(delta)));
	for (int i = 0; i < n; i++) {
		struct wire w;

		build_req(&w, PEER, HOST, PEER, HOST, 7107, 0x30000 + i, &plain);
		ASSERT_EQ(0, wire_send_on(self->raw, &w, false));
	}
	/* every request holds a connection (its comm ID) until read */
	EXPECT_EQ(0, stats_wait_eq(self->st, "connections", n, WAIT_MS));
	ASSERT_EQ(1, write(down[1], &go, 1));
	ASSERT_EQ(sizeof(delta), read(up[0], &delta, sizeof(delta)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	TH_LOG("%d requests: memory.current +%lld bytes; an id of our own %lld", n, delta,
	       per_id);
	/*
	 * A request is an id, its event and its comm ID's entry: at least
	 * what an id of our own costs this kernel (measured above, not a
	 * figure of one kernel's slab sizes), of which three quarters are
	 * asked, for the batches' rounding.  Charged to nobody, the delta
	 * is at most a batch or two of the child's own.
	 */
	ASSERT_LT(256, per_id) TH_LOG("ids of our own not charged: nothing to compare");
	EXPECT_LE(per_id * 3 / 4 * n, delta);
	EXPECT_EQ(0, stats_wait_eq(self->st, "connections", 0, WAIT_MS));
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	rmdir(MEMCG);
}

/*
 * A REQ from sc-t1 with @o, accepted in sc-t2: returns the new id's
 * handle and our comm ID (from the REP), for the test to go on with.
 */
static void accepted(struct __test_metadata *_metadata, FIXTURE_DATA(trust) *self,
		     int port, uint32_t comm, const struct req_opts *o,
		     __u32 *h, uint32_t *ours, uint8_t *rep_frame)
{
	struct softcm_event ev;
	struct wire w;

	build_req(&w, PEER, HOST, PEER, HOST, port, comm, o);
	ASSERT_EQ(0, wire_send_on(self->raw, &w, false));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, ev.event);
	*h = ev.handle;
	ASSERT_EQ(0, accept_id(self->p, *h, 0x99));
	ASSERT_EQ(0, sniff_frame(self->pfd, REP, 28, comm, rep_frame));
	*ours = get32(rep_frame + 14 + 28 + MAD_OFF + 24);
}

/*
 * Timewait lasts what the peer's REQ implies, but no longer than the
 * max_timewait sysctl (review A7): with a local ACK timeout of 31 it
 * would be 2.3 hours, and the connection ends within seconds.
 */
TEST_F(trust, peer_timewait_is_capped)
{
	struct req_opts o = plain;
	uint8_t frame[512];
	struct softcm_event ev;
	uint32_t ours = 0;
	struct wire w;
	__u32 l, h = 0;

	ASSERT_EQ(0, netns_softcm_sysctl(self->t2, self->t2, "max_timewait",
					 12 + softcm_slow_shift()));
	o.local_ack_timeout = 31;
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, HOST, 7108, 0, &l));
	accepted(_metadata, self, 7108, 0x1008, &o, &h, &ours, frame);
	wire_init(&w, PEER, HOST, RTU);
	put32(wire_mad(&w) + 24, 0x1008);
	put32(wire_mad(&w) + 28, ours);
	ASSERT_EQ(0, wire_send_on(self->raw, &w, false));
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, ev.event);
	ASSERT_EQ(1, counter(self->st, "connections"));
	/* one DREQ, then timewait */
	ASSERT_EQ(0, destroy_id(self->p, h, NULL));
	EXPECT_EQ(0, stats_wait_eq(self->st, "connections", 0, WAIT_MS));
	netns_softcm_sysctl(self->t2, self->t2, "max_timewait", 24);
}

/*
 * The REP's retransmission interval is the peer's CM response time, but
 * no longer than max_peer_timeout (review A7): with 31 (2.3 hours) the
 * REP is still retransmitted max_cm_retries times and gives up.
 */
TEST_F(trust, peer_response_timeout_is_capped)
{
	long long rtx = counter(self->st, "retransmits"), tmo = counter(self->st, "timeouts");
	struct req_opts o = plain;
	struct softcm_event ev;
	uint8_t frame[512];
	uint32_t ours = 0;
	__u32 l, h = 0;

	ASSERT_EQ(0, netns_softcm_sysctl(self->t2, self->t2, "max_peer_timeout",
					 12 + softcm_slow_shift()));
	o.local_cm_timeout = 31;
	o.max_cm_retries = 2;
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, HOST, 7109, 0, &l));
	accepted(_metadata, self, 7109, 0x1009, &o, &h, &ours, frame);
	ASSERT_EQ(0, next_event(self->p, &ev, WAIT_MS));
	EXPECT_EQ(SOFTCM_EVENT_UNREACHABLE, ev.event);
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(rtx + 2, counter(self->st, "retransmits"));
	EXPECT_EQ(tmo + 1, counter(self->st, "timeouts"));
	netns_softcm_sysctl(self->t2, self->t2, "max_peer_timeout", 24);
}

/* The peer's traffic class is our TOS, but not its ECN bits (review B10). */
TEST_F(trust, peer_traffic_class_leaves_ecn_alone)
{
	struct req_opts o = plain;
	uint8_t frame[512];
	uint32_t ours = 0;
	__u32 l, h = 0;

	o.traffic_class = 0x20 | 0x03;			/* CS1, ECN CE */
	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, HOST, 7110, 0, &l));
	accepted(_metadata, self, 7110, 0x1010, &o, &h, &ours, frame);
	EXPECT_EQ(0x20, frame[14 + 1]);
}

/*
 * Only the first MRA delays a REQ (review A12): a peer that keeps
 * sending MRAs faster than the delay it asks for cannot hold the REQ
 * past its retries; the request still times out.
 */
/*
 * One try of repeated_mras_do_not_hold_a_request: a REQ from a new id,
 * answered with an MRA every 20 ms or so until the id gives up or @until
 * passes.  0 with the event that ended it in @ev, or -ETIME; *@gap: the
 * longest time between two MRAs.
 */
static int mras_until_given_up(struct __test_metadata *_metadata, FIXTURE_DATA(trust) *self,
			       long until, struct softcm_event *ev, long *gap)
{
	struct softcm_resolve_route rr = { .timeout_ms = 5000 };
	struct softcm_resolve_addr r = { .timeout_ms = 5000 };
	struct softcm_connect c = { 0 };
	struct sockaddr_storage ss;
	uint32_t comm;
	uint8_t mad[256];
	struct wire w;
	long last, now;
	__u32 a;
	int got = -ETIME;

	*gap = 0;
	if (create_id(self->p, SOFTCM_PS_TCP, 5, &a))
		return -EIO;
	set_sa(&ss, PEER, 7111);
	r.handle = a;
	r.dst_len = sizeof(struct sockaddr_in);
	memcpy(r.dst, &ss, r.dst_len);
	EXPECT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_RESOLVE_ADDR, &r));
	EXPECT_EQ(0, next_event(self->p, ev, WAIT_MS));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev->event);
	rr.handle = a;
	EXPECT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_RESOLVE_ROUTE, &rr));
	EXPECT_EQ(0, next_event(self->p, ev, WAIT_MS));
	EXPECT_EQ(SOFTCM_EVENT_ROUTE_RESOLVED, ev->event);
	c.handle = a;
	c.param.qp_num = 0x42;
	/* an earlier try's retransmitted REQs are not this one */
	while (recv(self->pfd, mad, sizeof(mad), MSG_DONTWAIT) >= 0)
		;
	EXPECT_EQ(0, ioctl(self->p, SOFTCM_IOCTL_CONNECT, &c));
	EXPECT_EQ(0, sniff(self->pfd, REQ, 36, SOFTCM_PS_TCP << 16 | 7111, mad));
	if (!_metadata->passed)
		return -EIO;
	comm = get32(mad + 24);

	wire_init(&w, PEER, HOST, MRA);
	put32(wire_mad(&w) + 24, 0x5151);
	put32(wire_mad(&w) + 28, comm);
	wire_mad(&w)[32] = 0 << 6;				/* MRAed: the REQ */
	wire_mad(&w)[33] = (18 + softcm_slow_shift()) << 3;
	for (last = topo_now_ms(); got && last < until; last = now) {
		EXPECT_EQ(0, wire_send_on(self->raw, &w, false));
		got = next_event(self->p, ev, 20);
		now = topo_now_ms();
		if (now - last > *gap)
			*gap = now - last;
	}
	EXPECT_EQ(0, destroy_id(self->p, a, NULL));
	return got;
}

/*
 * A peer that repeats its MRAs does not hold our REQ forever: only the
 * first delays it (review A12).  The MRAs ask for 1 s each (8 on the
 * debug kernel) and come every 20 ms or so, so the REQ's end shows that
 * the later ones were ignored only if no two came that far apart: a
 * guest its host stopped for that long would let the REQ time out even
 * if each MRA re-armed its timer.  Such a try proves nothing and is
 * made again; three of them fail the case.
 */
TEST_F(trust, repeated_mras_do_not_hold_a_request)
{
	const long timeout_ms = (4096LL << (18 + softcm_slow_shift())) / 1000000;
	long long dup = counter(self->st, "duplicates");
	struct softcm_event ev;
	long gap = 0;
	int got = -ETIME, tries;

	for (tries = 0; tries < 3; tries++) {
		got = mras_until_given_up(_metadata, self, topo_now_ms() + 3 * WAIT_MS, &ev,
					  &gap);
		ASSERT_NE(-EIO, got);
		if (gap < timeout_ms / 2)
			break;
		TH_LOG("try %d: %ld ms between two MRAs, against their %ld ms: again",
		       tries + 1, gap, timeout_ms);
	}
	ASSERT_GT(timeout_ms / 2, gap) TH_LOG("every try had its MRAs stalled");
	ASSERT_EQ(0, got);
	EXPECT_EQ(SOFTCM_EVENT_UNREACHABLE, ev.event);
	EXPECT_LT(dup, counter(self->st, "duplicates"));
}

/*
 * An MRA must name the message it delays exactly (review A12): one for
 * "other" (LAP, type 2) while our REP waits is dropped as stale.
 */
TEST_F(trust, mra_for_another_message_type_is_dropped)
{
	long long stale;
	uint8_t frame[512];
	uint32_t ours = 0;
	struct wire w;
	__u32 l, h = 0;

	ASSERT_EQ(0, do_listen(self->p, SOFTCM_PS_TCP, HOST, 7112, 0, &l));
	accepted(_metadata, self, 7112, 0x1012, &plain, &h, &ours, frame);
	stale = counter(self->st, "drop_stale");
	wire_init(&w, PEER, HOST, MRA);
	put32(wire_mad(&w) + 24, 0x1012);
	put32(wire_mad(&w) + 28, ours);
	wire_mad(&w)[32] = 2 << 6;				/* MRAed: other */
	wire_mad(&w)[33] = 20 << 3;
	ASSERT_EQ(0, wire_send_on(self->raw, &w, false));
	EXPECT_EQ(0, stats_wait_eq(self->st, "drop_stale", stale + 1, WAIT_MS));
}

TEST_HARNESS_MAIN
