// SPDX-License-Identifier: GPL-2.0
/*
 * Unloading softcm while its works still run: ids resolving towards a
 * neighbour that never answers are destroyed by close() and the module
 * is removed at once, while a peer keeps the namespace's neighbour table
 * changing.  The cancelled resolutions drop their ids' last references
 * from the workqueue, and neighbour updates would queue more: all of it
 * must be done before the namespaces' state is freed (the debug kernel's
 * KASAN and kmemleak watch).  The module is loaded again at the end, for
 * the programs that follow.
 *
 *   +-- sc-ut (the ids) ---+        +-- sc-up (the peer) --+
 *   | u0 10.89.0.1/16      |--veth--| q0 10.89.0.2/16      |
 *   +----------------------+        +----------------------+
 */
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include <linux/softcm.h>

#include "kselftest_harness.h"
#include "ioctl_helpers.h"
#include "topo_helpers.h"
#include "netlink_helpers.h"
#include "neigh_helpers.h"

#define ROUNDS		30
#define IDS		200

/* Made for every case, over rtnetlink (netlink_helpers.h says why). */
static const struct topo_end end1 = { "sc-ut", "u0", { "10.89.0.1/16" } };
static const struct topo_end end2 = { "sc-up", "q0", { "10.89.0.2/16" } };

static int resolve4(int fd, __u32 h, const char *dst)
{
	struct softcm_resolve_addr c = { .handle = h, .timeout_ms = 600000 };
	struct sockaddr_in *d4 = (struct sockaddr_in *)c.dst;

	d4->sin_family = AF_INET;
	d4->sin_port = htons(7471);
	inet_pton(AF_INET, dst, &d4->sin_addr);
	c.dst_len = sizeof(*d4);
	return ioctl(fd, SOFTCM_IOCTL_RESOLVE_ADDR, &c) ? -errno : 0;
}

/*
 * The peer's churn, until killed: ARP requests from a rolling set of
 * sender addresses, each a neighbour update in sc-ut, and from the peer's
 * own address with a new MAC each time, which the ids resolved through it
 * must hear of.  Paced, not to starve the emulated CPUs.
 */
static void churn(int nsfd)
{
	unsigned int round = 0;
	int fd, ifindex;

	if (netns_enter(nsfd))
		_exit(1);
	fd = arp_socket("q0", &ifindex);
	if (fd < 0)
		_exit(2);
	for (;;) {
		arp_flood(fd, ifindex, "10.89.0.1", 0x0a590100 + (round % 64) * 4, 4, 0);
		arp_flood(fd, ifindex, "10.89.0.1", 0x0a590002, 1, round & 0xff);
		round++;
		usleep(1000);
	}
}

FIXTURE(ul) {
	int home;
	int ut, up;
	pid_t churner;
};

FIXTURE_SETUP(ul)
{
	ASSERT_EQ(0, topo_pair(&end1, &end2));
	self->home = netns_self();
	ASSERT_LE(0, self->home);
	self->ut = netns_open("sc-ut");
	ASSERT_LE(0, self->ut);
	self->up = netns_open("sc-up");
	ASSERT_LE(0, self->up);
	self->churner = fork();
	ASSERT_LE(0, self->churner);
	if (!self->churner)
		churn(self->up);
}

FIXTURE_TEARDOWN(ul)
{
	if (self->churner > 0) {
		kill(self->churner, SIGKILL);
		waitpid(self->churner, NULL, 0);
	}
	close(self->ut);
	close(self->up);
	close(self->home);
	netns_del("sc-ut");
	netns_del("sc-up");
	softcm_ensure_loaded();
}

/*
 * Close with every id resolving, then rmmod at once; many rounds (a
 * quarter on the debug kernel, where a round costs about 3 s of CPU).
 */
TEST_F_TIMEOUT(ul, unload_with_resolutions_in_flight, 1200)
{
	int round, i, fd, rounds = softcm_rounds(ROUNDS);
	__u32 h, first = 0;

	for (round = 0; round < rounds; round++) {
		ASSERT_EQ(0, softcm_ensure_loaded()) TH_LOG("round %d", round);
		ASSERT_EQ(0, netns_enter(self->ut));
		fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
		ASSERT_EQ(0, netns_enter(self->home));
		ASSERT_LE(0, fd);
		for (i = 0; i < IDS; i++) {
			ASSERT_EQ(0, create_id(fd, SOFTCM_PS_TCP, i, &h));
			/* Silent addresses, two of them next to the churn's. */
			ASSERT_EQ(0, resolve4(fd, h, i % 2 ? "10.89.0.99" : "10.89.0.98"));
			if (!i)
				first = h;
		}
		/* what this case closes on: resolutions still waiting, oldest to newest */
		ASSERT_EQ(SOFTCM_STATE_ADDR_QUERY, state_of(fd, first)) TH_LOG("round %d", round);
		ASSERT_EQ(SOFTCM_STATE_ADDR_QUERY, state_of(fd, h)) TH_LOG("round %d", round);
		close(fd);
		ASSERT_EQ(0, softcm_unload()) TH_LOG("round %d", round);
	}
	ASSERT_EQ(0, softcm_load(NULL));
}

/*
 * The same with the ids resolved, each watching the peer as its
 * neighbour (a quarter of the rounds on the debug kernel too).
 */
TEST_F_TIMEOUT(ul, unload_with_resolved_ids, 1200)
{
	int round, i, fd, rounds = softcm_rounds(ROUNDS / 3);
	struct softcm_event ev;
	__u32 h;

	for (round = 0; round < rounds; round++) {
		ASSERT_EQ(0, softcm_ensure_loaded()) TH_LOG("round %d", round);
		ASSERT_EQ(0, netns_enter(self->ut));
		fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
		ASSERT_EQ(0, netns_enter(self->home));
		ASSERT_LE(0, fd);
		for (i = 0; i < IDS / 4; i++) {
			ASSERT_EQ(0, create_id(fd, SOFTCM_PS_TCP, i, &h));
			ASSERT_EQ(0, resolve4(fd, h, "10.89.0.2"));
		}
		for (i = 0; i < IDS / 4; i++) {
			ASSERT_EQ(0, next_event(fd, &ev, 60000)) TH_LOG("round %d id %d", round, i);
			ASSERT_EQ(SOFTCM_EVENT_ADDR_RESOLVED, ev.event);
		}
		close(fd);
		ASSERT_EQ(0, softcm_unload()) TH_LOG("round %d", round);
	}
	ASSERT_EQ(0, softcm_load(NULL));
}

TEST_HARNESS_MAIN
