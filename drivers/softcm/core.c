// SPDX-License-Identifier: GPL-2.0
/*
 * What every layer of the module shares and nothing owns: the workqueue
 * on which resolutions, notices, the receive work and the CM's timers
 * run.  It lives from before the first namespace to after the last, so
 * that a namespace's exit can flush it.
 */

#include <linux/workqueue.h>
#include <kunit/visibility.h>

#include "core.h"

static struct workqueue_struct *softcm_wq;

struct workqueue_struct *softcm_workqueue(void)
{
	return softcm_wq;
}
EXPORT_SYMBOL_IF_KUNIT(softcm_workqueue);

int softcm_core_init(void)
{
	softcm_wq = alloc_workqueue("softcm", WQ_MEM_RECLAIM, 0);
	return softcm_wq ? 0 : -ENOMEM;
}

/* Every namespace is gone: this runs whatever they left queued, then frees. */
void softcm_core_uninit(void)
{
	destroy_workqueue(softcm_wq);
}
