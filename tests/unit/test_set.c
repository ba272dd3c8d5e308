// SPDX-License-Identifier: GPL-2.0
/*
 * The cache set against a model, over an in-memory cache device: random
 * writes (data space from the allocator, keys inserted and journalled),
 * invalidations, commits, refills that reclaim buckets when the cache is
 * full, gc, and reopening the set from the device (as a crash or a new
 * constructor would) at random points.  After every reopen the index must
 * answer every sector as the model says (data in a reclaimed bucket is
 * gone, never wrong) and bch_check() must find the device clean.
 *
 * Twice, a third and two thirds through, most of the space is
 * invalidated or overwritten so that leaves empty out, and gc must merge
 * nodes: once crashing inside its commit (the journal write fails, so the
 * tree before it must come back and nothing it replaced may be free yet)
 * and once completing, with a crash right after it (the merged, shallower
 * tree must come back, and the buckets of the nodes merged away must be
 * free again).  One run caps nodes at 64 keys, so the tree is four levels
 * deep and interior nodes split and merge on disk too.
 */
#include <stdlib.h>

#include "unit.h"
#include "check.h"
#include "format.h"
#include "set.h"

#define BUCKETS		1024
#define BUCKET		128
#define SPACE		(1 << 16)	/* sectors of inode 1 written */

struct dev {
	u8 *data;
	struct bch_meta_io io;
	u64 flushes;
	const struct bch_sb *sb;
	bool fail_journal;		/* writes to journal buckets fail */
};

/* What a run did, summed over the sets it opened; and its node limit. */
struct tally {
	u32 reopens;
	u64 refills, commits, merges, steps;
	u32 node_keys;			/* 0: the set's own */
};

/*
 * The locking contract of set.h, as the target relies on it: metadata
 * I/O never inside an exclusive window, windows never nested, the reuse
 * fence inside one and the wait outside, the allocator lock not nested.
 */
static int excl_depth, alloc_locked;
static u64 excl_windows, fences, waits;

static void excl_hook(void *ctx, bool on)
{
	(void)ctx;
	CHECK(excl_depth == !on);
	excl_depth = on;
	excl_windows += on;
}

static void fence_hook(void *ctx)
{
	(void)ctx;
	CHECK(excl_depth == 1);
	fences++;
}

static void wait_hook(void *ctx)
{
	(void)ctx;
	CHECK(excl_depth == 0 && fences == waits + 1);
	waits++;
}

static void alloc_lock_hook(void *ctx)
{
	(void)ctx;
	CHECK(!alloc_locked);
	alloc_locked = 1;
}

static void alloc_unlock_hook(void *ctx)
{
	(void)ctx;
	CHECK(alloc_locked);
	alloc_locked = 0;
}

/* Open the set with the contract's hooks checking every call. */
static int open_hooked(struct bch_set *s, const struct bch_meta_io *io,
		       const struct bch_sb *sb)
{
	int r = bch_set_open(s, io, sb);

	if (r)
		return r;
	bch_set_readers(s, excl_hook, NULL);
	s->reuse_fence = fence_hook;
	s->reuse_wait = wait_hook;
	s->a.lock = alloc_lock_hook;
	s->a.unlock = alloc_unlock_hook;
	return 0;
}

static int dev_read(void *ctx, u64 sector, void *buf, size_t len)
{
	struct dev *d = ctx;

	CHECK(!excl_depth);
	if (sector * 512 + len > (u64)BUCKETS * BUCKET * 512)
		return -EIO;
	memcpy(buf, d->data + sector * 512, len);
	return 0;
}

static int dev_write(void *ctx, u64 sector, const void *buf, size_t len)
{
	struct dev *d = ctx;
	u32 i;

	CHECK(!excl_depth && !alloc_locked);
	if (sector * 512 + len > (u64)BUCKETS * BUCKET * 512)
		return -EIO;
	for (i = 0; d->fail_journal && i < d->sb->keys; i++)
		if (sector / BUCKET == d->sb->d[i])
			return -EIO;
	memcpy(d->data + sector * 512, buf, len);
	return 0;
}

static int dev_flush(void *ctx)
{
	CHECK(!excl_depth && !alloc_locked);
	((struct dev *)ctx)->flushes++;
	return 0;
}

static u64 rng = 0x9e3779b97f4a7c15ULL;

static u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * The model: the pointer (with gen) each sector was last written at, and
 * the tag written there (every data sector written carries one), so a
 * bucket reused too early shows up as wrong data, not just a wrong key.
 */
static u64 model[SPACE];
static u64 model_tag[SPACE];
static u64 tags;

