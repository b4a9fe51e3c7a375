// SPDX-License-Identifier: GPL-2.0
/*
 * libsoftcm as a libibverbs and librdmacm with QPs: this program uses only
 * the public API of rdma-core's <infiniband/verbs.h> and <rdma/rdma_cma.h>
 * and links with -lsoftcm alone.  Two namespaces, built once:
 *
 *   +-- sc-vl1 (passive) ----+          +-- sc-vl2 (active) -----+
 *   | v1 10.84.0.1/24        |--veth----| v2 10.84.0.2/24        |
 *   |    fd84::1/64          |          |    fd84::2/64          |
 *   +------------------------+          +------------------------+
 *
 * A namespace's device is opened by a thread inside it, so each side of a
 * connection is a thread that enters its namespace first.
 *
 * Covered: the device list, port and GID table; PD, MR, CQ, channel and
 * QP lifetimes and the EBUSY of objects in use; the RLIMIT_MEMLOCK limit;
 * foreign and stale handles; a posted RDMA READ's completion while it
 * has no data path, through a completion channel; a bad WR in a list;
 * rdma_create_qp() on a resolved id; a connection whose two QPs reach RTS
 * with each other's QP number and PSN and go to ERR on disconnect, each
 * moved by the ACCEPT that sends its REP or RTU (the library's ioctls
 * counted);
 * rdma_create_ep() and rdma_get_request() with QP attributes; a rejected
 * connection's QP in ERR; UD QPs in RTS from their creation, and the
 * address handles the UD events describe.  Every test ends with both namespaces idle: no
 * id and no file left, the library's device included.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <infiniband/verbs.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "ioctl_count.h"

#define NS1	"sc-vl1"	/* the passive side */
#define NS2	"sc-vl2"	/* the active side */
#define IP1	"10.84.0.1"
#define IP2	"10.84.0.2"
#define IP61	"fd84::1"

/* How long a completion or a connection may take on a loaded debug kernel. */
#define WAIT_MS	30000

/* Made once per program, over rtnetlink (netlink_helpers.h says why). */
static const struct topo_end end1 = { NS1, "v1", { IP1 "/24", IP61 "/64 nodad" } };
static const struct topo_end end2 = { NS2, "v2", { IP2 "/24", "fd84::2/64 nodad" } };

TOPO_NAMESPACES(NS1 " " NS2)

static struct sockaddr_in sin4(const char *ip, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &sin.sin_addr);
	return sin;
}

/* The calling thread enters namespace @name; 0 or -errno. */
static int enter(const char *name)
{
	int fd = netns_open(name), ret;

	if (fd < 0)
		return fd;
	ret = netns_enter(fd);
	close(fd);
	return ret;
}

FIXTURE(verbs) {
	int dummy;
};

FIXTURE_SETUP(verbs)
{
	ASSERT_EQ(0, softcm_ensure_loaded());
	if (access("/run/netns/" NS1, F_OK) || access("/run/netns/" NS2, F_OK)) {
		/* a stale one of the pair goes first */
		ASSERT_EQ(0, topo_pair(&end1, &end2));
	}
}

FIXTURE_TEARDOWN(verbs)
{
	/* Nothing of the test's may be left, the library's device included. */
	EXPECT_EQ(0, netns_wait_idle(NS1, STATS_IDLE_MS)) TH_LOG(NS1 " not idle");
	EXPECT_EQ(0, netns_wait_idle(NS2, STATS_IDLE_MS)) TH_LOG(NS2 " not idle");
}

/* The namespace's one device, opened. */
static struct ibv_context *open_softcm0(struct __test_metadata *_metadata)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n = -1;

	list = ibv_get_device_list(&n);
	EXPECT_NE(NULL, list);
	if (!list)
		return NULL;
	EXPECT_EQ(1, n);
	EXPECT_NE(NULL, list[0]);
	if (n != 1 || !list[0]) {
		ibv_free_device_list(list);
		return NULL;
	}
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	EXPECT_NE(NULL, ctx) TH_LOG("ibv_open_device: %s", strerror(errno));
	return ctx;
}

TEST_F(verbs, device_list_and_port)
{
	struct ibv_device **list;
	struct ibv_context *ctx, **devs;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct ibv_pd *pd;
	__be16 pkey = 0;
	int n = -1, status;
	pid_t pid;

	ASSERT_EQ(0, enter(NS1));
	list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, list);
	ASSERT_EQ(1, n);
	ASSERT_NE(NULL, list[0]);
	EXPECT_EQ(NULL, list[1]);
	EXPECT_STREQ("softcm0", ibv_get_device_name(list[0]));
	EXPECT_EQ(IBV_NODE_CA, list[0]->node_type);
	EXPECT_EQ(IBV_TRANSPORT_IB, list[0]->transport_type);
	ctx = ibv_open_device(list[0]);
	ASSERT_NE(NULL, ctx) TH_LOG("ibv_open_device: %s", strerror(errno));
	EXPECT_NE(0, ibv_get_device_guid(list[0]));
	/*
	 * One device object, as libibverbs has (review V7): the context's is
	 * the list's, outlives the list, and is the next list's too; and it
	 * is a zeroed rdma-core verbs_device, whose provider operations a
	 * direct-verbs helper reads right after the ibv_device.
	 */
	EXPECT_EQ(list[0], ctx->device);
	EXPECT_EQ(NULL, *(void *const *)((const char *)list[0] + sizeof(struct ibv_device)));
	ibv_free_device_list(list);
	EXPECT_STREQ("softcm0", ctx->device->name);
	list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, list);
	EXPECT_EQ(ctx->device, list[0]);
	ibv_free_device_list(list);

	ASSERT_EQ(0, ibv_query_device(ctx, &dattr));
	EXPECT_EQ(1, dattr.phys_port_cnt);
	EXPECT_NE(0, dattr.node_guid);
	EXPECT_LT(0, dattr.max_qp);
	ASSERT_EQ(0, ibv_query_port(ctx, 1, &pattr));
	EXPECT_EQ(IBV_PORT_ACTIVE, pattr.state);
	EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, pattr.link_layer);
	EXPECT_LT(0, pattr.gid_tbl_len);
	EXPECT_STREQ("active", ibv_port_state_str(pattr.state));
	/* another port: an errno value, as libibverbs */
	EXPECT_EQ(EINVAL, ibv_query_port(ctx, 2, &pattr));
	EXPECT_EQ(0, ibv_query_pkey(ctx, 1, 0, &pkey));
	EXPECT_EQ(0xffff, ntohs(pkey));
	EXPECT_EQ(-1, ibv_query_pkey(ctx, 1, 1, &pkey));
	EXPECT_EQ(0, ibv_close_device(ctx));

	/*
	 * librdmacm's list: the same device, whose context stays valid after
	 * the list is freed, until the process exits (review V4): in a child,
	 * so that the namespace is idle after.
	 */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		devs = rdma_get_devices(&n);
		if (!devs || n != 1 || !devs[0] || devs[1] ||
		    strcmp("softcm0", ibv_get_device_name(devs[0]->device)))
			_exit(1);
		ctx = devs[0];
		rdma_free_devices(devs);
		list = ibv_get_device_list(&n);
		if (!list || list[0] != ctx->device)
			_exit(3);
		ibv_free_device_list(list);
		pd = ibv_alloc_pd(ctx);
		if (!pd || ibv_query_device(ctx, &dattr) || ibv_dealloc_pd(pd))
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("1: the list, 2: its context after the list, 3: another device");
}

/*
 * A device this process may not open is still listed, as libibverbs lists
 * from sysfs, and the calls that must open it fail with the reason
 * (review V8): in a child with a mount namespace of its own, where a
 * node of softcm's device with mode 0600 covers /dev/softcm, running as
 * nobody (EACCES).
 */
