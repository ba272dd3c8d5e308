// SPDX-License-Identifier: GPL-2.0
/*
 * The cache index in the target: opening the cache set at construction
 * (journal replay included, core/set/set.c), and the index worker, the one
 * place the index changes.  Bio completions hand it finished
 * write-through writes and read-miss fills; the map path hands it writes
 * whose cached range must be invalidated and flushes.  It inserts their
 * keys under index_lock, journals them in batches (at once for FUA
 * writes and flushes, otherwise within DMB_JOURNAL_DELAY), refills the
 * allocator and runs gc, then completes or sends on the bios.
 *
 * The worker runs on an ordered workqueue with memory reclaim protection
 * and allocates under memalloc_noio, so it never waits on I/O to itself.
 */
#include <linux/sched/mm.h>
#include <linux/dm-io.h>

#include "dmb-target.h"
#include "core/util/array.h"

#define DMB_JOURNAL_DELAY	msecs_to_jiffies(100)
/* After an allocation failure while inserting: when the worker tries again. */
#define DMB_RETRY_DELAY		msecs_to_jiffies(20)
#define DMB_JOURNAL_BATCH	512	/* keys that journal at once */
#define DMB_GC_EVERY_REFILLS	16
/*
 * Leaves one gc step visits: the worker goes back to inserting and
 * journalling between steps, so write completions never wait for more
 * than a step (core/set/set.h, bch_set_gc_step()).
 */
#define DMB_GC_STEP_LEAVES	1
/*
 * Keys inserted between commits.  A leaf's keys since its last write sit
 * in one unsorted-into-pivots set that every insert and lookup walks;
 * committing (a bset appended per changed leaf) keeps it short, as the
 * mainline driver writes a leaf once its last bset grows.
 */
#define DMB_COMMIT_KEYS		2048

/*
 * A read miss on its way into the cache.  Its data is read again from the
 * origin into the fill's own pages, never copied from the reader's bio:
 * with O_DIRECT those pages are the reader's memory, which the reader
 * may change after the origin filled it.  The span registered when the
 * miss was mapped stays on the list until the fill is indexed, so a
 * write to the range in between gets the fill dropped.
 */

struct dmb_fill {
	struct work_struct work;
	struct list_head list;
	struct dmb_index *ix;
	struct dmb_span span;		/* the range, on the span list */
	u32 sectors;
	u32 reserved;			/* sectors counted in ix->fill_pages */
	u64 piece[DMB_MAX_PIECES];	/* where it went in the cache */
	u32 piece_len[DMB_MAX_PIECES];
	u32 nr_pieces;
	u32 nr_pages;
	unsigned int epoch;		/* of its cache write */
	struct page_list *pl;		/* its pages, allocated by the fill */
	struct block_device *origin;
};

static struct kmem_cache *fill_cache;

/*
 * Pages all fills of one cache may hold at once (16 MiB): a fill is only
 * an optimisation, so a miss past the bound is not filled, and a burst of
 * misses cannot take memory the rest of the system needs.
 */
#define DMB_FILL_PAGES_MAX	4096

static u32 fill_pages(u32 sectors)
{
	return DIV_ROUND_UP(sectors, PAGE_SIZE >> SECTOR_SHIFT);
}

/* The end of every fill, indexed or dropped. */
static void fill_free(struct dmb_fill *f)
{
	u32 i;

	atomic_sub(fill_pages(f->reserved), &f->ix->fill_pages);
	atomic_dec(&f->ix->fills_pending);
	for (i = 0; i < f->nr_pages; i++)
		__free_page(f->pl[i].page);
	kfree(f->pl);
	kmem_cache_free(fill_cache, f);
}

/* ---- cache I/O accounting ---- */

/* @n cache I/Os start, under index_lock: the epoch they count in. */
unsigned int dmb_cache_io_start(struct dmb_index *ix, unsigned int n)
{
	unsigned int e = READ_ONCE(ix->io_epoch) & 1;

	atomic_add(n, &ix->cache_io[e]);
	return e;
}

void dmb_cache_io_end(struct dmb_index *ix, unsigned int epoch)
{
	if (atomic_dec_and_test(&ix->cache_io[epoch]))
		wake_up(&ix->cache_io_wait);
}

/* Gens raised (index_lock exclusive): I/O from here on is a new epoch. */
static void cache_io_fence(void *ctx)
{
	struct dmb_index *ix = ctx;

	WRITE_ONCE(ix->io_epoch, ix->io_epoch + 1);
}

/* Reclaimed buckets: wait out data I/O from before the fence. */
static void wait_cache_io(void *ctx)
{
	struct dmb_index *ix = ctx;
	unsigned int old = (READ_ONCE(ix->io_epoch) - 1) & 1;

	wait_event(ix->cache_io_wait, !atomic_read(&ix->cache_io[old]));
}

/*
 * The set's exclusive windows (core/set/set.h): the worker holds index_lock
 * shared and takes it exclusive only around changes lookups could see.
 * Only the worker changes the set (work_mutex), so nothing changes in
 * the gap between dropping the shared hold and taking the exclusive one.
 */
static void index_excl(void *ctx, bool on)
{
	struct dmb_index *ix = ctx;

	if (on) {
		up_read(&ix->index_lock);
		down_write(&ix->index_lock);
	} else {
		downgrade_write(&ix->index_lock);
	}
}

/* The allocator's lock (core/alloc/alloc.h): taken in one hook, dropped in the other. */
static void alloc_lock(void *ctx)
	__acquires(&((struct dmb_index *)ctx)->alloc_lock)
{
	spin_lock(&((struct dmb_index *)ctx)->alloc_lock);
}

static void alloc_unlock(void *ctx)
	__releases(&((struct dmb_index *)ctx)->alloc_lock)
{
	spin_unlock(&((struct dmb_index *)ctx)->alloc_lock);
}

void dmb_index_kick(struct dmb_index *ix)
{
	if (READ_ONCE(ix->synced))	/* e.g. a gc message while suspended */
		WRITE_ONCE(ix->synced, false);
	queue_work(ix->wq, &ix->index_work);
}

/* ---- hand-offs from completions ---- */

void dmb_index_write_done(struct dmb_op *op)
{
	struct dmb_io *io = container_of(op, struct dmb_io, op);
	struct dmb_index *ix = io->dc->ix;
	unsigned long flags;

	/*
	 * Kicked under the lock: once the worker may see @io, it may end its
	 * bio, and the last table may go, and @ix with it.
	 */
	spin_lock_irqsave(&ix->lock, flags);
	list_add_tail(&io->list, &ix->done_writes);
	dmb_index_kick(ix);
	spin_unlock_irqrestore(&ix->lock, flags);
}

/*
 * Cache space for @sectors, in up to DMB_MAX_PIECES pieces as buckets end;
 * index_lock held for reading.  Returns the sectors allocated (0 when no
 * bucket is ready; fewer when the pieces ran out) and asks the worker for
 * more buckets before they run out.
 */
