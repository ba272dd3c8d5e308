// SPDX-License-Identifier: GPL-2.0
/* The bucket allocator; see alloc.h. */
#include "alloc/alloc.h"

/* Data written between two decays of every priority, as a share of the cache. */
#define DECAY_SHARE	1024

int bch_alloc_init(struct bch_alloc *a, const struct bch_geom *g,
		   const u8 *gens, const u16 *prios, unsigned int policy,
		   u32 reserve)
{
	u64 n = g->kg.nbuckets, i;

	memset(a, 0, sizeof(*a));
	a->g = g;
	a->nbuckets = n;
	a->policy = policy;
	a->reserve = reserve;
	a->prio_reserve = min_t(u32, reserve, g->nr_prio_buckets);
	a->open = n;
	a->rng = bch_random_u64() | 1;
	a->gens = bch_zalloc(n);
	a->b = bch_zalloc(n * sizeof(*a->b));
	a->ready = bch_zalloc(n * sizeof(*a->ready));
	a->pending = bch_zalloc(n * sizeof(*a->pending));
	a->gc = bch_zalloc(n * sizeof(*a->gc));
	if (!a->gens || !a->b || !a->ready || !a->pending || !a->gc) {
		bch_alloc_free(a);
		return -ENOMEM;
	}
	memcpy(a->gens, gens, n);
	for (i = 0; i < n; i++) {
		a->b[i].state = BCH_BUCKET_FREE;
		a->b[i].oldest_gen = gens[i];
		a->b[i].prio = prios && prios[i] != BCH_BTREE_PRIO ? prios[i] :
			       BCH_INITIAL_PRIO;
	}
	/* Buckets before the first are not the allocator's. */
	for (i = 0; i < g->kg.first_bucket && i < n; i++)
		bch_alloc_mark_meta(a, i);
	return 0;
}

void bch_alloc_free(struct bch_alloc *a)
{
	bch_free(a->gens);
	bch_free(a->b);
	bch_free(a->ready);
	bch_free(a->pending);
	bch_free(a->gc);
	a->gc = NULL;
	a->gens = NULL;
	a->b = NULL;
	a->ready = NULL;
	a->pending = NULL;
}

static void lock(struct bch_alloc *a)
{
	if (a->lock)
		a->lock(a->lock_ctx);
}

static void unlock(struct bch_alloc *a)
{
	if (a->unlock)
		a->unlock(a->lock_ctx);
}

static void set_state(struct bch_alloc *a, u64 bucket, enum bch_bucket_state s)
{
	struct bch_bucket *b = &a->b[bucket];

	if (b->state == BCH_BUCKET_META)
		a->nr_meta--;
	else if (b->state == BCH_BUCKET_DATA || b->state == BCH_BUCKET_OPEN)
		a->nr_data--;
	b->state = s;
	if (s == BCH_BUCKET_META)
		a->nr_meta++;
	else if (s == BCH_BUCKET_DATA || s == BCH_BUCKET_OPEN)
		a->nr_data++;
}

void bch_alloc_mark_meta(struct bch_alloc *a, u64 bucket)
{
	if (bucket < a->nbuckets)
		set_state(a, bucket, BCH_BUCKET_META);
}

/* The bucket @k points into, or a->nbuckets when none of ours. */
static u64 key_bucket(const struct bch_alloc *a, const struct bch_key *k)
{
	if (!bch_key_ptrs(k) || bch_ptr_dev(k->ptr[0]) != a->g->nr_this_dev)
		return a->nbuckets;
	return min_t(u64, bch_ptr_bucket(a->g, k->ptr[0]), a->nbuckets);
}

/* Keep in *@oldest the pointer gen lagging the bucket's gen @cur most. */
static void note_gen(u8 cur, u8 gen, u8 *oldest)
{
	if (bch_gen_lag(cur, gen) <= 128 &&
	    bch_gen_lag(cur, gen) > bch_gen_lag(cur, *oldest))
		*oldest = gen;
}

void bch_alloc_mark_key(struct bch_alloc *a, const struct bch_key *k)
{
	u64 bucket = key_bucket(a, k);
	struct bch_bucket *b;
	u8 gen;

	if (bucket == a->nbuckets)
		return;
	b = &a->b[bucket];
	gen = bch_ptr_gen(k->ptr[0]);
	note_gen(a->gens[bucket], gen, &b->oldest_gen);
	if (gen != a->gens[bucket])
		return;
	b->sectors += bch_key_size(k);
	if (b->state == BCH_BUCKET_FREE)
		set_state(a, bucket, BCH_BUCKET_DATA);
}

