// SPDX-License-Identifier: GPL-2.0
/*
 * The allocator's choices, directly: buckets without live data are
 * reclaimed first whatever the policy; lru takes the lowest priorities,
 * fifo goes round in bucket order; a reclaimed bucket's gen is raised and
 * it is not written before the commit; a bucket whose gen would run
 * BCH_GC_GEN_MAX ahead of a pointer into it is never reclaimed; data is
 * allocated sequentially, not past a bucket, and not from the reserve.
 */
#include <stdlib.h>

#include "unit.h"
#include "alloc.h"
#include "format.h"

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
	got = bch_alloc_data(&a, 5, &ptr, false);	/* 3 left in the bucket */
	CHECK(got == 3 && bch_ptr_offset(ptr) == first + 5);
	got = bch_alloc_data(&a, 8, &ptr, false);	/* the next ready bucket */
	CHECK(got == 8 && bch_ptr_offset(ptr) % 8 == 0);
	/* 6 ready, 2 opened, 4 reserved for metadata: no more data. */
	CHECK(bch_alloc_data(&a, 8, &ptr, false) == -ENOSPC);
	CHECK(a.nr_ready == 4);
	CHECK(!bch_alloc_meta(&a, &first));
	bch_alloc_free(&a);
}
