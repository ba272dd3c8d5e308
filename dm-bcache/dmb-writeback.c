// SPDX-License-Identifier: GPL-2.0
/*
 * Write-back: copying dirty data from the cache to the origin.
 *
 * One worker per index walks the index in origin order from a cursor and
 * takes the visible dirty pieces it finds (core/set/set.h,
 * bch_set_dirty_scan()), as many as the rate allows.  Neighbouring pieces
 * join into runs of up to DMB_WB_RUN_SECTORS; each run is read from the
 * cache piece by piece and written to the origin in one I/O.  Then the
 * origin is flushed, and only then are the pieces marked clean in the
 * index (dmb_index_clean()): a clean key never names data the origin
 * could still lose in its own cache.  A piece overwritten meanwhile is
 * left as the newer write made it.
 *
 * Against user writes: a run registers a write-back span before it reads
 * the cache, and only where no user write is in flight; a user write that
 * finds a run in flight over its range is parked until it ends
 * (dmb-span.c).  So the origin never gets older data after newer.  The
 * cache reads count in no cache-I/O epoch (run_live() says why that is
 * safe), so a copy stuck on the origin never holds up a refill.
 *
 * Rate: in writeback mode the worker keeps the dirty data near
 * writeback_percent of the cache with a PI controller, as bcache's
 * writeback_rate does: once a second, rate = p + i with
 * p = (dirty - target) / 40 and i the accumulated error / 10000
 * (sectors per second), never below writeback_rate_minimum.  It copies
 * flat out while draining (a flush message, the cleaner option, or any
 * mode but writeback) and when no user I/O came for a second.  When dirty data appears in a
 * clean cache, copying starts writeback_delay seconds later (in writeback
 * mode, and not while a flush message waits).
 *
 * A pass is a walk of the index from sector 0 to the end.  One that finds
 * nothing dirty, with no dirty key inserted since it began, proves the
 * cache clean: flush messages waiting are answered, and a backing origin's
 * superblock is marked clean (dmb_index_origin_clean()).
 */
#include <linux/blkdev.h>
#include <linux/vmalloc.h>

#include "dmb-target.h"

#define DMB_WB_RUN_SECTORS	2048	/* one origin write: 1 MiB */
#define DMB_WB_BATCH_MAX	8192	/* sectors one batch copies at most */
#define DMB_WB_RATE_MAX		BIT_ULL(30)
#define DMB_WB_P_INVERSE	40
#define DMB_WB_I_INVERSE	10000
#define DMB_WB_SCAN_LOOKUPS	4096	/* index lookups one scan makes */

void dmb_wb_tune(struct dmb_index *ix, struct dmb_cache *dc)
{
	struct dmb_writeback *wb = &ix->wb;

	WRITE_ONCE(wb->percent, dc->opt_val[DMB_OPT_WB_PERCENT]);
	WRITE_ONCE(wb->rate_min, dc->opt_val[DMB_OPT_WB_RATE_MIN]);
	WRITE_ONCE(wb->delay, dc->opt_val[DMB_OPT_WB_DELAY]);
	WRITE_ONCE(wb->writeback_mode, READ_ONCE(dc->mode) == DMB_MODE_WRITEBACK);
	WRITE_ONCE(wb->cleaner, dc->opt_val[DMB_OPT_CLEANER]);
	dmb_wb_kick(ix);
}

/* Copy flat out now? */
bool dmb_wb_full(struct dmb_index *ix)
{
	struct dmb_writeback *wb = &ix->wb;

	return atomic_read(&wb->drain) || READ_ONCE(wb->cleaner) ||
	       !READ_ONCE(wb->writeback_mode) ||
	       time_after(jiffies, READ_ONCE(wb->last_io) + HZ);
}

/* The controller, once a second: the rate toward the dirty target. */
static void update_rate(struct dmb_index *ix)
{
	struct dmb_writeback *wb = &ix->wb;
	const struct bch_alloc *a = &ix->set.a;
	s64 size = a->nbuckets * ix->set.g.kg.bucket_size;
	s64 target = div_s64(size * READ_ONCE(wb->percent), 100);
	s64 err = (s64)bch_set_dirty_sectors(&ix->set) - target;
	u64 rate_min = READ_ONCE(wb->rate_min);
	s64 rate;

	if (time_before(jiffies, wb->last_update + HZ))
		return;
	wb->last_update = jiffies;
	/* Integrate only while the output is not pinned at a bound. */
	if ((err > 0 && wb->rate < DMB_WB_RATE_MAX) ||
	    (err < 0 && wb->rate > rate_min))
		wb->integral = clamp_t(s64, wb->integral + err,
				       -size * DMB_WB_I_INVERSE / 100,
				       size * DMB_WB_I_INVERSE);
	rate = div_s64(err, DMB_WB_P_INVERSE) +
	       div_s64(wb->integral, DMB_WB_I_INVERSE);
	WRITE_ONCE(wb->rate, clamp_t(s64, rate, rate_min, DMB_WB_RATE_MAX));
}

