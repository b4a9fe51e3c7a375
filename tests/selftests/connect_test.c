// SPDX-License-Identifier: GPL-2.0
/*
 * Connections through the librdmacm API (linked with -lsoftcm only): the
 * IB CM over RoCEv2 between two namespaces the fixture builds once and
 * the tests share:
 *
 *   +-- sc-p1 (passive) -----+          +-- sc-p2 (active) ------+
 *   | p1 10.79.0.1/24        |--veth----| p2 10.79.0.2/24        |
 *   |    fd79::1/64          |          |    fd79::2/64          |
 *   +------------------------+          +------------------------+
 *
 * with fast CM timers in both (net.softcm.cm_response_timeout 14 = 64 ms,
 * packet_life_time 10 = 4 ms, cm_retries 5, mra_timeout 16 = 268 ms),
 * written again before every test, so a test may change them for itself.
 * Every time exponent a test sets has softcm_slow_shift() added: on the
 * debug kernel each timer is 8 times as long, the number of retries the
 * same.
 * One thread drives both sides: a channel belongs to the namespace its
 * opener was in, so the fixture opens ch1 in sc-p1 and ch2 in sc-p2 and
 * every async id lives where its channel does.  Synchronous ids open
 * their channel where the caller is: those tests fork a child that enters
 * its namespace first.  /proc/net/softcm_stats of each namespace is kept
 * open and re-read for counters.
 *
 * Covered: connect/accept/disconnect with parameters, private data and
 * addresses on both sides; timewait after DISCONNECTED; rejection with
 * private data, no listener (8), a listener that does not accept in time
 * (MRAs, then UNREACHABLE); a silent peer (retransmissions, UNREACHABLE);
 * a lost REQ, REP, RTU and DREQ (a tc u32 filter drops one message type
 * until the sender has retransmitted); duplicated packets; crossing DREQs;
 * destruction of either id in every state; a process killed
 * mid-handshake; loopback and own address; IPv6; SIDR; synchronous ids on
 * either side; private data of every length; 1000 connections (250 on the
 * debug kernel); a burst beyond a listener's backlog (held with MRAs) and
 * the hold's bound.  Every
 * test ends with the namespaces' `connections` gauges back at 0.
 *
 * The lost-message tests need sch_prio and cls_u32 (besides sch_netem)
 * in the guest.
 */
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "wire_helpers.h"
#include "softcm.h"

#define NS1	"sc-p1"		/* the passive side */
#define NS2	"sc-p2"		/* the active side */
#define IP1	"10.79.0.1"
#define IP2	"10.79.0.2"
#define IP61	"fd79::1"
#define IP62	"fd79::2"

#define EV_MS	10000		/* an event that should come promptly */
#define LONG_MS	60000		/* one that comes after timeouts */
#define IDLE_MS	30000		/* connections back to 0 */

#define PORT(n)	(19200 + (n))	/* each test its own */

/* CM attribute ids: the MAD's 16-bit field 64 bytes into an IPv4 packet. */
#define CM_REQ	0x0010
#define CM_REP	0x0013
#define CM_RTU	0x0014
#define CM_DREQ	0x0015

/* Made once per program, over rtnetlink (netlink_helpers.h says why). */
static const struct topo_end end1 = { NS1, "p1", { IP1 "/24", IP61 "/64 nodad" } };
static const struct topo_end end2 = { NS2, "p2", { IP2 "/24", IP62 "/64 nodad" } };

static const struct {
	const char *name;
	long value;
	bool time;	/* an IBTA time exponent: scaled by softcm_slow_shift() */
} fast_timers[] = {
	{ "cm_response_timeout", 14, true },
	{ "packet_life_time", 10, true },
	{ "cm_retries", 5, false },
	{ "mra_timeout", 16, true },
};

/* Set when a test put a qdisc on p1 or p2; whoever sees it removes them. */
#define QDISC_MARK "/run/softcm-connect-qdisc"

static void clear_qdiscs(void)
{
	int n1 = netns_open(NS1), n2 = netns_open(NS2);

	if (n1 >= 0) {
		qdisc_root_del(n1, "p1");
		close(n1);
	}
	if (n2 >= 0) {
		qdisc_root_del(n2, "p2");
		close(n2);
	}
	unlink(QDISC_MARK);
}

/* ---- addresses ---- */

static struct sockaddr_storage sa(const char *ip, int port)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (strchr(ip, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, ip, &s6->sin6_addr);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		inet_pton(AF_INET, ip, &s4->sin_addr);
	}
	return ss;
}

#define SA(ss) ((struct sockaddr *)&(ss))

static const char *addr_str(const struct sockaddr *a, char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)a;

		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		snprintf(buf, size, "%s:%u", ip, ntohs(s4->sin_port));
	} else if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)a;

		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, size, "[%s]:%u", ip, ntohs(s6->sin6_port));
	} else {
		snprintf(buf, size, "(family %u)", a->sa_family);
	}
	return buf;
}

/* Same family, address and port. */
static bool same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
	}
	return false;
}

#define EXPECT_ADDR(want, got) __expect_addr(_metadata, __LINE__, want, got)

static void __expect_addr(struct __test_metadata *_metadata, int line,
			  const struct sockaddr *want, const struct sockaddr *got)
{
	char a[80], b[80];

	if (!same_addr(want, got))
		TH_LOG("line %d: address %s, expected %s", line,
		       addr_str(got, b, sizeof(b)), addr_str(want, a, sizeof(a)));
	EXPECT_TRUE(same_addr(want, got));
}

/* softcm_getpeername() of @id is @want. */
#define EXPECT_PEERNAME(id, want) __expect_peername(_metadata, __LINE__, id, want)

static void __expect_peername(struct __test_metadata *_metadata, int line,
			      struct rdma_cm_id *id, const struct sockaddr *want)
{
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);
	int ret;

	memset(&got, 0, sizeof(got));
	ret = softcm_getpeername(id, SA(got), &len);
	if (ret)
		TH_LOG("line %d: softcm_getpeername: %s", line, strerror(errno));
	ASSERT_EQ(0, ret);
	EXPECT_EQ(want->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					       : sizeof(struct sockaddr_in), len);
	__expect_addr(_metadata, line, want, SA(got));
}

/*
 * No connection (not yet established, or over): softcm_getpeername() is
 * ENOTCONN, as getpeername(2) on TCP; the library's copy stays.
 */
#define EXPECT_NO_PEERNAME(id) __expect_no_peername(_metadata, __LINE__, id)

static void __expect_no_peername(struct __test_metadata *_metadata, int line,
				 struct rdma_cm_id *id)
{
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);
	int ret = softcm_getpeername(id, SA(got), &len), err = errno;

	if (ret != -1 || err != ENOTCONN)
		TH_LOG("line %d: softcm_getpeername gave %d (%s), expected ENOTCONN",
		       line, ret, ret ? strerror(err) : "a peer");
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ENOTCONN, err);
}

/* ---- events ---- */

/* An event, copied and acknowledged at once: no test holds one. */
struct ev {
	enum rdma_cm_event_type event;
	int status;
	struct rdma_cm_id *id, *listen_id;
	struct rdma_conn_param conn;	/* private_data points to pd */
	uint32_t ud_qp_num, ud_qkey;	/* UD ids */
	uint8_t pd[256];
};

/*
 * The next event of @ch within @timeout_ms: 0, -ETIME or -errno.  The
 * fixture's channels are non-blocking, so an event the library skips
 * cannot leave us blocked in read().
 */
static int next_event(struct rdma_event_channel *ch, int timeout_ms, struct ev *ev)
{
	long deadline = topo_now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *e = NULL;
	long left;
	int ret;

	for (;;) {
		left = deadline - topo_now_ms();
		ret = poll(&pfd, 1, left > 0 ? left : 0);
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret > 0) {
			if (!rdma_get_cm_event(ch, &e))
				break;
			if (errno != EAGAIN)
				return -errno;
		}
		if (left <= 0)
			return -ETIME;
	}
	memset(ev, 0, sizeof(*ev));
	ev->event = e->event;
	ev->status = e->status;
	ev->id = e->id;
	ev->listen_id = e->listen_id;
	ev->conn = e->param.conn;
	if (e->param.conn.private_data && e->param.conn.private_data_len)
		memcpy(ev->pd, e->param.conn.private_data, e->param.conn.private_data_len);
	ev->conn.private_data = ev->pd;
	if (e->id && e->id->qp_type == IBV_QPT_UD) {
		ev->ud_qp_num = e->param.ud.qp_num;
		ev->ud_qkey = e->param.ud.qkey;
	}
	rdma_ack_cm_event(e);
	return 0;
}

/* The next event of @ch must be @type, within @timeout_ms. */
#define expect_event(ch, type, timeout_ms, evp) \
	__expect_event(_metadata, __LINE__, ch, type, timeout_ms, evp)

static void __expect_event(struct __test_metadata *_metadata, int line,
			   struct rdma_event_channel *ch, enum rdma_cm_event_type type,
			   int timeout_ms, struct ev *ev)
{
	struct ev tmp;
	int ret;

	if (!ev)
		ev = &tmp;
	ret = next_event(ch, timeout_ms, ev);
	if (ret == -ETIME)
		TH_LOG("line %d: no %s within %d ms", line, rdma_event_str(type), timeout_ms);
	else if (ret)
		TH_LOG("line %d: rdma_get_cm_event: %s", line, strerror(-ret));
	ASSERT_EQ(0, ret);
	if (ev->event != type)
		TH_LOG("line %d: %s (status %d), expected %s", line,
		       rdma_event_str(ev->event), ev->status, rdma_event_str(type));
	ASSERT_EQ(type, ev->event);
}

/*
 * Nothing on @ch for @ms (scaled like the CM timers, so that the window
 * covers the same number of retransmission periods on the debug kernel:
 * 200 ms is about three REQ periods of the fast timers on either).
 */
#define expect_none(ch, ms) __expect_none(_metadata, __LINE__, ch, ms)

static void __expect_none(struct __test_metadata *_metadata, int line,
			  struct rdma_event_channel *ch, int ms)
{
	struct ev ev;
	int ret = next_event(ch, softcm_quiet_ms(ms), &ev);

	if (!ret)
		TH_LOG("line %d: unexpected %s (status %d)", line,
		       rdma_event_str(ev.event), ev.status);
	ASSERT_EQ(-ETIME, ret);
}

/* ---- private data ---- */

static void fill(uint8_t *buf, int len, int seed)
{
	int i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 29 + i * 7 + 1);
}

/* @ev carries @total bytes: @used of @want, then zeroes. */
#define CHECK_PD(ev, total, want, used) __check_pd(_metadata, __LINE__, ev, total, want, used)

static void __check_pd(struct __test_metadata *_metadata, int line, const struct ev *ev,
		       int total, const uint8_t *want, int used)
{
	int i;

	if (ev->conn.private_data_len != total)
		TH_LOG("line %d: %s with %d bytes of private data, expected %d", line,
		       rdma_event_str(ev->event), ev->conn.private_data_len, total);
	ASSERT_EQ(total, ev->conn.private_data_len);
	for (i = 0; i < used; i++)
		if (ev->pd[i] != want[i])
			break;
	if (i < used)
		TH_LOG("line %d: %s: byte %d of %d is %#x, sent %#x", line,
		       rdma_event_str(ev->event), i, used, ev->pd[i], want[i]);
	EXPECT_EQ(used, i);
	for (i = used; i < total; i++)
		if (ev->pd[i])
			break;
	if (i < total)
		TH_LOG("line %d: %s: padding byte %d is %#x", line,
		       rdma_event_str(ev->event), i, ev->pd[i]);
	EXPECT_EQ(total, i);
}

