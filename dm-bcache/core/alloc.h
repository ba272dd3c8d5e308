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
 * saw into a bucket, so a stale pointer can never look current again.
 *
 * Locking: bch_alloc_meta(), _release(), _commit() and _data() may run
 * concurrently with each other (the target allocates data in its map
 * function while its index worker writes metadata); they take the
 * optional lock the caller supplies.  Everything else needs the caller
 * to exclude all other users (gc, reclaim's invalidation, marking).
 * bch_alloc_touch() takes no lock: a racing touch may be lost, which
 * costs only a little lru precision.
 */
#ifndef DM_BCACHE_CORE_ALLOC_H
#define DM_BCACHE_CORE_ALLOC_H

#include "geometry.h"

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
};

/* What gc counts for a bucket while the allocator stays in use. */
struct bch_gc_count {
	u32 sectors;
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
	u64 open;		/* data write point, or nbuckets: none */
	u32 open_used;		/* sectors written in it */
	u64 hand;		/* fifo position */
	u64 rng;
	u64 decay_sectors;	/* data written since the last decay */
	u64 nr_meta, nr_data;
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
 * gc's recount, made without stopping the allocator's users: begin
 * snapshots every bucket (under the allocator's lock), count_key counts
 * a key found in the index, and end installs the counts (under the lock)
 * for buckets that held data or nothing both when the count began and
 * now, and were not reclaimed in between.  A bucket opened for data or
 * reclaimed meanwhile keeps its live count, so data on its way into the
 * index, or written into a bucket after the walk passed its keys, is not
 * taken for garbage.  Keys inserted behind the walk into a bucket whose
 * count is installed are missed, which only makes it look emptier until
 * the next pass: it may be reclaimed early (its gen raised, its data
 * dropped from the cache), never misread.  Every bucket's oldest
 * pointer gen is updated.
 */
void bch_alloc_count_begin(struct bch_alloc *a);
void bch_alloc_count_key(struct bch_alloc *a, const struct bch_key *k);
void bch_alloc_count_end(struct bch_alloc *a);

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
 * 0 or -ENOSPC.
 */
int bch_alloc_meta(struct bch_alloc *a, u64 *bucket);

/* Metadata @bucket is no longer referenced (a replaced node, old prios). */
void bch_alloc_release(struct bch_alloc *a, u64 bucket);

/*
 * Space for up to @sectors of data: *@ptr addresses it (with the bucket's
 * gen), and the return value is how many sectors it holds (less when the
 * open bucket ends), or -ENOSPC when no READY bucket is left above the
 * reserve.  Allocations are multiples of the block size.
 */
int bch_alloc_data(struct bch_alloc *a, u32 sectors, u64 *ptr);

/*
 * Space for @sectors of data in up to @max pieces (a bucket may end
 * within it): @ptr[] and @len[] get them, *@nr how many.  Only while
 * more than @max buckets are ready above the reserve, so one request
 * never drains it.  Returns the sectors allocated (less than @sectors
 * when the pieces ran out; 0 when there is no room).
 */
u32 bch_alloc_data_pieces(struct bch_alloc *a, u32 sectors, u64 *ptr,
			  u32 *len, u32 max, u32 *nr);

/* A read hit on @bucket: keep it longer under lru. */
void bch_alloc_touch(struct bch_alloc *a, u64 bucket);

/* Buckets holding metadata or possibly live data. */
static inline u64 bch_alloc_used(const struct bch_alloc *a)
{
	return a->nr_meta + a->nr_data;
}

#endif
