// SPDX-License-Identifier: GPL-2.0
/*
 * libsoftcm as a librdmacm: this program is written against rdma-core's
 * own <rdma/rdma_cma.h> and linked with -lsoftcm only.  Synchronous and
 * asynchronous ids, binding and listening with the addresses the header's
 * inline getters read, options, migration, getaddrinfo and create_ep, the
 * getpeername-style calls, and the verbs calls of an id without a device.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <sys/ioctl.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "softcm.h"
#include "vm_helpers.h"
#include "topo_helpers.h"

static struct sockaddr_in sin4(const char *ip, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &sin.sin_addr);
	return sin;
}

FIXTURE(cm) {
	struct rdma_event_channel *ch;
};

FIXTURE_SETUP(cm)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	self->ch = rdma_create_event_channel();
	ASSERT_NE(NULL, self->ch);
}

FIXTURE_TEARDOWN(cm)
{
	rdma_destroy_event_channel(self->ch);
	/*
	 * Every test works in this namespace: with its channel closed,
	 * nothing of softcm's may be left in it.
	 */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

TEST_F(cm, async_bind_listen_addresses)
{
	struct sockaddr_in sin = sin4("127.0.0.1", 0), got;
	struct rdma_cm_id *id;
	socklen_t len = sizeof(got);
	int ctx;

	ASSERT_EQ(0, rdma_create_id(self->ch, &id, &ctx, RDMA_PS_TCP));
	EXPECT_EQ(self->ch, id->channel);
	EXPECT_EQ(&ctx, id->context);
	EXPECT_EQ(RDMA_PS_TCP, id->ps);
	EXPECT_EQ(IBV_QPT_RC, id->qp_type);
	EXPECT_EQ(NULL, id->verbs);
	EXPECT_EQ(0, rdma_get_local_addr(id)->sa_family);
	EXPECT_EQ(0, rdma_get_peer_addr(id)->sa_family);

	ASSERT_EQ(0, rdma_bind_addr(id, (struct sockaddr *)&sin));
	EXPECT_EQ(AF_INET, rdma_get_local_addr(id)->sa_family);
	EXPECT_EQ(sin.sin_addr.s_addr,
		  ((struct sockaddr_in *)rdma_get_local_addr(id))->sin_addr.s_addr);
	EXPECT_NE(0, rdma_get_src_port(id));
	/*
	 * No peer: the bound family with zeroes, as rdma_bind_addr() leaves
	 * it under librdmacm (measured by fidelity_test.sh).
	 */
	EXPECT_EQ(AF_INET, rdma_get_peer_addr(id)->sa_family);
	EXPECT_EQ(0, ((struct sockaddr_in *)rdma_get_peer_addr(id))->sin_addr.s_addr);
	EXPECT_EQ(0, rdma_get_dst_port(id));

	ASSERT_EQ(0, softcm_getsockname(id, (struct sockaddr *)&got, &len));
	EXPECT_EQ(sizeof(got), len);
	EXPECT_EQ(rdma_get_src_port(id), got.sin_port);
	len = sizeof(got);
	EXPECT_EQ(-1, softcm_getpeername(id, (struct sockaddr *)&got, &len));
	EXPECT_EQ(ENOTCONN, errno);

	ASSERT_EQ(0, rdma_listen(id, 0));
	EXPECT_EQ(0, rdma_destroy_id(id));
}

TEST_F(cm, listen_from_idle_fills_local_address)
{
	struct rdma_cm_id *id;

	ASSERT_EQ(0, rdma_create_id(self->ch, &id, NULL, RDMA_PS_UDP));
	EXPECT_EQ(IBV_QPT_UD, id->qp_type);
	ASSERT_EQ(0, rdma_listen(id, 4));
	EXPECT_EQ(AF_INET, rdma_get_local_addr(id)->sa_family);
	EXPECT_NE(0, rdma_get_src_port(id));
	EXPECT_EQ(0, rdma_destroy_id(id));
}