static struct rdma_conn_param conn_param(const void *pd, int len, uint32_t qp_num)
{
	struct rdma_conn_param p = {
		.private_data = len ? pd : NULL,
		.private_data_len = len,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
		.qp_num = qp_num,
	};

	return p;
}

/* ---- the fixture ---- */

FIXTURE(cm) {
	int home, ns1, ns2;
	struct rdma_event_channel *ch1;	/* opened in sc-p1 */
	struct rdma_event_channel *ch2;	/* opened in sc-p2 */
	int st1, st2;			/* their /proc/net/softcm_stats */
	pid_t child;
};

/* A non-blocking channel opened in namespace @nsfd. */
static struct rdma_event_channel *channel_in(struct __test_metadata *_metadata,
					     int nsfd, int home)
{
	struct rdma_event_channel *ch;

	ASSERT_EQ(0, netns_enter(nsfd));
	ch = rdma_create_event_channel();
	ASSERT_EQ(0, netns_enter(home));
	ASSERT_NE(NULL, ch) TH_LOG("rdma_create_event_channel: %s", strerror(errno));
	ASSERT_EQ(0, fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK));
	return ch;
}

TOPO_NAMESPACES(NS1 " " NS2)

FIXTURE_SETUP(cm)
{
	unsigned int i;
	long value;

	ASSERT_EQ(0, softcm_ensure_loaded());
	if (access("/run/netns/" NS1, F_OK) || access("/run/netns/" NS2, F_OK)) {
		/* a stale one of the pair goes first */
		ASSERT_EQ(0, topo_pair(&end1, &end2));
	}
	if (!access(QDISC_MARK, F_OK))
		clear_qdiscs();
	self->home = netns_self();
	ASSERT_LE(0, self->home);
	self->ns1 = netns_open(NS1);
	ASSERT_LE(0, self->ns1);
	self->ns2 = netns_open(NS2);
	ASSERT_LE(0, self->ns2);
	for (i = 0; i < sizeof(fast_timers) / sizeof(fast_timers[0]); i++) {
		value = fast_timers[i].value + (fast_timers[i].time ? softcm_slow_shift() : 0);
		ASSERT_EQ(0, netns_softcm_sysctl(self->ns1, self->home, fast_timers[i].name,
						 value)) TH_LOG("%s", fast_timers[i].name);
		ASSERT_EQ(0, netns_softcm_sysctl(self->ns2, self->home, fast_timers[i].name,
						 value)) TH_LOG("%s", fast_timers[i].name);
	}
	self->st1 = stats_open(self->ns1, self->home);
	ASSERT_LE(0, self->st1);
	self->st2 = stats_open(self->ns2, self->home);
	ASSERT_LE(0, self->st2);
	ASSERT_NE(STATS_MISSING, stats_get(self->st1, "connections"));
	ASSERT_NE(STATS_MISSING, stats_get(self->st2, "connections"));
	self->ch1 = channel_in(_metadata, self->ns1, self->home);
	self->ch2 = channel_in(_metadata, self->ns2, self->home);
	/* A quiet start: the last test's connections are through timewait. */
	stats_wait_eq(self->st1, "connections", 0, IDLE_MS);
	stats_wait_eq(self->st2, "connections", 0, IDLE_MS);
}

FIXTURE_TEARDOWN(cm)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (!access(QDISC_MARK, F_OK))
		clear_qdiscs();
	rdma_destroy_event_channel(self->ch1);
	rdma_destroy_event_channel(self->ch2);
	/*
	 * The test's ids and files are all closed: once timewait is over
	 * neither namespace may hold a connection, an id or a file.
	 */
	EXPECT_EQ(0, stats_wait_idle(self->st1, STATS_IDLE_MS)) TH_LOG(NS1 " not idle");
	EXPECT_EQ(0, stats_wait_idle(self->st2, STATS_IDLE_MS)) TH_LOG(NS2 " not idle");
	close(self->st1);
	close(self->st2);
	netns_enter(self->home);
	close(self->ns1);
	close(self->ns2);
	close(self->home);
}

/* Override one timer in both namespaces, for this test only. */
static void set_both(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self,
		     const char *name, long value)
{
	ASSERT_EQ(0, netns_softcm_sysctl(self->ns1, self->home, name, value));
	ASSERT_EQ(0, netns_softcm_sysctl(self->ns2, self->home, name, value));
}

/*
 * Timers slow enough for a test to change a filter while a message is
 * being retransmitted: 16 tries, 268 ms apart, 2.1 s on the debug kernel
 * (the guest may need a second to run tc, the debug kernel several).
 */
static void slow_timers(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self)
{
	set_both(_metadata, self, "cm_response_timeout", 16 + softcm_slow_shift());
	set_both(_metadata, self, "cm_retries", 15);
}

static long long stat_of(int fd, const char *name)
{
	return stats_get(fd, name);
}

#define WAIT_ABOVE(fd, name, than, ms) \
	ASSERT_EQ(0, stats_wait_above(fd, name, than, ms)) \
		TH_LOG("%s stayed at %lld", name, stat_of(fd, name))

/* Both namespaces back to no connections. */
#define wait_idle() __wait_idle(_metadata, self)

static void __wait_idle(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self)
{
	ASSERT_EQ(0, stats_wait_eq(self->st1, "connections", 0, IDLE_MS))
		TH_LOG(NS1 " still has %lld connections", stat_of(self->st1, "connections"));
	ASSERT_EQ(0, stats_wait_eq(self->st2, "connections", 0, IDLE_MS))
		TH_LOG(NS2 " still has %lld connections", stat_of(self->st2, "connections"));
}

/* A root qdisc on @dev of namespace @ns: "netem loss 100%", ... */
static void qdisc(struct __test_metadata *_metadata, const char *ns, const char *dev,
		  const char *spec)
{
	char cmd[256];

	close(open(QDISC_MARK, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	snprintf(cmd, sizeof(cmd), "tc -n %s qdisc add dev %s root %s", ns, dev, spec);
	ASSERT_EQ(0, system(cmd)) TH_LOG("%s", cmd);
}

static void unqdisc(struct __test_metadata *_metadata, const char *ns, const char *dev)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "tc -n %s qdisc del dev %s root", ns, dev);
	ASSERT_EQ(0, system(cmd)) TH_LOG("%s", cmd);
}

/*
 * Drop the CM messages with attribute id @attr that leave @dev of @ns
 * over IPv4, and only those: a u32 filter sends them to a band whose
 * netem loses everything.  IPv4 header (20) + UDP (8) + BTH (12) + DETH
 * (8) + the MAD header up to AttributeID (16) = 64.
 */
static void drop_attr(struct __test_metadata *_metadata, const char *ns, const char *dev,
		      unsigned int attr)
{
	char cmd[768];

	close(open(QDISC_MARK, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	/* one tc for the three: a program started costs most on the debug kernel */
	snprintf(cmd, sizeof(cmd),
		 "tc -n %1$s -batch - <<'EOB'\n"
		 "qdisc add dev %2$s root handle 1: prio bands 4\n"
		 "qdisc add dev %2$s parent 1:4 handle 40: netem loss 100%%\n"
		 "filter add dev %2$s parent 1: protocol ip prio 1 u32"
		 " match ip protocol 17 0xff match ip dport 4791 0xffff"
		 " match u16 0x%3$04x 0xffff at 64 flowid 1:4\n"
		 "EOB\n",
		 ns, dev, attr);
	ASSERT_EQ(0, system(cmd))
		TH_LOG("%s (the guest needs sch_prio, cls_u32 and sch_netem)", cmd);
}

/* ---- ids ---- */

static struct rdma_cm_id *listener_backlog(struct __test_metadata *_metadata,
					   struct rdma_event_channel *ch,
					   enum rdma_port_space ps, const char *ip, int port,
					   int backlog)
{
	struct sockaddr_storage ss = sa(ip, port);
	struct rdma_cm_id *id = NULL;

	ASSERT_EQ(0, rdma_create_id(ch, &id, NULL, ps));
	ASSERT_EQ(0, rdma_bind_addr(id, SA(ss)))
		TH_LOG("bind %s port %d: %s", ip, port, strerror(errno));
	ASSERT_EQ(0, rdma_listen(id, backlog)) TH_LOG("listen: %s", strerror(errno));
	return id;
}

static struct rdma_cm_id *listener(struct __test_metadata *_metadata,
				   struct rdma_event_channel *ch, enum rdma_port_space ps,
				   const char *ip, int port)
{
	return listener_backlog(_metadata, ch, ps, ip, port, 0);
}

/* An id of @ch with its address and route resolved to @ip, @port. */
static struct rdma_cm_id *client(struct __test_metadata *_metadata,
				 struct rdma_event_channel *ch, enum rdma_port_space ps,
				 const char *ip, int port)
{
	struct sockaddr_storage dst = sa(ip, port);
	struct rdma_cm_id *id = NULL;
	struct ev ev;

	ASSERT_EQ(0, rdma_create_id(ch, &id, NULL, ps));
	ASSERT_EQ(0, rdma_resolve_addr(id, NULL, SA(dst), 5000))
		TH_LOG("resolve %s: %s", ip, strerror(errno));
	expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, EV_MS, &ev);
	ASSERT_EQ(id, ev.id);
	ASSERT_EQ(0, rdma_resolve_route(id, 5000));
	expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, EV_MS, &ev);
	ASSERT_EQ(id, ev.id);
	return id;
}

/* Connect @cid to @listen and accept: ESTABLISHED on both sides. */
static struct rdma_cm_id *establish(struct __test_metadata *_metadata,
				    struct rdma_event_channel *sch,
				    struct rdma_event_channel *cch,
				    struct rdma_cm_id *listen, struct rdma_cm_id *cid)
{
	uint8_t req[8] = "request", rep[8] = "reply";
	struct rdma_conn_param p = conn_param(req, sizeof(req), 0x111);
	struct rdma_cm_id *sid;
	struct ev ev;

	ASSERT_EQ(0, rdma_connect(cid, &p)) TH_LOG("rdma_connect: %s", strerror(errno));
	expect_event(sch, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	ASSERT_EQ(listen, ev.listen_id);
	sid = ev.id;
	ASSERT_NE(NULL, sid);
	CHECK_PD(&ev, SOFTCM_REQ_PRIVATE_DATA, req, sizeof(req));
	p = conn_param(rep, sizeof(rep), 0x222);
	ASSERT_EQ(0, rdma_accept(sid, &p)) TH_LOG("rdma_accept: %s", strerror(errno));
	/* No QP: CONNECT_RESPONSE, and the RTU is rdma_establish()'s. */
	expect_event(cch, RDMA_CM_EVENT_CONNECT_RESPONSE, EV_MS, &ev);
	ASSERT_EQ(cid, ev.id);
	ASSERT_EQ(0, rdma_establish(cid)) TH_LOG("rdma_establish: %s", strerror(errno));
	CHECK_PD(&ev, SOFTCM_REP_PRIVATE_DATA, rep, sizeof(rep));
	expect_event(sch, RDMA_CM_EVENT_ESTABLISHED, EV_MS, &ev);
	ASSERT_EQ(sid, ev.id);
	return sid;
}

/*
 * @a (on @ach) disconnects: @b hears DISCONNECTED and answers with its
 * own rdma_disconnect (the DREP), @a hears DISCONNECTED; then both
 * TIMEWAIT_EXIT.
 */
static void disconnect_pair(struct __test_metadata *_metadata,
			    struct rdma_event_channel *ach, struct rdma_cm_id *a,
			    struct rdma_event_channel *bch, struct rdma_cm_id *b)
{
	struct ev ev;