u32 dmb_alloc_pieces(struct dmb_index *ix, u32 sectors, u64 *piece,
		     u32 *len, u32 *nr, bool dirty)
{
	struct bch_alloc *a = &ix->set.a;
	u32 done;

	done = bch_alloc_data_pieces(a, sectors, piece, len, DMB_MAX_PIECES,
				     nr, dirty);
	if (READ_ONCE(a->nr_ready) < a->reserve + bch_set_refill_batch(&ix->set) &&
	    !READ_ONCE(ix->refill_due)) {
		WRITE_ONCE(ix->refill_due, true);
		dmb_index_kick(ix);
	}
	return done;
}

/*
 * Dirty pieces no longer in flight: indexed, or (@dropped) never to be,
 * which also takes them out of the dirty estimate.  Clean pieces need
 * nothing: space left unused is reclaimed with its bucket.
 */
static void dirty_done(struct dmb_index *ix, const u64 *piece, const u32 *len,
		       u32 nr, bool dropped)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		bch_alloc_dirty_done(&ix->set.a, piece[i], len[i]);
		if (dropped)
			bch_alloc_cleaned(&ix->set.a, len[i]);
	}
}

/* A write gives back pieces it allocated and does not use. */
void dmb_free_pieces(struct dmb_index *ix, const u64 *piece, const u32 *len,
		     u32 nr, bool dirty)
{
	if (dirty)
		dirty_done(ix, piece, len, nr, true);
}

/* Fill work: put the data in the cache, then let the worker index it. */
static void fill_write(struct work_struct *work)
{
	struct dmb_fill *f = container_of(work, struct dmb_fill, work);
	struct dmb_index *ix = f->ix;
	struct dm_io_region where;
	struct dm_io_request req = {
		.bi_opf = REQ_OP_WRITE | REQ_SYNC,
		.mem.type = DM_IO_PAGE_LIST,
		.client = ix->meta.client,
	};
	u32 i, done, got;
	int r = 0;

	/* Best effort: under memory pressure the fill goes, not the cache. */
	f->pl = kmalloc_array(fill_pages(f->sectors), sizeof(*f->pl),
			      GFP_NOIO | __GFP_NORETRY | __GFP_NOWARN);
	if (!f->pl)
		goto drop;
	f->nr_pages = fill_pages(f->sectors);
	for (i = 0; i < f->nr_pages; i++) {
		f->pl[i].page = alloc_page(GFP_NOIO | __GFP_NORETRY |
					   __GFP_NOWARN);
		f->pl[i].next = i + 1 < f->nr_pages ? &f->pl[i + 1] : NULL;
		if (!f->pl[i].page) {
			f->nr_pages = i;
			goto drop;
		}
	}
	req.bi_opf = REQ_OP_READ;
	req.mem.ptr.pl = f->pl;
	req.mem.offset = 0;
	where.bdev = f->origin;
	where.sector = f->span.start;
	where.count = f->sectors;
	if (dm_io(&req, 1, &where, NULL, IOPRIO_DEFAULT))
		goto drop;
	req.bi_opf = REQ_OP_WRITE | REQ_SYNC;

	down_read(&ix->index_lock);
	got = dmb_alloc_pieces(ix, f->sectors, f->piece, f->piece_len,
			       &f->nr_pieces, false);
	if (got)
		f->epoch = dmb_cache_io_start(ix, 1);
	up_read(&ix->index_lock);
	if (!got)		/* no room: a fill is only an optimisation */
		goto drop;
	/* What did not fit in DMB_MAX_PIECES stays uncached. */
	f->sectors = got;
	for (i = 0, done = 0; i < f->nr_pieces && !r; done += f->piece_len[i++]) {
		size_t at = (size_t)done << SECTOR_SHIFT;

		req.mem.ptr.pl = &f->pl[at / PAGE_SIZE];
		req.mem.offset = at % PAGE_SIZE;
		where.bdev = ix->cache_bdev;
		where.sector = bch_ptr_offset(f->piece[i]);
		where.count = f->piece_len[i];
		r = dm_io(&req, 1, &where, NULL, IOPRIO_DEFAULT);
	}
	/* Written (or not): a refill may reuse the buckets; the gens tell. */
	dmb_cache_io_end(ix, f->epoch);
	if (r)
		goto drop;
	spin_lock_irq(&ix->lock);
	list_add_tail(&f->list, &ix->fills);
	spin_unlock_irq(&ix->lock);
	dmb_index_kick(ix);
	return;
drop:
	dmb_span_end(ix, &f->span);
	fill_free(f);
}

/*
 * A read miss completed (bio completion context): queue its fill.  Best
 * effort: past DMB_FILL_PAGES_MAX, or with no memory, nothing is cached.
 */
void dmb_index_queue_fill(struct dmb_index *ix, struct dmb_io *io)
{
	u32 sectors = io->span.end - io->span.start;	/* readahead too */
	struct dmb_fill *f;

	if (atomic_add_return(fill_pages(sectors), &ix->fill_pages) >
	    DMB_FILL_PAGES_MAX) {
		atomic_sub(fill_pages(sectors), &ix->fill_pages);
		return;
	}
	f = kmem_cache_alloc(fill_cache, GFP_NOWAIT | __GFP_NOWARN);
	if (!f) {
		atomic_sub(fill_pages(sectors), &ix->fill_pages);
		return;
	}
	f->sectors = sectors;
	f->reserved = sectors;
	f->nr_pages = 0;
	f->pl = NULL;
	f->origin = io->dc->origin_dev->bdev;
	f->ix = ix;
	atomic_inc(&ix->fills_pending);
	dmb_span_move(ix, &io->span, &f->span);
	INIT_WORK(&f->work, fill_write);
	queue_work(ix->fill_wq, &f->work);
}

/* ---- the worker ---- */

/* Insert @k and remember it for the journal; under index_lock (write). */
static int index_insert(struct dmb_index *ix, const struct bch_key *k)
{
	int r = bch_set_insert(&ix->set, k);

	ix->sectors_since_gc += bch_key_size(k);
	if (!r)
		r = bch_array_grow((void **)&ix->jkeys, &ix->cap_jkeys,
				   ix->nr_jkeys, ix->nr_jkeys + 1,
				   sizeof(*ix->jkeys), 64);
	if (!r)
		ix->jkeys[ix->nr_jkeys++] = *k;
	return r;
}

/* An invalidation: a key without pointers over the range. */
static int index_invalidate(struct dmb_index *ix, sector_t sector, u32 sectors)
{
	struct bch_key k;

	while (sectors) {
		u32 n = min_t(u32, sectors, BCH_KEY_MAX_SIZE & ~7U);
		int r;

		bch_key_init(&k, ix->inode, sector + n, n, false);
		r = index_insert(ix, &k);
		if (r)
			return r;
		sector += n;
		sectors -= n;
	}
	return 0;
}

static bool ptr_current(struct dmb_index *ix, const struct bch_key *k)
{
	return bch_key_live(&ix->set.g, ix->set.a.gens, k);
}

/*
 * Data that reached the cache at @start: a key per piece (@dirty: dirty
 * keys), if @ok and every piece's bucket is still current; else, with
 * @invalidate, the range is invalidated (a write whose data is not known
 * good).  1 if indexed, 0 if not, or -errno.
 */
