/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel APIs that differ between the kernels softcm builds for:
 * Debian 12's 6.1 and 6.12.  The code is written against the newer API;
 * for an older kernel this header supplies it, in terms of what that
 * kernel has.  Each entry gives the release that brought the API, and
 * nothing else in the tree tests the kernel's version.
 *
 * Apart from the header that moved, the entries are macros, expanded
 * where they are used, so that this header includes nothing for them:
 * a file using an API includes what it needs for it on either kernel.
 */
#ifndef _SOFTCM_COMPAT_H
#define _SOFTCM_COMPAT_H

#include <linux/version.h>

/* 6.12 moved the unaligned access helpers from <asm/> to <linux/>. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * 6.12 made struct fd one tagged word, read through fd_file() and
 * fd_empty(); before, it had a plain @file.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
#define fd_file(f)	((f).file)
#define fd_empty(f)	(!(f).file)
#endif

/*
 * 6.3 made vma->vm_flags read-only: changes go through vm_flags_set()
 * and vm_flags_clear(), which also write-lock the VMA (per-VMA locks).
 * Before, mmap_lock held for writing covered a plain write.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#define vm_flags_set(vma, flags)	((vma)->vm_flags |= (flags))
#define vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))
#endif

/*
 * 6.6 added register_net_sysctl_sz(), which takes the table's length;
 * by 6.12 the length is the only end a table has, while 6.1 stops at
 * the empty sentinel entry.  A table for both keeps the sentinel and
 * passes a length that leaves it out.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
#define register_net_sysctl_sz(net, path, table, size) \
	register_net_sysctl(net, path, table)
#endif

/*
 * 6.10 dropped __assign_str()'s source argument: the string is the one
 * its __string() field was sized from.  The macro is defined anew at
 * each stage of <trace/define_trace.h>, so it cannot be shimmed; ours
 * takes both arguments and passes what the kernel's takes.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define softcm_assign_str(dst, src)	__assign_str(dst)
#else
#define softcm_assign_str(dst, src)	__assign_str(dst, src)
#endif

#endif /* _SOFTCM_COMPAT_H */
