// SPDX-License-Identifier: GPL-2.0
/*
 * What bounds the verbs objects a user can make (Documentation/
 * reliability.rst, "Verbs"): the namespace's sysctls max_pds, max_cqs,
 * max_qps and max_mrs over all its files, refused with ENOMEM and counted
 * in /proc/net/softcm_stats; the ranges of those sysctls, which keep the
 * 24-bit QP numbers out of reach; the memory cgroup, charged with the
 * rings; the rdma cgroup, charged one HCA_HANDLE per file and one
 * HCA_OBJECT per object on the namespace's device "softcm-<inode>",
 * refused with EAGAIN.  The objects are made as an unprivileged user
 * (nobody), in a child: only the setup is root's.
 *
 * Each test runs in a network namespace of its own (unshare() in the
 * fixture, gone with the test's process), its loopback up.
 */
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "vm_helpers.h"
#include "topo_helpers.h"
#include "verbs_helpers.h"

#define SYSCTL		"/proc/sys/net/softcm/"
#define CG		"/sys/fs/cgroup/"
#define MEMCG		CG "softcm-acct-mem"
#define RDMACG		CG "softcm-acct-rdma"
#define NOBODY		65534

/* A QP of @wr send and receive requests; the bytes of its rings in @bytes. */
static int create_qp(int fd, __u32 pd, __u32 cq, __u32 wr, __u32 *h, long long *bytes)
{
	struct softcm_create_qp c = {
		.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
		.qp_type = QPT_RC,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	int ret = vioctl(fd, SOFTCM_IOCTL_CREATE_QP, &c);

	*h = c.handle;
	if (bytes)
		*bytes = (long long)c.kmap.size + c.umap.size;
	return ret;
}

static int reg_mr(int fd, __u32 pd, void *buf, __u32 *h)
{
	struct softcm_reg_mr c = {
		.addr = (uintptr_t)buf, .length = getpagesize(), .iova = (uintptr_t)buf,
		.pd_handle = pd, .access = ACCESS_LOCAL_WRITE,
	};
	int ret = vioctl(fd, SOFTCM_IOCTL_REG_MR, &c);

	*h = c.handle;
	return ret;
}

static int become_nobody(void)
{
	return setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY);
}

static int set_sysctl(const char *name, long long v)
{
	char path[128], val[32];

	snprintf(path, sizeof(path), SYSCTL "%s", name);
	snprintf(val, sizeof(val), "%lld", v);
	return write_text(path, val);
}

static long long get_sysctl(const char *name)
{
	char path[128], val[32];

	snprintf(path, sizeof(path), SYSCTL "%s", name);
	return read_text(path, val, sizeof(val)) > 0 ? atoll(val) : -1;
}

static long long read_ll(const char *path)
{
	char buf[64];

	return read_text(path, buf, sizeof(buf)) > 0 ? atoll(buf) : -1;
}

