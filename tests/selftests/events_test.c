// SPDX-License-Identifier: GPL-2.0
/*
 * The event records of read() in each format (issue 20): SET_OPTION level
 * SOFTCM_OPTION_FILE, and full records that carry what QUERY_ADDR and
 * QUERY_ROUTE answer at the moment they are read.
 *
 * Both sides speak the raw ioctls, each in its own file, in one namespace
 * of their own over 127.0.0.1; every record is compared byte for byte with
 * the answers of the commands it stands for.
 *
 * Then the page a file shares (mmap at SOFTCM_MMAP_EVENT_PAGE): what
 * mmap() accepts, poll() following its held count, its life against
 * close() and munmap() (the debug kernel's KASAN and kmemleak watch), and
 * MIGRATE_ID waking the destination's poller when nothing moved.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "ioctl_helpers.h"

#define NS	"sc-ev"
#define PORT	19700
#define EV_MS	20000

static int ev_ms(void)
{
	return EV_MS << softcm_slow_shift();
}

static int open_dev(void)
{
	return open("/dev/softcm", O_RDWR | O_CLOEXEC);
}

static int set_opt(int fd, __u32 handle, __u32 level, __u32 name, __u32 value)
{
	struct softcm_set_option o = {
		.handle = handle, .level = level, .optname = name, .value = value,
	};

	return ioctl(fd, SOFTCM_IOCTL_SET_OPTION, &o) ? -errno : 0;
}

static int set_format(int fd, __u32 format)
{
	return set_opt(fd, 0, SOFTCM_OPTION_FILE, SOFTCM_OPTION_FILE_EVENT_FORMAT, format);
}

static struct sockaddr_in lo(unsigned short port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	return sin;
}

/* A listener on 127.0.0.1:@port in file @fd; its handle, or -errno. */
static int listen_on(int fd, unsigned short port, __u32 *h)
{
	struct softcm_bind b = { .addr_len = sizeof(struct sockaddr_in) };
	struct softcm_listen l = { .backlog = 8 };
	struct sockaddr_in sin = lo(port);
	int ret = create_id(fd, SOFTCM_PS_TCP, 0x11, h);

	if (ret)
		return ret;
	b.handle = *h;
	memcpy(b.addr, &sin, sizeof(sin));
	if (ioctl(fd, SOFTCM_IOCTL_BIND, &b))
		return -errno;
	l.handle = *h;
	return ioctl(fd, SOFTCM_IOCTL_LISTEN, &l) ? -errno : 0;
}

/* A new id of @fd resolving its address to 127.0.0.1:@port; -errno. */
static int start_resolve(int fd, unsigned short port, __u32 *h)
{
	struct softcm_resolve_addr r = { .timeout_ms = 5000,
					 .dst_len = sizeof(struct sockaddr_in) };
	struct sockaddr_in sin = lo(port);
	int ret = create_id(fd, SOFTCM_PS_TCP, 0x22, h);

	if (ret)
		return ret;
	r.handle = *h;
	memcpy(r.dst, &sin, sizeof(sin));
	return ioctl(fd, SOFTCM_IOCTL_RESOLVE_ADDR, &r) ? -errno : 0;
}

static int resolve_route(int fd, __u32 h)
{
	struct softcm_resolve_route r = { .handle = h, .timeout_ms = 5000 };

	return ioctl(fd, SOFTCM_IOCTL_RESOLVE_ROUTE, &r) ? -errno : 0;
}

static int connect_id(int fd, __u32 h)
{
	struct softcm_connect c = { .handle = h };

	c.param.qp_num = 0x1234;
	c.param.responder_resources = 1;
	c.param.initiator_depth = 1;
	c.param.retry_count = 7;
	return ioctl(fd, SOFTCM_IOCTL_CONNECT, &c) ? -errno : 0;
}

static int accept_id(int fd, __u32 h)
{
	struct softcm_accept a = { .uid = 0x33, .handle = h };

	a.param.qp_num = 0x4321;
	a.param.responder_resources = 1;
	a.param.initiator_depth = 1;
	return ioctl(fd, SOFTCM_IOCTL_ACCEPT, &a) ? -errno : 0;
}