	ASSERT_EQ(0, rdma_disconnect(a)) TH_LOG("rdma_disconnect: %s", strerror(errno));
	expect_event(bch, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	ASSERT_EQ(b, ev.id);
	ASSERT_EQ(0, rdma_disconnect(b)) TH_LOG("rdma_disconnect: %s", strerror(errno));
	expect_event(ach, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	ASSERT_EQ(a, ev.id);
	expect_event(bch, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);
	ASSERT_EQ(b, ev.id);
	expect_event(ach, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);
	ASSERT_EQ(a, ev.id);
}

/* ---- children (synchronous ids, a killed process) ---- */

/* What a child did, in memory shared with the test. */
struct report {
	int step;		/* the step it failed at; 0 once all went well */
	int err;		/* errno there */
	int event, status;	/* the id's event there, -1 for none */
	int pd_len;
	uint8_t pd[256];
};

static void note_event(struct report *r, struct rdma_cm_id *id)
{
	struct rdma_cm_event *e = id ? id->event : NULL;

	r->event = e ? (int)e->event : -1;
	r->status = e ? e->status : 0;
	if (e && e->param.conn.private_data) {
		r->pd_len = e->param.conn.private_data_len;
		memcpy(r->pd, e->param.conn.private_data, r->pd_len);
	}
}

#define STEP(n, cond) do {			\
	r->step = (n);				\
	errno = 0;				\
	if (!(cond)) {				\
		r->err = errno;			\
		return n;			\
	}					\
} while (0)

#define HAS_EVENT(id, type) ((id)->event && (id)->event->event == (type))

static struct report *new_report(struct __test_metadata *_metadata)
{
	struct report *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, r);
	memset(r, 0, sizeof(*r));
	r->event = -1;
	return r;
}

static void log_report(struct __test_metadata *_metadata, const struct report *r)
{
	if (r->step)
		TH_LOG("the child stopped at step %d: %s; its event %s, status %d",
		       r->step, strerror(r->err),
		       r->event < 0 ? "none" : rdma_event_str(r->event), r->status);
}

/* Wait for the child's exit status, at most @ms; the teardown kills it. */
static int reap(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self, int ms)
{
	long deadline = topo_now_ms() + ms;
	int status = 0;
	pid_t pid;

	for (;;) {
		pid = waitpid(self->child, &status, WNOHANG);
		if (pid == self->child)
			break;
		ASSERT_EQ(0, pid);
		if (topo_now_ms() > deadline)
			TH_LOG("the child is still running after %d ms", ms);
		ASSERT_LE(topo_now_ms(), deadline);
		usleep(10000);
	}
	self->child = 0;
	return status;
}

/* One byte from the child, within @ms. */
static void wait_byte(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self,
		      int fd, int ms, const struct report *r)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, ms) != 1 || read(fd, &c, 1) != 1) {
		TH_LOG("nothing from the child");
		reap(_metadata, self, EV_MS);
		log_report(_metadata, r);
		ASSERT_TRUE(false);
	}
}

/* ===================================================================== */

TEST_F(cm, connect_accept_disconnect)
{
	struct sockaddr_storage lsa = sa(IP1, PORT(1)), csa;
	struct rdma_cm_id *listen, *cid, *sid;
	uint8_t req[57], rep[197];
	struct rdma_conn_param p;
	struct ev ev;

	fill(req, sizeof(req), 1);
	fill(rep, sizeof(rep), 2);
	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(1));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(1));
	EXPECT_ADDR(SA(lsa), rdma_get_peer_addr(cid));
	csa = sa(IP2, ntohs(rdma_get_src_port(cid)));
	EXPECT_ADDR(SA(csa), rdma_get_local_addr(cid));
	EXPECT_NE(0, rdma_get_src_port(cid));

	/* Too much private data: refused, and nothing changes. */
	p = conn_param(req, 57, 0xabcdef);
	p.responder_resources = 3;
	p.initiator_depth = 2;
	p.flow_control = 1;
	p.retry_count = 5;
	p.rnr_retry_count = 6;
	EXPECT_EQ(-1, rdma_connect(cid, &p));
	EXPECT_EQ(EINVAL, errno);
	p.private_data_len = SOFTCM_REQ_PRIVATE_DATA;
	ASSERT_EQ(0, rdma_connect(cid, &p)) TH_LOG("rdma_connect: %s", strerror(errno));

	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	EXPECT_EQ(0, ev.status);
	EXPECT_EQ(listen, ev.listen_id);
	sid = ev.id;
	ASSERT_NE(NULL, sid);
	ASSERT_NE(listen, sid);
	EXPECT_EQ(self->ch1, sid->channel);
	EXPECT_EQ(RDMA_PS_TCP, sid->ps);
	CHECK_PD(&ev, SOFTCM_REQ_PRIVATE_DATA, req, SOFTCM_REQ_PRIVATE_DATA);
	/* The request as the receiver sees it. */
	EXPECT_EQ(2, ev.conn.responder_resources);
	EXPECT_EQ(3, ev.conn.initiator_depth);
	EXPECT_EQ(1, ev.conn.flow_control);
	EXPECT_EQ(5, ev.conn.retry_count);
	EXPECT_EQ(6, ev.conn.rnr_retry_count);
	EXPECT_EQ(0xabcdef, ev.conn.qp_num);
	/* The new id's addresses are the request's. */
	EXPECT_ADDR(SA(csa), rdma_get_peer_addr(sid));
	EXPECT_ADDR(rdma_get_local_addr(cid), rdma_get_peer_addr(sid));
	EXPECT_EQ(rdma_get_src_port(cid), rdma_get_dst_port(sid));
	EXPECT_ADDR(SA(lsa), rdma_get_local_addr(sid));
	/* getpeername(2)'s answer waits for the connection, as TCP's. */
	EXPECT_NO_PEERNAME(sid);
	EXPECT_NO_PEERNAME(cid);

	p = conn_param(rep, 197, 0x123456);
	EXPECT_EQ(-1, rdma_accept(sid, &p));
	EXPECT_EQ(EINVAL, errno);
	p.private_data_len = SOFTCM_REP_PRIVATE_DATA;
	ASSERT_EQ(0, rdma_accept(sid, &p)) TH_LOG("rdma_accept: %s", strerror(errno));
	expect_event(self->ch2, RDMA_CM_EVENT_CONNECT_RESPONSE, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_EQ(0, ev.status);
	CHECK_PD(&ev, SOFTCM_REP_PRIVATE_DATA, rep, SOFTCM_REP_PRIVATE_DATA);
	EXPECT_EQ(0x123456, ev.conn.qp_num);
	/* The REP came, the RTU not yet: still not connected. */
	EXPECT_NO_PEERNAME(cid);
	EXPECT_NO_PEERNAME(sid);
	ASSERT_EQ(0, rdma_establish(cid)) TH_LOG("rdma_establish: %s", strerror(errno));
	expect_event(self->ch1, RDMA_CM_EVENT_ESTABLISHED, EV_MS, &ev);
	EXPECT_EQ(sid, ev.id);
	EXPECT_EQ(0, ev.status);
	EXPECT_PEERNAME(cid, SA(lsa));
	EXPECT_PEERNAME(sid, SA(csa));
	/* Answered already; a listener never connected. */
	EXPECT_EQ(-1, rdma_accept(sid, &p));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, rdma_disconnect(listen));
	EXPECT_EQ(EINVAL, errno);

	/* The client disconnects: DREQ, the server's DREP. */
	ASSERT_EQ(0, rdma_disconnect(cid));
	expect_event(self->ch1, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	EXPECT_EQ(sid, ev.id);
	EXPECT_NO_PEERNAME(sid);
	EXPECT_ADDR(SA(csa), rdma_get_peer_addr(sid));
	ASSERT_EQ(0, rdma_disconnect(sid));
	expect_event(self->ch2, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_NO_PEERNAME(cid);
	EXPECT_ADDR(SA(lsa), rdma_get_peer_addr(cid));
	expect_event(self->ch1, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);
	EXPECT_EQ(sid, ev.id);
	expect_event(self->ch2, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	/* Over: 0, and nothing more happens. */
	EXPECT_EQ(0, rdma_disconnect(cid));
	EXPECT_EQ(0, rdma_disconnect(sid));
	expect_none(self->ch1, 200);
	expect_none(self->ch2, 0);

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/* The passive side disconnects; each side's TIMEWAIT_EXIT follows its DISCONNECTED. */
TEST_F(cm, timewait_exit_follows_disconnected)
{
	struct rdma_cm_id *listen, *cid, *sid, *fresh;
	struct ev ev;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(2));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(2));
	sid = establish(_metadata, self->ch1, self->ch2, listen, cid);

	/* An id that never connected cannot disconnect. */
	ASSERT_EQ(0, rdma_create_id(self->ch2, &fresh, NULL, RDMA_PS_TCP));
	EXPECT_EQ(-1, rdma_disconnect(fresh));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, rdma_destroy_id(fresh));

	ASSERT_EQ(0, rdma_disconnect(sid));
	expect_event(self->ch2, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	/* The server waits for our DREP: not disconnected yet. */
	expect_none(self->ch1, 0);
	ASSERT_EQ(0, rdma_disconnect(cid));
	expect_event(self->ch1, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	EXPECT_EQ(sid, ev.id);
	expect_event(self->ch1, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);
	EXPECT_EQ(sid, ev.id);
	expect_event(self->ch2, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_EQ(0, rdma_disconnect(cid));
	EXPECT_EQ(0, rdma_disconnect(sid));
	expect_none(self->ch1, 200);
	expect_none(self->ch2, 0);

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/*
 * librdmacm's handshake for an id without a QP is the only one, whatever
 * SOFTCM_OPTION_ID_CONNECT_RESPONSE says: CONNECT_RESPONSE with the REP's
 * data, nothing for the server until rdma_establish() sends the RTU, and
 * rdma_establish() refused before the REP and after the RTU.
 */
TEST_F(cm, connect_response_is_the_default)
{
	uint8_t rep[8] = "reply";
	struct rdma_conn_param p = conn_param(NULL, 0, 0x111);
	struct rdma_cm_id *listen, *cid, *sid;
	int off = 0, on = 1, i;
	struct ev ev;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(28));
	for (i = 0; i < 2; i++) {
		cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(28));
		ASSERT_EQ(0, rdma_set_option(cid, RDMA_OPTION_ID,
					     SOFTCM_OPTION_ID_CONNECT_RESPONSE,
					     i ? &on : &off, sizeof(int)));
		p = conn_param(NULL, 0, 0x111);
		ASSERT_EQ(0, rdma_connect(cid, &p));
		EXPECT_EQ(-1, rdma_establish(cid));	/* no REP yet */
		EXPECT_EQ(EINVAL, errno);
		expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
		sid = ev.id;
		p = conn_param(rep, sizeof(rep), 0x222);
		ASSERT_EQ(0, rdma_accept(sid, &p));
		expect_event(self->ch2, RDMA_CM_EVENT_CONNECT_RESPONSE, EV_MS, &ev);
		EXPECT_EQ(cid, ev.id);
		EXPECT_EQ(0, ev.status);
		CHECK_PD(&ev, SOFTCM_REP_PRIVATE_DATA, rep, sizeof(rep));
		EXPECT_EQ(0x222, ev.conn.qp_num);
		/* no RTU yet: the server is not established */
		expect_none(self->ch1, 200);
		ASSERT_EQ(0, rdma_establish(cid)) TH_LOG("rdma_establish: %s", strerror(errno));
		expect_event(self->ch1, RDMA_CM_EVENT_ESTABLISHED, EV_MS, &ev);
		EXPECT_EQ(sid, ev.id);
		/* and nothing more for the client */
		expect_none(self->ch2, 200);
		EXPECT_EQ(-1, rdma_establish(cid));
		EXPECT_EQ(EINVAL, errno);
		disconnect_pair(_metadata, self->ch2, cid, self->ch1, sid);
		EXPECT_EQ(0, rdma_destroy_id(sid));
		EXPECT_EQ(0, rdma_destroy_id(cid));
	}
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/*
 * Parameters as librdmacm and the Linux CM take them: depths up to the
 * device maximum (128, what rdma_rxe advertises; 0xFF means it, bounded
 * on the passive side by the request), retry counts above 7 clamped, srq
 * nonzero taken as 1.  Nothing refused.
 */
TEST_F(cm, parameters_as_linux_takes_them)
{
	struct rdma_conn_param p = conn_param(NULL, 0, 0x111);
	struct rdma_cm_id *listen, *cid, *sid;
	struct ev ev;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(29));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(29));
	p.responder_resources = 128;
	p.initiator_depth = 100;
	p.retry_count = 9;
	p.rnr_retry_count = 200;
	p.srq = 3;
	ASSERT_EQ(0, rdma_connect(cid, &p)) TH_LOG("rdma_connect: %s", strerror(errno));
	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	sid = ev.id;
	/* the request as the receiver sees it */
	EXPECT_EQ(100, ev.conn.responder_resources);
	EXPECT_EQ(128, ev.conn.initiator_depth);
	EXPECT_EQ(7, ev.conn.retry_count);
	EXPECT_EQ(7, ev.conn.rnr_retry_count);
	EXPECT_EQ(1, ev.conn.srq);

	/* 0xFF: the device maximum, no more than the request asked for */
	p = conn_param(NULL, 0, 0x222);
	p.responder_resources = RDMA_MAX_RESP_RES;
	p.initiator_depth = RDMA_MAX_INIT_DEPTH;
	p.rnr_retry_count = 8;
	ASSERT_EQ(0, rdma_accept(sid, &p)) TH_LOG("rdma_accept: %s", strerror(errno));
	expect_event(self->ch2, RDMA_CM_EVENT_CONNECT_RESPONSE, EV_MS, &ev);
	EXPECT_EQ(128, ev.conn.responder_resources);
	EXPECT_EQ(100, ev.conn.initiator_depth);
	EXPECT_EQ(7, ev.conn.rnr_retry_count);
	ASSERT_EQ(0, rdma_establish(cid));
	expect_event(self->ch1, RDMA_CM_EVENT_ESTABLISHED, EV_MS, &ev);
	disconnect_pair(_metadata, self->ch2, cid, self->ch1, sid);

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

TEST_F(cm, reject_with_private_data)
{
	struct rdma_cm_id *listen, *cid, *sid;
	uint8_t req[10], rej[149];
	struct rdma_conn_param p;
	struct ev ev;

	fill(req, sizeof(req), 3);
	fill(rej, sizeof(rej), 4);
	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(3));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(3));
	p = conn_param(req, sizeof(req), 0);
	ASSERT_EQ(0, rdma_connect(cid, &p));
	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	sid = ev.id;
	CHECK_PD(&ev, SOFTCM_REQ_PRIVATE_DATA, req, sizeof(req));

	EXPECT_EQ(-1, rdma_reject(sid, rej, 149));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, rdma_reject(sid, rej, SOFTCM_REJ_PRIVATE_DATA))
		TH_LOG("rdma_reject: %s", strerror(errno));
	expect_event(self->ch2, RDMA_CM_EVENT_REJECTED, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_EQ(SOFTCM_REJ_CONSUMER_DEFINED, ev.status);
	CHECK_PD(&ev, SOFTCM_REJ_PRIVATE_DATA, rej, SOFTCM_REJ_PRIVATE_DATA);
	EXPECT_NO_PEERNAME(cid);
	/* Answered: it cannot be accepted any more, and reports nothing. */
	p = conn_param(NULL, 0, 0);
	EXPECT_EQ(-1, rdma_accept(sid, &p));
	EXPECT_EQ(EINVAL, errno);
	expect_none(self->ch1, 200);
	expect_none(self->ch2, 0);

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

TEST_F(cm, no_listener_is_rejected_8)
{
	struct rdma_cm_id *other, *cid;
	struct rdma_conn_param p = conn_param(NULL, 0, 0);
	struct ev ev;

	/* A listener elsewhere opens sc-p1's socket, so someone answers. */
	other = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(5));
	EXPECT_EQ(1, stat_of(self->st1, "socket_v4"));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(4));
	ASSERT_EQ(0, rdma_connect(cid, &p));
	expect_event(self->ch2, RDMA_CM_EVENT_REJECTED, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_EQ(8, ev.status);	/* invalid service id */
	EXPECT_EQ(SOFTCM_REJ_PRIVATE_DATA, ev.conn.private_data_len);
	EXPECT_NO_PEERNAME(cid);
	expect_none(self->ch1, 0);

	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(other));
	wait_idle();
}

