/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_CM_H
#define _SOFTCM_CM_H

#include <linux/skbuff.h>
#include <uapi/linux/softcm.h>

/*
 * The CM's API to the rest of the module: cm.c's entry points, and the
 * setup of an id's CM state (cmcore.c), which every new id needs.
 */
struct softcm_id;
struct softcm_net;

void softcm_cm_id_init(struct softcm_id *id);
void softcm_cm_destroy(struct softcm_id *id);
void softcm_cm_rcv(struct softcm_net *sn, struct sk_buff *skb);
void softcm_cm_net_uninit(struct softcm_net *sn);

int softcm_cm_connect(struct softcm_id *id, const struct softcm_connect *c);
int softcm_cm_accept_check(struct softcm_id *id, const struct softcm_accept *c, u32 qpn);
int softcm_cm_accept(struct softcm_id *id, const struct softcm_accept *c, u32 qpn);
int softcm_cm_reject(struct softcm_id *id, const struct softcm_reject *c);
int softcm_cm_disconnect(struct softcm_id *id);

#endif /* _SOFTCM_CM_H */
