// SPDX-License-Identifier: GPL-2.0
/*
 * Property test of the in-memory leaf key log (core/keyset.c) against the
 * per-sector model: a million random inserts with sets sealed at random
 * intervals (so lookups cross up to four sets and compactions happen),
 * a point lookup after each insert, and every 2048 inserts a walk of all
 * sectors by lookup and next-boundary, which must agree with the model.
 */
#include <stdlib.h>

#include "unit.h"
#include "keyset.h"
#include "extent_model.h"

static u64 answer(const struct bch_key *k, u64 sector)
{
	return k ? model_implied(k, sector) : 0;
}

static int walk_agrees(const struct bch_keyset *ks)
{
	u64 inode, s, t, next;

	for (inode = 0; inode < MODEL_INODES; inode++) {
		for (s = 0; s < MODEL_SECTORS; s = next) {
			const struct bch_key *k =
				bch_keyset_lookup(ks, inode, s, &next);

			if (next <= s)
				return 0;
			for (t = s; t < next && t < MODEL_SECTORS; t++)
				if (answer(k, t) != model[inode][t])
					return 0;
		}
	}
	return 1;
}

UNIT_TEST(keyset_random_against_model)
{
	struct bch_keyset ks;
	u32 op, bad = 0, seals = 0, until_seal = 100;

	model_reset();
	bch_keyset_init(&ks);
	for (op = 0; op < 1000000; op++) {
		struct bch_key k;
		u64 inode, probe, next;

		model_random_key(&k);
		if (bch_keyset_insert(&ks, &k)) {
			CHECK(0);
			break;
		}
		if (!--until_seal) {
			CHECK(!bch_keyset_seal(&ks));
			seals++;
			until_seal = 1 + model_random() % 400;
		}
		inode = model_random() % MODEL_INODES;
		probe = model_random() % MODEL_SECTORS;
		bad += answer(bch_keyset_lookup(&ks, inode, probe, &next),
			      probe) != model[inode][probe];
		if (!(op & 2047) && !walk_agrees(&ks)) {
			CHECK(!"keyset differs from the model");
			break;
		}
	}
	CHECK(bad == 0);
	CHECK(seals > 1000);
	CHECK(walk_agrees(&ks));
	CHECK(!bch_keyset_compact(&ks));
	CHECK(ks.nr_sets == 1 && walk_agrees(&ks));
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
		model_random_key(&k);
		CHECK(!bch_keyset_insert(&ks, &k));
		if (!(op % 97))
			CHECK(!bch_keyset_seal(&ks));
	}
	CHECK(!bch_keyset_split(&ks, &right, &end));
	CHECK(ks.nr_sets == 1 && ks.set[0].e.nr > 0 && right.set[0].e.nr > 0);
	/* Every sector is answered by the half whose range holds it. */
	for (inode = 0; inode < MODEL_INODES; inode++) {
		for (s = 0; s < MODEL_SECTORS; s++) {
			bool in_left = bch_key_cmp_pos(&end, inode, s) > 0;
			const struct bch_key *got =
				bch_keyset_lookup(in_left ? &ks : &right,
						  inode, s, &next);

			bad += answer(got, s) != model[inode][s];
		}
	}
	CHECK(bad == 0);
	bch_keyset_free(&ks);
	bch_keyset_free(&right);
}
