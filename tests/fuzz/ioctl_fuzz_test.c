// SPDX-License-Identifier: GPL-2.0
/*
 * An ioctl fuzzer for /dev/softcm: several threads issue random, partly
 * invalid commands (every command of uapi/linux/softcm.h, random sizes,
 * fields and pointers, live and stale handles) and reads on eight files
 * in two namespaces joined by a veth pair, while files are replaced under
 * them (dup2: the old file is released while other threads may still be
 * in its ioctls) and ids migrate between files.  Half the commands are
 * built to be valid (addresses of the two namespaces, ports of the
 * listeners), so that ids walk through every state and connections are
 * requested, accepted, rejected, established and torn down.
 *
 *   +-- sc-f1 ----------+         +-- sc-f2 ----------+
 *   | f1 10.83.0.1      |--veth---| f2 10.83.0.2      |
 *   |    fd83::1        |         |    fd83::2        |
 *   | slots 0..3        |         | slots 4..7        |
 *   +-------------------+         +-------------------+
 *
 * Checked: every command returns 0 or an errno the ABI documents; after
 * the files are closed no connection, id or file is left in either
 * namespace (the softcm_stats gauges) and the
 * module's reference count is back to 0 (tests/vm/init.sh then unloads it
 * and the debug kernel reports nothing).
 *
 * SOFTCM_FUZZ_SECONDS: how long (30 s, 60 s on the debug kernel).
 * SOFTCM_FUZZ_SEED: the seed, printed first; the same seed gives every
 * thread the same sequence of choices, though the threads' interleaving
 * (and so what each choice meets) is the scheduler's.  Both are read
 * from the environment or from lib/fuzz.env (see env_long()):
 *
 *   mkdir -p build/tests/lib && echo SOFTCM_FUZZ_SEED=1234 >build/tests/lib/fuzz.env
 *   tests/vm/run.sh --kernel debug ioctl_fuzz_test
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "rng.h"
#include "ioctl_helpers.h"
#include "vm_helpers.h"
#include "topo_helpers.h"

static const char *const setup_cmds =
	"set -e\n"
	"for n in sc-f1 sc-f2; do ip netns del $n 2>/dev/null || true; done\n"
	"for n in sc-f1 sc-f2; do ip netns add $n; ip -n $n link set lo up; done\n"
	"ip link add f1 netns sc-f1 type veth peer name f2 netns sc-f2\n"
	"ip -n sc-f1 addr add 10.83.0.1/24 dev f1\n"
	"ip -n sc-f1 addr add fd83::1/64 dev f1 nodad\n"
	"ip -n sc-f2 addr add 10.83.0.2/24 dev f2\n"
	"ip -n sc-f2 addr add fd83::2/64 dev f2 nodad\n"
	"ip -n sc-f1 link set f1 up\n"
	"ip -n sc-f2 link set f2 up\n";

#define NSLOTS		8	/* files: 0..3 in sc-f1, 4..7 in sc-f2 */
#define NHANDLES	16	/* handles remembered per file */
#define NTHREADS	4
#define MAX_IDS		48	/* net.softcm.max_ids_per_file here */
#define WAIT_MS		60000

static int slot_fd[NSLOTS];
static int ns_fd[2];
static _Atomic __u32 handles[NSLOTS][NHANDLES];
static atomic_bool stop;
static atomic_long ops, bad_errno, established, requests, reopened;
static unsigned int seed;
static unsigned int max_ack_timeout;	/* packet_life_time of the run */

/* errnos the ABI documents for its commands and read() */
static bool errno_ok(int e)
{
	switch (e) {
	case EINVAL: case ENOENT: case EFAULT: case E2BIG: case ENOTTY:
	case EMFILE: case EAFNOSUPPORT: case EADDRNOTAVAIL: case EADDRINUSE:
	case EACCES: case ENODEV: case ENOTCONN: case ENOPROTOOPT: case EBADF:
	case ENETUNREACH: case EHOSTUNREACH: case EAGAIN: case ENETDOWN:
	case EPERM:
		return true;
	}
	return false;
}