/* rdma_establish(): the RTU after CONNECT_RESPONSE. */
static int establish_id(int fd, __u32 h)
{
	struct softcm_accept a = { .handle = h, .flags = SOFTCM_ACCEPT_ESTABLISH };

	return ioctl(fd, SOFTCM_IOCTL_ACCEPT, &a) ? -errno : 0;
}

static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* The next full record of @fd within the bound; 0 or -errno (-ETIME). */
static int next_full(int fd, struct softcm_event_full *r)
{
	ssize_t n;

	memset(r, 0xa5, sizeof(*r));
	if (!readable(fd, ev_ms()))
		return -ETIME;
	n = read(fd, r, sizeof(*r));
	if (n < 0)
		return -errno;
	return n == sizeof(*r) ? 0 : -EMSGSIZE;
}

/* Poll QUERY_ID until id @h of @fd is in @state; 0 or -ETIME. */
static int wait_state(int fd, __u32 h, int state)
{
	long deadline = topo_now_ms() + ev_ms();

	while (state_of(fd, h) != state) {
		if (topo_now_ms() > deadline)
			return -ETIME;
		usleep(2000);
	}
	return 0;
}

static bool all_zero(const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		if (*c++)
			return false;
	return true;
}

/* One address of a record against QUERY_ADDR(@which) of its id, now. */
static void check_addr(struct __test_metadata *_metadata, int fd,
		       const struct softcm_event_full *r, int which)
{
	const void *rec_addr = which == SOFTCM_QUERY_LOCAL ? &r->local : &r->peer;
	__u32 rec_len = which == SOFTCM_QUERY_LOCAL ? r->local_len : r->peer_len;
	__u32 flag = which == SOFTCM_QUERY_LOCAL ? SOFTCM_EVENT_HAS_LOCAL :
						   SOFTCM_EVENT_HAS_PEER;
	unsigned char buf[sizeof(struct sockaddr_storage)] = { 0 };
	__u32 len = sizeof(buf);
	int ret = query_addr(fd, r->ev.handle, which, buf, &len);

	if (!ret) {
		EXPECT_EQ(flag, r->flags & flag);
		EXPECT_EQ(len, rec_len);
		EXPECT_EQ(0, memcmp(rec_addr, buf, sizeof(buf)));
	} else {
		EXPECT_EQ(-ENOTCONN, ret);
		EXPECT_EQ(0, r->flags & flag);
		EXPECT_EQ(0, rec_len);
		EXPECT_TRUE(all_zero(rec_addr, sizeof(buf)));
	}
}

/*
 * A full record against what QUERY_ADDR (local, peer) and QUERY_ROUTE
 * answer for its id now, byte for byte; absent parts must be zero.  The
 * callers ask while nothing can have changed since the read.
 */
static void check_full(struct __test_metadata *_metadata, int fd,
		       const struct softcm_event_full *r)
{
	struct softcm_query_route q = { .handle = r->ev.handle };

	EXPECT_EQ(0, r->flags & ~(SOFTCM_EVENT_HAS_LOCAL | SOFTCM_EVENT_HAS_PEER |
				  SOFTCM_EVENT_HAS_ROUTE));
	EXPECT_EQ(0, r->reserved0);
	check_addr(_metadata, fd, r, SOFTCM_QUERY_LOCAL);
	check_addr(_metadata, fd, r, SOFTCM_QUERY_PEER);
	if (!ioctl(fd, SOFTCM_IOCTL_QUERY_ROUTE, &q)) {
		EXPECT_EQ(SOFTCM_EVENT_HAS_ROUTE, r->flags & SOFTCM_EVENT_HAS_ROUTE);
		EXPECT_EQ(0, memcmp(&r->route, &q, sizeof(q)));
	} else {
		EXPECT_EQ(0, r->flags & SOFTCM_EVENT_HAS_ROUTE);
		EXPECT_TRUE(all_zero(&r->route, sizeof(r->route)));
	}
}

