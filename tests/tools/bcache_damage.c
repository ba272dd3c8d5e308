// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_damage: the damage generator for the checker's tests.  Applies
 * one class of damage to a cache image (always a copy: it writes in
 * place) and says what it did.  It finds the structures with the core's
 * own walker, and where a class needs metadata that still verifies (a bad
 * seq, a stale gen, overlapping keys) it recomputes the checksums with the
 * core's functions, so only the intended inconsistency remains.
 *
 *   bcache_damage CLASS IMAGE      (bcache_damage --list for the classes)
 *   bcache_damage needs-check IMAGE  sets the flag a failed table leaves:
 *                                    not damage, so not a class
 *
 * Exit codes: 0 damaged, 1 the image lacks what the class needs, 2 error.
 */
#include <unistd.h>

#include "util/crc64.h"
#include "check/check.h"
#include "devio.h"

#define PROG "bcache_damage"

struct found {
	struct bch_sb sb;
	struct bch_geom g;
	bool have_jset;
	u64 jset_sector;	/* newest valid journal entry */
	u32 jset_ring;		/* its bucket's index in the journal */
	u64 jset_seq;
	u32 jset_bytes;
	struct bch_key root;	/* as the newest entry names it */
	u64 prio_bucket[64];	/* the chain, in order */
	u64 prio_first[64];
	u32 nr_prio;
	bool have_leaf;
	struct bch_key leaf;	/* the first leaf node's key */
	u32 leaf_written, leaf_blocks;
	u64 leaf_seq;
	bool in_leaf;
	bool have_jgen;
	u8 jgen;		/* the first journal bucket's gen */
};

static void on_sb(void *ctx, const struct bch_sb *sb)
{
	struct found *f = ctx;

	f->sb = *sb;
	if (sb->kind == BCH_SB_KIND_CACHE)
		bch_geom_init(&f->g, sb);
}

static void on_jset(void *ctx, const struct bch_jset_disk *j, u32 ring,
		    u64 bucket, u32 block, bool in_replay)
{
	struct found *f = ctx;

	if (in_replay || (f->have_jset && le64_to_cpu(j->seq) <= f->jset_seq))
		return;
	f->have_jset = true;
	f->jset_seq = le64_to_cpu(j->seq);
	f->jset_sector = bch_bucket_sector(&f->g, bucket) +
			 (u64)block * f->g.block_sectors;
	f->jset_bytes = bch_jset_bytes(j);
	f->jset_ring = ring;
	bch_key_decode(j->btree_root, BCH_BKEY_PAD_U64S, &f->root);
}

static void on_prio(void *ctx, u64 bucket, u64 first, u32 count,
		    const struct bch_prio_set_disk *p)
{
	struct found *f = ctx;
	struct bch_prio_entry e;

	if (f->sb.keys && f->sb.d[0] >= first && f->sb.d[0] < first + count) {
		bch_prio_get(p, f->sb.d[0] - first, &e);
		f->have_jgen = true;
		f->jgen = e.gen;
	}
	if (f->nr_prio < ARRAY_SIZE(f->prio_bucket)) {
		f->prio_bucket[f->nr_prio] = bucket;
		f->prio_first[f->nr_prio++] = first;
	}
}

static void on_node(void *ctx, const struct bch_key *k, u32 level)
{
	struct found *f = ctx;

	f->in_leaf = !level && !f->have_leaf;
	if (f->in_leaf)
		f->leaf = *k;
}

static void on_node_end(void *ctx, const struct bch_node_info *info)
{
	struct found *f = ctx;

	if (!f->in_leaf)
		return;
	f->have_leaf = true;
	f->in_leaf = false;
	f->leaf_written = info->written;
	f->leaf_blocks = info->blocks;
	f->leaf_seq = info->seq;
}

static struct bch_dev dev;
static struct found f;

static int rd(u64 sector, void *buf, size_t len)
{
	return dev.io.read(dev.io.ctx, sector, buf, len);
}

static int wr(u64 sector, const void *buf, size_t len)
{
	return dev.io.write(dev.io.ctx, sector, buf, len);
}