static bool chance(struct rng *r, int percent)
{
	return below(r, 100) < (__u32)percent;
}

static void fill(struct rng *r, void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len--)
		*p++ = rnd(r);
}

static __u32 pick_handle(struct rng *r, int slot)
{
	switch (below(r, 10)) {
	case 0:
		return rnd(r);			/* anything */
	case 1:
		return below(r, 64);		/* small, maybe another file's */
	default:
		return atomic_load(&handles[slot][below(r, NHANDLES)]);
	}
}

static void remember(int slot, __u32 h)
{
	static atomic_uint next;

	atomic_store(&handles[slot][atomic_fetch_add(&next, 1) % NHANDLES], h);
}

static const int ports[] = { 7100, 7101, 7102, 7103 };

/* A sockaddr of the topology, or garbage; returns its length. */
static __u32 pick_addr(struct rng *r, __u8 *buf)
{
	static const char *const v4[] = {
		"10.83.0.1", "10.83.0.2", "0.0.0.0", "127.0.0.1", "10.83.0.9",
		"192.0.2.1",
	};
	static const char *const v6[] = {
		"fd83::1", "fd83::2", "::", "::1", "fe80::1", "::ffff:10.83.0.2",
	};
	__u16 port = chance(r, 80) ? ports[below(r, 4)] : (chance(r, 50) ? 0 : rnd(r));
	__u32 len;

	memset(buf, 0, SOFTCM_ADDR_SIZE);
	switch (below(r, 8)) {
	case 0:
		fill(r, buf, SOFTCM_ADDR_SIZE);
		return below(r, SOFTCM_ADDR_SIZE + 8);
	case 1: case 2: {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)buf;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, v6[below(r, 6)], &s6->sin6_addr);
		if (chance(r, 30))
			s6->sin6_scope_id = below(r, 5);
		len = sizeof(*s6);
		break;
	}
	default: {
		struct sockaddr_in *s4 = (struct sockaddr_in *)buf;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		inet_pton(AF_INET, v4[below(r, 6)], &s4->sin_addr);
		len = sizeof(*s4);
		break;
	}
	}
	if (chance(r, 10))
		len = below(r, SOFTCM_ADDR_SIZE + 8);
	return len;
}

static void pick_param(struct rng *r, struct softcm_conn_param *p)
{
	if (chance(r, 20)) {
		fill(r, p, sizeof(*p));
		return;
	}
	memset(p, 0, sizeof(*p));
	p->qp_num = rnd(r);
	p->private_data_len = chance(r, 80) ? below(r, 57) : rnd(r);
	fill(r, p->private_data, sizeof(p->private_data));
	p->responder_resources = below(r, 9);
	p->initiator_depth = below(r, 9);
	p->retry_count = below(r, 9);
	p->rnr_retry_count = below(r, 9);
	p->flow_control = below(r, 2);
	p->srq = below(r, 2);
}

/* A user pointer that is bad in a different way each time. */
static __u64 bad_ptr(struct rng *r, void *good)
{
	switch (below(r, 4)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return 0xffff800000000000ULL;	/* kernel half */
	default:
		return (__u64)(uintptr_t)good;
	}
}

struct cmd {
	unsigned int nr;
	size_t size;		/* current struct */
	size_t min;		/* first ABI version's: same here */
};

#define CMD(n, t) { SOFTCM_CMD_##n, sizeof(struct t), sizeof(struct t) }
static const struct cmd cmds[] = {
	CMD(CREATE_ID, softcm_create_id),
	CMD(DESTROY_ID, softcm_destroy_id),
	CMD(BIND, softcm_bind),
	CMD(LISTEN, softcm_listen),
	CMD(QUERY_ADDR, softcm_query_addr),
	CMD(QUERY_ID, softcm_query_id),
	CMD(SET_OPTION, softcm_set_option),
	CMD(MIGRATE_ID, softcm_migrate_id),
	CMD(RESOLVE_ADDR, softcm_resolve_addr),
	CMD(RESOLVE_ROUTE, softcm_resolve_route),
	CMD(QUERY_ROUTE, softcm_query_route),
	CMD(CONNECT, softcm_connect),
	CMD(ACCEPT, softcm_accept),
	CMD(REJECT, softcm_reject),
	CMD(DISCONNECT, softcm_disconnect),
};

