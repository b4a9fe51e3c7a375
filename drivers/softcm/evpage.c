// SPDX-License-Identifier: GPL-2.0
/*
 * The page a file shares with its user (struct softcm_event_page): mmap()
 * at SOFTCM_MMAP_EVENT_PAGE.  A library that reads several event records
 * at once keeps there how many it has not handed out yet (@held), and
 * poll() reports the file readable while that is nonzero, so that a
 * poller does not sleep on records already read.
 *
 * The user writes the page; the kernel only reads @held, once per poll(),
 * and nothing else depends on it: any value is harmless.
 *
 * One page per file, zeroed and charged to the memory cgroup of the first
 * mapper, allocated on the first mmap().  The file holds a reference, and
 * every mapping another through its page table entry (vm_insert_page()),
 * so the page outlives whichever of the file and its mappings goes last,
 * and is never freed while a mapping can reach it.
 */

#include <linux/gfp.h>
#include <linux/mm.h>
#include <uapi/linux/softcm.h>

#include "compat.h"
#include "evpage.h"
#include "file.h"

static_assert(sizeof(struct softcm_event_page) <= SOFTCM_EVENT_PAGE_SIZE);
static_assert(SOFTCM_EVENT_PAGE_SIZE <= PAGE_SIZE);

/*
 * The mapping holds its page through its page table entry only: nothing
 * faults in once the entry is gone (MADV_DONTNEED), the mapping is simply
 * dead.  Having operations at all keeps the mapping from being taken for
 * an anonymous one.
 */
static vm_fault_t evpage_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct evpage_vm_ops = {
	.fault = evpage_fault,
};

/* @sf's page, allocated by the first caller; NULL if that fails. */
static struct page *get_page_of(struct softcm_file *sf)
{
	struct page *page, *old;

	/* Pairs with the cmpxchg_release() below: the page's zeroes first. */
	page = smp_load_acquire(&sf->evpage);
	if (page)
		return page;
	page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!page)
		return NULL;
	/* A concurrent first mmap() may win: then its page is the file's. */
	old = cmpxchg_release(&sf->evpage, NULL, page);
	if (old) {
		__free_page(page);
		return old;
	}
	return page;
}

/*
 * Only the one page, shared, never executable: mprotect() cannot add
 * PROT_EXEC later (no VM_MAYEXEC), mremap() cannot grow it, and a core
 * dump leaves it out.
 */
int softcm_evpage_mmap(struct softcm_file *sf, struct vm_area_struct *vma)
{
	struct page *page;

	if (vma->vm_pgoff != SOFTCM_MMAP_EVENT_PAGE ||
	    vma->vm_end - vma->vm_start > PAGE_SIZE ||
	    !(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	page = get_page_of(sf);
	if (!page)
		return -ENOMEM;
	vm_flags_clear(vma, VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &evpage_vm_ops;
	return vm_insert_page(vma, vma->vm_start, page);
}

/* poll(): does the user hold records it read and has not handed out? */
bool softcm_evpage_held(struct softcm_file *sf)
{
	struct softcm_event_page *p;
	struct page *page;

	/* Pairs with get_page_of()'s cmpxchg_release(). */
	page = smp_load_acquire(&sf->evpage);
	if (!page)
		return false;
	p = page_address(page);
	return READ_ONCE(p->held) != 0;
}

/* Last close: the file's reference goes; mappings keep theirs. */
void softcm_evpage_release(struct softcm_file *sf)
{
	if (sf->evpage)
		put_page(sf->evpage);
}
