// SPDX-License-Identifier: GPL-2.0
/*
 * Writer against checker: a btree built in memory (btree.c) and written
 * node by node (node_io.c) onto a freshly formatted in-memory cache, with
 * a journal entry naming its root, is a cache that bch_check() finds
 * clean, with the node and key counts the tree has.  Then appending a
 * bset to a leaf keeps it clean, and an appended bset whose extent
 * crosses the leaf's key is caught.  Hostile trees (an interior node
 * without a live child, children shared between positions) are refused
 * and walked once; two live children at one position lose their range.
 */
#include <stdlib.h>

#include "unit.h"
#include "btree/btree.h"
#include "check/check.h"
#include "mkfs/format.h"
#include "journal/journal_read.h"
#include "btree/node_io.h"
#include "btree/btree_load.h"
#include "journal/journal_write.h"
#include "repair/salvage.h"
#include "alloc/prio_write.h"
#include "format/uuid.h"

#define BUCKETS		1024
#define BUCKET		128		/* sectors: 64 KiB nodes */
#define FIRST_DATA	512

struct image {
	u8 *data;
	struct bch_meta_io io;
	struct bch_sb sb;
	struct bch_geom g;
	u64 next_node_bucket;
	u64 rng;
};

static int img_read(void *ctx, u64 sector, void *buf, size_t len)
{
	struct image *im = ctx;

	if ((sector * 512 + len) > (u64)BUCKETS * BUCKET * 512)
		return -EIO;
	memcpy(buf, im->data + sector * 512, len);
	return 0;
}

static int img_write(void *ctx, u64 sector, const void *buf, size_t len)
{
	struct image *im = ctx;

	if ((sector * 512 + len) > (u64)BUCKETS * BUCKET * 512)
		return -EIO;
	memcpy(im->data + sector * 512, buf, len);
	return 0;
}

static u64 rnd(struct image *im)
{
	im->rng ^= im->rng << 13;
	im->rng ^= im->rng >> 7;
	im->rng ^= im->rng << 17;
	return im->rng;
}

/* Node buckets after the formatted metadata, gen 0 as the prios say. */
static int alloc_node(void *ctx, struct bch_key *key)
{
	struct image *im = ctx;

	if (im->next_node_bucket >= FIRST_DATA)
		return -ENOSPC;
	bch_key_add_ptr(key, bch_make_ptr(0, bch_bucket_sector(&im->g,
						im->next_node_bucket++), 0));
	return 0;
}

static void image_setup(struct image *im)
{
	struct bch_format_params p = { .dev_sectors = BUCKETS * BUCKET,
				       .block_size = 1, .bucket_size = BUCKET };

	memset(im, 0, sizeof(*im));
	im->data = calloc(BUCKETS * BUCKET, 512);
	im->io = (struct bch_meta_io){ .ctx = im, .sectors = p.dev_sectors,
				       .lbs = 512, .read = img_read,
				       .write = img_write };
	p.uuid[0] = p.set_uuid[0] = 7;
	CHECK(!bch_format_cache_sb(&p, &im->sb));
	CHECK(!bch_sb_write(&im->io, &im->sb));
	CHECK(!bch_format_cache_set(&im->io, &im->sb));
	bch_geom_init(&im->g, &im->sb);
	/* format.c's layout ends with the root; nodes go after it. */
	im->next_node_bucket = im->sb.first_bucket + im->sb.keys +
			       im->g.nr_prio_buckets + 2;
	im->rng = 0x2545f4914f6cdd1dULL;
}

/* A random extent or hole whose data lies in one data bucket. */
static void random_extent(struct image *im, struct bch_key *k)
{
	u32 size = 1 + rnd(im) % 32;
	u64 end = size + rnd(im) % (1 << 20);

	bch_key_init(k, rnd(im) % 4, end, size, rnd(im) & 1);
	if (rnd(im) % 10)
		bch_key_add_ptr(k, bch_make_ptr(0, bch_bucket_sector(&im->g,
				FIRST_DATA + rnd(im) % (BUCKETS - FIRST_DATA)) +
				rnd(im) % (BUCKET - size + 1), 0));
}

static u64 keys_written;

/* Write @n and everything below it; leaves whole, from their merged keys. */
static int write_tree(struct image *im, struct bch_bnode *n)
{
	struct bch_node_out out = { .key = n->key };
	struct bch_key *keys;
	u32 i, nr;
	int r;

	if (n->level) {
		keys = calloc(n->nr_child, sizeof(*keys));
		for (i = 0; i < n->nr_child; i++) {
			keys[i] = n->child[i]->key;
			r = write_tree(im, n->child[i]);
			if (r)
				return r;
		}
		nr = n->nr_child;
	} else {
		CHECK(!bch_keyset_compact(&n->ks));
		keys = n->ks.set[0].e.k;
		nr = n->ks.set[0].e.nr;
	}
	keys_written += nr;
	r = bch_node_write_new(&im->io, &im->g, &out, keys, nr);
	if (n->level)
		free(keys);
	return r;
}