FIXTURE(ev) {
	int home, ns, stats;
};

FIXTURE_SETUP(ev)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, netns_fresh(NS));
	self->home = netns_self();
	self->ns = netns_open(NS);
	ASSERT_LE(0, self->home);
	ASSERT_LE(0, self->ns);
	self->stats = stats_open(self->ns, self->home);
	ASSERT_LE(0, self->stats);
	ASSERT_EQ(0, netns_enter(self->ns));
}

FIXTURE_TEARDOWN(ev)
{
	/* Everything of ours goes: connections (timewait included), ids, files. */
	EXPECT_EQ(0, stats_wait_idle(self->stats, STATS_IDLE_MS << softcm_slow_shift()));
	netns_enter(self->home);
	if (netns_del(NS))
		TH_LOG("namespace already gone");
}

/* Level FILE takes handle 0, a known name and a known format, nothing else. */
TEST_F(ev, file_option_validation)
{
	int fd = open_dev();
	__u32 h;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, create_id(fd, SOFTCM_PS_TCP, 1, &h));
	EXPECT_EQ(0, set_format(fd, SOFTCM_EVENT_FORMAT_FULL));
	EXPECT_EQ(0, set_format(fd, SOFTCM_EVENT_FORMAT_BASIC));
	/* Not an id's option: even a valid handle is refused. */
	EXPECT_EQ(-EINVAL, set_opt(fd, h, SOFTCM_OPTION_FILE,
				   SOFTCM_OPTION_FILE_EVENT_FORMAT, SOFTCM_EVENT_FORMAT_FULL));
	EXPECT_EQ(-EINVAL, set_format(fd, SOFTCM_EVENT_FORMAT_FULL + 1));
	EXPECT_EQ(-EINVAL, set_format(fd, ~0U));
	EXPECT_EQ(-ENOPROTOOPT, set_opt(fd, 0, SOFTCM_OPTION_FILE,
					SOFTCM_OPTION_FILE_EVENT_FORMAT + 1, 0));
	/* The id level is unchanged: an unknown level is still ENOPROTOOPT. */
	EXPECT_EQ(-ENOPROTOOPT, set_opt(fd, h, SOFTCM_OPTION_FILE + 1, 0, 0));
	EXPECT_EQ(0, set_opt(fd, h, SOFTCM_OPTION_ID, SOFTCM_OPTION_ID_TOS, 32));
	close(fd);
}

/*
 * A file reads basic records until it asks for full ones, and again once
 * it asks for basic ones back; a large buffer does not change the format.
 */
TEST_F(ev, basic_is_default_and_comes_back)
{
	union {
		struct softcm_event ev[4];
		struct softcm_event_full full[2];
	} buf;
	int fd = open_dev();
	__u32 h, h2, h3;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, start_resolve(fd, PORT, &h));
	ASSERT_TRUE(readable(fd, ev_ms()));
	EXPECT_EQ(sizeof(struct softcm_event), read(fd, &buf, sizeof(buf.full[0])));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, buf.ev[0].event);
	EXPECT_EQ(h, buf.ev[0].handle);

	ASSERT_EQ(0, set_format(fd, SOFTCM_EVENT_FORMAT_FULL));
	ASSERT_EQ(0, start_resolve(fd, PORT, &h2));
	ASSERT_TRUE(readable(fd, ev_ms()));
	EXPECT_EQ(sizeof(struct softcm_event_full), read(fd, &buf, sizeof(buf)));
	EXPECT_EQ(h2, buf.full[0].ev.handle);

	ASSERT_EQ(0, set_format(fd, SOFTCM_EVENT_FORMAT_BASIC));
	ASSERT_EQ(0, start_resolve(fd, PORT, &h3));
	ASSERT_TRUE(readable(fd, ev_ms()));
	EXPECT_EQ(sizeof(struct softcm_event), read(fd, &buf, sizeof(buf)));
	EXPECT_EQ(h3, buf.ev[0].handle);
	close(fd);
}