static void dev_format(struct dev *d, struct bch_sb *sb, unsigned int policy)
{
	struct bch_format_params p = { .dev_sectors = BUCKETS * BUCKET,
				       .block_size = 1, .bucket_size = BUCKET,
				       .policy = policy };

	d->data = calloc(BUCKETS * BUCKET, 512);
	d->io = (struct bch_meta_io){ .ctx = d, .sectors = p.dev_sectors,
				      .lbs = 512, .read = dev_read,
				      .write = dev_write, .flush = dev_flush };
	d->sb = sb;
	d->fail_journal = false;
	p.uuid[0] = p.set_uuid[0] = 9;
	CHECK(!bch_format_cache_sb(&p, sb));
	CHECK(!bch_sb_write(&d->io, sb));
	CHECK(!bch_format_cache_set(&d->io, sb));
}

static void put_tag(struct dev *d, u64 ptr, u64 tag)
{
	memcpy(d->data + bch_ptr_offset(ptr) * 512, &tag, sizeof(tag));
}

static u64 get_tag(struct dev *d, u64 ptr)
{
	u64 tag;

	memcpy(&tag, d->data + bch_ptr_offset(ptr) * 512, sizeof(tag));
	return tag;
}

/*
 * Write [start, start + len) of inode 1: data space, data, keys, journal.
 * With @crash the last piece is inserted but not journalled, and the
 * model keeps the old contents: the caller reopens the set next.
 */
static void do_write(struct bch_set *s, struct dev *d, u64 start, u32 len,
		     bool crash)
{
	while (len) {
		struct bch_key k;
		u64 ptr, i;
		int got = bch_alloc_data(&s->a, len, &ptr, false);

		if (got == -ENOSPC) {
			CHECK(!bch_set_refill(s, 16));
			continue;
		}
		CHECK(got > 0);
		bch_key_init(&k, 1, start + got, got, false);
		bch_key_add_ptr(&k, ptr);
		for (i = 0; i < (u64)got; i++)
			put_tag(d, ptr + (i << 8), ++tags);
		CHECK(!bch_set_insert(s, &k));
		if (crash && got == len)
			return;
		CHECK(!bch_set_journal(s, &k, 1));
		for (i = 0; i < (u64)got; i++) {
			model[start + i] = ptr + (i << 8);
			model_tag[start + i] = tags - got + 1 + i;
		}
		start += got;
		len -= got;
	}
}

static void do_invalidate(struct bch_set *s, u64 start, u32 len)
{
	struct bch_key k;

	bch_key_init(&k, 1, start + len, len, false);
	CHECK(!bch_set_insert(s, &k));
	CHECK(!bch_set_journal(s, &k, 1));
	memset(&model[start], 0, len * sizeof(model[0]));
}

/* Every sector as the model says, or gone because its bucket was reused. */
/*
 * After a gc pass no bucket the allocator takes for empty (FREE) holds
 * data a current key points to, even when it was reclaimed and written
 * again while the pass went on.
 */
static void check_free_buckets(const struct bch_set *s,
			       const struct bch_bnode *n)
{
	u32 i, j;

	for (i = 0; i < n->nr_child; i++)
		check_free_buckets(s, n->child[i]);
	for (i = 0; !n->level && i < n->ks.nr_sets; i++)
		for (j = 0; j < n->ks.set[i].e.nr; j++) {
			const struct bch_key *k = &n->ks.set[i].e.k[j];
			u64 b;

			if (!bch_key_live(&s->g, s->a.gens, k))
				continue;
			b = bch_ptr_bucket(&s->g, k->ptr[0]);
			CHECK(s->a.b[b].state != BCH_BUCKET_FREE);
		}
}

/* A leaf's count kept for coalescing is its count while it says valid. */
static void check_counts(const struct bch_bnode *n)
{
	u32 i;

	for (i = 0; i < n->nr_child; i++)
		check_counts(n->child[i]);
	if (!n->level && n->gc_counted)
		CHECK(n->gc_count == bch_keyset_count(&n->ks));
}

static void compare(const struct bch_set *s, struct dev *d)
{
	u64 sector = 0, mismatches = 0, wrong_data = 0;

	while (sector < SPACE) {
		u64 next, end;
		const struct bch_key *k = bch_btree_lookup(&s->t, 1, sector,
							   &next);
		bool live = k && bch_key_live(&s->g, s->a.gens, k);

		end = min_t(u64, next, SPACE);
		for (; sector < end; sector++) {
			u64 want = model[sector];
			bool want_live = want &&
				s->a.gens[bch_ptr_bucket(&s->g, want)] ==
				bch_ptr_gen(want);

			u64 at = live ? k->ptr[0] +
				 ((sector - bch_key_start(k)) << 8) : 0;

			if (want_live != live || (live && at != want))
				mismatches++;
			if (live && get_tag(d, at) != model_tag[sector])
				wrong_data++;
		}
	}
	CHECK(mismatches == 0);
	CHECK(wrong_data == 0);
}