union args {
	struct softcm_create_id create;
	struct softcm_destroy_id destroy;
	struct softcm_bind bind;
	struct softcm_listen listen;
	struct softcm_query_addr qaddr;
	struct softcm_query_id qid;
	struct softcm_set_option opt;
	struct softcm_migrate_id migrate;
	struct softcm_resolve_addr resolve;
	struct softcm_resolve_route route;
	struct softcm_query_route qroute;
	struct softcm_connect connect;
	struct softcm_accept accept;
	struct softcm_reject reject;
	struct softcm_disconnect disconnect;
	__u8 raw[1024];
};

/* Fill the arguments of command nr for a file in slot, mostly sensibly. */
static void build(struct rng *r, unsigned int nr, int slot, union args *a, __u8 *qbuf)
{
	memset(a, 0, sizeof(*a));
	if (chance(r, 5)) {
		fill(r, a, sizeof(*a));
		return;
	}
	switch (nr) {
	case SOFTCM_CMD_CREATE_ID:
		a->create.uid = rnd(r);
		a->create.ps = chance(r, 90) ? (chance(r, 75) ? SOFTCM_PS_TCP : SOFTCM_PS_UDP) : rnd(r);
		a->create.reserved0 = chance(r, 95) ? 0 : rnd(r);
		break;
	case SOFTCM_CMD_DESTROY_ID:
		a->destroy.handle = pick_handle(r, slot);
		break;
	case SOFTCM_CMD_BIND:
		a->bind.handle = pick_handle(r, slot);
		a->bind.addr_len = pick_addr(r, a->bind.addr);
		break;
	case SOFTCM_CMD_LISTEN:
		a->listen.handle = pick_handle(r, slot);
		a->listen.backlog = chance(r, 80) ? (int)below(r, 8) - 1 : (int)rnd(r);
		break;
	case SOFTCM_CMD_QUERY_ADDR:
		a->qaddr.handle = pick_handle(r, slot);
		a->qaddr.which = chance(r, 90) ? below(r, 2) : rnd(r);
		a->qaddr.addr_len = chance(r, 80) ? SOFTCM_ADDR_SIZE : below(r, 300);
		a->qaddr.addr = chance(r, 85) ? (__u64)(uintptr_t)qbuf : bad_ptr(r, qbuf);
		a->qaddr.reserved0 = chance(r, 95) ? 0 : rnd(r);
		break;
	case SOFTCM_CMD_QUERY_ID:
	case SOFTCM_CMD_QUERY_ROUTE:
	case SOFTCM_CMD_DISCONNECT:
		/* handle first in all three */
		a->qid.handle = pick_handle(r, slot);
		if (chance(r, 5))
			a->disconnect.reserved0 = rnd(r);
		break;
	case SOFTCM_CMD_SET_OPTION:
		a->opt.handle = pick_handle(r, slot);
		a->opt.level = chance(r, 90) ? SOFTCM_OPTION_ID : rnd(r);
		a->opt.optname = chance(r, 90) ? below(r, 5) : rnd(r);
		a->opt.value = chance(r, 80) ? below(r, 33) : rnd(r);
		/*
		 * Valid ACK timeouts above the run's own packet life time make
		 * timers of up to 2^23 ms (as the Linux CM's); the tables
		 * could not empty within the run.  Invalid ones stay.
		 */
		if (a->opt.optname == SOFTCM_OPTION_ID_ACK_TIMEOUT &&
		    a->opt.value > max_ack_timeout && a->opt.value <= 31)
			a->opt.value %= max_ack_timeout + 1;
		break;
	case SOFTCM_CMD_MIGRATE_ID: {
		int from = chance(r, 80) ? (slot & 4) | below(r, 4) : below(r, NSLOTS);

		switch (below(r, 10)) {
		case 0:
			a->migrate.fd = (int)below(r, 3) - 1;	/* -1, stdin, stdout */
			break;
		case 1:
			a->migrate.fd = 100000;
			break;
		default:
			a->migrate.fd = slot_fd[from];
			break;
		}
		a->migrate.handle = pick_handle(r, from);
		a->migrate.reserved0 = chance(r, 95) ? 0 : rnd(r);
		break;
	}
	case SOFTCM_CMD_RESOLVE_ADDR:
		a->resolve.handle = pick_handle(r, slot);
		a->resolve.timeout_ms = chance(r, 90) ? 1 + below(r, 2000) : rnd(r) % 100000;
		if (chance(r, 30))
			a->resolve.src_len = pick_addr(r, a->resolve.src);
		a->resolve.dst_len = pick_addr(r, a->resolve.dst);
		break;
	case SOFTCM_CMD_RESOLVE_ROUTE:
		a->route.handle = pick_handle(r, slot);
		a->route.timeout_ms = chance(r, 95) ? 1 + below(r, 2000) : 0;
		break;
	case SOFTCM_CMD_CONNECT:
		a->connect.handle = pick_handle(r, slot);
		a->connect.flags = chance(r, 90) ? below(r, 2) : rnd(r);
		pick_param(r, &a->connect.param);
		break;
	case SOFTCM_CMD_ACCEPT:
		a->accept.handle = pick_handle(r, slot);
		a->accept.uid = rnd(r);
		a->accept.flags = chance(r, 90) ? below(r, 2) : rnd(r);
		if (!a->accept.flags)
			pick_param(r, &a->accept.param);
		break;
	case SOFTCM_CMD_REJECT:
		a->reject.handle = pick_handle(r, slot);
		a->reject.reason = chance(r, 80) ? (below(r, 3) == 0 ? 0 : 28 + 7 * below(r, 2)) : rnd(r);
		a->reject.private_data_len = chance(r, 80) ? below(r, 149) : rnd(r);
		fill(r, a->reject.private_data, sizeof(a->reject.private_data));
		break;
	default:
		fill(r, a, 64);
		break;
	}
}