/* Flip one bit of the byte at @byte from @sector. */
static int flip(u64 sector, u32 byte)
{
	u8 buf[512];
	u64 s = sector + byte / 512;

	if (rd(s, buf, 512))
		return 2;
	buf[byte % 512] ^= 0x10;
	return wr(s, buf, 512) ? 2 : 0;
}

static int need(bool have, const char *what)
{
	if (!have)
		fprintf(stderr, PROG ": the image has no %s\n", what);
	return have ? 0 : 1;
}

/* Rewrite the newest journal entry through @edit, checksum recomputed. */
static int edit_jset(void (*edit)(struct bch_jset_disk *j))
{
	size_t bytes = DIV_ROUND_UP(f.jset_bytes, 512) * 512;
	struct bch_jset_disk *j = calloc(1, bytes);
	int r = 2;

	if (j && !rd(f.jset_sector, j, bytes)) {
		edit(j);
		j->csum = cpu_to_le64(bch_jset_csum(j));
		r = wr(f.jset_sector, j, bytes) ? 2 : 0;
	}
	free(j);
	return r;
}

/* The newest entry's size, rounded up to whole blocks. */
static size_t jset_blocks_bytes(size_t bytes)
{
	size_t block = (size_t)f.g.block_sectors * 512;

	return DIV_ROUND_UP(bytes, block) * block;
}

static void jset_root_deep(struct bch_jset_disk *j)
{
	j->btree_level = cpu_to_le16(32);
}

/*
 * journal-key: an extent whose pointer lies past the device in the
 * newest entry (checksum recomputed).  The first key with a pointer gets
 * the bad one in place (same size); an entry without keys gets such an
 * extent appended, where its last block has room.
 */
static int jset_bad_key(void)
{
	size_t bytes = jset_blocks_bytes(f.jset_bytes);
	u64 far = bch_bucket_sector(&f.g, f.g.kg.nbuckets + 10);
	struct bch_jset_disk *j;
	struct bch_key k;
	u32 nr;
	int r = 2;

	if (need(f.have_jset, "journal entry"))
		return 1;
	j = calloc(1, bytes);
	if (!j || rd(f.jset_sector, j, bytes))
		goto out;
	nr = le32_to_cpu(j->keys);
	if (nr && bch_key_decode(j->d, nr, &k) && bch_key_ptrs(&k)) {
		k.ptr[0] = bch_make_ptr(bch_ptr_dev(k.ptr[0]), far,
					bch_ptr_gen(k.ptr[0]));
		bch_key_encode(&k, j->d);
	} else if (!nr && jset_blocks_bytes(f.jset_bytes +
					    BCH_KEY_MAX_U64S * 8) == bytes) {
		bch_key_init(&k, 0, 8, 8, true);
		bch_key_add_ptr(&k, bch_make_ptr(0, far, 0));
		j->keys = cpu_to_le32(bch_key_encode(&k, j->d));
	} else {
		r = need(false, "journal key with a pointer, or room for one");
		goto out;
	}
	j->csum = cpu_to_le64(bch_jset_csum(j));
	r = wr(f.jset_sector, j, bytes) ? 2 : 0;
out:
	free(j);
	return r;
}

/*
 * journal-entry: an entry inside the replay range fails its checksum,
 * and it is not the newest (which would be a torn tail).  A copy of the
 * newest entry starts the next journal bucket as seq + 1, replaying from
 * the old newest (last_seq), which then gets a flipped pad bit.  (The
 * next bucket, not the next block: a reader stops at the first bad entry
 * of a bucket, as the driver's does.)
 */
static int jset_damage_middle(void)
{
	size_t bytes = jset_blocks_bytes(f.jset_bytes);
	struct bch_jset_disk *j;
	u64 next;
	int r = 2;

	if (need(f.have_jset, "journal entry") ||
	    need(f.sb.keys > 1, "second journal bucket"))
		return 1;
	next = bch_bucket_sector(&f.g, f.sb.d[(f.jset_ring + 1) % f.sb.keys]);
	j = calloc(1, bytes);
	if (j && !rd(f.jset_sector, j, bytes)) {
		j->last_seq = j->seq;
		j->seq = cpu_to_le64(le64_to_cpu(j->seq) + 1);
		j->csum = cpu_to_le64(bch_jset_csum(j));
		r = wr(next, j, bytes) ? 2 : flip(f.jset_sector, 170);
	}
	free(j);
	return r;
}