/* Run @fn in a child; its exit status (0 for success, else its step). */
static int in_child(int (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn(arg));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Put the calling process into cgroup @dir. */
static int join_cgroup(const char *dir)
{
	char path[128], me[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(me, sizeof(me), "%d", getpid());
	return write_text(path, me);
}

/* Enable @controller ("memory", "rdma") for the root's children. */
static int enable_controller(const char *controller)
{
	char want[32], have[256];

	if (access(CG "cgroup.controllers", F_OK))
		system("mount -t cgroup2 none " CG);
	if (read_text(CG "cgroup.controllers", have, sizeof(have)) <= 0 ||
	    !strstr(have, controller))
		return -ENOENT;
	snprintf(want, sizeof(want), "+%s", controller);
	return write_text(CG "cgroup.subtree_control", want);
}

FIXTURE(acct) {
	int stats;
};

FIXTURE_SETUP(acct)
{
	self->stats = -1;
	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, lo_up());
	self->stats = open("/proc/thread-self/net/softcm_stats", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->stats);
}

FIXTURE_TEARDOWN(acct)
{
	if (self->stats >= 0) {
		/* every child's files are closed: nothing is left charged */
		EXPECT_EQ(0, stats_get(self->stats, "charged_qps"));
		EXPECT_EQ(0, stats_get(self->stats, "charged_pds"));
		EXPECT_EQ(0, stats_wait_idle(self->stats, STATS_IDLE_MS));
		close(self->stats);
	}
}

/*
 * The namespace's caps hold over all its files: with max_pds 3, max_cqs
 * 2, max_qps 2 and max_mrs 2, two files of nobody get that many between
 * them and ENOMEM for one more, and the object a destroy gives back can
 * be made again in the other file.  Exit codes: the step that failed.
 */
static int caps_child(void *arg)
{
	char *buf = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	__u32 pd[4], cq[3], qp[3], mr[3];
	int a, b;

	if (buf == MAP_FAILED || become_nobody())
		return 10;
	a = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	b = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (a < 0 || b < 0)
		return 11;
	if (alloc_pd(a, &pd[0]) || alloc_pd(a, &pd[1]) || alloc_pd(b, &pd[2]))
		return 12;
	if (alloc_pd(b, &pd[3]) != -ENOMEM)
		return 13;
	if (create_cq(a, 16, -1, 0, &cq[0]) || create_cq(b, 16, -1, 0, &cq[1]))
		return 14;
	if (create_cq(a, 16, -1, 0, &cq[2]) != -ENOMEM)
		return 15;
	if (create_qp(a, pd[0], cq[0], 16, &qp[0], NULL) ||
	    create_qp(b, pd[2], cq[1], 16, &qp[1], NULL))
		return 16;
	if (create_qp(a, pd[1], cq[0], 16, &qp[2], NULL) != -ENOMEM)
		return 17;
	/* destroyed in one file, made again in the other */
	if (destroy_qp(b, qp[1], NULL) || create_qp(a, pd[1], cq[0], 16, &qp[2], NULL))
		return 18;
	if (create_qp(b, pd[2], cq[1], 16, &qp[1], NULL) != -ENOMEM)
		return 19;
	if (reg_mr(a, pd[0], buf, &mr[0]) || reg_mr(b, pd[2], buf, &mr[1]))
		return 20;
	if (reg_mr(a, pd[0], buf, &mr[2]) != -ENOMEM)
		return 21;
	/* a closed file gives back all it had (its QP was destroyed) */
	close(b);
	if (alloc_pd(a, &pd[3]) || create_cq(a, 16, -1, 0, &cq[2]) ||
	    reg_mr(a, pd[1], buf, &mr[1]))
		return 22;
	close(a);
	return 0;
}

TEST_F(acct, namespace_caps_objects_across_files)
{
	static const char *const names[] = { "pds", "cqs", "qps", "mrs" };
	static const int caps[] = { 3, 2, 2, 2 };
	char name[32];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "max_%s", names[i]);
		ASSERT_EQ(0, set_sysctl(name, caps[i]));
		snprintf(name, sizeof(name), "refused_%s", names[i]);
		ASSERT_EQ(0, stats_get(self->stats, name));
	}
	EXPECT_EQ(0, in_child(caps_child, NULL));
	/* each type refused once by its cap (twice for QPs), and counted */
	EXPECT_EQ(1, stats_get(self->stats, "refused_pds"));
	EXPECT_EQ(1, stats_get(self->stats, "refused_cqs"));
	EXPECT_EQ(2, stats_get(self->stats, "refused_qps"));
	EXPECT_EQ(1, stats_get(self->stats, "refused_mrs"));
	EXPECT_EQ(0, stats_get(self->stats, "refused_rdmacg"));
}

/*
 * No setting of max_qps reaches the 2^24 - 2 QP numbers: the sysctl
 * stops at 2^23 (netns.c says why), the default is below it, and so are
 * the other caps' ranges.  Then 0 refuses every QP.
 */
static int no_qp_child(void *arg)
{
	__u32 pd, cq, qp;
	int fd;

	if (become_nobody())
		return 10;
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (fd < 0 || alloc_pd(fd, &pd) || create_cq(fd, 16, -1, 0, &cq))
		return 11;
	return create_qp(fd, pd, cq, 16, &qp, NULL) == -ENOMEM ? 0 : 12;
}

TEST_F(acct, qp_cap_cannot_exhaust_qp_numbers)
{
	long long def = get_sysctl("max_qps");

	EXPECT_LT(0, def);
	EXPECT_GE(1LL << 23, def);
	EXPECT_EQ(-EINVAL, set_sysctl("max_qps", (1LL << 23) + 1));
	EXPECT_EQ(-EINVAL, set_sysctl("max_qps", -1));
	EXPECT_EQ(def, get_sysctl("max_qps"));
	EXPECT_EQ(0, set_sysctl("max_qps", 1LL << 23));
	EXPECT_EQ(1LL << 23, get_sysctl("max_qps"));
	EXPECT_EQ(-EINVAL, set_sysctl("max_mrs", (1LL << 24) + 1));
	EXPECT_EQ(0, set_sysctl("max_qps", 0));
	EXPECT_EQ(0, in_child(no_qp_child, NULL));
	EXPECT_EQ(1, stats_get(self->stats, "refused_qps"));
}

