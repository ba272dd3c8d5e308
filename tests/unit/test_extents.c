// SPDX-License-Identifier: GPL-2.0
/*
 * Property test of the extent run (core/btree/extents.c) against the per-sector
 * model: two million random inserts of extents and holes over four
 * inodes, with a lookup after each and a full comparison every 4096.
 */
#include <stdlib.h>

#include "unit.h"
#include "btree/extents.h"
#include "extent_model.h"

#define SPAN 2048

static int insert(void *obj, const struct bch_key *k)
{
	return bch_extents_insert(obj, k);
}

static const struct bch_key *lookup(const void *obj, u64 inode, u64 sector,
				    u64 *next)
{
	const struct bch_extents *e = obj;
	u32 i = bch_extents_seek(e, inode, sector);
	const struct bch_key *k = i < e->nr ? &e->k[i] : NULL;

	*next = ~0ULL;
	if (!k || bch_key_inode(k) != inode)
		return NULL;
	if (bch_key_start(k) > sector) {
		*next = bch_key_start(k);
		return NULL;
	}
	*next = k->low;
	return k;
}

/* Sorted, disjoint, no empty keys, and every sector as the model says. */
static int verify_all(const struct bch_extents *e)
{
	u32 i;

	for (i = 0; i < e->nr; i++) {
		const struct bch_key *k = &e->k[i];

		if (!bch_key_size(k) || bch_key_size(k) > k->low)
			return 0;
		if (i && bch_key_cmp_pos(&e->k[i - 1], bch_key_inode(k),
					 bch_key_start(k)) > 0)
			return 0;	/* unsorted or overlapping */
	}
	return model_walk_agrees(e, lookup, SPAN);
}

UNIT_TEST(extents_random_against_model)
{
	struct bch_extents e;
	u32 op, bad_lookups = 0;

	model_reset();
	bch_extents_init(&e);
	for (op = 0; op < 2000000; op++) {
		if (model_insert_random(&e, insert, SPAN)) {
			CHECK(0);
			break;
		}
		bad_lookups += model_probe_wrong(&e, lookup, SPAN);
		if (!(op & 4095) && !verify_all(&e)) {
			CHECK(!"extent run differs from the model");
			break;
		}
	}
	CHECK(bad_lookups == 0);
	CHECK(verify_all(&e));
	bch_extents_free(&e);
}
UNIT_TEST(extents_split_and_trim)
{
	struct bch_extents e;
	struct bch_key a, b;

	bch_extents_init(&e);
	bch_key_init(&a, 1, 100, 100, true);	/* [0, 100) */
	bch_key_add_ptr(&a, bch_make_ptr(0, 1000, 3));
	CHECK(!bch_extents_insert(&e, &a));
	bch_key_init(&b, 1, 60, 20, false);	/* [40, 60), a hole */
	CHECK(!bch_extents_insert(&e, &b));
	CHECK(e.nr == 3);
	CHECK(bch_key_start(&e.k[0]) == 0 && e.k[0].low == 40);
	CHECK(bch_ptr_offset(e.k[0].ptr[0]) == 1000);
	CHECK(!bch_key_ptrs(&e.k[1]) && e.k[1].low == 60);
	CHECK(bch_key_start(&e.k[2]) == 60 && e.k[2].low == 100);
	CHECK(bch_ptr_offset(e.k[2].ptr[0]) == 1060);
	CHECK(bch_ptr_gen(e.k[2].ptr[0]) == 3 && bch_key_dirty(&e.k[2]));
	bch_key_init(&b, 1, 200, 200, false);	/* covers everything */
	CHECK(!bch_extents_insert(&e, &b));
	CHECK(e.nr == 1 && !bch_key_ptrs(&e.k[0]));
	bch_extents_free(&e);
}

/* Two runs equal key for key (position, size and pointers). */
static int same_run(const struct bch_extents *a, const struct bch_extents *b)
{
	return a->nr == b->nr &&
	       !memcmp(a->k, b->k, (size_t)a->nr * sizeof(*a->k));
}

/*
 * Overlaying a newer run on an older one gives exactly what inserting
 * the newer run's keys one by one gives: random runs of every density
 * over four inodes, extents and holes.
 */
UNIT_TEST(extents_overlay_equals_inserts)
{
	struct bch_extents old, new, want, got;
	u32 round, i, n_old, n_new;
	struct bch_key k;

	model_reset();
	for (round = 0; round < 3000; round++) {
		bch_extents_init(&old);
		bch_extents_init(&new);
		bch_extents_init(&got);
		n_old = model_random() % 200;
		n_new = model_random() % (round % 3 ? 40 : 400);
		for (i = 0; i < n_old; i++) {
			model_random_key(&k, SPAN);
			CHECK(!bch_extents_insert(&old, &k));
		}
		for (i = 0; i < n_new; i++) {
			model_random_key(&k, SPAN);
			CHECK(!bch_extents_insert(&new, &k));
		}
		bch_extents_init(&want);
		for (i = 0; i < old.nr; i++)
			CHECK(!bch_extents_insert(&want, &old.k[i]));
		for (i = 0; i < new.nr; i++)
			CHECK(!bch_extents_insert(&want, &new.k[i]));
		CHECK(!bch_extents_overlay(&got, &old, &new));
		if (!same_run(&got, &want)) {
			fprintf(stderr, "  round %u: %u old, %u new keys: got %u, want %u\n",
				round, old.nr, new.nr, got.nr, want.nr);
			CHECK(!"overlay differs from inserting");
			round = ~0U - 1;
		}
		bch_extents_free(&old);
		bch_extents_free(&new);
		bch_extents_free(&want);
		bch_extents_free(&got);
	}
}
