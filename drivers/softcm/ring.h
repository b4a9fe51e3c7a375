/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_RING_H
#define _SOFTCM_RING_H

#include <linux/kref.h>
#include <linux/types.h>

struct net;
struct page;
struct softcm_file;
struct softcm_net;
struct softcm_ring_map;
struct vm_area_struct;

/*
 * Memory a verbs object shares with its user through mmap(): whole pages,
 * zeroed, charged to the creator's memory cgroup and to its namespace's
 * max_ring_bytes.  The object holds one reference, and every mapping
 * another, so the pages outlive whichever goes last.  @vaddr is the
 * kernel's view of all of them, contiguous.
 */
struct softcm_ring {
	struct kref ref;
	struct net *net;		/* referenced: the namespace charged */
	struct page **pages;
	unsigned int npages;
	bool readonly;			/* mapped without write permission */
	void *vaddr;
	unsigned long key;		/* the file's mmap() offset, in pages; 0: none */
};

int softcm_ring_charge(struct softcm_net *sn, size_t bytes);
void softcm_ring_uncharge(struct softcm_net *sn, size_t bytes);
struct softcm_ring *softcm_ring_alloc(struct softcm_file *sf, size_t bytes, bool readonly);
void softcm_ring_put(struct softcm_ring *ring);
int softcm_ring_publish(struct softcm_file *sf, struct softcm_ring *ring,
			struct softcm_ring_map *map);
void softcm_ring_unpublish(struct softcm_file *sf, struct softcm_ring *ring);
int softcm_ring_mmap(struct softcm_file *sf, struct vm_area_struct *vma);

#endif /* _SOFTCM_RING_H */
