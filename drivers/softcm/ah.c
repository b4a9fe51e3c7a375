// SPDX-License-Identifier: GPL-2.0
/*
 * Address handles.  RoCE has no LIDs, so an AH must be global (a GRH with
 * the destination GID) and name its source by an index of the
 * namespace's GID table that holds an address, as ib_core requires of a
 * RoCE AH; the only port is 1.  The AH keeps a use of its PD until it is
 * destroyed.  The source entry is checked at creation only: an address
 * that goes later makes the sends through this AH fail, not the AH.
 */

#include <linux/errno.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>

#include "ah.h"
#include "file.h"
#include "gid.h"
#include "netns.h"
#include "pd.h"
#include "route.h"

static void ah_destroy(struct softcm_uobj *obj)
{
	struct softcm_ah *ah = container_of(obj, struct softcm_ah, uobj);

	softcm_pd_unuse(ah->pd);
	atomic_dec(&ah->sn->nr_uobjs);
}

static void ah_free(struct softcm_uobj *obj)
{
	kfree_rcu(container_of(obj, struct softcm_ah, uobj), rcu);
}

static const struct softcm_uobj_ops ah_ops = {
	.destroy = ah_destroy,
	.free = ah_free,
};

/*
 * An address vector, for an AH and for a QP's path alike: RoCE has no
 * LIDs, so every address is a GRH's; its fields fit the headers they go
 * into (flow label 20 bits, SL 4); its source GID is in use now (the data
 * path checks it again per packet), and the destination GID is an
 * address of the same family (a packet has one IP header), not ::.  The kernel's
 * verbs refuse such a vector too, when they resolve its MAC address.
 */
int softcm_ah_check_av(struct softcm_net *sn, const struct softcm_ah_attr *a)
{
	u8 gid[16];
	int ifindex;

	if (a->reserved0 || !a->is_global || a->port_num != SOFTCM_PORT_NUM)
		return -EINVAL;
	if (a->flow_label > 0xfffff || a->sl > 15)
		return -EINVAL;
	if (a->sgid_index >= SOFTCM_GID_TABLE_LEN ||
	    !softcm_gid_get(sn, a->sgid_index, gid, &ifindex))
		return -EINVAL;
	if (ipv6_addr_any((const struct in6_addr *)a->dgid) ||
	    ipv6_addr_v4mapped((const struct in6_addr *)gid) !=
	    ipv6_addr_v4mapped((const struct in6_addr *)a->dgid))
		return -EINVAL;
	return 0;
}

/*
 * Whether a path MTU of @path_mtu fits the device of @a's source GID, by
 * rdma_cm's rule (iboe_get_mtu(), as softcm's route resolution): rxe
 * refuses a path MTU above its port's, which follows its netdev, and a
 * larger one would send packets the IP layer drops for their size.
 */
bool softcm_ah_mtu_fits(struct softcm_net *sn, const struct softcm_ah_attr *a, u8 path_mtu)
{
	struct net_device *dev;
	bool fits = false;
	u8 gid[16];
	int ifindex;

	if (a->sgid_index >= SOFTCM_GID_TABLE_LEN ||
	    !softcm_gid_get(sn, a->sgid_index, gid, &ifindex))
		return false;
	rcu_read_lock();
	dev = dev_get_by_index_rcu(sn->net, ifindex);
	if (dev)
		fits = path_mtu <= softcm_ib_mtu(READ_ONCE(dev->mtu));
	rcu_read_unlock();
	return fits;
}

/*
 * The hop limit of the route from @a's source GID to its destination, in
 * place of the one the application asked for: ib_core resolves a user's
 * vector of a connected QP so (ib_resolve_eth_dmac()), and rxe sends what
 * that gives (64 where ibv_rc_pingpong asks for 1).  Out of the source
 * GID's device, as rdma_addr_find_l2_eth_by_grh() binds it; no route is
 * the error ib_core's MODIFY_QP returns.  The neighbour, which ib_core
 * also waits for there, is left to the transmit path.
 */