TEST_F(cm, sync_id_has_its_own_channel)
{
	struct sockaddr_in sin = sin4("127.0.0.1", 0);
	struct rdma_cm_id *id;

	ASSERT_EQ(0, rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	ASSERT_NE(NULL, id->channel);
	EXPECT_NE(self->ch, id->channel);
	EXPECT_EQ(0, rdma_bind_addr(id, (struct sockaddr *)&sin));
	EXPECT_EQ(0, rdma_destroy_id(id));
}

TEST_F(cm, errors)
{
	struct sockaddr_in sin = sin4("127.0.0.1", 0);
	struct sockaddr bad = { .sa_family = AF_UNIX };
	struct rdma_cm_id *id, *id2;

	EXPECT_EQ(-1, rdma_create_id(self->ch, &id, NULL, RDMA_PS_IB));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, rdma_create_id(self->ch, &id, NULL, RDMA_PS_IPOIB));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, rdma_create_id(self->ch, &id, NULL, RDMA_PS_TCP));
	/* librdmacm 44 crashes on these; softcm answers */
	EXPECT_EQ(-1, rdma_resolve_route(id, 2000));	/* an idle id */
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, rdma_bind_addr(id, &bad));
	EXPECT_EQ(EINVAL, errno);
	sin.sin_addr.s_addr = inet_addr("192.0.2.7");
	EXPECT_EQ(-1, rdma_bind_addr(id, (struct sockaddr *)&sin));
	EXPECT_EQ(EADDRNOTAVAIL, errno);
	sin = sin4("127.0.0.1", 20101);
	ASSERT_EQ(0, rdma_bind_addr(id, (struct sockaddr *)&sin));
	ASSERT_EQ(0, rdma_create_id(self->ch, &id2, NULL, RDMA_PS_TCP));
	EXPECT_EQ(-1, rdma_bind_addr(id2, (struct sockaddr *)&sin));
	EXPECT_EQ(EADDRINUSE, errno);
	ASSERT_EQ(0, rdma_listen(id, 1));
	EXPECT_EQ(-1, rdma_accept(id, NULL));	/* a listener */
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, rdma_destroy_id(id2));
	EXPECT_EQ(0, rdma_destroy_id(id));
}

TEST_F(cm, options)
{
	struct rdma_cm_id *a, *b;
	struct sockaddr_in sin = sin4("127.0.0.1", 20102);
	uint8_t tos = 32;
	int one = 1;

	ASSERT_EQ(0, rdma_create_id(self->ch, &a, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_create_id(self->ch, &b, NULL, RDMA_PS_TCP));
	EXPECT_EQ(0, rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)));
	EXPECT_EQ(-1, rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &one, sizeof(one)));
	EXPECT_EQ(EINVAL, errno);
	/* librdmacm's errors are the kernel ucma's, checked in its order */
	EXPECT_EQ(-1, rdma_set_option(a, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &one, sizeof(one)));
	EXPECT_EQ(EINVAL, errno);	/* no IB device to take a path */
	EXPECT_EQ(-1, rdma_set_option(a, RDMA_OPTION_IB, 9, &one, sizeof(one)));
	EXPECT_EQ(ENOSYS, errno);
	EXPECT_EQ(-1, rdma_set_option(a, 7, 0, &one, sizeof(one)));
	EXPECT_EQ(ENOSYS, errno);
	EXPECT_EQ(-1, rdma_set_option(a, RDMA_OPTION_ID, 99, &one, sizeof(one)));
	EXPECT_EQ(ENOSYS, errno);
	EXPECT_EQ(-1, rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, NULL, 1));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, NULL, 0));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)));
	ASSERT_EQ(0, rdma_set_option(b, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)));
	EXPECT_EQ(0, rdma_bind_addr(a, (struct sockaddr *)&sin));
	EXPECT_EQ(0, rdma_bind_addr(b, (struct sockaddr *)&sin));
	EXPECT_EQ(0, rdma_destroy_id(a));
	EXPECT_EQ(0, rdma_destroy_id(b));
}

