// SPDX-License-Identifier: GPL-2.0
/* Writing the journal; see journal_write.h. */
#include "journal/journal_write.h"

/* Blocks an entry of @u64s key words takes. */
static u32 entry_blocks(const struct bch_jwriter *w, size_t u64s)
{
	return DIV_ROUND_UP(sizeof(struct bch_jset_disk) + 8 * u64s,
			    (size_t)w->g->block_sectors * 512);
}

static u32 bucket_blocks(const struct bch_jwriter *w)
{
	return w->g->kg.bucket_size / w->g->block_sectors;
}

/* Move to the next bucket if it holds nothing the disk's journal needs. */
static int next_bucket(struct bch_jwriter *w)
{
	u32 next = (w->ring + 1) % w->sb->keys;

	if (w->bucket_max_seq[next] >= w->disk_last_seq)
		return -ENOSPC;
	w->ring = next;
	w->block = 0;
	return 0;
}

int bch_jwriter_open(struct bch_jwriter *w, const struct bch_meta_io *io,
		     const struct bch_sb *sb, const struct bch_geom *g,
		     const struct bch_jscan *s)
{
	u32 i, newest_ring = 0, newest_end = 0;

	memset(w, 0, sizeof(*w));
	if (!s->have_newest || !sb->keys)
		return -EINVAL;
	w->io = io;
	w->sb = sb;
	w->g = g;
	/*
	 * The one entry buffer, for the writer's life: a journal write, on
	 * which every write's completion waits, allocates nothing.
	 */
	w->buf_bytes = (size_t)g->block_sectors * 512 *
		       min_t(u32, bucket_blocks(w),
			     DIV_ROUND_UP(BCH_JSET_MAX_BYTES,
					  g->block_sectors * 512));
	w->bucket_max_seq = bch_zalloc(sb->keys * sizeof(u64));
	w->buf = bch_zalloc(w->buf_bytes);
	if (!w->bucket_max_seq || !w->buf) {
		bch_jwriter_close(w);
		return -ENOMEM;
	}
	for (i = 0; i < s->nr; i++) {
		const struct bch_jentry *e = &s->e[i];

		if (!e->valid)
			continue;
		if (e->seq > w->bucket_max_seq[e->ring])
			w->bucket_max_seq[e->ring] = e->seq;
		if (e->seq == s->newest_seq) {
			newest_ring = e->ring;
			newest_end = e->block + entry_blocks(w, e->u64s);
		}
	}
	w->head = s->newest;
	w->seq = s->newest_seq + 1;
	w->last_seq = le64_to_cpu(s->newest.last_seq);
	w->disk_last_seq = w->last_seq;
	w->ring = newest_ring;
	w->block = newest_end;
	if (w->block + entry_blocks(w, 0) > bucket_blocks(w) &&
	    next_bucket(w)) {
		bch_jwriter_close(w);
		return -ENOSPC;
	}
	return 0;
}

void bch_jwriter_close(struct bch_jwriter *w)
{
	bch_free(w->bucket_max_seq);
	w->bucket_max_seq = NULL;
	bch_free(w->buf);
	w->buf = NULL;
}

void bch_jwriter_set_root(struct bch_jwriter *w, const struct bch_key *root,
			  u32 level)
{
	memset(w->head.btree_root, 0, sizeof(w->head.btree_root));
	bch_key_encode(root, w->head.btree_root);
	w->head.btree_level = cpu_to_le16(level);
}

int bch_jwriter_write(struct bch_jwriter *w, const struct bch_key *keys,
		      u32 n)
{
	size_t block = (size_t)w->g->block_sectors * 512;
	u32 room_blocks, max_bytes, taken = 0, u64s = 0, blocks, i;
	struct bch_jset_disk *j;
	int r;

	/* Room for the header and the first key, else a new bucket. */
	if (w->block + entry_blocks(w, n ? bch_key_u64s(&keys[0]) : 0) >
	    bucket_blocks(w)) {
		r = next_bucket(w);
		if (r)
			return r;
	}
	room_blocks = bucket_blocks(w) - w->block;
	max_bytes = min_t(size_t, (size_t)room_blocks * block, w->buf_bytes);
	max_bytes = min_t(size_t, max_bytes, BCH_JSET_MAX_BYTES);
	while (taken < n && sizeof(*j) + 8 * (size_t)(u64s +
	       bch_key_u64s(&keys[taken])) <= max_bytes)
		u64s += bch_key_u64s(&keys[taken++]);
	if (!taken && n)
		return -ENOSPC;		/* a key larger than a bucket */

	blocks = entry_blocks(w, u64s);
	j = w->buf;
	memset(j, 0, (size_t)blocks * block);
	*j = w->head;
	j->magic = cpu_to_le64(w->g->jset_magic);
	j->seq = cpu_to_le64(w->seq);
	j->last_seq = cpu_to_le64(w->last_seq);
	j->keys = cpu_to_le32(u64s);
	for (u64s = 0, i = 0; i < taken; i++)
		u64s += bch_key_encode(&keys[i], j->d + u64s);
	j->csum = cpu_to_le64(bch_jset_csum(j));
	r = w->io->write(w->io->ctx,
			 bch_bucket_sector(w->g, w->sb->d[w->ring]) +
			 (u64)w->block * w->g->block_sectors,
			 j, (size_t)blocks * block);
	if (r)
		return r;
	w->bucket_max_seq[w->ring] = w->seq++;
	w->disk_last_seq = w->last_seq;
	w->block += blocks;
	return taken;
}