static void jset_seq_jump(struct bch_jset_disk *j)
{
	j->seq = cpu_to_le64(le64_to_cpu(j->seq) + 5);
}

/* last_seq past the entry's own seq: where replay starts is unknown. */
static void jset_last_seq_past(struct bch_jset_disk *j)
{
	j->last_seq = cpu_to_le64(le64_to_cpu(j->seq) + 5);
}

static void jset_uuid_far(struct bch_jset_disk *j)
{
	struct bch_key k;

	bch_key_decode(j->uuid_bucket, BCH_BKEY_PAD_U64S, &k);
	k.ptr[0] = bch_make_ptr(0, bch_bucket_sector(&f.g, f.g.kg.nbuckets + 3),
				bch_ptr_gen(k.ptr[0]));
	bch_key_encode(&k, j->uuid_bucket);
}

/* Rewrite prio bucket @n of the chain through @edit, csum recomputed. */
static int edit_prio(u32 n, void (*edit)(struct bch_prio_set_disk *p, u32 n))
{
	u64 sector = bch_bucket_sector(&f.g, f.prio_bucket[n]);
	struct bch_prio_set_disk *p = calloc(1, f.g.meta_bucket_bytes);
	int r = 2;

	if (p && !rd(sector, p, f.g.meta_bucket_bytes)) {
		edit(p, n);
		p->csum = cpu_to_le64(bch_prio_csum(p, &f.g));
		r = wr(sector, p, f.g.meta_bucket_bytes) ? 2 : 0;
	}
	free(p);
	return r;
}

static void prio_magic(struct bch_prio_set_disk *p, u32 n)
{
	(void)n;
	p->magic ^= cpu_to_le64(1);
}

static u64 stale_bucket;

static void prio_bump_gen(struct bch_prio_set_disk *p, u32 n)
{
	struct bch_prio_entry e;
	u32 i = stale_bucket - f.prio_first[n];

	bch_prio_get(p, i, &e);
	e.gen++;
	bch_prio_put(p, i, &e);
}

static int stale_gen(void)
{
	u32 n;

	if (need(f.have_jset && f.nr_prio, "journal entry or prio chain"))
		return 1;
	/* The root's bucket: the root pointer becomes stale. */
	stale_bucket = bch_ptr_bucket(&f.g, f.root.ptr[0]);
	for (n = f.nr_prio; n-- > 0;)
		if (f.prio_first[n] <= stale_bucket)
			break;
	return edit_prio(n, prio_bump_gen);
}

/* Rewrite the first leaf's first bset through @edit, csum recomputed. */
static int edit_node(void (*edit)(struct bch_bset_disk *b))
{
	size_t bytes = (size_t)f.g.btree_sectors * 512;
	u64 sector = bch_ptr_offset(f.leaf.ptr[0]);
	struct bch_bset_disk *b = calloc(1, bytes);
	int r = 2;

	if (b && !rd(sector, b, bytes)) {
		edit(b);
		b->csum = cpu_to_le64(bch_bset_csum(b, f.leaf.ptr[0]));
		r = wr(sector, b, bytes) ? 2 : 0;
	}
	free(b);
	return r;
}

static void node_magic(struct bch_bset_disk *b)
{
	b->magic ^= cpu_to_le64(1);
}

/*
 * Append a bset with @nr crafted extents to the first leaf, as the driver
 * would append one: same seq, set magic, pointer-seeded checksum.
 */