/*
 * The rings are charged to the creator's memory cgroup: nobody, in a
 * cgroup of its own, makes QPs of 4096 requests a queue; memory.current
 * grows by their rings' bytes (as the replies give them), and
 * falls back once they are destroyed.  The child reports the three
 * readings and the bytes through a pipe.
 */
#define MEM_QPS		32

static int memcg_child(void *arg)
{
	int *pfd = arg;
	long long v[4] = { 0 }, bytes;
	__u32 pd, cq, qp[MEM_QPS];
	int fd, i;

	if (join_cgroup(MEMCG) || become_nobody())
		return 10;
	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (fd < 0 || alloc_pd(fd, &pd) || create_cq(fd, 16, -1, 0, &cq))
		return 11;
	v[0] = read_ll(MEMCG "/memory.current");
	for (i = 0; i < MEM_QPS; i++) {
		if (create_qp(fd, pd, cq, 4096, &qp[i], &bytes))
			return 12;
		v[3] += bytes;
	}
	v[1] = read_ll(MEMCG "/memory.current");
	for (i = 0; i < MEM_QPS; i++)
		if (destroy_qp(fd, qp[i], NULL))
			return 13;
	v[2] = read_ll(MEMCG "/memory.current");
	close(fd);
	return write(pfd[1], v, sizeof(v)) == sizeof(v) ? 0 : 14;
}

TEST_F(acct, rings_charged_to_the_memcg)
{
	long long v[4], slack;
	int pfd[2];

	if (enable_controller("memory") || (mkdir(MEMCG, 0755) && errno != EEXIST))
		SKIP(return, "no cgroup v2 memory controller");
	ASSERT_EQ(0, pipe(pfd));
	EXPECT_EQ(0, in_child(memcg_child, pfd));
	ASSERT_EQ(sizeof(v), read(pfd[0], v, sizeof(v)));
	TH_LOG("%d QPs, %lld ring bytes: memory.current %lld -> %lld -> %lld",
	       MEM_QPS, v[3], v[0], v[1], v[2]);
	/*
	 * memory.current moves by the charge batches each CPU keeps in
	 * stock (MEMCG_CHARGE_BATCH, 64 pages): the rings are counted to
	 * within one batch a CPU, far below their bytes.
	 */
	slack = 64LL * getpagesize() * sysconf(_SC_NPROCESSORS_ONLN);
	EXPECT_LE(4 * slack, v[3]);
	EXPECT_LE(v[3] - slack, v[1] - v[0]);
	/* the pages went back with the destroys (the QPs' own slabs may stay) */
	EXPECT_GT(v[3] / 4, v[2] - v[0]);
	close(pfd[0]);
	close(pfd[1]);
	rmdir(MEMCG);
}

/*
 * An RC QP's kernel copy of its send queue, the WRs' state and its READ
 * resources count against max_ring_bytes with its rings, from its create
 * to its destroy: ring_bytes grows by the rings and at least the send
 * queue's entries times their stride, and comes back.
 */