/* Keep the first @sectors of dirty piece @k. */
static void clip(struct dmb_index *ix, struct bch_key *k, u32 sectors)
{
	u64 ptr = k->ptr[0];

	bch_key_init(k, bch_key_inode(k), bch_key_start(k) + sectors, sectors,
		     true);
	bch_key_add_ptr(k, ptr);
}

/*
 * Under index_lock (shared): the pieces of the next batch, at most
 * @budget sectors (at least one piece), each cut to a run's size.
 */
static u32 take_pieces(struct dmb_index *ix, u64 budget)
{
	struct dmb_writeback *wb = &ix->wb;
	u64 pos = wb->pos, sectors = 0;
	u32 n, i;

	n = bch_set_dirty_scan(&ix->set, ix->inode, &pos, BCH_KEY_MAX_OFFSET,
			       wb->keys, DMB_WB_PIECES, DMB_WB_SCAN_LOOKUPS);
	for (i = 0; i < n; i++) {
		struct bch_key *k = &wb->keys[i];

		if (i && sectors + bch_key_size(k) > budget)
			break;
		if (bch_key_size(k) > DMB_WB_RUN_SECTORS)
			clip(ix, k, DMB_WB_RUN_SECTORS);
		sectors += bch_key_size(k);
		pos = bch_key_offset(k);
	}
	wb->pos = pos;
	return i;
}

/*
 * Do pieces [first, first + nr) still point at their data, now that it
 * has been read?  The reads count in no I/O epoch, so a copy stuck on a
 * slow or hung origin never holds up a refill (which waits for the
 * epoch's I/O): instead, a refill raises a bucket's gen before anything
 * new is written to it, so data read while the gen was unchanged is the
 * dirty data.  Dirty buckets are not reclaimed and the run's span keeps
 * writes out, so this should never fail; if it does, the run is skipped.
 */
static bool run_live(struct dmb_index *ix, u32 first, u32 nr)
{
	struct dmb_writeback *wb = &ix->wb;
	bool live = true;
	u32 i;

	down_read(&ix->index_lock);
	for (i = first; i < first + nr; i++)
		live &= bch_key_live(&ix->set.g, ix->set.a.gens, &wb->keys[i]);
	up_read(&ix->index_lock);
	return live;
}

/*
 * Pieces [first, first + nr) are neighbours: one run.  0, -ESTALE if the
 * data read may not be theirs (run_live()), or -errno.
 */
static int copy_run(struct dmb_index *ix, u32 first, u32 nr)
{
	struct dmb_writeback *wb = &ix->wb;
	u64 start = bch_key_start(&wb->keys[first]), end = start;
	u32 i;
	int r;

	for (i = first; i < first + nr; i++) {
		const struct bch_key *k = &wb->keys[i];

		r = dmb_dev_rw(wb->client, ix->cache_bdev, REQ_OP_READ,
			       bch_ptr_offset(k->ptr[0]),
			       wb->buf + ((bch_key_start(k) - start) << SECTOR_SHIFT),
			       (size_t)bch_key_size(k) << SECTOR_SHIFT);
		if (r) {
			atomic64_inc(&ix->cache_errors);
			DMERR_LIMIT("cache %s: dirty data at %llu unreadable: kept dirty",
				    ix->name, bch_key_start(k));
			return r;
		}
		end = bch_key_offset(k);
	}
	if (!run_live(ix, first, nr))
		return -ESTALE;
	r = dmb_dev_rw(wb->client, wb->origin, REQ_OP_WRITE, start, wb->buf,
		       (end - start) << SECTOR_SHIFT);
	if (r)
		DMERR_LIMIT("cache %s: write-back to origin sector %llu failed (%d): kept dirty",
			    ix->name, start, r);
	return r;
}

/* Something failed: count it, and answer flush messages waiting. */
static void wb_failed(struct dmb_writeback *wb)
{
	atomic64_inc(&wb->errors);
	wake_up_all(&wb->wait);
}

/*
 * One batch: the pieces and their runs' spans under the index lock; then
 * the copies, the origin flush, and the clean marks.  Returns the sectors
 * copied, or -errno if any copy failed.
 */
