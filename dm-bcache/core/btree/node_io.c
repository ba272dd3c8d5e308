// SPDX-License-Identifier: GPL-2.0
/* Writing btree node images; see node_io.h. */
#include "btree/node_io.h"

u32 bch_bset_blocks_for(const struct bch_geom *g, u32 u64s)
{
	return DIV_ROUND_UP(sizeof(struct bch_bset_disk) + 8 * (size_t)u64s,
			    (size_t)g->block_sectors * 512);
}

static u32 keys_u64s(const struct bch_key *keys, u32 n)
{
	u32 i, u64s = 0;

	for (i = 0; i < n; i++)
		u64s += bch_key_u64s(&keys[i]);
	return u64s;
}

/* Build one bset of @keys and write it at block @block of the node. */
static int write_bset(const struct bch_meta_io *io, const struct bch_geom *g,
		      const struct bch_node_out *out, u32 block,
		      const struct bch_key *keys, u32 n, u32 u64s)
{
	u32 blocks = bch_bset_blocks_for(g, u64s);
	size_t bytes = (size_t)blocks * g->block_sectors * 512;
	struct bch_bset_disk *b = bch_zalloc(bytes);
	u32 i, at = 0;
	int r;

	if (!b)
		return -ENOMEM;
	b->magic = cpu_to_le64(g->bset_magic);
	b->seq = cpu_to_le64(out->seq);
	b->version = cpu_to_le32(BCH_BSET_VERSION);
	for (i = 0; i < n; i++)
		at += bch_key_encode(&keys[i], b->d + at);
	b->keys = cpu_to_le32(at);
	b->csum = cpu_to_le64(bch_bset_csum(b, out->key.ptr[0]));
	r = io->write(io->ctx, bch_ptr_offset(out->key.ptr[0]) +
		      (u64)block * g->block_sectors, b, bytes);
	bch_free(b);
	return r;
}

/* Write @keys as a bset at block @at; -ENOSPC past the node's end. */
static int put_bset(const struct bch_meta_io *io, const struct bch_geom *g,
		    struct bch_node_out *out, u32 at, const struct bch_key *keys,
		    u32 n)
{
	u32 u64s = keys_u64s(keys, n);
	u32 blocks = bch_bset_blocks_for(g, u64s);
	int r;

	if (at + blocks > g->btree_sectors / g->block_sectors)
		return -ENOSPC;
	r = write_bset(io, g, out, at, keys, n, u64s);
	if (!r)
		out->written = at + blocks;
	return r;
}

int bch_node_write_new(const struct bch_meta_io *io, const struct bch_geom *g,
		       struct bch_node_out *out, const struct bch_key *keys,
		       u32 n)
{
	out->seq = bch_random_u64() | 1;
	return put_bset(io, g, out, 0, keys, n);
}

int bch_node_append(const struct bch_meta_io *io, const struct bch_geom *g,
		    struct bch_node_out *out, const struct bch_key *keys,
		    u32 n)
{
	if (!n)
		return -EINVAL;		/* the driver never appends empty sets */
	return put_bset(io, g, out, out->written, keys, n);
}