static void check_clean(struct dev *d)
{
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;

	CHECK(!bch_check(&d->io, &o, NULL, &res));
	CHECK(res.nr_damage == 0);
	if (res.nr_damage) {
		u32 i;

		for (i = 0; i < BCH_NR_DAMAGE; i++)
			if (res.damage[i])
				fprintf(stderr, "  %s: %u\n", bch_damage_names[i],
					res.damage[i]);
	}
}

/*
 * Open the set.  A small node limit makes the tree deep (nodes still
 * take a bucket each), so interior nodes split and merge on disk too.
 */
static void open_set(struct bch_set *s, struct dev *d, const struct bch_sb *sb,
		     const struct tally *tl)
{
	CHECK(!open_hooked(s, &d->io, sb));
	if (tl->node_keys) {
		s->t.max_leaf_keys = tl->node_keys;
		s->t.max_children = tl->node_keys / 8;
	}
}

/* A crash: drop the set, check the device, open it again, compare. */
static void reopen(struct bch_set *s, struct dev *d, const struct bch_sb *sb,
		   struct tally *tl)
{
	tl->refills += s->refills;
	tl->commits += s->commits;
	tl->merges += s->t.nr_merges;
	bch_set_close(s);
	check_clean(d);
	open_set(s, d, sb, tl);
	compare(s, d);
	tl->reopens++;
}

/*
 * Leave leaves nearly empty: invalidate 7/8 of the space, overwrite the
 * rest with long writes (fewer, longer keys), commit.  Then gc, whose
 * commit crashes: the tree before it comes back.  Then gc to the end and
 * crash right after: fewer nodes, a shallower tree and fewer metadata
 * buckets (those of removed nodes released), all of it back after reopen.
 */
static void shrink(struct bch_set *s, struct dev *d, const struct bch_sb *sb,
		   struct tally *tl)
{
	u64 start, nodes, meta;
	u32 i, depth = bch_btree_depth(&s->t);

	CHECK(depth >= 2);
	for (start = 0; start < SPACE / 8 * 7; start += 1024)
		do_invalidate(s, start, 1024);
	for (; start < SPACE; start += 1024)
		do_write(s, d, start, 1024, false);
	CHECK(!bch_set_commit(s));
	nodes = s->t.nr_nodes;

	d->fail_journal = true;
	CHECK(bch_set_gc(s) == -EIO);
	CHECK(s->t.nr_merges > 0);
	/* No entry names the merged tree: nothing it replaced is free yet. */
	CHECK(s->bw.nr_released >= nodes - s->t.nr_nodes);
	for (i = 0; i < s->bw.nr_released; i++)
		CHECK(s->a.b[s->bw.released[i]].state == BCH_BUCKET_META);
	d->fail_journal = false;
	reopen(s, d, sb, tl);
	CHECK(s->t.nr_nodes == nodes && bch_btree_depth(&s->t) == depth);

	CHECK(!bch_set_commit(s));	/* every node placed: counted in meta */
	meta = s->a.nr_meta;
	CHECK(!bch_set_gc(s));
	CHECK(s->t.nr_merges > 0 && s->t.nr_nodes < nodes);
	CHECK(bch_btree_depth(&s->t) < depth);
	CHECK(!s->bw.nr_released);
	CHECK(s->a.nr_meta == meta - (nodes - s->t.nr_nodes));
	nodes = s->t.nr_nodes;
	depth = bch_btree_depth(&s->t);
	reopen(s, d, sb, tl);
	CHECK(s->t.nr_nodes == nodes && bch_btree_depth(&s->t) == depth);
}