static int index_pieces(struct dmb_index *ix, sector_t start, const u64 *piece,
			const u32 *len, u32 nr, bool ok, bool invalidate,
			bool dirty)
{
	struct bch_key k[DMB_MAX_PIECES];
	u32 i, at = 0;
	int r = 0;

	for (i = 0; i < nr; at += len[i++]) {
		bch_key_init(&k[i], ix->inode, start + at + len[i], len[i],
			     dirty);
		bch_key_add_ptr(&k[i], piece[i]);
		ok = ok && ptr_current(ix, &k[i]);
	}
	/* Clean copies: the origin's data is flushed before they persist. */
	if (ok && nr && !dirty)
		WRITE_ONCE(ix->meta.flush_first_due, true);
	for (i = 0; ok && i < nr && !r; i++)
		r = index_insert(ix, &k[i]);
	if (!ok && invalidate)
		r = index_invalidate(ix, start, at);
	return r ?: ok;
}

/*
 * A write-back write finished.  Its keys go in dirty, whatever happened
 * to the range meanwhile: the data is nowhere else, and a newer write
 * indexed later masks it.  If a cache piece failed (or the cache did),
 * the write goes to the origin instead (1), and its range is
 * invalidated once it is durable there (dmb_origin_then_invalidate()).
 * 0 when indexed; -ENOMEM when an allocation failed, which leaves the
 * write to be indexed again later (see index_work()).
 * Under index_lock (write).
 */
static int index_dirty(struct dmb_index *ix, struct dmb_io *io, bool ok,
		       int *r)
{
	bool good = ok && !*r && !READ_ONCE(io->cache_error);
	int ret = 0;

	if (ok && !*r) {
		ret = index_pieces(ix, io->span.start, io->piece, io->piece_len,
				   io->nr_pieces, good, false, true);
		if (ret == -ENOMEM)
			return ret;
		if (ret < 0)
			*r = ret;
	}
	good = ret > 0;
	dirty_done(ix, io->piece, io->piece_len, io->nr_pieces, !good);
	if (good)
		ix->dirty_seq++;
	return !good;
}

/*
 * Metadata failed: stop using the cache; the origin serves everything.
 * From here on writes are not recorded in the index (the worker drops
 * the keys of writes it finds done), so before the state changes the
 * cache is marked untrusted: its superblock loses the synchronous flag,
 * which makes the mainline driver (and us, once the cache is checked)
 * start an empty set on it instead of serving what it held.
 *
 * Not so with dirty data in the cache: it exists nowhere else, so the
 * set stays trusted (the journal up to the failure is readable), the
 * origin stays attached, and the fail state refuses writes over anything
 * cached (dmb-io.c, failed_locked()), which keeps that index true.  The
 * next table, or the mainline driver, then recovers the dirty data.
 *
 * Either way the superblock also gets needs_check, so the next
 * constructor refuses the cache until bcache_check has looked at it.
 * The device that failed may refuse that write too: it is tried again
 * at every sync (suspend, table removal) until it lands, since by then
 * the device may be back (a path restored, a transient error over).
 */
static void record_failure(struct dmb_index *ix)
{
	struct bch_sb *sb;
	int r = -ENOMEM;

	if (ix->failure_on_disk)
		return;
	sb = kmemdup(&ix->set.sb, sizeof(*sb), GFP_NOIO);
	if (sb) {
		sb->flags |= BCH_CACHE_NEEDS_CHECK;
		if (ix->origin_only)
			sb->flags &= ~BCH_CACHE_SYNC;
		sb->seq++;
		r = bch_sb_write(&ix->meta.io, sb) ?:
		    ix->meta.io.flush(ix->meta.io.ctx);
		if (!r)
			ix->set.sb = *sb;
	}
	kfree(sb);
	if (r) {
		DMERR("cache %s: failure not recorded in the superblock (%d): check before use",
		      ix->name, r);
		return;
	}
	ix->failure_on_disk = true;
	DMINFO("cache %s: needs_check recorded in the cache superblock",
	       ix->name);
}

static void origin_detach(struct dmb_index *ix);

static int origin_record(struct dmb_index *ix, const u8 *set_uuid,
			 unsigned int state);

/*
 * Dirty keys went in: a backing origin's superblock says dirty before
 * any of them can be journalled, as the mainline driver marks it, so
 * that driver (or we) never runs the origin without this cache.
 */
static void index_failed(struct dmb_index *ix, const char *what, int r);

static void origin_mark_dirty(struct dmb_index *ix)
{
	if (!ix->origin_backing || ix->origin_dirty)
		return;
	if (origin_record(ix, ix->set.sb.set_uuid, BCH_BDEV_STATE_DIRTY))
		index_failed(ix, "marking the origin superblock dirty", -EIO);
	else
		ix->origin_dirty = true;
}

static void index_failed(struct dmb_index *ix, const char *what, int r)
{
	/* Failed already; or read-only, which writes nothing to fail. */
	if (ix->state != DMB_STATE_RW)
		return;
	DMERR("cache %s: %s failed (%d): cache disabled, run bcache_check",
	      ix->name, what, r);
	if (bch_set_dirty_sectors(&ix->set)) {
		DMERR("cache %s: dirty data left in the cache; origin stays attached",
		      ix->name);
		record_failure(ix);
		goto out;
	}
	ix->origin_only = true;
	record_failure(ix);
	origin_detach(ix);
out:
	WRITE_ONCE(ix->state, DMB_STATE_FAIL);
	ix->needs_check = true;
	dmb_index_changed(ix);
	wake_up_all(&ix->gc_wait);	/* gc messages waiting: no pass comes */
	wake_up_all(&ix->wb.wait);	/* nor the end of a write-back pass */
}

static int journal_now(struct dmb_index *ix)
{
	int r = 0;

	if (ix->nr_jkeys)
		r = bch_set_journal(&ix->set, ix->jkeys, ix->nr_jkeys);
	if (r)
		index_failed(ix, "journal write", r);
	ix->nr_jkeys = 0;
	return r;
}

static u64 ready_above_reserve(struct dmb_index *ix)
{
	struct bch_alloc *a = &ix->set.a;

	return a->nr_ready > a->reserve ? a->nr_ready - a->reserve : 0;
}

/*
 * A pass ended: the messages that came before it started are answered;
 * one that came during it needs another pass, which is queued now (the
 * message's own kick may have been absorbed by the pass's requeueing).
 */
static void gc_done(struct dmb_index *ix)
{
	ix->reclaim_dry = false;	/* the pass may have freed buckets */
	WRITE_ONCE(ix->gc_done_req, ix->gc_pass_req);
	wake_up_all(&ix->gc_wait);
	if (READ_ONCE(ix->gc_req) != ix->gc_done_req &&
	    !READ_ONCE(ix->stopping))
		queue_work(ix->wq, &ix->index_work);
}

