// SPDX-License-Identifier: GPL-2.0
/*
 * Seeing connections: /proc/net/softcm lists every id of a namespace
 * (owner, state, addresses, device, CM state, comm IDs, QPNs, age), the
 * softcm tool's "show" and "stats" filter and format it, and the
 * tracepoints report state changes, resolutions and CM messages.  A
 * listener and a connection between two namespaces over a veth pair, made
 * through the librdmacm API.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "ioctl_helpers.h"
#include "wire_helpers.h"

#define NS1	"sc-l1"		/* the server */
#define NS2	"sc-l2"		/* the client */
#define IP1	"10.81.0.1"
#define IP2	"10.81.0.2"
#define PORT	19500
#define EV_MS	20000
#define QPN	0x1234

/* Made for every case, over rtnetlink (netlink_helpers.h says why). */
static const struct topo_end end1 = { NS1, "l1", { IP1 "/24" } };
static const struct topo_end end2 = { NS2, "l2", { IP2 "/24" } };

/* One line of /proc/net/softcm, split into its columns. */
struct entry {
	char pid[16], handle[16], ps[8], state[24], local[64], peer[64], dev[24];
	char cm_state[24], local_comm[16], remote_comm[16], qpn[16], remote_qpn[16];
	unsigned long age_ms;
};

#define MAX_ENTRIES 16

/* The listing of namespace @nsfd, header checked; the number of ids or -1. */
static int read_listing(int nsfd, int home, struct entry *e, int max)
{
	char line[512];
	FILE *f;
	int n = 0;

	if (netns_enter(nsfd))
		return -1;
	f = fopen("/proc/net/softcm", "r");
	netns_enter(home);
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f) ||
	    strcmp(line, "pid handle ps state local peer dev cm_state local_comm_id "
			 "remote_comm_id qpn remote_qpn age_ms\n")) {
		fclose(f);
		return -1;
	}
	while (n < max && fgets(line, sizeof(line), f)) {
		struct entry *x = &e[n];

		if (sscanf(line, "%15s %15s %7s %23s %63s %63s %23s %23s %15s %15s %15s %15s %lu",
			   x->pid, x->handle, x->ps, x->state, x->local, x->peer, x->dev,
			   x->cm_state, x->local_comm, x->remote_comm, x->qpn, x->remote_qpn,
			   &x->age_ms) != 13) {
			fclose(f);
			return -1;
		}
		n++;
	}
	fclose(f);
	return n;
}

static const struct entry *find(const struct entry *e, int n, const char *cm_state,
				const char *state)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(e[i].cm_state, cm_state) && !strcmp(e[i].state, state))
			return &e[i];
	return NULL;
}

/* The next event on @ch within EV_MS, which must be @type; acknowledged. */
static int get_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
		     struct rdma_cm_id **id)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *e;
	int ret;

	if (poll(&pfd, 1, EV_MS << softcm_slow_shift()) != 1)
		return -ETIME;
	if (rdma_get_cm_event(ch, &e))
		return -errno;
	ret = e->event == type ? 0 : -EPROTO;
	if (ret)
		fprintf(stderr, "# %s (status %d), expected %s\n", rdma_event_str(e->event),
			e->status, rdma_event_str(type));
	if (id)
		*id = e->id;
	rdma_ack_cm_event(e);
	return ret;
}

FIXTURE(listing) {
	long t0;	/* CLOCK_MONOTONIC ms before the first id was made */
	int home, ns1, ns2;
	struct rdma_event_channel *ch1, *ch2;
	struct rdma_cm_id *listener, *server, *client, *idle;
};

static struct rdma_event_channel *channel_in(int nsfd, int home)
{
	struct rdma_event_channel *ch;

	if (netns_enter(nsfd))
		return NULL;
	ch = rdma_create_event_channel();
	netns_enter(home);
	return ch;
}