/* A request nobody accepts: MRAs hold the client off, then it gives up. */
TEST_F(cm, listener_not_accepting_in_time)
{
	struct rdma_cm_id *listen, *cid, *sid;
	struct rdma_conn_param p = conn_param(NULL, 0, 0);
	long long mra_tx, mra_rx;
	struct ev ev;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(6));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(6));
	mra_tx = stat_of(self->st1, "tx_mra");
	mra_rx = stat_of(self->st2, "rx_mra");
	ASSERT_EQ(0, rdma_connect(cid, &p));
	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	sid = ev.id;

	expect_event(self->ch2, RDMA_CM_EVENT_UNREACHABLE, LONG_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_EQ(-ETIMEDOUT, ev.status);
	EXPECT_LT(mra_tx, stat_of(self->st1, "tx_mra"));
	EXPECT_LT(mra_rx, stat_of(self->st2, "rx_mra"));
	EXPECT_NO_PEERNAME(cid);
	expect_none(self->ch1, 0);

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/* Everything the client sends is lost: cm_retries retransmissions, then UNREACHABLE. */
TEST_F(cm, silent_peer_is_unreachable)
{
	struct rdma_cm_id *listen, *cid;
	struct rdma_conn_param p = conn_param(NULL, 0, 0);
	long long retx, timeouts, rx_req;
	struct ev ev;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(7));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(7));
	qdisc(_metadata, NS2, "p2", "netem loss 100%");
	retx = stat_of(self->st2, "retransmits");
	timeouts = stat_of(self->st2, "timeouts");
	rx_req = stat_of(self->st1, "rx_req");
	ASSERT_EQ(0, rdma_connect(cid, &p));
	expect_event(self->ch2, RDMA_CM_EVENT_UNREACHABLE, LONG_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_EQ(-ETIMEDOUT, ev.status);
	EXPECT_EQ(5, stat_of(self->st2, "retransmits") - retx);	/* cm_retries */
	EXPECT_EQ(1, stat_of(self->st2, "timeouts") - timeouts);
	EXPECT_EQ(rx_req, stat_of(self->st1, "rx_req"));
	expect_none(self->ch1, 0);
	unqdisc(_metadata, NS2, "p2");

	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/*
 * The lost-message tests: drop one message type, start the exchange, wait
 * until its sender has retransmitted (and check the receiver has seen
 * none), let it through again and see the exchange complete.
 */
TEST_F(cm, lost_req_is_retransmitted)
{
	struct rdma_cm_id *listen, *cid, *sid;
	uint8_t req[8] = "req";
	struct rdma_conn_param p = conn_param(req, sizeof(req), 0);
	long long retx, rx_req;
	struct ev ev;

	slow_timers(_metadata, self);
	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(8));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(8));
	drop_attr(_metadata, NS2, "p2", CM_REQ);
	retx = stat_of(self->st2, "retransmits");
	rx_req = stat_of(self->st1, "rx_req");
	ASSERT_EQ(0, rdma_connect(cid, &p));
	WAIT_ABOVE(self->st2, "retransmits", retx, LONG_MS);
	ASSERT_EQ(rx_req, stat_of(self->st1, "rx_req")) TH_LOG("the filter let a REQ through");
	expect_none(self->ch1, 0);
	unqdisc(_metadata, NS2, "p2");

	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, LONG_MS, &ev);
	sid = ev.id;
	CHECK_PD(&ev, SOFTCM_REQ_PRIVATE_DATA, req, sizeof(req));
	ASSERT_EQ(0, rdma_accept(sid, &p));
	expect_event(self->ch2, RDMA_CM_EVENT_CONNECT_RESPONSE, EV_MS, &ev);
	ASSERT_EQ(0, rdma_establish(cid));
	expect_event(self->ch1, RDMA_CM_EVENT_ESTABLISHED, EV_MS, &ev);
	disconnect_pair(_metadata, self->ch2, cid, self->ch1, sid);

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

TEST_F(cm, lost_rep_is_retransmitted)
{
	struct rdma_cm_id *listen, *cid, *sid;
	uint8_t rep[8] = "rep";
	struct rdma_conn_param p = conn_param(NULL, 0, 0);
	long long retx, rx_rep;
	struct ev ev;

	slow_timers(_metadata, self);
	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(9));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(9));
	drop_attr(_metadata, NS1, "p1", CM_REP);
	ASSERT_EQ(0, rdma_connect(cid, &p));
	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	sid = ev.id;
	retx = stat_of(self->st1, "retransmits");
	rx_rep = stat_of(self->st2, "rx_rep");
	p = conn_param(rep, sizeof(rep), 0);
	ASSERT_EQ(0, rdma_accept(sid, &p));
	WAIT_ABOVE(self->st1, "retransmits", retx, LONG_MS);
	ASSERT_EQ(rx_rep, stat_of(self->st2, "rx_rep")) TH_LOG("the filter let a REP through");
	expect_none(self->ch2, 0);
	unqdisc(_metadata, NS1, "p1");

	expect_event(self->ch2, RDMA_CM_EVENT_CONNECT_RESPONSE, LONG_MS, &ev);
	CHECK_PD(&ev, SOFTCM_REP_PRIVATE_DATA, rep, sizeof(rep));
	ASSERT_EQ(0, rdma_establish(cid));
	expect_event(self->ch1, RDMA_CM_EVENT_ESTABLISHED, EV_MS, &ev);
	disconnect_pair(_metadata, self->ch2, cid, self->ch1, sid);

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/* The server retransmits its REP; the client answers the duplicate with a new RTU. */
TEST_F(cm, lost_rtu_is_answered_again)
{
	struct rdma_cm_id *listen, *cid, *sid;
	struct rdma_conn_param p = conn_param(NULL, 0, 0);
	long long retx, rx_rtu, tx_rtu;
	struct ev ev;

	slow_timers(_metadata, self);
	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(10));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(10));
	drop_attr(_metadata, NS2, "p2", CM_RTU);
	ASSERT_EQ(0, rdma_connect(cid, &p));
	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	sid = ev.id;
	retx = stat_of(self->st1, "retransmits");
	rx_rtu = stat_of(self->st1, "rx_rtu");
	tx_rtu = stat_of(self->st2, "tx_rtu");
	ASSERT_EQ(0, rdma_accept(sid, &p));
	/* The client is established on the REP and rdma_establish()... */
	expect_event(self->ch2, RDMA_CM_EVENT_CONNECT_RESPONSE, EV_MS, &ev);
	ASSERT_EQ(0, rdma_establish(cid));
	/* ... the server, without an RTU, sends its REP again. */
	WAIT_ABOVE(self->st1, "retransmits", retx, LONG_MS);
	ASSERT_EQ(rx_rtu, stat_of(self->st1, "rx_rtu")) TH_LOG("the filter let an RTU through");
	expect_none(self->ch1, 0);
	unqdisc(_metadata, NS2, "p2");

	expect_event(self->ch1, RDMA_CM_EVENT_ESTABLISHED, LONG_MS, &ev);
	EXPECT_EQ(sid, ev.id);
	EXPECT_LE(2, stat_of(self->st2, "tx_rtu") - tx_rtu);
	expect_none(self->ch2, 0);	/* still one CONNECT_RESPONSE */
	disconnect_pair(_metadata, self->ch2, cid, self->ch1, sid);

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

