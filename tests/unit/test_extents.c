// SPDX-License-Identifier: GPL-2.0
/*
 * Property test of the extent run (core/extents.c) against the per-sector
 * model: two million random inserts of extents and holes over four
 * inodes, with a lookup after each and a full comparison every 4096.
 */
#include <stdlib.h>

#include "unit.h"
#include "extents.h"
#include "extent_model.h"

static int verify_all(const struct bch_extents *e)
{
	u64 inode, s;
	u32 i;

	for (i = 0; i < e->nr; i++) {
		const struct bch_key *k = &e->k[i];

		if (!bch_key_size(k) || bch_key_size(k) > k->low)
			return 0;
		if (i && bch_key_cmp_pos(&e->k[i - 1], bch_key_inode(k),
					 bch_key_start(k)) > 0)
			return 0;	/* unsorted or overlapping */
	}
	i = 0;
	for (inode = 0; inode < MODEL_INODES; inode++) {
		for (s = 0; s < MODEL_SECTORS; s++) {
			while (i < e->nr &&
			       bch_key_cmp_pos(&e->k[i], inode, s) <= 0)
				i++;
			if (i < e->nr && bch_key_inode(&e->k[i]) == inode &&
			    bch_key_start(&e->k[i]) <= s) {
				if (model_implied(&e->k[i], s) != model[inode][s])
					return 0;
			} else if (model[inode][s]) {
				return 0;
			}
		}
	}
	return 1;
}

UNIT_TEST(extents_random_against_model)
{
	struct bch_extents e;
	u32 op, bad_lookups = 0;

	model_reset();
	bch_extents_init(&e);
	for (op = 0; op < 2000000; op++) {
		struct bch_key k;
		u64 inode, probe;
		u32 i;

		model_random_key(&k);
		if (bch_extents_insert(&e, &k)) {
			CHECK(0);
			break;
		}
		inode = model_random() % MODEL_INODES;
		probe = model_random() % MODEL_SECTORS;
		i = bch_extents_seek(&e, inode, probe);
		if (i < e.nr && bch_key_inode(&e.k[i]) == inode &&
		    bch_key_start(&e.k[i]) <= probe)
			bad_lookups += model_implied(&e.k[i], probe) !=
				       model[inode][probe];
		else
			bad_lookups += model[inode][probe] != 0;
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
