// SPDX-License-Identifier: GPL-2.0
/*
 * The data path: how each bio is mapped, by cache mode.
 *
 *   read        the index says which part of the bio the cache holds:
 *               a hit is remapped to the cache, a miss to the origin and
 *               filled into the cache when it completes (dmb-index.c);
 *               a bio that spans both is cut with dm_accept_partial_bio()
 *               and dm sends the rest again.
 *   write       writethrough: to the origin and to newly allocated cache
 *               space at once (cloned, a clone per piece of cache space);
 *               the keys go in when all are done, before the bio
 *               completes.  writeback: to newly allocated cache space
 *               only, indexed as dirty before the bio completes; the
 *               writeback worker copies it to the origin later.
 *               writearound, passthrough, a bypassed write, or no cache
 *               space: to the origin only, after invalidating whatever
 *               the cache holds of the range (dirty data included: the
 *               write supersedes it).
 *   flush       journals the index first, then goes to the origin.
 *
 * map takes the index lock shared and may sleep for it, as dm-writecache
 * sleeps for its lock in map; it never waits for metadata I/O.  The index
 * worker holds the lock exclusive only while it changes the index in
 * memory, never across I/O or anything else map's caller could hold up,
 * so the wait is short and cannot deadlock.  Spans (dmb-span.c) keep
 * concurrent writes from leaving older data in the cache than on the
 * origin, and write-back copies from landing on the origin after a newer
 * write: a write that finds a copy of its range in flight is parked and
 * then finished by the deferred worker (dmb_io_deferred()).
 *
 * Dirty data is only in the cache: a failed read of it fails the bio
 * instead of being retried from the origin, which holds older data.
 */
#include <linux/bio.h>

#include "dmb-target.h"

static int remap_origin(struct dmb_cache *dc, struct bio *bio, sector_t sector)
{
	bio_set_dev(bio, dc->origin_dev->bdev);
	bio->bi_iter.bi_sector = sector;
	return DM_MAPIO_REMAPPED;
}

/* Does @k hold data the cache can serve (a current pointer)? */
static bool key_cached(struct dmb_index *ix, const struct bch_key *k)
{
	return k && bch_key_ptrs(k) &&
	       bch_key_live(&ix->set.g, ix->set.a.gens, k);
}

/*
 * The first sector of [sector, end) the cache holds (only the cache, with
 * @dirty), or @end; under index_lock.
 */
static sector_t first_cached(struct dmb_cache *dc, sector_t sector,
			     sector_t end, bool dirty)
{
	struct dmb_index *ix = dc->ix;

	while (sector < end) {
		u64 next;
		const struct bch_key *k = bch_btree_lookup(&ix->set.t, ix->inode,
							   sector, &next);

		if (key_cached(ix, k) && (!dirty || bch_key_dirty(k)))
			return sector;
		sector = next;
	}
	return end;
}

/*
 * Readahead on a miss: how far past @end (the miss's end) the fill may
 * reach, given up to @want sectors of the readahead option.  Only over
 * what the cache does not hold (a fill never replaces cached data), not
 * past the target's end, and whole blocks.  Under index_lock.
 */
static u32 readahead_gap(struct dmb_cache *dc, sector_t end, u32 want)
{
	sector_t limit = dc->data_offset + dc->ti->len;

	want = min_t(u64, want, limit > end ? limit - end : 0);
	return round_down(first_cached(dc, end, end + want, false) - end,
			  dc->block_size);
}

/* Sectors of readahead @bio's miss of @n sectors at @sector may have. */
static u32 readahead_want(struct dmb_cache *dc, struct bio *bio, u32 n)
{
	u64 ra = READ_ONCE(dc->opt_val[DMB_OPT_READAHEAD]);

	/* Readahead of readahead would compound; metadata is read once. */
	if (!ra || (bio->bi_opf & (REQ_RAHEAD | REQ_META)) ||
	    n >= DMB_FILL_MAX_SECTORS)
		return 0;
	return min_t(u64, ra, DMB_FILL_MAX_SECTORS - n);
}

static int uncached_read_locked(struct dmb_cache *dc, struct dmb_io *io,
				struct bio *bio, sector_t sector,
				enum dmb_counter why);

