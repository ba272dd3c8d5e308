// SPDX-License-Identifier: GPL-2.0
/* The reference model for the extent property tests; see extent_model.h. */
#include "extent_model.h"

u64 model[MODEL_INODES][MODEL_SECTORS];
static u64 rng;

void model_reset(void)
{
	memset(model, 0, sizeof(model));
	rng = 0x9e3779b97f4a7c15ULL;
}

u64 model_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

u64 model_implied(const struct bch_key *k, u64 sector)
{
	if (!bch_key_ptrs(k))
		return MODEL_HOLE;
	return bch_make_ptr(bch_ptr_dev(k->ptr[0]),
			    bch_ptr_offset(k->ptr[0]) + sector - bch_key_start(k),
			    bch_ptr_gen(k->ptr[0]));
}

void model_random_key(struct bch_key *k, u64 span)
{
	u64 inode = model_random() % MODEL_INODES;
	u32 size = 1 + model_random() % (model_random() % 8 ? 32 : 300);
	u64 start = model_random() % (span - size), s;

	bch_key_init(k, inode, start + size, size, model_random() & 1);
	if (model_random() % 5)
		bch_key_add_ptr(k, bch_make_ptr(0, model_random() % (1ULL << 30),
						model_random() & 0xff));
	for (s = start; s < start + size; s++)
		model[inode][s] = model_implied(k, s);
}

u64 model_answer(const struct bch_key *k, u64 sector)
{
	return k ? model_implied(k, sector) : 0;
}

int model_walk_agrees(const void *obj, model_lookup_fn lookup, u64 span)
{
	u64 inode, s, u, next;

	for (inode = 0; inode < MODEL_INODES; inode++) {
		for (s = 0; s < span; s = next) {
			const struct bch_key *k = lookup(obj, inode, s, &next);

			if (next <= s)
				return 0;
			for (u = s; u < next && u < span; u++)
				if (model_answer(k, u) != model[inode][u])
					return 0;
		}
	}
	return 1;
}

int model_probe_wrong(const void *obj, model_lookup_fn lookup, u64 span)
{
	u64 inode = model_random() % MODEL_INODES;
	u64 sector = model_random() % span, next;

	return model_answer(lookup(obj, inode, sector, &next), sector) !=
	       model[inode][sector];
}

int model_insert_random(void *obj,
			int (*insert)(void *obj, const struct bch_key *k),
			u64 span)
{
	struct bch_key k;

	model_random_key(&k, span);
	return insert(obj, &k);
}