TEST_F(cm, lost_dreq_is_retransmitted)
{
	struct rdma_cm_id *listen, *cid, *sid;
	long long retx, rx_dreq;
	struct ev ev;

	slow_timers(_metadata, self);
	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(11));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(11));
	sid = establish(_metadata, self->ch1, self->ch2, listen, cid);
	drop_attr(_metadata, NS2, "p2", CM_DREQ);
	retx = stat_of(self->st2, "retransmits");
	rx_dreq = stat_of(self->st1, "rx_dreq");
	ASSERT_EQ(0, rdma_disconnect(cid));
	WAIT_ABOVE(self->st2, "retransmits", retx, LONG_MS);
	ASSERT_EQ(rx_dreq, stat_of(self->st1, "rx_dreq")) TH_LOG("the filter let a DREQ through");
	expect_none(self->ch1, 0);
	unqdisc(_metadata, NS2, "p2");

	expect_event(self->ch1, RDMA_CM_EVENT_DISCONNECTED, LONG_MS, &ev);
	EXPECT_EQ(sid, ev.id);
	ASSERT_EQ(0, rdma_disconnect(sid));
	expect_event(self->ch2, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	expect_event(self->ch1, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);
	expect_event(self->ch2, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/* Every packet arrives twice: each connection still happens exactly once. */
TEST_F(cm, duplicated_packets)
{
	struct rdma_cm_id *listen, *cid, *sid;
	long long dups;
	int i;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(12));
	dups = stat_of(self->st1, "duplicates") + stat_of(self->st2, "duplicates");
	qdisc(_metadata, NS1, "p1", "netem duplicate 100%");
	qdisc(_metadata, NS2, "p2", "netem duplicate 100%");
	for (i = 0; i < 5; i++) {
		cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(12));
		sid = establish(_metadata, self->ch1, self->ch2, listen, cid);
		disconnect_pair(_metadata, self->ch2, cid, self->ch1, sid);
		EXPECT_EQ(0, rdma_destroy_id(sid));
		EXPECT_EQ(0, rdma_destroy_id(cid));
	}
	/* No second event of any kind from the duplicates. */
	expect_none(self->ch1, 300);
	expect_none(self->ch2, 0);
	EXPECT_LT(dups, stat_of(self->st1, "duplicates") + stat_of(self->st2, "duplicates"));
	unqdisc(_metadata, NS1, "p1");
	unqdisc(_metadata, NS2, "p2");

	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/*
 * Both sides disconnect at once; the DREQs cross on a slowed link.  The
 * delay is what makes them cross: a guest starved for 20 ms between the
 * two calls (another guest beside it) let the first DREQ arrive before
 * the second call, which then answered it instead.
 */
TEST_F(cm, crossing_dreqs)
{
	struct rdma_cm_id *listen, *cid, *sid;
	long long dreq1, dreq2;
	struct ev ev;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(13));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(13));
	sid = establish(_metadata, self->ch1, self->ch2, listen, cid);
	qdisc(_metadata, NS1, "p1", "netem delay 300ms");
	qdisc(_metadata, NS2, "p2", "netem delay 300ms");
	dreq1 = stat_of(self->st1, "rx_dreq");
	dreq2 = stat_of(self->st2, "rx_dreq");

	ASSERT_EQ(0, rdma_disconnect(cid));
	ASSERT_EQ(0, rdma_disconnect(sid));
	expect_event(self->ch1, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	EXPECT_EQ(sid, ev.id);
	expect_event(self->ch2, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	/* As an application would: answer whatever DREQ waits. */
	EXPECT_EQ(0, rdma_disconnect(sid));
	EXPECT_EQ(0, rdma_disconnect(cid));
	expect_event(self->ch1, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);
	expect_event(self->ch2, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);
	/* Both DREQs did go out and arrive. */
	EXPECT_LT(dreq1, stat_of(self->st1, "rx_dreq"));
	EXPECT_LT(dreq2, stat_of(self->st2, "rx_dreq"));
	expect_none(self->ch1, 200);
	expect_none(self->ch2, 0);
	unqdisc(_metadata, NS1, "p1");
	unqdisc(_metadata, NS2, "p2");

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/* ---- destroying an id in every state ---- */

/* A packet socket on p1 in sc-p1, to see the CM messages that cross it. */
static int sniffer_p1(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int pfd;

	ASSERT_EQ(0, netns_enter(self->ns1));
	pfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	sll.sll_ifindex = if_nametoindex("p1");
	ASSERT_EQ(0, netns_enter(self->home));
	ASSERT_LE(0, pfd);
	ASSERT_NE(0, sll.sll_ifindex);
	ASSERT_EQ(0, bind(pfd, (struct sockaddr *)&sll, sizeof(sll)));
	return pfd;
}

/*
 * The client's id goes while its REQ waits: a REJ with reason 4 (timeout)
 * whose ARI is the client's CA GUID (the one its REQ carried), and the
 * server hears nothing.
 */
TEST_F(cm, destroy_active_in_req_sent)
{
	struct rdma_cm_id *listen, *cid, *sid;
	struct rdma_conn_param p = conn_param(NULL, 0, 0);
	long long rx_rej, rx_rej4;
	uint8_t req[256], rej[256];
	struct ev ev;
	int pfd;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(14));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(14));
	pfd = sniffer_p1(_metadata, self);
	ASSERT_EQ(0, rdma_connect(cid, &p));
	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	sid = ev.id;
	ASSERT_EQ(0, wire_sniff(pfd, 0x10, req, EV_MS));
	rx_rej = stat_of(self->st1, "rx_rej");
	rx_rej4 = stat_of(self->st1, "rx_rej_reason_4");
	if (rx_rej4 == STATS_MISSING)	/* listed once not zero */
		rx_rej4 = 0;
	ASSERT_EQ(0, rdma_destroy_id(cid));
	WAIT_ABOVE(self->st1, "rx_rej", rx_rej, EV_MS);
	EXPECT_EQ(rx_rej4 + 1, stat_of(self->st1, "rx_rej_reason_4"));
	ASSERT_EQ(0, wire_sniff(pfd, 0x12, rej, EV_MS));
	close(pfd);
	EXPECT_EQ(get32(req + 24), get32(rej + 24));	/* the client's comm ID */
	EXPECT_EQ(0, get32(rej + 28));		/* the server's never reached it */
	EXPECT_EQ(4, (rej[34] << 8) | rej[35]);	/* timeout */
	EXPECT_LE(8, rej[33] >> 1);		/* ARI length */
	EXPECT_EQ(0, memcmp(req + 40, rej + 36, 8))	/* ARI: the REQ's CA GUID */
		TH_LOG("REQ CA GUID %08x%08x, ARI %08x%08x", get32(req + 40),
		       get32(req + 44), get32(rej + 36), get32(rej + 40));
	expect_none(self->ch1, 300);
	/* The request is over even though the server still holds its id. */
	wait_idle();
	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

TEST_F(cm, destroy_passive_before_accept)
{
	struct rdma_cm_id *listen, *cid;
	struct rdma_conn_param p = conn_param(NULL, 0, 0);
	struct ev ev;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(15));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(15));
	ASSERT_EQ(0, rdma_connect(cid, &p));
	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	ASSERT_EQ(0, rdma_destroy_id(ev.id));
	expect_event(self->ch2, RDMA_CM_EVENT_REJECTED, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_EQ(SOFTCM_REJ_CONSUMER_DEFINED, ev.status);
	expect_none(self->ch1, 0);

	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/*
 * The server's id goes after its REP, before the RTU (the RTUs are
 * dropped): its REJ reaches the established client, which gets REJECTED
 * with the reason, as from the Linux CM (cm_rej_handler() takes a REJ in
 * ESTABLISHED to timewait, rdma_cm reports it while connected); its
 * rdma_disconnect() then has nothing to send, and no DISCONNECTED or
 * TIMEWAIT_EXIT follows.
 */
TEST_F(cm, destroy_passive_before_rtu)
{
	struct rdma_cm_id *listen, *cid, *sid;
	struct rdma_conn_param p = conn_param(NULL, 0, 0);
	long long rx_rtu;
	struct ev ev;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(16));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(16));
	drop_attr(_metadata, NS2, "p2", CM_RTU);
	ASSERT_EQ(0, rdma_connect(cid, &p));
	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	sid = ev.id;
	rx_rtu = stat_of(self->st1, "rx_rtu");
	ASSERT_EQ(0, rdma_accept(sid, &p));
	expect_event(self->ch2, RDMA_CM_EVENT_CONNECT_RESPONSE, EV_MS, &ev);
	ASSERT_EQ(0, rdma_establish(cid));
	ASSERT_EQ(rx_rtu, stat_of(self->st1, "rx_rtu")) TH_LOG("the filter let an RTU through");
	expect_none(self->ch1, 0);
	ASSERT_EQ(0, rdma_destroy_id(sid));
	unqdisc(_metadata, NS2, "p2");

	expect_event(self->ch2, RDMA_CM_EVENT_REJECTED, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_EQ(SOFTCM_REJ_CONSUMER_DEFINED, ev.status);
	EXPECT_EQ(0, rdma_disconnect(cid));
	ASSERT_EQ(0, stats_wait_eq(self->st2, "connections", 0, LONG_MS));
	expect_none(self->ch2, 0);
	expect_none(self->ch1, 0);

	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/* Destroying an established id disconnects it: the peer gets DISCONNECTED. */
TEST_F(cm, destroy_established)
{
	struct rdma_cm_id *listen, *cid, *sid;
	struct ev ev;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(17));

	/* The client's id. */
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(17));
	sid = establish(_metadata, self->ch1, self->ch2, listen, cid);
	ASSERT_EQ(0, rdma_destroy_id(cid));
	expect_event(self->ch1, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	EXPECT_EQ(sid, ev.id);
	EXPECT_EQ(0, rdma_disconnect(sid));
	expect_event(self->ch1, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);
	EXPECT_EQ(0, rdma_destroy_id(sid));
	expect_none(self->ch2, 0);

	/* The server's id. */
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(17));
	sid = establish(_metadata, self->ch1, self->ch2, listen, cid);
	ASSERT_EQ(0, rdma_destroy_id(sid));
	expect_event(self->ch2, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_EQ(0, rdma_disconnect(cid));
	expect_event(self->ch2, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);
	EXPECT_EQ(0, rdma_destroy_id(cid));
	expect_none(self->ch1, 0);

	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/* Both ids go between DISCONNECTED and TIMEWAIT_EXIT: their events go with them. */
TEST_F(cm, destroy_before_timewait_exit)
{
	struct rdma_cm_id *listen, *cid, *sid;
	struct ev ev;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(18));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(18));
	sid = establish(_metadata, self->ch1, self->ch2, listen, cid);
	ASSERT_EQ(0, rdma_disconnect(cid));
	expect_event(self->ch1, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	ASSERT_EQ(0, rdma_disconnect(sid));
	expect_event(self->ch2, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	wait_idle();
	expect_none(self->ch1, 0);
	expect_none(self->ch2, 0);
	EXPECT_EQ(0, rdma_destroy_id(listen));
}

/* ---- a process killed mid-handshake ---- */

/* In sc-p2: connect, say so, and wait to be killed. */
static int doomed_client(int nsfd, int port, int ready, struct report *r)
{
	struct sockaddr_storage dst = sa(IP1, port);
	struct rdma_conn_param p = conn_param(NULL, 0, 0);
	struct rdma_event_channel *ch = NULL;
	struct rdma_cm_event *e = NULL;
	struct rdma_cm_id *id = NULL;

	STEP(1, !netns_enter(nsfd));
	STEP(2, (ch = rdma_create_event_channel()) != NULL);
	STEP(3, !rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	STEP(4, !rdma_resolve_addr(id, NULL, SA(dst), 5000));
	STEP(5, !rdma_get_cm_event(ch, &e));
	r->event = e->event;
	STEP(6, e->event == RDMA_CM_EVENT_ADDR_RESOLVED);
	rdma_ack_cm_event(e);
	STEP(7, !rdma_resolve_route(id, 5000));
	STEP(8, !rdma_get_cm_event(ch, &e));
	r->event = e->event;
	STEP(9, e->event == RDMA_CM_EVENT_ROUTE_RESOLVED);
	rdma_ack_cm_event(e);
	STEP(10, !rdma_connect(id, &p));
	STEP(11, write(ready, "c", 1) == 1);
	r->step = 0;
	for (;;)
		pause();
}

TEST_F(cm, killed_mid_handshake)
{
	struct rdma_conn_param p = conn_param(NULL, 0, 0);
	struct rdma_cm_id *listen, *sid;
	struct report *r = new_report(_metadata);
	long long rx_rej;
	int pipefd[2], ret;
	struct ev ev;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(19));
	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		close(pipefd[0]);
		_exit(doomed_client(self->ns2, PORT(19), pipefd[1], r));
	}
	close(pipefd[1]);
	wait_byte(_metadata, self, pipefd[0], LONG_MS, r);
	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	sid = ev.id;

	/* Its file closes with the request pending: a REJ (timeout). */
	rx_rej = stat_of(self->st1, "rx_rej");
	kill(self->child, SIGKILL);
	reap(_metadata, self, EV_MS);
	WAIT_ABOVE(self->st1, "rx_rej", rx_rej, EV_MS);

	/*
	 * The REJ ended the request (its comm ID is free once the REJ has
	 * been handled): too late to accept, and the unaccepted id hears
	 * nothing of it.
	 */
	ASSERT_EQ(0, stats_wait_eq(self->st1, "connections", 0, EV_MS));
	ret = rdma_accept(sid, &p);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EINVAL, errno);
	expect_none(self->ch1, 200);

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	close(pipefd[0]);
	munmap(r, sizeof(*r));
	wait_idle();
}

