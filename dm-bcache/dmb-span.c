// SPDX-License-Identifier: GPL-2.0
/*
 * Spans: which origin ranges writes in flight, data on its way into the
 * cache, and dirty data on its way to the origin cover; see dmb-target.h.
 * One list under a spinlock: it holds only what is in flight, and every
 * operation is a short walk.  Writes that wait for a write-back copy are
 * parked here too (ix->parked, under span_lock) and handed to the
 * deferred worker when a copy ends: nothing waits by sleeping.
 */
#include "dmb-target.h"

static bool overlap(const struct dmb_span *a, sector_t start, sector_t end)
{
	return a->start < end && start < a->end;
}

/* Is a write-back copy over part of @sp in flight?  Under span_lock. */
static bool writeback_overlaps(struct dmb_index *ix, const struct dmb_span *sp)
{
	struct dmb_span *o;

	lockdep_assert_held(&ix->span_lock);
	list_for_each_entry(o, &ix->spans, node)
		if (o->kind == DMB_SPAN_WB && overlap(o, sp->start, sp->end))
			return true;
	return false;
}

/*
 * A write starts: spans it overlaps (and itself, if another write) lose.
 * True when a write-back copy of part of its range is in flight: the
 * write must not reach the origin before that copy does, so @bio is
 * parked until it ends (dmb_span_end()) and the caller is done with it.
 */
bool dmb_span_write(struct dmb_index *ix, struct dmb_span *sp,
		    sector_t start, u32 sectors, struct bio *bio)
{
	struct dmb_span *o;
	unsigned long flags;
	bool wb = false;

	sp->start = start;
	sp->end = start + sectors;
	sp->kind = DMB_SPAN_WRITE;
	sp->contended = false;
	spin_lock_irqsave(&ix->span_lock, flags);
	list_for_each_entry(o, &ix->spans, node) {
		if (!overlap(o, sp->start, sp->end))
			continue;
		o->contended = true;
		if (o->kind == DMB_SPAN_WRITE)
			sp->contended = true;
		else if (o->kind == DMB_SPAN_WB)
			wb = true;
	}
	list_add_tail(&sp->node, &ix->spans);
	sp->on = true;
	if (wb)
		bio_list_add(&ix->parked, bio);
	spin_unlock_irqrestore(&ix->span_lock, flags);
	return wb;
}

/*
 * A parked write back from the deferred worker: park it again while a
 * write-back copy over its span is still in flight (one of several may
 * have ended).  No new copy can start over it: a copy starts only where
 * no write span is.
 */
bool dmb_span_repark(struct dmb_index *ix, struct dmb_span *sp,
		     struct bio *bio)
{
	unsigned long flags;
	bool wb;

	spin_lock_irqsave(&ix->span_lock, flags);
	wb = writeback_overlaps(ix, sp);
	if (wb)
		bio_list_add(&ix->parked, bio);
	spin_unlock_irqrestore(&ix->span_lock, flags);
	return wb;
}

/* Register @sp (of @kind) unless a write to its range is in flight. */
static bool span_unless_write(struct dmb_index *ix, struct dmb_span *sp,
			      sector_t start, u32 sectors, u8 kind)
{
	struct dmb_span *o;
	unsigned long flags;
	bool ok = true;

	sp->start = start;
	sp->end = start + sectors;
	sp->kind = kind;
	sp->contended = false;
	spin_lock_irqsave(&ix->span_lock, flags);
	list_for_each_entry(o, &ix->spans, node)
		if (o->kind == DMB_SPAN_WRITE && overlap(o, sp->start, sp->end))
			ok = false;
	if (ok) {
		list_add_tail(&sp->node, &ix->spans);
		sp->on = true;
	}
	spin_unlock_irqrestore(&ix->span_lock, flags);
	return ok;
}

/* A write-back copy may start only where no write is in flight. */
bool dmb_span_writeback(struct dmb_index *ix, struct dmb_span *sp,
			sector_t start, u32 sectors)
{
	return span_unless_write(ix, sp, start, sectors, DMB_SPAN_WB);
}

/* A miss may be filled only if no write to its range is in flight. */
bool dmb_span_fill(struct dmb_index *ix, struct dmb_span *sp,
		   sector_t start, u32 sectors)
{
	return span_unless_write(ix, sp, start, sectors, DMB_SPAN_FILL);
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

/*
 * Done with @sp: was it contended?  Harmless if it never started.  When
 * a write-back copy ends, the parked writes go to the deferred worker,
 * which parks again those another copy still holds back.
 */
bool dmb_span_end(struct dmb_index *ix, struct dmb_span *sp)
{
	struct bio_list woken = BIO_EMPTY_LIST;
	unsigned long flags;
	bool contended;

	spin_lock_irqsave(&ix->span_lock, flags);
	if (sp->on && sp->kind == DMB_SPAN_WB) {
		woken = ix->parked;
		bio_list_init(&ix->parked);
	}
	if (sp->on)
		list_del(&sp->node);
	sp->on = false;
	contended = sp->contended;
	spin_unlock_irqrestore(&ix->span_lock, flags);
	if (!bio_list_empty(&woken))
		dmb_io_defer_list(ix, &woken);
	return contended;
}