TEST_F(verbs, device_listed_when_it_cannot_be_opened)
{
	static const char node[] = "/tmp/softcm-0600";
	struct stat st;
	int status;
	pid_t pid;

	ASSERT_EQ(0, enter(NS1));
	ASSERT_EQ(0, stat("/dev/" SOFTCM_DEVICE_NAME, &st));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_device **list;
		int n = -1;

		unlink(node);
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			_exit(10);
		if (mknod(node, S_IFCHR | 0600, st.st_rdev) ||
		    mount(node, "/dev/" SOFTCM_DEVICE_NAME, NULL, MS_BIND, NULL))
			_exit(11);
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(12);
		list = ibv_get_device_list(&n);
		if (!list || n != 1 || !list[0] || strcmp("softcm0", list[0]->name))
			_exit(1);
		errno = 0;
		if (ibv_get_device_guid(list[0]) || errno != EACCES)
			_exit(2);
		errno = 0;
		if (ibv_open_device(list[0]) || errno != EACCES)
			_exit(3);
		ibv_free_device_list(list);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	unlink(node);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("1: not listed, 2: the GUID's errno, 3: the open's errno, 10-12: set-up");
	}
}

TEST_F(verbs, gid_table_has_the_namespace_addresses)
{
	struct ibv_port_attr pattr;
	struct in6_addr v4mapped, v6;
	struct ibv_context *ctx;
	union ibv_gid gid;
	int found4 = 0, found6 = 0;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(1, inet_pton(AF_INET6, "::ffff:" IP1, &v4mapped));
	ASSERT_EQ(1, inet_pton(AF_INET6, IP61, &v6));
	ASSERT_EQ(0, ibv_query_port(ctx, 1, &pattr));
	for (int i = 0; i < pattr.gid_tbl_len; i++) {
		ASSERT_EQ(0, ibv_query_gid(ctx, 1, i, &gid)) TH_LOG("index %d", i);
		found4 |= !memcmp(gid.raw, &v4mapped, 16);
		found6 |= !memcmp(gid.raw, &v6, 16);
	}
	EXPECT_TRUE(found4);
	EXPECT_TRUE(found6);
	/* beyond the table */
	EXPECT_EQ(-1, ibv_query_gid(ctx, 1, pattr.gid_tbl_len, &gid));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ibv_close_device(ctx));
}

/* An RC QP on two new CQs, in RESET. */
struct objs {
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_qp_cap cap;		/* as granted */
	char buf[4096];
};

static void make_objs(struct __test_metadata *_metadata, struct ibv_context *ctx,
		      struct objs *o)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	o->pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, o->pd) TH_LOG("ibv_alloc_pd: %s", strerror(errno));
	o->mr = ibv_reg_mr(o->pd, o->buf, sizeof(o->buf), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, o->mr) TH_LOG("ibv_reg_mr: %s", strerror(errno));
	o->ch = ibv_create_comp_channel(ctx);
	ASSERT_NE(NULL, o->ch) TH_LOG("ibv_create_comp_channel: %s", strerror(errno));
	o->scq = ibv_create_cq(ctx, 8, o, o->ch, 0);
	ASSERT_NE(NULL, o->scq) TH_LOG("ibv_create_cq: %s", strerror(errno));
	EXPECT_LE(8, o->scq->cqe);
	o->rcq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	ASSERT_NE(NULL, o->rcq) TH_LOG("ibv_create_cq: %s", strerror(errno));
	attr.send_cq = o->scq;
	attr.recv_cq = o->rcq;
	o->qp = ibv_create_qp(o->pd, &attr);
	ASSERT_NE(NULL, o->qp) TH_LOG("ibv_create_qp: %s", strerror(errno));
	EXPECT_LE(4, attr.cap.max_send_wr);
	EXPECT_LE(1, attr.cap.max_recv_sge);
	o->cap = attr.cap;
}

static void free_objs(struct __test_metadata *_metadata, struct objs *o)
{
	EXPECT_EQ(0, ibv_destroy_qp(o->qp));
	EXPECT_EQ(0, ibv_destroy_cq(o->scq));
	EXPECT_EQ(0, ibv_destroy_cq(o->rcq));
	EXPECT_EQ(0, ibv_destroy_comp_channel(o->ch));
	EXPECT_EQ(0, ibv_dereg_mr(o->mr));
	EXPECT_EQ(0, ibv_dealloc_pd(o->pd));
}

TEST_F(verbs, objects_live_while_used)
{
	struct ibv_qp_init_attr init;
	struct ibv_context *ctx;
	struct ibv_qp_attr attr;
	struct objs o;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	make_objs(_metadata, ctx, &o);
	EXPECT_LT(1, o.qp->qp_num);
	EXPECT_GT(1U << 24, o.qp->qp_num);
	EXPECT_EQ(IBV_QPS_RESET, o.qp->state);
	ASSERT_EQ(0, ibv_query_qp(o.qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &init));
	EXPECT_EQ(IBV_QPS_RESET, attr.qp_state);
	EXPECT_EQ(IBV_QPT_RC, init.qp_type);
	EXPECT_EQ(o.scq, init.send_cq);
	EXPECT_EQ(o.rcq, init.recv_cq);

	/* in use: an errno value each, and nothing is gone */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(o.pd));
	EXPECT_EQ(EBUSY, ibv_destroy_cq(o.scq));
	EXPECT_EQ(EBUSY, ibv_destroy_comp_channel(o.ch));
	/* SRQ and resizing are not supported */
	EXPECT_EQ(NULL, ibv_create_srq(o.pd, &(struct ibv_srq_init_attr){ 0 }));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(EOPNOTSUPP, ibv_resize_cq(o.rcq, 64));
	free_objs(_metadata, &o);
	EXPECT_EQ(0, ibv_close_device(ctx));
}

/*
 * A completion channel destroyed while a CQ is being created on it: the
 * destroy comes from inside the CQ's CREATE_CQ (the ioctl interposer),
 * whose arguments name the channel's descriptor.  libibverbs holds the
 * context's mutex across the creation, so the destroy finds the channel
 * in use; so must softcm's, not close the descriptor the new CQ names.
 */
static struct ibv_comp_channel *racing_ch;
static int racing_ret = -1;

static void destroy_channel_in_create_cq(unsigned int nr)
{
	if (nr != SOFTCM_VCMD_CREATE_CQ || !racing_ch)
		return;
	racing_ret = ibv_destroy_comp_channel(racing_ch);
	racing_ch = NULL;
}

TEST_F(verbs, channel_busy_while_a_cq_is_created_on_it)
{
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	ch = ibv_create_comp_channel(ctx);
	ASSERT_NE(NULL, ch);
	racing_ch = ch;
	ioctl_before = destroy_channel_in_create_cq;
	cq = ibv_create_cq(ctx, 8, &racing_ret, ch, 0);
	ioctl_before = NULL;
	/* (else the channel is freed: nothing more to look at) */
	ASSERT_EQ(EBUSY, racing_ret);
	ASSERT_NE(NULL, cq) TH_LOG("ibv_create_cq: %s", strerror(errno));
	EXPECT_NE(-1, fcntl(ch->fd, F_GETFD));	/* still open */
	EXPECT_EQ(EBUSY, ibv_destroy_comp_channel(ch));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
	EXPECT_EQ(0, ibv_close_device(ctx));
}

/* Drop CAP_IPC_LOCK from this (forked) test process: the limit applies. */
static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &= ~(1U << CAP_IPC_LOCK);
	return syscall(SYS_capset, &h, d);
}

TEST_F(verbs, mr_beyond_memlock_is_enomem)
{
	struct rlimit rl = { .rlim_cur = 64 << 10, .rlim_max = 64 << 10 };
	size_t big = 4 << 20;
	struct ibv_context *ctx;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	char *buf;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	buf = aligned_alloc(4096, big);
	ASSERT_NE(NULL, buf);
	memset(buf, 0, big);
	ASSERT_EQ(0, drop_ipc_lock());
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));

	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(pd, buf, big, IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(ENOMEM, errno);
	/* within the limit it works */
	mr = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_mr: %s", strerror(errno));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	EXPECT_EQ(0, ibv_close_device(ctx));
	free(buf);
}

