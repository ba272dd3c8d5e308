/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reference model for the extent property tests: for each sector of a
 * few inodes, the pointer word the newest extent implies for it (or HOLE
 * for a key without pointers, 0 for nothing), and a fixed random stream.
 */
#ifndef DM_BCACHE_EXTENT_MODEL_H
#define DM_BCACHE_EXTENT_MODEL_H

#include "bkey.h"

#define MODEL_INODES	4
#define MODEL_SECTORS	2048
#define MODEL_HOLE	(~0ULL)

extern u64 model[MODEL_INODES][MODEL_SECTORS];

void model_reset(void);
u64 model_random(void);
/* The pointer word @k implies for @sector, or MODEL_HOLE. */
u64 model_implied(const struct bch_key *k, u64 sector);
/* A random extent or hole, recorded in the model as the newest. */
void model_random_key(struct bch_key *k);

#endif