static s64 copy_batch(struct dmb_index *ix, u64 budget, u32 *found)
{
	struct dmb_writeback *wb = &ix->wb;
	u32 n, i, first, nr, good = 0;
	u64 copied = 0;
	int err = 0, r;

	down_read(&ix->index_lock);
	n = take_pieces(ix, budget);
	*found = n;
	for (first = 0; first < n; first += nr) {
		u64 end = bch_key_offset(&wb->keys[first]);
		u32 run = bch_key_size(&wb->keys[first]);

		for (nr = 1; first + nr < n; nr++) {
			const struct bch_key *k = &wb->keys[first + nr];

			if (bch_key_start(k) != end ||
			    run + bch_key_size(k) > DMB_WB_RUN_SECTORS)
				break;
			end = bch_key_offset(k);
			run += bch_key_size(k);
		}
		/* A user write in flight there: the next pass comes back. */
		wb->spans[first].on = false;
		dmb_span_writeback(ix, &wb->spans[first],
				   bch_key_start(&wb->keys[first]), run);
		wb->run_len[first] = nr;
	}
	up_read(&ix->index_lock);
	if (!n)
		return 0;

	for (first = 0; first < n; first += nr) {
		nr = wb->run_len[first];
		if (!wb->spans[first].on)
			continue;
		r = copy_run(ix, first, nr);
		if (r) {
			/* Not marked clean: the pieces stay dirty. */
			if (r != -ESTALE)
				err = r;
			dmb_span_end(ix, &wb->spans[first]);
			continue;
		}
		for (i = first; i < first + nr; i++)
			copied += bch_key_size(&wb->keys[i]);
	}
	r = copied ? blkdev_issue_flush(wb->origin) : 0;
	if (r) {
		DMERR_LIMIT("cache %s: origin flush failed (%d): kept dirty",
			    ix->name, r);
		err = r;
	}
	/* The copies are on the origin: newer writes may follow them. */
	for (first = 0; first < n; first += nr) {
		nr = wb->run_len[first];
		if (!wb->spans[first].on)
			continue;
		dmb_span_end(ix, &wb->spans[first]);
		if (r)
			continue;
		for (i = first; i < first + nr; i++)
			wb->keys[good++] = wb->keys[i];
	}
	if (good && dmb_index_clean(ix, wb->keys, good)) {
		wb_failed(wb);
		return -EIO;
	}
	if (!r)
		atomic64_add(copied, &wb->written);
	if (err) {
		wb_failed(wb);
		return err;
	}
	return copied;
}

/*
 * The walk reached the end of the index, or nothing at all is dirty
 * (@clean: no dirty data even allocated, so none completed before now).
 */
static void pass_end(struct dmb_index *ix, bool clean, u64 seq)
{
	struct dmb_writeback *wb = &ix->wb;
	int r;

	if (clean || (!wb->pass_found && seq == wb->pass_seq)) {
		/* Fails with -EAGAIN if a dirty key went in since @seq. */
		r = dmb_index_origin_clean(ix, seq);
		if (!r) {
			WRITE_ONCE(wb->clean_passes, wb->clean_passes + 1);
			wake_up_all(&wb->wait);
			if (!clean && bch_set_dirty_sectors(&ix->set))
				dmb_index_recount_dirty(ix);
		} else if (r != -EAGAIN) {
			wb_failed(wb);	/* a flush must not wait on */
		}
	}
	wb->pos = 0;
	wb->pass_found = false;
	wb->pass_seq = READ_ONCE(ix->dirty_seq);
}

static void wb_work(struct work_struct *work)
{
	struct dmb_writeback *wb = container_of(to_delayed_work(work),
						struct dmb_writeback, work);
	struct dmb_index *ix = container_of(wb, struct dmb_index, wb);
	bool fast = dmb_wb_full(ix);
	unsigned long delay = HZ;
	u64 budget, rate, seq;
	u32 found = 0;
	s64 copied;

	if (READ_ONCE(wb->stopped) || READ_ONCE(ix->state) != DMB_STATE_RW)
		return;
	update_rate(ix);
	rate = READ_ONCE(wb->rate);
	/*
	 * The sequence before the estimate: a dirty write allocated after
	 * the estimate was read is indexed after it, so the sequence moves.
	 */
	seq = READ_ONCE(ix->dirty_seq);
	smp_rmb();	/* the sequence, then the estimate; see above */
	if (!bch_set_dirty_sectors(&ix->set)) {
		if (!wb->was_clean)
			dmb_index_changed(ix);	/* dirty -> clean */
		wb->was_clean = true;
		pass_end(ix, true, seq);
		goto again;
	}
	if (wb->was_clean) {
		wb->was_clean = false;
		wb->start_at = jiffies + READ_ONCE(wb->delay) * HZ;
	}
	if (!atomic_read(&wb->drain) && !READ_ONCE(wb->cleaner) &&
	    READ_ONCE(wb->writeback_mode) && time_before(jiffies, wb->start_at)) {
		delay = wb->start_at - jiffies;
		goto again;
	}
	budget = fast ? DMB_WB_BATCH_MAX :
		 clamp_t(u64, rate / 10, 8, DMB_WB_BATCH_MAX);
	copied = copy_batch(ix, budget, &found);
	if (found)
		wb->pass_found = true;
	if (copied < 0) {
		delay = HZ;		/* back off; the next pass retries */
	} else if (!found && wb->pos >= BCH_KEY_MAX_OFFSET) {
		pass_end(ix, false, READ_ONCE(ix->dirty_seq));
		delay = fast ? 0 : HZ / 10;
	} else {
		delay = fast ? 0 : div64_u64((u64)copied * HZ, max(rate, 1ULL));
	}
again:
	if (!READ_ONCE(wb->stopped))
		queue_delayed_work(wb->wq, &wb->work, delay);
}

