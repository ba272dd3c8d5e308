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

void model_random_key(struct bch_key *k)
{
	u64 inode = model_random() % MODEL_INODES;
	u32 size = 1 + model_random() % (model_random() % 8 ? 32 : 300);
	u64 start = model_random() % (MODEL_SECTORS - size), s;

	bch_key_init(k, inode, start + size, size, model_random() & 1);
	if (model_random() % 5)
		bch_key_add_ptr(k, bch_make_ptr(0, model_random() % (1ULL << 30),
						model_random() & 0xff));
	for (s = start; s < start + size; s++)
		model[inode][s] = model_implied(k, s);
}