TEST_F(cm, migrate_between_channels)
{
	struct sockaddr_in sin = sin4("127.0.0.1", 20103), got;
	struct rdma_event_channel *ch2;
	struct rdma_cm_id *id, *other;
	socklen_t len = sizeof(got);

	ch2 = rdma_create_event_channel();
	ASSERT_NE(NULL, ch2);
	ASSERT_EQ(0, rdma_create_id(self->ch, &id, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(id, (struct sockaddr *)&sin));
	ASSERT_EQ(0, rdma_migrate_id(id, ch2));
	EXPECT_EQ(ch2, id->channel);
	ASSERT_EQ(0, softcm_getsockname(id, (struct sockaddr *)&got, &len));
	EXPECT_EQ(htons(20103), got.sin_port);

	/* The old channel's close does not take the id along. */
	rdma_destroy_event_channel(self->ch);
	self->ch = rdma_create_event_channel();
	ASSERT_NE(NULL, self->ch);
	ASSERT_EQ(0, rdma_create_id(self->ch, &other, NULL, RDMA_PS_TCP));
	EXPECT_EQ(-1, rdma_bind_addr(other, (struct sockaddr *)&sin));
	EXPECT_EQ(EADDRINUSE, errno);

	/* To a private channel: the id becomes synchronous. */
	ASSERT_EQ(0, rdma_migrate_id(id, NULL));
	EXPECT_NE(ch2, id->channel);
	/* already synchronous: EINVAL, as librdmacm */
	EXPECT_EQ(-1, rdma_migrate_id(id, NULL));
	EXPECT_EQ(EINVAL, errno);
	rdma_destroy_event_channel(ch2);
	EXPECT_EQ(0, rdma_destroy_id(id));
	EXPECT_EQ(0, rdma_bind_addr(other, (struct sockaddr *)&sin));
	EXPECT_EQ(0, rdma_destroy_id(other));
}

/*
 * A channel destroyed before its ids, which librdmacm's contract forbids
 * (review R6: the ids then read freed memory, and could ioctl a
 * descriptor number another open() had taken): its ids keep it, its
 * descriptor open, until the last of them goes; rdma_destroy_id() works
 * as usual, and the last one closes it.
 */
TEST_F(cm, channel_destroyed_before_its_ids)
{
	struct sockaddr_in sin = sin4("127.0.0.1", 20104);
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *a, *b;
	int fd;

	ASSERT_NE(NULL, ch);
	fd = ch->fd;
	ASSERT_EQ(0, rdma_create_id(ch, &a, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_create_id(ch, &b, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(a, (struct sockaddr *)&sin));
	rdma_destroy_event_channel(ch);
	ASSERT_LE(0, fcntl(fd, F_GETFD)) TH_LOG("the channel's descriptor closed under its ids");
	EXPECT_EQ(0, rdma_destroy_id(a));
	EXPECT_LE(0, fcntl(fd, F_GETFD));
	EXPECT_EQ(0, rdma_destroy_id(b));
	EXPECT_EQ(-1, fcntl(fd, F_GETFD));
	EXPECT_EQ(EBADF, errno);
	/* the kernel's id went with it: its port is free */
	ASSERT_EQ(0, rdma_create_id(self->ch, &a, NULL, RDMA_PS_TCP));
	EXPECT_EQ(0, rdma_bind_addr(a, (struct sockaddr *)&sin));
	EXPECT_EQ(0, rdma_destroy_id(a));
}

TEST_F(cm, nonblocking_channel)
{
	struct rdma_cm_event *event;
	int flags = fcntl(self->ch->fd, F_GETFL);

	ASSERT_EQ(0, fcntl(self->ch->fd, F_SETFL, flags | O_NONBLOCK));
	EXPECT_EQ(-1, rdma_get_cm_event(self->ch, &event));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_F(cm, getpeername_contract)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct rdma_cm_id *id;
	unsigned char buf[8];
	socklen_t len;

	len = sizeof(buf);
	EXPECT_EQ(-1, softcm_getpeername(NULL, (struct sockaddr *)buf, &len));
	EXPECT_EQ(EBADF, errno);
	ASSERT_EQ(0, rdma_create_id(self->ch, &id, NULL, RDMA_PS_TCP));
	/* Linux's order: ENOTCONN before the buffers are looked at */
	EXPECT_EQ(-1, softcm_getpeername(id, NULL, &len));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, softcm_getpeername(id, (struct sockaddr *)buf, NULL));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, softcm_getsockname(id, NULL, &len));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, softcm_getsockname(id, (struct sockaddr *)buf, NULL));
	EXPECT_EQ(EFAULT, errno);
	len = (socklen_t)-1;
	EXPECT_EQ(-1, softcm_getsockname(id, (struct sockaddr *)buf, &len));
	EXPECT_EQ(EINVAL, errno);
	len = 0;
	EXPECT_EQ(-1, softcm_getpeername(id, NULL, &len));
	EXPECT_EQ(ENOTCONN, errno);

	/* Truncated: what fits is written, the full size reported. */
	ASSERT_EQ(0, rdma_bind_addr(id, (struct sockaddr *)&sin6));
	len = sizeof(buf);
	ASSERT_EQ(0, softcm_getsockname(id, (struct sockaddr *)buf, &len));
	EXPECT_EQ(sizeof(struct sockaddr_in6), len);
	EXPECT_EQ(AF_INET6, *(sa_family_t *)buf);
	/* A NULL buffer of length 0 is no fault: the size comes back. */
	len = 0;
	EXPECT_EQ(0, softcm_getsockname(id, NULL, &len));
	EXPECT_EQ(sizeof(struct sockaddr_in6), len);
	EXPECT_EQ(0, rdma_destroy_id(id));
}