/*
 * A read, with index_lock held for reading (released here): @bio is
 * remapped to where its data is.  A bio that the cache holds only part
 * of is cut with dm_accept_partial_bio() and dm sends the rest again.
 */
static void read_locked(struct dmb_cache *dc, struct dmb_io *io,
			struct bio *bio, sector_t sector)
{
	struct dmb_index *ix = dc->ix;
	const struct bch_key *k;
	u32 n, ra, sectors = bio_sectors(bio);
	enum dmb_counter why;
	u64 next;

	k = bch_btree_lookup(&ix->set.t, ix->inode, sector, &next);
	n = min_t(u64, next - sector, sectors);
	if (key_cached(ix, k)) {
		u64 bucket = bch_ptr_bucket(&ix->set.g, k->ptr[0]);
		sector_t at = bch_ptr_offset(k->ptr[0]) +
			      (sector - bch_key_start(k));

		bch_alloc_touch(&ix->set.a, bucket);
		io->epoch = dmb_cache_io_start(ix, 1);
		/* The key may go once the lock does. */
		io->flags |= DMB_IO_CACHE |
			     (bch_key_dirty(k) ? DMB_IO_DIRTY_HIT : 0);
		up_read(&ix->index_lock);
		io->start_ns = ktime_get_ns();
		if (n < sectors)
			dm_accept_partial_bio(bio, n);
		/* What a retry from the origin restores. */
		io->iter = bio->bi_iter;
		io->bi_flags = bio->bi_flags;
		io->origin_sector = sector;
		dmb_bypass_why(dc, sector, n, false);	/* the stream goes on */
		dmb_stats_inc(&dc->stats, DMB_READ_HIT);
		bio_set_dev(bio, dc->cache_dev->bdev);
		bio->bi_iter.bi_sector = at;
		return;
	}
	n = min_t(u32, n, DMB_FILL_MAX_SECTORS);
	ra = n == sectors ? readahead_want(dc, bio, n) : 0;
	if (ra)
		ra = readahead_gap(dc, sector + n, ra);
	why = dmb_bypass_why(dc, sector, n, false);
	/*
	 * The fill's span (reaching past the bio by the readahead) goes on
	 * the list before the lock is dropped: a write indexed after the
	 * lookup must find it, or the fill could mask that write.
	 */
	if (why == DMB_NR_COUNTERS &&
	    dmb_span_fill(ix, &io->span, sector, n + ra))
		io->flags |= DMB_IO_FILL;
	up_read(&ix->index_lock);
	if (n < sectors)
		dm_accept_partial_bio(bio, n);
	if (why != DMB_NR_COUNTERS) {
		dmb_bypass_count(dc, false, why);
		remap_origin(dc, bio, sector);
		return;
	}
	dmb_stats_inc(&dc->stats, DMB_READ_MISS);
	if (io->flags & DMB_IO_FILL)
		io->iter = bio->bi_iter;	/* as cut, if it was */
	remap_origin(dc, bio, sector);
}

/*
 * map's shared hold on the index.  It may sleep: the worker holds the
 * lock exclusive only for in-memory changes (see the top of this file).
 * A bio that has to wait is counted (status lock_waits), so a test can
 * see how often foreground I/O meets those windows.
 */
static void map_lock(struct dmb_index *ix)
{
	if (down_read_trylock(&ix->index_lock))
		return;
	atomic64_inc(&ix->lock_waits);
	down_read(&ix->index_lock);
}

/* Parked writes whose write-back copy ended: to the deferred worker. */
void dmb_io_defer_list(struct dmb_index *ix, struct bio_list *bios)
{
	unsigned long flags;

	spin_lock_irqsave(&ix->lock, flags);
	bio_list_merge(&ix->deferred, bios);
	queue_work(ix->defer_wq, &ix->defer_work);
	spin_unlock_irqrestore(&ix->lock, flags);
}

static int map_read(struct dmb_cache *dc, struct dmb_io *io, struct bio *bio,
		    sector_t sector, enum dmb_mode mode)
{
	struct dmb_index *ix = dc->ix;

	/* Dirty data (a switch racing a write-back write) is still read. */
	if (mode == DMB_MODE_PASSTHROUGH && !bch_set_dirty_sectors(&ix->set)) {
		dmb_bypass_count(dc, false, DMB_WHY_MODE);
		return remap_origin(dc, bio, sector);
	}
	map_lock(ix);
	if (mode == DMB_MODE_PASSTHROUGH)
		return uncached_read_locked(dc, io, bio, sector, DMB_WHY_MODE);
	read_locked(dc, io, bio, sector);
	return DM_MAPIO_REMAPPED;
}