/* A buffer smaller than one full record is EINVAL, and loses nothing. */
TEST_F(ev, full_short_buffer_is_einval)
{
	struct softcm_event_full r;
	int fd = open_dev();
	__u32 h;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_format(fd, SOFTCM_EVENT_FORMAT_FULL));
	ASSERT_EQ(0, start_resolve(fd, PORT, &h));
	ASSERT_TRUE(readable(fd, ev_ms()));
	EXPECT_EQ(-1, read(fd, &r, sizeof(r) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(fd, &r, sizeof(struct softcm_event)));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, next_full(fd, &r));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, r.ev.event);
	EXPECT_EQ(h, r.ev.handle);
	close(fd);
}

/*
 * The active side's resolution: ADDR_RESOLVED carries both addresses and
 * no route (QUERY_ROUTE refuses one), ROUTE_RESOLVED the route too.
 */
TEST_F(ev, resolution_records_match_queries)
{
	struct sockaddr_in want = lo(PORT);
	struct softcm_event_full r;
	int fd = open_dev();
	__u32 h;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_format(fd, SOFTCM_EVENT_FORMAT_FULL));
	ASSERT_EQ(0, start_resolve(fd, PORT, &h));
	ASSERT_EQ(0, next_full(fd, &r));
	ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, r.ev.event);
	EXPECT_EQ(h, r.ev.handle);
	EXPECT_EQ(0x22, r.ev.uid);
	EXPECT_EQ(SOFTCM_EVENT_HAS_LOCAL | SOFTCM_EVENT_HAS_PEER, r.flags);
	EXPECT_EQ(sizeof(want), r.peer_len);
	EXPECT_EQ(0, memcmp(&r.peer, &want, sizeof(want)));
	check_full(_metadata, fd, &r);

	ASSERT_EQ(0, resolve_route(fd, h));
	ASSERT_EQ(0, next_full(fd, &r));
	ASSERT_EQ(SOFTCM_EVENT_ROUTE_RESOLVED, r.ev.event);
	EXPECT_EQ(SOFTCM_EVENT_HAS_LOCAL | SOFTCM_EVENT_HAS_PEER | SOFTCM_EVENT_HAS_ROUTE,
		  r.flags);
	EXPECT_EQ(h, r.route.handle);
	check_full(_metadata, fd, &r);
	close(fd);
}

/*
 * One read() returns every queued record that fits, each filled when it
 * is read: an ADDR_RESOLVED read after the route was resolved carries
 * that route.
 */
TEST_F(ev, several_records_in_one_read_filled_when_read)
{
	struct softcm_event_full r[3];
	int fd = open_dev();
	__u32 h;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_format(fd, SOFTCM_EVENT_FORMAT_FULL));
	ASSERT_EQ(0, start_resolve(fd, PORT, &h));
	ASSERT_EQ(0, wait_state(fd, h, SOFTCM_STATE_ADDR_RESOLVED));
	ASSERT_EQ(0, resolve_route(fd, h));
	/* The state changes under the id's mutex in the same step as the queueing. */
	ASSERT_EQ(0, wait_state(fd, h, SOFTCM_STATE_ROUTE_RESOLVED));

	memset(r, 0xa5, sizeof(r));
	ASSERT_EQ(2 * sizeof(r[0]), read(fd, r, sizeof(r)));
	EXPECT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, r[0].ev.event);
	EXPECT_EQ(SOFTCM_EVENT_ROUTE_RESOLVED, r[1].ev.event);
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(SOFTCM_EVENT_HAS_LOCAL | SOFTCM_EVENT_HAS_PEER |
			  SOFTCM_EVENT_HAS_ROUTE, r[i].flags);
		check_full(_metadata, fd, &r[i]);
	}
	/* The third slot was not written. */
	EXPECT_EQ(0xa5a5a5a5, r[2].flags);
	close(fd);
}

/*
 * A connection between two full files: the CONNECT_REQUEST carries the new
 * id's addresses and route (its peer is the client's local address, which
 * the listener has no idea of), CONNECT_RESPONSE and ESTABLISHED their
 * ids' own, as the commands answer.
 */