/* Wait up to 10 s for the next event on @ch (a nonblocking read). */
static int next_event(struct rdma_event_channel *ch, struct rdma_cm_event **event)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	if (poll(&p, 1, 10000) != 1)
		return -1;
	return rdma_get_cm_event(ch, event);
}

/* rdma_get_cm_event(3): "NULL if the event does not include private data" */
TEST_F(cm, private_data_null_without_data)
{
	struct sockaddr_in dst = sin4("127.0.0.1", 7471);
	struct rdma_cm_event *event;
	struct rdma_cm_id *id, *ud;

	ASSERT_EQ(0, rdma_create_id(self->ch, &id, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000));
	ASSERT_EQ(0, next_event(self->ch, &event));
	EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, event->event);
	EXPECT_EQ(0, event->param.conn.private_data_len);
	EXPECT_EQ(NULL, event->param.conn.private_data);
	EXPECT_EQ(0, rdma_ack_cm_event(event));
	ASSERT_EQ(0, rdma_resolve_route(id, 2000));
	ASSERT_EQ(0, next_event(self->ch, &event));
	EXPECT_EQ(RDMA_CM_EVENT_ROUTE_RESOLVED, event->event);
	EXPECT_EQ(NULL, event->param.conn.private_data);
	EXPECT_EQ(0, rdma_ack_cm_event(event));

	ASSERT_EQ(0, rdma_create_id(self->ch, &ud, NULL, RDMA_PS_UDP));
	ASSERT_EQ(0, rdma_resolve_addr(ud, NULL, (struct sockaddr *)&dst, 2000));
	ASSERT_EQ(0, next_event(self->ch, &event));
	EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, event->event);
	EXPECT_EQ(0, event->param.ud.private_data_len);
	EXPECT_EQ(NULL, event->param.ud.private_data);
	EXPECT_EQ(0, rdma_ack_cm_event(event));
	EXPECT_EQ(0, rdma_destroy_id(ud));
	EXPECT_EQ(0, rdma_destroy_id(id));
}

/*
 * librdmacm's rdma_reject() leaves a synchronous id's CONNECT_REQUEST in
 * id->event until rdma_destroy_id(); a program may read it after.
 */