static void origin_clone_end(struct bio *clone)
{
	struct dmb_io *io = clone->bi_private;

	dmb_op_error(&io->op, clone->bi_status);
	bio_put(clone);
	dmb_op_put(&io->op);
}

/*
 * A cache piece of a write: its failure does not fail the write.  A
 * write-through's range is invalidated instead (the origin has the
 * data); a write-back write is sent to the origin instead (dmb-index.c).
 */
static void cache_clone_end(struct bio *clone)
{
	struct dmb_io *io = clone->bi_private;
	struct dmb_index *ix = io->dc->ix;

	dmb_note_latency(ix, true, ktime_get_ns() - io->start_ns);
	if (clone->bi_status) {
		WRITE_ONCE(io->cache_error, true);
		atomic64_inc(&ix->cache_errors);
	}
	dmb_cache_io_end(ix, io->epoch);
	bio_put(clone);
	dmb_op_put(&io->op);
}

/*
 * A cache piece of a read sent in pieces (dirty data): a failed one fails
 * the read.  Origin pieces end in origin_clone_end().
 */
static void read_clone_end(struct bio *clone)
{
	struct dmb_io *io = clone->bi_private;
	struct dmb_index *ix = io->dc->ix;

	dmb_cache_io_end(ix, io->epoch);
	if (clone->bi_status)
		atomic64_inc(&ix->cache_errors);
	origin_clone_end(clone);
}

/* A clone of @io's bio, or of @len sectors of it from @offset (len > 0). */
static void submit_clone(struct dmb_cache *dc, struct dmb_io *io,
			 struct block_device *bdev, sector_t sector,
			 u32 offset, u32 len, bio_end_io_t *end_io,
			 blk_opf_t extra)
{
	struct dmb_index *ix = dc->ix;
	struct bio *clone = bio_alloc_clone(bdev, io->bio, GFP_NOIO, &ix->bs);

	clone->bi_opf |= extra;
	if (len)
		bio_trim(clone, offset, len);
	clone->bi_iter.bi_sector = sector;
	clone->bi_end_io = end_io;
	clone->bi_private = io;
	dmb_op_get(&io->op);
	submit_bio_noacct(clone);
}

static void pieces_done(struct dmb_op *op)
{
	struct dmb_io *io = container_of(op, struct dmb_io, op);

	io->bio->bi_status = op->status;
	bio_endio(io->bio);
}

/*
 * A deferred read (which cannot be cut) over dirty data and something
 * else, with index_lock held for reading (released here): dirty pieces
 * are read from the cache, the rest from the origin, which holds it.
 */
static void read_pieces(struct dmb_cache *dc, struct dmb_io *io,
			struct bio *bio, sector_t sector)
{
	struct dmb_index *ix = dc->ix;
	u32 sectors = bio_sectors(bio), done = 0, n;
	const struct bch_key *k;
	u64 next;

	dmb_stats_inc(&dc->stats, DMB_READ_HIT);
	dmb_op_init(&io->op, pieces_done);
	for (; done < sectors; done += n) {
		sector_t at = sector + done;

		k = bch_btree_lookup(&ix->set.t, ix->inode, at, &next);
		n = min_t(u64, next - at, sectors - done);
		if (key_cached(ix, k) && bch_key_dirty(k)) {
			io->epoch = dmb_cache_io_start(ix, 1);
			submit_clone(dc, io, dc->cache_dev->bdev,
				     bch_ptr_offset(k->ptr[0]) +
				     (at - bch_key_start(k)), done, n,
				     read_clone_end, 0);
		} else {
			submit_clone(dc, io, dc->origin_dev->bdev, at, done, n,
				     origin_clone_end, 0);
		}
	}
	up_read(&ix->index_lock);
	dmb_op_put(&io->op);
}

/*
 * Does [sector, sector + sectors) hold dirty data (index_lock held)?  A
 * write that replaces dirty data on the origin must be durable there
 * before the key that replaces the dirty one can be: once that key is
 * journalled, a power cut that lost the write would leave the origin's
 * older data and nothing else.  So such writes go to the origin with
 * FUA.
 */
