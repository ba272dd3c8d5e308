// SPDX-License-Identifier: GPL-2.0
/*
 * In-node search, measured: how many instructions one lookup in a
 * sealed leaf set costs with the keyset's pivot index (core/btree/keyset.c),
 * against a plain binary search over the 72-byte keys (what the pivots
 * replace) and against an Eytzinger-ordered array of key ends (the
 * layout of the seeds' auxiliary search trees, without their compressed
 * 32-bit keys: it touches fewer bytes per level than ours, so it is the
 * stronger baseline).  run.sh runs each under callgrind, once with no
 * lookups and once with @lookups, and divides the difference.
 *
 *   bench_search <pivots|binary|eytzinger> <keys> <lookups>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btree/keyset.h"
#include "xorshift.h"

/* @n extents of 8 sectors with gaps, in inode 1, as one sealed set. */
static void fill(struct bch_keyset *ks, u32 n)
{
	struct bch_key k;
	u32 i;

	bch_keyset_init(ks);
	for (i = 0; i < n; i++) {
		bch_key_init(&k, 1, (u64)i * 16 + 8, 8, false);
		bch_key_add_ptr(&k, bch_make_ptr(0, (u64)i * 8, 0));
		if (bch_keyset_insert(ks, &k))
			exit(2);
	}
	if (bch_keyset_seal(ks))
		exit(2);
}

/* Eytzinger order of the key ends, and each slot's index in the set. */
static u64 *ey_end;
static u32 *ey_idx;

static u32 ey_build(const struct bch_extents *e, u32 at, u32 slot)
{
	if (slot > e->nr)
		return at;
	at = ey_build(e, at, 2 * slot);
	ey_end[slot] = e->k[at].low;
	ey_idx[slot] = at++;
	return ey_build(e, at, 2 * slot + 1);
}

/* First key ending after @sector (one inode, so ends compare alone). */
static const struct bch_key *ey_lookup(const struct bch_extents *e, u64 sector)
{
	u32 s = 1;

	while (s <= e->nr)
		s = 2 * s + (ey_end[s] <= sector);
	s >>= __builtin_ffs(~s);
	return s ? &e->k[ey_idx[s]] : NULL;
}

int main(int argc, char **argv)
{
	struct bch_keyset ks;
	const struct bch_extents *e;
	const struct bch_key *k;
	u64 sum = 0, next, sector;
	u32 n, lookups, i;

	if (argc != 4)
		return 2;
	n = strtoul(argv[2], NULL, 10);
	lookups = strtoul(argv[3], NULL, 10);
	fill(&ks, n);
	e = &ks.set[0].e;
	ey_end = calloc(n + 1, sizeof(*ey_end));
	ey_idx = calloc(n + 1, sizeof(*ey_idx));
	if (!ey_end || !ey_idx)
		return 2;
	ey_build(e, 0, 1);
	for (i = 0; i < lookups; i++) {
		sector = rnd() % ((u64)n * 16);
		if (!strcmp(argv[1], "pivots")) {
			k = bch_keyset_lookup(&ks, 1, sector, &next);
		} else if (!strcmp(argv[1], "binary")) {
			u32 at = bch_extents_seek(e, 1, sector);

			k = at < e->nr ? &e->k[at] : NULL;
		} else {
			k = ey_lookup(e, sector);
		}
		/* Same answer from every method: the key holding the sector. */
		if (k && bch_key_start(k) > sector)
			k = NULL;
		sum += k ? k->low : 0;
	}
	printf("%s %u %u %llu\n", argv[1], n, lookups, (unsigned long long)sum);
	bch_keyset_free(&ks);
	free(ey_end);
	free(ey_idx);
	return 0;
}