TEST_F(acct, rc_qp_kernel_copies_count_as_ring_bytes)
{
	struct softcm_create_qp c = {
		.qp_type = QPT_RC,
		.cap = { .max_send_wr = 256, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	long long before, grew, rings;
	__u32 pd, cq;
	int fd;

	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, alloc_pd(fd, &pd));
	ASSERT_EQ(0, create_cq(fd, 16, -1, 0, &cq));
	before = stats_get(self->stats, "ring_bytes");
	c.pd_handle = pd;
	c.send_cq_handle = cq;
	c.recv_cq_handle = cq;
	ASSERT_EQ(0, vioctl(fd, SOFTCM_IOCTL_CREATE_QP, &c));
	grew = stats_get(self->stats, "ring_bytes") - before;
	rings = (long long)c.kmap.size + c.umap.size;
	TH_LOG("rings %lld bytes, ring_bytes grew by %lld (send queue %u x %u)", rings, grew,
	       c.sq.entries, c.sq.stride);
	EXPECT_LE(rings + (long long)c.sq.entries * c.sq.stride, grew);
	ASSERT_EQ(0, destroy_qp(fd, c.handle, NULL));
	EXPECT_EQ(0, stats_wait_eq(self->stats, "ring_bytes", before, 10000));
	close(fd);
}

/*
 * The rdma cgroup caps a cgroup's objects on softcm's one device,
 * "softcm", in every namespace: with hca_object=3, nobody in that
 * cgroup makes 3 objects and gets EAGAIN for the 4th (as uverbs answers),
 * one more once one is destroyed; with hca_handle=1, a second file's
 * first object is refused.  rdma.current shows the charges.
 */
/*
 * Any user may make a network namespace inside a user namespace of its
 * own and administer it (CAP_NET_ADMIN there): in it the limits on what
 * the kernel keeps are read-only, so that nobody raises them, and the
 * CM's timers writable.  Exit codes: the step that failed.
 */
static int userns_child(void *arg)
{
	static const char *const limits[] = {
		"max_backlog", "max_ids_per_file", "max_held_requests", "max_ring_bytes",
		"max_peer_timeout", "max_timewait", "max_ahs", "max_qps", "max_mrs",
		"max_cqs", "max_pds", "tx_zcopy",
	};
	unsigned int i;

	if (become_nobody() || unshare(CLONE_NEWUSER | CLONE_NEWNET))
		return 1;
	for (i = 0; i < ARRAY_SIZE(limits); i++)
		if (set_sysctl(limits[i], 1) != -EACCES)
			return 10 + i;
	if (get_sysctl("max_qps") != 131072)
		return 2;
	if (set_sysctl("cm_retries", 3) || get_sysctl("cm_retries") != 3)
		return 3;
	return 0;
}

TEST_F(acct, limits_read_only_where_a_user_namespace_owns_the_net)
{
	EXPECT_EQ(0, in_child(userns_child, NULL));
	/* where the initial user namespace owns it, its root sets them */
	EXPECT_EQ(0, set_sysctl("max_qps", 1000));
	EXPECT_EQ(1000, get_sysctl("max_qps"));
}

static char rdma_dev[64];

static int rdmacg_current(const char *res)
{
	char buf[1024], *p;

	if (read_text(RDMACG "/rdma.current", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, rdma_dev);
	if (!p || p[strlen(rdma_dev)] != ' ')
		return -1;
	p = strstr(p, res);
	return p ? atoi(p + strlen(res)) : -1;
}

static int rdmacg_child(void *arg)
{
	__u32 pd[5];
	int a, b;

	if (join_cgroup(RDMACG) || become_nobody())
		return 10;
	a = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	b = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (a < 0 || b < 0)
		return 11;
	if (alloc_pd(a, &pd[0]) || alloc_pd(a, &pd[1]) || alloc_pd(a, &pd[2]))
		return 12;
	if (rdmacg_current("hca_handle=") != 1 || rdmacg_current("hca_object=") != 3)
		return 13;
	if (alloc_pd(a, &pd[3]) != -EAGAIN)
		return 14;
	if (dealloc_pd(a, pd[2]) || alloc_pd(a, &pd[2]))
		return 15;
	/* a second file is a second handle: refused with its first object */
	if (dealloc_pd(a, pd[2]) || alloc_pd(b, &pd[4]) != -EAGAIN)
		return 16;
	close(a);
	if (rdmacg_current("hca_handle=") != 0 || rdmacg_current("hca_object=") != 0)
		return 17;
	if (alloc_pd(b, &pd[4]))
		return 18;
	/*
	 * A namespace of its own (any user may make one inside a user
	 * namespace) is no way out: the limit is on the device, which is
	 * the same there, and b holds the one handle.
	 */
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET))
		return 19;
	a = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (a < 0)
		return 20;
	if (alloc_pd(a, &pd[0]) != -EAGAIN)
		return 21;
	close(a);
	close(b);
	return 0;
}

TEST_F(acct, rdma_cgroup_caps_objects)
{
	char max[128];

	if (enable_controller("rdma") || (mkdir(RDMACG, 0755) && errno != EEXIST))
		SKIP(return, "no cgroup v2 rdma controller");
	snprintf(rdma_dev, sizeof(rdma_dev), "softcm");
	snprintf(max, sizeof(max), "%s hca_handle=1 hca_object=3", rdma_dev);
	ASSERT_EQ(0, write_text(RDMACG "/rdma.max", max));
	EXPECT_EQ(0, in_child(rdmacg_child, NULL));
	/*
	 * Lift the limits before the cgroup goes: the kernel frees a
	 * cgroup's pool for a device only when its usage is 0 and every
	 * limit is max, and removing the cgroup does not (rdmacg_css_offline
	 * sets max without freeing, css_free frees the cgroup under it), so
	 * the device's unregistration at rmmod would walk freed memory.
	 */
	snprintf(max, sizeof(max), "%s hca_handle=max hca_object=max", rdma_dev);
	EXPECT_EQ(0, write_text(RDMACG "/rdma.max", max));
	/* the refusal in the child's own namespace is counted there */
	EXPECT_EQ(2, stats_get(self->stats, "refused_rdmacg"));
	EXPECT_EQ(0, rdmacg_current("hca_handle="));
	EXPECT_EQ(0, rdmacg_current("hca_object="));
	rmdir(RDMACG);
}

TEST_HARNESS_MAIN
