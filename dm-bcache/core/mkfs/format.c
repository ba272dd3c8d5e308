// SPDX-License-Identifier: GPL-2.0
/*
 * New superblocks and cache set initialisation; see format.h.
 *
 * Placement of a new set's metadata: the journal takes the buckets right
 * after first_bucket, as the driver requires; the prio chain, the UUID
 * table and the root follow in that order.  These buckets get generation 1
 * (the driver's allocator raises a bucket's gen when it hands it out) and
 * the btree priority; every other bucket starts at gen 0, prio 0.
 */
#include "mkfs/format.h"
#include "format/jset.h"
#include "alloc/prio_write.h"
#include "format/bset.h"
#include "format/uuid.h"

static bool pow2(u64 v)
{
	return v && !(v & (v - 1));
}

static const char *check_common(const struct bch_format_params *p)
{
	if (!pow2(p->block_size) || p->block_size > BCH_PAGE_SECTORS)
		return "block size must be a power of two from 1 to 8 sectors";
	if (!pow2(p->bucket_size) || p->bucket_size > BCH_FORMAT_MAX_BUCKET)
		return "bucket size must be a power of two of at most 32768 sectors";
	return NULL;
}

static void fill_common(const struct bch_format_params *p, struct bch_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
	memcpy(sb->uuid, p->uuid, sizeof(sb->uuid));
	memcpy(sb->set_uuid, p->set_uuid, sizeof(sb->set_uuid));
	memcpy(sb->label, p->label, sizeof(sb->label));
	sb->block_size = p->block_size;
	sb->bucket_size = p->bucket_size;
}

const char *bch_format_cache_sb(const struct bch_format_params *p,
				struct bch_sb *sb)
{
	const char *err = check_common(p);

	if (err)
		return err;
	if (p->bucket_size < BCH_PAGE_SECTORS)
		return "bucket size must be at least 8 sectors (a page)";
	if (p->bucket_size < p->block_size)
		return "bucket size must not be smaller than the block size";
	if (p->policy > BCH_REPLACEMENT_RANDOM)
		return "unknown cache replacement policy";
	if (bch_set_nbuckets_err(p->dev_sectors / p->bucket_size))
		return "device too small: a cache set needs at least 513 buckets";

	fill_common(p, sb);
	sb->kind = BCH_SB_KIND_CACHE;
	sb->version = BCH_SB_VERSION_CDEV;
	sb->nbuckets = p->dev_sectors / p->bucket_size;
	sb->nr_in_set = 1;
	sb->nr_this_dev = 0;
	/* make-bcache's rule: the first bucket clear of sectors 0-23. */
	sb->first_bucket = 23 / p->bucket_size + 1;
	sb->flags = ((u64)p->policy << BCH_CACHE_REPLACEMENT_SHIFT) |
		    (p->discard ? BCH_CACHE_DISCARD : 0);
	return NULL;
}

const char *bch_format_backing_sb(const struct bch_format_params *p,
				  struct bch_sb *sb)
{
	const char *err = check_common(p);

	if (err)
		return err;
	if (p->data_offset < BCH_BDEV_DATA_START)
		return "data offset must be at least 16 sectors";
	if (p->data_offset >= p->dev_sectors)
		return "data offset is beyond the end of the device";

	fill_common(p, sb);
	sb->kind = BCH_SB_KIND_BACKING;
	sb->data_offset = p->data_offset;
	sb->version = p->data_offset == BCH_BDEV_DATA_START ?
		      BCH_SB_VERSION_BDEV : BCH_SB_VERSION_BDEV_WITH_OFFSET;
	sb->flags = p->writeback ? 1 : 0;	/* BDEV_CACHE_MODE, state NONE */
	return NULL;
}

/* The buckets a new set's metadata occupies. */
struct set_layout {
	u64 prio_first;
	u64 uuid_bucket;
	u64 root_bucket;
	u64 end;		/* first bucket after the metadata */
};

static void plan_layout(const struct bch_geom *g, const struct bch_sb *sb,
			struct set_layout *l)
{
	l->prio_first = (u64)sb->first_bucket + sb->keys;
	l->uuid_bucket = l->prio_first + g->nr_prio_buckets;
	l->root_bucket = l->uuid_bucket + 1;
	l->end = l->root_bucket + 1;
}

/* Metadata buckets are at gen 1 with the btree priority, the rest at 0. */
static void format_entry(void *ctx, u64 bucket, struct bch_prio_entry *e)
{
	const struct set_layout *l = ctx;

	if (bucket >= l->prio_first && bucket < l->end)
		*e = (struct bch_prio_entry){ BCH_BTREE_PRIO, 1 };
}

static void meta_key(struct bch_key *k, const struct bch_key *pos, u32 size,
		     const struct bch_geom *g, u64 bucket, u8 gen)
{
	bch_key_init(k, bch_key_inode(pos), pos->low, size, false);
	bch_key_add_ptr(k, bch_make_ptr(g->nr_this_dev,
					bch_bucket_sector(g, bucket), gen));
}