/* A journal entry after the format's, naming @t's root. */
static void write_root_entry(struct image *im, const struct bch_btree *t)
{
	struct bch_jscan s;
	struct bch_jset_disk *j = calloc(1, 512);

	CHECK(!bch_jscan_run(&im->io, &im->sb, &im->g, &s, NULL, NULL));
	CHECK(s.have_newest && s.newest_seq == 1);
	memcpy(j, &s.newest, sizeof(*j));
	j->seq = j->last_seq = cpu_to_le64(2);
	memset(j->btree_root, 0, sizeof(j->btree_root));
	bch_key_encode(&t->root->key, j->btree_root);
	j->btree_level = cpu_to_le16(t->root->level);
	j->csum = cpu_to_le64(bch_jset_csum(j));
	CHECK(!img_write(im, bch_bucket_sector(&im->g, im->sb.d[0]) + 1, j, 512));
	bch_jscan_free(&s);
	free(j);
}

/* UUID slot 0 in use, in the table the newest journal entry names. */
static void use_slot0(struct image *im)
{
	struct bch_uuid_entry_disk *tbl = calloc(1, im->g.meta_bucket_bytes);
	struct bch_jscan s;
	struct bch_key uk;

	CHECK(!bch_jscan_run(&im->io, &im->sb, &im->g, &s, NULL, NULL));
	bch_key_decode(s.newest.uuid_bucket, BCH_BKEY_PAD_U64S, &uk);
	CHECK(!img_read(im, bch_ptr_offset(uk.ptr[0]), tbl,
			im->g.meta_bucket_bytes));
	memset(tbl[0].uuid, 0x5a, sizeof(tbl[0].uuid));
	tbl[0].first_reg = tbl[0].last_reg = cpu_to_le32(1);
	CHECK(!img_write(im, bch_ptr_offset(uk.ptr[0]), tbl,
			 im->g.meta_bucket_bytes));
	bch_jscan_free(&s);
	free(tbl);
}

static const struct bch_bnode *first_leaf(const struct bch_btree *t)
{
	const struct bch_bnode *n = t->root;

	while (n->level)
		n = n->child[0];
	return n;
}

UNIT_TEST(tree_image_checks_clean)
{
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_node_out out;
	struct bch_btree t;
	struct image im;
	struct bch_key k;
	u32 i;

	image_setup(&im);
	CHECK(!bch_btree_init(&t, 200, 16, im.g.btree_sectors, alloc_node,
			      &im));
	for (i = 0; i < 30000; i++) {
		random_extent(&im, &k);
		if (bch_btree_insert(&t, &k)) {
			CHECK(0);
			break;
		}
	}
	keys_written = 0;
	CHECK(!write_tree(&im, t.root));
	write_root_entry(&im, &t);

	CHECK(!bch_check(&im.io, &o, NULL, &res));
	CHECK(res.nr_damage == 0);
	CHECK(res.newest_seq == 2);
	CHECK(res.root_level == t.root->level && t.root->level >= 2);
	CHECK(res.btree_nodes == t.nr_nodes);
	CHECK(res.btree_keys == keys_written);
	CHECK(res.buckets_btree == t.nr_nodes);

	/* Append to the first leaf: an extent inside its range, then one
	 * crossing its key. */
	out.key = first_leaf(&t)->key;
	out.written = bch_bset_blocks_for(&im.g, 0);
	{
		const struct bch_bset_disk *b = (void *)(im.data +
			bch_ptr_offset(out.key.ptr[0]) * 512);
		u32 u64s = le32_to_cpu(b->keys);

		out.seq = le64_to_cpu(b->seq);
		out.written = bch_bset_blocks_for(&im.g, u64s);
	}
	bch_key_init(&k, 0, 4, 4, true);
	bch_key_add_ptr(&k, bch_make_ptr(0, bch_bucket_sector(&im.g,
							       FIRST_DATA), 0));
	CHECK(!bch_node_append(&im.io, &im.g, &out, &k, 1));
	CHECK(!bch_check(&im.io, &o, NULL, &res));
	CHECK(res.nr_damage == 0 && res.btree_keys == keys_written + 1);
	bch_key_init(&k, bch_key_inode(&out.key), out.key.low + 8, 16, false);
	CHECK(!bch_node_append(&im.io, &im.g, &out, &k, 1));
	CHECK(!bch_check(&im.io, &o, NULL, &res));
	CHECK(res.damage[BCH_DMG_KEY_BOUNDS] == 1);

	bch_btree_free(&t);
	free(im.data);
}