static int append_keys(const struct bch_key *keys, unsigned int nr)
{
	size_t block = (size_t)f.g.block_sectors * 512;
	size_t bytes = DIV_ROUND_UP(sizeof(struct bch_bset_disk) +
				    nr * BCH_KEY_MAX_U64S * 8, block) * block;
	struct bch_bset_disk *b;
	unsigned int i, at = 0;
	int r;

	if (need(f.have_leaf, "btree leaf"))
		return 1;
	if (f.leaf_written + bytes / block > f.leaf_blocks) {
		fprintf(stderr, PROG ": the first leaf is full\n");
		return 1;
	}
	b = calloc(1, bytes);
	if (!b)
		return 2;
	b->magic = cpu_to_le64(f.g.bset_magic);
	b->seq = cpu_to_le64(f.leaf_seq);
	b->version = cpu_to_le32(1);
	for (i = 0; i < nr; i++)
		at += bch_key_encode(&keys[i], b->d + at);
	b->keys = cpu_to_le32(at);
	b->csum = cpu_to_le64(bch_bset_csum(b, f.leaf.ptr[0]));
	r = wr(bch_ptr_offset(f.leaf.ptr[0]) +
	       (u64)f.leaf_written * f.g.block_sectors, b, bytes) ? 2 : 0;
	free(b);
	return r;
}

/* An extent of @len sectors ending at @end, data in bucket @bucket. */
static void extent(struct bch_key *k, u64 end, u32 len, u64 bucket, u32 off)
{
	bch_key_init(k, 0, end, len, false);
	bch_key_add_ptr(k, bch_make_ptr(0, bch_bucket_sector(&f.g, bucket) +
					off, 0));
}

static int keys_case(const char *cls)
{
	u64 last = f.g.kg.nbuckets - 1;
	struct bch_key k[2];

	if (!strcmp(cls, "key-journal-bucket")) {
		/* Live data in the first journal bucket: its gen, not stale. */
		if (need(f.have_jgen, "gen for the first journal bucket"))
			return 1;
		bch_key_init(&k[0], 0, 8, 8, false);
		bch_key_add_ptr(&k[0], bch_make_ptr(0, bch_bucket_sector(&f.g,
						f.sb.d[0]), f.jgen));
		return append_keys(k, 1);
	}
	if (!strcmp(cls, "key-range")) {
		extent(&k[0], 8, 8, f.g.kg.nbuckets + 10, 0);
		return append_keys(k, 1);
	}
	if (!strcmp(cls, "key-overlap")) {
		extent(&k[0], 8, 8, last, 0);
		extent(&k[1], 12, 8, last, 8);
		return append_keys(k, 2);
	}
	extent(&k[0], 16, 8, last, 0);		/* key-order */
	extent(&k[1], 8, 8, last, 8);
	return append_keys(k, 2);
}

/* Every journal bucket zeroed whole: the journal is lost. */
static int journal_zero(void)
{
	size_t bytes = (size_t)f.sb.bucket_size * 512;
	void *zero = calloc(1, bytes);
	u32 i;
	int r = 0;

	if (!zero)
		return 2;
	for (i = 0; i < f.sb.keys && !r; i++)
		r = wr(bch_bucket_sector(&f.g, f.sb.d[i]), zero, bytes) ? 2 : 0;
	free(zero);
	return r;
}

static const char * const classes[] = {
	"sb-bitflip", "sb-magic", "sb-csum", "truncate", "journal-csum",
	"journal-zero",
	"journal-seq", "journal-last-seq", "journal-entry", "journal-key",
	"root-level",
	"uuid-ptr", "prio-csum", "prio-magic", "node-bitflip",
	"node-magic", "node-zero", "root-zero", "key-range", "key-overlap", "key-order",
	"key-journal-bucket",
	"stale-gen",
};

