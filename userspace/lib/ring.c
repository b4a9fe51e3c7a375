// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * The areas of QPs and CQs the kernel shares (uapi/linux/softcm.h,
 * "Rings"): mapped at creation, unmapped at destruction.  What the kernel
 * writes is mapped read-only (the kernel refuses a writable mapping of
 * it), what we write read-write; neither is inherited across fork(), as
 * libibverbs' ibv_fork_init() would have it for a provider's queues.
 */
#include <sys/mman.h>

#include "internal.h"

/* 0, or -1 with errno. */
int softcm_area_map(struct ibv_context *ctx, struct softcm_area *a,
		    const struct softcm_ring_map *m, int writable)
{
	void *p;

	p = mmap(NULL, m->size, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED,
		 ctx->cmd_fd, m->offset);
	if (p == MAP_FAILED)
		return -1;
	madvise(p, m->size, MADV_DONTFORK);
	a->addr = p;
	a->size = m->size;
	return 0;
}

void softcm_area_unmap(struct softcm_area *a)
{
	if (a->addr)
		munmap(a->addr, a->size);
	a->addr = NULL;
}