/* A listener in NS1, a connection to it from NS2, and an idle id in NS2. */
FIXTURE_SETUP(listing)
{
	struct sockaddr_in a1 = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .qp_num = QPN };

	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, topo_pair(&end1, &end2));
	self->t0 = topo_now_ms();
	inet_pton(AF_INET, IP1, &a1.sin_addr);
	self->home = netns_self();
	self->ns1 = netns_open(NS1);
	self->ns2 = netns_open(NS2);
	ASSERT_LE(0, self->home);
	ASSERT_LE(0, self->ns1);
	ASSERT_LE(0, self->ns2);
	self->ch1 = channel_in(self->ns1, self->home);
	self->ch2 = channel_in(self->ns2, self->home);
	ASSERT_NE(NULL, self->ch1);
	ASSERT_NE(NULL, self->ch2);

	ASSERT_EQ(0, rdma_create_id(self->ch1, &self->listener, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(self->listener, (struct sockaddr *)&a1));
	ASSERT_EQ(0, rdma_listen(self->listener, 8));

	ASSERT_EQ(0, rdma_create_id(self->ch2, &self->idle, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_create_id(self->ch2, &self->client, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_resolve_addr(self->client, NULL, (struct sockaddr *)&a1, 2000));
	ASSERT_EQ(0, get_event(self->ch2, RDMA_CM_EVENT_ADDR_RESOLVED, NULL));
	ASSERT_EQ(0, rdma_resolve_route(self->client, 2000));
	ASSERT_EQ(0, get_event(self->ch2, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL));
	ASSERT_EQ(0, rdma_connect(self->client, &p));
	ASSERT_EQ(0, get_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, &self->server));
	p.qp_num = QPN + 1;
	ASSERT_EQ(0, rdma_accept(self->server, &p));
	ASSERT_EQ(0, get_event(self->ch2, RDMA_CM_EVENT_CONNECT_RESPONSE, NULL));
	ASSERT_EQ(0, rdma_establish(self->client));
	ASSERT_EQ(0, get_event(self->ch1, RDMA_CM_EVENT_ESTABLISHED, NULL));
}

FIXTURE_TEARDOWN(listing)
{
	if (self->client)
		rdma_destroy_id(self->client);
	if (self->idle)
		rdma_destroy_id(self->idle);
	if (self->server)
		rdma_destroy_id(self->server);
	if (self->listener)
		rdma_destroy_id(self->listener);
	if (self->ch1)
		rdma_destroy_event_channel(self->ch1);
	if (self->ch2)
		rdma_destroy_event_channel(self->ch2);
	/*
	 * The connection's timewait over, neither namespace may hold a
	 * connection, an id or a file of the test's.
	 */
	EXPECT_EQ(0, netns_wait_idle(NS1, STATS_IDLE_MS));
	EXPECT_EQ(0, netns_wait_idle(NS2, STATS_IDLE_MS));
	if (netns_del(NS1) || netns_del(NS2))
		TH_LOG("namespaces already gone");
}

/* Every id, with what ss would show for a socket, and both sides agree. */
TEST_F(listing, every_id_with_state_addresses_and_comm_ids)
{
	struct entry e1[MAX_ENTRIES], e2[MAX_ENTRIES];
	const struct entry *lis, *srv, *cli, *idle;
	char mypid[16], peer1[64], local2[64];
	unsigned long since_t0;
	int n1, n2;

	n1 = read_listing(self->ns1, self->home, e1, MAX_ENTRIES);
	n2 = read_listing(self->ns2, self->home, e2, MAX_ENTRIES);
	since_t0 = topo_now_ms() - self->t0;
	/* For the log: what a person would see. */
	if (system("for n in " NS1 " " NS2 "; do ip netns exec $n cat /proc/net/softcm;"
		   " done | sed 's/^/# /' >&2"))
		TH_LOG("cannot show the listings");
	ASSERT_EQ(2, n1);
	ASSERT_EQ(2, n2);
	snprintf(mypid, sizeof(mypid), "%d", getpid());
	snprintf(local2, sizeof(local2), IP2 ":%u", ntohs(rdma_get_src_port(self->client)));
	snprintf(peer1, sizeof(peer1), IP1 ":%u", PORT);

	lis = find(e1, n1, "IDLE", "LISTEN");
	srv = find(e1, n1, "ESTABLISHED", "CONNECT");
	cli = find(e2, n2, "ESTABLISHED", "CONNECT");
	idle = find(e2, n2, "IDLE", "IDLE");
	ASSERT_NE(NULL, lis);
	ASSERT_NE(NULL, srv);
	ASSERT_NE(NULL, cli);
	ASSERT_NE(NULL, idle);

	/* The owner is this process; the ids are ours, over TCP. */
	EXPECT_STREQ(mypid, lis->pid);
	EXPECT_STREQ(mypid, srv->pid);
	EXPECT_STREQ(mypid, cli->pid);
	EXPECT_STREQ("TCP", cli->ps);
	/* Addresses as ss writes them, both ends, and the devices. */
	EXPECT_STREQ(peer1, lis->local);
	EXPECT_STREQ("*", lis->peer);
	EXPECT_STREQ(peer1, srv->local);
	EXPECT_STREQ(local2, srv->peer);
	EXPECT_STREQ(local2, cli->local);
	EXPECT_STREQ(peer1, cli->peer);
	EXPECT_STREQ("l1", srv->dev);
	EXPECT_STREQ("l2", cli->dev);
	EXPECT_STREQ("*", idle->local);
	/* One connection: each side's comm IDs are the other's, swapped. */
	EXPECT_STRNE("0x00000000", cli->local_comm);
	EXPECT_STREQ(cli->local_comm, srv->remote_comm);
	EXPECT_STREQ(srv->local_comm, cli->remote_comm);
	EXPECT_EQ(QPN, strtoul(cli->qpn, NULL, 16));
	EXPECT_EQ(QPN + 1, strtoul(cli->remote_qpn, NULL, 16));
	EXPECT_EQ(QPN + 1, strtoul(srv->qpn, NULL, 16));
	/*
	 * Ages: none older than the fixture (plus a jiffy or two of
	 * rounding), and in the order the ids were made: listener before
	 * the request it took, the idle id before the client.
	 */
	EXPECT_GE(since_t0 + 20, lis->age_ms);
	EXPECT_GE(since_t0 + 20, idle->age_ms);
	EXPECT_GE(lis->age_ms, srv->age_ms);
	EXPECT_GE(idle->age_ms, cli->age_ms);
}

/* A destroyed id in timewait is still listed, without an owner. */
TEST_F(listing, timewait_outlives_its_id)
{
	struct entry e[MAX_ENTRIES];
	const struct entry *tw = NULL;
	long deadline;
	int n;

	ASSERT_EQ(0, rdma_disconnect(self->client));
	ASSERT_EQ(0, get_event(self->ch1, RDMA_CM_EVENT_DISCONNECTED, NULL));
	ASSERT_EQ(0, rdma_disconnect(self->server));
	ASSERT_EQ(0, get_event(self->ch2, RDMA_CM_EVENT_DISCONNECTED, NULL));
	ASSERT_EQ(0, rdma_destroy_id(self->client));
	self->client = NULL;
	n = read_listing(self->ns2, self->home, e, MAX_ENTRIES);
	ASSERT_LE(1, n);
	tw = find(e, n, "TIMEWAIT", "DESTROYING");
	ASSERT_NE(NULL, tw);
	EXPECT_STREQ("-", tw->pid);
	EXPECT_STREQ("-", tw->handle);
	/* ...until timewait ends: then only the idle id is left. */
	deadline = topo_now_ms() + (30000L << softcm_slow_shift());
	while (topo_now_ms() < deadline) {
		n = read_listing(self->ns2, self->home, e, MAX_ENTRIES);
		if (n == 1)
			break;
		usleep(100000);
	}
	ASSERT_EQ(1, n);
	EXPECT_STREQ("IDLE", e[0].state);
}

/* softcm show: the same, filtered, as a table or JSON; softcm stats. */
TEST_F(listing, tool_show_and_stats)
{
	char out[8192], want[128];

	ASSERT_EQ(0, run_output("ip netns exec " NS2 " softcm show -s established -j", out, sizeof(out)));
	snprintf(want, sizeof(want), "\"pid\": %d, ", getpid());
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"peer\": \"" IP1 ":19500\"")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"cm_state\": \"ESTABLISHED\"")) TH_LOG("%s", out);
	/* The idle id is filtered out: one object. */
	EXPECT_EQ(NULL, strstr(out, "},")) TH_LOG("%s", out);

	/* By port and by address, either end; a table with a header. */
	ASSERT_EQ(0, run_output("ip netns exec " NS1 " softcm show -p 19500", out, sizeof(out)));
	EXPECT_EQ(0, strncmp(out, "pid ", 4)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "LISTEN")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "ESTABLISHED")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_output("ip netns exec " NS1 " softcm show -a " IP2, out, sizeof(out)));
	EXPECT_EQ(NULL, strstr(out, "LISTEN")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "ESTABLISHED")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_output("ip netns exec " NS1 " softcm show -a 192.0.2.1 -j", out, sizeof(out)));
	EXPECT_STREQ("[]\n", out);

	/* Counters: the client sent one REQ and got one REP. */
	ASSERT_EQ(0, run_output("ip netns exec " NS2 " softcm stats -j", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "\"tx_req\": 1,")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"rx_rep\": 1,")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_output("ip netns exec " NS2 " softcm stats -z", out, sizeof(out)));
	EXPECT_EQ(NULL, strstr(out, "rx_req ")) TH_LOG("%s", out);

	/* Usage errors exit 2. */
	EXPECT_EQ(2, WEXITSTATUS(run_output("softcm show -x 2>/dev/null", out, sizeof(out))));
	EXPECT_EQ(2, WEXITSTATUS(run_output("softcm show extra 2>/dev/null", out, sizeof(out))));
}