int softcm_ah_resolve_hop_limit(struct softcm_net *sn, struct softcm_ah_attr *a)
{
	struct in6_addr saddr, daddr;
	int ifindex;

	if (!softcm_gid_get(sn, a->sgid_index, saddr.s6_addr, &ifindex))
		return -EINVAL;
	memcpy(&daddr, a->dgid, sizeof(daddr));
	if (ipv6_addr_v4mapped(&saddr)) {
		struct flowi4 fl4 = {
			.flowi4_oif = ifindex,
			.flowi4_proto = IPPROTO_UDP,
			.daddr = daddr.s6_addr32[3],
			.saddr = saddr.s6_addr32[3],
		};
		struct rtable *rt = ip_route_output_key(sn->net, &fl4);

		if (IS_ERR(rt))
			return PTR_ERR(rt);
		a->hop_limit = ip4_dst_hoplimit(&rt->dst);
		ip_rt_put(rt);
		return 0;
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		struct flowi6 fl6 = {
			.flowi6_oif = ifindex,
			.flowi6_proto = IPPROTO_UDP,
			.daddr = daddr,
			.saddr = saddr,
		};
		struct dst_entry *dst;

		dst = ipv6_stub->ipv6_dst_lookup_flow(sn->net, NULL, &fl6, NULL);
		if (IS_ERR(dst))
			return PTR_ERR(dst);
		a->hop_limit = ip6_dst_hoplimit(dst);
		dst_release(dst);
		return 0;
	}
#else
	return -EAFNOSUPPORT;
#endif
}

int softcm_ah_create(struct softcm_file *sf, struct softcm_create_ah *c)
{
	struct softcm_net *sn = softcm_net(sf->net);
	struct softcm_ah *ah;
	int ret;

	ret = softcm_ah_check_av(sn, &c->attr);
	if (ret)
		return ret;
	ah = kzalloc(sizeof(*ah), GFP_KERNEL_ACCOUNT);
	if (!ah)
		return -ENOMEM;
	softcm_uobj_init(&ah->uobj, SOFTCM_UOBJ_AH, &ah_ops);
	ah->sn = sn;
	ah->attr = c->attr;

	mutex_lock(&sf->uobjs.lock);
	ah->pd = softcm_pd_use(sf, c->pd_handle);
	if (IS_ERR(ah->pd)) {
		ret = PTR_ERR(ah->pd);
		goto err_unlock;
	}
	atomic_inc(&sn->nr_uobjs);
	ret = softcm_uobj_add(&sf->uobjs, &ah->uobj);
	if (ret)
		goto err_unuse;
	c->handle = ah->uobj.handle;	/* ours until committed */
	mutex_unlock(&sf->uobjs.lock);
	return 0;

err_unuse:
	atomic_dec(&sn->nr_uobjs);
	softcm_pd_unuse(ah->pd);
err_unlock:
	mutex_unlock(&sf->uobjs.lock);
	kfree(ah);
	return ret;
}

int softcm_ah_destroy(struct softcm_file *sf, struct softcm_destroy_obj *c)
{
	struct softcm_uobj *obj;

	if (c->reserved0)
		return -EINVAL;
	obj = softcm_uobj_remove(&sf->uobjs, SOFTCM_UOBJ_AH, c->handle);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	softcm_uobj_put(obj);
	return 0;
}

struct softcm_ah *softcm_ah_get(struct softcm_file *sf, u32 handle)
{
	struct softcm_uobj *obj = softcm_uobj_get(&sf->uobjs, SOFTCM_UOBJ_AH, handle);

	if (IS_ERR(obj))
		return ERR_CAST(obj);
	return container_of(obj, struct softcm_ah, uobj);
}

void softcm_ah_put(struct softcm_ah *ah)
{
	softcm_uobj_put(&ah->uobj);
}
