/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_EVPAGE_H
#define _SOFTCM_EVPAGE_H

#include <linux/types.h>

struct softcm_file;
struct vm_area_struct;

int softcm_evpage_mmap(struct softcm_file *sf, struct vm_area_struct *vma);
bool softcm_evpage_held(struct softcm_file *sf);
void softcm_evpage_release(struct softcm_file *sf);

#endif /* _SOFTCM_EVPAGE_H */