/*
 * Reclaim ran dry: a pass is due once a refill batch's worth of sectors
 * has been indexed over (written, invalidated or written back) since the
 * last one began, as only that can have left more buckets unused.  A
 * pass visits every leaf and ends in a commit; run back to back while
 * the cache was full of dirty data, passes took the worker from the
 * writes waiting on it (wb-sustained).
 */
static bool gc_due(struct dmb_index *ix)
{
	return ix->gc_requested &&
	       ix->sectors_since_gc >= bch_set_refill_batch(&ix->set) *
				       ix->set.g.kg.bucket_size;
}

/*
 * gc when reclaim runs dry, every DMB_GC_EVERY_REFILLS reclaims and
 * when a message asks, one step per run of the worker: it queues itself
 * again until the pass ends, serving what completions hand it between.
 */
static void gc_step(struct dmb_index *ix)
{
	u64 req = READ_ONCE(ix->gc_req);
	int r;

	if (READ_ONCE(ix->stopping))
		return;
	if (!ix->set.gc_running) {
		/* Suspended: only a gc message starts a pass. */
		if (req == ix->gc_done_req &&
		    (READ_ONCE(ix->quiet) ||
		     (!gc_due(ix) &&
		      ix->refills_since_gc < DMB_GC_EVERY_REFILLS)))
			return;
		ix->gc_requested = false;
		ix->refills_since_gc = 0;
		ix->sectors_since_gc = 0;
		ix->gc_pass_req = req;	/* what this pass answers */
	}
	r = bch_set_gc_step(&ix->set, DMB_GC_STEP_LEAVES);
	if (r == 1) {
		if (!READ_ONCE(ix->stopping))
			queue_work(ix->wq, &ix->index_work);
		return;
	}
	if (r)
		index_failed(ix, "gc", r);
	gc_done(ix);
}

/*
 * Keep a batch of buckets ready above the reserve.  A refill that comes
 * up short means reclaim has run dry: the other buckets hold dirty data,
 * or data only a gc pass can show to be gone.  Another refill before that
 * pass recounts would reclaim a bucket or two for a whole prio write each
 * (5 ms under TCG, four to a worker run: writes waited about 100 ms each
 * once the cache was full of dirty data, wb-sustained), so refills wait
 * for the pass, and writes that find no space meanwhile go to the origin,
 * as mainline's do while its allocator waits for gc.
 */
static void maintain(struct dmb_index *ix)
{
	u64 batch = bch_set_refill_batch(&ix->set), before;
	unsigned int tries = 0;
	int r;

	WRITE_ONCE(ix->refill_due, false);
	if (READ_ONCE(ix->quiet)) {	/* suspended: no I/O needs buckets */
		gc_step(ix);
		return;
	}
	if (ix->set.uncommitted >= DMB_COMMIT_KEYS) {
		r = bch_set_commit(&ix->set);
		if (r) {
			index_failed(ix, "index commit", r);
			return;
		}
		ix->nr_jkeys = 0;	/* in the nodes now */
	}
	while (ready_above_reserve(ix) < 2 * batch && tries++ < 4) {
		/* Dry: until gc, a refill only for the metadata reserve. */
		if (ix->reclaim_dry &&
		    (tries > 1 || ix->set.a.nr_ready >= ix->set.a.reserve))
			break;
		before = ix->set.reclaimed;
		r = bch_set_refill(&ix->set, batch);
		if (r && r != -ENOSPC) {
			index_failed(ix, "bucket refill", r);
			return;
		}
		if (!r)
			ix->refills_since_gc++;
		if (r || ix->set.reclaimed - before < batch) {
			ix->reclaim_dry = true;
			ix->gc_requested = true;
		}
	}
	gc_step(ix);
}

static void submit_to_origin(struct bio *bio)
{
	struct dmb_io *io = dm_per_bio_data(bio, sizeof(struct dmb_io));
	struct dmb_cache *dc = io->dc;

	bio_set_dev(bio, dc->origin_dev->bdev);
	if (bio_sectors(bio))
		bio->bi_iter.bi_sector = dc->data_offset +
			dm_target_offset(dc->ti, bio->bi_iter.bi_sector);
	submit_bio_noacct(bio);
}

/*
 * An insert that failed to allocate changed nothing a second try does
 * not redo (a key inserted again replaces itself), so a write whose keys
 * or invalidation found no memory is not failed, nor is the cache: it
 * goes back to the head of its queue, with what came after it, and the
 * worker tries again shortly.  Reclaim frees memory meanwhile; nothing
 * it waits on waits on this worker, which allocates under memalloc_noio.
 * A fill is only an optimisation: one that finds no memory is dropped.
 */
static void index_retry_later(struct dmb_index *ix, struct list_head *writes,
			      struct bio_list *inval)
{
	spin_lock_irq(&ix->lock);
	list_splice(writes, &ix->done_writes);
	bio_list_merge_head(&ix->invalidate, inval);
	spin_unlock_irq(&ix->lock);
	DMWARN_LIMIT("cache %s: out of memory indexing writes; they wait and try again",
		     ix->name);
	if (!READ_ONCE(ix->stopping))
		queue_delayed_work(ix->wq, &ix->journal_work, DMB_RETRY_DELAY);
}