static bool over_dirty(struct dmb_cache *dc, sector_t sector, u32 sectors)
{
	return bch_set_dirty_sectors(&dc->ix->set) &&
	       first_cached(dc, sector, sector + sectors, true) <
	       sector + sectors;
}

/*
 * A write to the origin only, over dirty data (index_lock held for
 * reading): the write goes first, with FUA (see over_dirty()), and its
 * range is invalidated only once it succeeded (dmb-index.c), so a failed
 * write leaves the dirty data in place, and no journalled invalidation
 * ever hides dirty data behind a write the origin could still lose.
 */
void dmb_origin_then_invalidate(struct dmb_cache *dc, struct dmb_io *io,
				sector_t sector)
{
	struct bio *bio = io->bio;
	blk_opf_t fua = bio_op(bio) == REQ_OP_WRITE ||
			bio_op(bio) == REQ_OP_WRITE_ZEROES ? REQ_FUA : 0;

	io->nr_pieces = 0;
	io->flags = (io->flags & ~DMB_IO_DIRTY) | DMB_IO_ORIGIN_FIRST;
	dmb_op_init(&io->op, dmb_index_write_done);
	submit_clone(dc, io, dc->origin_dev->bdev, sector, 0, 0,
		     origin_clone_end, fua);
	dmb_op_put(&io->op);
}

/* Give back what a write allocated and will not use. */
static void unused_pieces(struct dmb_index *ix, struct dmb_io *io, bool dirty)
{
	dmb_free_pieces(ix, io->piece, io->piece_len, io->nr_pieces, dirty);
	io->nr_pieces = 0;
}

/*
 * A write to the cache, with index_lock held for reading: cache space for
 * the whole bio (in up to DMB_MAX_PIECES pieces, as buckets end), then
 * each piece goes to its place in the cache, and for write-through the
 * bio to the origin at once; the keys go in when all are done
 * (dmb-index.c), before the bio completes.  Write-back (@dirty) writes
 * only the cache, and its keys are dirty.  False, with nothing started,
 * when there is not the space.
 */
static bool write_cache(struct dmb_cache *dc, struct dmb_io *io,
			sector_t sector, bool dirty)
{
	struct dmb_index *ix = dc->ix;
	u32 sectors = bio_sectors(io->bio), done, i;

	done = dmb_alloc_pieces(ix, sectors, io->piece, io->piece_len,
				&io->nr_pieces, dirty);
	if (done < sectors) {
		unused_pieces(ix, io, dirty);
		return false;
	}
	io->epoch = dmb_cache_io_start(ix, io->nr_pieces);
	io->start_ns = ktime_get_ns();
	io->cache_error = false;
	if (dirty)
		io->flags |= DMB_IO_DIRTY;
	dmb_stats_inc(&dc->stats, dirty ? DMB_WRITE_HIT : DMB_WRITE_MISS);
	dmb_op_init(&io->op, dmb_index_write_done);
	if (!dirty && over_dirty(dc, sector, sectors))
		io->flags |= DMB_IO_OVER_DIRTY;
	if (!dirty)
		submit_clone(dc, io, dc->origin_dev->bdev, sector, 0, 0,
			     origin_clone_end,
			     io->flags & DMB_IO_OVER_DIRTY ? REQ_FUA : 0);
	for (i = 0, done = 0; i < io->nr_pieces; done += io->piece_len[i++])
		submit_clone(dc, io, dc->cache_dev->bdev,
			     bch_ptr_offset(io->piece[i]), done,
			     io->piece_len[i], cache_clone_end, 0);
	dmb_op_put(&io->op);
	return true;
}

/* Not cached: to the origin after the index forgets the range. */
static void invalidate_then_write(struct dmb_index *ix, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&ix->lock, flags);
	bio_list_add(&ix->invalidate, bio);
	spin_unlock_irqrestore(&ix->lock, flags);
	dmb_index_kick(ix);
}

/* Does the write of @bio go to the cache, in @mode, for bypass reason @why? */
static bool to_cache(struct bio *bio, enum dmb_mode mode, enum dmb_counter why)
{
	return bio_op(bio) == REQ_OP_WRITE && why == DMB_NR_COUNTERS &&
	       (mode == DMB_MODE_WRITETHROUGH || mode == DMB_MODE_WRITEBACK);
}