static void run(unsigned int policy, u32 ops, u32 node_keys)
{
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	struct tally t = { .node_keys = node_keys };
	u32 i;

	memset(model, 0, sizeof(model));
	memset(model_tag, 0, sizeof(model_tag));
	dev_format(&d, &sb, policy);
	open_set(&s, &d, &sb, &t);
	for (i = 0; i < ops; i++) {
		u64 op = rnd() % 1000;
		u32 len = 1 + rnd() % 64;
		u64 start = rnd() % (SPACE - len);

		/* A gc pass in steps goes on between the other operations. */
		if (s.gc_running && !(rnd() % 8)) {
			int r = bch_set_gc_step(&s, 1);

			CHECK(r == 0 || r == 1);
			t.steps++;
			if (!r)
				check_free_buckets(&s, s.t.root);
			if (!(t.steps % 16))
				check_counts(s.t.root);
		}
		if (i == ops / 3 || i == ops / 3 * 2)
			shrink(&s, &d, &sb, &t);
		else if (op < 900)
			do_write(&s, &d, start, len, false);
		else if (op < 980)
			do_invalidate(&s, start, len);
		else if (op < 990)
			CHECK(!bch_set_commit(&s));
		else if (op < 993 && (rnd() & 1))
			CHECK(!bch_set_gc(&s));
		else if (op < 993)
			CHECK(bch_set_gc_step(&s, 1) >= 0);
		else if (op < 996 || i == ops - 1) {
			/*
			 * A crash, after a write that was not journalled:
			 * whatever was journalled must come back.
			 */
			if (rnd() & 1) {
				/* right after reclaiming, into a reclaimed bucket */
				CHECK(!bch_set_refill(&s, 16));
				s.a.open_used = BUCKET;
			}
			do_write(&s, &d, start, len, true);
			reopen(&s, &d, &sb, &t);
		}
	}
	CHECK(t.reopens > 5);
	CHECK(t.steps > ops / 1000);	/* passes ran interleaved */
	CHECK(excl_windows > 100 && fences > 10 && waits == fences);
	t.refills += s.refills;
	t.commits += s.commits;
	t.merges += s.t.nr_merges;
	fprintf(stderr, "  %u ops: %u reopens, %llu refills, %llu commits, ",
		ops, t.reopens, t.refills, t.commits);
	fprintf(stderr, "%llu merges, %llu gc steps, depth %u, %llu nodes\n",
		t.merges, t.steps, bch_btree_depth(&s.t), s.t.nr_nodes);
	CHECK(t.merges >= 8 && (!node_keys || t.merges > 100));
	CHECK(t.refills > 10);		/* the cache filled and was reused */
	CHECK(t.commits > 10);
	CHECK(bch_btree_depth(&s.t) >= 2);
	CHECK(!bch_set_commit(&s));
	bch_set_close(&s);
	check_clean(&d);
	CHECK(!open_hooked(&s, &d.io, &sb));
	compare(&s, &d);
	CHECK(s.replayed == 0);		/* all of it in the nodes */
	bch_set_close(&s);
	free(d.data);
}

UNIT_TEST(set_model_lru)
{
	run(BCH_REPLACEMENT_LRU, 60000, 0);
}

UNIT_TEST(set_model_fifo)
{
	run(BCH_REPLACEMENT_FIFO, 20000, 0);
}

UNIT_TEST(set_model_random)
{
	run(BCH_REPLACEMENT_RANDOM, 20000, 0);
}

/* Nodes of 64 keys or 8 children: a deep tree, merged at every level. */
UNIT_TEST(set_model_small_nodes)
{
	run(BCH_REPLACEMENT_LRU, 30000, 64);
}

/* A slot per UUID, kept across reopening; the table checks clean. */
UNIT_TEST(set_uuid_slots)
{
	u8 a[16] = { 1, 2, 3 }, b[16] = { 4, 5, 6 };
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	int sa, sb2, sa2;

	dev_format(&d, &sb, BCH_REPLACEMENT_LRU);
	CHECK(!bch_set_open(&s, &d.io, &sb));
	sa = bch_set_uuid_slot(&s, a, "first", false);
	sb2 = bch_set_uuid_slot(&s, b, "second", false);
	CHECK(sa >= 0 && sb2 >= 0 && sa != sb2);
	CHECK(bch_set_uuid_slot(&s, a, "first", false) == sa);
	bch_set_close(&s);
	check_clean(&d);
	CHECK(!bch_set_open(&s, &d.io, &sb));
	CHECK(bch_set_uuid_slot(&s, b, "x", false) == sb2);
	/* Fresh: the old slot is retired for good, a new one taken. */
	sa2 = bch_set_uuid_slot(&s, a, "again", true);
	CHECK(sa2 >= 0 && sa2 != sa && sa2 != sb2);
	CHECK(bch_set_uuid_slot(&s, a, "again", false) == sa2);
	bch_set_close(&s);
	check_clean(&d);
	CHECK(!bch_set_open(&s, &d.io, &sb));
	CHECK(bch_set_uuid_slot(&s, a, "again", false) == sa2);
	bch_set_close(&s);
	free(d.data);
}
