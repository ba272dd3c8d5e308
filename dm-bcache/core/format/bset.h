/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Btree nodes on disk: a log of bsets, each a 32-byte header and sorted
 * keys, starting on block boundaries from block 0 of the node's bucket.
 * All bsets of one node incarnation share a random seq; a version-1 bset's
 * checksum is seeded with the raw pointer word that addresses the node, so
 * a stale node left in a reused bucket fails verification.
 * ondisk-format section 5.
 */
#ifndef DM_BCACHE_CORE_BSET_H
#define DM_BCACHE_CORE_BSET_H

#include "format/geometry.h"

#define BCH_BSET_VERSION	1	/* pointer-seeded checksum */

struct bch_bset_disk {
	__le64	csum;
	__le64	magic;
	__le64	seq;
	__le32	version;
	__le32	keys;			/* u64 words of keys */
	__le64	d[];
};

static inline size_t bch_bset_bytes(const struct bch_bset_disk *b)
{
	return sizeof(*b) + 8 * (size_t)le32_to_cpu(b->keys);
}

/* Blocks a bset occupies: its bytes rounded up to whole blocks. */
static inline u32 bch_bset_blocks(const struct bch_bset_disk *b,
				  const struct bch_geom *g)
{
	size_t block_bytes = (size_t)g->block_sectors * 512;

	return DIV_ROUND_UP(bch_bset_bytes(b), block_bytes);
}

/* The checksum for the bset's own version, for a node at @node_ptr. */
u64 bch_bset_csum(const struct bch_bset_disk *b, u64 node_ptr);

/* Where parsing a node stopped, and why. */
struct bch_node_info {
	u64 seq;
	u32 blocks;		/* node size in blocks */
	u32 written;		/* blocks holding this node's bsets */
	u32 nr_bsets;
	u32 bad_block;		/* where the reason below applies */
	const char *err;
};

/* Called for each valid bset of a node, in order; non-zero stops. */
typedef int (*bch_bset_fn)(void *ctx, const struct bch_bset_disk *b,
			   u32 block, u32 index);

/*
 * Parse the node image @node of @node_sectors sectors, addressed by the
 * pointer word @node_ptr, the way the driver reads a node: the first
 * bset's seq must be non-zero; bsets carrying that seq follow each other
 * on block boundaries and each must have a known version, fit in the
 * node, carry the set's magic and the right checksum, and (after the
 * first) hold keys; no later block boundary may start a header with the
 * same seq.  Calls @fn for each valid bset.  Returns info->err, NULL when
 * the node is sound.  Keys themselves are not examined here.
 */
const char *bch_node_parse(const void *node, u32 node_sectors, u64 node_ptr,
			   const struct bch_geom *g, struct bch_node_info *info,
			   bch_bset_fn fn, void *ctx);

#endif