/* ---- addresses ---- */

/* Client and server in one namespace: to its own address and to 127.0.0.1. */
TEST_F(cm, loopback_and_own_address)
{
	static const char *const dsts[] = { IP1, "127.0.0.1" };
	struct rdma_event_channel *ch3;
	struct rdma_cm_id *listen, *cid, *sid;
	struct sockaddr_storage dst;
	unsigned int i;

	ch3 = channel_in(_metadata, self->ns1, self->home);
	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, "0.0.0.0", PORT(20));
	for (i = 0; i < sizeof(dsts) / sizeof(dsts[0]); i++) {
		dst = sa(dsts[i], PORT(20));
		cid = client(_metadata, ch3, RDMA_PS_TCP, dsts[i], PORT(20));
		sid = establish(_metadata, self->ch1, ch3, listen, cid);
		EXPECT_ADDR(rdma_get_local_addr(cid), rdma_get_peer_addr(sid));
		EXPECT_PEERNAME(sid, rdma_get_local_addr(cid));
		EXPECT_ADDR(SA(dst), rdma_get_local_addr(sid));
		EXPECT_ADDR(SA(dst), rdma_get_peer_addr(cid));
		disconnect_pair(_metadata, ch3, cid, self->ch1, sid);
		EXPECT_EQ(0, rdma_destroy_id(sid));
		EXPECT_EQ(0, rdma_destroy_id(cid));
	}
	EXPECT_EQ(0, rdma_destroy_id(listen));
	rdma_destroy_event_channel(ch3);
	wait_idle();
}

TEST_F(cm, ipv6)
{
	struct sockaddr_storage lsa = sa(IP61, PORT(21)), csa;
	struct rdma_cm_id *listen, *cid, *sid;

	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP61, PORT(21));
	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP61, PORT(21));
	csa = sa(IP62, ntohs(rdma_get_src_port(cid)));
	EXPECT_ADDR(SA(csa), rdma_get_local_addr(cid));
	sid = establish(_metadata, self->ch1, self->ch2, listen, cid);
	EXPECT_ADDR(SA(csa), rdma_get_peer_addr(sid));
	EXPECT_EQ(rdma_get_src_port(cid), rdma_get_dst_port(sid));
	EXPECT_PEERNAME(sid, SA(csa));
	EXPECT_ADDR(SA(lsa), rdma_get_local_addr(sid));
	EXPECT_PEERNAME(cid, SA(lsa));
	disconnect_pair(_metadata, self->ch2, cid, self->ch1, sid);
	EXPECT_NO_PEERNAME(sid);
	EXPECT_ADDR(SA(csa), rdma_get_peer_addr(sid));

	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/* ---- SIDR: RDMA_PS_UDP ---- */

TEST_F(cm, sidr_accept_and_reject)
{
	struct rdma_cm_id *listen, *cid, *sid;
	uint8_t req[181], rep[137];
	struct rdma_conn_param p;
	struct ev ev;

	fill(req, sizeof(req), 5);
	fill(rep, sizeof(rep), 6);
	listen = listener(_metadata, self->ch1, RDMA_PS_UDP, IP1, PORT(22));
	cid = client(_metadata, self->ch2, RDMA_PS_UDP, IP1, PORT(22));
	EXPECT_EQ(IBV_QPT_UD, cid->qp_type);

	p = conn_param(req, 181, 0);
	EXPECT_EQ(-1, rdma_connect(cid, &p));
	EXPECT_EQ(EINVAL, errno);
	p.private_data_len = SOFTCM_SIDR_REQ_PRIVATE_DATA;
	ASSERT_EQ(0, rdma_connect(cid, &p)) TH_LOG("rdma_connect: %s", strerror(errno));
	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	EXPECT_EQ(listen, ev.listen_id);
	sid = ev.id;
	ASSERT_NE(NULL, sid);
	EXPECT_EQ(RDMA_PS_UDP, sid->ps);
	EXPECT_EQ(IBV_QPT_UD, sid->qp_type);
	CHECK_PD(&ev, SOFTCM_SIDR_REQ_PRIVATE_DATA, req, SOFTCM_SIDR_REQ_PRIVATE_DATA);
	EXPECT_ADDR(rdma_get_local_addr(cid), rdma_get_peer_addr(sid));

	p = conn_param(rep, 137, 0x1234);
	EXPECT_EQ(-1, rdma_accept(sid, &p));
	EXPECT_EQ(EINVAL, errno);
	p.private_data_len = SOFTCM_SIDR_REP_PRIVATE_DATA;
	ASSERT_EQ(0, rdma_accept(sid, &p)) TH_LOG("rdma_accept: %s", strerror(errno));
	expect_event(self->ch2, RDMA_CM_EVENT_ESTABLISHED, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_EQ(0, ev.status);
	EXPECT_EQ(0x1234, ev.ud_qp_num);
	EXPECT_EQ(SOFTCM_UDP_QKEY, ev.ud_qkey);
	CHECK_PD(&ev, SOFTCM_SIDR_REP_PRIVATE_DATA, rep, SOFTCM_SIDR_REP_PRIVATE_DATA);
	/* Datagram service: nothing more on either side. */
	expect_none(self->ch1, 200);
	expect_none(self->ch2, 0);
	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));

	/* Rejected: UNREACHABLE with the SIDR status 2. */
	cid = client(_metadata, self->ch2, RDMA_PS_UDP, IP1, PORT(22));
	p = conn_param(req, 4, 0);
	ASSERT_EQ(0, rdma_connect(cid, &p));
	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, EV_MS, &ev);
	sid = ev.id;
	ASSERT_EQ(0, rdma_reject(sid, rep, 8)) TH_LOG("rdma_reject: %s", strerror(errno));
	expect_event(self->ch2, RDMA_CM_EVENT_UNREACHABLE, EV_MS, &ev);
	EXPECT_EQ(cid, ev.id);
	EXPECT_EQ(2, ev.status);
	expect_none(self->ch1, 0);
	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(cid));

	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/* ---- synchronous ids ---- */

/* In sc-p1: a synchronous listener, rdma_get_request, accept, disconnect. */
static int sync_server(int nsfd, int port, int ready, struct report *r)
{
	struct sockaddr_storage ss = sa(IP1, port);
	struct rdma_cm_id *listen = NULL, *id = NULL;
	struct rdma_conn_param p;
	uint8_t rep[SOFTCM_REP_PRIVATE_DATA];

	fill(rep, sizeof(rep), 8);
	STEP(1, !netns_enter(nsfd));
	STEP(2, !rdma_create_id(NULL, &listen, NULL, RDMA_PS_TCP));
	STEP(3, !rdma_bind_addr(listen, SA(ss)));
	STEP(4, !rdma_listen(listen, 0));
	STEP(5, write(ready, "l", 1) == 1);
	STEP(6, !rdma_get_request(listen, &id));
	note_event(r, id);
	STEP(7, HAS_EVENT(id, RDMA_CM_EVENT_CONNECT_REQUEST));
	STEP(8, id->event->listen_id == listen);
	p = conn_param(rep, sizeof(rep), 0x333);
	/* Returns once ESTABLISHED. */
	STEP(9, !rdma_accept(id, &p));
	note_event(r, id);
	STEP(10, HAS_EVENT(id, RDMA_CM_EVENT_ESTABLISHED));
	/* Returns once DISCONNECTED (on the client's DREP). */
	STEP(11, !rdma_disconnect(id));
	note_event(r, id);
	STEP(12, HAS_EVENT(id, RDMA_CM_EVENT_DISCONNECTED));
	STEP(13, !rdma_destroy_id(id));
	STEP(14, !rdma_destroy_id(listen));
	r->step = 0;
	return 0;
}

TEST_F(cm, sync_server_async_client)
{
	struct report *r = new_report(_metadata);
	uint8_t req[SOFTCM_REQ_PRIVATE_DATA], rep[SOFTCM_REP_PRIVATE_DATA];
	struct rdma_conn_param p;
	struct rdma_cm_id *cid;
	int pipefd[2], status;
	struct ev ev;

	fill(req, sizeof(req), 7);
	fill(rep, sizeof(rep), 8);
	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		close(pipefd[0]);
		_exit(sync_server(self->ns1, PORT(23), pipefd[1], r));
	}
	close(pipefd[1]);
	wait_byte(_metadata, self, pipefd[0], LONG_MS, r);

	cid = client(_metadata, self->ch2, RDMA_PS_TCP, IP1, PORT(23));
	p = conn_param(req, sizeof(req), 0x444);
	ASSERT_EQ(0, rdma_connect(cid, &p));
	expect_event(self->ch2, RDMA_CM_EVENT_CONNECT_RESPONSE, EV_MS, &ev);
	CHECK_PD(&ev, SOFTCM_REP_PRIVATE_DATA, rep, sizeof(rep));
	ASSERT_EQ(0, rdma_establish(cid));
	/* The server disconnects as soon as its accept returns. */
	expect_event(self->ch2, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	ASSERT_EQ(0, rdma_disconnect(cid));
	expect_event(self->ch2, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);

	status = reap(_metadata, self, LONG_MS);
	log_report(_metadata, r);
	EXPECT_EQ(0, r->step);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(0, rdma_destroy_id(cid));
	close(pipefd[0]);
	wait_idle();
}

