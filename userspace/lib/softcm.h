/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * libsoftcm: softcm-specific additions.  The rdma_* calls themselves are
 * declared by rdma-core's <rdma/rdma_cma.h>, which libsoftcm implements.
 *
 * Every call returns 0 (or a non-negative value) on success and -1 with
 * errno set on failure.
 */
#ifndef _SOFTCM_H
#define _SOFTCM_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * softcm_get_abi_version - ABI version of the loaded softcm module
 *
 * Return: the version published in /sys/class/misc/softcm/abi_version,
 * or -1 with errno ENODEV when the module is not loaded, or EPROTO when the
 * file does not hold a version number.
 */
int softcm_get_abi_version(void);

/**
 * softcm_check_abi - whether this library can drive the loaded module
 *
 * Return: 0 when the module's ABI version is the one the library was built
 * for; -1 with errno ENODEV (module not loaded) or EPROTONOSUPPORT (another
 * ABI version).
 */
int softcm_check_abi(void);

/**
 * softcm_version - the library's version string, e.g. "0.1.0"
 */
const char *softcm_version(void);

#ifdef __cplusplus
}
#endif

#endif /* _SOFTCM_H */