/* The word a key implies for @sector, with its dirty bit; 0 for a gap. */
static u64 at_sector(const struct bch_key *k, u64 sector)
{
	if (!k)
		return 0;
	if (!bch_key_ptrs(k))
		return 1;
	return (bch_ptr_offset(k->ptr[0]) + sector - bch_key_start(k)) << 1 |
	       bch_key_dirty(k);
}

/* Loading the written tree gives back every sector's key. */
UNIT_TEST(tree_image_loads_back)
{
	struct btree_pair { struct bch_btree mem, disk; } p;
	u8 *gens;
	struct image im;
	struct bch_key k;
	u64 inode, s, n1, n2, segments = 0;
	u32 i, bad = 0;

	image_setup(&im);
	CHECK(!bch_btree_init(&p.mem, 200, 16, im.g.btree_sectors, alloc_node,
			      &im));
	for (i = 0; i < 30000; i++) {
		random_extent(&im, &k);
		CHECK(!bch_btree_insert(&p.mem, &k));
	}
	CHECK(!write_tree(&im, p.mem.root));
	gens = calloc(BUCKETS, 1);	/* nodes and data: gen 0 */
	CHECK(!bch_btree_init(&p.disk, 200, 16, im.g.btree_sectors,
			      alloc_node, &im));
	CHECK(!bch_btree_load(&p.disk, &im.io, &im.g, &p.mem.root->key,
			      p.mem.root->level, gens));
	CHECK(p.disk.nr_nodes == p.mem.nr_nodes);
	CHECK(bch_btree_depth(&p.disk) == bch_btree_depth(&p.mem));
	for (inode = 0; inode < 4; inode++) {
		for (s = 0; s < (1 << 20) + 64; s = min(n1, n2)) {
			const struct bch_key *a = bch_btree_lookup(&p.mem, inode,
								   s, &n1);
			const struct bch_key *b = bch_btree_lookup(&p.disk, inode,
								   s, &n2);

			bad += at_sector(a, s) != at_sector(b, s);
			segments++;
		}
	}
	CHECK(bad == 0 && segments > 30000);
	/* A stale root (its bucket's gen moved on) is refused. */
	gens[bch_ptr_bucket(&im.g, p.mem.root->key.ptr[0])]++;
	CHECK(bch_btree_load(&p.disk, &im.io, &im.g, &p.mem.root->key,
			     p.mem.root->level, gens) == -ESTALE);
	bch_btree_free(&p.mem);
	bch_btree_free(&p.disk);
	free(gens);
	free(im.data);
}

/*
 * An interior root with no child the loader can take: no keys at all
 * (which the checker must report), or only a pointer into a bucket whose
 * gen has moved on.  The loader refuses both; a tree loaded without
 * children would send the first lookup through an empty child array.
 */
static void empty_interior(bool stale_child)
{
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_node_out out = { 0 };
	struct bch_bnode root = { .level = 1 };
	struct bch_btree t = { .root = &root }, disk;
	struct bch_node_out leaf = { 0 };
	struct image im;
	u8 *gens;

	image_setup(&im);
	bch_key_init(&root.key, BCH_KEY_MAX_INODE, BCH_KEY_MAX_OFFSET,
		     im.g.btree_sectors, false);
	CHECK(!alloc_node(&im, &root.key));
	out.key = root.key;
	if (stale_child) {
		bch_key_init(&leaf.key, BCH_KEY_MAX_INODE, BCH_KEY_MAX_OFFSET,
			     im.g.btree_sectors, false);
		CHECK(!alloc_node(&im, &leaf.key));
		CHECK(!bch_node_write_new(&im.io, &im.g, &leaf, NULL, 0));
	}
	CHECK(!bch_node_write_new(&im.io, &im.g, &out, &leaf.key,
				  stale_child ? 1 : 0));
	write_root_entry(&im, &t);

	if (!stale_child) {
		CHECK(!bch_check(&im.io, &o, NULL, &res));
		CHECK(res.damage[BCH_DMG_NODE] == 1);
	}
	gens = calloc(BUCKETS, 1);
	if (stale_child)
		gens[bch_ptr_bucket(&im.g, leaf.key.ptr[0])] = 1;
	CHECK(!bch_btree_init(&disk, 200, 16, im.g.btree_sectors, alloc_node,
			      &im));
	CHECK(bch_btree_load(&disk, &im.io, &im.g, &root.key, 1, gens) == -EIO);
	CHECK(!disk.root);
	bch_btree_free(&disk);
	free(gens);
	free(im.data);
}

UNIT_TEST(tree_image_empty_interior_refused)
{
	empty_interior(false);
}

