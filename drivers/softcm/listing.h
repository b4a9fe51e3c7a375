/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_LISTING_H
#define _SOFTCM_LISTING_H

struct net;
int softcm_listing_proc_init(struct net *net);
void softcm_listing_proc_uninit(struct net *net);

#endif /* _SOFTCM_LISTING_H */
