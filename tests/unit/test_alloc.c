// SPDX-License-Identifier: GPL-2.0
/*
 * The allocator's choices, directly: buckets without live data are
 * reclaimed first whatever the policy; lru takes the lowest priorities,
 * fifo goes round in bucket order; a reclaimed bucket's gen is raised and
 * it is not written before the commit; a bucket whose gen would run
 * BCH_GC_GEN_MAX ahead of a pointer into it is never reclaimed; data is
 * allocated sequentially, not past a bucket, and not from the reserve.
 * A bucket holding dirty data, counted or still in flight, is never
 * reclaimed, and the dirty counters add up.
 */
#include <stdlib.h>

#include "unit.h"
#include "alloc/alloc.h"
#include "mkfs/format.h"

#define N	64

static void geom(struct bch_geom *g)
{
	memset(g, 0, sizeof(*g));
	g->kg.nbuckets = N;
	g->kg.bucket_size = 8;
	g->kg.first_bucket = 1;
	g->block_sectors = 1;
}

/* Every bucket but 0 holds live data; prio of bucket i is @prio(i). */
static void setup(struct bch_alloc *a, struct bch_geom *g, unsigned int policy,
		  u16 (*prio)(u64))
{
	u8 gens[N] = { 0 };
	u16 prios[N];
	u64 i;

	geom(g);
	for (i = 0; i < N; i++)
		prios[i] = prio(i);
	CHECK(!bch_alloc_init(a, g, gens, prios, policy, 4));
	for (i = 1; i < N; i++) {
		struct bch_key k;

		bch_key_init(&k, 0, 8 * i + 8, 8, false);
		bch_key_add_ptr(&k, bch_make_ptr(0, 8 * i, 0));
		bch_alloc_mark_key(a, &k);
	}
}

static u16 descending(u64 i) { return 1000 - i; }
static u16 flat(u64 i) { (void)i; return 500; }

static bool pending(const struct bch_alloc *a, u64 b)
{
	u64 i;

	for (i = 0; i < a->nr_pending; i++)
		if (a->pending[i] == b)
			return true;
	return false;
}

UNIT_TEST(alloc_lru_takes_lowest_prios)
{
	struct bch_alloc a;
	struct bch_geom g;
	u64 i;

	setup(&a, &g, BCH_REPLACEMENT_LRU, descending);
	CHECK(bch_alloc_invalidate(&a, 8) == 8);
	for (i = N - 8; i < N; i++)	/* the highest numbers: lowest prios */
		CHECK(pending(&a, i));
	for (i = N - 8; i < N; i++)
		CHECK(a.gens[i] == 1 && a.b[i].state == BCH_BUCKET_PENDING);
	bch_alloc_free(&a);
}

UNIT_TEST(alloc_fifo_goes_round)
{
	struct bch_alloc a;
	struct bch_geom g;
	u64 i;

	setup(&a, &g, BCH_REPLACEMENT_FIFO, flat);
	CHECK(bch_alloc_invalidate(&a, 5) == 5);
	for (i = 1; i <= 5; i++)
		CHECK(pending(&a, i));
	bch_alloc_commit(&a);
	CHECK(bch_alloc_invalidate(&a, 3) == 3);
	for (i = 6; i <= 8; i++)
		CHECK(pending(&a, i));
	bch_alloc_free(&a);
}

UNIT_TEST(alloc_free_buckets_first)
{
	struct bch_alloc a;
	struct bch_geom g;

	setup(&a, &g, BCH_REPLACEMENT_LRU, descending);
	bch_alloc_release(&a, 0);	/* not ours: stays metadata */
	a.b[20].state = BCH_BUCKET_META;
	a.nr_meta++;
	bch_alloc_release(&a, 20);	/* a replaced node: no live data */
	CHECK(a.b[20].state == BCH_BUCKET_FREE);
	CHECK(bch_alloc_invalidate(&a, 1) == 1);
	CHECK(pending(&a, 20) && a.b[20].was_free);
	bch_alloc_free(&a);
}

UNIT_TEST(alloc_gen_lag_limit)
{
	struct bch_alloc a;
	struct bch_geom g;
	u64 i, got;

	setup(&a, &g, BCH_REPLACEMENT_FIFO, flat);
	/* A stale pointer at gen 0 into bucket 3, whose gen is 95 now. */
	a.gens[3] = BCH_GC_GEN_MAX - 1;
	a.b[3].oldest_gen = 0;
	got = bch_alloc_invalidate(&a, N);
	CHECK(got == N - 2);		/* all but bucket 0 and bucket 3 */
	CHECK(!pending(&a, 3) && a.gens[3] == BCH_GC_GEN_MAX - 1);
	for (i = 1; i < N; i++)
		CHECK(i == 3 || a.gens[i] == 1);
	bch_alloc_free(&a);
}