UNIT_TEST(tree_image_interior_without_live_child_refused)
{
	empty_interior(true);
}

#define SHARED_KIDS 200

/* An interior node whose SHARED_KIDS pointers all address @child. */
static void write_shared(struct image *im, struct bch_node_out *out,
			 const struct bch_node_out *child)
{
	struct bch_key kids[SHARED_KIDS];
	u32 i;

	for (i = 0; i < SHARED_KIDS; i++) {
		if (i == SHARED_KIDS - 1)
			bch_key_init(&kids[i], BCH_KEY_MAX_INODE,
				     BCH_KEY_MAX_OFFSET, im->g.btree_sectors,
				     false);
		else
			bch_key_init(&kids[i], 0, (i + 1) * 8ULL,
				     im->g.btree_sectors, false);
		bch_key_add_ptr(&kids[i], child->key.ptr[0]);
	}
	bch_key_init(&out->key, BCH_KEY_MAX_INODE, BCH_KEY_MAX_OFFSET,
		     im->g.btree_sectors, false);
	CHECK(!alloc_node(im, &out->key));
	CHECK(!bch_node_write_new(&im->io, &im->g, out, kids, SHARED_KIDS));
}

/*
 * Hostile metadata: three levels where every pointer of an interior node
 * addresses the one node below.  The checker reports the shared buckets
 * and reads each node once, as the salvage does (the repeats are damage,
 * their ranges lost): the checker walking every reference read
 * SHARED_KIDS^2 leaves, and the target's constructor runs it.
 */
UNIT_TEST(tree_image_shared_children_walked_once)
{
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_node_out leaf = { 0 }, mid = { 0 }, top = { 0 };
	struct bch_bnode root = { .level = 2 };
	struct bch_btree t = { .root = &root };
	struct bch_salvage sv;
	struct image im;

	image_setup(&im);
	bch_key_init(&leaf.key, BCH_KEY_MAX_INODE, BCH_KEY_MAX_OFFSET,
		     im.g.btree_sectors, false);
	CHECK(!alloc_node(&im, &leaf.key));
	CHECK(!bch_node_write_new(&im.io, &im.g, &leaf, NULL, 0));
	write_shared(&im, &mid, &leaf);
	write_shared(&im, &top, &mid);
	root.key = top.key;
	write_root_entry(&im, &t);

	CHECK(!bch_check(&im.io, &o, NULL, &res));
	CHECK(res.btree_nodes == 3);
	CHECK(res.damage[BCH_DMG_BUCKET_CONFLICT] == 2);

	CHECK(!bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL));
	/*
	 * The salvage walks a child only inside the range its parent gives
	 * it, so of the one mid node's children just the first is walked;
	 * the top's other SHARED_KIDS - 1 pointers reach the mid node again.
	 */
	CHECK(sv.nodes == SHARED_KIDS + 2);
	CHECK(sv.nodes_damaged == SHARED_KIDS - 1);
	bch_salvage_free(&sv);
	free(im.data);
}

/*
 * An interior node with two live pointers at one position: which child
 * lookups used is unknown, so the salvage walks neither child and lists
 * the position's whole range as lost; the scan for orphaned nodes then
 * keeps both children's dirty data, which does not overlap.
 */
UNIT_TEST(tree_image_two_live_children_listed)
{
	struct bch_node_out leaf[2] = { 0 }, top = { 0 };
	struct bch_key kids[2], k;
	struct bch_salvage sv;
	struct image im;
	u32 i;

	image_setup(&im);
	for (i = 0; i < 2; i++) {
		bch_key_init(&leaf[i].key, BCH_KEY_MAX_INODE,
			     BCH_KEY_MAX_OFFSET, im.g.btree_sectors, false);
		CHECK(!alloc_node(&im, &leaf[i].key));
		bch_key_init(&k, 0, 64 * (i + 1), 8, true);
		bch_key_add_ptr(&k, bch_make_ptr(0, bch_bucket_sector(&im.g,
							FIRST_DATA + i), 0));
		CHECK(!bch_node_write_new(&im.io, &im.g, &leaf[i], &k, 1));
		kids[i] = leaf[i].key;
	}
	bch_key_init(&top.key, BCH_KEY_MAX_INODE, BCH_KEY_MAX_OFFSET,
		     im.g.btree_sectors, false);
	CHECK(!alloc_node(&im, &top.key));
	CHECK(!bch_node_write_new(&im.io, &im.g, &top, kids, 2));
	{
		struct bch_bnode root = { .level = 1, .key = top.key };
		struct bch_btree t = { .root = &root };

		write_root_entry(&im, &t);
	}
	use_slot0(&im);

	CHECK(!bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL));
	CHECK(sv.nodes == 1);
	/* Both children, and the empty root leaf the format wrote. */
	CHECK(sv.orphan_nodes == 3 && sv.orphan_keys == 2 && sv.nr_keys == 2);
	CHECK(sv.nr_lost == 1 && sv.lost[0].inode == 0 &&
	      sv.lost[0].start == 0 &&
	      sv.lost[0].end == BCH_LOST_TO_END &&
	      !strcmp(sv.lost[0].why, "two live btree children"));
	bch_salvage_free(&sv);
	free(im.data);
}