/*
 * How many of @want are not in the text file @path; the file goes to the
 * log, all of it when something is missing, else its first lines.
 */
static unsigned int check_trace(const char *path, const char *const *want, unsigned int n)
{
	unsigned int i, missing = 0;
	char cmd[256], *buf;
	size_t len;
	FILE *f;

	buf = malloc(1 << 20);
	f = fopen(path, "r");
	if (!buf || !f) {
		fprintf(stderr, "# cannot read %s\n", path);
		free(buf);
		if (f)
			fclose(f);
		return n;
	}
	len = fread(buf, 1, (1 << 20) - 1, f);
	buf[len] = '\0';
	fclose(f);
	for (i = 0; i < n; i++) {
		if (strstr(buf, want[i]))
			continue;
		fprintf(stderr, "# no \"%s\" in %s\n", want[i], path);
		missing++;
	}
	free(buf);
	snprintf(cmd, sizeof(cmd), missing ? "sed 's/^/# /' %s >&2" :
		 "grep -v '^#' %s | grep softcm_ | head -n 12 | sed 's/^/# /' >&2", path);
	if (system(cmd))
		fprintf(stderr, "# cannot show %s\n", path);
	return missing;
}

/* Connect @id from NS2 to IP1:@port; the event after ROUTE_RESOLVED. */
static int connect_to(struct rdma_event_channel *ch, struct rdma_cm_id *id, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1 };

	inet_pton(AF_INET, IP1, &a.sin_addr);
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&a, 2000) ||
	    get_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
	    rdma_resolve_route(id, 2000) ||
	    get_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
		return -1;
	return rdma_connect(id, &p);
}