TEST_F(ev, connection_records_match_queries)
{
	unsigned char client_local[sizeof(struct sockaddr_storage)] = { 0 };
	__u32 len = sizeof(client_local), l, c, child;
	struct sockaddr_in want = lo(PORT);
	int srv = open_dev(), cli = open_dev();
	struct softcm_event_full r;

	ASSERT_LE(0, srv);
	ASSERT_LE(0, cli);
	ASSERT_EQ(0, set_format(srv, SOFTCM_EVENT_FORMAT_FULL));
	ASSERT_EQ(0, set_format(cli, SOFTCM_EVENT_FORMAT_FULL));
	ASSERT_EQ(0, listen_on(srv, PORT, &l));
	ASSERT_EQ(0, start_resolve(cli, PORT, &c));
	ASSERT_EQ(0, next_full(cli, &r));
	ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, r.ev.event);
	ASSERT_EQ(0, resolve_route(cli, c));
	ASSERT_EQ(0, next_full(cli, &r));
	ASSERT_EQ(SOFTCM_EVENT_ROUTE_RESOLVED, r.ev.event);
	ASSERT_EQ(0, connect_id(cli, c));
	ASSERT_EQ(0, query_addr(cli, c, SOFTCM_QUERY_LOCAL, client_local, &len));

	ASSERT_EQ(0, next_full(srv, &r));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_REQUEST, r.ev.event);
	child = r.ev.handle;
	EXPECT_NE(l, child);
	EXPECT_EQ(SOFTCM_EVENT_HAS_LOCAL | SOFTCM_EVENT_HAS_PEER | SOFTCM_EVENT_HAS_ROUTE,
		  r.flags);
	EXPECT_EQ(child, r.route.handle);
	EXPECT_EQ(len, r.peer_len);
	EXPECT_EQ(0, memcmp(&r.peer, client_local, sizeof(client_local)));
	EXPECT_EQ(0, memcmp(&r.local, &want, sizeof(want)));
	check_full(_metadata, srv, &r);

	ASSERT_EQ(0, accept_id(srv, child));
	ASSERT_EQ(0, next_full(cli, &r));
	ASSERT_EQ(SOFTCM_EVENT_CONNECT_RESPONSE, r.ev.event);
	EXPECT_EQ(c, r.ev.handle);
	check_full(_metadata, cli, &r);
	ASSERT_EQ(0, establish_id(cli, c));

	ASSERT_EQ(0, next_full(srv, &r));
	ASSERT_EQ(SOFTCM_EVENT_ESTABLISHED, r.ev.event);
	EXPECT_EQ(child, r.ev.handle);
	EXPECT_EQ(0x33, r.ev.uid);
	EXPECT_EQ(SOFTCM_EVENT_HAS_LOCAL | SOFTCM_EVENT_HAS_PEER | SOFTCM_EVENT_HAS_ROUTE,
		  r.flags);
	check_full(_metadata, srv, &r);
	close(cli);
	close(srv);
}

/*
 * A connection that is over has no peer: where QUERY_ADDR(PEER) is
 * ENOTCONN, the record says so (HAS_PEER clear, the peer zero).  Nothing
 * listens on the port: the REQ gets a REJ.
 */
TEST_F(ev, rejected_record_has_no_peer)
{
	unsigned char buf[sizeof(struct sockaddr_storage)];
	__u32 len = sizeof(buf), h;
	struct softcm_event_full r;
	int fd = open_dev();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_format(fd, SOFTCM_EVENT_FORMAT_FULL));
	ASSERT_EQ(0, start_resolve(fd, PORT + 1, &h));
	ASSERT_EQ(0, next_full(fd, &r));
	ASSERT_EQ(SOFTCM_EVENT_HAS_PEER, r.flags & SOFTCM_EVENT_HAS_PEER);
	ASSERT_EQ(0, resolve_route(fd, h));
	ASSERT_EQ(0, next_full(fd, &r));
	ASSERT_EQ(0, connect_id(fd, h));

	ASSERT_EQ(0, next_full(fd, &r));
	ASSERT_EQ(SOFTCM_EVENT_REJECTED, r.ev.event);
	EXPECT_EQ(-ENOTCONN, query_addr(fd, h, SOFTCM_QUERY_PEER, buf, &len));
	EXPECT_EQ(SOFTCM_EVENT_HAS_LOCAL, r.flags & (SOFTCM_EVENT_HAS_LOCAL |
						     SOFTCM_EVENT_HAS_PEER));
	EXPECT_EQ(0, r.peer_len);
	check_full(_metadata, fd, &r);
	close(fd);
}

