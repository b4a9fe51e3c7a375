/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_CMAHDR_H
#define _SOFTCM_CMAHDR_H

#include <linux/socket.h>
#include <linux/types.h>

u64 softcm_service_id(u16 ps, u16 port);
int softcm_service_split(u64 sid, u16 *ps, u16 *port);
int softcm_cma_hdr_put(u8 *pdata, const struct sockaddr_storage *src,
		       const struct sockaddr_storage *dst);
int softcm_cma_hdr_get(const u8 *pdata, u16 dport, struct sockaddr_storage *src,
		       struct sockaddr_storage *dst);
bool softcm_cma_hdr_matches(const struct sockaddr_storage *hsrc,
			    const struct sockaddr_storage *hdst,
			    const struct sockaddr_storage *psrc,
			    const struct sockaddr_storage *pdst, bool via_loopback);

#endif /* _SOFTCM_CMAHDR_H */