TEST_F(cm, reject_keeps_sync_event)
{
	struct sockaddr_in sin = sin4("127.0.0.1", 20111);
	struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_id *listen, *client, *req;
	struct rdma_cm_event *event;

	ASSERT_EQ(0, rdma_create_id(NULL, &listen, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(listen, (struct sockaddr *)&sin));
	ASSERT_EQ(0, rdma_listen(listen, 1));
	ASSERT_EQ(0, rdma_create_id(self->ch, &client, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_resolve_addr(client, NULL, (struct sockaddr *)&sin, 2000));
	ASSERT_EQ(0, next_event(self->ch, &event));
	ASSERT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, event->event);
	EXPECT_EQ(0, rdma_ack_cm_event(event));
	ASSERT_EQ(0, rdma_resolve_route(client, 2000));
	ASSERT_EQ(0, next_event(self->ch, &event));
	ASSERT_EQ(RDMA_CM_EVENT_ROUTE_RESOLVED, event->event);
	EXPECT_EQ(0, rdma_ack_cm_event(event));
	ASSERT_EQ(0, rdma_connect(client, &param));

	ASSERT_EQ(0, rdma_get_request(listen, &req));
	ASSERT_NE(NULL, req->event);
	EXPECT_EQ(RDMA_CM_EVENT_CONNECT_REQUEST, req->event->event);
	EXPECT_EQ(0, rdma_reject(req, NULL, 0));
	ASSERT_NE(NULL, req->event);
	EXPECT_EQ(RDMA_CM_EVENT_CONNECT_REQUEST, req->event->event);
	EXPECT_EQ(req, req->event->id);

	ASSERT_EQ(0, next_event(self->ch, &event));
	EXPECT_EQ(RDMA_CM_EVENT_REJECTED, event->event);
	EXPECT_EQ(28, event->status);
	EXPECT_EQ(0, rdma_ack_cm_event(event));
	EXPECT_EQ(0, rdma_destroy_id(req));	/* gives the event back */
	EXPECT_EQ(0, rdma_destroy_id(client));
	EXPECT_EQ(0, rdma_destroy_id(listen));
}

struct migrator {
	struct rdma_cm_id *id;
	struct rdma_event_channel *to;
	int ret;
};

static void *migrate_in_thread(void *p)
{
	struct migrator *m = p;

	m->ret = rdma_migrate_id(m->id, m->to);
	return NULL;
}

/*
 * While rdma_migrate_id() waits for the old channel's events to be
 * acknowledged, the id already lives on the new channel: another thread
 * sees the new channel and a handle that works there (librdmacm switches
 * id->channel before it waits).
 */
TEST_F(cm, migrate_switches_before_waiting)
{
	struct sockaddr_in dst = sin4("127.0.0.1", 7471), got;
	struct rdma_event_channel *ch2;
	struct rdma_cm_event *event;
	struct migrator m = { 0 };
	socklen_t len;
	pthread_t th;
	int i;

	ch2 = rdma_create_event_channel();
	ASSERT_NE(NULL, ch2);
	ASSERT_EQ(0, rdma_create_id(self->ch, &m.id, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_resolve_addr(m.id, NULL, (struct sockaddr *)&dst, 2000));
	ASSERT_EQ(0, next_event(self->ch, &event));	/* held: migrate waits */
	m.to = ch2;
	ASSERT_EQ(0, pthread_create(&th, NULL, migrate_in_thread, &m));
	for (i = 0; i < 10000; i++) {	/* until the id has moved */
		if (__atomic_load_n(&m.id->channel, __ATOMIC_SEQ_CST) == ch2)
			break;
		usleep(1000);
	}
	EXPECT_EQ(ch2, __atomic_load_n(&m.id->channel, __ATOMIC_SEQ_CST));
	len = sizeof(got);
	EXPECT_EQ(0, softcm_getsockname(m.id, (struct sockaddr *)&got, &len));
	EXPECT_EQ(AF_INET, got.sin_family);
	/* resolved, not connected: the handle works, getpeername says so */
	len = sizeof(got);
	EXPECT_EQ(-1, softcm_getpeername(m.id, (struct sockaddr *)&got, &len));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(htons(7471), rdma_get_dst_port(m.id));
	EXPECT_EQ(0, rdma_ack_cm_event(event));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, m.ret);
	EXPECT_EQ(0, rdma_destroy_id(m.id));
	rdma_destroy_event_channel(ch2);
}

TEST(getaddrinfo_and_create_ep)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE | RAI_NUMERICHOST };
	struct rdma_addrinfo *res;
	struct sockaddr_in *sin;
	struct rdma_cm_id *id;

	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, rdma_getaddrinfo("127.0.0.1", "7471", &hints, &res));
	EXPECT_EQ(AF_INET, res->ai_family);
	EXPECT_EQ(RDMA_PS_TCP, res->ai_port_space);
	EXPECT_EQ(IBV_QPT_RC, res->ai_qp_type);
	ASSERT_NE(NULL, res->ai_src_addr);
	EXPECT_EQ(NULL, res->ai_dst_addr);
	sin = (struct sockaddr_in *)res->ai_src_addr;
	EXPECT_EQ(htons(7471), sin->sin_port);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), sin->sin_addr.s_addr);

	ASSERT_EQ(0, rdma_create_ep(&id, res, NULL, NULL));
	EXPECT_EQ(htons(7471), rdma_get_src_port(id));
	EXPECT_EQ(0, rdma_listen(id, 0));
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(res);

	/* Active side: a destination, and the port space from the hints. */
	hints.ai_flags = RAI_NUMERICHOST;
	hints.ai_port_space = RDMA_PS_UDP;
	ASSERT_EQ(0, rdma_getaddrinfo("::1", "7174", &hints, &res));
	EXPECT_EQ(AF_INET6, res->ai_family);
	EXPECT_EQ(RDMA_PS_UDP, res->ai_port_space);
	ASSERT_NE(NULL, res->ai_dst_addr);
	EXPECT_EQ(sizeof(struct sockaddr_in6), res->ai_dst_len);
	rdma_freeaddrinfo(res);

	/* a getaddrinfo(3) code, as librdmacm returns it */
	EXPECT_EQ(EAI_NONAME, rdma_getaddrinfo("not-an-address", "1", &hints, &res));
	/* nothing to resolve; with hints it would be built from their addresses */
	EXPECT_EQ(-1, rdma_getaddrinfo(NULL, NULL, NULL, &res));
	EXPECT_EQ(EINVAL, errno);

	/* Passive hints and no names: a result without addresses, as
	 * librdmacm's, which rdma_create_ep() refuses as rdma_bind_addr(NULL).
	 */
	hints.ai_flags = RAI_PASSIVE;
	ASSERT_EQ(0, rdma_getaddrinfo(NULL, NULL, &hints, &res));
	EXPECT_EQ(NULL, res->ai_src_addr);
	EXPECT_EQ(NULL, res->ai_dst_addr);
	EXPECT_EQ(-1, rdma_create_ep(&id, res, NULL, NULL));
	EXPECT_EQ(EINVAL, errno);
	rdma_freeaddrinfo(res);
	/* every id and file this test made is gone */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