/* A dirty (or clean) extent of 8 sectors ending at @end, data in @bucket. */
static void extent8(struct image *im, struct bch_key *k, u64 end, u64 bucket,
		    bool dirty)
{
	bch_key_init(k, 0, end, 8, dirty);
	bch_key_add_ptr(k, bch_make_ptr(0, bch_bucket_sector(&im->g, bucket),
					0));
}

/* A leaf holding @keys, in a new node bucket. */
static void write_leaf(struct image *im, struct bch_node_out *out,
		       const struct bch_key *keys, u32 nr)
{
	bch_key_init(&out->key, BCH_KEY_MAX_INODE, BCH_KEY_MAX_OFFSET,
		     im->g.btree_sectors, false);
	CHECK(!alloc_node(im, &out->key));
	CHECK(!bch_node_write_new(&im->io, &im->g, out, keys, nr));
}

/*
 * The root node zeroed: everything is listed, and the scan finds the
 * leaf it held and two older leaves nothing points at.  Dirty data two
 * of them map the same way is kept; dirty data two of them map
 * differently is left out (which is newer is unknown), and so is clean
 * data (the origin has it, or something newer).
 */
UNIT_TEST(tree_image_orphans_keep_agreeing_dirty_data)
{
	static const u8 zero[512];
	struct bch_node_out a = { 0 }, b = { 0 }, c = { 0 }, top = { 0 };
	struct bch_key ka[2], kb[2], kc[1];
	struct bch_salvage sv;
	struct image im;

	image_setup(&im);
	extent8(&im, &ka[0], 8, FIRST_DATA, true);
	extent8(&im, &ka[1], 16, FIRST_DATA + 1, false);
	write_leaf(&im, &a, ka, 2);
	extent8(&im, &kb[0], 8, FIRST_DATA, true);	/* as a's */
	extent8(&im, &kb[1], 24, FIRST_DATA + 2, true);
	write_leaf(&im, &b, kb, 2);
	extent8(&im, &kc[0], 24, FIRST_DATA + 3, true);	/* not as b's */
	write_leaf(&im, &c, kc, 1);
	bch_key_init(&top.key, BCH_KEY_MAX_INODE, BCH_KEY_MAX_OFFSET,
		     im.g.btree_sectors, false);
	CHECK(!alloc_node(&im, &top.key));
	CHECK(!bch_node_write_new(&im.io, &im.g, &top, &a.key, 1));
	{
		struct bch_bnode root = { .level = 1, .key = top.key };
		struct bch_btree t = { .root = &root };

		write_root_entry(&im, &t);
	}
	use_slot0(&im);
	CHECK(!img_write(&im, bch_ptr_offset(top.key.ptr[0]), zero, 512));

	CHECK(!bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL));
	CHECK(sv.nodes_damaged == 1);
	CHECK(sv.nr_lost == 1 && sv.lost[0].end == BCH_LOST_TO_END);
	/* The three leaves, and the empty root leaf the format wrote. */
	CHECK(sv.orphan_nodes == 4 && sv.orphan_conflicts == 2);
	CHECK(sv.orphan_keys == 2 && sv.nr_keys == 2);
	CHECK(sv.keys[0].low == 8 && sv.keys[1].low == 8 &&
	      bch_key_dirty(&sv.keys[0]));
	bch_salvage_free(&sv);
	free(im.data);
}

/*
 * Three leaves as in the test above, the tree intact, and then the
 * journal zeroed: no entry names the root, the prio chain or the UUID
 * table.
 */
