/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bucket allocator: what every bucket of the cache is doing, which
 * buckets are ready to be written, and which to reclaim next.
 *
 * A bucket is reused only after its generation has been raised and the
 * new gen persisted in the prio chain (ondisk-format 3.3): then every key
 * still pointing into it is stale.  So reclaiming runs in two steps:
 * bch_alloc_invalidate() raises gens and parks the buckets as PENDING;
 * once the caller has written the prios and a journal entry naming them,
 * bch_alloc_commit() makes them READY.  Data is written sequentially into
 * one open bucket at a time; btree nodes and prio buckets take whole
 * buckets from the same READY pool, with a reserve data cannot touch.
 *
 * Which buckets to reclaim follows the superblock's policy: lru (lowest
 * priority; a hit raises a bucket's priority, and priorities decay as
 * data is written), fifo (bucket order, round robin) or random.  Buckets
 * with no live data (after gc or at open) go first, whatever the policy.
 * Gens never run more than BCH_GC_GEN_MAX ahead of the oldest pointer gc
 * saw into a bucket, so a stale pointer can never look current again;
 * reusing a bucket keeps that oldest gen (the stale pointers are still in
 * the index until gc drops them), so between passes a bucket is reused at
 * most that many times.
 *
 * Dirty data (write-back: data only the cache holds, in keys with the
 * dirty bit) must never be reclaimed, so a bucket is reclaimable only
 * while it holds none: b->dirty (dirty sectors as of the last gc count,
 * plus dirty data allocated in it since) and b->dirty_inflight (dirty data
 * allocated and not yet inserted into the index or dropped) are both 0.
 * Cleaning (writeback re-inserting the data as clean keys, or the user
 * overwriting it) never lowers b->dirty: only a gc count does, so every
 * estimate between two counts errs high, which only delays reclaiming.
 * See bch_alloc_count_begin() for why the count itself never errs low.
 *
 * Locking: bch_alloc_meta(), _prio(), _release(), _commit(), _data(),
 * _dirty_done() and _cleaned() may run concurrently with each other (the
 * target allocates data in its map function while its index worker
 * writes metadata); they take the optional lock the caller supplies.
 * Everything else needs the caller to exclude all other users (gc,
 * reclaim's invalidation, marking).
 * bch_alloc_touch() takes no lock: a racing touch may be lost, which
 * costs only a little lru precision.
 */
#ifndef DM_BCACHE_CORE_ALLOC_H
#define DM_BCACHE_CORE_ALLOC_H

#include "format/geometry.h"

enum bch_bucket_state {
	BCH_BUCKET_FREE,	/* no live data: reclaim first */
	BCH_BUCKET_DATA,	/* may hold live cached data */
	BCH_BUCKET_OPEN,	/* the data write point */
	BCH_BUCKET_META,	/* journal, prio, UUID table or btree node */
	BCH_BUCKET_PENDING,	/* gen raised, not yet persisted */
	BCH_BUCKET_READY,	/* gen persisted: may be written */
};

struct bch_bucket {
	u16 prio;
	u8 state;
	u8 oldest_gen;		/* oldest pointer gen gc saw into it */
	bool was_free;		/* PENDING, and held no live data before */
	u32 sectors;		/* live data, as of gc plus writes since */
	u32 dirty;		/* dirty data, as of gc plus writes since */
	u32 dirty_inflight;	/* dirty data allocated, not yet indexed */
};

/* What gc counts for a bucket while the allocator stays in use. */
struct bch_gc_count {
	u32 sectors;
	u32 dirty;
	u8 oldest_gen;
	u8 state;		/* when the count began */
};

struct bch_alloc {
	const struct bch_geom *g;
	u64 nbuckets;
	unsigned int policy;	/* BCH_REPLACEMENT_* */
	u8 *gens;		/* nbuckets, as bch_key_live() wants them */
	struct bch_bucket *b;
	u64 *ready;		/* stack of READY buckets */
	u64 *pending;
	u64 nr_ready, nr_pending;
	u32 reserve;		/* READY buckets only metadata may take */
	u32 prio_reserve;	/* of those, what only a prio chain may take */
	u64 open;		/* data write point, or nbuckets: none */
	u32 open_used;		/* sectors written in it */
	u64 hand;		/* fifo position */
	u64 rng;
	u64 decay_sectors;	/* data written since the last decay */
	u64 nr_meta, nr_data;
	/*
	 * Dirty data in the cache, for rate control and status: the sum of
	 * every bucket's dirty count when a gc count is installed, plus dirty
	 * allocations since, minus what bch_alloc_cleaned() reports.
	 */
	u64 dirty_sectors;
	struct bch_gc_count *gc;	/* gc's recount, beside the live one */
	bool counting;			/* between count_begin and count_end */
	void (*lock)(void *ctx);	/* optional; see above */
	void (*unlock)(void *ctx);
	void *lock_ctx;
};

/*
 * Every bucket starts FREE with @gens[] and @prios[] (nbuckets each, from
 * the prio chain, copied); the caller then marks metadata and live data.
 */
int bch_alloc_init(struct bch_alloc *a, const struct bch_geom *g,
		   const u8 *gens, const u16 *prios, unsigned int policy,
		   u32 reserve);
void bch_alloc_free(struct bch_alloc *a);

/* At open and by gc: @bucket holds metadata / live data of @k. */
void bch_alloc_mark_meta(struct bch_alloc *a, u64 bucket);
void bch_alloc_mark_key(struct bch_alloc *a, const struct bch_key *k);

/*
 * At open: @sectors of dirty key @k are visible in the index (a lookup
 * answers them with @k), so its bucket holds that much dirty data.
 * Nothing when @k's pointer is not current.
 */
void bch_alloc_mark_dirty(struct bch_alloc *a, const struct bch_key *k,
			  u32 sectors);

/*
 * gc's recount, made without stopping the allocator's users: begin
 * snapshots every bucket (under the allocator's lock), count_key counts
 * a key found in the index, count_dirty the part of a dirty key a lookup
 * sees, and end installs the counts (under the lock) for buckets that
 * held data or nothing both when the count began and now, and were not
 * reclaimed in between.  A bucket opened for data or reclaimed meanwhile
 * keeps its live counts, so data on its way into the index, or written
 * into a bucket after the walk passed its keys, is not taken for garbage.
 *
 * Clean data: keys inserted behind the walk are counted by the set as
 * they go in (set.c), but counts are otherwise best effort (a key
 * inserted before the count began and overwritten since may still be
 * counted, and so on).  An error either way only makes a bucket look
 * fuller or emptier until the next pass: it may be reclaimed early (its
 * gen raised, its data dropped from the cache), never misread.
 *
 * Dirty data may not be dropped, so for it the installed count must never
 * be lower than what the index holds in the bucket once the count is
 * installed.  Every dirty piece a lookup sees at count_end is one of:
 *  (a) in a key the walk found when it visited its leaf, visible then:
 *      the walk counted it (only pieces that are still visible can become
 *      visible later, since nothing newer is ever taken out of a leaf);
 *  (b) in a key inserted during the pass behind the walk's position (into
 *      leaves it has visited): the set counts the part of the key before
 *      that position as it inserts it (bch_set_insert()), and the walk
 *      counts the rest when it gets there;
 *  (c) data allocated but not yet inserted or dropped when the count
 *      ends: it is in b->dirty_inflight, which end adds to the count (data
 *      inserted before end but reported done after is counted twice: a
 *      harmless over-estimate until the next pass).
 *  (d) Dirty keys masked by newer ones (written back and re-inserted
 *      clean, or overwritten) are not counted: gc counts only pieces a
 *      lookup answers with the dirty key itself, so the data a newer key
 *      replaced never keeps its bucket, which otherwise nothing could
 *      ever clean (nothing reads it) and the cache would wedge full of
 *      unreclaimable buckets.
 * Since (a) to (c) cover data allocated at any time, before the pass or
 * during it, the dirty count is installed for every bucket, whatever its
 * state (the open one too: written-back data there must stop counting,
 * or the dirty estimate never reaches zero); only the clean count keeps
 * the rule above.  A bucket counted dirty never becomes FREE.  Every bucket's
 * oldest pointer gen is updated.  a->dirty_sectors is recomputed from
 * the installed counts.  The set ends a count only once the nodes on
 * disk hold every key it counted (set.c), since masked dirty keys must
 * not be visible there either when a bucket's new gen is persisted.
 */
void bch_alloc_count_begin(struct bch_alloc *a);
void bch_alloc_count_key(struct bch_alloc *a, const struct bch_key *k);
void bch_alloc_count_dirty(struct bch_alloc *a, const struct bch_key *k,
			   u32 sectors);
void bch_alloc_count_end(struct bch_alloc *a);
/* A count that will not end: every bucket keeps its live counts. */
void bch_alloc_count_cancel(struct bch_alloc *a);

/*
 * Raise the gens of up to @want reclaimable buckets, free ones first,
 * and park them PENDING.  Returns how many.
 */
u64 bch_alloc_invalidate(struct bch_alloc *a, u64 want);

/* The pending gens are persisted: those buckets may now be written. */
void bch_alloc_commit(struct bch_alloc *a);

/*
 * A whole bucket for metadata: a READY one, or else a PENDING one that
 * held no live data (nothing can read its old contents, and a pointer
 * newer than the persisted gen is adopted by the recovery rule).
 * 0 or -ENOSPC.  bch_alloc_meta() (nodes, the UUID table) leaves the
 * last prio_reserve READY buckets alone: they are for the prio chain a
 * refill writes (bch_alloc_prio()), without which no refill, and so no
 * commit, could ever succeed again (mainline's RESERVE_PRIO).
 */
int bch_alloc_meta(struct bch_alloc *a, u64 *bucket);
int bch_alloc_prio(struct bch_alloc *a, u64 *bucket);

/* Metadata @bucket is no longer referenced (a replaced node, old prios). */
void bch_alloc_release(struct bch_alloc *a, u64 bucket);

/*
 * Space for up to @sectors of data: *@ptr addresses it (with the bucket's
 * gen), and the return value is how many sectors it holds (less when the
 * open bucket ends), or -ENOSPC when no READY bucket is left above the
 * reserve.  Allocations are multiples of the block size.
 *
 * With @dirty the data is dirty: the bucket's dirty and dirty_inflight
 * counts and a->dirty_sectors grow by what was allocated, and the
 * caller reports every piece to bch_alloc_dirty_done() once its key is
 * in the index (or the write failed).
 */
int bch_alloc_data(struct bch_alloc *a, u32 sectors, u64 *ptr, bool dirty);

/*
 * Space for @sectors of data in up to @max pieces (a bucket may end
 * within it): @ptr[] and @len[] get them, *@nr how many.  Only while
 * more than @max buckets are ready above the reserve, so one request
 * never drains it.  Returns the sectors allocated (less than @sectors
 * when the pieces ran out; 0 when there is no room).  @dirty as above,
 * for each piece.
 */
u32 bch_alloc_data_pieces(struct bch_alloc *a, u32 sectors, u64 *ptr,
			  u32 *len, u32 max, u32 *nr, bool dirty);

/*
 * The @sectors of dirty data allocated at @ptr are now in the index
 * (bch_set_insert() returned), or were dropped because the write failed;
 * in the latter case the caller also reports them to bch_alloc_cleaned().
 * Never call it before the insert: until then only the in-flight count
 * keeps the bucket from being reclaimed.  Takes the allocator's lock.
 */
void bch_alloc_dirty_done(struct bch_alloc *a, u64 ptr, u32 sectors);

/*
 * @sectors of dirty data are no longer dirty (written back, or dropped):
 * a->dirty_sectors shrinks, saturating at 0.  The buckets stay
 * unreclaimable until the next gc count finds them clean.
 */
void bch_alloc_cleaned(struct bch_alloc *a, u64 sectors);

/* A read hit on @bucket: keep it longer under lru. */
void bch_alloc_touch(struct bch_alloc *a, u64 bucket);

/* Buckets holding metadata or possibly live data. */
static inline u64 bch_alloc_used(const struct bch_alloc *a)
{
	return a->nr_meta + a->nr_data;
}

#endif