static int write_root(const struct bch_meta_io *io, const struct bch_geom *g,
		      const struct bch_key *root, void *buf)
{
	struct bch_bset_disk *b = buf;
	size_t bytes = (size_t)g->btree_sectors * 512;

	memset(buf, 0, bytes);
	b->magic = cpu_to_le64(g->bset_magic);
	b->seq = cpu_to_le64(bch_random_u64() | 1);
	b->version = cpu_to_le32(BCH_BSET_VERSION);
	b->csum = cpu_to_le64(bch_bset_csum(b, root->ptr[0]));
	return io->write(io->ctx, bch_ptr_offset(root->ptr[0]), buf, bytes);
}

static int write_journal(const struct bch_meta_io *io,
			 const struct bch_geom *g, const struct bch_sb *sb,
			 const struct bch_set_base *base,
			 const struct bch_key *uuid, const struct bch_key *root,
			 void *buf)
{
	struct bch_jset_disk *j = buf;
	size_t block = (size_t)g->block_sectors * 512;
	size_t bytes = DIV_ROUND_UP(sizeof(*j), block) * block;
	unsigned int i;

	/* Stop a reader at block 0 of every journal bucket but the first. */
	memset(buf, 0, bytes + block);
	for (i = 1; i < sb->keys; i++)
		if (io->write(io->ctx, bch_bucket_sector(g, sb->d[i]), buf,
			      block))
			return -EIO;

	j->magic = cpu_to_le64(g->jset_magic);
	j->seq = cpu_to_le64(base->seq);
	j->last_seq = cpu_to_le64(base->seq);
	j->version = cpu_to_le32(base->jset_version);
	bch_key_encode(uuid, j->uuid_bucket);
	bch_key_encode(root, j->btree_root);
	j->btree_level = 0;
	j->prio_bucket[g->nr_this_dev] = cpu_to_le64(base->prio_chain[0]);
	j->csum = cpu_to_le64(bch_jset_csum(j));
	/* The entry, then a zero block, if it fits, so nothing follows. */
	if (bytes + block <= (size_t)g->kg.bucket_size * 512)
		bytes += block;
	return io->write(io->ctx, bch_bucket_sector(g, sb->d[0]), buf, bytes);
}

int bch_format_set_base(const struct bch_meta_io *io, const struct bch_sb *sb,
			const struct bch_set_base *base)
{
	struct bch_key uuid, root;
	struct bch_geom g;
	size_t buf_bytes;
	void *buf;
	int r;

	bch_geom_init(&g, sb);
	buf_bytes = max_t(size_t, g.meta_bucket_bytes,
			  (size_t)g.btree_sectors * 512);
	buf_bytes = max_t(size_t, buf_bytes, 2 * BCH_JSET_MAX_BYTES);
	buf = bch_zalloc(buf_bytes);
	if (!buf)
		return -ENOMEM;

	meta_key(&uuid, &bch_zero_key, g.meta_bucket_bytes / 512, &g,
		 base->uuid_bucket, base->uuid_gen);
	meta_key(&root, &bch_max_key, g.btree_sectors, &g, base->root_bucket,
		 base->root_gen);

	r = bch_prio_write(io, &g, base->prio_chain, base->prio_seq,
			   base->entry, base->entry_ctx, buf);
	if (!r) {
		memset(buf, 0, g.meta_bucket_bytes);
		if (base->uuids)
			memcpy(buf, base->uuids, g.meta_bucket_bytes);
		r = io->write(io->ctx, bch_bucket_sector(&g, base->uuid_bucket),
			      buf, g.meta_bucket_bytes);
	}
	if (!r)
		r = write_root(io, &g, &root, buf);
	if (!r)
		r = write_journal(io, &g, sb, base, &uuid, &root, buf);
	if (!r && io->flush)
		r = io->flush(io->ctx);
	bch_free(buf);
	return r;
}

int bch_format_cache_set(const struct bch_meta_io *io, struct bch_sb *sb)
{
	struct bch_set_base base = {
		.seq = 1, .prio_seq = 1, .jset_version = BCH_JSET_VERSION,
		.uuid_gen = 1, .root_gen = 1, .entry = format_entry,
	};
	struct set_layout l;
	struct bch_geom g;
	u64 *chain;
	unsigned int i;
	int r;

	sb->keys = clamp_t(u64, sb->nbuckets / 128, 2, BCH_SB_JOURNAL_MAX);
	for (i = 0; i < sb->keys; i++)
		sb->d[i] = (u64)sb->first_bucket + i;
	bch_geom_init(&g, sb);
	plan_layout(&g, sb, &l);
	if (l.end > sb->nbuckets)
		return -ENOSPC;
	chain = bch_zalloc(g.nr_prio_buckets * sizeof(*chain));
	if (!chain)
		return -ENOMEM;
	for (i = 0; i < g.nr_prio_buckets; i++)
		chain[i] = l.prio_first + i;
	base.prio_chain = chain;
	base.uuid_bucket = l.uuid_bucket;
	base.root_bucket = l.root_bucket;
	base.entry_ctx = &l;
	r = bch_format_set_base(io, sb, &base);
	bch_free(chain);
	if (r)
		return r;

	sb->flags |= BCH_CACHE_SYNC;
	if (sb->version < BCH_SB_VERSION_CDEV_WITH_UUID)
		sb->version = BCH_SB_VERSION_CDEV_WITH_UUID;
	sb->seq++;
	sb->last_mount = bch_now_seconds();
	r = bch_sb_write(io, sb);
	if (!r && io->flush)
		r = io->flush(io->ctx);
	return r;
}