/* The bucket @k points into when its pointer is current, else a->nbuckets. */
static u64 current_bucket(const struct bch_alloc *a, const struct bch_key *k)
{
	u64 bucket = key_bucket(a, k);

	if (bucket == a->nbuckets ||
	    bch_ptr_gen(k->ptr[0]) != a->gens[bucket])
		return a->nbuckets;
	return bucket;
}

void bch_alloc_mark_dirty(struct bch_alloc *a, const struct bch_key *k,
			  u32 sectors)
{
	u64 bucket = current_bucket(a, k);

	if (bucket == a->nbuckets || !sectors)
		return;
	a->b[bucket].dirty += sectors;
	a->dirty_sectors += sectors;
	if (a->b[bucket].state == BCH_BUCKET_FREE)
		set_state(a, bucket, BCH_BUCKET_DATA);
}

void bch_alloc_count_begin(struct bch_alloc *a)
{
	u64 i;

	lock(a);
	for (i = 0; i < a->nbuckets; i++) {
		a->gc[i].sectors = 0;
		a->gc[i].dirty = 0;
		a->gc[i].oldest_gen = a->gens[i];
		a->gc[i].state = a->b[i].state;
	}
	a->counting = true;
	unlock(a);
}

void bch_alloc_count_key(struct bch_alloc *a, const struct bch_key *k)
{
	u64 bucket = key_bucket(a, k);
	u8 gen;

	if (bucket == a->nbuckets)
		return;
	gen = bch_ptr_gen(k->ptr[0]);
	note_gen(a->gens[bucket], gen, &a->gc[bucket].oldest_gen);
	if (gen == a->gens[bucket])
		a->gc[bucket].sectors += bch_key_size(k);
}

void bch_alloc_count_dirty(struct bch_alloc *a, const struct bch_key *k,
			   u32 sectors)
{
	u64 bucket = current_bucket(a, k);

	if (bucket != a->nbuckets)
		a->gc[bucket].dirty += sectors;
}

static bool holds_data(u8 state)
{
	return state == BCH_BUCKET_DATA || state == BCH_BUCKET_FREE;
}

void bch_alloc_count_end(struct bch_alloc *a)
{
	u64 i, dirty = 0;

	lock(a);
	for (i = 0; i < a->nbuckets; i++) {
		struct bch_bucket *b = &a->b[i];

		b->oldest_gen = a->gc[i].oldest_gen;
		/*
		 * What the index held, and what is still on its way there
		 * (alloc.h, case (c)): exact or high in every state, the
		 * open bucket's too, so written-back data stops counting.
		 */
		b->dirty = a->gc[i].dirty + b->dirty_inflight;
		if (holds_data(a->gc[i].state) && holds_data(b->state)) {
			/* Dirty data is live data too, whatever else. */
			b->sectors = max(a->gc[i].sectors, b->dirty);
			set_state(a, i, b->sectors ? BCH_BUCKET_DATA :
						     BCH_BUCKET_FREE);
		}
		dirty += b->dirty;
	}
	a->dirty_sectors = dirty;
	a->counting = false;
	unlock(a);
}

void bch_alloc_count_cancel(struct bch_alloc *a)
{
	lock(a);
	a->counting = false;
	unlock(a);
}

/* May @bucket's gen be raised now? */
static bool reclaimable(const struct bch_alloc *a, u64 bucket)
{
	const struct bch_bucket *b = &a->b[bucket];

	if (b->state != BCH_BUCKET_FREE && b->state != BCH_BUCKET_DATA)
		return false;
	/* Dirty data exists nowhere else: raising the gen would lose it. */
	if (b->dirty || b->dirty_inflight)
		return false;
	return bch_gen_lag(a->gens[bucket] + 1, b->oldest_gen) < BCH_GC_GEN_MAX;
}

/* Only for a bucket reclaimable() accepts: never one holding dirty data. */
static void invalidate_one(struct bch_alloc *a, u64 bucket)
{
	a->b[bucket].was_free = a->b[bucket].state == BCH_BUCKET_FREE &&
				!a->b[bucket].sectors;
	a->gens[bucket]++;
	a->b[bucket].sectors = 0;
	a->b[bucket].prio = 0;
	set_state(a, bucket, BCH_BUCKET_PENDING);
	a->pending[a->nr_pending++] = bucket;
	/* A gc count under way knows nothing of its new contents. */
	if (a->counting)
		a->gc[bucket].state = BCH_BUCKET_PENDING;
}

