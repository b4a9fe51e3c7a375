/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_DEVICE_H
#define _SOFTCM_DEVICE_H

#include <uapi/linux/softcm.h>

struct softcm_file;

int softcm_device_query(struct softcm_file *sf, struct softcm_query_device *c);
int softcm_device_query_port(struct softcm_file *sf, struct softcm_query_port *c);
int softcm_device_query_gid(struct softcm_file *sf, struct softcm_query_gid *c);

#endif /* _SOFTCM_DEVICE_H */
