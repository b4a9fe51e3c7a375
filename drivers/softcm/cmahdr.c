// SPDX-License-Identifier: GPL-2.0
/*
 * What rdma_cm adds to the IB CM for IP addressing: the service ID that
 * names a port space and port, and the 36-byte header at the front of a
 * REQ's (or SIDR_REQ's) private data carrying both IP addresses and the
 * active side's port (cma.c's struct cma_hdr and cma_get_service_id()).
 */

#include <linux/in.h>
#include <linux/export.h>
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

static bool v4_ok(const struct sockaddr_in *hsrc, const struct sockaddr_in *hdst,
		  const struct sockaddr_in *psrc, const struct sockaddr_in *pdst,
		  bool via_loopback)
{
	__be32 s = hsrc->sin_addr.s_addr, d = hdst->sin_addr.s_addr;

	if (s != psrc->sin_addr.s_addr || d != pdst->sin_addr.s_addr)
		return false;
	if (ipv4_is_multicast(s) || ipv4_is_lbcast(s) || ipv4_is_zeronet(s) ||
	    ipv4_is_multicast(d) || ipv4_is_lbcast(d) || ipv4_is_zeronet(d))
		return false;
	return via_loopback || (!ipv4_is_loopback(s) && !ipv4_is_loopback(d));
}

static bool v6_ok(const struct sockaddr_in6 *hsrc, const struct sockaddr_in6 *hdst,
		  const struct sockaddr_in6 *psrc, const struct sockaddr_in6 *pdst,
		  bool via_loopback)
{
	const struct in6_addr *s = &hsrc->sin6_addr, *d = &hdst->sin6_addr;

	if (!ipv6_addr_equal(s, &psrc->sin6_addr) || !ipv6_addr_equal(d, &pdst->sin6_addr))
		return false;
	if (ipv6_addr_any(s) || ipv6_addr_is_multicast(s) ||
	    ipv6_addr_any(d) || ipv6_addr_is_multicast(d))
		return false;
	return via_loopback || (!ipv6_addr_loopback(s) && !ipv6_addr_loopback(d));
}

/*
 * Does a request's rdma_cm header (@hsrc, @hdst, as softcm_cma_hdr_get()
 * read them) tell the truth about the packet that carried it (@psrc,
 * @pdst, from its IP header)?  The passive side picks the listener and
 * reports the peer from the header, so the header must name exactly the
 * packet's addresses, in the same family, neither of them a wildcard,
 * broadcast or multicast one; and a loopback address only on a packet
 * that came in over a loopback device, so that a listener bound to
 * 127.0.0.1 or ::1 stays out of the network's reach.  The Linux CM's
 * validate_net_dev() refuses the same requests (and loopback ones always).
 * Ports are not compared: the packet's are RoCEv2's, not rdma_cm's.
 */
bool softcm_cma_hdr_matches(const struct sockaddr_storage *hsrc,
			    const struct sockaddr_storage *hdst,
			    const struct sockaddr_storage *psrc,
			    const struct sockaddr_storage *pdst, bool via_loopback)
{
	sa_family_t f = hsrc->ss_family;

	if (hdst->ss_family != f || psrc->ss_family != f || pdst->ss_family != f)
		return false;
	if (f == AF_INET)
		return v4_ok((const struct sockaddr_in *)hsrc, (const struct sockaddr_in *)hdst,
			     (const struct sockaddr_in *)psrc, (const struct sockaddr_in *)pdst,
			     via_loopback);
	if (f == AF_INET6)
		return v6_ok((const struct sockaddr_in6 *)hsrc,
			     (const struct sockaddr_in6 *)hdst,
			     (const struct sockaddr_in6 *)psrc,
			     (const struct sockaddr_in6 *)pdst, via_loopback);
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_cma_hdr_matches);