/*
 * A write whose span is registered, with index_lock held for reading
 * (released here): to the cache if @cache and there is the space, else
 * to the origin, straight when the cache holds nothing of the range,
 * after invalidating it otherwise.  Returns the map result.
 */
static int write_locked(struct dmb_cache *dc, struct dmb_io *io,
			struct bio *bio, sector_t sector, enum dmb_mode mode,
			enum dmb_counter why)
{
	struct dmb_index *ix = dc->ix;
	u32 sectors = bio_sectors(bio);
	bool cache = to_cache(bio, mode, why);

	if (cache && write_cache(dc, io, sector, mode == DMB_MODE_WRITEBACK)) {
		up_read(&ix->index_lock);
		return DM_MAPIO_SUBMITTED;
	}
	if (bio_op(bio) == REQ_OP_WRITE)
		dmb_bypass_count(dc, true, cache ? DMB_WHY_NOSPACE : why);
	if (first_cached(dc, sector, sector + sectors, false) == sector + sectors) {
		up_read(&ix->index_lock);
		return remap_origin(dc, bio, sector);
	}
	if (over_dirty(dc, sector, sectors)) {
		up_read(&ix->index_lock);
		dmb_origin_then_invalidate(dc, io, sector);
		return DM_MAPIO_SUBMITTED;
	}
	up_read(&ix->index_lock);
	invalidate_then_write(ix, bio);
	return DM_MAPIO_SUBMITTED;
}

/*
 * While a flush message waits for the cache to be clean, or the cleaner
 * option is on, write-back writes are written through, so that the dirty
 * data only shrinks.
 */
static enum dmb_mode write_mode(struct dmb_index *ix, enum dmb_mode mode)
{
	if (mode == DMB_MODE_WRITEBACK &&
	    (atomic_read(&ix->wb.drain) || READ_ONCE(ix->wb.cleaner)))
		return DMB_MODE_WRITETHROUGH;
	return mode;
}

/* Why a write (not a discard) in @mode is not cached, or DMB_NR_COUNTERS. */
static enum dmb_counter write_why(struct dmb_cache *dc, struct bio *bio,
				  sector_t sector, enum dmb_mode mode)
{
	if (bio_op(bio) != REQ_OP_WRITE)
		return DMB_NR_COUNTERS;
	if (mode != DMB_MODE_WRITETHROUGH && mode != DMB_MODE_WRITEBACK)
		return DMB_WHY_MODE;
	return dmb_bypass_why(dc, sector, bio_sectors(bio), true);
}

/*
 * A read the origin serves (passthrough, or the cache failed, counted as
 * @why), with index_lock held for reading (released here): but dirty data
 * is only in the cache, so a read over any is read in pieces.
 */
static int uncached_read_locked(struct dmb_cache *dc, struct dmb_io *io,
				struct bio *bio, sector_t sector,
				enum dmb_counter why)
{
	struct dmb_index *ix = dc->ix;
	u32 sectors = bio_sectors(bio);

	if (first_cached(dc, sector, sector + sectors, true) < sector + sectors) {
		read_pieces(dc, io, bio, sector);
		return DM_MAPIO_SUBMITTED;
	}
	up_read(&ix->index_lock);
	dmb_bypass_count(dc, false, why);
	return remap_origin(dc, bio, sector);
}

/*
 * The cache failed (state fail), with index_lock held for reading
 * (released here), and held dirty data then: its index on disk stays
 * trusted (index_failed()), so the origin serves reads but of dirty data
 * (uncached_read_locked()), and a write over anything cached is refused,
 * since the index can no longer record that it supersedes what the
 * cache holds: the next table would serve, or write back, the older
 * data.  Other writes go to the origin.  Returns the map result.
 */
static int failed_locked(struct dmb_cache *dc, struct dmb_io *io,
			 struct bio *bio, sector_t sector)
{
	struct dmb_index *ix = dc->ix;
	u32 sectors = bio_sectors(bio);