static void index_work(struct work_struct *work)
{
	struct dmb_index *ix = container_of(work, struct dmb_index, index_work);
	struct dmb_io *io, *tmp, *held = NULL;
	struct dmb_fill *f, *ftmp;
	struct bio_list inval, inval_done, inval_later, flushes;
	struct bio *bio;
	LIST_HEAD(writes);
	LIST_HEAD(later);
	LIST_HEAD(resend);
	LIST_HEAD(fills);
	unsigned int noio = memalloc_noio_save();
	bool sync_journal, ok, insert, failed, lost, dirty = false;
	bool retry = false;
	int r = 0;

	spin_lock_irq(&ix->lock);
	list_splice_init(&ix->done_writes, &writes);
	list_splice_init(&ix->fills, &fills);
	inval = ix->invalidate;
	bio_list_init(&ix->invalidate);
	flushes = ix->flushes;
	bio_list_init(&ix->flushes);
	sync_journal = ix->journal_due || !bio_list_empty(&flushes);
	ix->journal_due = false;
	spin_unlock_irq(&ix->lock);

	mutex_lock(&ix->work_mutex);
	/*
	 * Exclusive only to insert: a run with nothing to index (a gc step,
	 * a journal timer) holds the index shared throughout.
	 */
	insert = !list_empty(&writes) || !bio_list_empty(&inval) ||
		 !list_empty(&fills);
	if (insert)
		down_write(&ix->index_lock);
	else
		down_read(&ix->index_lock);
	ok = ix->state == DMB_STATE_RW;
	list_for_each_entry_safe(io, tmp, &writes, list) {
		struct bio *b = io->bio;

		if (b->bi_opf & REQ_FUA)
			sync_journal = true;
		if (io->flags & DMB_IO_DIRTY) {
			int d = index_dirty(ix, io, ok, &r);

			if (d == -ENOMEM) {
				held = io;
				break;
			}
			if (d)
				list_move_tail(&io->list, &resend);
			else
				dirty = true;
			continue;
		}
		/* On the origin, durably: what the cache held there goes. */
		if (io->flags & DMB_IO_ORIGIN_FIRST) {
			if (ok && !r && !io->op.status)
				r = index_invalidate(ix, io->span.start,
						     io->span.end - io->span.start);
			if (r == -ENOMEM) {
				r = 0;
				held = io;
				break;
			}
			continue;
		}
		if (!ok || r)
			continue;
		/*
		 * Write-through: keys if all went well, else the range is
		 * invalidated (the origin has the data, the cache may not)
		 * -- but not when the write itself failed over dirty data:
		 * the write fails, and the dirty data stays the range's last
		 * acknowledged contents, as for dmb_origin_then_invalidate().
		 */
		r = index_pieces(ix, io->span.start, io->piece, io->piece_len,
				 io->nr_pieces,
				 !dmb_span_end(ix, &io->span) && !io->op.status &&
				 !READ_ONCE(io->cache_error),
				 !(io->op.status && (io->flags & DMB_IO_OVER_DIRTY)),
				 false);
		if (r == -ENOMEM) {
			r = 0;
			held = io;
			break;
		}
		r = min(r, 0);
	}
	/* @held and all after it wait for the next try, in their order. */
	if (held) {
		LIST_HEAD(handled);

		list_cut_before(&handled, &writes, &held->list);
		list_splice_init(&writes, &later);
		list_splice_init(&handled, &writes);
		retry = true;
	}
	bio_list_init(&inval_done);
	bio_list_init(&inval_later);
	while ((bio = bio_list_pop(&inval))) {
		if (ok && !r && !retry) {
			io = dm_per_bio_data(bio, sizeof(struct dmb_io));
			if (bio->bi_opf & REQ_FUA)
				sync_journal = true;
			r = index_invalidate(ix, io->span.start,
					     io->span.end - io->span.start);
			if (r == -ENOMEM) {
				r = 0;
				retry = true;
			}
		}
		bio_list_add(retry ? &inval_later : &inval_done, bio);
	}
	list_for_each_entry(f, &fills, list) {
		if (!ok || r || retry)
			break;
		r = index_pieces(ix, f->span.start, f->piece, f->piece_len,
				 f->nr_pieces, !dmb_span_end(ix, &f->span), false,
				 false);
		if (r == -ENOMEM) {
			r = 0;
			break;		/* this fill and the rest: dropped */
		}
		r = min(r, 0);
	}
	/* The rest writes metadata: lookups and allocations go on. */
	if (insert)
		downgrade_write(&ix->index_lock);
	if (r)
		index_failed(ix, "index insert", r);
	if (retry)
		index_retry_later(ix, &later, &inval_later);
	if (dirty)
		origin_mark_dirty(ix);
	if (ix->state == DMB_STATE_RW) {
		if (sync_journal || ix->nr_jkeys >= DMB_JOURNAL_BATCH)
			journal_now(ix);
		else if (ix->nr_jkeys && !READ_ONCE(ix->stopping))
			queue_delayed_work(ix->wq, &ix->journal_work,
					   DMB_JOURNAL_DELAY);
	}
	if (ix->state == DMB_STATE_RW)
		maintain(ix);
	/*
	 * A write completes successfully only once what makes it visible
	 * afterwards holds: its keys or its invalidation, in a journal that
	 * will be written.  Once the index has failed, nothing more is
	 * journalled, so unless the origin alone is the truth from now on
	 * (the cache failed without dirty data) this run's writes fail: the
	 * next table would serve the older keys over them, and write-back
	 * would copy older dirty data over them.
	 */
	lost = ix->state != DMB_STATE_RW && !ix->origin_only;
	up_read(&ix->index_lock);
	mutex_unlock(&ix->work_mutex);
	memalloc_noio_restore(noio);

	list_for_each_entry_safe(io, tmp, &writes, list) {
		struct bio *b = io->bio;

		dmb_span_end(ix, &io->span);	/* if the cache was off */
		b->bi_status = io->op.status;
		if (lost && !b->bi_status)
			b->bi_status = BLK_STS_IOERR;
		bio_endio(b);
	}
	list_for_each_entry_safe(io, tmp, &resend, list)
		dmb_origin_then_invalidate(io->dc, io, io->span.start);
	while ((bio = bio_list_pop(&inval_done))) {
		if (lost)
			bio_io_error(bio);
		else
			submit_to_origin(bio);
	}
	/*
	 * A failed cache with dirty data cannot make it durable any more
	 * (some may never have reached the journal): flushes say so.
	 */
	failed = READ_ONCE(ix->state) != DMB_STATE_RW &&
		 bch_set_dirty_sectors(&ix->set);
	while ((bio = bio_list_pop(&flushes))) {
		if (failed)
			bio_io_error(bio);
		else
			submit_to_origin(bio);
	}
	list_for_each_entry_safe(f, ftmp, &fills, list) {
		dmb_span_end(ix, &f->span);
		fill_free(f);
	}
}

static void journal_work(struct work_struct *work)
{
	struct dmb_index *ix = container_of(to_delayed_work(work),
					    struct dmb_index, journal_work);

	spin_lock_irq(&ix->lock);
	ix->journal_due = true;
	spin_unlock_irq(&ix->lock);
	index_work(&ix->index_work);
}

/* ---- write-back's side (dmb-writeback.c) ---- */

/*
 * Write-back copied @n dirty pieces to the origin and flushed it: what of
 * them the index still holds, unchanged, becomes clean.  0 or -errno.
 */
int dmb_index_clean(struct dmb_index *ix, const struct bch_key *keys, u32 n)
{
	struct bch_key out[8];
	unsigned int noio = memalloc_noio_save();
	u64 cleaned = 0;
	bool later;
	u32 i, j, m;
	int r = 0;

	mutex_lock(&ix->work_mutex);
	down_write(&ix->index_lock);
	for (i = 0; i < n && !r && ix->state == DMB_STATE_RW; i++) {
		m = bch_set_clean_pieces(&ix->set, &keys[i], out,
					 ARRAY_SIZE(out));
		for (j = 0; j < m && !r; j++) {
			r = index_insert(ix, &out[j]);
			if (!r)
				cleaned += bch_key_size(&out[j]);
		}
	}
	bch_alloc_cleaned(&ix->set.a, cleaned);
	downgrade_write(&ix->index_lock);
	/*
	 * No memory for a clean key: the pieces not marked clean stay dirty
	 * and a later pass copies them again, which is harmless.
	 */
	if (r == -ENOMEM) {
		DMWARN_LIMIT("cache %s: out of memory marking copies clean; they stay dirty",
			     ix->name);
		r = 0;
	}
	if (r)
		index_failed(ix, "index insert", r);
	later = ix->nr_jkeys && !READ_ONCE(ix->stopping);
	up_read(&ix->index_lock);
	mutex_unlock(&ix->work_mutex);
	memalloc_noio_restore(noio);
	/* Journalled with the next batch: replay would only copy them again. */
	if (later)
		queue_delayed_work(ix->wq, &ix->journal_work, DMB_JOURNAL_DELAY);
	return r;
}

