/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_BIND_H
#define _SOFTCM_BIND_H

#include <linux/types.h>

struct sockaddr_storage;
struct softcm_id;

int softcm_id_bind(struct softcm_id *id, const void *addr, u32 addr_len);
int softcm_id_listen(struct softcm_id *id, int backlog);
int softcm_id_set_option(struct softcm_id *id, u32 level, u32 optname, u32 value);
int softcm_id_query_addr(struct softcm_id *id, u32 which, struct sockaddr_storage *ss);

#endif /* _SOFTCM_BIND_H */
