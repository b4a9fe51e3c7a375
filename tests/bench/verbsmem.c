// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel memory per verbs object: creates N completion queues, then N
 * queue pairs (RC, in RESET, as after ibv_create_qp) on one PD and CQ,
 * with raw ioctls on /dev/softcm, and reports the growth of the kernel's
 * slab and vmalloc memory per object, for a small and a large queue
 * depth.  Output: cmbench lines (report.py reads them).
 *
 *   verbsmem [-n N] [-r RUNS]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/softcm.h>

#define MAX_RUNS 16

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Slab plus vmalloc, in KiB: where the module's allocations land. */
static long kmem_kib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long v, kib = 0;

	if (!f)
		die("/proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %ld kB", &v) == 1 ||
		    sscanf(line, "VmallocUsed: %ld kB", &v) == 1)
			kib += v;
	fclose(f);
	return kib;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *metric, unsigned int n, unsigned int depth,
		   double *v, unsigned int runs)
{
	qsort(v, runs, sizeof(*v), cmp_dbl);
	printf("cmbench system=softcm topo=none case=verbs-d%u n=%u window=0 runs=%u "
	       "metric=%s unit=bytes min=%.6g median=%.6g max=%.6g\n",
	       depth, n, runs, metric, v[0], v[runs / 2], v[runs - 1]);
	fflush(stdout);
}

static void run_once(unsigned int n, unsigned int depth, double *per_cq, double *per_qp)
{
	struct softcm_alloc_pd pd = { 0 };
	struct softcm_create_cq cq = { 0 };
	unsigned int i;
	long before;
	int fd;

	fd = open("/dev/softcm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open /dev/softcm");
	if (ioctl(fd, SOFTCM_IOCTL_ALLOC_PD, &pd))
		die("ALLOC_PD");

	before = kmem_kib();
	for (i = 0; i < n; i++) {
		cq = (struct softcm_create_cq){ .cqe = depth, .channel_fd = -1 };
		if (ioctl(fd, SOFTCM_IOCTL_CREATE_CQ, &cq))
			die("CREATE_CQ");
	}
	*per_cq = (double)(kmem_kib() - before) * 1024 / n;

	/* The last CQ serves every QP, for both queues. */
	before = kmem_kib();
	for (i = 0; i < n; i++) {
		struct softcm_create_qp qp = {
			.pd_handle = pd.handle,
			.send_cq_handle = cq.handle,
			.recv_cq_handle = cq.handle,
			.qp_type = 2,	/* IBV_QPT_RC */
			.cap = {
				.max_send_wr = depth, .max_recv_wr = depth,
				.max_send_sge = 1, .max_recv_sge = 1,
			},
		};

		if (ioctl(fd, SOFTCM_IOCTL_CREATE_QP, &qp))
			die("CREATE_QP");
	}
	*per_qp = (double)(kmem_kib() - before) * 1024 / n;
	close(fd);
}

int main(int argc, char **argv)
{
	static const unsigned int depths[] = { 16, 256 };
	double cq[MAX_RUNS], qp[MAX_RUNS];
	unsigned int n = 1000, runs = 3, d, r;
	int c;

	while ((c = getopt(argc, argv, "n:r:")) != -1) {
		switch (c) {
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'r': runs = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: verbsmem [-n N] [-r RUNS]\n");
			return 2;
		}
	}
	if (!n || !runs || runs > MAX_RUNS) {
		fprintf(stderr, "verbsmem: N > 0, 1 <= RUNS <= %d\n", MAX_RUNS);
		return 2;
	}
	for (d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		for (r = 0; r < runs; r++)
			run_once(n, depths[d], &cq[r], &qp[r]);
		report("kmem_per_cq", n, depths[d], cq, runs);
		report("kmem_per_qp", n, depths[d], qp, runs);
	}
	return 0;
}