static int damage(const char *cls)
{
	static u8 zero[512];

	if (!strcmp(cls, "sb-bitflip"))
		return flip(BCH_SB_SECTOR, 72);		/* label: csum covers it */
	if (!strcmp(cls, "sb-magic"))
		return flip(BCH_SB_SECTOR, 24);
	if (!strcmp(cls, "sb-csum"))
		return flip(BCH_SB_SECTOR, 0);
	if (!strcmp(cls, "truncate"))
		return ftruncate(dev.fd, dev.sectors * 512 / 2) ? 2 : 0;
	if (!f.sb.nbuckets || !(f.sb.flags & BCH_CACHE_SYNC))
		return need(false, "cache set metadata (not synchronous)");
	if (!strcmp(cls, "needs-check")) {
		struct bch_sb sb = f.sb;

		sb.flags |= BCH_CACHE_NEEDS_CHECK;
		return bch_sb_write(&dev.io, &sb) ? 2 : 0;
	}
	if (!strcmp(cls, "journal-csum"))
		return need(f.have_jset, "journal entry") ?:
		       flip(f.jset_sector, 170);	/* pad: csum only */
	if (!strcmp(cls, "journal-zero"))
		return need(f.have_jset, "journal entry") ?: journal_zero();
	if (!strcmp(cls, "journal-seq"))
		return need(f.have_jset, "journal entry") ?:
		       edit_jset(jset_seq_jump);
	if (!strcmp(cls, "journal-last-seq"))
		return need(f.have_jset, "journal entry") ?:
		       edit_jset(jset_last_seq_past);
	if (!strcmp(cls, "journal-entry"))
		return jset_damage_middle();
	if (!strcmp(cls, "journal-key"))
		return jset_bad_key();
	if (!strcmp(cls, "root-level"))
		return need(f.have_jset, "journal entry") ?:
		       edit_jset(jset_root_deep);
	if (!strcmp(cls, "uuid-ptr"))
		return need(f.have_jset, "journal entry") ?:
		       edit_jset(jset_uuid_far);
	if (!strcmp(cls, "prio-csum"))
		return need(f.nr_prio, "prio chain") ?:
		       flip(bch_bucket_sector(&f.g, f.prio_bucket[0]), 41);
	if (!strcmp(cls, "prio-magic"))
		return need(f.nr_prio, "prio chain") ?: edit_prio(0, prio_magic);
	if (!strcmp(cls, "node-bitflip"))
		return need(f.have_leaf, "btree leaf") ?:
		       flip(bch_ptr_offset(f.leaf.ptr[0]), 20);
	if (!strcmp(cls, "node-magic"))
		return need(f.have_leaf, "btree leaf") ?: edit_node(node_magic);
	if (!strcmp(cls, "node-zero"))
		return need(f.have_leaf, "btree leaf") ?:
		       (wr(bch_ptr_offset(f.leaf.ptr[0]), zero, 512) ? 2 : 0);
	if (!strcmp(cls, "root-zero"))
		return need(f.have_jset, "journal entry") ?:
		       (wr(bch_ptr_offset(f.root.ptr[0]), zero, 512) ? 2 : 0);
	if (!strncmp(cls, "key-", 4))
		return keys_case(cls);
	if (!strcmp(cls, "stale-gen"))
		return stale_gen();
	fprintf(stderr, PROG ": unknown class '%s'\n", cls);
	return 2;
}

int main(int argc, char **argv)
{
	struct bch_check_ops ops = {
		.ctx = &f, .sb = on_sb, .jset = on_jset, .prio = on_prio,
		.node = on_node, .node_end = on_node_end,
	};
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	unsigned int i;
	int r;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < ARRAY_SIZE(classes); i++)
			printf("%s\n", classes[i]);
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: " PROG " CLASS IMAGE | --list\n");
		return 2;
	}
	bch_crc64_init();
	if (bch_dev_open(&dev, argv[2], BCH_OPEN_WRITE))
		return 2;
	if (bch_check(&dev.io, &o, &ops, &res)) {
		fprintf(stderr, PROG ": %s: cannot read the metadata\n", argv[2]);
		return 2;
	}
	if (res.nr_damage) {
		fprintf(stderr, PROG ": %s: already damaged\n", argv[2]);
		return 2;
	}
	r = damage(argv[1]);
	if (!r && fsync(dev.fd))
		r = 2;
	bch_dev_close(&dev);
	if (!r)
		printf("%s: applied %s\n", argv[2], argv[1]);
	return r;
}
