/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * softcm: an RDMA connection manager for hosts without RDMA hardware.
 *
 * Documentation
 * =============
 *
 * The module registers one misc character device, /dev/softcm (mode 0666).
 * Every open of it is a context of its own: the ids it creates, its event
 * queue and the network namespace of the opener.  A context never sees
 * another context's objects; closing the file destroys everything it owns.
 *
 * The ABI version is published, as for the uverbs and rdma_cm devices, in
 * sysfs:
 *
 *     /sys/class/misc/softcm/abi_version      decimal, newline-terminated
 *
 * and userspace must refuse to run on a version it does not know.
 * SOFTCM_ABI_VERSION changes only when an existing command changes in an
 * incompatible way; commands and struct members are added compatibly:
 *
 *   - every struct has fixed-width members, explicit padding to a multiple
 *     of 8 bytes and the same layout for 32- and 64-bit userspace;
 *   - user pointers are carried as __aligned_u64;
 *   - reserved members must be zero and are refused otherwise (EINVAL);
 *   - structs may grow at their end: the kernel accepts a shorter struct
 *     from older userspace (missing members read as zero) and a longer one
 *     from newer userspace as long as the bytes it does not know are zero
 *     (otherwise E2BIG), as copy_struct_from_user() does.
 *
 * Commands are ioctl()s on the file, never write()s carrying pointers.
 *
 * Per-network-namespace tunables live under /proc/sys/net/softcm/:
 *
 *   max_backlog    upper bound of a listener's backlog (1..65535, default
 *                  1024); a listen() asking for more, or for <= 0, gets
 *                  this value.
 */
#ifndef _SOFTCM_UAPI_SOFTCM_H
#define _SOFTCM_UAPI_SOFTCM_H

#include <linux/types.h>

#define SOFTCM_ABI_VERSION	1

#define SOFTCM_DEVICE_NAME	"softcm"
#define SOFTCM_ABI_VERSION_PATH	"/sys/class/misc/softcm/abi_version"

#define SOFTCM_MAX_BACKLOG_DEFAULT	1024
#define SOFTCM_MAX_BACKLOG_LIMIT	65535

#endif /* _SOFTCM_UAPI_SOFTCM_H */