TEST_F(verbs, foreign_and_stale_handles)
{
	struct ibv_context *a, *b;
	struct ibv_pd *pd, copy;
	struct ibv_cq *cq, cq_copy;

	ASSERT_EQ(0, enter(NS1));
	a = open_softcm0(_metadata);
	ASSERT_NE(NULL, a);
	b = open_softcm0(_metadata);
	ASSERT_NE(NULL, b);
	pd = ibv_alloc_pd(a);
	ASSERT_NE(NULL, pd);
	cq = ibv_create_cq(a, 4, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);

	/* a's handles mean nothing in b */
	copy = *pd;
	copy.context = b;
	EXPECT_EQ(ENOENT, ibv_dealloc_pd(&copy));
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(&copy, &copy, sizeof(copy), 0));
	EXPECT_EQ(ENOENT, errno);
	cq_copy = *cq;
	cq_copy.context = b;
	/* (polling reads a's ring, no handle involved: arming names it) */
	EXPECT_EQ(ENOENT, ibv_req_notify_cq(&cq_copy, 0));

	/* a destroyed object's handle is stale */
	copy = *pd;
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	EXPECT_EQ(ENOENT, ibv_dealloc_pd(&copy));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_close_device(b));
	EXPECT_EQ(0, ibv_close_device(a));
}

/* INIT, RTR and RTS by hand, connected to itself over GID @gid_index. */
static void qp_to_rts(struct __test_metadata *_metadata, struct ibv_qp *qp, int gid_index)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.rq_psn = 0x123;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	ASSERT_EQ(0, ibv_query_gid(qp->context, 1, gid_index, &a.ah_attr.grh.dgid));
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	/* no READ credits: a READ fails at once (the tests post one so) */
	a.max_rd_atomic = 0;
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_MAX_QP_RD_ATOMIC));
	EXPECT_EQ(IBV_QPS_RTS, qp->state);
}

/* The index of a non-empty GID entry of the port. */
static int some_gid(struct ibv_context *ctx)
{
	struct ibv_port_attr pattr;
	union ibv_gid gid, zero = { 0 };

	if (ibv_query_port(ctx, 1, &pattr))
		return -1;
	for (int i = 0; i < pattr.gid_tbl_len; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) && memcmp(&gid, &zero, sizeof(gid)))
			return i;
	return -1;
}

/* The index of IPv4 address @ip's GID (v4-mapped); -1 if none. */
static int gid_of(struct ibv_context *ctx, const char *ip)
{
	union ibv_gid gid, want = { 0 };

	want.raw[10] = 0xff;
	want.raw[11] = 0xff;
	inet_pton(AF_INET, ip, &want.raw[12]);
	for (int i = 0; i < 32; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) && !memcmp(&gid, &want, sizeof(gid)))
			return i;
	return -1;
}

TEST_F(verbs, posted_read_without_read_credits_completes_in_error)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	struct ibv_context *ctx;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	struct pollfd pfd;
	struct objs o;
	void *cq_ctx;
	long deadline;
	int n = 0, gid;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	make_objs(_metadata, ctx, &o);
	gid = some_gid(ctx);
	ASSERT_LE(0, gid);
	qp_to_rts(_metadata, o.qp, gid);
	ASSERT_EQ(0, ibv_req_notify_cq(o.scq, 0));

	sge.addr = (uintptr_t)o.buf;
	sge.length = 64;
	sge.lkey = o.mr->lkey;
	wr.wr_id = 0xfeed;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	/* an RDMA READ on a QP with no READ credits: it can never be sent */
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	ASSERT_EQ(0, ibv_post_send(o.qp, &wr, &bad));

	/* the completion channel says so, then the CQ has it */
	pfd.fd = o.ch->fd;
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, WAIT_MS));
	ASSERT_EQ(0, ibv_get_cq_event(o.ch, &cq, &cq_ctx));
	EXPECT_EQ(o.scq, cq);
	EXPECT_EQ(&o, cq_ctx);
	ibv_ack_cq_events(cq, 1);
	deadline = topo_now_ms() + WAIT_MS;
	while (n == 0 && topo_now_ms() < deadline)
		n = ibv_poll_cq(o.scq, 1, &wc);
	ASSERT_EQ(1, n);
	EXPECT_EQ(0xfeed, wc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, wc.status) TH_LOG("%s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(o.qp->qp_num, wc.qp_num);
	/* a completion error puts the QP in ERR */
	ASSERT_EQ(0, ibv_query_qp(o.qp, &attr, IBV_QP_STATE, &init));
	EXPECT_EQ(IBV_QPS_ERR, attr.qp_state);
	free_objs(_metadata, &o);
	EXPECT_EQ(0, ibv_close_device(ctx));
}

/*
 * RTR's path MTU must fit the device of the AV's source GID, by
 * rdma_cm's rule (the device's MTU less 96 bytes of RoCE headers), as
 * rxe refuses one above its port's: 4096 is EINVAL on a veth of MTU
 * 1500, and allowed once the veth's MTU is 9000.
 */