static void headless_image(struct image *im)
{
	struct bch_node_out a = { 0 }, b = { 0 }, c = { 0 }, top = { 0 };
	struct bch_key ka[2], kb[2], kc[1];
	u32 i;

	image_setup(im);
	extent8(im, &ka[0], 8, FIRST_DATA, true);
	extent8(im, &ka[1], 16, FIRST_DATA + 1, false);
	write_leaf(im, &a, ka, 2);
	extent8(im, &kb[0], 8, FIRST_DATA, true);
	extent8(im, &kb[1], 24, FIRST_DATA + 2, true);
	write_leaf(im, &b, kb, 2);
	extent8(im, &kc[0], 24, FIRST_DATA + 3, true);
	write_leaf(im, &c, kc, 1);
	bch_key_init(&top.key, BCH_KEY_MAX_INODE, BCH_KEY_MAX_OFFSET,
		     im->g.btree_sectors, false);
	CHECK(!alloc_node(im, &top.key));
	CHECK(!bch_node_write_new(&im->io, &im->g, &top, &a.key, 1));
	{
		struct bch_bnode root = { .level = 1, .key = top.key };
		struct bch_btree t = { .root = &root };

		write_root_entry(im, &t);
	}
	use_slot0(im);
	for (i = 0; i < im->sb.keys; i++)
		memset(im->data + bch_bucket_sector(&im->g, im->sb.d[i]) * 512,
		       0, BUCKET * 512);
}

/* Gen 1 for @bucket, 0 for the rest. */
static void bump_one(void *ctx, u64 bucket, struct bch_prio_entry *e)
{
	e->gen = bucket == *(u64 *)ctx;
}

/* A prio chain of @seq in the buckets from @at on. */
static void write_chain(struct image *im, u64 at, u64 seq, u64 bumped)
{
	u64 *chain = calloc(im->g.nr_prio_buckets, sizeof(*chain));
	void *buf = calloc(1, im->g.meta_bucket_bytes);
	u32 i;

	for (i = 0; i < im->g.nr_prio_buckets; i++)
		chain[i] = at + i;
	CHECK(!bch_prio_write(&im->io, &im->g, chain, seq, bump_one, &bumped,
			      buf));
	free(chain);
	free(buf);
}

/*
 * The journal zeroed: the format's prio chain (seq 1) and the table slot
 * 0 is in use in are found by scanning, all of slot 0 is listed, the root
 * counts as lost, and the scan for orphaned nodes keeps the dirty data
 * the leaves agree on (the interior node and the format's empty root
 * leaf are orphans too).  Nothing is replayed; the rebuilt set's prio
 * write must be newer than seq 1.
 */
UNIT_TEST(tree_image_journal_lost_scans_for_chain_and_table)
{
	struct bch_salvage sv;
	struct image im;

	headless_image(&im);
	CHECK(!bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL));
	CHECK(sv.journal_lost && sv.root_lost && !sv.uuids_lost);
	CHECK(sv.prio_seq == 1 && sv.newest_seq == 0);
	CHECK(sv.nr_lost == 1 && sv.lost[0].inode == 0 &&
	      sv.lost[0].start == 0 && sv.lost[0].end == BCH_LOST_TO_END &&
	      !strcmp(sv.lost[0].why, "journal lost"));
	CHECK(sv.orphan_nodes == 5 && sv.orphan_conflicts == 2);
	CHECK(sv.orphan_keys == 2 && sv.nr_keys == 2 && sv.tree_keys == 2);
	CHECK(sv.keys[0].low == 8 && bch_key_dirty(&sv.keys[0]));
	bch_salvage_free(&sv);
	free(im.data);
}

/*
 * A newer prio chain (seq 2) that raised the gen of the bucket the kept
 * dirty data lies in: that chain is the one taken, and the data, stale
 * by it, is not kept.  A second chain of seq 2 elsewhere: which of the
 * two is current is unknown, and nothing is usable.
 */
UNIT_TEST(tree_image_journal_lost_takes_the_newest_chain)
{
	u64 spare = FIRST_DATA + 10;
	struct bch_salvage sv;
	struct image im;

	headless_image(&im);
	write_chain(&im, spare, 2, FIRST_DATA);
	CHECK(!bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL));
	CHECK(sv.prio_seq == 2 && sv.gens[FIRST_DATA] == 1);
	CHECK(sv.orphan_keys == 0 && sv.nr_keys == 0 && sv.nr_lost == 1);
	bch_salvage_free(&sv);

	write_chain(&im, spare + im.g.nr_prio_buckets, 2, FIRST_DATA);
	CHECK(bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL) == -ENODATA);
	free(im.data);
}

/* UUID table @tbl written into @bucket, whole. */
static void put_table(struct image *im, u64 bucket,
		      const struct bch_uuid_entry_disk *tbl)
{
	CHECK(!img_write(im, bch_bucket_sector(&im->g, bucket), tbl,
			 im->g.meta_bucket_bytes));
}

/*
 * A second UUID table naming another origin in slot 0.  Stamped as the
 * one slot 0 was taken in: which is current is unknown, and with the
 * journal gone nothing else ties a key to an origin: nothing usable.
 * Agreeing on every slot's UUID, the label aside: one table.  Stamped
 * later (the first is an earlier set's, or a copy from before the
 * slot changed hands): the newer one is taken, whichever bucket comes
 * first.
 */
