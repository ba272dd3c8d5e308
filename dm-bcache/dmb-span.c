// SPDX-License-Identifier: GPL-2.0
/*
 * Spans: which origin ranges writes in flight, and data on its way into
 * the cache, cover; see dmb-target.h.  One list under a spinlock: it
 * holds only what is in flight, and every operation is a short walk.
 */
#include "dmb-target.h"

static bool overlap(const struct dmb_span *a, sector_t start, sector_t end)
{
	return a->start < end && start < a->end;
}

/* A write starts: spans it overlaps (and itself, if another write) lose. */
void dmb_span_write(struct dmb_index *ix, struct dmb_span *sp,
		    sector_t start, u32 sectors)
{
	struct dmb_span *o;
	unsigned long flags;

	sp->start = start;
	sp->end = start + sectors;
	sp->write = true;
	sp->contended = false;
	spin_lock_irqsave(&ix->span_lock, flags);
	list_for_each_entry(o, &ix->spans, node) {
		if (!overlap(o, sp->start, sp->end))
			continue;
		o->contended = true;
		if (o->write)
			sp->contended = true;
	}
	list_add_tail(&sp->node, &ix->spans);
	sp->on = true;
	spin_unlock_irqrestore(&ix->span_lock, flags);
}

/* A miss may be filled only if no write to its range is in flight. */
bool dmb_span_fill(struct dmb_index *ix, struct dmb_span *sp,
		   sector_t start, u32 sectors)
{
	struct dmb_span *o;
	unsigned long flags;
	bool ok = true;

	sp->start = start;
	sp->end = start + sectors;
	sp->write = false;
	sp->contended = false;
	spin_lock_irqsave(&ix->span_lock, flags);
	list_for_each_entry(o, &ix->spans, node)
		if (o->write && overlap(o, sp->start, sp->end))
			ok = false;
	if (ok) {
		list_add_tail(&sp->node, &ix->spans);
		sp->on = true;
	}
	spin_unlock_irqrestore(&ix->span_lock, flags);
	return ok;
}

/* Hand a fill's span from the bio to the fill that outlives it. */
void dmb_span_move(struct dmb_index *ix, struct dmb_span *from,
		   struct dmb_span *to)
{
	unsigned long flags;

	spin_lock_irqsave(&ix->span_lock, flags);
	*to = *from;
	if (from->on)
		list_replace(&from->node, &to->node);
	from->on = false;
	spin_unlock_irqrestore(&ix->span_lock, flags);
}

/* Done with @sp: was it contended?  Harmless if it never started. */
bool dmb_span_end(struct dmb_index *ix, struct dmb_span *sp)
{
	unsigned long flags;
	bool contended;

	spin_lock_irqsave(&ix->span_lock, flags);
	if (sp->on)
		list_del(&sp->node);
	sp->on = false;
	contended = sp->contended;
	spin_unlock_irqrestore(&ix->span_lock, flags);
	return contended;
}