TEST_F(verbs, path_mtu_must_fit_the_device)
{
	struct ibv_qp_init_attr init;
	struct ibv_context *ctx;
	struct ibv_qp_attr a;
	int gid, big, fits;
	struct objs o;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	make_objs(_metadata, ctx, &o);
	/* the GID of v1's address (loopback's would allow any MTU) */
	gid = gid_of(ctx, IP1);
	ASSERT_LE(0, gid);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
	ASSERT_EQ(0, ibv_modify_qp(o.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = o.qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = gid;
	a.ah_attr.grh.hop_limit = 64;
	ASSERT_EQ(0, ibv_query_gid(ctx, 1, gid, &a.ah_attr.grh.dgid));
	big = ibv_modify_qp(o.qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	ASSERT_EQ(0, system("ip -n " NS1 " link set v1 mtu 9000"));
	fits = ibv_modify_qp(o.qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
	EXPECT_EQ(0, system("ip -n " NS1 " link set v1 mtu 1500"));
	EXPECT_EQ(EINVAL, big);
	EXPECT_EQ(0, fits);
	ASSERT_EQ(0, ibv_query_qp(o.qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU, &init));
	EXPECT_EQ(IBV_QPS_RTR, a.qp_state);
	EXPECT_EQ(IBV_MTU_4096, a.path_mtu);
	free_objs(_metadata, &o);
	EXPECT_EQ(0, ibv_close_device(ctx));
}

TEST_F(verbs, bad_wr_is_the_first_not_queued)
{
	struct ibv_sge sge[8];
	struct ibv_recv_wr wr[2], *bad = NULL;
	struct ibv_context *ctx;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_wc wc[3];
	struct objs o;
	int n;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	make_objs(_metadata, ctx, &o);
	ASSERT_EQ(0, ibv_modify_qp(o.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS));
	ASSERT_GT(8, o.cap.max_recv_sge);
	for (int i = 0; i < 8; i++) {
		sge[i].addr = (uintptr_t)o.buf + i * 64;
		sge[i].length = 64;
		sge[i].lkey = o.mr->lkey;
	}
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 1;
	wr[0].sg_list = sge;
	wr[0].num_sge = 1;
	wr[0].next = &wr[1];
	wr[1].wr_id = 2;
	wr[1].sg_list = sge;
	wr[1].num_sge = o.cap.max_recv_sge + 1;	/* beyond the QP's */
	EXPECT_NE(0, ibv_post_recv(o.qp, wr, &bad));
	EXPECT_EQ(&wr[1], bad);
	/* far beyond any QP's: refused there, not read past the array */
	wr[1].num_sge = INT_MAX;
	bad = NULL;
	EXPECT_EQ(EINVAL, ibv_post_recv(o.qp, wr, &bad));
	EXPECT_EQ(&wr[1], bad);

	/*
	 * Each time wr[0], before the bad one, was queued, and nothing
	 * after it: ERR flushes exactly two receives, both wr[0]'s.
	 */
	a.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(0, ibv_modify_qp(o.qp, &a, IBV_QP_STATE));
	/* the flush is done when MODIFY_QP returns: all there is, at once */
	n = ibv_poll_cq(o.rcq, 3, wc);
	EXPECT_EQ(2, n);	/* not ASSERT: the objects are freed below either way */
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(1, wc[i].wr_id) TH_LOG("completion %d", i);
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status) TH_LOG("completion %d", i);
		EXPECT_EQ(o.qp->qp_num, wc[i].qp_num);
	}
	free_objs(_metadata, &o);
	EXPECT_EQ(0, ibv_close_device(ctx));
}

TEST_F(verbs, create_qp_on_a_resolved_id)
{
	struct sockaddr_in any = sin4("0.0.0.0", 0), dst = sin4(IP1, 20190);
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr got;
	struct rdma_cm_id *id, *wild;
	struct ibv_qp_attr attr;

	ASSERT_EQ(0, enter(NS2));
	/* a wildcard bind has no device, as under librdmacm */
	ASSERT_EQ(0, rdma_create_id(NULL, &wild, NULL, RDMA_PS_TCP));
	ASSERT_EQ(0, rdma_bind_addr(wild, (struct sockaddr *)&any));
	EXPECT_EQ(NULL, wild->verbs);

	ASSERT_EQ(0, rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	EXPECT_EQ(NULL, id->verbs);
	ASSERT_EQ(0, rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, WAIT_MS));
	ASSERT_NE(NULL, id->verbs);
	EXPECT_STREQ("softcm0", ibv_get_device_name(id->verbs->device));
	EXPECT_EQ(1, id->port_num);
	EXPECT_NE(NULL, id->pd);
	ASSERT_EQ(0, rdma_resolve_route(id, WAIT_MS));

	/* no CQs given: the id gets its own, with channels */
	ASSERT_EQ(0, rdma_create_qp(id, NULL, &init)) TH_LOG("%s", strerror(errno));
	ASSERT_NE(NULL, id->qp);
	EXPECT_NE(NULL, id->send_cq);
	EXPECT_NE(NULL, id->recv_cq);
	EXPECT_NE(NULL, id->recv_cq_channel);
	EXPECT_EQ(id->pd, id->qp->pd);
	ASSERT_EQ(0, ibv_query_qp(id->qp, &attr, IBV_QP_STATE | IBV_QP_PORT, &got));
	EXPECT_EQ(IBV_QPS_INIT, attr.qp_state);
	EXPECT_EQ(1, attr.port_num);
	/* one QP per id */
	EXPECT_EQ(-1, rdma_create_qp(id, NULL, &init));
	EXPECT_EQ(EINVAL, errno);
	rdma_destroy_qp(id);
	EXPECT_EQ(NULL, id->qp);
	EXPECT_EQ(NULL, id->send_cq);
	EXPECT_EQ(0, rdma_destroy_id(id));
	EXPECT_EQ(0, rdma_destroy_id(wild));
}

/* ---- connections: a server thread in NS1, the test's thread in NS2 ---- */


/* What one side's rdma_accept() or rdma_connect() cost, in ioctls. */
struct calls {
	unsigned int all, init_qp_attr, modify_qp, accept;
};

static void calls_reset(void)
{
	memset(ncalls, 0, sizeof(ncalls));
}

static void calls_get(struct calls *c)
{
	c->all = 0;
	for (int i = 0; i < 256; i++)
		c->all += ncalls[i];
	c->init_qp_attr = ncalls[SOFTCM_CMD_INIT_QP_ATTR];
	c->modify_qp = ncalls[SOFTCM_VCMD_MODIFY_QP];
	c->accept = ncalls[SOFTCM_CMD_ACCEPT];
}

struct side {
	uint32_t qp_num, sq_psn, rq_psn, dest_qp_num;
	int state, state_after;
};

struct server {
	int port;
	int reject;		/* reject the request instead */
	int use_ep;		/* rdma_create_ep() with QP attributes */
	int ud;			/* RDMA_PS_UDP and a UD QP */
	struct ibv_ah_attr req_ah;	/* the UD request's */
	int ret;		/* 0, or the line that failed */
	int err;
	struct side side;
	int had_qp;		/* rdma_get_request()'s id came with a QP */
	struct calls calls;	/* rdma_accept()'s */
	pthread_mutex_t mut;
	pthread_cond_t cond;
	int listening, client_done;
};

static const struct ibv_qp_init_attr qp_caps = {
	.qp_type = IBV_QPT_RC,
	.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1 },
	.sq_sig_all = 1,
};

static void signal_flag(struct server *s, int *flag)
{
	pthread_mutex_lock(&s->mut);
	*flag = 1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mut);
}

static int wait_flag(struct server *s, int *flag)
{
	struct timespec ts;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&s->mut);
	while (!*flag && !ret)
		ret = pthread_cond_timedwait(&s->cond, &s->mut, &ts);
	pthread_mutex_unlock(&s->mut);
	return *flag ? 0 : -1;
}

static int query_side(struct ibv_qp *qp, struct side *side, int after)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN |
			 IBV_QP_DEST_QPN, &init))
		return -1;
	if (after) {
		side->state_after = a.qp_state;
		return 0;
	}
	side->qp_num = qp->qp_num;
	side->sq_psn = a.sq_psn;
	side->rq_psn = a.rq_psn;
	side->dest_qp_num = a.dest_qp_num;
	side->state = a.qp_state;
	return 0;
}

#define FAIL(s) do { (s)->ret = __LINE__; (s)->err = errno; goto out; } while (0)

static void *server_main(void *p)
{
	struct server *s = p;
	struct sockaddr_in sin = sin4(IP1, s->port);
	struct rdma_cm_id *listen = NULL, *id = NULL;
	struct ibv_qp_init_attr attr = qp_caps;

	if (enter(NS1))
		FAIL(s);
	if (s->use_ep) {
		struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE | RAI_NUMERICHOST };
		struct rdma_addrinfo *res;
		char port[8];

		snprintf(port, sizeof(port), "%d", s->port);
		if (rdma_getaddrinfo(IP1, port, &hints, &res))
			FAIL(s);
		if (rdma_create_ep(&listen, res, NULL, &attr)) {
			rdma_freeaddrinfo(res);
			FAIL(s);
		}
		rdma_freeaddrinfo(res);
	} else {
		if (rdma_create_id(NULL, &listen, NULL, s->ud ? RDMA_PS_UDP : RDMA_PS_TCP))
			FAIL(s);
		if (rdma_bind_addr(listen, (struct sockaddr *)&sin))
			FAIL(s);
	}
	if (rdma_listen(listen, 4))
		FAIL(s);
	signal_flag(s, &s->listening);
	if (rdma_get_request(listen, &id))
		FAIL(s);
	s->had_qp = !!id->qp;
	if (s->ud) {
		s->req_ah = id->event->param.ud.ah_attr;
		attr.qp_type = IBV_QPT_UD;
	}
	if (s->reject) {
		if (rdma_reject(id, NULL, 0))
			FAIL(s);
		wait_flag(s, &s->client_done);
		goto out;
	}
	if (!id->qp && rdma_create_qp(id, NULL, &attr))
		FAIL(s);
	s->side.qp_num = id->qp->qp_num;
	calls_reset();
	if (rdma_accept(id, NULL))
		FAIL(s);
	calls_get(&s->calls);
	if (s->ud) {
		/* a UD QP is in RTS from its creation, and stays there */
		query_side(id->qp, &s->side, 0);
		wait_flag(s, &s->client_done);
		goto out;
	}
	if (query_side(id->qp, &s->side, 0))
		FAIL(s);
	if (wait_flag(s, &s->client_done))
		FAIL(s);
	if (rdma_disconnect(id))
		FAIL(s);
	if (query_side(id->qp, &s->side, 1))
		FAIL(s);
