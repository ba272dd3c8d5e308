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
 *
 * The dirty runs add write-back: dirty writes (some with their keys
 * inserted only operations later, as the target's index worker does),
 * failed ones dropped, writeback by bch_set_dirty_scan() and
 * bch_set_clean_pieces() racing user writes, and drains that write
 * everything back and count again.  After every step no dirty sector may
 * have lost its data (check_dirty()), no bucket may count less dirty data
 * than the model holds in it, and whatever the model holds clean the
 * origin must hold.  One run writes back only when the cache is full of
 * dirty data.  Directed tests follow for the cases a random run hits
 * rarely: dirty data inserted behind a gc pass, dirty keys masked by
 * their clean re-insert, and the scan and clean helpers' clipping.
 */
#include <stdlib.h>

#include "unit.h"
#include "check/check.h"
#include "format/uuid.h"
#include "mkfs/format.h"
#include "set/set.h"

#define BUCKETS		1024
#define BUCKET		128
#define SPACE		(1 << 16)	/* sectors of inode 1 written */

struct dev {
	u8 *data;
	struct bch_meta_io io;
	u64 flushes;
	const struct bch_sb *sb;
	bool fail_journal;		/* writes to journal buckets fail */
	bool fail_writes;		/* every write fails */
	u64 writes;			/* every write asked for */
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

/*
 * A gc pass's counts are installed only when the nodes on disk hold
 * every key counted (nothing unwritten in the tree), unless a write
 * failed and the pass is being dropped: a bucket whose dirty key is
 * masked only in memory must not have a new gen persisted while the
 * nodes still show the key.  Seen as the count ending under the lock.
 */
static bool counting_at_lock, io_failed;
static u64 counts_installed;

static void alloc_lock_hook(void *ctx)
{
	struct bch_set *s = ctx;

	CHECK(!alloc_locked);
	alloc_locked = 1;
	counting_at_lock = s->a.counting;
}

static void alloc_unlock_hook(void *ctx)
{
	struct bch_set *s = ctx;

	CHECK(alloc_locked);
	alloc_locked = 0;
	if (counting_at_lock && !s->a.counting && !io_failed) {
		CHECK(!bch_btree_dirty(&s->t));
		counts_installed++;
	}
}

/*
 * The contract's counts are judged per run (run_wb()'s thresholds): a
 * run must reach them on its own, not with what earlier tests left.
 */
static void contract_counts_reset(void)
{
	excl_windows = 0;
	fences = 0;
	waits = 0;
	counts_installed = 0;
}

/* Open the set with the contract's hooks checking every call. */
/* gc counts by a lookup per piece, as with no memory for a merged view. */
static bool count_by_lookups;

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
	s->a.lock_ctx = s;
	s->no_view = count_by_lookups;
	io_failed = false;
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
	d->writes++;
	if (sector * 512 + len > (u64)BUCKETS * BUCKET * 512)
		return -EIO;
	if (d->fail_writes) {
		io_failed = true;
		return -EIO;
	}
	for (i = 0; d->fail_journal && i < d->sb->keys; i++)
		if (sector / BUCKET == d->sb->d[i]) {
			io_failed = true;
			return -EIO;
		}
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
	d->fail_writes = false;
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
 * Write-back in the model (runs with dirty_mode): a dirty write's sectors
 * are model_dirty until writeback copies them to the origin (origin_tag:
 * what the origin holds) and re-inserts them clean; a clean write goes to
 * the origin too (write-through), and an invalidation stands for a write
 * that bypassed the cache.  So every sector the model holds clean has its
 * latest data on the origin, and every dirty one must be readable from
 * the cache: check_dirty() says so after every step.  The model also
 * keeps, per bucket, the dirty sectors it holds there and the gen they
 * were written at, which is what the allocator must never count less of
 * nor reclaim.
 */
static bool dirty_mode;
static u32 wb_every;		/* writeback every so many ops (on average) */
static u64 dirty_limit;		/* write back when more is dirty */
static bool model_dirty[SPACE];
static u64 origin_tag[SPACE];
static u64 nr_dirty;
static u32 bucket_dirty[BUCKETS];
static u8 bucket_dirty_gen[BUCKETS];
static u64 gen_mixes;		/* dirty data of two gens in one bucket */

/* Dirty writes in flight: data allocated and written, key not inserted. */
#define MAX_FLIGHTS	16

static struct flight {
	u64 start, ptr, tag;
	u32 len;
} flights[MAX_FLIGHTS];
static u32 nr_flights;

/* What the write-back side of a run did. */
static struct {
	u64 dirty_writes, flights, dropped, behind, scans, pieces, cleaned;
	u64 skipped, drains, wedged;
} ds;

static void drain(struct bch_set *s, struct dev *d, bool clean_all);
static void check_dirty(const struct bch_set *s, struct dev *d, bool full);

static void model_dirty_set(u64 sector, bool dirty)
{
	u64 b = bch_ptr_offset(model[sector]) / BUCKET;

	if (model_dirty[sector] == dirty)
		return;
	model_dirty[sector] = dirty;
	if (!dirty) {
		nr_dirty--;
		bucket_dirty[b]--;
		return;
	}
	nr_dirty++;
	/* A bucket holding dirty data is never reused: one gen only. */
	if (bucket_dirty[b]++ &&
	    bucket_dirty_gen[b] != bch_ptr_gen(model[sector]))
		gen_mixes++;
	bucket_dirty_gen[b] = bch_ptr_gen(model[sector]);
}

static void model_set(u64 start, u32 len, u64 ptr, u64 tag, bool dirty)
{
	u64 i;

	for (i = 0; i < len; i++) {
		model_dirty_set(start + i, false);
		model[start + i] = ptr ? ptr + (i << 8) : 0;
		model_tag[start + i] = tag + i;
		if (!dirty)
			origin_tag[start + i] = tag + i;
		model_dirty_set(start + i, dirty);
	}
}

/*
 * Reclaim for a write.  When nothing is reclaimable because dirty data
 * pins the cache, write it all back and count again first, as a
 * write-back cache must.  false when even that found no room.
 */
static bool refill(struct bch_set *s, struct dev *d)
{
	int r = bch_set_refill(s, 16);

	if (r == -ENOSPC && dirty_mode) {
		ds.wedged++;
		drain(s, d, true);
		r = bch_set_refill(s, 16);
	}
	CHECK(!r);
	if (dirty_mode)
		check_dirty(s, d, false);
	return !r;
}

/* Data space for up to @len sectors, refilling as needed; 0: none. */
static u32 alloc_space(struct bch_set *s, struct dev *d, u32 len, u64 *ptr,
		       bool dirty)
{
	for (;;) {
		int got = bch_alloc_data(&s->a, len, ptr, dirty);

		if (got != -ENOSPC) {
			CHECK(got > 0);
			return got > 0 ? got : 0;
		}
		if (!refill(s, d))
			return 0;
	}
}

/* Each data sector written carries the next tag; returns the first. */
static u64 put_tags(struct dev *d, u64 ptr, u32 len)
{
	u64 i;

	for (i = 0; i < len; i++)
		put_tag(d, ptr + (i << 8), ++tags);
	return tags - len + 1;
}

/*
 * Write [start, start + len) of inode 1: data space, data, keys, journal.
 * With @crash the last piece is inserted but not journalled, and the
 * model keeps the old contents: the caller reopens the set next.  A
 * @dirty write's pieces are reported done once inserted.
 */
static void do_write(struct bch_set *s, struct dev *d, u64 start, u32 len,
		     bool crash, bool dirty)
{
	while (len) {
		struct bch_key k;
		u64 ptr, tag;
		u32 got = alloc_space(s, d, len, &ptr, dirty);

		if (!got)
			return;
		bch_key_init(&k, 1, start + got, got, dirty);
		bch_key_add_ptr(&k, ptr);
		tag = put_tags(d, ptr, got);
		CHECK(!bch_set_insert(s, &k));
		if (crash && got == len)
			return;
		if (dirty)
			bch_alloc_dirty_done(&s->a, ptr, got);
		CHECK(!bch_set_journal(s, &k, 1));
		model_set(start, got, ptr, tag, dirty);
		ds.dirty_writes += dirty;
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
	/* New data written to the origin, around the cache. */
	model_set(start, len, 0, tags + 1, false);
	tags += len;
}

/* The key of flight @i goes in (or its write failed and it is dropped). */
static void land(struct bch_set *s, u32 i, bool drop)
{
	struct flight f = flights[i];
	struct bch_key k;

	flights[i] = flights[--nr_flights];
	if (drop) {
		bch_alloc_dirty_done(&s->a, f.ptr, f.len);
		bch_alloc_cleaned(&s->a, f.len);
		ds.dropped++;
		return;
	}
	bch_key_init(&k, 1, f.start + f.len, f.len, true);
	bch_key_add_ptr(&k, f.ptr);
	if (s->gc_running && (s->gc_inode > 1 ||
			      (s->gc_inode == 1 && s->gc_offset > f.start)))
		ds.behind++;
	CHECK(!bch_set_insert(s, &k));
	bch_alloc_dirty_done(&s->a, f.ptr, f.len);
	CHECK(!bch_set_journal(s, &k, 1));
	model_set(f.start, f.len, f.ptr, f.tag, true);
}

/*
 * A dirty write whose keys go in later (the target inserts from its index
 * worker after the data write completes): gc steps, refills and
 * writeback run meanwhile.
 */
static void write_deferred(struct bch_set *s, struct dev *d, u64 start,
			   u32 len)
{
	while (len) {
		u64 ptr;
		u32 got;

		if (nr_flights == MAX_FLIGHTS)
			land(s, rnd() % nr_flights, false);
		got = alloc_space(s, d, len, &ptr, true);
		if (!got)
			return;
		flights[nr_flights++] = (struct flight){
			.start = start, .ptr = ptr, .len = got,
			.tag = put_tags(d, ptr, got) };
		ds.flights++;
		start += got;
		len -= got;
	}
}

/* The cache sector @k holds for @sector. */
static u64 ptr_at(const struct bch_key *k, u64 sector)
{
	return k->ptr[0] + ((sector - bch_key_start(k)) << 8);
}

/*
 * One writeback batch from @from up to @to: scan the dirty pieces, copy
 * them to the origin, let the user write over part of the first one
 * (@race), then re-insert what is still the same dirty data as clean.
 * Returns where the scan stopped.
 */
static u64 writeback(struct bch_set *s, struct dev *d, u64 from, u64 to,
		     bool race)
{
	struct bch_key piece[16], clean[16];
	u64 pos = from, sector, prev = from, found = 0, want = 0;
	u32 n, m, i, j;

	n = bch_set_dirty_scan(s, 1, &pos, to, piece, 16, 64);
	ds.scans++;
	ds.pieces += n;
	CHECK(pos > from && pos <= to);
	for (i = 0; i < n; i++) {
		const struct bch_key *p = &piece[i];

		CHECK(bch_key_dirty(p) && bch_key_inode(p) == 1);
		CHECK(bch_key_live(&s->g, s->a.gens, p));
		CHECK(bch_key_start(p) >= prev && p->low <= pos);
		prev = p->low;
		found += bch_key_size(p);
		for (sector = bch_key_start(p); sector < p->low; sector++) {
			CHECK(model_dirty[sector]);
			CHECK(model[sector] == ptr_at(p, sector));
			/* The copy to the origin. */
			origin_tag[sector] = get_tag(d, ptr_at(p, sector));
		}
	}
	/* Nothing dirty in the range scanned was missed. */
	for (sector = from; sector < pos; sector++)
		want += model_dirty[sector];
	CHECK(found == want);

	if (race && n && (rnd() & 1)) {
		u64 len = 1 + rnd() % bch_key_size(&piece[0]);
		u64 at = bch_key_start(&piece[0]) +
			 rnd() % (bch_key_size(&piece[0]) - len + 1);

		switch (rnd() % 3) {
		case 0:
			do_write(s, d, at, len, false, true);
			break;
		case 1:
			do_write(s, d, at, len, false, false);
			break;
		default:
			do_invalidate(s, at, len);
		}
	}

	for (i = 0; i < n; i++) {
		u64 cleaned = 0;

		m = bch_set_clean_pieces(s, &piece[i], clean, 16);
		for (j = 0; j < m; j++) {
			const struct bch_key *c = &clean[j];

			CHECK(!bch_key_dirty(c));
			CHECK(bch_key_start(c) >= bch_key_start(&piece[i]) &&
			      c->low <= piece[i].low);
			for (sector = bch_key_start(c); sector < c->low;
			     sector++) {
				/* Still the data the origin just got. */
				CHECK(model_dirty[sector]);
				CHECK(model[sector] == ptr_at(c, sector));
				CHECK(origin_tag[sector] == model_tag[sector]);
			}
			CHECK(!bch_set_insert(s, c));
			CHECK(!bch_set_journal(s, c, 1));
			bch_alloc_cleaned(&s->a, bch_key_size(c));
			for (sector = bch_key_start(c); sector < c->low;
			     sector++)
				model_dirty_set(sector, false);
			cleaned += bch_key_size(c);
		}
		ds.cleaned += cleaned;
		ds.skipped += bch_key_size(&piece[i]) - cleaned;
	}
	return pos;
}

/*
 * No dirty data was ever reclaimed: no bucket holding dirty data in the
 * model has had its gen raised, and the allocator counts no less dirty
 * data in any bucket than the model has there, nor in all (its counts
 * err high only).  With @full, sector by sector too: every sector the
 * model holds dirty is answered by the index with a live dirty key at
 * the model's pointer, holding the data written there.  Only inserts
 * change what lookups answer (the model makes the same ones) and only
 * refills raise gens, so the full check runs after gc steps, reopens and
 * every so many operations, the other after every step and refill.
 */
static void check_dirty(const struct bch_set *s, struct dev *d, bool full)
{
	static u32 per_bucket[BUCKETS];
	u64 lost = 0, wrong = 0, low = 0, total = 0, sector, next = 0, b, p;
	const struct bch_key *k = NULL;

	for (b = 0; b < BUCKETS; b++) {
		if (bucket_dirty[b] && s->a.gens[b] != bucket_dirty_gen[b])
			lost++;
		low += s->a.b[b].dirty < bucket_dirty[b];
	}
	CHECK(lost == 0);
	CHECK(low == 0);
	CHECK(gen_mixes == 0);
	CHECK(s->a.dirty_sectors >= nr_dirty);
	if (!full)
		return;
	memset(per_bucket, 0, sizeof(per_bucket));
	for (sector = 0; sector < SPACE; sector++) {
		if (!model_dirty[sector])
			continue;
		total++;
		p = model[sector];
		per_bucket[bch_ptr_bucket(&s->g, p)]++;
		if (get_tag(d, p) != model_tag[sector])
			wrong++;
		if (sector >= next)
			k = bch_btree_lookup(&s->t, 1, sector, &next);
		if (!k || !bch_key_dirty(k) ||
		    !bch_key_live(&s->g, s->a.gens, k) ||
		    ptr_at(k, sector) != p)
			lost++;
	}
	CHECK(lost == 0);
	CHECK(wrong == 0);
	CHECK(total == nr_dirty);
	CHECK(!memcmp(per_bucket, bucket_dirty, sizeof(per_bucket)));
}

/*
 * Exact counts: right after a set is opened, or after a gc pass that
 * nothing was inserted during, with nothing in flight, the allocator
 * counts in every bucket exactly the dirty data the model has there
 * (masked dirty keys are not counted), except the open bucket, which
 * keeps its live count.
 */
static void check_dirty_exact(const struct bch_set *s, struct dev *d)
{
	u64 b, off = 0;

	check_dirty(s, d, true);
	for (b = 0; b < BUCKETS; b++)
		if (b != s->a.open)
			off += s->a.b[b].dirty != bucket_dirty[b];
	CHECK(off == 0);
}

/* What the model holds clean, the origin holds too. */
static void check_origin(void)
{
	u64 sector, bad = 0;

	for (sector = 0; sector < SPACE; sector++)
		bad += !model_dirty[sector] &&
		       origin_tag[sector] != model_tag[sector];
	CHECK(bad == 0);
}

/*
 * Land every write in flight, write back everything (@clean_all) or
 * nothing, end the gc pass under way and run a whole one with nothing
 * inserted during it: then the counts are exact.
 */
static void drain(struct bch_set *s, struct dev *d, bool clean_all)
{
	u64 pos;

	ds.drains++;
	while (nr_flights)
		land(s, nr_flights - 1, false);
	for (pos = 0; clean_all && pos < SPACE;)
		pos = writeback(s, d, pos, SPACE, false);
	CHECK(!clean_all || nr_dirty == 0);
	if (s->gc_running)
		CHECK(!bch_set_gc(s));
	CHECK(!bch_set_gc(s));
	check_dirty_exact(s, d);
	check_origin();
	if (clean_all)
		CHECK(s->a.dirty_sectors == (s->a.open < s->a.nbuckets ?
					     s->a.b[s->a.open].dirty : 0));
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

static void finding(void *ctx, enum bch_damage cls, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "  finding %d: %s\n", cls, msg);
}

static void check_clean(struct dev *d)
{
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_check_ops ops = { .finding = finding };

	CHECK(!bch_check(&d->io, &o, &ops, &res));
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
	/* Writes in flight were never acknowledged: gone, as the model says. */
	nr_flights = 0;
	if (dirty_mode) {
		/*
		 * Counted from what lookups see in the nodes: exact unless
		 * keys were replayed from the journal (those count whole,
		 * and what they mask still counts).
		 */
		if (s->replayed) {
			check_dirty(s, d, true);
		} else {
			check_dirty_exact(s, d);
			CHECK(s->a.dirty_sectors == nr_dirty);
		}
		check_origin();
	}
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
		do_write(s, d, start, 1024, false, false);
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

static void model_reset(void)
{
	memset(model, 0, sizeof(model));
	memset(model_tag, 0, sizeof(model_tag));
	memset(model_dirty, 0, sizeof(model_dirty));
	memset(origin_tag, 0, sizeof(origin_tag));
	memset(bucket_dirty, 0, sizeof(bucket_dirty));
	memset(&ds, 0, sizeof(ds));
	gen_mixes = 0;
	nr_dirty = 0;
	nr_flights = 0;
	dirty_mode = false;
}

/*
 * Write-back's share of an operation: writes in flight land (or fail),
 * writeback runs now and then over a random range (racing a user write
 * into what it copies), and more often when much is dirty.
 */
static void dirty_ops(struct bch_set *s, struct dev *d)
{
	u64 from;

	if (nr_flights && !(rnd() % 8))
		land(s, rnd() % nr_flights, !(rnd() % 16));
	if (wb_every && !(rnd() % wb_every)) {
		from = rnd() % SPACE;
		writeback(s, d, from, min_t(u64, from + 4096, SPACE), true);
	}
	while (nr_dirty > dirty_limit)
		writeback(s, d, rnd() % SPACE, SPACE, false);
}

/*
 * A run of @ops random operations; with @dirty, write-back too: writeback
 * every @every operations on average (0: never) and whenever more than
 * @limit sectors are dirty.
 */
static void run_wb(unsigned int policy, u32 ops, u32 node_keys, bool dirty,
		   u32 every, u64 limit)
{
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	struct tally t = { .node_keys = node_keys };
	u32 i;

	contract_counts_reset();
	model_reset();
	dirty_mode = dirty;
	wb_every = every;
	dirty_limit = limit;
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
			if (dirty)
				check_dirty(&s, &d, true);
		}
		if (i == ops / 3 || i == ops / 3 * 2)
			shrink(&s, &d, &sb, &t);
		else if (op < 900 && dirty && rnd() % 8 < 3 && (rnd() & 1))
			write_deferred(&s, &d, start, len);
		else if (op < 900)
			do_write(&s, &d, start, len, false,
				 dirty && (!every || rnd() % 3));
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
				refill(&s, &d);
				s.a.open_used = BUCKET;
			}
			do_write(&s, &d, start, len, true,
				 dirty && (rnd() & 1));
			reopen(&s, &d, &sb, &t);
		} else if (dirty && op < 997) {
			drain(&s, &d, every && (rnd() & 1));
		}
		if (dirty) {
			dirty_ops(&s, &d);
			check_dirty(&s, &d, !(i % 16));
		}
	}
	if (dirty) {
		fprintf(stderr, "  dirty: %llu writes, %llu in flight (%llu ",
			ds.dirty_writes, ds.flights, ds.behind);
		fprintf(stderr, "landed behind gc, %llu dropped), %llu scans, ",
			ds.dropped, ds.scans);
		fprintf(stderr, "%llu pieces, %llu sectors cleaned, ",
			ds.pieces, ds.cleaned);
		fprintf(stderr, "%llu skipped, %llu drains (%llu wedged)\n",
			ds.skipped, ds.drains, ds.wedged);
		CHECK(ds.behind > 0 && ds.dropped > 0 && ds.drains > 0);
		CHECK(ds.cleaned > ops);
		/* Writeback raced writes, or else the cache filled up. */
		CHECK(every ? ds.skipped > 0 : ds.wedged > 0);
		while (nr_flights)
			land(&s, nr_flights - 1, false);
	}
	CHECK(t.reopens > 5);
	CHECK(t.steps > ops / 1000);	/* passes ran interleaved */
	CHECK(counts_installed > ops / 1000);
	CHECK(excl_windows > 100 && fences > 10 && waits == fences);
	t.refills += s.refills;
	t.commits += s.commits;
	t.merges += s.t.nr_merges;
	fprintf(stderr, "  %u ops: %u reopens, %llu refills, %llu commits, ",
		ops, t.reopens, t.refills, t.commits);
	fprintf(stderr, "%llu merges, %llu gc steps, depth %u, %llu nodes\n",
		t.merges, t.steps, bch_btree_depth(&s.t), s.t.nr_nodes);
	fprintf(stderr, "  %llu exclusive windows, %llu fences, ",
		excl_windows, fences);
	fprintf(stderr, "%llu counts installed\n", counts_installed);
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
	if (dirty) {
		check_dirty_exact(&s, &d);
		CHECK(s.a.dirty_sectors == nr_dirty);
		check_origin();
	}
	bch_set_close(&s);
	free(d.data);
}