/* REJs are counted by reason, both ways: 8 (no listener), 28 (rejected). */
TEST_F(listing, rejects_counted_by_reason)
{
	struct rdma_cm_id *c8, *c28, *req;
	char out[8192];

	ASSERT_EQ(0, rdma_create_id(self->ch2, &c8, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, connect_to(self->ch2, c8, PORT + 1));
	ASSERT_EQ(0, get_event(self->ch2, RDMA_CM_EVENT_REJECTED, NULL));
	ASSERT_EQ(0, rdma_create_id(self->ch2, &c28, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, connect_to(self->ch2, c28, PORT));
	ASSERT_EQ(0, get_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, &req));
	ASSERT_EQ(0, rdma_reject(req, "no", 2));
	ASSERT_EQ(0, get_event(self->ch2, RDMA_CM_EVENT_REJECTED, NULL));

	ASSERT_EQ(0, run_output("ip netns exec " NS2 " softcm stats -z", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "rx_rej_reason_8  1\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "rx_rej_reason_28 1\n")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "tx_rej_reason")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_output("ip netns exec " NS1 " softcm stats -z", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "tx_rej_reason_8  1\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "tx_rej_reason_28 1\n")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "rx_rej_reason")) TH_LOG("%s", out);
	rdma_destroy_id(req);
	rdma_destroy_id(c28);
	rdma_destroy_id(c8);
}