/*
 * A write-back pass found nothing dirty, and no dirty key went in since
 * it began (@seq): a backing origin's superblock may say clean again,
 * once the clean keys are journalled.  0 or -errno.
 */
int dmb_index_origin_clean(struct dmb_index *ix, u64 seq)
{
	unsigned int noio = memalloc_noio_save();
	int r = 0;

	mutex_lock(&ix->work_mutex);
	if (ix->dirty_seq != seq) {
		r = -EAGAIN;
	} else if (ix->origin_dirty && ix->state == DMB_STATE_RW) {
		down_read(&ix->index_lock);
		r = journal_now(ix);
		up_read(&ix->index_lock);
		if (!r)
			r = origin_record(ix, ix->set.sb.set_uuid,
					  BCH_BDEV_STATE_CLEAN);
		if (!r)
			ix->origin_dirty = false;
	}
	mutex_unlock(&ix->work_mutex);
	memalloc_noio_restore(noio);
	return r;
}

/*
 * The detach message, once the target passes everything through: the
 * cache forgets all it holds of the origin's range [@start, @start +
 * @len) (dirty data too, but only if @force; else -EBUSY), the
 * invalidation is journalled, and a backing origin's superblock says
 * detached (no set, state none), as the mainline driver leaves a device
 * it detached.  0 or -errno.
 */
int dmb_index_detach(struct dmb_index *ix, sector_t start, sector_t len,
		     bool force)
{
	unsigned int noio;
	int r;

	/*
	 * Writes in flight go in first (mapped before passthrough, they may
	 * be dirty): their cache I/O ends, then the worker indexes them.
	 */
	wait_event(ix->cache_io_wait, !atomic_read(&ix->cache_io[0]) &&
		   !atomic_read(&ix->cache_io[1]));
	flush_workqueue(ix->defer_wq);
	flush_workqueue(ix->fill_wq);
	flush_workqueue(ix->wq);
	noio = memalloc_noio_save();
	mutex_lock(&ix->work_mutex);
	down_write(&ix->index_lock);
	r = ix->state == DMB_STATE_RW ? 0 : -EIO;
	/* A write-back write that was in flight is dirty data too. */
	if (!r && !force && bch_set_dirty_sectors(&ix->set))
		r = -EBUSY;
	while (!r && len) {
		u32 n = min_t(u64, len, BCH_KEY_MAX_SIZE & ~7U);

		r = index_invalidate(ix, start, n);
		start += n;
		len -= n;
	}
	if (!r)
		bch_alloc_cleaned(&ix->set.a, bch_set_dirty_sectors(&ix->set));
	downgrade_write(&ix->index_lock);
	if (!r)
		r = journal_now(ix);
	else if (r != -EBUSY && ix->state == DMB_STATE_RW)
		index_failed(ix, "index insert", r);
	if (!r && ix->origin_backing) {
		static const u8 none[16];

		r = origin_record(ix, none, BCH_BDEV_STATE_NONE);
		if (!r)
			ix->origin_dirty = false;
	}
	/* gc recounts the buckets the invalidation emptied. */
	ix->gc_requested = true;
	up_read(&ix->index_lock);
	mutex_unlock(&ix->work_mutex);
	memalloc_noio_restore(noio);
	dmb_index_kick(ix);
	return r;
}

/* ---- open, share, sync, close ---- */

static LIST_HEAD(indexes);
static DEFINE_MUTEX(indexes_lock);

/*
 * The UUID the origin is recorded under: its backing superblock's, or
 * for a raw origin one derived from the cache set's (a cache serves one
 * origin, so it is stable across constructions).
 */
static void origin_uuid(struct dmb_cache *dc, u8 uuid[16], char *label)
{
	if (dc->layout == BCH_LAYOUT_BACKING) {
		memcpy(uuid, dc->origin_info.sb.uuid, 16);
		memcpy(label, dc->origin_info.sb.label, BCH_SB_LABEL_SIZE);
		label[BCH_SB_LABEL_SIZE] = 0;
		return;
	}
	bch_origin_raw_uuid(dc->cache_sb.set_uuid, uuid);
	strscpy(label, BCH_RAW_ORIGIN_LABEL, BCH_SB_LABEL_SIZE + 1);
}

/*
 * Is a backing origin attached to this cache set, as its superblock
 * records it (the set's UUID, state clean or dirty)?  Only then is what the cache
 * holds under its UUID current.  A raw origin has no record: the cache
 * is taken to belong to it.
 */
static bool origin_attached(struct dmb_cache *dc)
{
	return dc->layout != BCH_LAYOUT_BACKING ||
	       bch_origin_attached(&dc->origin_info.sb, dc->cache_sb.set_uuid);
}

/* Write the backing origin's superblock with @set_uuid and @state. */
static int origin_record(struct dmb_index *ix, const u8 *set_uuid,
			 unsigned int state)
{
	struct bch_sb *sb = &ix->origin_sb;

	bch_origin_record(sb, set_uuid, state);
	return bch_sb_write(&ix->origin_meta.io, sb) ?:
	       ix->origin_meta.io.flush(ix->origin_meta.io.ctx);
}

/*
 * Record the attachment in the backing superblock as the mainline driver
 * does when it attaches a device: the set's UUID and state clean.  Then
 * the driver, given this cache and origin, serves what we cached.
 */
static int origin_attach(struct dmb_cache *dc, struct dmb_index *ix)
{
	int r = origin_record(ix, dc->cache_sb.set_uuid, BCH_BDEV_STATE_CLEAN);

	if (!r)
		dc->origin_info.sb = ix->origin_sb;
	return r;
}

/*
 * The cache failed: the backing origin leaves the set in its superblock
 * as well, as the mainline driver detaches a clean device (no set UUID,
 * state none).  Even when the cache device is too far gone to be marked
 * untrusted, the next constructor then finds the origin unattached and
 * takes a fresh UUID slot, so nothing the cache held for it is served
 * again.  Every write reached the origin (write-through), so nothing is
 * lost.
 */
static void origin_detach(struct dmb_index *ix)
{
	static const u8 none[16];

	/* Only an origin this set attached (a refused table attached none). */
	if (ix->origin_backing &&
	    !memcmp(ix->origin_sb.set_uuid, ix->set.sb.set_uuid, 16) &&
	    origin_record(ix, none, BCH_BDEV_STATE_NONE))
		DMERR("cache %s: cannot detach the origin in its superblock",
		      ix->name);
}

static void index_free(struct dmb_index *ix)
{
	/* No copy may run on the set from here on. */
	dmb_wb_exit(ix);
	if (ix->set_open)
		dmb_index_sync(ix);
	/* Nothing may run on the set once it is closed. */
	WRITE_ONCE(ix->stopping, true);
	/* Fills first: a fill that ends queues the worker. */
	if (ix->defer_wq)
		cancel_work_sync(&ix->defer_work);
	if (ix->fill_wq)
		flush_workqueue(ix->fill_wq);
	if (ix->wq) {
		/* A run under way may arm the timer; neither re-queues now. */
		cancel_work_sync(&ix->index_work);
		cancel_delayed_work_sync(&ix->journal_work);
	}
	if (ix->set_open)
		bch_set_close(&ix->set);
	if (ix->wq)
		destroy_workqueue(ix->wq);
	if (ix->fill_wq)
		destroy_workqueue(ix->fill_wq);
	if (ix->defer_wq)
		destroy_workqueue(ix->defer_wq);
	bioset_exit(&ix->bs);
	dmb_meta_dev_exit(&ix->meta);
	dmb_meta_dev_exit(&ix->origin_meta);
	kvfree(ix->jkeys);
	kvfree(ix);
}