out:
	if (id) {
		if (id->qp)
			rdma_destroy_qp(id);
		rdma_destroy_id(id);
	}
	if (listen)
		rdma_destroy_ep(listen);
	signal_flag(s, &s->listening);
	return NULL;
}

static void server_start(struct __test_metadata *_metadata, struct server *s, pthread_t *t)
{
	pthread_mutex_init(&s->mut, NULL);
	pthread_cond_init(&s->cond, NULL);
	ASSERT_EQ(0, pthread_create(t, NULL, server_main, s));
	ASSERT_EQ(0, wait_flag(s, &s->listening));
	ASSERT_EQ(0, s->ret) TH_LOG("server failed at line %d: %s", s->ret, strerror(s->err));
}

/*
 * The server thread, within the bound a test waits for anything; one
 * still running then is cancelled (every wait of the library's is a
 * cancellation point), so that it no longer uses @s, and the test fails.
 */
static void join_server(struct __test_metadata *_metadata, struct server *s, pthread_t t)
{
	struct timespec ts;
	int ret;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAIT_MS / 1000;
	ret = pthread_timedjoin_np(t, NULL, &ts);
	if (ret) {
		pthread_cancel(t);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += WAIT_MS / 1000;
		if (pthread_timedjoin_np(t, NULL, &ts))
			TH_LOG("the server thread did not even end when cancelled");
	}
	ASSERT_EQ(0, ret) TH_LOG("server thread hung: %s", strerror(ret));
}

/* A resolved synchronous id in NS2 with a QP in INIT. */
static struct rdma_cm_id *client_id(struct __test_metadata *_metadata, int port, int use_ep)
{
	struct sockaddr_in dst = sin4(IP1, port);
	struct ibv_qp_init_attr attr = qp_caps;
	struct rdma_cm_id *id = NULL;

	if (use_ep) {
		struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST };
		struct rdma_addrinfo *res;
		char p[8];

		snprintf(p, sizeof(p), "%d", port);
		EXPECT_EQ(0, rdma_getaddrinfo(IP1, p, &hints, &res));
		EXPECT_EQ(0, rdma_create_ep(&id, res, NULL, &attr)) TH_LOG("%s", strerror(errno));
		rdma_freeaddrinfo(res);
		return id;
	}
	EXPECT_EQ(0, rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP));
	EXPECT_EQ(0, rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, WAIT_MS));
	EXPECT_EQ(0, rdma_resolve_route(id, WAIT_MS));
	EXPECT_EQ(0, rdma_create_qp(id, NULL, &attr)) TH_LOG("%s", strerror(errno));
	return id;
}

/*
 * A connection with a QP on each side; @calls: check that each side's QP
 * moved with the REP or RTU, in one ACCEPT (SOFTCM_ACCEPT_QP), with no
 * INIT_QP_ATTR or MODIFY_QP of its own.
 */
static void connect_both(struct __test_metadata *_metadata, int port, int use_ep,
			 int calls)
{
	struct server s = { .port = port, .use_ep = use_ep };
	struct side c = { 0 };
	struct rdma_cm_id *id;
	struct calls cc;
	pthread_t t;

	ASSERT_EQ(0, enter(NS2));
	server_start(_metadata, &s, &t);
	id = client_id(_metadata, port, use_ep);
	ASSERT_NE(NULL, id);
	ASSERT_NE(NULL, id->qp);
	calls_reset();
	if (rdma_connect(id, NULL)) {
		int err = errno;

		/* say why the server refused, if it did */
		signal_flag(&s, &s.client_done);
		join_server(_metadata, &s, t);
		ASSERT_EQ(0, err) TH_LOG("rdma_connect: %s; server: line %d, %s",
					 strerror(err), s.ret, strerror(s.err));
	}
	calls_get(&cc);
	/* with a QP, the library answered the REP: ESTABLISHED, not CONNECT_RESPONSE */
	ASSERT_NE(NULL, id->event);
	EXPECT_EQ(RDMA_CM_EVENT_ESTABLISHED, id->event->event);
	ASSERT_EQ(0, query_side(id->qp, &c, 0));

	/* the server has queried its QP once rdma_accept() returned */
	signal_flag(&s, &s.client_done);
	EXPECT_EQ(0, rdma_disconnect(id));
	ASSERT_EQ(0, query_side(id->qp, &c, 1));
	join_server(_metadata, &s, t);
	ASSERT_EQ(0, s.ret) TH_LOG("server failed at line %d: %s", s.ret, strerror(s.err));
	if (use_ep)
		EXPECT_TRUE(s.had_qp);
	if (calls) {
		TH_LOG("rdma_connect(): %u ioctls (%u INIT_QP_ATTR, %u MODIFY_QP, %u ACCEPT)",
		       cc.all, cc.init_qp_attr, cc.modify_qp, cc.accept);
		TH_LOG("rdma_accept(): %u ioctls (%u INIT_QP_ATTR, %u MODIFY_QP, %u ACCEPT)",
		       s.calls.all, s.calls.init_qp_attr, s.calls.modify_qp, s.calls.accept);
		EXPECT_EQ(0, cc.init_qp_attr + cc.modify_qp);
		EXPECT_EQ(1, cc.accept);
		EXPECT_EQ(0, s.calls.init_qp_attr + s.calls.modify_qp);
		EXPECT_EQ(1, s.calls.accept);
		EXPECT_EQ(1, s.calls.all);
	}

	EXPECT_EQ(IBV_QPS_RTS, c.state);
	EXPECT_EQ(IBV_QPS_RTS, s.side.state);
	EXPECT_EQ(s.side.qp_num, c.dest_qp_num);
	EXPECT_EQ(c.qp_num, s.side.dest_qp_num);
	EXPECT_EQ(s.side.sq_psn, c.rq_psn);
	EXPECT_EQ(c.sq_psn, s.side.rq_psn);
	EXPECT_EQ(IBV_QPS_ERR, c.state_after);
	EXPECT_EQ(IBV_QPS_ERR, s.side.state_after);
	if (use_ep) {
		rdma_destroy_ep(id);
	} else {
		rdma_destroy_qp(id);
		EXPECT_EQ(0, rdma_destroy_id(id));
	}
}

TEST_F(verbs, connection_moves_both_qps_to_rts_then_err)
{
	connect_both(_metadata, 20191, 0, 0);
}

/*
 * The same, counting the library's ioctls: each side's QP goes to RTS in
 * the ACCEPT that sends the REP or the RTU (SOFTCM_ACCEPT_QP), where
 * librdmacm makes three INIT_QP_ATTR and three MODIFY_QP calls first.
 */
TEST_F(verbs, each_side_moves_its_qp_in_one_call)
{
	connect_both(_metadata, 20195, 0, 1);
}

TEST_F(verbs, create_ep_and_get_request_with_qp_attributes)
{
	connect_both(_metadata, 20192, 1, 0);
}