/*
 * The same limit across reuses: every bucket has a pointer at gen 0
 * (stale after the first reuse, and still in the index: no gc runs), and
 * buckets are reclaimed and written over and over.  No gen may run
 * BCH_GC_GEN_MAX ahead of gen 0, however often a bucket was reused.
 */
UNIT_TEST(alloc_gen_lag_kept_across_reuse)
{
	struct bch_alloc a;
	struct bch_geom g;
	u64 i, ptr, b, reuses = 0;
	u32 round;

	setup(&a, &g, BCH_REPLACEMENT_FIFO, flat);
	for (round = 0; round < 200; round++) {
		reuses += bch_alloc_invalidate(&a, N);
		bch_alloc_commit(&a);
		while (bch_alloc_data(&a, 8, &ptr, false) > 0)
			;
		/* A node written and replaced: its bucket is free again. */
		if (!bch_alloc_meta(&a, &b))
			bch_alloc_release(&a, b);
	}
	CHECK(reuses > N);
	for (i = 1; i < N; i++)
		CHECK(bch_gen_lag(a.gens[i], 0) < BCH_GC_GEN_MAX);
	bch_alloc_free(&a);
}

UNIT_TEST(alloc_data_sequential_and_reserved)
{
	struct bch_alloc a;
	struct bch_geom g;
	u64 ptr, first;
	int got;

	setup(&a, &g, BCH_REPLACEMENT_FIFO, flat);
	CHECK(bch_alloc_data(&a, 4, &ptr, false) == -ENOSPC); /* none ready */
	CHECK(bch_alloc_invalidate(&a, 6) == 6);
	CHECK(bch_alloc_data(&a, 4, &ptr, false) == -ENOSPC); /* uncommitted */
	bch_alloc_commit(&a);
	got = bch_alloc_data(&a, 5, &ptr, false);
	CHECK(got == 5);
	first = bch_ptr_offset(ptr);
	CHECK(bch_ptr_gen(ptr) == 1);
	got = bch_alloc_data(&a, 5, &ptr, false); /* 3 left in the bucket */
	CHECK(got == 3 && bch_ptr_offset(ptr) == first + 5);
	got = bch_alloc_data(&a, 8, &ptr, false); /* the next ready one */
	CHECK(got == 8 && bch_ptr_offset(ptr) % 8 == 0);
	/* 6 ready, 2 opened, 4 reserved for metadata: no more data. */
	CHECK(bch_alloc_data(&a, 8, &ptr, false) == -ENOSPC);
	CHECK(a.nr_ready == 4);
	CHECK(!bch_alloc_meta(&a, &first));
	bch_alloc_free(&a);
}

/* A dirty key of @sectors at the start of @bucket, pointer gen @gen. */
static void dirty_key(struct bch_key *k, u64 bucket, u32 sectors, u8 gen)
{
	bch_key_init(k, 1, 8 * bucket + sectors, sectors, true);
	bch_key_add_ptr(k, bch_make_ptr(0, 8 * bucket, gen));
}

static const u64 dirty_buckets[] = { 2, 17, 40, N - 1 };

#define NR_DIRTY	ARRAY_SIZE(dirty_buckets)

static bool is_dirty_bucket(u64 b)
{
	u32 i;

	for (i = 0; i < NR_DIRTY; i++)
		if (dirty_buckets[i] == b)
			return true;
	return false;
}

/*
 * Dirty buckets survive a reclaim of everything else, both when every
 * bucket holds data (the policy's own choice; N - 1 has the lowest lru
 * prio) and after a gc count found only the dirty keys (everything else
 * FREE, taken first).
 */