/* Replace a file under the other threads: its ids die, its number stays. */
static void reopen(int slot, int home)
{
	int fd;

	if (netns_enter(ns_fd[slot / 4]))
		return;
	fd = open("/dev/softcm", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	netns_enter(home);
	if (fd < 0)
		return;
	dup2(fd, slot_fd[slot]);
	close(fd);
	atomic_fetch_add(&reopened, 1);
}

/* Read events; answer connection requests as an application would. */
static void drain(struct rng *r, int slot)
{
	struct softcm_event ev[3];
	union args a;
	ssize_t n;
	int fd = slot_fd[slot], i;
	size_t len;

	switch (below(r, 8)) {
	case 0:
		len = below(r, sizeof(ev[0]));		/* too small */
		break;
	case 1:
		/* a bad buffer: the event must stay queued */
		n = read(fd, (void *)bad_ptr(r, NULL), sizeof(ev[0]));
		if (n < 0 && !errno_ok(errno) && errno != EFAULT)
			atomic_fetch_add(&bad_errno, 1);
		return;
	default:
		len = sizeof(ev[0]) * (1 + below(r, 3));
		break;
	}
	n = read(fd, ev, len);
	if (n < 0) {
		if (!errno_ok(errno))
			atomic_fetch_add(&bad_errno, 1);
		return;
	}
	for (i = 0; i < n / (ssize_t)sizeof(ev[0]); i++) {
		if (ev[i].event == SOFTCM_EVENT_ESTABLISHED)
			atomic_fetch_add(&established, 1);
		if (ev[i].event != SOFTCM_EVENT_CONNECT_REQUEST)
			continue;
		atomic_fetch_add(&requests, 1);
		remember(slot, ev[i].handle);
		if (chance(r, 20))
			continue;		/* left for a random command */
		memset(&a, 0, sizeof(a));
		if (chance(r, 75)) {
			a.accept.handle = ev[i].handle;
			a.accept.uid = rnd(r);
			a.accept.param.qp_num = rnd(r);
			ioctl(fd, SOFTCM_IOCTL_ACCEPT, &a.accept);
		} else {
			a.reject.handle = ev[i].handle;
			ioctl(fd, SOFTCM_IOCTL_REJECT, &a.reject);
		}
	}
}

struct worker {
	pthread_t thread;
	unsigned int index;
};

static void *fuzz(void *arg)
{
	struct worker *w = arg;
	struct rng r = { .s = ((__u64)seed << 32 | w->index) * 0x9E3779B97F4A7C15ULL | 1 };
	__u8 qbuf[SOFTCM_ADDR_SIZE + 64];
	int home = netns_self();
	union args a;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int slot = below(&r, NSLOTS), fd = slot_fd[slot], ret;
		unsigned int nr, size, dir;
		unsigned long req;

		atomic_fetch_add_explicit(&ops, 1, memory_order_relaxed);
		if (!below(&r, 20000)) {
			reopen(slot, home);
			continue;
		}
		if (chance(&r, 25)) {
			drain(&r, slot);
			continue;
		}
		nr = chance(&r, 97) ? below(&r, SOFTCM_CMD_COUNT) : rnd(&r) % 256;
		if (nr < SOFTCM_CMD_COUNT && nr == SOFTCM_CMD_CREATE_ID && chance(&r, 50))
			nr = below(&r, SOFTCM_CMD_COUNT);
		build(&r, nr, slot, &a, qbuf);
		size = nr < SOFTCM_CMD_COUNT ? cmds[nr].size : 16;
		dir = _IOC_READ | _IOC_WRITE;
		switch (below(&r, 20)) {
		case 0:
			size = below(&r, size + 1);		/* short */
			break;
		case 1: {
			unsigned int old = size;

			size += 1 + below(&r, 64);		/* long, zero tail */
			memset(a.raw + old, 0, size - old);
			break;
		}
		case 2:
			size += 1 + below(&r, 64);		/* long, dirty tail */
			a.raw[size - 1] = 1 + below(&r, 255);
			break;
		case 3:
			dir = below(&r, 4);			/* other direction */
			break;
		}
		req = _IOC(dir, SOFTCM_IOCTL_TYPE, nr, size);
		if (chance(&r, 1))
			ret = ioctl(fd, req, (void *)bad_ptr(&r, &a));
		else
			ret = ioctl(fd, req, &a);
		if (ret > 0 || (ret < 0 && !errno_ok(errno))) {
			if (atomic_fetch_add(&bad_errno, 1) < 5)
				fprintf(stderr, "# cmd %u size %u dir %u: ret %d errno %d\n",
					nr, size, dir, ret, errno);
			continue;
		}
		if (ret || nr >= SOFTCM_CMD_COUNT || dir != (_IOC_READ | _IOC_WRITE) ||
		    size < cmds[nr].size)
			continue;
		if (nr == SOFTCM_CMD_CREATE_ID)
			remember(slot, a.create.handle);
		else if (nr == SOFTCM_CMD_MIGRATE_ID)
			remember(slot, a.migrate.handle);
	}
	close(home);
	return NULL;
}

