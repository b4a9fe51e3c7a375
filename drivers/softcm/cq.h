/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_CQ_H
#define _SOFTCM_CQ_H

#include <uapi/linux/softcm.h>

struct softcm_file;

int softcm_cq_create(struct softcm_file *sf, struct softcm_create_cq *c);
int softcm_cq_destroy(struct softcm_file *sf, struct softcm_destroy_cq *c);
int softcm_cq_req_notify(struct softcm_file *sf, struct softcm_req_notify_cq *c);
int softcm_cq_poll(struct softcm_file *sf, struct softcm_poll_cq *c);

#endif /* _SOFTCM_CQ_H */