UNIT_TEST(tree_image_journal_lost_newest_table)
{
	struct bch_uuid_entry_disk *tbl, *got;
	struct bch_salvage sv;
	struct image im;

	headless_image(&im);
	tbl = calloc(1, im.g.meta_bucket_bytes);
	memset(tbl[0].uuid, 0x6b, sizeof(tbl[0].uuid));
	tbl[0].first_reg = cpu_to_le32(1);
	put_table(&im, FIRST_DATA + 20, tbl);
	CHECK(bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL) == -ENODATA);

	memset(tbl[0].uuid, 0x5a, sizeof(tbl[0].uuid));
	memcpy(tbl[0].label, "older", 5);
	put_table(&im, FIRST_DATA + 20, tbl);
	CHECK(!bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL));
	CHECK(!sv.uuids_lost && sv.orphan_keys == 2);
	bch_salvage_free(&sv);

	memset(tbl[0].uuid, 0x6b, sizeof(tbl[0].uuid));
	tbl[0].last_reg = cpu_to_le32(2);
	put_table(&im, FIRST_DATA + 20, tbl);
	CHECK(!bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL));
	got = sv.uuids;
	CHECK(!sv.uuids_lost && got[0].uuid[0] == 0x6b && got[0].uuid[15] == 0x6b);
	bch_salvage_free(&sv);

	/* Older tables after it, disagreeing with both: passed over. */
	memset(tbl[0].uuid, 0x6c, sizeof(tbl[0].uuid));
	tbl[0].last_reg = cpu_to_le32(1);
	put_table(&im, FIRST_DATA + 30, tbl);
	CHECK(!bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL));
	got = sv.uuids;
	CHECK(!sv.uuids_lost && got[0].uuid[0] == 0x6b);
	bch_salvage_free(&sv);
	free(tbl);
	free(im.data);
}

/*
 * Keys of a slot the UUID table has free: with the table the newest
 * entry names they are dead (a new origin given the slot must not find
 * them) and dropped unsaid.  With the journal lost, the table found may
 * be a copy from before the slot was taken: they are listed by slot.
 */
UNIT_TEST(tree_image_unslotted_keys)
{
	struct bch_node_out leaf = { 0 };
	struct bch_key k[2];
	struct bch_salvage sv;
	struct image im;
	u32 i;

	image_setup(&im);
	extent8(&im, &k[0], 8, FIRST_DATA, true);
	bch_key_init(&k[1], 1, 8, 8, true);
	bch_key_add_ptr(&k[1], bch_make_ptr(0, bch_bucket_sector(&im.g,
					     FIRST_DATA + 1), 0));
	write_leaf(&im, &leaf, k, 2);
	{
		struct bch_bnode root = { .level = 0, .key = leaf.key };
		struct bch_btree t = { .root = &root };

		write_root_entry(&im, &t);
	}
	use_slot0(&im);
	CHECK(!bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL));
	CHECK(sv.nr_keys == 1 && bch_key_inode(&sv.keys[0]) == 0);
	CHECK(sv.keys_unslotted == 1 && sv.nr_lost == 0);
	bch_salvage_free(&sv);

	for (i = 0; i < im.sb.keys; i++)
		memset(im.data + bch_bucket_sector(&im.g, im.sb.d[i]) * 512,
		       0, BUCKET * 512);
	CHECK(!bch_salvage_read(&sv, &im.io, &im.sb, NULL, NULL));
	CHECK(sv.journal_lost && sv.nr_keys == 1 && sv.keys_unslotted == 1);
	CHECK(sv.nr_lost == 2);
	CHECK(sv.lost[0].inode == 0 && !strcmp(sv.lost[0].why, "journal lost"));
	CHECK(sv.lost[1].inode == 1 && sv.lost[1].start == 0 &&
	      sv.lost[1].end == BCH_LOST_TO_END &&
	      !strcmp(sv.lost[1].why, "slot not in the UUID table used"));
	bch_salvage_free(&sv);
	free(im.data);
}

#define NKEYS 12000	/* most of the 8 journal buckets of 64 KiB */

/*
 * The journal writer: keys logged across several buckets read back in
 * order, the journal checks clean, and a ring whose every bucket holds
 * entries replay still needs refuses more.
 */
