/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SOFTCM_BACKLOG_H
#define _SOFTCM_BACKLOG_H

#include <linux/types.h>

struct softcm_event_entry;
struct softcm_id;

bool softcm_backlog_admit(struct softcm_id *listener);
void softcm_backlog_queue(struct softcm_id *listener, struct softcm_id *id,
			  struct softcm_event_entry *e);
void softcm_backlog_promote(struct softcm_id *listener);
void softcm_backlog_flush(struct softcm_id *listener);

#endif /* _SOFTCM_BACKLOG_H */