/*
 * An id without an address has no device, so no QP (verbs_lib_test has
 * the device and the QPs); what softcm does not have fails as softcm(7)
 * says: SRQs EOPNOTSUPP, multicast and rdma_notify() ENOSYS.
 */
TEST(verbs_calls_without_a_device)
{
	struct ibv_qp_init_attr qp_attr = { .qp_type = IBV_QPT_RC };
	struct ibv_srq_init_attr srq_attr = { 0 };
	struct rdma_cm_id *id;

	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	EXPECT_EQ(NULL, id->verbs);
	EXPECT_EQ(-1, rdma_create_qp(id, NULL, &qp_attr));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, id->qp);
	EXPECT_EQ(-1, rdma_create_srq(id, NULL, &srq_attr));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(-1, rdma_join_multicast(id, NULL, NULL));
	EXPECT_EQ(ENOSYS, errno);
	EXPECT_EQ(-1, rdma_notify(id, IBV_EVENT_COMM_EST));
	EXPECT_EQ(ENOSYS, errno);
	rdma_destroy_qp(id);
	EXPECT_EQ(0, rdma_destroy_id(id));
	/* every id and file this test made is gone */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

/* What the library refuses before asking the kernel, as librdmacm. */
TEST_F(cm, connection_calls_checked_by_the_library)
{
	struct rdma_conn_param param = { .responder_resources = 129 };
	struct rdma_cm_id *id, *req;
	int one = 1;

	ASSERT_EQ(0, rdma_create_id(self->ch, &id, NULL, RDMA_PS_TCP));
	/* No QP, so a REQ without parameters would have no QP number. */
	EXPECT_EQ(-1, rdma_connect(id, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, rdma_connect(id, &param));	/* above the maximum, 128 */
	EXPECT_EQ(EINVAL, errno);
	param.responder_resources = RDMA_MAX_RESP_RES;
	param.initiator_depth = 129;
	EXPECT_EQ(-1, rdma_connect(id, &param));
	EXPECT_EQ(EINVAL, errno);

	/* Kept for compatibility: accepted, and it changes nothing. */
	EXPECT_EQ(0, rdma_set_option(id, RDMA_OPTION_ID, SOFTCM_OPTION_ID_CONNECT_RESPONSE,
				     &one, sizeof(one)));
	EXPECT_EQ(-1, rdma_set_option(id, RDMA_OPTION_ID, SOFTCM_OPTION_ID_CONNECT_RESPONSE,
				      &one, 1));
	EXPECT_EQ(EINVAL, errno);

	/* rdma_get_request() is for synchronous listeners only. */
	ASSERT_EQ(0, rdma_listen(id, 0));
	EXPECT_EQ(-1, rdma_get_request(id, &req));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, rdma_destroy_id(id));
}