TEST_F(verbs, rejected_connection_puts_the_qp_in_err)
{
	struct server s = { .port = 20193, .reject = 1 };
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct rdma_cm_id *id;
	pthread_t t;

	ASSERT_EQ(0, enter(NS2));
	server_start(_metadata, &s, &t);
	id = client_id(_metadata, s.port, 0);
	ASSERT_NE(NULL, id);
	ASSERT_NE(NULL, id->qp);
	EXPECT_EQ(-1, rdma_connect(id, NULL));
	EXPECT_EQ(ECONNREFUSED, errno);
	ASSERT_EQ(0, ibv_query_qp(id->qp, &attr, IBV_QP_STATE, &init));
	EXPECT_EQ(IBV_QPS_ERR, attr.qp_state);
	signal_flag(&s, &s.client_done);
	join_server(_metadata, &s, t);
	EXPECT_EQ(0, s.ret) TH_LOG("server failed at line %d: %s", s.ret, strerror(s.err));
	rdma_destroy_qp(id);
	EXPECT_EQ(0, rdma_destroy_id(id));
}

TEST_F(verbs, ud_qps_and_address_handles)
{
	struct server s = { .port = 20194, .ud = 1 };
	struct sockaddr_in dst = sin4(IP1, s.port);
	struct ibv_qp_init_attr attr = qp_caps;
	struct in6_addr gid1, gid2;
	struct rdma_ud_param ud;
	struct rdma_cm_id *id;
	struct ibv_ah *ah;
	struct side c = { 0 };
	pthread_t t;

	ASSERT_EQ(1, inet_pton(AF_INET6, "::ffff:" IP1, &gid1));
	ASSERT_EQ(1, inet_pton(AF_INET6, "::ffff:" IP2, &gid2));
	ASSERT_EQ(0, enter(NS2));
	server_start(_metadata, &s, &t);
	ASSERT_EQ(0, rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP));
	ASSERT_EQ(0, rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, WAIT_MS));
	ASSERT_EQ(0, rdma_resolve_route(id, WAIT_MS));
	attr.qp_type = IBV_QPT_UD;
	ASSERT_EQ(0, rdma_create_qp(id, NULL, &attr)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, query_side(id->qp, &c, 0));
	/* as librdmacm's ucma_init_ud_qp(): RTS at once, send PSN 0 */
	EXPECT_EQ(IBV_QPS_RTS, c.state);
	EXPECT_EQ(0, c.sq_psn);

	EXPECT_EQ(0, rdma_connect(id, NULL)) TH_LOG("rdma_connect: %s", strerror(errno));
	ASSERT_NE(NULL, id->event);
	EXPECT_EQ(RDMA_CM_EVENT_ESTABLISHED, id->event->event);
	ud = id->event->param.ud;
	EXPECT_EQ(RDMA_UDP_QKEY, ud.qkey);
	EXPECT_EQ(1, ud.ah_attr.is_global);
	EXPECT_EQ(1, ud.ah_attr.port_num);
	EXPECT_EQ(0, memcmp(&ud.ah_attr.grh.dgid, &gid1, 16));
	/* the address handle the event describes is one the device takes */
	ah = ibv_create_ah(id->pd, &ud.ah_attr);
	EXPECT_NE(NULL, ah) TH_LOG("ibv_create_ah: %s", strerror(errno));
	if (ah)
		EXPECT_EQ(0, ibv_destroy_ah(ah));

	signal_flag(&s, &s.client_done);
	join_server(_metadata, &s, t);
	ASSERT_EQ(0, s.ret) TH_LOG("server failed at line %d: %s", s.ret, strerror(s.err));
	EXPECT_EQ(s.side.qp_num, ud.qp_num);
	EXPECT_EQ(IBV_QPS_RTS, s.side.state);
	EXPECT_EQ(1, s.req_ah.is_global);
	EXPECT_EQ(0, memcmp(&s.req_ah.grh.dgid, &gid2, 16));
	rdma_destroy_qp(id);
	EXPECT_EQ(0, rdma_destroy_id(id));
}

/*
 * Extended verbs (libibverbs' ibv_create_qp_ex(3), ibv_wr_post(3),
 * ibv_create_cq_ex(3), ibv_query_device_ex(3)), on the same rings.
 */
struct xobjs {
	struct ibv_pd *pd;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;
	struct ibv_qp_cap cap;		/* as granted */
	char buf[4096];
};

#define XSEND_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_READ)

static void make_xobjs(struct __test_metadata *_metadata, struct ibv_context *ctx,
		       struct xobjs *o, enum ibv_qp_type type, uint64_t ops)
{
	struct ibv_cq_init_attr_ex cattr = {
		.cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = type,
		.cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 2,
			 .max_recv_sge = 1, .max_inline_data = 32 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = ops,
	};

	memset(o, 0, sizeof(*o));
	o->pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, o->pd) TH_LOG("ibv_alloc_pd: %s", strerror(errno));
	o->mr = ibv_reg_mr(o->pd, o->buf, sizeof(o->buf), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, o->mr) TH_LOG("ibv_reg_mr: %s", strerror(errno));
	o->cqx = ibv_create_cq_ex(ctx, &cattr);
	ASSERT_NE(NULL, o->cqx) TH_LOG("ibv_create_cq_ex: %s", strerror(errno));
	EXPECT_LE(16, ibv_cq_ex_to_cq(o->cqx)->cqe);
	o->rcq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	ASSERT_NE(NULL, o->rcq) TH_LOG("ibv_create_cq: %s", strerror(errno));
	attr.pd = o->pd;
	attr.send_cq = ibv_cq_ex_to_cq(o->cqx);
	attr.recv_cq = o->rcq;
	o->qp = ibv_create_qp_ex(ctx, &attr);
	ASSERT_NE(NULL, o->qp) TH_LOG("ibv_create_qp_ex: %s", strerror(errno));
	EXPECT_LE(8, attr.cap.max_send_wr);
	EXPECT_LE(2, attr.cap.max_send_sge);
	EXPECT_LE(32, attr.cap.max_inline_data);
	o->cap = attr.cap;
	o->qpx = ibv_qp_to_qp_ex(o->qp);
	ASSERT_NE(NULL, o->qpx);
	/* the ibv_qp_ex begins with the QP */
	EXPECT_EQ(o->qp, &o->qpx->qp_base);
}

static void free_xobjs(struct __test_metadata *_metadata, struct xobjs *o)
{
	EXPECT_EQ(0, ibv_destroy_qp(o->qp));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(o->cqx)));
	EXPECT_EQ(0, ibv_destroy_cq(o->rcq));
	EXPECT_EQ(0, ibv_dereg_mr(o->mr));
	EXPECT_EQ(0, ibv_dealloc_pd(o->pd));
}

static unsigned int calls_all(void)
{
	unsigned int n = 0;

	for (int i = 0; i < 256; i++)
		n += ncalls[i];
	return n;
}

/* What a send completion must read as, through every reader. */
struct xwc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
};

/*
 * Poll @n completions through start/next/end_poll with no system call,
 * each with every reader checked: the kernel's send completions carry
 * no length, immediate, flags or address (ibv_wc's zeroes).
 */