/*
 * In sc-p2: synchronous rdma_resolve_addr/route and rdma_connect, first
 * to a port nobody listens on (ECONNREFUSED, the REJECTED kept in
 * id->event), then to the test's listener; then disconnect.
 */
static int sync_client(int nsfd, int port, int closed_port, struct report *r)
{
	struct sockaddr_storage dst = sa(IP1, port), nobody = sa(IP1, closed_port);
	uint8_t req[SOFTCM_REQ_PRIVATE_DATA];
	struct rdma_conn_param p;
	struct rdma_cm_id *id = NULL;

	fill(req, sizeof(req), 9);
	p = conn_param(req, sizeof(req), 0x555);
	STEP(1, !netns_enter(nsfd));
	STEP(2, !rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	STEP(3, !rdma_resolve_addr(id, NULL, SA(nobody), 5000));
	STEP(4, HAS_EVENT(id, RDMA_CM_EVENT_ADDR_RESOLVED));
	STEP(5, !rdma_resolve_route(id, 5000));
	STEP(6, HAS_EVENT(id, RDMA_CM_EVENT_ROUTE_RESOLVED));
	STEP(7, rdma_connect(id, &p) == -1 && errno == ECONNREFUSED);
	note_event(r, id);
	STEP(8, HAS_EVENT(id, RDMA_CM_EVENT_REJECTED) && id->event->status == 8);
	STEP(9, !rdma_destroy_id(id));

	STEP(10, !rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	STEP(11, !rdma_resolve_addr(id, NULL, SA(dst), 5000));
	STEP(12, !rdma_resolve_route(id, 5000));
	/*
	 * Returns 0 with CONNECT_RESPONSE and the REP's private data, as
	 * librdmacm's does for an id without a QP; rdma_establish() sends
	 * the RTU.
	 */
	STEP(13, !rdma_connect(id, &p));
	note_event(r, id);
	STEP(14, HAS_EVENT(id, RDMA_CM_EVENT_CONNECT_RESPONSE));
	STEP(15, !rdma_establish(id));
	/* Returns once DISCONNECTED. */
	STEP(16, !rdma_disconnect(id));
	STEP(17, HAS_EVENT(id, RDMA_CM_EVENT_DISCONNECTED));
	STEP(18, !rdma_destroy_id(id));
	r->step = 0;
	return 0;
}

TEST_F(cm, sync_client_async_server)
{
	struct report *r = new_report(_metadata);
	uint8_t req[SOFTCM_REQ_PRIVATE_DATA], rep[SOFTCM_REP_PRIVATE_DATA];
	struct rdma_cm_id *listen, *sid;
	struct rdma_conn_param p;
	int status;
	struct ev ev;

	fill(req, sizeof(req), 9);
	fill(rep, sizeof(rep), 10);
	/* Also opens sc-p1's socket, so the closed port is answered with a REJ. */
	listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(24));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child)
		_exit(sync_client(self->ns2, PORT(24), PORT(25), r));

	expect_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, LONG_MS, &ev);
	sid = ev.id;
	CHECK_PD(&ev, SOFTCM_REQ_PRIVATE_DATA, req, sizeof(req));
	EXPECT_EQ(0x555, ev.conn.qp_num);
	p = conn_param(rep, sizeof(rep), 0x666);
	ASSERT_EQ(0, rdma_accept(sid, &p));
	expect_event(self->ch1, RDMA_CM_EVENT_ESTABLISHED, EV_MS, &ev);
	expect_event(self->ch1, RDMA_CM_EVENT_DISCONNECTED, EV_MS, &ev);
	ASSERT_EQ(0, rdma_disconnect(sid));
	expect_event(self->ch1, RDMA_CM_EVENT_TIMEWAIT_EXIT, EV_MS, &ev);

	status = reap(_metadata, self, LONG_MS);
	log_report(_metadata, r);
	EXPECT_EQ(0, r->step);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	/* What the synchronous connect returned with: the REP's private data. */
	EXPECT_EQ(SOFTCM_REP_PRIVATE_DATA, r->pd_len);
	EXPECT_EQ(0, memcmp(r->pd, rep, sizeof(rep)));
	EXPECT_EQ(0, rdma_destroy_id(sid));
	EXPECT_EQ(0, rdma_destroy_id(listen));
	wait_idle();
}

/* ---- many connections at once ---- */

/*
 * One event loop over both channels drives a batch of connections: the
 * client resolves, connects and (later) disconnects, the server accepts
 * or rejects and answers DREQs; every event must come exactly once.
 * The server finds a request's connection by its source port.
 */
enum {
	M_C_EST, M_C_REJ, M_C_DISC, M_C_TW, M_S_REQ, M_S_EST, M_S_DISC, M_S_TW,
	NR_MARKS
};

struct conn {
	struct rdma_cm_id *cid, *sid;
	unsigned int seen;	/* 1 << M_* */
	int seed;
	int req_len, rep_len;
	int rej_len;		/* >= 0: the server rejects with this much */
};

struct batch {
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *listen;
	struct sockaddr_storage dst;
	int accepting, rejecting;
	int connects;		/* rdma_connect() calls */
	int count[NR_MARKS];
	struct conn *by_port[65536];
};

static void mark(struct __test_metadata *_metadata, struct batch *b, struct conn *c, int m)
{
	if (c->seen & (1U << m))
		TH_LOG("connection %d: event %d twice", c->seed, m);
	ASSERT_EQ(0, c->seen & (1U << m));
	c->seen |= 1U << m;
	b->count[m]++;
}

static void on_client(struct __test_metadata *_metadata, struct batch *b, struct ev *ev)
{
	struct conn *c = ev->id ? ev->id->context : NULL;
	struct rdma_conn_param p;
	uint8_t want[256];

	if (!c)
		TH_LOG("client: %s for an unknown id", rdma_event_str(ev->event));
	ASSERT_NE(NULL, c);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		b->by_port[ntohs(rdma_get_src_port(c->cid))] = c;
		ASSERT_EQ(0, rdma_resolve_route(c->cid, 5000));
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		fill(want, c->req_len, c->seed * 3);
		p = conn_param(want, c->req_len, 0);
		ASSERT_EQ(0, rdma_connect(c->cid, &p))
			TH_LOG("connection %d: rdma_connect: %s", c->seed, strerror(errno));
		b->connects++;
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		ASSERT_GT(0, c->rej_len) TH_LOG("connection %d established", c->seed);
		fill(want, c->rep_len, c->seed * 3 + 1);
		CHECK_PD(ev, SOFTCM_REP_PRIVATE_DATA, want, c->rep_len);
		ASSERT_EQ(0, rdma_establish(c->cid));
		mark(_metadata, b, c, M_C_EST);
		break;
	case RDMA_CM_EVENT_REJECTED:
		ASSERT_LE(0, c->rej_len)
			TH_LOG("connection %d rejected, status %d", c->seed, ev->status);
		EXPECT_EQ(SOFTCM_REJ_CONSUMER_DEFINED, ev->status);
		fill(want, c->rej_len, c->seed * 3 + 2);
		CHECK_PD(ev, SOFTCM_REJ_PRIVATE_DATA, want, c->rej_len);
		mark(_metadata, b, c, M_C_REJ);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		mark(_metadata, b, c, M_C_DISC);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		ASSERT_TRUE(c->seen & (1U << M_C_DISC));
		mark(_metadata, b, c, M_C_TW);
		break;
	default:
		TH_LOG("connection %d: the client got %s (status %d)", c->seed,
		       rdma_event_str(ev->event), ev->status);
		ASSERT_TRUE(false);
	}
}

static void on_server(struct __test_metadata *_metadata, struct batch *b, struct ev *ev)
{
	struct rdma_conn_param p;
	uint8_t want[256];
	struct conn *c;
	int port;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		ASSERT_EQ(b->listen, ev->listen_id);
		port = ntohs(rdma_get_dst_port(ev->id));
		c = b->by_port[port];
		if (!c)
			TH_LOG("a request from port %d, none of ours", port);
		ASSERT_NE(NULL, c);
		ASSERT_EQ(NULL, c->sid);
		c->sid = ev->id;
		ev->id->context = c;
		mark(_metadata, b, c, M_S_REQ);
		fill(want, c->req_len, c->seed * 3);
		CHECK_PD(ev, SOFTCM_REQ_PRIVATE_DATA, want, c->req_len);
		if (c->rej_len >= 0) {
			fill(want, c->rej_len, c->seed * 3 + 2);
			ASSERT_EQ(0, rdma_reject(c->sid, want, c->rej_len))
				TH_LOG("connection %d: rdma_reject: %s", c->seed, strerror(errno));
		} else {
			fill(want, c->rep_len, c->seed * 3 + 1);
			p = conn_param(want, c->rep_len, 0);
			ASSERT_EQ(0, rdma_accept(c->sid, &p))
				TH_LOG("connection %d: rdma_accept: %s", c->seed, strerror(errno));
		}
		return;
	}
	c = ev->id ? ev->id->context : NULL;
	if (!c)
		TH_LOG("server: %s (status %d) for an unknown id",
		       rdma_event_str(ev->event), ev->status);
	ASSERT_NE(NULL, c);
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		ASSERT_GT(0, c->rej_len);
		mark(_metadata, b, c, M_S_EST);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		mark(_metadata, b, c, M_S_DISC);
		ASSERT_EQ(0, rdma_disconnect(c->sid));
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		ASSERT_TRUE(c->seen & (1U << M_S_DISC));
		mark(_metadata, b, c, M_S_TW);
		break;
	default:
		TH_LOG("connection %d: the server got %s (status %d)", c->seed,
		       rdma_event_str(ev->event), ev->status);
		ASSERT_TRUE(false);
	}
}

static bool phase_done(const struct batch *b, bool connecting)
{
	if (connecting)
		return b->count[M_C_EST] == b->accepting && b->count[M_S_EST] == b->accepting &&
		       b->count[M_C_REJ] == b->rejecting;
	return b->count[M_C_TW] == b->accepting && b->count[M_S_TW] == b->accepting;
}

static void pump(struct __test_metadata *_metadata, struct batch *b, bool connecting)
{
	struct pollfd pfd[2];
	struct ev ev;
	int ret;

	while (!phase_done(b, connecting)) {
		pfd[0] = (struct pollfd){ .fd = b->sch->fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = b->cch->fd, .events = POLLIN };
		ret = poll(pfd, 2, LONG_MS);
		if (ret < 0 && errno == EINTR)
			continue;
		if (!ret)
			TH_LOG("stuck: client %d established, %d rejected, %d disconnected, "
			       "%d timewait; server %d requests, %d established, "
			       "%d disconnected, %d timewait (%d accepted, %d rejected)",
			       b->count[M_C_EST], b->count[M_C_REJ], b->count[M_C_DISC],
			       b->count[M_C_TW], b->count[M_S_REQ], b->count[M_S_EST],
			       b->count[M_S_DISC], b->count[M_S_TW], b->accepting, b->rejecting);
		ASSERT_LT(0, ret);
		if (pfd[0].revents) {
			ret = next_event(b->sch, 0, &ev);
			ASSERT_TRUE(!ret || ret == -ETIME);
			if (!ret)
				on_server(_metadata, b, &ev);
		}
		if (pfd[1].revents) {
			ret = next_event(b->cch, 0, &ev);
			ASSERT_TRUE(!ret || ret == -ETIME);
			if (!ret)
				on_client(_metadata, b, &ev);
		}
	}
}

static void start_batch(struct __test_metadata *_metadata, struct batch *b,
			struct conn *c, int n)
{
	int i;