TEST(event_str)
{
	EXPECT_STREQ("RDMA_CM_EVENT_ESTABLISHED", rdma_event_str(RDMA_CM_EVENT_ESTABLISHED));
	EXPECT_STREQ("RDMA_CM_EVENT_TIMEWAIT_EXIT", rdma_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT));
	EXPECT_STREQ("UNKNOWN EVENT", rdma_event_str(99));
}

TEST(module_missing_is_enodev)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;

	ASSERT_EQ(0, softcm_ensure_unloaded());
	errno = 0;
	EXPECT_EQ(NULL, rdma_create_event_channel());
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-1, rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	EXPECT_EQ(ENODEV, errno);
	/* Loaded later, it is found. */
	ASSERT_EQ(0, softcm_load(NULL));
	ch = rdma_create_event_channel();
	EXPECT_NE(NULL, ch);
	rdma_destroy_event_channel(ch);
	/* every id and file this test made is gone */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

struct shared {
	struct rdma_cm_id *id;
	int errors;
};

static void *hammer(void *p)
{
	struct shared *s = p;
	struct sockaddr_in got;
	socklen_t len;
	uint8_t tos;
	int i;

	for (i = 0; i < 2000; i++) {
		tos = i;
		len = sizeof(got);
		if (rdma_set_option(s->id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1) ||
		    softcm_getsockname(s->id, (struct sockaddr *)&got, &len))
			__atomic_add_fetch(&s->errors, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* One id used from several threads at once. */
TEST_F(cm, one_id_many_threads)
{
	struct sockaddr_in sin = sin4("127.0.0.1", 0);
	struct shared s = { 0 };
	pthread_t th[4];
	int i;

	ASSERT_EQ(0, rdma_create_id(self->ch, &s.id, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(s.id, (struct sockaddr *)&sin));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, hammer, &s));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	EXPECT_EQ(0, s.errors);
	EXPECT_EQ(0, rdma_destroy_id(s.id));
}

/* Synchronous ids: each call returns once its event has arrived. */
TEST(sync_resolve)
{
	struct sockaddr_in dst = sin4("127.0.0.1", 7471);
	struct sockaddr_in unreach = sin4("10.255.255.1", 7471);
	struct rdma_cm_id *id;

	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000));
	ASSERT_NE(NULL, id->event);
	EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, id->event->event);
	/* The addresses are there without asking the kernel. */
	EXPECT_EQ(AF_INET, rdma_get_local_addr(id)->sa_family);
	EXPECT_EQ(htonl(INADDR_LOOPBACK),
		  ((struct sockaddr_in *)rdma_get_local_addr(id))->sin_addr.s_addr);
	EXPECT_EQ(htons(7471), rdma_get_dst_port(id));
	EXPECT_EQ(htonl(INADDR_LOOPBACK),
		  ((struct sockaddr_in *)rdma_get_peer_addr(id))->sin_addr.s_addr);

	ASSERT_EQ(0, rdma_resolve_route(id, 2000));
	EXPECT_EQ(RDMA_CM_EVENT_ROUTE_RESOLVED, id->event->event);
	ASSERT_EQ(1, id->route.num_paths);
	ASSERT_NE(NULL, id->route.path_rec);
	EXPECT_EQ(1, id->route.path_rec->reversible);	/* a host int */
	EXPECT_EQ(0xff, id->route.path_rec->sgid.raw[11]);
	EXPECT_EQ(127, id->route.path_rec->dgid.raw[12]);
	EXPECT_EQ(0, rdma_destroy_id(id));

	/* No route: the call itself fails, with the route's errno. */
	ASSERT_EQ(0, rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	EXPECT_EQ(-1, rdma_resolve_addr(id, NULL, (struct sockaddr *)&unreach, 500));
	EXPECT_EQ(ENETUNREACH, errno);
	EXPECT_EQ(0, rdma_destroy_id(id));
	/* every id and file this test made is gone */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

/* A synchronous id holding its last event can still move (no deadlock). */
TEST(migrate_sync_id_with_its_event)
{
	struct sockaddr_in dst = sin4("127.0.0.1", 7471);
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;

	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000));
	ASSERT_NE(NULL, id->event);
	ch = rdma_create_event_channel();
	ASSERT_NE(NULL, ch);
	ASSERT_EQ(0, rdma_migrate_id(id, ch));
	EXPECT_EQ(ch, id->channel);
	EXPECT_EQ(NULL, id->event);
	EXPECT_EQ(0, rdma_destroy_id(id));
	rdma_destroy_event_channel(ch);
	/* every id and file this test made is gone */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