/*
 * A passthrough table reads the origin only, which lacks the dirty data:
 * refused on an index holding any, before anything is written for it.
 */
static int refuse_passthrough(struct dmb_cache *dc, struct dmb_index *ix)
{
	if (dc->mode != DMB_MODE_PASSTHROUGH || !bch_set_dirty_sectors(&ix->set))
		return 0;
	dc->ti->error = "Cache holds dirty data: passthrough refused";
	return -EBUSY;
}

/*
 * A read-only index: the origin's UUID slot, found without writing, and
 * nothing else; an origin the set would have to attach is refused.
 */
static int index_start_ro(struct dmb_cache *dc, struct dmb_index *ix)
{
	struct dm_target *ti = dc->ti;
	char label[BCH_SB_LABEL_SIZE + 1];
	u8 uuid[16];
	int r;

	if (!origin_attached(dc)) {
		ti->error = "Read-only table: origin not attached to this cache";
		return -EINVAL;
	}
	origin_uuid(dc, uuid, label);
	r = bch_set_uuid_lookup(&ix->set, uuid);
	if (r < 0) {
		ti->error = r == -ENOENT ?
			"Read-only table: origin not in the cache's UUID table" :
			"Cannot read the cache UUID table";
		return r == -ENOENT ? -EINVAL : r;
	}
	ix->inode = r;
	ix->needs_check = ix->set.sb.flags & BCH_CACHE_NEEDS_CHECK;
	DMINFO("cache %s: opened read-only%s", ix->name,
	       ix->needs_check ? ", needs_check set" : "");
	return 0;
}

/*
 * A newly opened index: the origin's UUID slot, its backing superblock's
 * attachment, and buckets to write to.  index_lock held shared.
 */
static int index_start(struct dmb_cache *dc, struct dmb_index *ix)
{
	struct dm_target *ti = dc->ti;
	char label[BCH_SB_LABEL_SIZE + 1];
	bool attached;
	u8 uuid[16];
	int r;

	r = refuse_passthrough(dc, ix);
	if (r)
		return r;
	if (ix->state == DMB_STATE_RO)
		return index_start_ro(dc, ix);

	origin_uuid(dc, uuid, label);
	attached = origin_attached(dc);
	/* Dirty for another cache: only that cache has its newest data. */
	if (!attached && ix->origin_dirty) {
		ti->error = "Origin bcache superblock is dirty for another cache set";
		return -EINVAL;
	}
	/* A set made by this ctr never meets a dirty origin (refused before). */
	if (WARN_ON_ONCE(ix->origin_dirty && dc->formatted)) {
		ti->error = "Origin bcache superblock is dirty but its cache holds no index";
		return -EINVAL;
	}
	r = bch_set_uuid_slot(&ix->set, uuid, label, !attached);
	if (r < 0) {
		ti->error = r == -ENOSPC ? "Cache UUID table is full" :
			"Cannot record the origin in the UUID table";
		return r;
	}
	ix->inode = r;
	if (!attached) {
		r = origin_attach(dc, ix);
		if (r) {
			ti->error = "Error writing origin superblock";
			return r;
		}
	}
	ix->started = true;
	maintain(ix);		/* buckets to write to, from the start */
	if (ix->set.replayed)
		DMINFO("cache %s: journal replay done, %llu keys", ix->name,
		       ix->set.replayed);
	return 0;
}

/* A new index over the cache dmb_cache_meta_open() checked. */
static int index_open(struct dmb_cache *dc, struct dmb_index *ix)
{
	struct dm_target *ti = dc->ti;
	int r;

	ix->users = 1;
	dmb_events_init(ix);
	ix->cache_dev = dc->cache_dev->bdev->bd_dev;
	ix->origin_dev = dc->origin_dev->bdev->bd_dev;
	ix->cache_bdev = dc->cache_dev->bdev;
	ix->data_offset = dc->data_offset;
	strscpy(ix->name, dc->cache_dev->name, sizeof(ix->name));
	init_rwsem(&ix->index_lock);
	mutex_init(&ix->work_mutex);
	spin_lock_init(&ix->alloc_lock);
	spin_lock_init(&ix->lock);
	INIT_LIST_HEAD(&ix->done_writes);
	INIT_LIST_HEAD(&ix->fills);
	bio_list_init(&ix->invalidate);
	bio_list_init(&ix->flushes);
	bio_list_init(&ix->deferred);
	bio_list_init(&ix->retries);
	INIT_WORK(&ix->defer_work, dmb_io_deferred);
	INIT_WORK(&ix->index_work, index_work);
	INIT_DELAYED_WORK(&ix->journal_work, journal_work);
	init_waitqueue_head(&ix->cache_io_wait);
	init_waitqueue_head(&ix->gc_wait);
	spin_lock_init(&ix->span_lock);
	INIT_LIST_HEAD(&ix->spans);
	bio_list_init(&ix->parked);
	/* Before any worker exists: none of them writes in this state. */
	if (dc->read_only)
		ix->state = DMB_STATE_RO;
	ix->origin_dirty = dc->layout == BCH_LAYOUT_BACKING &&
		bch_sb_bdev_state(&dc->origin_info.sb) == BCH_BDEV_STATE_DIRTY;
	if (dmb_wb_init(ix)) {
		ti->error = "Cannot allocate the write-back worker";
		return -ENOMEM;
	}
	ix->wb.origin = dc->origin_dev->bdev;

	ix->wq = alloc_ordered_workqueue("dmb_index", WQ_MEM_RECLAIM);
	ix->fill_wq = alloc_workqueue("dmb_fill", WQ_MEM_RECLAIM, 0);
	/*
	 * Its own queue, with its own rescuer: a deferred write or a retried
	 * read never waits behind a fill's allocation.
	 */
	ix->defer_wq = alloc_workqueue("dmb_defer", WQ_MEM_RECLAIM, 0);
	if (!ix->wq || !ix->fill_wq || !ix->defer_wq) {
		ti->error = "Cannot allocate workqueues";
		return -ENOMEM;
	}
	/* Clones are made in map, under submit_bio: a rescuer is needed. */
	r = bioset_init(&ix->bs, 4 * (DMB_MAX_PIECES + 1), 0,
			BIOSET_NEED_RESCUER);
	if (r) {
		ti->error = "Cannot allocate bio set";
		return r;
	}
	r = dmb_meta_dev_init(&ix->meta, ix->cache_bdev);
	ix->meta.flush_first = dc->origin_dev->bdev;
	if (!r && dc->layout == BCH_LAYOUT_BACKING) {
		r = dmb_meta_dev_init(&ix->origin_meta, dc->origin_dev->bdev);
		ix->origin_sb = dc->origin_info.sb;
		ix->origin_backing = !r;
	}
	if (r) {
		ti->error = "Cannot create dm-io client";
		return r;
	}
	r = bch_set_open(&ix->set, &ix->meta.io, &dc->cache_sb);
	if (r) {
		ti->error = "Cannot load the cache index";
		return r;
	}
	ix->set_open = true;
	ix->set.reuse_fence = cache_io_fence;
	ix->set.reuse_wait = wait_cache_io;
	ix->set.reuse_ctx = ix;
	ix->set.a.lock = alloc_lock;
	ix->set.a.unlock = alloc_unlock;
	ix->set.a.lock_ctx = ix;
	bch_set_readers(&ix->set, index_excl, ix);
	/* As the worker holds them: shared, exclusive in the set's windows. */
	mutex_lock(&ix->work_mutex);
	down_read(&ix->index_lock);
	r = index_start(dc, ix);
	up_read(&ix->index_lock);
	mutex_unlock(&ix->work_mutex);
	return r;
}

