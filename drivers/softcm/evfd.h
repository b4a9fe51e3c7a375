/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_EVFD_H
#define _SOFTCM_EVFD_H

#include <uapi/linux/softcm.h>

struct softcm_file;
struct softcm_newfd;

int softcm_evfd_create_comp_channel(struct softcm_file *sf,
				    struct softcm_create_comp_channel *c,
				    struct softcm_newfd *nf);
int softcm_evfd_create_async(struct softcm_file *sf,
			     struct softcm_create_async_fd *c,
			     struct softcm_newfd *nf);

#endif /* _SOFTCM_EVFD_H */