	b->accepting = b->rejecting = b->connects = 0;
	memset(b->count, 0, sizeof(b->count));
	for (i = 0; i < n; i++) {
		if (c[i].rej_len >= 0)
			b->rejecting++;
		else
			b->accepting++;
		ASSERT_EQ(0, rdma_create_id(b->cch, &c[i].cid, &c[i], RDMA_PS_TCP));
		ASSERT_EQ(0, rdma_resolve_addr(c[i].cid, NULL, SA(b->dst), 5000))
			TH_LOG("connection %d: rdma_resolve_addr: %s", c[i].seed, strerror(errno));
	}
}

/* Drive the clients alone until each has sent its REQ: nobody reads requests. */
static void connect_clients(struct __test_metadata *_metadata, struct batch *b, int n)
{
	struct ev ev;

	while (b->connects < n) {
		ASSERT_EQ(0, next_event(b->cch, LONG_MS, &ev))
			TH_LOG("%d of %d clients connecting", b->connects, n);
		on_client(_metadata, b, &ev);
	}
}

static void run_batch(struct __test_metadata *_metadata, struct batch *b,
		      struct conn *c, int n)
{
	int i;

	start_batch(_metadata, b, c, n);
	pump(_metadata, b, true);
	for (i = 0; i < n; i++)
		if (c[i].rej_len < 0)
			ASSERT_EQ(0, rdma_disconnect(c[i].cid));
	pump(_metadata, b, false);
	for (i = 0; i < n; i++) {
		b->by_port[ntohs(rdma_get_src_port(c[i].cid))] = NULL;
		if (c[i].sid)
			ASSERT_EQ(0, rdma_destroy_id(c[i].sid));
		ASSERT_EQ(0, rdma_destroy_id(c[i].cid));
	}
}

static struct batch *new_batch(struct __test_metadata *_metadata, FIXTURE_DATA(cm) *self,
			       int port)
{
	struct batch *b = calloc(1, sizeof(*b));

	ASSERT_NE(NULL, b);
	b->sch = self->ch1;
	b->cch = self->ch2;
	b->dst = sa(IP1, port);
	b->listen = listener(_metadata, self->ch1, RDMA_PS_TCP, IP1, port);
	/*
	 * A request waits for this loop to answer it, behind the rest of the
	 * batch.  A REQ retransmitted before its answer and arriving after a
	 * REJ is, rightly, a new request, and a REP that runs out of
	 * retransmissions before the client's kernel takes it is an
	 * UNREACHABLE: a response timeout 4 times the fast one (REQs 264 ms,
	 * REPs 256 ms apart; 2.1 s and 2 s on the debug kernel), and MRAs of
	 * 4 s (32 s), so that neither happens in a correct run.
	 */
	set_both(_metadata, self, "cm_response_timeout", 16 + softcm_slow_shift());
	ASSERT_EQ(0, netns_softcm_sysctl(self->ns1, self->home, "mra_timeout",
					 20 + softcm_slow_shift()));
	return b;
}

/*
 * A listener with backlog 2 and 16 clients connecting before it reads a
 * single request: the 14 beyond the backlog are held (each told to wait
 * with an MRA), none dropped, and each is reported as a slot frees, so
 * that all 16 connect without a retransmission's delay.
 */
TEST_F_TIMEOUT(cm, burst_beyond_backlog_is_held, 300)
{
	enum { N = 16, BACKLOG = 2 };
	struct conn *c = calloc(N, sizeof(*c));
	long long held, drops, mras, promoted;
	struct batch *b;
	int i;

	ASSERT_NE(NULL, c);
	b = new_batch(_metadata, self, PORT(50));
	ASSERT_EQ(0, rdma_destroy_id(b->listen));
	b->listen = listener_backlog(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(50),
				     BACKLOG);
	for (i = 0; i < N; i++) {
		c[i].seed = i;
		c[i].req_len = i;
		c[i].rep_len = i;
		c[i].rej_len = -1;
	}
	held = stat_of(self->st1, "req_held");
	promoted = stat_of(self->st1, "req_promoted");
	drops = stat_of(self->st1, "drop_backlog");
	mras = stat_of(self->st1, "tx_mra");
	ASSERT_NE(STATS_MISSING, held);
	start_batch(_metadata, b, c, N);
	connect_clients(_metadata, b, N);
	ASSERT_EQ(0, stats_wait_eq(self->st1, "held_requests", N - BACKLOG, LONG_MS))
		TH_LOG("held_requests %lld, drop_backlog %lld", stat_of(self->st1, "held_requests"),
		       stat_of(self->st1, "drop_backlog") - drops);
	/* Retransmitted REQs (if any) are recognised, never held twice. */
	EXPECT_EQ(held + N - BACKLOG, stat_of(self->st1, "req_held"));
	EXPECT_LE(mras + N - BACKLOG, stat_of(self->st1, "tx_mra"));
	EXPECT_EQ(drops, stat_of(self->st1, "drop_backlog"));

	pump(_metadata, b, true);
	EXPECT_EQ(N, b->count[M_C_EST]);
	EXPECT_EQ(N, b->count[M_S_EST]);
	EXPECT_EQ(promoted + N - BACKLOG, stat_of(self->st1, "req_promoted"));
	EXPECT_EQ(0, stat_of(self->st1, "held_requests"));
	EXPECT_EQ(drops, stat_of(self->st1, "drop_backlog"));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, rdma_disconnect(c[i].cid));
	pump(_metadata, b, false);
	for (i = 0; i < N; i++) {
		b->by_port[ntohs(rdma_get_src_port(c[i].cid))] = NULL;
		ASSERT_EQ(0, rdma_destroy_id(c[i].sid));
		ASSERT_EQ(0, rdma_destroy_id(c[i].cid));
	}
	EXPECT_EQ(0, rdma_destroy_id(b->listen));
	free(b);
	free(c);
	wait_idle();
}

/*
 * net.softcm.max_held_requests bounds what a listener holds: beyond it
 * requests are dropped and counted as before; a listener destroyed with
 * requests held rejects them and frees them (held_requests and the ids
 * back to 0; kmemleak on the debug kernel).
 */
TEST_F_TIMEOUT(cm, hold_bound_drops_and_destroy_frees, 300)
{
	enum { N = 16, BACKLOG = 2, HOLD = 4 };
	struct conn *c = calloc(N, sizeof(*c));
	long long held, drops, ids;
	int i, rejected = 0, ended = 0;
	struct batch *b;
	struct ev ev;

	ASSERT_NE(NULL, c);
	b = new_batch(_metadata, self, PORT(51));
	ASSERT_EQ(0, rdma_destroy_id(b->listen));
	ASSERT_EQ(0, netns_softcm_sysctl(self->ns1, self->home, "max_held_requests", HOLD));
	b->listen = listener_backlog(_metadata, self->ch1, RDMA_PS_TCP, IP1, PORT(51),
				     BACKLOG);
	for (i = 0; i < N; i++) {
		c[i].seed = i;
		c[i].rej_len = -1;
	}
	ids = stat_of(self->st1, "ids");
	held = stat_of(self->st1, "req_held");
	drops = stat_of(self->st1, "drop_backlog");
	ASSERT_NE(STATS_MISSING, held);
	start_batch(_metadata, b, c, N);
	connect_clients(_metadata, b, N);
	ASSERT_EQ(0, stats_wait_eq(self->st1, "held_requests", HOLD, LONG_MS));
	WAIT_ABOVE(self->st1, "drop_backlog", drops + N - BACKLOG - HOLD - 1, LONG_MS);
	EXPECT_EQ(held + HOLD, stat_of(self->st1, "req_held"));
	/* the listener, its 2 unread requests and the 4 held */
	EXPECT_EQ(ids + BACKLOG + HOLD, stat_of(self->st1, "ids"));

	ASSERT_EQ(0, rdma_destroy_id(b->listen));
	b->listen = NULL;
	EXPECT_EQ(0, stat_of(self->st1, "held_requests"));
	EXPECT_EQ(0, netns_softcm_sysctl(self->ns1, self->home, "max_held_requests", 1024));
	/* Every client hears the end: REJ 28 for those held or queued, 8 (or
	 * UNREACHABLE) for the dropped ones once nothing listens. */
	while (ended < N) {
		ASSERT_EQ(0, next_event(b->cch, LONG_MS, &ev))
			TH_LOG("%d of %d clients ended", ended, N);
		ASSERT_TRUE(ev.event == RDMA_CM_EVENT_REJECTED ||
			    ev.event == RDMA_CM_EVENT_UNREACHABLE)
			TH_LOG("client got %s", rdma_event_str(ev.event));
		if (ev.event == RDMA_CM_EVENT_REJECTED &&
		    ev.status == SOFTCM_REJ_CONSUMER_DEFINED)
			rejected++;
		ended++;
	}
	EXPECT_LE(BACKLOG + HOLD, rejected);
	expect_none(self->ch1, 0);
	for (i = 0; i < N; i++) {
		b->by_port[ntohs(rdma_get_src_port(c[i].cid))] = NULL;
		ASSERT_EQ(0, rdma_destroy_id(c[i].cid));
	}
	EXPECT_EQ(0, stats_wait_eq(self->st1, "ids", ids - 1, IDLE_MS))
		TH_LOG("ids %lld", stat_of(self->st1, "ids"));
	free(b);
	free(c);
	wait_idle();
}

/* Connections in flight at once: fewer on the debug kernel, as many in all. */
static int in_flight(int stock)
{
	return softcm_on_debug() ? 20 : stock;
}

/* REQ 0..56, REP 0..196 and REJ 0..148 bytes, each arriving intact. */
TEST_F_TIMEOUT(cm, private_data_every_length, 600)
{
	enum { ACCEPTED = SOFTCM_REP_PRIVATE_DATA + 1, REJECTED = SOFTCM_REJ_PRIVATE_DATA + 1 };
	struct conn *c = calloc(ACCEPTED + REJECTED, sizeof(*c));
	struct batch *b;
	int i, k, n = ACCEPTED + REJECTED;

	ASSERT_NE(NULL, c);
	b = new_batch(_metadata, self, PORT(27));
	for (i = 0; i < ACCEPTED; i++) {
		c[i].seed = i;
		c[i].req_len = i % (SOFTCM_REQ_PRIVATE_DATA + 1);
		c[i].rep_len = i;
		c[i].rej_len = -1;
	}
	for (; i < n; i++) {
		c[i].seed = i;
		c[i].req_len = (i * 5) % (SOFTCM_REQ_PRIVATE_DATA + 1);
		c[i].rej_len = i - ACCEPTED;
	}
	k = in_flight(50);
	for (i = 0; i < n; i += k)
		run_batch(_metadata, b, c + i, n - i < k ? n - i : k);
	EXPECT_EQ(0, rdma_destroy_id(b->listen));
	free(b);
	free(c);
	wait_idle();
}

/* 1000 connections on the stock kernel, 250 on the debug one (softcm_rounds()) */
TEST_F_TIMEOUT(cm, many_connections, 600)
{
	const int n = softcm_rounds(1000);
	struct conn *c = calloc(n, sizeof(*c));
	struct batch *b;
	int i, k;

	ASSERT_NE(NULL, c);
	b = new_batch(_metadata, self, PORT(26));
	for (i = 0; i < n; i++) {
		c[i].seed = i;
		c[i].req_len = i % (SOFTCM_REQ_PRIVATE_DATA + 1);
		c[i].rep_len = i % (SOFTCM_REP_PRIVATE_DATA + 1);
		c[i].rej_len = -1;
	}
	k = in_flight(100);
	for (i = 0; i < n; i += k)
		run_batch(_metadata, b, c + i, n - i < k ? n - i : k);
	EXPECT_EQ(0, rdma_destroy_id(b->listen));
	free(b);
	free(c);
	wait_idle();
}

TEST_HARNESS_MAIN