void dmb_wb_kick(struct dmb_index *ix)
{
	if (!READ_ONCE(ix->wb.stopped))
		mod_delayed_work(ix->wb.wq, &ix->wb.work, 0);
}

void dmb_wb_start(struct dmb_index *ix)
{
	WRITE_ONCE(ix->wb.stopped, false);
	dmb_wb_kick(ix);
}

/* Suspend, removal: no copy runs or starts until dmb_wb_start(). */
void dmb_wb_stop(struct dmb_index *ix)
{
	if (!ix->wb.wq)
		return;
	WRITE_ONCE(ix->wb.stopped, true);
	cancel_delayed_work_sync(&ix->wb.work);
	wake_up_all(&ix->wb.wait);
}

/*
 * The flush message: write back everything, and return when a pass
 * proves the cache clean (every write completed before the message is
 * covered: it was indexed before it completed, so a pass that began
 * later saw it, and one under way then is not clean).  -EIO if a copy
 * failed meanwhile or the cache failed; -EINTR if killed.
 */
int dmb_wb_flush(struct dmb_index *ix)
{
	struct dmb_writeback *wb = &ix->wb;
	u64 passes = READ_ONCE(wb->clean_passes);
	s64 errors = atomic64_read(&wb->errors);
	int r;

	atomic_inc(&wb->drain);
	dmb_wb_kick(ix);
	r = wait_event_killable(wb->wait,
				READ_ONCE(wb->clean_passes) != passes ||
				atomic64_read(&wb->errors) != errors ||
				READ_ONCE(ix->state) != DMB_STATE_RW ||
				READ_ONCE(wb->stopped));
	atomic_dec(&wb->drain);
	if (r)
		return -EINTR;
	if (atomic64_read(&wb->errors) != errors ||
	    READ_ONCE(ix->state) != DMB_STATE_RW)
		return -EIO;
	/* Suspended before the cache was clean. */
	if (READ_ONCE(wb->clean_passes) == passes)
		return -EBUSY;
	/*
	 * Clean, but the estimate still counts what was overwritten or
	 * written back since the last gc: a pass makes it exact, so that
	 * the status shows 0 and detach accepts.
	 */
	return bch_set_dirty_sectors(&ix->set) ? dmb_index_gc(ix) : 0;
}

/*
 * flush_on_suspend: postsuspend (no user I/O left) writes everything
 * back, the worker run for the purpose and stopped again.
 */
int dmb_wb_flush_suspended(struct dmb_index *ix)
{
	int r;

	if (!bch_set_dirty_sectors(&ix->set))
		return 0;
	WRITE_ONCE(ix->wb.stopped, false);
	r = dmb_wb_flush(ix);
	dmb_wb_stop(ix);
	return r;
}

int dmb_wb_init(struct dmb_index *ix)
{
	struct dmb_writeback *wb = &ix->wb;

	INIT_DELAYED_WORK(&wb->work, wb_work);
	init_waitqueue_head(&wb->wait);
	wb->stopped = true;
	wb->was_clean = true;
	wb->last_update = jiffies;
	wb->last_io = jiffies;
	wb->rate = dmb_opts[DMB_OPT_WB_RATE_MIN].def;
	wb->wq = alloc_ordered_workqueue("dmb_writeback", WQ_MEM_RECLAIM);
	wb->buf = vmalloc(DMB_WB_RUN_SECTORS << SECTOR_SHIFT);
	wb->client = dm_io_client_create();
	if (IS_ERR(wb->client))
		wb->client = NULL;
	return wb->wq && wb->buf && wb->client ? 0 : -ENOMEM;
}

void dmb_wb_exit(struct dmb_index *ix)
{
	struct dmb_writeback *wb = &ix->wb;

	dmb_wb_stop(ix);
	if (wb->wq)
		destroy_workqueue(wb->wq);
	if (wb->client)
		dm_io_client_destroy(wb->client);
	vfree(wb->buf);
	wb->wq = NULL;
}