static void run(unsigned int policy, u32 ops, u32 node_keys, bool dirty)
{
	run_wb(policy, ops, node_keys, dirty, 16, 4096);
}

UNIT_TEST(set_model_lru)
{
	run(BCH_REPLACEMENT_LRU, 60000, 0, false);
}

UNIT_TEST(set_model_fifo)
{
	run(BCH_REPLACEMENT_FIFO, 20000, 0, false);
}

UNIT_TEST(set_model_random)
{
	run(BCH_REPLACEMENT_RANDOM, 20000, 0, false);
}

/* Nodes of 64 keys or 8 children: a deep tree, merged at every level. */
UNIT_TEST(set_model_small_nodes)
{
	run(BCH_REPLACEMENT_LRU, 30000, 64, false);
}

/* The same with write-back: dirty writes, in flight too, and writeback. */
UNIT_TEST(set_model_dirty_lru)
{
	run(BCH_REPLACEMENT_LRU, 30000, 0, true);
}

UNIT_TEST(set_model_dirty_fifo)
{
	run(BCH_REPLACEMENT_FIFO, 15000, 0, true);
}

UNIT_TEST(set_model_dirty_random)
{
	run(BCH_REPLACEMENT_RANDOM, 15000, 0, true);
}

UNIT_TEST(set_model_dirty_small_nodes)
{
	run(BCH_REPLACEMENT_LRU, 20000, 64, true);
}