static void xpoll(struct __test_metadata *_metadata, struct xobjs *o,
		  const struct xwc *want, int n)
{
	struct ibv_poll_cq_attr pattr = { 0 };
	long deadline = topo_now_ms() + WAIT_MS;
	int ret, i;

	calls_reset();
	/* the first may still be on its way on a loaded kernel */
	while ((ret = ibv_start_poll(o->cqx, &pattr)) == ENOENT && topo_now_ms() < deadline)
		usleep(1000);
	ASSERT_EQ(0, ret) TH_LOG("ibv_start_poll: %s", strerror(ret));
	for (i = 0; i < n; i++) {
		if (i) {
			ret = ibv_next_poll(o->cqx);
			EXPECT_EQ(0, ret) TH_LOG("ibv_next_poll %d: %s", i, strerror(ret));
			if (ret)
				break;
		}
		EXPECT_EQ(want[i].wr_id, o->cqx->wr_id) TH_LOG("completion %d", i);
		EXPECT_EQ(want[i].status, o->cqx->status) TH_LOG("completion %d: %s", i,
								 ibv_wc_status_str(o->cqx->status));
		EXPECT_EQ(want[i].opcode, ibv_wc_read_opcode(o->cqx)) TH_LOG("completion %d", i);
		EXPECT_EQ(want[i].status == IBV_WC_GENERAL_ERR ? SOFTCM_VENDOR_ERR_NO_DATA_PATH : 0,
			  ibv_wc_read_vendor_err(o->cqx)) TH_LOG("completion %d", i);
		EXPECT_EQ(o->qp->qp_num, ibv_wc_read_qp_num(o->cqx)) TH_LOG("completion %d", i);
		EXPECT_EQ(0, ibv_wc_read_byte_len(o->cqx));
		EXPECT_EQ(0, ibv_wc_read_imm_data(o->cqx));
		EXPECT_EQ(0, ibv_wc_read_invalidated_rkey(o->cqx));
		EXPECT_EQ(0, ibv_wc_read_wc_flags(o->cqx));
		EXPECT_EQ(0, ibv_wc_read_src_qp(o->cqx));
		EXPECT_EQ(0, ibv_wc_read_slid(o->cqx));
		EXPECT_EQ(0, ibv_wc_read_sl(o->cqx));
		EXPECT_EQ(0, ibv_wc_read_dlid_path_bits(o->cqx));
	}
	/* and nothing more: the aborted and refused WRs were never posted */
	if (i == n)
		EXPECT_EQ(ENOENT, ibv_next_poll(o->cqx));
	ibv_end_poll(o->cqx);
	/* polling, reading and ending read the ring: no system call */
	EXPECT_EQ(0, calls_all());
	/* what was read is consumed: the CQ is empty, at no system call either */
	EXPECT_EQ(ENOENT, ibv_start_poll(o->cqx, &pattr));
	EXPECT_EQ(0, calls_all());
}

TEST_F(verbs, wr_builder_posts_through_the_send_ring)
{
	static const char in1[] = "inline", in2[] = "-list";
	struct ibv_data_buf list[2] = {
		{ .addr = (void *)in1, .length = sizeof(in1) - 1 },
		{ .addr = (void *)in2, .length = sizeof(in2) },
	};
	static const struct xwc want[] = {
		/*
		 * the SEND and the WRITE go to the RC data path; the READ
		 * fails at once (the QP has no READ credits) and the QP
		 * enters ERR, which flushes the two before it
		 */
		{ 10, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND },
		{ 11, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE },
		{ 12, IBV_WC_LOC_QP_OP_ERR, IBV_WC_RDMA_READ },
		{ 13, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE },
		{ 14, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND },
	};
	struct ibv_context *ctx;
	struct ibv_sge sge[2];
	char big[64];
	struct xobjs o;
	int gid;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	make_xobjs(_metadata, ctx, &o, IBV_QPT_RC, XSEND_OPS);
	/* only the builders of send_ops_flags, as rdma_rxe installs them */
	EXPECT_EQ(NULL, o.qpx->wr_atomic_cmp_swp);
	EXPECT_EQ(NULL, o.qpx->wr_send_inv);
	gid = some_gid(ctx);
	ASSERT_LE(0, gid);
	qp_to_rts(_metadata, o.qp, gid);
	for (int i = 0; i < 2; i++) {
		sge[i].addr = (uintptr_t)o.buf + i * 64;
		sge[i].length = 64;
		sge[i].lkey = o.mr->lkey;
	}
	memset(big, 'x', sizeof(big));

	/* an aborted batch posts nothing */
	ibv_wr_start(o.qpx);
	o.qpx->wr_id = 1;
	o.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(o.qpx);
	ibv_wr_set_sge(o.qpx, o.mr->lkey, (uintptr_t)o.buf, 64);
	ibv_wr_abort(o.qpx);

	/* a batch with a bad WR posts none of its WRs: ibv_wr_complete() says why */
	ibv_wr_start(o.qpx);
	o.qpx->wr_id = 2;
	ibv_wr_send(o.qpx);
	ibv_wr_set_sge(o.qpx, o.mr->lkey, (uintptr_t)o.buf, 64);
	o.qpx->wr_id = 3;
	ibv_wr_send(o.qpx);
	ibv_wr_set_inline_data(o.qpx, big, o.cap.max_inline_data + 1);
	EXPECT_EQ(EINVAL, ibv_wr_complete(o.qpx));
	ibv_wr_start(o.qpx);
	o.qpx->wr_id = 4;
	ibv_wr_rdma_read(o.qpx, 0x1234, 0x1000);
	ibv_wr_set_inline_data(o.qpx, big, 8);	/* inline is for sends and writes */
	EXPECT_EQ(EINVAL, ibv_wr_complete(o.qpx));

	/* five WRs, one per builder, through each setter, in one doorbell at most */
	calls_reset();
	ibv_wr_start(o.qpx);
	o.qpx->wr_id = 10;
	o.qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	ibv_wr_send_imm(o.qpx, htonl(0x1234));
	ibv_wr_set_inline_data(o.qpx, big, 8);
	o.qpx->wr_id = 11;
	o.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(o.qpx, 0x1234, 0x1000);
	ibv_wr_set_sge(o.qpx, o.mr->lkey, (uintptr_t)o.buf, 64);
	o.qpx->wr_id = 12;
	ibv_wr_rdma_read(o.qpx, 0x1234, 0x2000);
	ibv_wr_set_sge_list(o.qpx, 2, sge);
	o.qpx->wr_id = 13;
	ibv_wr_rdma_write_imm(o.qpx, 0x1234, 0x3000, htonl(7));
	ibv_wr_set_inline_data_list(o.qpx, 2, list);
	o.qpx->wr_id = 14;
	o.qpx->wr_flags = 0;	/* unsignalled: in ERR it completes all the same */
	ibv_wr_send(o.qpx);
	ibv_wr_set_sge(o.qpx, o.mr->lkey, (uintptr_t)o.buf, 64);
	EXPECT_EQ(0, ibv_wr_complete(o.qpx));
	EXPECT_GE(1, ncalls[SOFTCM_VCMD_DOORBELL]);
	EXPECT_EQ(ncalls[SOFTCM_VCMD_DOORBELL], calls_all());

	xpoll(_metadata, &o, want, 5);
	free_xobjs(_metadata, &o);
	EXPECT_EQ(0, ibv_close_device(ctx));
}

