// SPDX-License-Identifier: GPL-2.0
/* Bset checksums and btree node parsing; see bset.h. */
#include "format/bset.h"
#include "util/crc64.h"

static_assert(sizeof(struct bch_bset_disk) == 32, "bset header size");
static_assert(offsetof(struct bch_bset_disk, seq) == 16, "bset seq");
static_assert(offsetof(struct bch_bset_disk, version) == 24, "bset ver");
static_assert(offsetof(struct bch_bset_disk, keys) == 28, "bset keys");

u64 bch_bset_csum(const struct bch_bset_disk *b, u64 node_ptr)
{
	u64 seed = le32_to_cpu(b->version) ? node_ptr : ~0ULL;

	return ~bch_crc64_update(seed, (const u8 *)b + 8,
				 bch_bset_bytes(b) - 8);
}

static const struct bch_bset_disk *bset_at(const void *node, u32 block,
					   const struct bch_geom *g)
{
	return (const void *)((const u8 *)node +
			      (size_t)block * g->block_sectors * 512);
}

static const char *fail(struct bch_node_info *info, u32 block,
			const char *err)
{
	info->bad_block = block;
	info->err = err;
	return err;
}

const char *bch_node_parse(const void *node, u32 node_sectors, u64 node_ptr,
			   const struct bch_geom *g, struct bch_node_info *info,
			   bch_bset_fn fn, void *ctx)
{
	const struct bch_bset_disk *b = node;
	u32 block;

	memset(info, 0, sizeof(*info));
	info->blocks = node_sectors / g->block_sectors;
	info->seq = le64_to_cpu(b->seq);
	if (!info->blocks || !info->seq)
		return fail(info, 0, "bad btree header");

	while (info->written < info->blocks) {
		u32 blocks;

		b = bset_at(node, info->written, g);
		if (le64_to_cpu(b->seq) != info->seq)
			break;
		if (le32_to_cpu(b->version) > BCH_BSET_VERSION)
			return fail(info, info->written,
				    "unsupported bset version");
		/* A keys count this large cannot fit; avoid overflow. */
		if (le32_to_cpu(b->keys) > (u32)node_sectors * 64)
			return fail(info, info->written, "bad btree header");
		blocks = bch_bset_blocks(b, g);
		if (info->written + blocks > info->blocks)
			return fail(info, info->written, "bad btree header");
		if (le64_to_cpu(b->magic) != g->bset_magic)
			return fail(info, info->written, "bad magic");
		if (le64_to_cpu(b->csum) != bch_bset_csum(b, node_ptr))
			return fail(info, info->written, "bad checksum");
		if (info->nr_bsets && !b->keys)
			return fail(info, info->written, "empty set");
		if (fn && fn(ctx, b, info->written, info->nr_bsets))
			return fail(info, info->written, "stopped");
		info->nr_bsets++;
		info->written += blocks;
	}

	for (block = info->written; block < info->blocks; block++)
		if (le64_to_cpu(bset_at(node, block, g)->seq) == info->seq)
			return fail(info, block, "corrupted btree");
	return NULL;
}