/* The same, gc counting each leaf's dirty data by lookups. */
UNIT_TEST(set_model_dirty_by_lookups)
{
	count_by_lookups = true;
	run(BCH_REPLACEMENT_LRU, 15000, 0, true);
	count_by_lookups = false;
}

/*
 * Writeback only when the cache has nothing left to reclaim: dirty data
 * fills it, refills find nothing, and all of it is written back and
 * counted again before the write goes on.
 */
UNIT_TEST(set_model_dirty_wedged)
{
	run_wb(BCH_REPLACEMENT_FIFO, 20000, 0, true, 0, SPACE);
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

/*
 * Each prio write's seq is higher than any before it, across reopening
 * too: what bcache_repair's scan takes for the current chain when the
 * journal is lost.
 */
UNIT_TEST(set_prio_seq_goes_on)
{
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	u64 seq;

	dev_format(&d, &sb, BCH_REPLACEMENT_LRU);
	CHECK(!bch_set_open(&s, &d.io, &sb));
	CHECK(s.prio_seq == 1);			/* the format's chain */
	/* A refill writes a chain; free buckets let one more be saved. */
	CHECK(!bch_set_refill(&s, bch_set_refill_batch(&s)));
	seq = s.prio_seq;
	CHECK(seq > 1);
	CHECK(!bch_set_save_prios(&s));
	CHECK(s.prio_seq == seq + 1);
	seq = s.prio_seq;
	bch_set_close(&s);
	/* The chain read, or one a close wrote after it. */
	CHECK(!bch_set_open(&s, &d.io, &sb));
	CHECK(s.prio_seq >= seq);
	seq = s.prio_seq;
	CHECK(!bch_set_refill(&s, bch_set_refill_batch(&s)));
	CHECK(s.prio_seq > seq);
	bch_set_close(&s);
	check_clean(&d);
	free(d.data);
}

/* A fresh cache and an open set on it, with the model empty. */
static void fresh(struct bch_set *s, struct dev *d, struct bch_sb *sb,
		  u32 node_keys)
{
	struct tally t = { .node_keys = node_keys };

	model_reset();
	dev_format(d, sb, BCH_REPLACEMENT_FIFO);
	open_set(s, d, sb, &t);
}

/* The next data allocation starts a new bucket (the open one is closed). */
static void next_bucket(struct bch_set *s)
{
	s->a.open_used = BUCKET;
}

static u64 bucket_of(u64 sector)
{
	return bch_ptr_offset(model[sector]) / BUCKET;
}

/*
 * One refill with no bucket ready: the new prio chain takes its buckets
 * from those reclaim just found, so fewer are left pending than were
 * found.  Its yield (s->reclaimed, which the target's reclaim compares
 * with the batch it asked for to decide that reclaim ran dry) must be
 * what reclaim found: the buckets whose gens it raised.  Returns that.
 */
static u64 refill_none_ready(struct bch_set *s, u64 want)
{
	u8 gens[BUCKETS];
	u64 before = s->reclaimed, found = 0, b;

	CHECK(s->a.nr_ready == 0 && s->a.nr_pending == 0);
	memcpy(gens, s->a.gens, sizeof(gens));
	CHECK(!bch_set_refill(s, want));
	for (b = 0; b < BUCKETS; b++)
		found += s->a.gens[b] != gens[b];
	CHECK(found > s->g.nr_prio_buckets);
	CHECK(s->reclaimed - before == found);
	/* The chain did take its buckets from them, or this shows nothing. */
	CHECK(s->a.nr_ready == found - s->g.nr_prio_buckets);
	return found;
}

/*
 * A refill's yield is what reclaim found, also when none was ready
 * before it: on a fresh set (nothing ever reclaimed), and on one whose
 * ready list data and metadata used up.
 */
UNIT_TEST(set_refill_yield_none_ready)
{
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	u64 batch, ptr, x, gen, meta = 0, b;

	fresh(&s, &d, &sb, 0);
	batch = bch_set_refill_batch(&s);
	/* Plenty is free: a full batch, not one that looks short. */
	CHECK(refill_none_ready(&s, batch) == batch);

	/* Data takes all but the reserve, nodes the reserve but the prio
	 * chain's part. */
	while (bch_alloc_data(&s.a, BUCKET, &ptr, false) > 0)
		;
	x = bch_ptr_bucket(&s.g, ptr);
	CHECK(s.a.b[x].state == BCH_BUCKET_DATA);	/* closed, full */
	gen = s.a.gens[x];
	while (!bch_alloc_meta(&s.a, &b))
		meta++;
	CHECK(meta == s.a.reserve - s.a.prio_reserve);
	CHECK(s.a.prio_reserve == s.g.nr_prio_buckets);
	while (!bch_alloc_prio(&s.a, &b))
		;

	/* Everything reclaimable: the free buckets and the data ones. */
	CHECK(refill_none_ready(&s, BUCKETS) > batch);
	CHECK(s.a.gens[x] == (u8)(gen + 1));
	bch_set_close(&s);
	free(d.data);
}

/*
 * Nodes take every bucket they may: a refill can still write its prio
 * chain, so a commit that ran out of node buckets refills and goes on
 * instead of failing the cache.
 */
UNIT_TEST(set_refill_after_nodes_took_all)
{
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	u64 ptr, b;

	fresh(&s, &d, &sb, 0);
	CHECK(!bch_set_refill(&s, BUCKETS));	/* a fresh set has none ready */
	while (bch_alloc_data(&s.a, BUCKET, &ptr, false) > 0)
		;
	while (!bch_alloc_meta(&s.a, &b))
		;
	CHECK(s.a.nr_ready == s.g.nr_prio_buckets);
	CHECK(!bch_set_refill(&s, bch_set_refill_batch(&s)));
	CHECK(!bch_alloc_meta(&s.a, &b));
	CHECK(!bch_set_commit(&s));
	bch_set_close(&s);
	free(d.data);
}

/*
 * A gc pass whose end merges many nodes, run with no bucket ready but
 * the prio chain's: the pass's commit finds no bucket for a node,
 * refills (the prio reserve lets the refill write its chain) and goes
 * on.  The merged tree is what a reopen finds, the model's data with it,
 * and the device checks clean.
 */
UNIT_TEST(set_gc_finish_with_none_ready)
{
	struct tally tl = { .node_keys = 64 };
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	u64 start, ptr, b, nodes, refills, *took;
	u32 n = 0, i;

	fresh(&s, &d, &sb, tl.node_keys);
	for (start = 0; start < SPACE; start += 16)
		do_write(&s, &d, start, 16, false, false);
	CHECK(!bch_set_commit(&s));
	for (start = 0; start < SPACE / 8 * 7; start += 1024)
		do_invalidate(&s, start, 1024);
	CHECK(!bch_set_commit(&s));
	nodes = s.t.nr_nodes;
	CHECK(nodes > 50);

	/* Data takes what it may; nodes take the rest but the chain's. */
	while (bch_alloc_data(&s.a, BUCKET, &ptr, false) > 0)
		;
	took = calloc(BUCKETS, sizeof(*took));
	while (!bch_alloc_meta(&s.a, &b))
		took[n++] = b;
	for (i = 0; i < n; i++)
		bch_alloc_release(&s.a, took[i]);
	free(took);
	CHECK(s.a.nr_ready == s.g.nr_prio_buckets);

	refills = s.refills;
	CHECK(!bch_set_gc(&s));
	CHECK(s.refills > refills);	/* the commit ran out and refilled */
	CHECK(s.t.nr_merges > 0 && s.t.nr_nodes < nodes);
	fprintf(stderr, "  %llu nodes merged into %llu with none ready\n",
		(unsigned long long)nodes, (unsigned long long)s.t.nr_nodes);
	compare(&s, &d);
	nodes = s.t.nr_nodes;
	reopen(&s, &d, &sb, &tl);
	CHECK(s.t.nr_nodes == nodes);
	bch_set_close(&s);
	free(d.data);
}

/* Does a set of @n's keyset older than the newest hold a dirty key? */
static bool masked_dirty_in(const struct bch_bnode *n)
{
	u32 i, j;

	for (i = 0; i + 1 < n->ks.nr_sets; i++)
		for (j = 0; j < n->ks.set[i].e.nr; j++)
			if (bch_key_dirty(&n->ks.set[i].e.k[j]))
				return true;
	return false;
}

/*
 * Dirty data allocated before a gc pass begins, in a bucket closed
 * before it (so the pass's count is installed for it), and inserted
 * after the walk passed its position: the pass cannot find it, and the
 * write is done (nothing in flight) when the pass ends.  Only the count
 * bch_set_insert() makes behind the walk keeps the bucket; refills and
 * writes over everything reclaimable must leave the data readable.
 */
UNIT_TEST(set_dirty_inserted_behind_gc)
{
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	struct bch_key k;
	u64 ptr, x, gen, tag, sector;
	u32 i;
	int r;

	fresh(&s, &d, &sb, 64);
	for (sector = 0; sector < SPACE / 2; sector += 8)
		do_write(&s, &d, sector, 8, false, false);
	CHECK(!bch_set_commit(&s));
	CHECK(bch_btree_depth(&s.t) >= 2);

	next_bucket(&s);
	CHECK(alloc_space(&s, &d, BUCKET, &ptr, true) == BUCKET);
	x = bch_ptr_bucket(&s.g, ptr);
	gen = s.a.gens[x];
	tag = put_tags(&d, ptr, BUCKET);
	do_write(&s, &d, SPACE - 64, 8, false, false);	/* closes x */
	CHECK(s.a.b[x].state == BCH_BUCKET_DATA);

	/* A pass walks past [64, 64 + BUCKET); then the key goes in. */
	do {
		CHECK(bch_set_gc_step(&s, 1) == 1);
	} while (s.gc_inode < 1 ||
		 (s.gc_inode == 1 && s.gc_offset < 64 + BUCKET));
	bch_key_init(&k, 1, 64 + BUCKET, BUCKET, true);
	bch_key_add_ptr(&k, ptr);
	CHECK(!bch_set_insert(&s, &k));
	bch_alloc_dirty_done(&s.a, ptr, BUCKET);
	CHECK(!bch_set_journal(&s, &k, 1));
	model_set(64, BUCKET, ptr, tag, true);
	while ((r = bch_set_gc_step(&s, 1)) == 1)
		;
	CHECK(r == 0);
	CHECK(s.a.b[x].dirty == BUCKET && s.a.b[x].dirty_inflight == 0);

	/* Reclaim all that can be, and write it full of other data. */
	for (i = 0; i < 4; i++) {
		CHECK(!bch_set_refill(&s, BUCKETS));
		for (sector = SPACE / 2; sector < SPACE; sector += 64)
			do_write(&s, &d, sector, 64, false, false);
	}
	CHECK(s.a.gens[x] == gen);
	check_dirty(&s, &d, true);
	compare(&s, &d);
	bch_set_close(&s);
	check_clean(&d);		/* no dirty data lost on disk either */
	CHECK(!open_hooked(&s, &d.io, &sb));
	check_dirty(&s, &d, true);
	compare(&s, &d);
	bch_set_close(&s);
	free(d.data);
}

/*
 * Dirty data written back and re-inserted clean: the dirty key stays in
 * an older set of the leaf (on disk too), masked.  Neither the marks at
 * open nor a gc count may keep its bucket dirty, and once the leaf's
 * sets merge (the masked key gone) a count still finds it clean.
 */
UNIT_TEST(set_dirty_masked_not_pinned)
{
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	struct bch_bnode *leaf;
	u64 x, z, gen, sector;
	u32 sets;

	fresh(&s, &d, &sb, 0);
	do_write(&s, &d, 0, 64, false, true);
	x = bucket_of(0);
	next_bucket(&s);
	do_write(&s, &d, 1000, 8, false, false);	/* closes x */
	CHECK(s.a.b[x].state == BCH_BUCKET_DATA && s.a.b[x].dirty == 64);
	CHECK(!bch_set_commit(&s));
	CHECK(writeback(&s, &d, 0, 64, false) == 64 && nr_dirty == 0);
	leaf = bch_btree_leaf_after(&s.t, 1, 0);
	CHECK(masked_dirty_in(leaf));
	CHECK(s.a.b[x].dirty == 64);		/* until a count says */

	/* A count over the sets as they are: D masked, not counted. */
	CHECK(!bch_set_gc(&s));
	leaf = bch_btree_leaf_after(&s.t, 1, 0);
	CHECK(masked_dirty_in(leaf));
	CHECK(s.a.b[x].dirty == 0 && s.a.dirty_sectors == 0);

	/* Opened again: the nodes show D under the clean key. */
	bch_set_close(&s);
	check_clean(&d);
	CHECK(!open_hooked(&s, &d.io, &sb));
	CHECK(s.replayed == 0);
	leaf = bch_btree_leaf_after(&s.t, 1, 0);
	CHECK(masked_dirty_in(leaf));
	CHECK(s.a.b[x].dirty == 0 && s.a.dirty_sectors == 0);
	CHECK(!bch_set_gc(&s));
	CHECK(s.a.b[x].dirty == 0);
	gen = s.a.gens[x];
	CHECK(!bch_set_refill(&s, BUCKETS));
	CHECK(s.a.gens[x] == gen + 1);		/* reclaimed */

	/* Again, and then the leaf's sets merge. */
	do_write(&s, &d, 2000, 64, false, true);
	z = bucket_of(2000);
	next_bucket(&s);
	do_write(&s, &d, 3000, 8, false, false);	/* closes z */
	CHECK(!bch_set_commit(&s));
	CHECK(writeback(&s, &d, 2000, 2064, false) == 2064);
	CHECK(nr_dirty == 0);
	leaf = bch_btree_leaf_after(&s.t, 1, 2000);
	CHECK(masked_dirty_in(leaf));
	for (sector = 4000; leaf->ks.nr_sets > 1; sector += 8) {
		sets = leaf->ks.nr_sets;
		do_write(&s, &d, sector, 8, false, false);
		CHECK(!bch_set_commit(&s));
		leaf = bch_btree_leaf_after(&s.t, 1, 2000);
		if (leaf->ks.nr_sets < sets)
			break;
	}
	CHECK(!masked_dirty_in(leaf) && leaf->ks.nr_sets <= 2);
	CHECK(!bch_set_gc(&s));
	CHECK(s.a.b[z].dirty == 0 && s.a.dirty_sectors == 0);
	gen = s.a.gens[z];
	CHECK(!bch_set_refill(&s, BUCKETS));
	CHECK(s.a.gens[z] == gen + 1);
	compare(&s, &d);
	check_origin();
	bch_set_close(&s);
	check_clean(&d);
	free(d.data);
}

/* Does @k hold [start, end) of inode 1 from cache sector @off, dirty? */
static bool is_piece(const struct bch_key *k, u64 start, u64 end, u64 off,
		     bool dirty)
{
	return bch_key_inode(k) == 1 && bch_key_start(k) == start &&
	       k->low == end && bch_key_ptrs(k) == 1 &&
	       bch_ptr_offset(k->ptr[0]) == off && bch_key_dirty(k) == dirty;
}

/*
 * What writeback sees and cleans.  A (dirty, [100, 200)) partly covered
 * by a clean write, an invalidation and another dirty write E: a scan
 * returns A's visible pieces clipped (pointers moved with their starts)
 * and E's, in order, within its limits of pieces and lookups.  A piece
 * cleans to the parts still holding that same data: not where a write
 * landed since, even dirty data in the same bucket at the same gen.
 */
UNIT_TEST(set_dirty_scan_and_clean_pieces)
{
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	struct bch_key out[16], cl[16];
	u64 pos, a, e;
	u32 n, i;

	fresh(&s, &d, &sb, 0);
	next_bucket(&s);
	do_write(&s, &d, 100, 100, false, true);
	a = bch_ptr_offset(model[100]);
	CHECK(bch_ptr_offset(model[199]) == a + 99);	/* one key */
	CHECK(!bch_set_commit(&s));		/* A in a sealed set */
	do_write(&s, &d, 120, 10, false, false);
	do_invalidate(&s, 150, 10);
	do_write(&s, &d, 180, 10, false, true);
	e = bch_ptr_offset(model[180]);
	CHECK(e / BUCKET == a / BUCKET);	/* same bucket, same gen */

	pos = 110;
	n = bch_set_dirty_scan(&s, 1, &pos, 195, out, 16, 100);
	CHECK(n == 5 && pos == 195);
	CHECK(is_piece(&out[0], 110, 120, a + 10, true));
	CHECK(is_piece(&out[1], 130, 150, a + 30, true));
	CHECK(is_piece(&out[2], 160, 180, a + 60, true));
	CHECK(is_piece(&out[3], 180, 190, e, true));
	CHECK(is_piece(&out[4], 190, 195, a + 90, true));
	for (i = 0; i < n; i++)
		CHECK(bch_ptr_gen(out[i].ptr[0]) == bch_ptr_gen(model[100]));

	/* At most @max pieces; the next call goes on from there. */
	pos = 110;
	CHECK(bch_set_dirty_scan(&s, 1, &pos, 195, out, 2, 100) == 2);
	CHECK(pos == 150 && is_piece(&out[1], 130, 150, a + 30, true));
	CHECK(bch_set_dirty_scan(&s, 1, &pos, 195, out, 16, 100) == 3);
	CHECK(pos == 195 && is_piece(&out[0], 160, 180, a + 60, true));
	/* At most @max_lookups: clean data and gaps cost one each. */
	pos = 110;
	CHECK(bch_set_dirty_scan(&s, 1, &pos, 195, out, 16, 1) == 1);
	CHECK(pos == 120);
	CHECK(bch_set_dirty_scan(&s, 1, &pos, 195, out, 16, 1) == 0);
	CHECK(pos == 130);
	pos = 150;
	CHECK(bch_set_dirty_scan(&s, 1, &pos, 195, out, 16, 1) == 0);
	CHECK(pos == 160);
	pos = 300;				/* nothing there at all */
	CHECK(bch_set_dirty_scan(&s, 1, &pos, 5000, out, 16, 100) == 0);
	CHECK(pos == 5000);
	pos = 100;				/* another inode: nothing */
	CHECK(bch_set_dirty_scan(&s, 2, &pos, 200, out, 16, 100) == 0);

	/* Piece [100, 120): dirty data lands in its middle meanwhile. */
	pos = 100;
	CHECK(bch_set_dirty_scan(&s, 1, &pos, 200, out, 16, 100) == 5);
	do_write(&s, &d, 112, 3, false, true);
	CHECK(bch_ptr_offset(model[112]) / BUCKET == a / BUCKET);
	n = bch_set_clean_pieces(&s, &out[0], cl, 16);
	CHECK(n == 2);
	CHECK(is_piece(&cl[0], 100, 112, a, false));
	CHECK(is_piece(&cl[1], 115, 120, a + 15, false));
	CHECK(bch_set_clean_pieces(&s, &out[0], cl, 1) == 1);
	CHECK(is_piece(&cl[0], 100, 112, a, false));

	/* Piece [130, 150): a clean write and an invalidation in it. */
	do_write(&s, &d, 140, 5, false, false);
	do_invalidate(&s, 132, 2);
	n = bch_set_clean_pieces(&s, &out[1], cl, 16);
	CHECK(n == 3);
	CHECK(is_piece(&cl[0], 130, 132, a + 30, false));
	CHECK(is_piece(&cl[1], 134, 140, a + 34, false));
	CHECK(is_piece(&cl[2], 145, 150, a + 45, false));

	/* E untouched: all of it; once inserted, nothing left to clean. */
	n = bch_set_clean_pieces(&s, &out[3], cl, 16);
	CHECK(n == 1 && is_piece(&cl[0], 180, 190, e, false));
	CHECK(!bch_set_insert(&s, &cl[0]));
	CHECK(bch_set_clean_pieces(&s, &out[3], cl, 16) == 0);
	pos = 180;
	CHECK(bch_set_dirty_scan(&s, 1, &pos, 190, out, 16, 100) == 0);

	/* Wholly overwritten by other dirty data: nothing. */
	pos = 160;
	CHECK(bch_set_dirty_scan(&s, 1, &pos, 180, out, 16, 100) == 1);
	do_write(&s, &d, 150, 40, false, true);
	CHECK(bch_set_clean_pieces(&s, &out[0], cl, 16) == 0);
	bch_set_close(&s);
	free(d.data);
}

/* Journal buckets holding nothing the disk's journal needs. */
static u32 journal_free_buckets(const struct bch_set *s)
{
	u32 i, n = 0;

	for (i = 0; i < s->sb.keys; i++)
		if (i != s->jw.ring &&
		    s->jw.bucket_max_seq[i] < s->jw.disk_last_seq)
			n++;
	return n;
}

/*
 * A cache that crashes after every open, before its first commit: each
 * open refills (as the target's first act), writes and journals a little,
 * and crashes.  Every open must succeed and find every journalled write,
 * however often this repeats: opening must not use up the journal, and a
 * journal running short must be committed before it fills.
 */
UNIT_TEST(set_open_crash_loop_keeps_journal_room)
{
	struct tally t = { 0 };
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	u32 i, least = ~0U;

	fresh(&s, &d, &sb, 0);
	for (i = 0; i < 400; i++) {
		CHECK(!bch_set_refill(&s, bch_set_refill_batch(&s)));
		do_write(&s, &d, (i * 64) % SPACE, 64, false, false);
		least = min(least, journal_free_buckets(&s));
		reopen(&s, &d, &sb, &t);
	}
	CHECK(t.reopens == 400);
	CHECK(t.commits > 0);		/* the journal did run short */
	CHECK(least >= 1);
	bch_set_close(&s);
	free(d.data);
}

/* Write keyless entries, as a careless writer would, until none fits. */
static u32 fill_journal(struct bch_set *s)
{
	u32 n = 0;
	int r;

	while ((r = bch_jwriter_write(&s->jw, NULL, 0)) == 0)
		n++;
	CHECK(r == -ENOSPC);
	return n;
}

/*
 * The entry that would free the journal must not overwrite what the
 * journal on disk still needs while it is being written: with every
 * bucket holding needed entries, an entry whose last_seq says the rest
 * is no longer needed still finds no room.
 */
UNIT_TEST(set_journal_never_overwrites_needed_entries)
{
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;

	fresh(&s, &d, &sb, 0);
	CHECK(fill_journal(&s) > 0);
	CHECK(journal_free_buckets(&s) == 0);
	s.jw.last_seq = s.jw.seq;	/* as a commit's own entry says */
	CHECK(bch_jwriter_write(&s.jw, NULL, 0) == -ENOSPC);
	bch_set_close(&s);
	check_clean(&d);
	free(d.data);
}

/*
 * A journal with no free bucket still opens when the newest entry's
 * bucket has room (a writer goes on after the newest entry), and the
 * first thing written after it is a commit, which frees the journal.
 */
UNIT_TEST(set_full_journal_opens_and_commits_first)
{
	struct tally t = { 0 };
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	u32 i, keep;

	/* How many entries fit, then the same but a few, and a crash. */
	fresh(&s, &d, &sb, 0);
	do_write(&s, &d, 0, 64, false, false);
	keep = fill_journal(&s);
	CHECK(keep > 4);
	bch_set_close(&s);
	free(d.data);
	fresh(&s, &d, &sb, 0);
	do_write(&s, &d, 0, 64, false, false);
	for (i = 0; i + 4 < keep; i++)
		CHECK(!bch_jwriter_write(&s.jw, NULL, 0));
	CHECK(journal_free_buckets(&s) == 0);
	reopen(&s, &d, &sb, &t);
	CHECK(journal_free_buckets(&s) == 0);
	CHECK(!bch_set_refill(&s, bch_set_refill_batch(&s)));
	CHECK(s.commits == 1);
	CHECK(journal_free_buckets(&s) == s.sb.keys - 1);
	do_write(&s, &d, 64, 64, false, false);
	reopen(&s, &d, &sb, &t);
	bch_set_close(&s);
	free(d.data);
}

/*
 * A cache full of dirty data: a refill finds only the buckets the last
 * prio chain left, which the new chain takes again.  That is no room,
 * and the refill must say so (-ENOSPC, so the caller writes back or
 * waits for gc) instead of succeeding forever without freeing a bucket.
 */
UNIT_TEST(set_refill_without_gain_is_enospc)
{
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	u32 i;
	u64 ptr;
	int r = 0;

	fresh(&s, &d, &sb, 0);
	for (i = 0; i < 50; i++) {
		while (bch_alloc_data(&s.a, BUCKET, &ptr, true) > 0)
			;
		r = bch_set_refill(&s, bch_set_refill_batch(&s));
		if (r)
			break;
	}
	CHECK(r == -ENOSPC);
	CHECK(s.a.nr_pending <= s.g.nr_prio_buckets);
	bch_set_close(&s);
	free(d.data);
}

/*
 * A prio chain whose write failed is named by nothing: its buckets are
 * free again, not held as metadata until the next open.
 */
UNIT_TEST(set_failed_prio_write_frees_its_chain)
{
	struct tally t = { 0 };
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	u64 meta;

	fresh(&s, &d, &sb, 0);
	CHECK(!bch_set_refill(&s, bch_set_refill_batch(&s)));
	meta = s.a.nr_meta;
	d.fail_writes = true;
	CHECK(bch_set_save_prios(&s) == -EIO);
	d.fail_writes = false;
	CHECK(s.a.nr_meta == meta);
	CHECK(!bch_set_save_prios(&s));
	CHECK(s.a.nr_meta == meta);
	reopen(&s, &d, &sb, &t);
	bch_set_close(&s);
	free(d.data);
}

/*
 * A legacy UUID table (jset version 0: 64-byte entries), as an old
 * driver left it: the set finds its slots where they are, rewrites it in
 * the current layout the first time it looks (entries then say version
 * 1), and the slots and labels survive the rewrite and a reopen.
 */
UNIT_TEST(set_uuid_legacy_table_converted)
{
	static const u8 a[16] = { 1 }, b[16] = { 2 };
	struct bch_uuid_entry_v0_disk *v0;
	const struct bch_uuid_entry_disk *e;
	struct tally t = { 0 };
	u8 first[512];
	struct bch_set s;
	struct bch_sb sb;
	struct bch_key k;
	struct dev d;
	u64 bucket, writes;

	fresh(&s, &d, &sb, 0);
	CHECK(!bch_set_refill(&s, bch_set_refill_batch(&s)));
	CHECK(!bch_alloc_meta(&s.a, &bucket));
	memset(s.buf, 0, s.g.meta_bucket_bytes);
	v0 = s.buf;
	memcpy(v0[0].uuid, a, 16);
	memcpy(v0[3].uuid, b, 16);
	memcpy(v0[3].label, "legacy", 6);
	CHECK(!d.io.write(&d, bch_bucket_sector(&s.g, bucket), s.buf,
			  s.g.meta_bucket_bytes));
	bch_key_init(&k, 0, 0, s.g.meta_bucket_bytes / 512, false);
	bch_key_add_ptr(&k, bch_make_ptr(s.g.nr_this_dev,
					 bch_bucket_sector(&s.g, bucket),
					 s.a.gens[bucket]));
	memset(s.jw.head.uuid_bucket, 0, sizeof(s.jw.head.uuid_bucket));
	bch_key_encode(&k, s.jw.head.uuid_bucket);
	s.jw.head.version = 0;
	CHECK(!bch_jwriter_write(&s.jw, NULL, 0));
	reopen(&s, &d, &sb, &t);
	CHECK(le32_to_cpu(s.jw.head.version) == 0);
	/* A read-only table finds the slot and rewrites nothing. */
	writes = d.writes;
	CHECK(bch_set_uuid_lookup(&s, b) == 3);
	CHECK(d.writes == writes && le32_to_cpu(s.jw.head.version) == 0);

	CHECK(bch_set_uuid_slot(&s, b, "new", false) == 3);
	CHECK(le32_to_cpu(s.jw.head.version) == BCH_JSET_VERSION);
	reopen(&s, &d, &sb, &t);
	CHECK(le32_to_cpu(s.jw.head.version) == BCH_JSET_VERSION);
	CHECK(bch_set_uuid_slot(&s, b, "new", false) == 3);
	CHECK(bch_set_uuid_slot(&s, a, "new", false) == 0);
	/* Entries 0-3 in the first sector: the current layout's. */
	CHECK(!d.io.read(&d, bch_bucket_sector(&s.g, s.uuid_bucket), first,
			 sizeof(first)));
	e = (const struct bch_uuid_entry_disk *)first + 3;
	CHECK(!memcmp(e->uuid, b, 16) && !memcmp(e->label, "legacy", 6));
	bch_set_close(&s);
	free(d.data);
}

/*
 * What a read-only table relies on: opening a set whose journal holds
 * keys the nodes lack (replayed in memory), and finding the origin's
 * UUID slot, write nothing to the device; the replayed keys are served.
 */
UNIT_TEST(set_open_and_uuid_lookup_write_nothing)
{
	static const u8 a[16] = { 1 }, absent[16] = { 9 };
	struct tally t = { 0 };
	struct bch_set s;
	struct bch_sb sb;
	struct dev d;
	u64 writes;
	int slot;

	fresh(&s, &d, &sb, 0);
	CHECK(!bch_set_refill(&s, bch_set_refill_batch(&s)));
	slot = bch_set_uuid_slot(&s, a, "ro", false);
	CHECK(slot >= 0);
	CHECK(!bch_set_commit(&s));
	do_write(&s, &d, 0, 512, false, false);
	bch_set_close(&s);
	writes = d.writes;
	open_set(&s, &d, &sb, &t);
	CHECK(s.replayed > 0);
	compare(&s, &d);
	CHECK(bch_set_uuid_lookup(&s, a) == slot);
	CHECK(bch_set_uuid_lookup(&s, absent) == -ENOENT);
	CHECK(d.writes == writes);
	bch_set_close(&s);
	free(d.data);
}