	if (bio_op(bio) == REQ_OP_READ)
		return uncached_read_locked(dc, io, bio, sector, DMB_WHY_FAILED);
	if (!sectors ||
	    first_cached(dc, sector, sector + sectors, false) == sector + sectors) {
		up_read(&ix->index_lock);
		if (bio_op(bio) == REQ_OP_WRITE)
			dmb_bypass_count(dc, true, DMB_WHY_FAILED);
		return remap_origin(dc, bio, sector);
	}
	up_read(&ix->index_lock);
	DMERR_LIMIT("cache %s: write over cached data at %llu refused: cache failed",
		    ix->name, (u64)sector);
	return DM_MAPIO_KILL;
}

/*
 * A table loaded read-only (state ro), which writes to neither device:
 * reads are served as in the fail state, by the origin but where only the
 * cache holds the data (dirty), so nothing is filled; an empty flush goes
 * to the origin; anything that would change a device is refused.
 */
static int read_only_map(struct dmb_cache *dc, struct dmb_io *io,
			 struct bio *bio, sector_t sector)
{
	if (bio_op(bio) == REQ_OP_READ) {
		map_lock(dc->ix);
		return uncached_read_locked(dc, io, bio, sector, DMB_WHY_MODE);
	}
	if (!bio_sectors(bio))
		return remap_origin(dc, bio, sector);
	DMERR_LIMIT("cache %s: write at %llu to a read-only table refused",
		    dc->ix->name, (u64)sector);
	return DM_MAPIO_KILL;
}

/*
 * Failed hits, read again from the origin; and parked writes whose
 * write-back copy ended (dmb-span.c), parked again while another copy of
 * their range is still in flight.  Nothing here waits for I/O, so one
 * slow copy holds back only the writes over its own range.
 */
void dmb_io_deferred(struct work_struct *work)
{
	struct dmb_index *ix = container_of(work, struct dmb_index,
					    defer_work);
	struct bio_list bios, retries;
	struct bio *bio;

	spin_lock_irq(&ix->lock);
	bios = ix->deferred;
	bio_list_init(&ix->deferred);
	retries = ix->retries;
	bio_list_init(&ix->retries);
	spin_unlock_irq(&ix->lock);
	while ((bio = bio_list_pop(&retries)))
		submit_bio_noacct(bio);
	while ((bio = bio_list_pop(&bios))) {
		struct dmb_io *io = dm_per_bio_data(bio, sizeof(struct dmb_io));
		struct dmb_cache *dc = io->dc;
		enum dmb_mode mode = write_mode(ix, READ_ONCE(dc->mode));
		sector_t sector = dc->data_offset +
				  dm_target_offset(dc->ti, bio->bi_iter.bi_sector);
		int r;

		if (dmb_span_repark(ix, &io->span, bio))
			continue;
		/*
		 * A write that arrived while write-back was off or draining is
		 * never cached dirty: a flush message that saw it arrive may
		 * have returned since, on the promise that it went through.
		 */
		if (mode == DMB_MODE_WRITEBACK && (io->flags & DMB_IO_NO_WB))
			mode = DMB_MODE_WRITETHROUGH;
		down_read(&ix->index_lock);
		if (READ_ONCE(ix->state) != DMB_STATE_RW)
			r = failed_locked(dc, io, bio, sector);
		else
			r = write_locked(dc, io, bio, sector, mode, io->why);
		if (r == DM_MAPIO_REMAPPED)
			submit_bio_noacct(bio);
		else if (r == DM_MAPIO_KILL)
			bio_io_error(bio);
	}
}

/*
 * Every write registers its span first: if a write-back copy of its range
 * is in flight, it is parked until the copy ends, so the older data never
 * lands on the origin after it.
 */
static int map_write(struct dmb_cache *dc, struct dmb_io *io, struct bio *bio,
		     sector_t sector, enum dmb_mode mode)
{
	struct dmb_index *ix = dc->ix;

	mode = write_mode(ix, mode);
	io->why = write_why(dc, bio, sector, mode);
	/* Before the span: once parked, the deferred worker may run it. */
	if (mode != DMB_MODE_WRITEBACK)
		io->flags |= DMB_IO_NO_WB;
	if (dmb_span_write(ix, &io->span, sector, bio_sectors(bio), bio)) {
		atomic64_inc(&ix->nr_deferred);
		return DM_MAPIO_SUBMITTED;
	}
	map_lock(ix);
	return write_locked(dc, io, bio, sector, mode, io->why);
}

