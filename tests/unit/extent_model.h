/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reference model for the extent property tests: for each sector of a
 * few inodes, the pointer word the newest extent implies for it (or HOLE
 * for a key without pointers, 0 for nothing), and a fixed random stream.
 */
#ifndef DM_BCACHE_EXTENT_MODEL_H
#define DM_BCACHE_EXTENT_MODEL_H

#include "format/bkey.h"

#define MODEL_INODES	4
#define MODEL_SECTORS	65536	/* the most any test uses */
#define MODEL_HOLE	(~0ULL)

extern u64 model[MODEL_INODES][MODEL_SECTORS];

void model_reset(void);
u64 model_random(void);
/* The pointer word @k implies for @sector, or MODEL_HOLE. */
u64 model_implied(const struct bch_key *k, u64 sector);
/*
 * A random extent or hole within the first @span sectors of an inode,
 * recorded in the model as the newest.
 */
void model_random_key(struct bch_key *k, u64 span);

/* Insert a random key (model_random_key) into @obj with @insert. */
int model_insert_random(void *obj,
			int (*insert)(void *obj, const struct bch_key *k),
			u64 span);

/* What the model says for @k at @sector: the implied word, or 0 for NULL. */
u64 model_answer(const struct bch_key *k, u64 sector);

/* A structure under test, looked up the way keyset and btree look up. */
typedef const struct bch_key *(*model_lookup_fn)(const void *obj, u64 inode,
						 u64 sector, u64 *next);

/*
 * Walk every sector below @span of every inode by lookup and next
 * boundary; 1 when every answer agrees with the model.
 */
int model_walk_agrees(const void *obj, model_lookup_fn lookup, u64 span);

/* One random point lookup below @span: 1 when it disagrees. */
int model_probe_wrong(const void *obj, model_lookup_fn lookup, u64 span);

#endif