static const char *tracefs(void)
{
	if (!access("/sys/kernel/tracing/events", F_OK))
		return "/sys/kernel/tracing";
	if (!mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return "/sys/kernel/tracing";
	return NULL;
}

/*
 * The tracepoints see a whole connection, from resolution to disconnect,
 * in tracefs and through trace-cmd.
 */
TEST_F(listing, tracepoints)
{
	static const char *const want[] = {
		"softcm_resolve:", "status=0",
		"softcm_state:", "-> ADDR_RESOLVED", "-> ROUTE_RESOLVED",
		"softcm_cm_state:", "-> REQ_SENT", "-> REQ_RCVD", "-> ESTABLISHED",
		"softcm_cm_msg:", "tx REQ peer=" IP1, "rx REQ peer=" IP2, "tx REP",
		"rx REP", "tx RTU", "rx RTU", "tx DREQ", "rx DREQ", "tx DREP",
	};
	struct sockaddr_in a1 = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_id *c, *s;
	const char *tr = tracefs();
	unsigned int missing;
	char path[128];
	FILE *f;

	if (!tr || access("/sys/kernel/tracing/events/softcm", F_OK))
		SKIP(return, "this kernel has no tracing (CONFIG_TRACING)");
	inet_pton(AF_INET, IP1, &a1.sin_addr);
	/* trace-cmd turns the events on (it only writes tracefs's files). */
	ASSERT_EQ(0, system("trace-cmd start -e softcm >/dev/null"));
	snprintf(path, sizeof(path), "%s/trace", tr);
	f = fopen(path, "w");	/* truncating it empties the buffer */
	ASSERT_NE(NULL, f);
	fclose(f);

	ASSERT_EQ(0, rdma_create_id(self->ch2, &c, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_resolve_addr(c, NULL, (struct sockaddr *)&a1, 2000));
	ASSERT_EQ(0, get_event(self->ch2, RDMA_CM_EVENT_ADDR_RESOLVED, NULL));
	ASSERT_EQ(0, rdma_resolve_route(c, 2000));
	ASSERT_EQ(0, get_event(self->ch2, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL));
	ASSERT_EQ(0, rdma_connect(c, &p));
	ASSERT_EQ(0, get_event(self->ch1, RDMA_CM_EVENT_CONNECT_REQUEST, &s));
	ASSERT_EQ(0, rdma_accept(s, &p));
	ASSERT_EQ(0, get_event(self->ch2, RDMA_CM_EVENT_CONNECT_RESPONSE, NULL));
	ASSERT_EQ(0, rdma_establish(c));
	ASSERT_EQ(0, get_event(self->ch1, RDMA_CM_EVENT_ESTABLISHED, NULL));
	ASSERT_EQ(0, rdma_disconnect(c));
	ASSERT_EQ(0, get_event(self->ch1, RDMA_CM_EVENT_DISCONNECTED, NULL));
	ASSERT_EQ(0, rdma_disconnect(s));
	ASSERT_EQ(0, get_event(self->ch2, RDMA_CM_EVENT_DISCONNECTED, NULL));
	rdma_destroy_id(s);
	rdma_destroy_id(c);

	ASSERT_EQ(0, system("trace-cmd stop"));
	snprintf(path, sizeof(path), "%s/trace", tr);
	missing = check_trace(path, want, sizeof(want) / sizeof(want[0]));
	EXPECT_EQ(0, missing);
	/*
	 * trace-cmd reads the buffer (consuming it) and formats it itself,
	 * from the events' format files, with libtraceevent: the same text.
	 */
	ASSERT_EQ(0, system("trace-cmd extract -o /tmp/softcm.dat >/dev/null 2>&1"
			    " && trace-cmd report -i /tmp/softcm.dat >/tmp/softcm.report 2>&1"));
	missing = check_trace("/tmp/softcm.report", want, sizeof(want) / sizeof(want[0]));
	EXPECT_EQ(0, missing);
	/*
	 * What this case turned on, off again: trace-cmd reset would also
	 * visit every other event's files, 5 s on the debug kernel.
	 */
	snprintf(path, sizeof(path), "%s/events/softcm/enable", tr);
	EXPECT_EQ(0, write_text(path, "0"));
	snprintf(path, sizeof(path), "%s/trace", tr);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/tracing_on", tr);
	EXPECT_EQ(0, write_text(path, "1"));
}

/*
 * The tests below each build a namespace of their own ("sc-lx", loopback
 * only), live in it, and wait for its ids, connections and files to be
 * gone before they end.
 */
#define NSX	"sc-lx"

static int nsx_enter(int *home, int *stats)
{
	int ns;

	if (netns_fresh(NSX))
		return -1;
	*home = netns_self();
	ns = netns_open(NSX);
	if (*home < 0 || ns < 0)
		return -1;
	*stats = stats_open(ns, *home);
	if (*stats < 0 || netns_enter(ns))
		return -1;
	return ns;
}

static void nsx_leave(int home)
{
	netns_enter(home);
	if (netns_del(NSX))
		fprintf(stderr, "# namespace already gone\n");
}

/*
 * One connection over loopback in NSX: listener, client and server ids on
 * one channel, the server's QP number @srv_qpn.  0, or the step that
 * failed (negative).
 */
struct nsx_conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *l, *c, *s;
	int home, stats;
};

static int nsx_connect(struct nsx_conn *x, uint32_t srv_qpn)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(19700),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .qp_num = QPN };

	if (softcm_ensure_loaded() || nsx_enter(&x->home, &x->stats) < 0)
		return -1;
	x->ch = rdma_create_event_channel();
	if (!x->ch)
		return -2;
	if (rdma_create_id(x->ch, &x->l, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(x->l, (struct sockaddr *)&a) || rdma_listen(x->l, 4))
		return -3;
	if (rdma_create_id(x->ch, &x->c, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(x->c, NULL, (struct sockaddr *)&a, 2000) ||
	    get_event(x->ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL))
		return -4;
	if (rdma_resolve_route(x->c, 2000) ||
	    get_event(x->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
		return -5;
	if (rdma_connect(x->c, &p) ||
	    get_event(x->ch, RDMA_CM_EVENT_CONNECT_REQUEST, &x->s))
		return -6;
	p.qp_num = srv_qpn;
	if (rdma_accept(x->s, &p))
		return -7;
	/* CONNECT_RESPONSE first: the server's ESTABLISHED waits for the RTU. */
	if (get_event(x->ch, RDMA_CM_EVENT_CONNECT_RESPONSE, NULL) ||
	    rdma_establish(x->c) || get_event(x->ch, RDMA_CM_EVENT_ESTABLISHED, NULL))
		return -8;
	return 0;
}

/* Everything nsx_connect() made, gone; 0 once the namespace is idle. */
static int nsx_disconnect(struct nsx_conn *x)
{
	int ret;

	rdma_destroy_id(x->s);
	rdma_destroy_id(x->c);
	rdma_destroy_id(x->l);
	rdma_destroy_event_channel(x->ch);
	ret = stats_wait_idle(x->stats, 60000 << softcm_slow_shift());
	close(x->stats);
	nsx_leave(x->home);
	return ret;
}

/* The number of lines of the listing text @buf whose handle is "0". */
static int handle0_lines(const char *buf)
{
	char pid[16], handle[16];
	const char *p = strchr(buf, '\n');
	int n = 0;

	while (p && *++p) {
		if (sscanf(p, "%15s %15s", pid, handle) == 2 && !strcmp(handle, "0"))
			n++;
		p = strchr(p, '\n');
	}
	return n;
}

/* Everything @fd has from its current position, into @buf; its length. */
static ssize_t read_all(int fd, char *buf, size_t size)
{
	size_t done = 0;
	ssize_t n;

	while (done < size - 1 && (n = read(fd, buf + done, size - 1 - done)) > 0)
		done += n;
	buf[done] = '\0';
	return done;
}

struct creator {
	int fd;
	volatile bool stop;
};

/* CREATE_ID on a full file, again and again: created, refused, undone. */
static void *emfile_loop(void *arg)
{
	struct creator *c = arg;
	__u32 h;

	while (!c->stop)
		if (create_id(c->fd, SOFTCM_PS_TCP, 0, &h) != -EMFILE)
			break;
	return NULL;
}

/*
 * A2: an id whose publication failed (EMFILE) was listed, with the file
 * it never joined as its owner; a listing opened then and read after that
 * file's close used the freed file.  Ids are listed only once published.
 * The window is narrow: 3000 listings race the creator, a quarter of them
 * on the debug kernel, where KASAN sees the use it makes.
 */
TEST(aborted_ids_are_never_listed)
{
	static char buf[65536];
	struct creator c = { 0 };
	int home, stats, ns, kept[32], nkept = 0, seen = 0;
	const int rounds = softcm_rounds(3000);
	pthread_t t;
	__u32 h;

	ASSERT_EQ(0, softcm_ensure_loaded());
	ns = nsx_enter(&home, &stats);
	ASSERT_LE(0, ns);
	ASSERT_EQ(0, write_text("/proc/sys/net/softcm/max_ids_per_file", "1"));
	c.fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, c.fd);
	ASSERT_EQ(0, create_id(c.fd, SOFTCM_PS_TCP, 0, &h));
	ASSERT_EQ(0, pthread_create(&t, NULL, emfile_loop, &c));

	for (int i = 0; i < rounds && nkept < 32; i++) {
		int fd = open("/proc/thread-self/net/softcm", O_RDONLY | O_CLOEXEC);

		ASSERT_LE(0, fd);
		read_all(fd, buf, sizeof(buf));
		if (handle0_lines(buf)) {
			seen++;
			kept[nkept++] = fd;	/* read again after the close */
		} else {
			close(fd);
		}
	}
	c.stop = true;
	pthread_join(t, NULL);
	EXPECT_EQ(0, seen);
	close(c.fd);
	/* What those listings show now must not come from the freed file. */
	for (int i = 0; i < nkept; i++) {
		lseek(kept[i], 0, SEEK_SET);
		read_all(kept[i], buf, sizeof(buf));
		close(kept[i]);
	}
	EXPECT_EQ(0, stats_wait_idle(stats, 60000 << softcm_slow_shift()));
	close(stats);
	nsx_leave(home);
}

/* The listing's ESTABLISHED lines as user @uid sees them: how many show comm IDs. */
static int visible_comm_ids(uid_t uid, int *lines)
{
	static char buf[65536];
	char f[13][64];
	int fd, n = 0, vis = 0;
	const char *p;

	if (uid && (setresgid(uid, uid, uid) || setresuid(uid, uid, uid)))
		return -1;
	fd = open("/proc/thread-self/net/softcm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	read_all(fd, buf, sizeof(buf));
	close(fd);
	for (p = strchr(buf, '\n'); p && *++p; p = strchr(p, '\n')) {
		if (sscanf(p, "%63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s",
			   f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10],
			   f[11], f[12]) != 13 || strcmp(f[7], "ESTABLISHED"))
			continue;
		n++;
		if (strcmp(f[8], "-") || strcmp(f[9], "-") || strcmp(f[10], "-") ||
		    strcmp(f[11], "-"))
			vis++;
	}
	*lines = n;
	return vis;
}

/*
 * A4: comm IDs and QPNs are all a forged DREQ, REJ or REP needs besides
 * the peer's address; another user reads "-" for them, and everything
 * else; the owner (and CAP_NET_ADMIN) still sees them.
 */
TEST(comm_ids_only_to_their_owner)
{
	struct nsx_conn x;
	int lines = 0, status;
	pid_t pid;

	ASSERT_EQ(0, nsx_connect(&x, QPN));

	/* The owner sees both ends' comm IDs. */
	EXPECT_EQ(2, visible_comm_ids(0, &lines));
	EXPECT_EQ(2, lines);
	/* nobody sees the same two lines, without them. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int vis = visible_comm_ids(65534, &lines);

		_exit(vis == 0 && lines == 2 ? 0 : 10 + (vis < 0 ? 9 : vis) * 3 + lines);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, nsx_disconnect(&x));
}

/*
 * A11: an open listing, even one read in part, keeps no id alive: the
 * namespace's ids go when their file is closed, and the listing can still
 * be read to its end afterwards.
 */
TEST(open_listing_pins_nothing)
{
	static char buf[65536];
	int home, stats, ns, fd, lfd;
	__u32 h;
	char c;

	ASSERT_EQ(0, softcm_ensure_loaded());
	ns = nsx_enter(&home, &stats);
	ASSERT_LE(0, ns);
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (int i = 0; i < 40; i++)
		ASSERT_EQ(0, create_id(fd, SOFTCM_PS_TCP, i, &h));
	lfd = open("/proc/thread-self/net/softcm", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(1, read(lfd, &c, 1));
	ASSERT_EQ('p', c);
	EXPECT_EQ(40, stats_get(stats, "ids"));
	close(fd);
	EXPECT_EQ(0, stats_wait_idle(stats, 60000 << softcm_slow_shift()));
	/* The rest reads, and lists nothing that is gone. */
	read_all(lfd, buf, sizeof(buf));
	EXPECT_EQ(NULL, strstr(buf, " TCP ")) TH_LOG("%s", buf);
	close(lfd);
	close(stats);
	nsx_leave(home);
}

/*
 * The loopback connection to port 19700 as this user reads the listing:
 * the server end's and the client end's comm IDs and the server's QPN.
 * 0 when both ends are listed with them, 1 when they are hidden, -1 when
 * the ends are not both listed ESTABLISHED.
 */
static int listed_ends(uint32_t *srv_comm, uint32_t *cli_comm, uint32_t *srv_qpn)
{
	static char buf[65536];
	char f[13][64];
	int fd, found = 0, hidden = 0;
	const char *p;

	fd = open("/proc/thread-self/net/softcm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	read_all(fd, buf, sizeof(buf));
	close(fd);
	for (p = strchr(buf, '\n'); p && *++p; p = strchr(p, '\n')) {
		if (sscanf(p, "%63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s",
			   f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10],
			   f[11], f[12]) != 13 || strcmp(f[7], "ESTABLISHED"))
			continue;
		hidden |= !strcmp(f[8], "-");
		if (!strcmp(f[4], "127.0.0.1:19700")) {
			*srv_comm = strtoul(f[8], NULL, 16);
			*srv_qpn = strtoul(f[10], NULL, 16);
			found |= 1;
		} else if (!strcmp(f[5], "127.0.0.1:19700")) {
			*cli_comm = strtoul(f[8], NULL, 16);
			found |= 2;
		}
	}
	if (found != 3)
		return -1;
	return hidden;
}

/*
 * A DREQ from the client end (comm ID @from) to the server end (@to, QP
 * @qpn), sent from an ordinary UDP socket on 127.0.0.1, as any local user
 * can.  The ICRC covers the IP and UDP headers the kernel will build:
 * IP ID 0 (DF without ignore_df: IP_PMTUDISC_DO, unconnected socket) and
 * our source port.
 */
static int forge_dreq(uint32_t from, uint32_t to, uint32_t qpn)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd, ret, pmtu = IP_PMTUDISC_DO;
	socklen_t len = sizeof(a);
	struct wire w;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) ||
	    bind(fd, (struct sockaddr *)&a, len) || getsockname(fd, (struct sockaddr *)&a, &len)) {
		close(fd);
		return -errno;
	}
	wire_init(&w, "127.0.0.1", "127.0.0.1", 0x15);
	((struct iphdr *)w.pkt)->id = 0;
	((struct udphdr *)(w.pkt + 20))->source = a.sin_port;
	put32(wire_mad(&w) + 24, from);
	put32(wire_mad(&w) + 28, to);
	put32(wire_mad(&w) + 32, qpn << 8);
	wire_finish(&w, false);
	a.sin_port = htons(4791);
	ret = sendto(fd, w.pkt + 28, w.paylen, 0, (struct sockaddr *)&a, sizeof(a));
	ret = ret == (int)w.paylen ? 0 : -errno;
	close(fd);
	return ret;
}

/*
 * A4, the attack: another local user reads the listing and forges a DREQ
 * from a UDP socket with what it shows; the connection must stay up.  The
 * owner, who sees the comm IDs, forges one that works: the attempt was
 * not vacuous.
 */
TEST(unprivileged_reader_cannot_forge_a_dreq)
{
	uint32_t sc = 0, cc = 0, sq = 0;
	struct nsx_conn x;
	long long before;
	int status;
	pid_t pid;

	ASSERT_EQ(0, nsx_connect(&x, QPN + 1));

	/* nobody: forges with whatever the listing gives away (exit 1) */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(3);
		switch (listed_ends(&sc, &cc, &sq)) {
		case 0:
			_exit(forge_dreq(cc, sc, sq) ? 4 : 1);
		case 1:
			_exit(0);
		default:
			_exit(2);
		}
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The receive work is in order: once this is counted, that was handled. */
	before = stats_get(x.stats, "drop_unknown");
	ASSERT_EQ(0, forge_dreq(0x1, 0x2, 0));
	ASSERT_EQ(0, stats_wait_above(x.stats, "drop_unknown", before,
				      EV_MS << softcm_slow_shift())) {
		if (system("sed 's/^/# /' /proc/net/softcm_stats >&2"))
			TH_LOG("no counters");
	}
	EXPECT_EQ(0, poll(&(struct pollfd){ .fd = x.ch->fd, .events = POLLIN }, 1, 0));

	/* The owner's view does forge one. */
	ASSERT_EQ(0, listed_ends(&sc, &cc, &sq));
	EXPECT_EQ(QPN + 1, sq);
	ASSERT_EQ(0, forge_dreq(cc, sc, sq));
	EXPECT_EQ(0, get_event(x.ch, RDMA_CM_EVENT_DISCONNECTED, NULL));
	EXPECT_EQ(0, nsx_disconnect(&x));
}

TEST_HARNESS_MAIN
