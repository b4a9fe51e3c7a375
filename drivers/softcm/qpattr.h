/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_QPATTR_H
#define _SOFTCM_QPATTR_H

struct softcm_id;
struct softcm_init_qp_attr;

int softcm_qpattr_init(struct softcm_id *id, struct softcm_init_qp_attr *c);

#endif /* _SOFTCM_QPATTR_H */