static void dirty_never_invalidated(unsigned int policy)
{
	struct bch_alloc a;
	struct bch_geom g;
	struct bch_key k;
	u64 i;
	u32 d;

	setup(&a, &g, policy, descending);
	for (d = 0; d < NR_DIRTY; d++) {
		dirty_key(&k, dirty_buckets[d], 8, 0);
		bch_alloc_mark_dirty(&a, &k, 8);
	}
	CHECK(a.dirty_sectors == 8 * NR_DIRTY);
	CHECK(bch_alloc_invalidate(&a, N) == N - 1 - NR_DIRTY);
	for (i = 1; i < N; i++)
		CHECK(is_dirty_bucket(i) ? !pending(&a, i) && !a.gens[i] &&
		      a.b[i].state == BCH_BUCKET_DATA : pending(&a, i));
	bch_alloc_free(&a);

	/* A count that finds the dirty data, visible pieces only. */
	setup(&a, &g, policy, descending);
	bch_alloc_count_begin(&a);
	for (d = 0; d < NR_DIRTY; d++) {
		dirty_key(&k, dirty_buckets[d], 8, 0);
		bch_alloc_count_dirty(&a, &k, 8);
	}
	bch_alloc_count_end(&a);
	CHECK(a.dirty_sectors == 8 * NR_DIRTY);
	for (i = 1; i < N; i++) {
		/* Dirty data is live even with no clean count. */
		CHECK(a.b[i].state == (is_dirty_bucket(i) ? BCH_BUCKET_DATA :
				       BCH_BUCKET_FREE));
		CHECK(a.b[i].dirty == (is_dirty_bucket(i) ? 8 : 0));
	}
	CHECK(bch_alloc_invalidate(&a, N) == N - 1 - NR_DIRTY);
	for (i = 1; i < N; i++)
		CHECK(pending(&a, i) == !is_dirty_bucket(i));
	bch_alloc_free(&a);
}

UNIT_TEST(alloc_dirty_never_invalidated_lru)
{
	dirty_never_invalidated(BCH_REPLACEMENT_LRU);
}

UNIT_TEST(alloc_dirty_never_invalidated_fifo)
{
	dirty_never_invalidated(BCH_REPLACEMENT_FIFO);
}

UNIT_TEST(alloc_dirty_never_invalidated_random)
{
	dirty_never_invalidated(BCH_REPLACEMENT_RANDOM);
}

/*
 * Dirty data allocated before a gc count and inserted only after it
 * ends: the count cannot see it, so its bucket's dirty count after the
 * pass is what is in flight.  Once reported done it must stay until a
 * count finds the key clean.
 */
UNIT_TEST(alloc_dirty_inflight_outlives_count)
{
	struct bch_alloc a;
	struct bch_geom g;
	struct bch_key k;
	u64 ptr, other, x;

	setup(&a, &g, BCH_REPLACEMENT_FIFO, flat);
	CHECK(bch_alloc_invalidate(&a, 8) == 8);
	bch_alloc_commit(&a);
	CHECK(bch_alloc_data(&a, 8, &ptr, true) == 8);
	x = bch_ptr_bucket(&g, ptr);
	CHECK(a.b[x].dirty == 8 && a.b[x].dirty_inflight == 8);
	CHECK(a.dirty_sectors == 8);
	/* The next allocation closes x: it holds data, counts install. */
	CHECK(bch_alloc_data(&a, 4, &other, false) == 4);
	CHECK(a.b[x].state == BCH_BUCKET_DATA);
	CHECK(bch_ptr_bucket(&g, other) != x);

	bch_alloc_count_begin(&a);	/* finds nothing: not inserted */
	bch_alloc_count_end(&a);
	CHECK(a.b[x].dirty == 8 && a.b[x].state == BCH_BUCKET_DATA);
	CHECK(a.dirty_sectors == 8);
	bch_alloc_invalidate(&a, N);
	CHECK(!pending(&a, x));
	bch_alloc_commit(&a);

	/* Inserted now: no longer in flight, but still dirty. */
	bch_alloc_dirty_done(&a, ptr, 8);
	CHECK(a.b[x].dirty_inflight == 0 && a.b[x].dirty == 8);
	bch_alloc_invalidate(&a, N);
	CHECK(!pending(&a, x));

	/* The next count finds the key. */
	bch_key_init(&k, 1, 8, 8, true);
	bch_key_add_ptr(&k, ptr);
	bch_alloc_count_begin(&a);
	bch_alloc_count_key(&a, &k);
	bch_alloc_count_dirty(&a, &k, 8);
	bch_alloc_count_end(&a);
	CHECK(a.b[x].dirty == 8);
	bch_alloc_invalidate(&a, N);
	CHECK(!pending(&a, x));

	/* Written back: clean once a count says so, then reclaimable. */
	bch_alloc_cleaned(&a, 8);
	CHECK(a.dirty_sectors == 0 && a.b[x].dirty == 8);
	bch_key_set_dirty(&k, false);
	bch_alloc_count_begin(&a);
	bch_alloc_count_key(&a, &k);
	bch_alloc_count_end(&a);
	CHECK(a.b[x].dirty == 0 && a.b[x].state == BCH_BUCKET_DATA);
	CHECK(bch_alloc_invalidate(&a, N) >= 1 && pending(&a, x));
	bch_alloc_free(&a);
}