static u64 take_free(struct bch_alloc *a, u64 want)
{
	u64 got = 0, i;

	for (i = a->g->kg.first_bucket; i < a->nbuckets && got < want; i++)
		if (a->b[i].state == BCH_BUCKET_FREE && reclaimable(a, i)) {
			invalidate_one(a, i);
			got++;
		}
	return got;
}

/* A candidate within the histogram bin where lru's cut falls. */
struct lru_cand {
	u16 prio;
	u64 bucket;
};

static int lru_cmp(const void *x, const void *y)
{
	const struct lru_cand *a = x, *b = y;

	if (a->prio != b->prio)
		return a->prio < b->prio ? -1 : 1;
	return a->bucket < b->bucket ? -1 : a->bucket > b->bucket;
}

/*
 * lru: the lowest priorities.  A 256-bin histogram of prio >> 8 finds the
 * bin where the cut falls; everything below it goes, and the cut bin's
 * buckets are sorted by priority to take exactly the lowest of them.
 */
static u64 take_lru(struct bch_alloc *a, u64 want)
{
	struct lru_cand *cand;
	u64 *hist, i, got = 0, below = 0, n = 0;
	u32 cut;

	hist = bch_zalloc(256 * sizeof(*hist));
	if (!hist)
		return 0;
	for (i = 0; i < a->nbuckets; i++)
		if (reclaimable(a, i))
			hist[a->b[i].prio >> 8]++;
	for (cut = 0; cut < 255 && below + hist[cut] < want; cut++)
		below += hist[cut];
	cand = bch_zalloc((hist[cut] + 1) * sizeof(*cand));
	for (i = 0; i < a->nbuckets && got < want; i++) {
		if (!reclaimable(a, i))
			continue;
		if ((a->b[i].prio >> 8) < cut) {
			invalidate_one(a, i);
			got++;
		} else if (cand && (a->b[i].prio >> 8) == cut) {
			cand[n].prio = a->b[i].prio;
			cand[n++].bucket = i;
		}
	}
	if (cand) {
		bch_sort(cand, n, sizeof(*cand), lru_cmp);
		for (i = 0; i < n && got < want; i++, got++)
			invalidate_one(a, cand[i].bucket);
	}
	bch_free(cand);
	bch_free(hist);
	return got;
}

static u64 take_fifo(struct bch_alloc *a, u64 want)
{
	u64 got = 0, seen;

	for (seen = 0; seen < a->nbuckets && got < want; seen++) {
		u64 i = a->hand;

		a->hand = (a->hand + 1) % a->nbuckets;
		if (reclaimable(a, i)) {
			invalidate_one(a, i);
			got++;
		}
	}
	return got;
}

static u64 take_random(struct bch_alloc *a, u64 want)
{
	u64 got = 0, tries;

	for (tries = 0; tries < 4 * a->nbuckets && got < want; tries++) {
		u64 i;

		a->rng ^= a->rng << 13;
		a->rng ^= a->rng >> 7;
		a->rng ^= a->rng << 17;
		i = a->rng % a->nbuckets;
		if (reclaimable(a, i)) {
			invalidate_one(a, i);
			got++;
		}
	}
	return got < want ? got + take_fifo(a, want - got) : got;
}

u64 bch_alloc_invalidate(struct bch_alloc *a, u64 want)
{
	u64 got = take_free(a, want);

	if (got >= want)
		return got;
	switch (a->policy) {
	case BCH_REPLACEMENT_FIFO:
		return got + take_fifo(a, want - got);
	case BCH_REPLACEMENT_RANDOM:
		return got + take_random(a, want - got);
	default:
		return got + take_lru(a, want - got);
	}
}

void bch_alloc_commit(struct bch_alloc *a)
{
	u64 i;

	lock(a);
	for (i = 0; i < a->nr_pending; i++) {
		set_state(a, a->pending[i], BCH_BUCKET_READY);
		a->ready[a->nr_ready++] = a->pending[i];
	}
	a->nr_pending = 0;
	unlock(a);
}

static int take_meta(struct bch_alloc *a, u64 *bucket, u32 floor)
{
	u64 i;

	if (a->nr_ready > floor) {
		*bucket = a->ready[--a->nr_ready];
	} else {
		for (i = 0; i < a->nr_pending; i++)
			if (a->b[a->pending[i]].was_free)
				break;
		if (i == a->nr_pending)
			return -ENOSPC;
		*bucket = a->pending[i];
		a->pending[i] = a->pending[--a->nr_pending];
	}
	set_state(a, *bucket, BCH_BUCKET_META);
	return 0;
}