/*
 * @name from the environment or, in the VM (where tests/vm/run.sh passes
 * no environment), from the NAME=value lines of lib/fuzz.env in the tests
 * directory, which run.sh copies in when build/tests/lib exists.
 */
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

static int module_refcnt(void)
{
	char buf[32];

	if (read_text("/sys/module/softcm/refcnt", buf, sizeof(buf)) <= 0)
		return -1;
	return atoi(buf);
}

FIXTURE(fuzz) {
	int home;
};

FIXTURE_SETUP(fuzz)
{
	seed = env_long("SOFTCM_FUZZ_SEED", 0);
	if (!seed) {
		seed = (unsigned int)time(NULL) ^ getpid() << 16;
		if (!seed)
			seed = 1;
	}
	/* first, so that a run that dies can be repeated */
	printf("# SOFTCM_FUZZ_SEED=%u\n", seed);
	fflush(stdout);
	ASSERT_EQ(0, softcm_ensure_loaded());
	ASSERT_EQ(0, system(setup_cmds));
	self->home = netns_self();
	ASSERT_LE(0, self->home);
	ns_fd[0] = netns_open("sc-f1");
	ns_fd[1] = netns_open("sc-f2");
	ASSERT_LE(0, ns_fd[0]);
	ASSERT_LE(0, ns_fd[1]);
	max_ack_timeout = 10 + softcm_slow_shift();
	for (int n = 0; n < 2; n++) {
		int shift = softcm_slow_shift();

		/* quick CM timers, so that connections end within the run */
		ASSERT_EQ(0, netns_softcm_sysctl(ns_fd[n], self->home, "cm_response_timeout",
						 12 + shift));
		ASSERT_EQ(0, netns_softcm_sysctl(ns_fd[n], self->home, "packet_life_time",
						 max_ack_timeout));
		ASSERT_EQ(0, netns_softcm_sysctl(ns_fd[n], self->home, "mra_timeout",
						 12 + shift));
		ASSERT_EQ(0, netns_softcm_sysctl(ns_fd[n], self->home, "cm_retries", 2));
		ASSERT_EQ(0, netns_softcm_sysctl(ns_fd[n], self->home, "max_ids_per_file",
						 MAX_IDS));
		ASSERT_EQ(0, netns_softcm_sysctl(ns_fd[n], self->home, "max_backlog", 4));
	}
	for (int i = 0; i < NSLOTS; i++) {
		ASSERT_EQ(0, netns_enter(ns_fd[i / 4]));
		slot_fd[i] = open("/dev/softcm", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		ASSERT_EQ(0, netns_enter(self->home));
		ASSERT_LE(0, slot_fd[i]);
	}
}

FIXTURE_TEARDOWN(fuzz)
{
	system("ip netns del sc-f1; ip netns del sc-f2");
	close(ns_fd[0]);
	close(ns_fd[1]);
	close(self->home);
}

TEST_F_TIMEOUT(fuzz, random_commands, 600)
{
	long seconds = env_long("SOFTCM_FUZZ_SECONDS", softcm_slow_shift() ? 60 : 30);
	struct worker w[NTHREADS];
	int st[2];

	for (int i = 0; i < 2; i++) {
		st[i] = stats_open(ns_fd[i], self->home);
		ASSERT_LE(0, st[i]);
	}
	for (unsigned int i = 0; i < NTHREADS; i++) {
		w[i].index = i;
		ASSERT_EQ(0, pthread_create(&w[i].thread, NULL, fuzz, &w[i]));
	}
	sleep(seconds);		/* the run's length, not a synchronisation */
	atomic_store(&stop, true);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(w[i].thread, NULL);

	printf("# %ld ops, %ld files replaced, %ld requests, %ld established, rx_req %lld\n",
	       atomic_load(&ops), atomic_load(&reopened), atomic_load(&requests),
	       atomic_load(&established), stats_get(st[1], "rx_req"));
	EXPECT_EQ(0, atomic_load(&bad_errno));

	for (int i = 0; i < NSLOTS; i++)
		close(slot_fd[i]);
	/* every connection the files held ends, timewait included */
	EXPECT_EQ(0, stats_wait_idle(st[0], WAIT_MS));
	EXPECT_EQ(0, stats_wait_idle(st[1], WAIT_MS));
	close(st[0]);
	close(st[1]);
	/* no file, id or timer holds the module any more */
	long end = topo_now_ms() + WAIT_MS;

	while (module_refcnt() != 0 && topo_now_ms() < end)
		usleep(10000);
	EXPECT_EQ(0, module_refcnt());
}

TEST_HARNESS_MAIN