/*
 * What the counters say: allocations (pieces too) add to the bucket
 * and the total, done and cleaned saturate, a stale or foreign pointer
 * counts for nothing, and a count installs the sum of the buckets.
 */
UNIT_TEST(alloc_dirty_accounting)
{
	struct bch_alloc a;
	struct bch_geom g;
	struct bch_key k, k2;
	u64 ptr[4], b0, b1, b, sum;
	u32 len[4], nr, i;

	setup(&a, &g, BCH_REPLACEMENT_FIFO, flat);
	CHECK(bch_alloc_invalidate(&a, 16) == 16);
	bch_alloc_commit(&a);
	CHECK(bch_alloc_data(&a, 3, &ptr[0], false) == 3);	/* clean */
	CHECK(a.dirty_sectors == 0);
	CHECK(bch_alloc_data_pieces(&a, 10, ptr, len, 4, &nr, true) == 10);
	CHECK(nr == 2 && len[0] == 5 && len[1] == 5);
	b0 = bch_ptr_bucket(&g, ptr[0]);
	b1 = bch_ptr_bucket(&g, ptr[1]);
	CHECK(b0 != b1 && a.dirty_sectors == 10);
	CHECK(a.b[b0].dirty == 5 && a.b[b0].dirty_inflight == 5);
	CHECK(a.b[b1].dirty == 5 && a.b[b1].dirty_inflight == 5);
	CHECK(a.b[b0].sectors == 8);

	/* One piece inserted, the other's write failed and is dropped. */
	bch_alloc_dirty_done(&a, ptr[0], 5);
	bch_alloc_dirty_done(&a, ptr[1], 5);
	bch_alloc_cleaned(&a, 5);
	CHECK(!a.b[b0].dirty_inflight && !a.b[b1].dirty_inflight);
	CHECK(a.dirty_sectors == 5);
	bch_alloc_dirty_done(&a, ptr[0], 100);		/* saturates */
	CHECK(a.b[b0].dirty_inflight == 0);
	bch_alloc_dirty_done(&a, bch_make_ptr(3, 8 * b0, 0), 5);
	bch_alloc_dirty_done(&a, bch_make_ptr(0, 8 * N + 8, 0), 5);
	bch_alloc_cleaned(&a, 100);
	CHECK(a.dirty_sectors == 0);

	/* At open: only a current pointer marks. */
	dirty_key(&k, 30, 8, 1);		/* bucket 30 is at gen 0 */
	bch_alloc_mark_dirty(&a, &k, 8);
	CHECK(a.b[30].dirty == 0 && a.dirty_sectors == 0);
	dirty_key(&k, 30, 8, 0);
	bch_alloc_mark_dirty(&a, &k, 6);	/* 6 of its 8 visible */
	CHECK(a.b[30].dirty == 6 && a.dirty_sectors == 6);

	/*
	 * A count: b0 found dirty, 30 clean; b1 (whose piece was dropped)
	 * is still the open bucket, and its dirty count is installed too
	 * (nothing in flight there), so it drops to 0 at once.
	 */
	bch_key_init(&k, 1, 5, 5, true);
	bch_key_add_ptr(&k, ptr[0]);
	for (i = 0; i < 2; i++) {
		bch_alloc_count_begin(&a);
		bch_alloc_count_dirty(&a, &k, 5);
		dirty_key(&k2, 31, 8, 1);	/* stale: not counted */
		bch_alloc_count_dirty(&a, &k2, 8);
		bch_alloc_count_end(&a);
		CHECK(a.b[b0].dirty == 5 && !a.b[30].dirty && !a.b[31].dirty);
		CHECK(a.b[b1].dirty == 0);
		for (b = 0, sum = 0; b < N; b++)
			sum += a.b[b].dirty;
		CHECK(a.dirty_sectors == sum && sum == 5);
		if (i)
			break;
		/* b1 filled and closed: the same again. */
		CHECK(bch_alloc_data(&a, 3, &ptr[2], false) == 3);
		CHECK(bch_alloc_data(&a, 1, &ptr[2], false) == 1);
		CHECK(a.b[b1].state == BCH_BUCKET_DATA);
	}
	bch_alloc_free(&a);
}
