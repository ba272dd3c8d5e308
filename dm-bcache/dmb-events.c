// SPDX-License-Identifier: GPL-2.0
/*
 * dm events: every change the status line reports without I/O asking for
 * it (the metadata state turning fail, needs_check, the dirty count
 * reaching zero, the mode a message switched) raises a dm event, so that
 * dmeventd and `dmsetup wait` learn of it as they do for dm-cache and
 * dm-thin.
 *
 * Owns the list of tables attached to an index (ix->tables, under
 * ix->tables_lock, a spinlock: events are raised from the index worker
 * and the write-back worker) and each table's event work.  dm_table_event()
 * takes a mutex, so it runs from that work, never from the raiser.
 */
#include "dmb-target.h"

static void event_work(struct work_struct *w)
{
	struct dmb_cache *dc = container_of(w, struct dmb_cache, event_work);

	dm_table_event(dc->ti->table);
}

void dmb_events_init(struct dmb_index *ix)
{
	spin_lock_init(&ix->tables_lock);
	INIT_LIST_HEAD(&ix->tables);
}

void dmb_events_attach(struct dmb_cache *dc)
{
	struct dmb_index *ix = dc->ix;

	INIT_WORK(&dc->event_work, event_work);
	spin_lock(&ix->tables_lock);
	list_add_tail(&dc->ix_node, &ix->tables);
	spin_unlock(&ix->tables_lock);
}

/* After this no event work of @dc runs or is queued. */
void dmb_events_detach(struct dmb_cache *dc)
{
	struct dmb_index *ix = dc->ix;

	spin_lock(&ix->tables_lock);
	list_del_init(&dc->ix_node);
	spin_unlock(&ix->tables_lock);
	cancel_work_sync(&dc->event_work);
}

void dmb_table_changed(struct dmb_cache *dc)
{
	schedule_work(&dc->event_work);
}

void dmb_index_changed(struct dmb_index *ix)
{
	struct dmb_cache *dc;

	spin_lock(&ix->tables_lock);
	list_for_each_entry(dc, &ix->tables, ix_node)
		schedule_work(&dc->event_work);
	spin_unlock(&ix->tables_lock);
}