int bch_alloc_meta(struct bch_alloc *a, u64 *bucket)
{
	int r;

	lock(a);
	r = take_meta(a, bucket, a->prio_reserve);
	unlock(a);
	return r;
}

int bch_alloc_prio(struct bch_alloc *a, u64 *bucket)
{
	int r;

	lock(a);
	r = take_meta(a, bucket, 0);
	unlock(a);
	return r;
}

void bch_alloc_release(struct bch_alloc *a, u64 bucket)
{
	lock(a);
	if (bucket < a->nbuckets && a->b[bucket].state == BCH_BUCKET_META) {
		set_state(a, bucket, BCH_BUCKET_FREE);
		a->b[bucket].sectors = 0;
	}
	unlock(a);
}

/* Every so much data written, every priority drops one step. */
static void decay(struct bch_alloc *a, u32 sectors)
{
	u64 i, period = a->nbuckets * a->g->kg.bucket_size / DECAY_SHARE;

	a->decay_sectors += sectors;
	if (a->decay_sectors < max_t(u64, period, 1))
		return;
	a->decay_sectors = 0;
	for (i = 0; i < a->nbuckets; i++)
		if (a->b[i].state == BCH_BUCKET_DATA && a->b[i].prio)
			a->b[i].prio--;
}

static int take_data(struct bch_alloc *a, u32 sectors, u64 *ptr, bool dirty)
{
	u32 bucket_size = a->g->kg.bucket_size, got;

	if (a->open < a->nbuckets && a->open_used >= bucket_size) {
		set_state(a, a->open, BCH_BUCKET_DATA);
		a->open = a->nbuckets;
	}
	if (a->open == a->nbuckets) {
		if (a->nr_ready <= a->reserve)
			return -ENOSPC;
		a->open = a->ready[--a->nr_ready];
		a->open_used = 0;
		set_state(a, a->open, BCH_BUCKET_OPEN);
		a->b[a->open].prio = BCH_INITIAL_PRIO;
	}
	got = min(sectors, bucket_size - a->open_used);
	*ptr = bch_make_ptr(a->g->nr_this_dev,
			    bch_bucket_sector(a->g, a->open) + a->open_used,
			    a->gens[a->open]);
	a->open_used += got;
	a->b[a->open].sectors += got;
	if (dirty) {
		a->b[a->open].dirty += got;
		a->b[a->open].dirty_inflight += got;
		a->dirty_sectors += got;
	}
	decay(a, got);
	return got;
}

int bch_alloc_data(struct bch_alloc *a, u32 sectors, u64 *ptr, bool dirty)
{
	int r;

	lock(a);
	r = take_data(a, sectors, ptr, dirty);
	unlock(a);
	return r;
}

u32 bch_alloc_data_pieces(struct bch_alloc *a, u32 sectors, u64 *ptr,
			  u32 *len, u32 max, u32 *nr, bool dirty)
{
	u32 done = 0;
	int got;

	*nr = 0;
	lock(a);
	if (a->nr_ready > a->reserve + max) {
		while (done < sectors && *nr < max) {
			got = take_data(a, sectors - done, &ptr[*nr], dirty);
			if (got <= 0)
				break;
			len[(*nr)++] = got;
			done += got;
		}
	}
	unlock(a);
	return done;
}

void bch_alloc_dirty_done(struct bch_alloc *a, u64 ptr, u32 sectors)
{
	u64 bucket = bch_ptr_bucket(a->g, ptr);
	struct bch_bucket *b;

	if (bch_ptr_dev(ptr) != a->g->nr_this_dev || bucket >= a->nbuckets)
		return;
	lock(a);
	b = &a->b[bucket];
	b->dirty_inflight -= min(b->dirty_inflight, sectors);
	unlock(a);
}

void bch_alloc_cleaned(struct bch_alloc *a, u64 sectors)
{
	lock(a);
	a->dirty_sectors -= min(a->dirty_sectors, sectors);
	unlock(a);
}

void bch_alloc_touch(struct bch_alloc *a, u64 bucket)
{
	if (bucket < a->nbuckets && a->b[bucket].state == BCH_BUCKET_DATA)
		a->b[bucket].prio = BCH_INITIAL_PRIO;
}
