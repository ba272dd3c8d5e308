/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing btree node images the way the driver does (ondisk-format 5.2):
 * a node is written whole as one sorted bset at block 0 with a fresh
 * random seq, and grows afterwards by appending bsets (same seq) at the
 * first free block.  Each bset carries the set's magic and a checksum
 * seeded with the pointer word that addresses the node.  Reading is
 * bset.c's bch_node_parse().
 */
#ifndef DM_BCACHE_CORE_NODE_IO_H
#define DM_BCACHE_CORE_NODE_IO_H

#include "format/bset.h"

/* A node being written: where it lives and how far it is filled. */
struct bch_node_out {
	struct bch_key key;	/* ptr[0] addresses the node */
	u64 seq;		/* shared by all its bsets */
	u32 written;		/* blocks holding bsets */
};

/* Blocks a bset with @u64s words of keys takes. */
u32 bch_bset_blocks_for(const struct bch_geom *g, u32 u64s);

/*
 * Write @n keys as a new node image at @out->key (one bset at block 0,
 * new seq).  -ENOSPC if they do not fit the node; 0 or -errno.
 */
int bch_node_write_new(const struct bch_meta_io *io, const struct bch_geom *g,
		       struct bch_node_out *out, const struct bch_key *keys,
		       u32 n);

/* Append @n (> 0) keys as the next bset of the node.  0 or -errno. */
int bch_node_append(const struct bch_meta_io *io, const struct bch_geom *g,
		    struct bch_node_out *out, const struct bch_key *keys,
		    u32 n);

#endif