/*
 * A synchronous id migrated onto the channel it is on stays synchronous,
 * and the channel stays its: the next call still waits for its event.
 */
TEST(migrate_sync_id_onto_its_own_channel)
{
	struct sockaddr_in dst = sin4("127.0.0.1", 7471);
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;

	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	ch = id->channel;
	ASSERT_EQ(0, rdma_migrate_id(id, ch));
	EXPECT_EQ(ch, id->channel);
	ASSERT_EQ(0, rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000));
	ASSERT_NE(NULL, id->event);
	EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, id->event->event);
	EXPECT_EQ(0, rdma_destroy_id(id));
	/* every id and file this test made is gone */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

TEST(create_ep_active)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST }, *res;
	struct rdma_cm_id *id;

	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, rdma_getaddrinfo("127.0.0.1", "7471", &hints, &res));
	/* a pd without qp_init_attr is ignored, as the header says */
	ASSERT_EQ(0, rdma_create_ep(&id, res, (struct ibv_pd *)res, NULL));
	EXPECT_EQ(1, id->route.num_paths);
	EXPECT_EQ(htons(7471), rdma_get_dst_port(id));
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(res);
	/* every id and file this test made is gone */
	EXPECT_EQ(0, stats_wait_idle_here(STATS_IDLE_MS));
}

struct destroyer {
	struct rdma_cm_id *id;
	int acked;
	int done;
	int acked_when_done;
};

static void *destroy_in_thread(void *p)
{
	struct destroyer *d = p;

	rdma_destroy_id(d->id);
	d->acked_when_done = __atomic_load_n(&d->acked, __ATOMIC_SEQ_CST);
	__atomic_store_n(&d->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Asynchronous: events from the channel; destroy waits for their ack. */
TEST_F(cm, async_resolve_and_destroy_waits_for_ack)
{
	struct sockaddr_in dst = sin4("127.0.0.1", 7471);
	struct softcm_query_id q = { 0 };
	struct destroyer d = { 0 };
	struct rdma_cm_event *event;
	pthread_t th;
	int i;

	ASSERT_EQ(0, rdma_create_id(self->ch, &d.id, &d, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_resolve_addr(d.id, NULL, (struct sockaddr *)&dst, 2000));
	ASSERT_EQ(0, rdma_get_cm_event(self->ch, &event));
	EXPECT_EQ(RDMA_CM_EVENT_ADDR_RESOLVED, event->event);
	EXPECT_EQ(d.id, event->id);
	EXPECT_EQ(&d, event->id->context);

	/* Destroy from another thread while we still hold the event. */
	q.handle = 1;	/* the first id of a fresh channel */
	ASSERT_EQ(0, pthread_create(&th, NULL, destroy_in_thread, &d));
	for (i = 0; i < 10000; i++) {	/* until the kernel id is gone */
		if (ioctl(self->ch->fd, SOFTCM_IOCTL_QUERY_ID, &q))
			break;
		usleep(1000);
	}
	EXPECT_EQ(ENOENT, errno);
	for (i = 0; i < 200; i++) {	/* it must keep waiting for our ack */
		EXPECT_EQ(0, __atomic_load_n(&d.done, __ATOMIC_SEQ_CST));
		usleep(1000);
	}
	__atomic_store_n(&d.acked, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(0, rdma_ack_cm_event(event));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(1, d.done);
	EXPECT_EQ(1, d.acked_when_done);
}

TEST_HARNESS_MAIN