#define PG	SOFTCM_EVENT_PAGE_SIZE

static struct softcm_event_page *map_page(int fd)
{
	void *p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       SOFTCM_MMAP_EVENT_PAGE);

	return p == MAP_FAILED ? NULL : p;
}

/* -errno of an mmap() of @fd that must fail, or 0 if it did not. */
static int mmap_err(int fd, size_t len, int prot, int flags, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p != MAP_FAILED) {
		munmap(p, len);
		return 0;
	}
	return -errno;
}

/*
 * One page, at offset SOFTCM_MMAP_EVENT_PAGE, shared, not executable now
 * or later, not growable; zeroed, and the same page for every mapping of
 * a file.
 */
TEST_F(ev, mmap_arguments)
{
	int fd = open_dev(), fd2 = open_dev();
	struct softcm_event_page *p, *q, *r;
	const unsigned char *c;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-EINVAL, mmap_err(fd, PG, PROT_READ | PROT_WRITE, MAP_SHARED, PG));
	EXPECT_EQ(-EINVAL, mmap_err(fd, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	EXPECT_EQ(-EINVAL, mmap_err(fd, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, 0));
	EXPECT_EQ(-EINVAL, mmap_err(fd, PG, PROT_READ, MAP_PRIVATE, 0));
	EXPECT_EQ(-EINVAL, mmap_err(fd, PG, PROT_READ | PROT_EXEC, MAP_SHARED, 0));

	p = map_page(fd);
	ASSERT_NE(NULL, p);
	c = (const unsigned char *)p;
	for (int i = 0; i < PG; i++)
		if (c[i])
			ASSERT_EQ(0, c[i]);
	/* Not executable later either, and not growable. */
	EXPECT_EQ(-1, mprotect(p, PG, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(MAP_FAILED, mremap(p, PG, 2 * PG, MREMAP_MAYMOVE));

	/* Every mapping of a file shares its page; another file has its own. */
	q = map_page(fd);
	r = map_page(fd2);
	ASSERT_NE(NULL, q);
	ASSERT_NE(NULL, r);
	p->held = 7;
	EXPECT_EQ(7, q->held);
	EXPECT_EQ(0, r->held);
	munmap(p, PG);
	munmap(q, PG);
	munmap(r, PG);
	close(fd);
	close(fd2);
}

/*
 * poll() reports the file readable while the page's held count is not
 * zero, with nothing queued (read() still has nothing to return).
 */
TEST_F(ev, poll_follows_held)
{
	struct softcm_event_full r;
	struct softcm_event_page *p;
	int fd = open("/dev/softcm", O_RDWR | O_CLOEXEC | O_NONBLOCK);

	ASSERT_LE(0, fd);
	EXPECT_FALSE(readable(fd, 0));
	p = map_page(fd);
	ASSERT_NE(NULL, p);
	EXPECT_FALSE(readable(fd, 0));
	p->held = 1;
	EXPECT_TRUE(readable(fd, 0));
	EXPECT_EQ(-1, read(fd, &r, sizeof(r)));
	EXPECT_EQ(EAGAIN, errno);
	p->held = 0xffffffff;
	EXPECT_TRUE(readable(fd, 0));
	p->held = 0;
	EXPECT_FALSE(readable(fd, 0));
	munmap(p, PG);
	close(fd);
}

/*
 * The page outlives its mappings while the file is open (a page freed at
 * munmap() is a KASAN or debug-objects report in the next poll() on the
 * debug kernel), and the close() of the file while mapped (the mapping
 * pins the file, and its page table entry the page).
 */
TEST_F(ev, page_outlives_close_and_munmap)
{
	struct softcm_event_page *p, *q;
	int fd = open_dev();

	ASSERT_LE(0, fd);
	p = map_page(fd);
	ASSERT_NE(NULL, p);
	p->held = 3;
	/* munmap() before close(): the file keeps the page and its count. */
	ASSERT_EQ(0, munmap(p, PG));
	EXPECT_TRUE(readable(fd, 0));
	q = map_page(fd);
	ASSERT_NE(NULL, q);
	EXPECT_EQ(3, q->held);
	q->held = 0;
	EXPECT_FALSE(readable(fd, 0));

	/* close() before munmap(): the mapping keeps it. */
	close(fd);
	q->held = 5;
	EXPECT_EQ(5, q->held);
	for (int i = 2; i < PG / 4; i++)
		((volatile __u32 *)q)[i] = i;
	ASSERT_EQ(0, munmap(q, PG));
}

struct poller {
	int fd;
	int ret;
	short revents;
	pid_t tid;
	volatile bool started;
};

static void *poll_thread(void *arg)
{
	struct poller *pl = arg;
	struct pollfd pfd = { .fd = pl->fd, .events = POLLIN };

	pl->tid = syscall(SYS_gettid);
	__atomic_store_n(&pl->started, true, __ATOMIC_RELEASE);
	/*
	 * No timeout: poll() checks the file once more when it times out,
	 * and would then see the held count without any wakeup.  The test's
	 * join bounds the wait instead.
	 */
	pl->ret = poll(&pfd, 1, -1);
	pl->revents = pfd.revents;
	return NULL;
}

/* Wait (bounded) until thread @tid sleeps in poll(); 0 or -ETIME. */
static int wait_in_poll(pid_t tid)
{
	long deadline = topo_now_ms() + ev_ms();
	char path[64], wchan[128];

	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", tid);
	while (topo_now_ms() < deadline) {
		if (read_text(path, wchan, sizeof(wchan)) > 0 && strstr(wchan, "poll"))
			return 0;
		usleep(1000);
	}
	return -ETIME;
}

/*
 * A library that moves an id with records it holds counts them in the
 * destination's page first; MIGRATE_ID then wakes a poller asleep on the
 * destination, though no queued event moved.
 */
TEST_F(ev, migrate_wakes_destination_poller)
{
	int a = open_dev(), b = open_dev();
	struct softcm_migrate_id m = { .fd = a };
	struct softcm_event_page *p;
	struct poller pl = { .ret = -2 };
	struct timespec ts;
	pthread_t t;
	int joined;
	__u32 h;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, create_id(a, SOFTCM_PS_TCP, 0x44, &h));
	p = map_page(b);
	ASSERT_NE(NULL, p);

	pl.fd = b;
	ASSERT_EQ(0, pthread_create(&t, NULL, poll_thread, &pl));
	while (!__atomic_load_n(&pl.started, __ATOMIC_ACQUIRE))
		sched_yield();
	ASSERT_EQ(0, wait_in_poll(pl.tid));
	/* No wakeup for this: the poller must not see it yet. */
	p->held = 1;
	m.handle = h;
	ASSERT_EQ(0, ioctl(b, SOFTCM_IOCTL_MIGRATE_ID, &m));
	/* only the wakeup ends that poll(): no timeout, nothing else comes */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ev_ms() / 1000;
	joined = pthread_timedjoin_np(t, NULL, &ts);
	if (joined) {
		pthread_cancel(t);
		pthread_join(t, NULL);
	}
	EXPECT_EQ(0, joined) TH_LOG("MIGRATE_ID did not wake the poller");
	if (!joined) {
		EXPECT_EQ(1, pl.ret);
		EXPECT_EQ(POLLIN, pl.revents & POLLIN);
	}
	EXPECT_EQ(SOFTCM_STATE_IDLE, state_of(b, m.handle));
	munmap(p, PG);
	close(a);
	close(b);
}

TEST_HARNESS_MAIN
