// SPDX-License-Identifier: GPL-2.0
/*
 * The memory of the rings a QP or a CQ shares with its user (the
 * "Rings" section of uapi/linux/softcm.h): pages the kernel reaches
 * through one vmap() and the user through mmap() at an offset the file
 * hands out when the object publishes the memory.
 *
 * Lifetime: the object holds a reference from softcm_ring_alloc() to its
 * free, each mapping one from mmap() to its close (vm_ops, so that a
 * split or a copied mapping takes its own), so the pages are never freed
 * while a mapping can reach them, and nothing of the object is reachable
 * through them.  Destroying the object unpublishes the offset first:
 * no new mapping is made after that.
 *
 * Bounds: every page is charged to the memory cgroup of the creator
 * (__GFP_ACCOUNT), and the namespace counts the bytes of every live ring
 * against net.softcm.max_ring_bytes, from allocation to the last put,
 * with what an RC QP keeps of its queues in the kernel (req.c).
 * The mapping holds the file (vm_file), the file holds the namespace, and
 * the ring holds it too, for a put that comes last.
 */

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>
#include <uapi/linux/softcm.h>

#include "compat.h"
#include "file.h"
#include "netns.h"
#include "ring.h"

/* mmap() offsets, in pages: below 2^19 so that 32-bit off_t reaches them */
#define RING_KEY_MAX	((1UL << 19) - 1)

static void ring_free_pages(struct page **pages, unsigned int n)
{
	while (n--)
		put_page(pages[n]);
	kvfree(pages);
}

/*
 * @bytes more of the namespace's memory that its users' queues hold: 0,
 * or ENOMEM (counted) beyond its max_ring_bytes.
 */
int softcm_ring_charge(struct softcm_net *sn, size_t bytes)
{
	if (atomic_long_add_return(bytes, &sn->ring_bytes) > READ_ONCE(sn->max_ring_bytes)) {
		atomic_long_sub(bytes, &sn->ring_bytes);
		atomic_long_inc(&sn->refused_ring_bytes);
		return -ENOMEM;
	}
	return 0;
}

void softcm_ring_uncharge(struct softcm_net *sn, size_t bytes)
{
	atomic_long_sub(bytes, &sn->ring_bytes);
}

/*
 * @bytes, rounded up to pages, for @sf's namespace: ENOMEM beyond its
 * max_ring_bytes or the memory cgroup's limit.
 */
struct softcm_ring *softcm_ring_alloc(struct softcm_file *sf, size_t bytes, bool readonly)
{
	struct softcm_net *sn = softcm_net(sf->net);
	unsigned int i, npages = PAGE_ALIGN(bytes) >> PAGE_SHIFT;
	size_t charged = (size_t)npages << PAGE_SHIFT;
	struct softcm_ring *ring;
	int ret = -ENOMEM;

	if (!npages)
		return ERR_PTR(-EINVAL);
	if (softcm_ring_charge(sn, charged))
		return ERR_PTR(-ENOMEM);
	ring = kzalloc(sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		goto err_uncharge;
	ring->pages = kvcalloc(npages, sizeof(*ring->pages), GFP_KERNEL_ACCOUNT);
	if (!ring->pages)
		goto err_free_ring;
	for (i = 0; i < npages; i++) {
		ring->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!ring->pages[i])
			goto err_free_pages;
	}
	ring->vaddr = vmap(ring->pages, npages, VM_MAP, PAGE_KERNEL);
	if (!ring->vaddr)
		goto err_free_pages;
	kref_init(&ring->ref);
	ring->npages = npages;
	ring->readonly = readonly;
	ring->net = get_net(sf->net);
	return ring;

err_free_pages:
	ring_free_pages(ring->pages, i);
err_free_ring:
	kfree(ring);
err_uncharge:
	softcm_ring_uncharge(sn, charged);
	return ERR_PTR(ret);
}

static void ring_release(struct kref *ref)
{
	struct softcm_ring *ring = container_of(ref, struct softcm_ring, ref);
	struct net *net = ring->net;

	vunmap(ring->vaddr);
	ring_free_pages(ring->pages, ring->npages);
	softcm_ring_uncharge(softcm_net(net), (size_t)ring->npages << PAGE_SHIFT);
	kfree(ring);
	put_net(net);
}

void softcm_ring_put(struct softcm_ring *ring)
{
	if (ring)
		kref_put(&ring->ref, ring_release);
}

/* Give @ring an mmap() offset in @sf, described in @map. */
int softcm_ring_publish(struct softcm_file *sf, struct softcm_ring *ring,
			struct softcm_ring_map *map)
{
	u32 key;
	int ret;

	ret = xa_alloc(&sf->rings, &key, ring, XA_LIMIT(1, RING_KEY_MAX),
		       GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret == -EBUSY ? -ENOMEM : ret;
	ring->key = key;
	map->offset = (u64)key << PAGE_SHIFT;
	map->size = ring->npages << PAGE_SHIFT;
	map->reserved0 = 0;
	return 0;
}

/* No new mapping of @ring from here on; those made keep it. */
void softcm_ring_unpublish(struct softcm_file *sf, struct softcm_ring *ring)
{
	if (ring && ring->key) {
		xa_erase(&sf->rings, ring->key);
		ring->key = 0;
	}
}

static void ring_vm_open(struct vm_area_struct *vma)
{
	struct softcm_ring *ring = vma->vm_private_data;

	kref_get(&ring->ref);
}

static void ring_vm_close(struct vm_area_struct *vma)
{
	softcm_ring_put(vma->vm_private_data);
}

/* Every page is inserted at mmap(): a fault is a zapped range (MADV_DONTNEED). */
static vm_fault_t ring_vm_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct ring_vm_ops = {
	.open = ring_vm_open,
	.close = ring_vm_close,
	.fault = ring_vm_fault,
};

/*
 * The whole of one published ring, shared, never executable; a ring the
 * kernel writes is read-only for good (no VM_MAYWRITE: mprotect() is
 * EACCES).  It cannot grow (VM_DONTEXPAND) and stays out of core dumps.
 */
int softcm_ring_mmap(struct softcm_file *sf, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	struct softcm_ring *ring;
	unsigned int i;
	int ret;

	if (!(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	xa_lock(&sf->rings);
	ring = xa_load(&sf->rings, vma->vm_pgoff);
	if (ring)
		kref_get(&ring->ref);
	xa_unlock(&sf->rings);
	if (!ring)
		return -EINVAL;
	ret = -EINVAL;
	if (len != (unsigned long)ring->npages << PAGE_SHIFT)
		goto err_put_ring;
	ret = -EACCES;
	if (ring->readonly && (vma->vm_flags & VM_WRITE))
		goto err_put_ring;
	vm_flags_clear(vma, VM_MAYEXEC | (ring->readonly ? VM_MAYWRITE : 0));
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	for (i = 0; i < ring->npages; i++) {
		ret = vm_insert_page(vma, vma->vm_start + ((unsigned long)i << PAGE_SHIFT),
				     ring->pages[i]);
		if (ret)
			goto err_put_ring;
	}
	vma->vm_private_data = ring;
	vma->vm_ops = &ring_vm_ops;
	return 0;

err_put_ring:
	softcm_ring_put(ring);
	return ret;
}
