// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Address handles made from a received completion, as a UD responder
 * answers its requester (udaddy, ibv_ud_pingpong, perftest -c UD): the
 * attributes come from the work completion and from the 40 bytes a UD
 * receive buffer starts with.  On RoCEv2 those bytes hold either an IPv6
 * header (a GRH) or, in their last 20, the IPv4 header of the datagram:
 * the IPv4 header is believed when its version is 4 and its checksum is
 * right, as libibverbs does.  The reply's source GID is the entry of our
 * table the request was sent to.
 */
#include <netinet/in.h>
#include <netinet/ip.h>
#include <string.h>

#include "internal.h"

/* The IPv4 header's checksum, folded: 0 when it is right. */
static uint16_t ip4_sum(const struct iphdr *ip)
{
	const uint8_t *p = (const uint8_t *)ip;
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/* What the 40 bytes hold: 4 or 6; 0 for neither. */
static int grh_version(const struct ibv_grh *grh)
{
	struct iphdr ip;
	int v6 = (be32toh(grh->version_tclass_flow) >> 28) == 6;

	memcpy(&ip, (const uint8_t *)grh + 20, sizeof(ip));
	if (ip.version == 4 && ip.ihl == 5 && (!v6 || !ip4_sum(&ip)))
		return 4;
	return v6 ? 6 : 0;
}

/* The index of @gid in the port's table, a RoCEv2 entry; -1 with errno. */
static int find_gid(struct ibv_context *context, uint8_t port_num, const union ibv_gid *gid)
{
	struct ibv_port_attr pattr;
	struct ibv_gid_entry e;
	int ret;

	ret = ibv_query_port(context, port_num, &pattr);
	if (ret)
		return softcm_err(ret);
	for (int i = 0; i < pattr.gid_tbl_len; i++) {
		ret = ibv_query_gid_ex(context, port_num, i, &e, 0);
		if (ret == ENODATA)
			continue;
		if (ret)
			return softcm_err(ret);
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && !memcmp(e.gid.raw, gid->raw, 16))
			return i;
	}
	return softcm_err(ENOENT);
}

static void v4_mapped(union ibv_gid *gid, uint32_t addr)
{
	memset(gid->raw, 0, 10);
	gid->raw[10] = gid->raw[11] = 0xff;
	memcpy(gid->raw + 12, &addr, 4);
}

/* 0, or -1 with errno: EPROTONOSUPPORT, EINVAL (multicast), ENOENT. */
SOFTCM_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
				      struct ibv_wc *wc, struct ibv_grh *grh,
				      struct ibv_ah_attr *ah_attr)
{
	union ibv_gid sgid;
	struct iphdr ip;
	uint32_t vtf;
	int index;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;

	ah_attr->is_global = 1;
	vtf = be32toh(grh->version_tclass_flow);
	ah_attr->grh.flow_label = vtf & 0xfffff;
	switch (grh_version(grh)) {
	case 4:
		memcpy(&ip, (uint8_t *)grh + 20, sizeof(ip));
		if (IN_MULTICAST(be32toh(ip.daddr)))
			return softcm_err(EINVAL);
		v4_mapped(&sgid, ip.daddr);
		v4_mapped(&ah_attr->grh.dgid, ip.saddr);
		ah_attr->grh.hop_limit = ip.ttl;
		ah_attr->grh.traffic_class = ip.tos;
		break;
	case 6:
		/* RoCEv2 only: the next header is UDP */
		if (grh->next_hdr != IPPROTO_UDP)
			return softcm_err(EPROTONOSUPPORT);
		if (grh->dgid.raw[0] == 0xff)
			return softcm_err(EINVAL);
		sgid = grh->dgid;
		ah_attr->grh.dgid = grh->sgid;
		ah_attr->grh.hop_limit = grh->hop_limit;
		ah_attr->grh.traffic_class = (vtf >> 20) & 0xff;
		break;
	default:
		return softcm_err(EPROTONOSUPPORT);
	}
	index = find_gid(context, port_num, &sgid);
	if (index < 0)
		return -1;
	ah_attr->grh.sgid_index = index;
	return 0;
}

SOFTCM_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
						   struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}

/*
 * The Ethernet address a RoCE destination resolves to.  softcm's port is
 * not one netdev's, and the kernel resolves neighbours itself when it
 * sends: nothing to give, EOPNOTSUPP (libibverbs returns a negative errno
 * value here, and -EOPNOTSUPP is what it answers for an unsupported call).
 */
SOFTCM_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
					      struct ibv_ah_attr *attr,
					      uint8_t eth_mac[6], uint16_t *vid)
{
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}
