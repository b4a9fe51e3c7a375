// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs device of a namespace, "softcm0": its attributes, its one
 * port's and its GID table's entries, as QUERY_DEVICE, QUERY_PORT and
 * QUERY_GID report them.
 *
 * Every attribute says what softcm does, not what a RoCE card would: the
 * object limits are those uobj.c enforces per file (limits.h), no
 * capability flag is set for a feature that is not there (no atomics, no
 * memory windows, no SRQ, no port events), and the port's state and MTU
 * follow the namespace's addresses and devices at the moment of the query.
 */

#include <linux/errno.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>

#include "device.h"
#include "file.h"
#include "gid.h"
#include "limits.h"
#include "netns.h"

/* libibverbs' values (enum ibv_port_state, ibv_mtu, ...). */
#define PORT_DOWN		1
#define PORT_ACTIVE		4
#define PHYS_DISABLED		3
#define PHYS_LINK_UP		5
#define MTU_256			1
#define MTU_512			2
#define MTU_1024		3
#define MTU_2048		4
#define MTU_4096		5
#define WIDTH_1X		1
#define SPEED_SDR		1
#define LINK_LAYER_ETHERNET	2

/*
 * What a RoCEv2 packet adds to its payload within the device's MTU, as
 * rxe counts it (RXE_MAX_HDR_LENGTH): IPv6, UDP, BTH, RETH or DETH, ICRC,
 * with room to spare.
 */
#define ROCE_HDR_LENGTH		80

int softcm_device_query(struct softcm_file *sf, struct softcm_query_device *c)
{
	struct softcm_device_attr *a = &c->attr;

	memset(a, 0, sizeof(*a));
	/* The CA GUID that our CM messages carry (conntab.c), big endian. */
	a->node_guid = (__force u64)cpu_to_be64(softcm_net(sf->net)->conntab.guid);
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = SOFTCM_MAX_MR_SIZE;
	a->page_size_cap = PAGE_SIZE;
	/* The responder answers a SEND with no receive posted with an RNR NAK. */
	a->device_cap_flags = IB_UVERBS_DEVICE_SYS_IMAGE_GUID |
			      IB_UVERBS_DEVICE_RC_RNR_NAK_GEN;
	a->max_qp = SOFTCM_MAX_QP;
	a->max_qp_wr = SOFTCM_MAX_QP_WR;
	a->max_sge = SOFTCM_MAX_SGE;
	a->max_cq = SOFTCM_MAX_CQ;
	a->max_cqe = SOFTCM_MAX_CQE;
	a->max_mr = SOFTCM_MAX_MR;
	a->max_pd = SOFTCM_MAX_PD;
	a->max_qp_rd_atom = SOFTCM_MAX_QP_RD_ATOM;
	a->max_qp_init_rd_atom = SOFTCM_MAX_QP_INIT_RD_ATOM;
	a->max_ah = SOFTCM_MAX_AH;
	a->max_inline_data = SOFTCM_MAX_INLINE;
	a->max_pkeys = SOFTCM_MAX_PKEYS;
	a->local_ca_ack_delay = SOFTCM_LOCAL_CA_ACK_DELAY;
	a->phys_port_cnt = 1;
	return 0;
}

/* enum ibv_mtu of the largest payload a packet of @mtu bytes carries. */
static u8 ib_mtu(int mtu)
{
	mtu -= ROCE_HDR_LENGTH;
	if (mtu >= 4096)
		return MTU_4096;
	if (mtu >= 2048)
		return MTU_2048;
	if (mtu >= 1024)
		return MTU_1024;
	if (mtu >= 512)
		return MTU_512;
	return MTU_256;
}

/*
 * As rxe's port follows its netdev's MTU: here the largest of the
 * namespace's running devices, loopback aside (its 64K would promise
 * 4096 to peers on any other device); 1024 when there is none.
 */
static u8 active_mtu(struct net *net)
{
	struct net_device *dev;
	int mtu = 0;

	rcu_read_lock();
	for_each_netdev_rcu(net, dev) {
		if (!(dev->flags & IFF_LOOPBACK) && netif_running(dev))
			mtu = max_t(int, mtu, READ_ONCE(dev->mtu));
	}
	rcu_read_unlock();
	return mtu ? ib_mtu(mtu) : MTU_1024;
}

int softcm_device_query_port(struct softcm_file *sf, struct softcm_query_port *c)
{
	struct softcm_port_attr *a = &c->attr;
	bool active;

	if (c->port_num != SOFTCM_PORT_NUM || memchr_inv(c->reserved0, 0, sizeof(c->reserved0)))
		return -EINVAL;
	active = softcm_gid_usable(softcm_net(sf->net));
	memset(a, 0, sizeof(*a));
	/* a CM (ours), and GIDs that are IP addresses, as RoCE cards say */
	a->port_cap_flags = IB_UVERBS_PCF_CM_SUP | IB_UVERBS_PCF_IP_BASED_GIDS;
	a->max_msg_sz = SOFTCM_MAX_MSG_SZ;
	a->gid_tbl_len = SOFTCM_GID_TABLE_LEN;
	a->pkey_tbl_len = SOFTCM_MAX_PKEYS;
	a->state = active ? PORT_ACTIVE : PORT_DOWN;
	a->phys_state = active ? PHYS_LINK_UP : PHYS_DISABLED;
	a->max_mtu = MTU_4096;
	a->active_mtu = active_mtu(sf->net);
	/* what rxe reports for a device whose speed it cannot read */
	a->active_width = WIDTH_1X;
	a->active_speed = SPEED_SDR;
	a->link_layer = LINK_LAYER_ETHERNET;
	return 0;
}

int softcm_device_query_gid(struct softcm_file *sf, struct softcm_query_gid *c)
{
	int ifindex;

	if (c->port_num != SOFTCM_PORT_NUM || memchr_inv(c->reserved0, 0, sizeof(c->reserved0)) ||
	    c->index >= SOFTCM_GID_TABLE_LEN)
		return -EINVAL;
	if (softcm_gid_get(softcm_net(sf->net), c->index, c->gid, &ifindex))
		c->gid_type = SOFTCM_GID_TYPE_ROCE_V2;
	else
		c->gid_type = SOFTCM_GID_TYPE_NONE;
	c->ifindex = ifindex;
	return 0;
}
