// SPDX-License-Identifier: GPL-2.0
/*
 * Property test of the in-memory leaf key log (core/btree/keyset.c) against the
 * per-sector model: a million random inserts with sets sealed at random
 * intervals (so lookups cross up to four sets and compactions happen),
 * a point lookup after each insert, and every 2048 inserts a walk of all
 * sectors by lookup and next-boundary, which must agree with the model.
 * Full logs merge only their newest sets, or all of them: both happen.
 */
#include <stdlib.h>

#include "unit.h"
#include "btree/keyset.h"
#include "extent_model.h"

#define SPAN 2048

static int insert(void *obj, const struct bch_key *k)
{
	return bch_keyset_insert(obj, k);
}

static const struct bch_key *lookup(const void *obj, u64 inode, u64 sector,
				    u64 *next)
{
	return bch_keyset_lookup(obj, inode, sector, next);
}

UNIT_TEST(keyset_random_against_model)
{
	struct bch_keyset ks;
	u32 op, bad = 0, seals = 0, until_seal = 100, partial = 0, whole = 0;

	model_reset();
	bch_keyset_init(&ks);
	for (op = 0; op < 1000000; op++) {
		if (model_insert_random(&ks, insert, SPAN)) {
			CHECK(0);
			break;
		}
		if (!--until_seal) {
			bool full = ks.nr_sets == BCH_KEYSET_MAX_SETS;

			CHECK(!bch_keyset_seal(&ks));
			partial += full && ks.nr_sets > 2;
			whole += full && ks.nr_sets == 2;
			seals++;
			/* Mostly short sets, as commits leave, some long. */
			until_seal = model_random() % 8 ?
				     1 + model_random() % 16 :
				     1 + model_random() % 400;
		}
		bad += model_probe_wrong(&ks, lookup, SPAN);
		if (!(op & 2047) && !model_walk_agrees(&ks, lookup, SPAN)) {
			CHECK(!"keyset differs from the model");
			break;
		}
	}
	CHECK(bad == 0);
	CHECK(seals > 1000);
	fprintf(stderr, "  %u seals: %u merged the newest sets, %u all\n", seals, partial, whole);
	CHECK(partial > 100 && whole > 10);
	CHECK(model_walk_agrees(&ks, lookup, SPAN));
	CHECK(!bch_keyset_compact(&ks));
	CHECK(ks.nr_sets == 1 && model_walk_agrees(&ks, lookup, SPAN));
	bch_keyset_free(&ks);
}

UNIT_TEST(keyset_split_keeps_every_sector)
{
	struct bch_keyset ks, right;
	struct bch_key k, end;
	u64 inode, s, next;
	u32 op, bad = 0;

	model_reset();
	bch_keyset_init(&ks);
	for (op = 0; op < 20000; op++) {
		model_random_key(&k, SPAN);
		CHECK(!bch_keyset_insert(&ks, &k));
		if (!(op % 97))
			CHECK(!bch_keyset_seal(&ks));
	}
	CHECK(!bch_keyset_split(&ks, &right, &end));
	CHECK(ks.nr_sets == 1 && ks.set[0].e.nr > 0 && right.set[0].e.nr > 0);
	/* Every sector is answered by the half whose range holds it. */
	for (inode = 0; inode < MODEL_INODES; inode++) {
		for (s = 0; s < SPAN; s++) {
			bool in_left = bch_key_cmp_pos(&end, inode, s) > 0;
			const struct bch_key *got =
				bch_keyset_lookup(in_left ? &ks : &right,
						  inode, s, &next);

			bad += model_answer(got, s) != model[inode][s];
		}
	}
	CHECK(bad == 0);
	bch_keyset_free(&ks);
	bch_keyset_free(&right);
}

/* The keys a compaction would leave: every set merged, oldest first. */
static u32 merged_keys(const struct bch_keyset *ks)
{
	struct bch_extents all;
	u32 i, j, n;

	bch_extents_init(&all);
	for (i = 0; i < ks->nr_sets; i++)
		for (j = 0; j < ks->set[i].e.nr; j++)
			CHECK(!bch_extents_insert(&all, &ks->set[i].e.k[j]));
	n = all.nr;
	bch_extents_free(&all);
	return n;
}

/*
 * bch_keyset_count() against compaction, with sets sealed at random (so
 * newer sets mask, trim and split keys of older ones), across inodes and
 * with keysets emptied now and then.
 */
UNIT_TEST(keyset_count_matches_compaction)
{
	struct bch_keyset ks;
	struct bch_key k;
	u32 op, bad = 0, multi = 0;

	model_reset();
	bch_keyset_init(&ks);
	for (op = 0; op < 200000; op++) {
		model_random_key(&k, SPAN);
		CHECK(!bch_keyset_insert(&ks, &k));
		if (!(model_random() % 50))
			CHECK(!bch_keyset_seal(&ks));
		if (!(op % 97)) {
			bad += bch_keyset_count(&ks) != merged_keys(&ks);
			multi += ks.nr_sets > 1;
		}
		if (!(op % 20000))
			bch_keyset_free(&ks);
	}
	CHECK(bad == 0);
	CHECK(multi > 1000);
	bch_keyset_free(&ks);
	CHECK(bch_keyset_count(&ks) == 0);
}