int dmb_map(struct dm_target *ti, struct bio *bio)
{
	struct dmb_cache *dc = ti->private;
	struct dmb_io *io = dm_per_bio_data(bio, sizeof(struct dmb_io));
	struct dmb_index *ix = dc->ix;
	enum dmb_mode mode = READ_ONCE(dc->mode);
	unsigned long now;
	sector_t sector;

	io->dc = dc;
	io->bio = bio;
	io->flags = 0;
	io->span.on = false;
	io->mapped = true;
	/*
	 * Write-back speeds up when this stops changing (dmb-writeback.c);
	 * written once a jiffy at most, so the line stays mostly shared.
	 */
	now = jiffies;
	if (READ_ONCE(ix->wb.last_io) != now)
		WRITE_ONCE(ix->wb.last_io, now);
	/* Keys address origin sectors, data offset included, as mainline's. */
	sector = dc->data_offset + dm_target_offset(ti, bio->bi_iter.bi_sector);
	if (ix->state == DMB_STATE_RO)	/* for the index's whole life */
		return read_only_map(dc, io, bio, sector);
	if (bio->bi_opf & REQ_PREFLUSH) {
		/* dm sends the payload of a flush separately: this is empty. */
		spin_lock_irq(&ix->lock);
		bio_list_add(&ix->flushes, bio);
		spin_unlock_irq(&ix->lock);
		dmb_index_kick(ix);
		return DM_MAPIO_SUBMITTED;
	}
	if (READ_ONCE(ix->state) != DMB_STATE_RW) {
		if (!bch_set_dirty_sectors(&ix->set)) {
			if (bio_op(bio) == REQ_OP_READ ||
			    bio_op(bio) == REQ_OP_WRITE)
				dmb_bypass_count(dc, bio_op(bio) == REQ_OP_WRITE,
						 DMB_WHY_FAILED);
			return remap_origin(dc, bio, sector);
		}
		map_lock(ix);
		return failed_locked(dc, io, bio, sector);
	}
	if (bio_op(bio) == REQ_OP_READ)
		return map_read(dc, io, bio, sector, mode);
	if (!bio_sectors(bio))
		return remap_origin(dc, bio, sector);
	/* Writes, discards, write-zeroes: whatever changes the origin. */
	return map_write(dc, io, bio, sector, mode);
}

int dmb_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct dmb_cache *dc = ti->private;
	struct dmb_io *io = dm_per_bio_data(bio, sizeof(struct dmb_io));
	struct dmb_index *ix = dc->ix;

	/* A bio of ours ended twice would corrupt dm's io pool: say so. */
	if (WARN_ON_ONCE(!io->mapped))
		return DM_ENDIO_DONE;
	if (io->flags & DMB_IO_CACHE) {
		dmb_note_latency(ix, false, ktime_get_ns() - io->start_ns);
		dmb_cache_io_end(ix, io->epoch);
		if (*error && (io->flags & DMB_IO_DIRTY_HIT)) {
			/* Only the cache has it: the reader must know. */
			atomic64_inc(&ix->cache_errors);
			DMERR_LIMIT("cache %s: dirty data at origin sector %llu unreadable",
				    ix->name, (u64)io->origin_sector);
		} else if (*error) {
			/* A failed hit: read it from the origin instead. */
			unsigned long flags;

			atomic64_inc(&ix->cache_errors);
			io->flags = 0;
			/* As before the cache device split and chained it. */
			bio->bi_flags = io->bi_flags;
			atomic_set(&bio->__bi_remaining, 1);
			bio->bi_iter = io->iter;
			bio->bi_iter.bi_sector = io->origin_sector;
			bio_set_dev(bio, dc->origin_dev->bdev);
			bio->bi_status = BLK_STS_OK;
			/* Queued under the lock, as in dmb_index_write_done(). */
			spin_lock_irqsave(&ix->lock, flags);
			bio_list_add(&ix->retries, bio);
			queue_work(ix->defer_wq, &ix->defer_work);
			spin_unlock_irqrestore(&ix->lock, flags);
			return DM_ENDIO_INCOMPLETE;
		}
	}
	if ((io->flags & DMB_IO_FILL) && !*error)
		dmb_index_queue_fill(ix, io);
	dmb_span_end(ix, &io->span);
	io->flags = 0;
	io->mapped = false;
	return DM_ENDIO_DONE;
}