/*
 * Attach the target to its cache's index: the live one if another table
 * (the one a reload replaces) has it open, else the cache is checked (or
 * formatted) and a new index opened.
 */
int dmb_index_get(struct dmb_cache *dc)
{
	dev_t cdev = dc->cache_dev->bdev->bd_dev;
	struct dmb_index *ix;
	int r;

	mutex_lock(&indexes_lock);
	list_for_each_entry(ix, &indexes, node) {
		if (ix->cache_dev != cdev)
			continue;
		if (ix->origin_dev != dc->origin_dev->bdev->bd_dev ||
		    ix->data_offset != dc->data_offset) {
			dc->ti->error = "Cache device in use with another origin";
			r = -EBUSY;
		} else if (dc->read_only != (ix->state == DMB_STATE_RO)) {
			/* An index opened read-only never starts writing. */
			dc->ti->error = dc->read_only ?
				"Read-only table: cache in use read-write" :
				"Cache in use by a read-only table";
			r = -EBUSY;
		} else {
			/* A reload: the same rules as a first open. */
			dc->cache_sb = ix->set.sb;
			r = dmb_cache_match_geometry(dc);
			if (!r)
				r = refuse_passthrough(dc, ix);
			if (!r) {
				ix->users++;
				dc->ix = ix;
				dmb_events_attach(dc);
			}
		}
		mutex_unlock(&indexes_lock);
		return r;
	}
	r = dmb_cache_meta_open(dc);
	if (r)
		goto out;
	ix = kvzalloc(sizeof(*ix), GFP_KERNEL);
	if (!ix) {
		dc->ti->error = "Cannot allocate the cache index";
		r = -ENOMEM;
		goto out;
	}
	r = index_open(dc, ix);
	if (r) {
		index_free(ix);
		goto out;
	}
	list_add(&ix->node, &indexes);
	dc->ix = ix;
	dmb_events_attach(dc);
out:
	mutex_unlock(&indexes_lock);
	return r;
}

void dmb_index_put(struct dmb_cache *dc)
{
	struct dmb_index *ix = dc->ix;

	if (!ix)
		return;
	dmb_events_detach(dc);
	mutex_lock(&indexes_lock);
	if (!--ix->users) {
		list_del(&ix->node);
		index_free(ix);
	}
	mutex_unlock(&indexes_lock);
	dc->ix = NULL;
}

/*
 * Everything the index knows, on disk: journal, nodes, a new root, the
 * prios.  Postsuspend syncs and so does the destructor; when nothing ran
 * in between (no resume), the second has nothing to add and is skipped
 * rather than writing a journal entry and a whole prio chain again.
 */
int dmb_index_sync(struct dmb_index *ix)
{
	int r = 0;

	unsigned int noio;

	/* An index whose start failed has nothing to keep, and no buckets. */
	if (!ix->started || READ_ONCE(ix->synced))
		return 0;
	/* From here until resume the worker starts no reclaim or gc pass. */
	WRITE_ONCE(ix->quiet, true);
	flush_workqueue(ix->defer_wq);
	flush_workqueue(ix->fill_wq);
	flush_workqueue(ix->wq);
	index_work(&ix->index_work);	/* what the flushes queued last */
	/* The commit below makes what a journal timer would write durable. */
	cancel_delayed_work_sync(&ix->journal_work);
	noio = memalloc_noio_save();
	mutex_lock(&ix->work_mutex);
	down_read(&ix->index_lock);
	if (ix->state == DMB_STATE_RW) {
		ix->nr_jkeys = 0;	/* the commit puts them in the nodes */
		/* No gc steps while suspended: a pass under way ends now. */
		if (ix->set.gc_running) {
			r = bch_set_gc(&ix->set);
			gc_done(ix);
		}
		if (!r)
			r = bch_set_commit(&ix->set);
		if (!r)
			r = bch_set_save_prios(&ix->set);
		if (r)
			index_failed(ix, "index commit", r);
		else
			WRITE_ONCE(ix->synced, true);
	} else {
		record_failure(ix);
	}
	up_read(&ix->index_lock);
	mutex_unlock(&ix->work_mutex);
	memalloc_noio_restore(noio);
	return r;
}

/* A table on this index takes I/O again: the next sync has work. */
void dmb_index_resume(struct dmb_index *ix)
{
	WRITE_ONCE(ix->synced, false);
	WRITE_ONCE(ix->quiet, false);
}

/*
 * Ask for a gc pass that starts after now, and return the request to wait
 * for; @if_none: not if one is asked for and not yet done.
 */
static u64 gc_ask(struct dmb_index *ix, bool if_none)
{
	u64 req;

	spin_lock_irq(&ix->lock);
	if (!if_none || ix->gc_req == READ_ONCE(ix->gc_done_req))
		ix->gc_req++;
	req = ix->gc_req;
	spin_unlock_irq(&ix->lock);
	dmb_index_kick(ix);
	return req;
}

/*
 * The dirty estimate still counts data overwritten while dirty, which
 * only a gc pass takes out: writeback, finding nothing left to copy, asks
 * for one, so that the status reaches 0 with no message.
 */
void dmb_index_recount_dirty(struct dmb_index *ix)
{
	gc_ask(ix, true);
}

/*
 * The gc message: a whole pass that starts after the request (one under
 * way when it comes does not count), and its commit; then the cache's
 * state.
 */
int dmb_index_gc(struct dmb_index *ix)
{
	u64 req = gc_ask(ix, false);

	if (wait_event_killable(ix->gc_wait,
				READ_ONCE(ix->gc_done_req) >= req ||
				READ_ONCE(ix->state) != DMB_STATE_RW))
		return -EINTR;
	return READ_ONCE(ix->state) == DMB_STATE_RW ? 0 : -EIO;
}

int dmb_index_init(void)
{
	fill_cache = KMEM_CACHE(dmb_fill, 0);
	return fill_cache ? 0 : -ENOMEM;
}

void dmb_index_exit(void)
{
	kmem_cache_destroy(fill_cache);
}
