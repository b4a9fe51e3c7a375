/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers on the IPv4/IPv6 socket addresses ids carry.  An id's
 * addresses are always either AF_UNSPEC (all zero), a sockaddr_in or a
 * sockaddr_in6, stored in a sockaddr_storage.
 */
#ifndef _SOFTCM_SOCKADDR_H
#define _SOFTCM_SOCKADDR_H

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/socket.h>
#include <net/ipv6.h>

/*
 * An IPv4 or IPv6 address in 28 bytes rather than a sockaddr_storage's
 * 128: what a connection's packets carry, kept in every connected id.
 */
union softcm_inaddr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

static inline size_t softcm_addr_size(const struct sockaddr_storage *ss)
{
	switch (ss->ss_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return sizeof(struct sockaddr);
	}
}

static inline bool softcm_addr_any(const struct sockaddr_storage *ss)
{
	switch (ss->ss_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
	case AF_INET6:
		return ipv6_addr_any(&((const struct sockaddr_in6 *)ss)->sin6_addr);
	default:
		return true;
	}
}

/*
 * Same family and same address; ports are not compared.  A link-local
 * IPv6 address names a host only on its link: two with different scope
 * ids differ, and a scope id of 0 (link not known) matches any link.
 */
static inline bool softcm_sa_equal(const struct sockaddr *a, const struct sockaddr *b)
{
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
	const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)b;

	if (a->sa_family != b->sa_family)
		return false;
	switch (a->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	case AF_INET6:
		if (!ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr))
			return false;
		return !(ipv6_addr_type(&a6->sin6_addr) & IPV6_ADDR_LINKLOCAL) ||
		       !a6->sin6_scope_id || !b6->sin6_scope_id ||
		       a6->sin6_scope_id == b6->sin6_scope_id;
	default:
		return true;
	}
}

static inline bool softcm_addr_equal(const struct sockaddr_storage *a,
				     const struct sockaddr_storage *b)
{
	return softcm_sa_equal((const struct sockaddr *)a, (const struct sockaddr *)b);
}

static inline void softcm_inaddr_set(union softcm_inaddr *a, const struct sockaddr_storage *ss)
{
	memset(a, 0, sizeof(*a));
	memcpy(a, ss, min(softcm_addr_size(ss), sizeof(*a)));
}

/*
 * A user's IPv4 or IPv6 address, its length checked, into a clean
 * sockaddr: family, port, address, the IPv6 flow label and a link-local
 * address's scope id; every other byte reads as zero.  What each caller
 * accepts beyond that (a local address, a wildcard) is the caller's rule.
 */
static inline int softcm_addr_parse(const void *addr, u32 len, struct sockaddr_storage *ss)
{
	const struct sockaddr *sa = addr;

	memset(ss, 0, sizeof(*ss));
	if (len < sizeof(sa->sa_family))
		return -EINVAL;
	switch (sa->sa_family) {
	case AF_INET: {
		const struct sockaddr_in *in = addr;
		struct sockaddr_in *out = (struct sockaddr_in *)ss;

		if (len < sizeof(*in))
			return -EINVAL;
		out->sin_family = AF_INET;
		out->sin_port = in->sin_port;
		out->sin_addr = in->sin_addr;
		return 0;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = addr;
		struct sockaddr_in6 *out = (struct sockaddr_in6 *)ss;

		if (len < sizeof(*in6))
			return -EINVAL;
		out->sin6_family = AF_INET6;
		out->sin6_port = in6->sin6_port;
		out->sin6_addr = in6->sin6_addr;
		out->sin6_flowinfo = in6->sin6_flowinfo & IPV6_FLOWLABEL_MASK;
		if (ipv6_addr_type(&in6->sin6_addr) & IPV6_ADDR_LINKLOCAL)
			out->sin6_scope_id = in6->sin6_scope_id;
		return 0;
	}
	default:
		return -EAFNOSUPPORT;
	}
}

/*
 * An IPv4 or IPv6 address as IPv6, IPv4 v4-mapped: the form RoCE GIDs and
 * the neighbour and address events take (rdma_ip2gid()).
 */
static inline void softcm_addr_to_in6(const struct sockaddr_storage *ss, struct in6_addr *a)
{
	if (ss->ss_family == AF_INET)
		ipv6_addr_set_v4mapped(((const struct sockaddr_in *)ss)->sin_addr.s_addr, a);
	else
		*a = ((const struct sockaddr_in6 *)ss)->sin6_addr;
}

/* Port in host order; 0 for AF_UNSPEC. */
static inline u16 softcm_addr_port(const struct sockaddr_storage *ss)
{
	switch (ss->ss_family) {
	case AF_INET:
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	case AF_INET6:
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	default:
		return 0;
	}
}

static inline void softcm_addr_set_port(struct sockaddr_storage *ss, u16 port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

#endif /* _SOFTCM_SOCKADDR_H */