/* A UD WR needs its address (ibv_wr_set_ud_addr()), and goes with it. */
TEST_F(verbs, wr_builder_on_a_ud_qp)
{
	static const struct xwc want[] = { { 21, IBV_WC_GENERAL_ERR, IBV_WC_SEND } };
	struct ibv_qp_attr a;
	struct ibv_ah_attr ah_attr;
	struct ibv_context *ctx;
	struct ibv_ah *ah;
	struct xobjs o;
	int gid;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	make_xobjs(_metadata, ctx, &o, IBV_QPT_UD,
		   IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	gid = some_gid(ctx);
	ASSERT_LE(0, gid);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	ASSERT_EQ(0, ibv_modify_qp(o.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_QKEY));
	a.qp_state = IBV_QPS_RTR;
	ASSERT_EQ(0, ibv_modify_qp(o.qp, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_RTS;
	ASSERT_EQ(0, ibv_modify_qp(o.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN));
	memset(&ah_attr, 0, sizeof(ah_attr));
	ah_attr.is_global = 1;
	ah_attr.port_num = 1;
	ah_attr.grh.sgid_index = gid;
	ah_attr.grh.hop_limit = 64;
	ASSERT_EQ(0, ibv_query_gid(ctx, 1, gid, &ah_attr.grh.dgid));
	ah = ibv_create_ah(o.pd, &ah_attr);
	ASSERT_NE(NULL, ah) TH_LOG("ibv_create_ah: %s", strerror(errno));

	/* without its address: refused, nothing posted */
	ibv_wr_start(o.qpx);
	o.qpx->wr_id = 20;
	ibv_wr_send(o.qpx);
	ibv_wr_set_sge(o.qpx, o.mr->lkey, (uintptr_t)o.buf, 64);
	EXPECT_EQ(EINVAL, ibv_wr_complete(o.qpx));

	ibv_wr_start(o.qpx);
	o.qpx->wr_id = 21;
	o.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(o.qpx, htonl(5));
	ibv_wr_set_ud_addr(o.qpx, ah, o.qp->qp_num, 0x11111111);
	ibv_wr_set_sge(o.qpx, o.mr->lkey, (uintptr_t)o.buf, 64);
	EXPECT_EQ(0, ibv_wr_complete(o.qpx));
	xpoll(_metadata, &o, want, 1);
	EXPECT_EQ(0, ibv_destroy_ah(ah));
	free_xobjs(_metadata, &o);
	EXPECT_EQ(0, ibv_close_device(ctx));
}

/*
 * What softcm lacks is refused at creation with EOPNOTSUPP, as rdma_rxe
 * refuses it: a completion field the kernel does not give, an operation
 * ibv_post_send() answers EOPNOTSUPP for, one the QP type has not.
 */
TEST_F(verbs, extended_creation_refuses_what_softcm_lacks)
{
	static const uint64_t bad_wc[] = {
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, IBV_WC_EX_WITH_CVLAN,
		IBV_WC_EX_WITH_FLOW_TAG, IBV_WC_EX_WITH_TM_INFO,
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	static const struct {
		enum ibv_qp_type type;
		uint64_t ops;
	} bad_ops[] = {
		{ IBV_QPT_UD, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_SEND_WITH_INV },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_LOCAL_INV },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_BIND_MW },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_TSO },
	};
	struct ibv_cq_init_attr_ex cattr = { .cqe = 4 };
	struct ibv_qp_init_attr_ex qattr;
	struct ibv_context *ctx;
	struct ibv_cq_ex *cqx;
	struct ibv_pd *pd;
	struct ibv_qp *qp;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	for (unsigned int i = 0; i < sizeof(bad_wc) / sizeof(bad_wc[0]); i++) {
		cattr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | bad_wc[i];
		errno = 0;
		EXPECT_EQ(NULL, ibv_create_cq_ex(ctx, &cattr)) TH_LOG("wc_flags %#lx",
								      (unsigned long)bad_wc[i]);
		EXPECT_EQ(EOPNOTSUPP, errno);
	}
	/* the standard ones are there, each reader only if asked for */
	cattr.wc_flags = IBV_WC_EX_WITH_QP_NUM;
	cqx = ibv_create_cq_ex(ctx, &cattr);
	ASSERT_NE(NULL, cqx) TH_LOG("ibv_create_cq_ex: %s", strerror(errno));
	EXPECT_NE(NULL, cqx->read_qp_num);
	EXPECT_NE(NULL, cqx->read_opcode);
	EXPECT_EQ(NULL, cqx->read_byte_len);
	EXPECT_EQ(NULL, cqx->read_completion_ts);

	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	for (unsigned int i = 0; i < sizeof(bad_ops) / sizeof(bad_ops[0]); i++) {
		memset(&qattr, 0, sizeof(qattr));
		qattr.qp_type = bad_ops[i].type;
		qattr.send_cq = qattr.recv_cq = ibv_cq_ex_to_cq(cqx);
		qattr.cap.max_send_wr = qattr.cap.max_recv_wr = 1;
		qattr.cap.max_send_sge = qattr.cap.max_recv_sge = 1;
		qattr.pd = pd;
		qattr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qattr.send_ops_flags = IBV_QP_EX_WITH_SEND | bad_ops[i].ops;
		errno = 0;
		qp = ibv_create_qp_ex(ctx, &qattr);
		EXPECT_EQ(NULL, qp) TH_LOG("case %u", i);
		EXPECT_EQ(EOPNOTSUPP, errno) TH_LOG("case %u", i);
		if (qp)
			ibv_destroy_qp(qp);
	}
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	EXPECT_EQ(0, ibv_close_device(ctx));
}

/*
 * As libibverbs: a QP of ibv_create_qp(), or of ibv_create_qp_ex() with
 * nothing beyond a PD (which verbs.h sends to ibv_create_qp()), is no
 * extended QP; one with send_ops_flags is.
 */
TEST_F(verbs, qp_to_qp_ex_only_for_extended_qps)
{
	struct ibv_qp_init_attr_ex xattr;
	struct ibv_context *ctx;
	struct objs o;
	struct ibv_qp *qp;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	make_objs(_metadata, ctx, &o);
	EXPECT_EQ(NULL, ibv_qp_to_qp_ex(o.qp));

	memset(&xattr, 0, sizeof(xattr));
	xattr.qp_type = IBV_QPT_RC;
	xattr.send_cq = o.scq;
	xattr.recv_cq = o.rcq;
	xattr.cap.max_send_wr = xattr.cap.max_recv_wr = 1;
	xattr.cap.max_send_sge = xattr.cap.max_recv_sge = 1;
	xattr.pd = o.pd;
	xattr.comp_mask = IBV_QP_INIT_ATTR_PD;
	qp = ibv_create_qp_ex(ctx, &xattr);
	ASSERT_NE(NULL, qp) TH_LOG("ibv_create_qp_ex: %s", strerror(errno));
	EXPECT_EQ(NULL, ibv_qp_to_qp_ex(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));

	xattr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	xattr.send_ops_flags = IBV_QP_EX_WITH_SEND;
	qp = ibv_create_qp_ex(ctx, &xattr);
	ASSERT_NE(NULL, qp) TH_LOG("ibv_create_qp_ex: %s", strerror(errno));
	EXPECT_EQ((void *)qp, (void *)ibv_qp_to_qp_ex(qp));
	EXPECT_NE(NULL, ibv_qp_to_qp_ex(qp)->wr_send);
	EXPECT_EQ(NULL, ibv_qp_to_qp_ex(qp)->wr_rdma_write);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	free_objs(_metadata, &o);
	EXPECT_EQ(0, ibv_close_device(ctx));
}

/*
 * ibv_query_device_ex(): ibv_query_device()'s attributes, and the
 * extended ones from the device (verbs.h's fallback without the
 * context's query_device_ex would leave them 0).
 */
TEST_F(verbs, query_device_ex_agrees_with_query_device)
{
	struct ibv_device_attr_ex ax;
	struct ibv_device_attr a;
	struct ibv_query_device_ex_input in = { 0 };
	struct ibv_context *ctx;

	ASSERT_EQ(0, enter(NS1));
	ctx = open_softcm0(_metadata);
	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, ibv_query_device(ctx, &a));
	memset(&ax, 0xa5, sizeof(ax));
	ASSERT_EQ(0, ibv_query_device_ex(ctx, &in, &ax));
	EXPECT_EQ(0, memcmp(&a, &ax.orig_attr, sizeof(a)));
	EXPECT_NE(0, ax.device_cap_flags_ex);
	EXPECT_EQ((uint32_t)a.device_cap_flags, (uint32_t)ax.device_cap_flags_ex);
	EXPECT_EQ(a.phys_port_cnt, ax.phys_port_cnt_ex);
	/* what softcm has not reads 0 */
	EXPECT_EQ(0, ax.comp_mask);
	EXPECT_EQ(0, ax.odp_caps.general_caps);
	EXPECT_EQ(0, ax.completion_timestamp_mask);
	EXPECT_EQ(0, ax.hca_core_clock);
	EXPECT_EQ(0, ax.max_dm_size);
	EXPECT_EQ(0, ax.tso_caps.max_tso);
	/* a comp_mask it does not know */
	in.comp_mask = 1;
	EXPECT_EQ(EINVAL, ibv_query_device_ex(ctx, &in, &ax));
	EXPECT_EQ(0, ibv_close_device(ctx));
}

TEST_HARNESS_MAIN