UNIT_TEST(journal_write_round_trip)
{
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_jwriter w;
	struct bch_jscan s;
	struct image im;
	struct bch_key *keys = calloc(NKEYS, sizeof(*keys));
	u32 i, at = 0, back = 0;
	int r = 0;

	image_setup(&im);
	for (i = 0; i < NKEYS; i++) {
		random_extent(&im, &keys[i]);
	}
	CHECK(!bch_jscan_run(&im.io, &im.sb, &im.g, &s, NULL, NULL));
	CHECK(!bch_jwriter_open(&w, &im.io, &im.sb, &im.g, &s));
	bch_jscan_free(&s);
	while (at < NKEYS && r >= 0) {
		r = bch_jwriter_write(&w, keys + at, NKEYS - at);
		if (r > 0)
			at += r;
	}
	CHECK(at == NKEYS);
	CHECK(w.ring > 1);			/* it crossed buckets */

	CHECK(!bch_jscan_run(&im.io, &im.sb, &im.g, &s, NULL, NULL));
	CHECK(s.newest_seq == w.seq - 1);
	bch_jscan_sort(&s);
	for (i = 0; i < s.nr; i++) {
		struct bch_jset_disk *j;
		u32 w64 = 0;

		CHECK(!bch_jscan_read(&im.io, &im.sb, &im.g, &s.e[i], &j));
		CHECK(s.e[i].valid && s.e[i].seq == i + 1);
		while (j && w64 < s.e[i].u64s) {
			struct bch_key k;

			w64 += bch_key_decode(j->d + w64, s.e[i].u64s - w64, &k);
			back += !memcmp(&k, &keys[back], sizeof(k));
		}
		free(j);
	}
	CHECK(back == NKEYS);
	bch_jscan_free(&s);
	CHECK(!bch_check(&im.io, &o, NULL, &res));
	CHECK(res.nr_damage == 0 && res.journal_keys == NKEYS);

	/* Nothing leaves the replay range, so the ring fills up. */
	while ((r = bch_jwriter_write(&w, keys, NKEYS)) > 0)
		;
	CHECK(r == -ENOSPC);
	CHECK(!bch_check(&im.io, &o, NULL, &res));
	CHECK(res.nr_damage == 0);
	bch_jwriter_close(&w);
	free(keys);
	free(im.data);
}

/* Counts the keys replay hands on; a key past the maximum fails. */
static int count_key(void *ctx, const struct bch_key *k)
{
	(*(u32 *)ctx)++;
	return bch_key_cmp(k, &bch_max_key) > 0 ? -EINVAL : 0;
}

/*
 * A key whose header claims more pointers than its entry has words left
 * (checksum recomputed): replay hands on the keys before it and counts
 * the entry as cut short, so the salvage can say its tail is lost.
 */
UNIT_TEST(journal_replay_counts_cut_short)
{
	struct bch_jwriter w;
	struct bch_jset_disk *j;
	struct bch_jscan s;
	struct bch_key keys[40];
	struct image im;
	u64 sector;
	u32 i, got = 0;

	image_setup(&im);
	for (i = 0; i < 40; i++) {
		bch_key_init(&keys[i], 0, 16 * (i + 1), 8, true);
		bch_key_add_ptr(&keys[i], bch_make_ptr(0, bch_bucket_sector(&im.g,
							FIRST_DATA) + 8 * i, 0));
	}
	CHECK(!bch_jscan_run(&im.io, &im.sb, &im.g, &s, NULL, NULL));
	CHECK(!bch_jwriter_open(&w, &im.io, &im.sb, &im.g, &s));
	bch_jscan_free(&s);
	CHECK(bch_jwriter_write(&w, keys, 40) == 40);
	bch_jwriter_close(&w);

	CHECK(!bch_jscan_run(&im.io, &im.sb, &im.g, &s, NULL, NULL));
	CHECK(!bch_jscan_replay(&im.io, &im.sb, &im.g, &s, count_key, &got));
	CHECK(got == 40 && s.cut_short == 0);
	bch_jscan_sort(&s);
	CHECK(s.nr && s.e[s.nr - 1].valid && s.e[s.nr - 1].u64s == 40 * 3);
	CHECK(!bch_jscan_read(&im.io, &im.sb, &im.g, &s.e[s.nr - 1], &j));
	/* Key 38's header: 7 pointers, where 6 words are left. */
	j->d[38 * 3] |= cpu_to_le64(7ULL << 60);
	j->csum = cpu_to_le64(bch_jset_csum(j));
	sector = bch_bucket_sector(&im.g, im.sb.d[s.e[s.nr - 1].ring]) +
		 (u64)s.e[s.nr - 1].block * im.g.block_sectors;
	CHECK(!img_write(&im, sector, j,
			 (sizeof(*j) + 40 * 3 * 8 + 511) / 512 * 512));
	free(j);
	bch_jscan_free(&s);

	got = 0;
	CHECK(!bch_jscan_run(&im.io, &im.sb, &im.g, &s, NULL, NULL));
	CHECK(!bch_jscan_replay(&im.io, &im.sb, &im.g, &s, count_key, &got));
	CHECK(got == 38 && s.cut_short == 1);
	bch_jscan_free(&s);
	free(im.data);
}
