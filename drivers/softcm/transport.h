/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_TRANSPORT_H
#define _SOFTCM_TRANSPORT_H

#include <linux/skbuff.h>
#include <linux/socket.h>
#include <linux/types.h>

struct softcm_net;

/* Where a received CM MAD came from, saved before the skb is queued. */
struct softcm_rx_cb {
	int ifindex;
};

static inline struct softcm_rx_cb *softcm_rx_cb(struct sk_buff *skb)
{
	return (struct softcm_rx_cb *)skb->cb;
}

void softcm_transport_net_init(struct softcm_net *sn);
void softcm_transport_net_uninit(struct softcm_net *sn);

int softcm_transport_get(struct softcm_net *sn);
int softcm_xmit(struct softcm_net *sn, const struct sockaddr *src,
		const struct sockaddr *dst, int oif, u8 tos, const u8 *mad);

#endif /* _SOFTCM_TRANSPORT_H */
