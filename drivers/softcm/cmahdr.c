// SPDX-License-Identifier: GPL-2.0
/*
 * What rdma_cm adds to the IB CM for IP addressing: the service ID that
 * names a port space and port, and the 36-byte header at the front of a
 * REQ's (or SIDR_REQ's) private data carrying both IP addresses and the
 * active side's port (reference §5.1).
 */

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <kunit/visibility.h>
#include <softcm/wire.h>
#include <uapi/linux/softcm.h>

#include "cmahdr.h"

#define SID_PS_MASK	0xffffffffffff0000ULL

u64 softcm_service_id(u16 ps, u16 port)
{
	return (u64)ps << 16 | port;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_service_id);

/* Only rdma_cm's IP port spaces: anything else is not for us. */
int softcm_service_split(u64 sid, u16 *ps, u16 *port)
{
	u64 space = sid & SID_PS_MASK;

	if (space != (u64)SOFTCM_PS_TCP << 16 && space != (u64)SOFTCM_PS_UDP << 16)
		return -EINVAL;
	*ps = sid >> 16;
	*port = sid & 0xffff;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_service_split);

static void put_addr(u8 *field, const struct sockaddr_storage *ss)
{
	memset(field, 0, 16);
	if (ss->ss_family == AF_INET)
		memcpy(field + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	else
		memcpy(field, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
}

/* @src's port goes in the header; the destination port is the SID's. */
int softcm_cma_hdr_put(u8 *pdata, const struct sockaddr_storage *src,
		       const struct sockaddr_storage *dst)
{
	if (src->ss_family != dst->ss_family ||
	    (src->ss_family != AF_INET && src->ss_family != AF_INET6))
		return -EAFNOSUPPORT;
	pdata[0] = SOFTCM_CMA_VERSION;
	pdata[1] = (src->ss_family == AF_INET ? 4 : 6) << 4;
	if (src->ss_family == AF_INET)
		memcpy(pdata + 2, &((const struct sockaddr_in *)src)->sin_port, 2);
	else
		memcpy(pdata + 2, &((const struct sockaddr_in6 *)src)->sin6_port, 2);
	put_addr(pdata + 4, src);
	put_addr(pdata + 20, dst);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_cma_hdr_put);

static void get_addr(const u8 *field, int ipv, __be16 port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (ipv == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = port;
		memcpy(&sin->sin_addr, field + 12, 4);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		memcpy(&sin6->sin6_addr, field, 16);
	}
}

/*
 * As rdma_cm's passive side reads it: version 0 only (else -EINVAL), IP
 * version 4 or 6 (else -EAFNOSUPPORT).  @dport comes from the service ID.
 */
int softcm_cma_hdr_get(const u8 *pdata, u16 dport, struct sockaddr_storage *src,
		       struct sockaddr_storage *dst)
{
	int ipv = pdata[1] >> 4;
	__be16 sport;

	if (pdata[0] != SOFTCM_CMA_VERSION)
		return -EINVAL;
	if (ipv != 4 && ipv != 6)
		return -EAFNOSUPPORT;
	memcpy(&sport, pdata + 2, 2);
	get_addr(pdata + 4, ipv, sport, src);
	get_addr(pdata + 20, ipv, htons(dport), dst);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_cma_hdr_get);
