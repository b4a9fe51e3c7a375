/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_QP_H
#define _SOFTCM_QP_H

#include <uapi/linux/softcm.h>

struct softcm_file;

int softcm_qp_create(struct softcm_file *sf, struct softcm_create_qp *c);
int softcm_qp_modify(struct softcm_file *sf, struct softcm_modify_qp *c);
int softcm_qp_query(struct softcm_file *sf, struct softcm_query_qp *c);
int softcm_qp_destroy(struct softcm_file *sf, struct softcm_destroy_qp *c);
int softcm_qp_post_send(struct softcm_file *sf, struct softcm_post *c);
int softcm_qp_post_recv(struct softcm_file *sf, struct softcm_post *c);

#endif /* _SOFTCM_QP_H */
