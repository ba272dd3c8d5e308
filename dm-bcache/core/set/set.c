// SPDX-License-Identifier: GPL-2.0
/* An open cache set; see set.h. */
#include "set/set.h"
#include "btree/btree_load.h"
#include "alloc/prio_read.h"
#include "alloc/prio_write.h"
#include "format/uuid.h"

/* Keys per node: room for one-pointer keys in half of it, as splits want. */
#define KEY_BYTES	24

/*
 * Journal buckets kept free for what a commit writes (the entries of the
 * refills its nodes need, then its own): every other entry is written
 * only while this many are free, else a commit goes first.
 */
#define JOURNAL_SPARE	2

u64 bch_set_refill_batch(const struct bch_set *s)
{
	return max_t(u64, s->a.nbuckets / 32, 16);
}

static void excl(struct bch_set *s, bool on)
{
	if (s->excl)
		s->excl(s->excl_ctx, on);
}

/* Nodes get their bucket when first written (btree_write.c). */
static int no_placement(void *ctx, struct bch_key *key)
{
	(void)ctx;
	(void)key;
	return 0;
}

static bool record_link(void *ctx, u32 link, u64 bucket)
{
	struct bch_set *s = ctx;

	if (link >= s->g.nr_prio_buckets || bucket >= s->g.kg.nbuckets)
		return false;
	s->prio_chain[link] = bucket;
	return true;
}

static int replay_key(void *ctx, const struct bch_key *k)
{
	struct bch_set *s = ctx;

	s->replayed++;
	/* Whole: what masks it later is not on disk either (see load()). */
	if (bch_key_dirty(k) && bch_key_ptrs(k))
		bch_alloc_mark_dirty(&s->a, k, bch_key_size(k));
	return bch_btree_insert(&s->t, k);
}

/*
 * The sectors of key @k, in set @set of leaf keyset @ks, that a lookup
 * answers with @k itself.  A dirty key partly or wholly masked by newer
 * sets (written back and re-inserted clean, or overwritten) holds dirty
 * data only in what still shows: counting the rest would keep its bucket
 * unreclaimable with nothing left to write back (alloc.h, case (d)).  A
 * lookup returns a pointer into the set holding the key, so identity
 * says whose a piece is.
 */
static u32 visible_sectors(const struct bch_keyset *ks, u32 set,
			   const struct bch_key *k)
{
	u64 inode = bch_key_inode(k), sector = bch_key_start(k), next;
	u32 n = 0;

	/* Nothing newer than the newest set masks it. */
	if (set == ks->nr_sets - 1)
		return bch_key_size(k);
	while (sector < k->low) {
		if (bch_keyset_lookup(ks, inode, sector, &next) == k)
			n += min(next, k->low) - sector;
		if (next <= sector)	/* a lookup always moves on */
			break;
		sector = next;
	}
	return n;
}

static void mark_node(struct bch_set *s, const struct bch_bnode *n)
{
	u32 i, j;

	if (bch_key_ptrs(&n->key))
		bch_alloc_mark_meta(&s->a, bch_ptr_bucket(&s->g, n->key.ptr[0]));
	for (i = 0; i < n->nr_child; i++)
		mark_node(s, n->child[i]);
	for (i = 0; !n->level && i < n->ks.nr_sets; i++)
		for (j = 0; j < n->ks.set[i].e.nr; j++)
			bch_alloc_mark_key(&s->a, &n->ks.set[i].e.k[j]);
}

/* visible_dirty() by a lookup per piece: no memory needed. */
static u32 visible_dirty_lookups(struct bch_set *s, const struct bch_keyset *ks,
				 void (*count)(struct bch_alloc *,
					       const struct bch_key *, u32))
{
	u32 i, j;

	for (i = 0; i < ks->nr_sets; i++)
		for (j = 0; j < ks->set[i].e.nr; j++) {
			const struct bch_key *k = &ks->set[i].e.k[j];

			if (bch_key_dirty(k) && bch_key_ptrs(k))
				count(&s->a, k, visible_sectors(ks, i, k));
		}
	return bch_keyset_count(ks);
}

/*
 * Give @count each piece of a dirty key that lookups in leaf @ks see,
 * with its sectors; return how many pieces lookups see in all (as
 * bch_keyset_count()).  The pieces come from the leaf's merged view, one
 * linear pass per set: a lookup per piece made gc cost 14 ms a leaf under
 * TCG once the cache held 4k writes in several sets a leaf, and write
 * completions wait behind each gc step.  Lookups when there is no memory
 * for the view (or a test asks, no_view).
 */
static u32 visible_dirty(struct bch_set *s, const struct bch_keyset *ks,
			 void (*count)(struct bch_alloc *,
				       const struct bch_key *, u32))
{
	const struct bch_extents *v = &ks->set[0].e;
	u32 j;

	if (ks->nr_sets > 1) {
		if (s->no_view || bch_keyset_merged(ks, &s->view, &s->view_tmp))
			return visible_dirty_lookups(s, ks, count);
		v = &s->view;
	}
	for (j = 0; j < v->nr; j++) {
		const struct bch_key *k = &v->k[j];

		if (bch_key_dirty(k) && bch_key_ptrs(k))
			count(&s->a, k, bch_key_size(k));
	}
	return v->nr;
}

/* The views' memory, kept through a gc pass or a load. */
static void free_view(struct bch_set *s)
{
	bch_extents_free(&s->view);
	bch_extents_free(&s->view_tmp);
}

/* The dirty data in @n's leaves: the pieces of dirty keys lookups see. */
static void mark_dirty_node(struct bch_set *s, const struct bch_bnode *n)
{
	u32 i;

	for (i = 0; i < n->nr_child; i++)
		mark_dirty_node(s, n->child[i]);
	if (!n->level)
		visible_dirty(s, &n->ks, bch_alloc_mark_dirty);
}

static int load(struct bch_set *s, struct bch_jscan *js, u8 *gens, u16 *prios)
{
	const struct bch_geom *g = &s->g;
	struct bch_prio_reader rd = { .ctx = s, .claim = record_link };
	struct bch_prio_result res;
	u32 node_keys = g->btree_sectors * 512 / KEY_BYTES / 2;
	struct bch_key root, uuid;
	u64 i;
	int r;

	r = bch_prio_read(s->io, g,
			  le64_to_cpu(js->newest.prio_bucket[g->nr_this_dev]),
			  gens, prios, &rd, &res);
	if (r)
		return r < 0 ? r : -EIO;
	/*
	 * The next prio write goes on from the chain's seq, as the driver's
	 * does, so the newest chain on disk always has the highest seq (what
	 * bcache_repair's scan looks for when the journal is lost).
	 */
	s->prio_seq = res.seq;
	bch_key_decode(js->newest.uuid_bucket, BCH_BKEY_PAD_U64S, &uuid);
	s->uuid_bucket = bch_ptr_bucket(g, uuid.ptr[0]);
	bch_key_decode(js->newest.btree_root, BCH_BKEY_PAD_U64S, &root);
	r = bch_btree_init(&s->t, node_keys, node_keys, g->btree_sectors,
			   no_placement, NULL);
	if (!r)
		r = bch_btree_load(&s->t, s->io, g, &root,
				   le16_to_cpu(js->newest.btree_level), gens);
	if (!r)
		r = bch_alloc_init(&s->a, g, gens, prios,
				   (s->sb.flags >> BCH_CACHE_REPLACEMENT_SHIFT) &
				   BCH_CACHE_REPLACEMENT_MASK,
				   g->nr_prio_buckets + 16);
	if (r)
		return r;
	/*
	 * Dirty data is marked as the nodes on disk show it, before the
	 * journal's keys go in, and the journal's dirty keys whole as they
	 * do: a dirty key that only a journal key masks is still visible to
	 * whoever reads the nodes without the journal (the checker, and so
	 * bcache_export), so its bucket keeps its gen until a gc count made
	 * after those keys reached the nodes says otherwise.
	 */
	mark_dirty_node(s, s->t.root);
	free_view(s);
	r = bch_jscan_replay(s->io, &s->sb, g, js, replay_key, s);
	if (!r)
		r = bch_jwriter_open(&s->jw, s->io, &s->sb, g, js);
	if (r)
		return r;
	for (i = 0; i < s->sb.keys; i++)
		bch_alloc_mark_meta(&s->a, s->sb.d[i]);
	for (i = 0; i < g->nr_prio_buckets; i++)
		bch_alloc_mark_meta(&s->a, s->prio_chain[i]);
	bch_alloc_mark_meta(&s->a, s->uuid_bucket);
	mark_node(s, s->t.root);
	return 0;
}

int bch_set_open(struct bch_set *s, const struct bch_meta_io *io,
		 const struct bch_sb *sb)
{
	struct bch_jscan js;
	u8 *gens;
	u16 *prios;
	int r;

	memset(s, 0, sizeof(*s));
	s->io = io;
	s->sb = *sb;
	bch_geom_init(&s->g, &s->sb);
	s->bw.io = io;
	s->bw.g = &s->g;
	s->bw.a = &s->a;
	r = bch_jscan_run(io, &s->sb, &s->g, &js, NULL, NULL);
	if (r)
		return r;
	gens = bch_zalloc(s->g.kg.nbuckets);
	prios = bch_zalloc(s->g.kg.nbuckets * sizeof(*prios));
	s->prio_chain = bch_zalloc(s->g.nr_prio_buckets * sizeof(u64));
	s->buf = bch_zalloc(s->g.meta_bucket_bytes);
	if (!js.have_newest)
		r = -EINVAL;
	else if (!gens || !prios || !s->prio_chain || !s->buf)
		r = -ENOMEM;
	else
		r = load(s, &js, gens, prios);
	bch_jscan_free(&js);
	bch_free(gens);
	bch_free(prios);
	if (r)
		bch_set_close(s);
	return r;
}

void bch_set_mark_index(struct bch_set *s)
{
	mark_dirty_node(s, s->t.root);
	free_view(s);
	mark_node(s, s->t.root);
}

void bch_set_close(struct bch_set *s)
{
	free_view(s);
	bch_btree_free(&s->t);
	bch_jwriter_close(&s->jw);
	bch_alloc_free(&s->a);
	bch_free(s->bw.released);
	bch_free(s->prio_chain);
	bch_free(s->buf);
	s->bw.released = NULL;
	s->prio_chain = NULL;
	s->buf = NULL;
}

void bch_set_readers(struct bch_set *s, void (*excl_fn)(void *, bool),
		     void *ctx)
{
	s->excl = excl_fn;
	s->excl_ctx = ctx;
	s->bw.excl = excl_fn;
	s->bw.excl_ctx = ctx;
}

/*
 * During a gc pass, a key going in before the pass's position lands in
 * leaves the walk has visited already: count that part of it now, as the
 * walk would have (alloc.h, case (b)); the walk counts the rest when it
 * gets there.  Counted before the insert, so an insert that fails part
 * way errs high.
 */
static void count_behind(struct bch_set *s, const struct bch_key *k)
{
	u64 inode = bch_key_inode(k);
	struct bch_key part = *k;

	if (!bch_key_ptrs(k) || !bch_key_size(k) || bch_key_size(k) > k->low ||
	    inode > s->gc_inode)
		return;
	if (inode == s->gc_inode) {
		if (bch_key_start(k) >= s->gc_offset)
			return;
		if (k->low > s->gc_offset)
			bch_key_cut_back(&part, s->gc_offset);
	}
	bch_alloc_count_key(&s->a, &part);
	if (bch_key_dirty(&part))
		bch_alloc_count_dirty(&s->a, &part, bch_key_size(&part));
}

int bch_set_insert(struct bch_set *s, const struct bch_key *k)
{
	s->uncommitted++;
	if (s->gc_running)
		count_behind(s, k);
	return bch_btree_insert(&s->t, k);
}

static int flush(struct bch_set *s)
{
	return s->io->flush ? s->io->flush(s->io->ctx) : 0;
}

/* Journal buckets that hold nothing replay needs, besides the open one. */
static u32 journal_free(const struct bch_set *s)
{
	u32 i, n = 0;

	for (i = 0; i < s->sb.keys; i++)
		if (i != s->jw.ring && s->jw.bucket_max_seq[i] < s->jw.last_seq)
			n++;
	return n;
}

/* A journal entry with no keys: it names the current root, prios, UUIDs. */
static int journal_head(struct bch_set *s)
{
	int r = flush(s);

	if (!r)
		r = bch_jwriter_write(&s->jw, NULL, 0);
	return r < 0 ? r : flush(s);
}

/*
 * Before an entry outside a commit: commit first when the journal is
 * short, so that a commit always finds room for its entries (and a cache
 * that crashes before every commit still finds room to open in).
 */
static bool journal_short(const struct bch_set *s)
{
	return !s->in_commit && journal_free(s) < JOURNAL_SPARE;
}

static int journal_room(struct bch_set *s)
{
	return journal_short(s) ? bch_set_commit(s) : 0;
}

int bch_set_journal(struct bch_set *s, const struct bch_key *keys, u32 n)
{
	/* The data the keys address first, so no key outlives its data. */
	int r = flush(s);

	if (r)
		return r;
	while (n) {
		if (journal_short(s))
			return bch_set_commit(s);
		r = bch_jwriter_write(&s->jw, keys, n);
		if (r == -ENOSPC)
			return bch_set_commit(s);
		if (r < 0)
			return r;
		keys += r;
		n -= r;
	}
	return flush(s);
}

static int commit(struct bch_set *s)
{
	u32 i;
	int r;

	/*
	 * The data the nodes' new keys address first: an appended bset is
	 * reachable from the root on disk as soon as it is written.
	 */
	r = flush(s);
	if (r)
		return r;
	for (;;) {
		r = bch_btree_write(&s->t, &s->bw);
		if (r != -ENOSPC)
			break;
		r = bch_set_refill(s, bch_set_refill_batch(s));
		if (r)
			return r;
	}
	if (r)
		return r;
	bch_jwriter_set_root(&s->jw, &s->t.root->key, s->t.root->level);
	s->jw.last_seq = s->jw.seq;	/* the nodes hold everything now */
	r = journal_head(s);
	if (r)
		return r;
	for (i = 0; i < s->bw.nr_released; i++)
		bch_alloc_release(&s->a, s->bw.released[i]);
	s->bw.nr_released = 0;
	s->commits++;
	s->uncommitted = 0;
	return 0;
}

int bch_set_commit(struct bch_set *s)
{
	int r;

	s->in_commit = true;
	r = commit(s);
	s->in_commit = false;
	return r;
}

static void prio_entry(void *ctx, u64 bucket, struct bch_prio_entry *e)
{
	const struct bch_alloc *a = ctx;
	const struct bch_bucket *b = &a->b[bucket];

	e->gen = a->gens[bucket];
	e->prio = b->state == BCH_BUCKET_META ? BCH_BTREE_PRIO : b->prio;
}

/*
 * A new prio chain recording every bucket's gen and priority, named by a
 * journal entry; then the old chain's buckets are released.
 */
static int write_prios(struct bch_set *s)
{
	const struct bch_geom *g = &s->g;
	u64 *chain;
	u32 i;
	int r;

	chain = bch_zalloc(g->nr_prio_buckets * sizeof(*chain));
	if (!chain)
		return -ENOMEM;
	for (i = 0, r = 0; i < g->nr_prio_buckets && !r; i++)
		r = bch_alloc_prio(&s->a, &chain[i]);
	if (r) {
		while (--i > 0)
			bch_alloc_release(&s->a, chain[i - 1]);
		bch_free(chain);
		return r;
	}
	r = bch_prio_write(s->io, g, chain, ++s->prio_seq, prio_entry, &s->a,
			   s->buf);
	if (r) {
		/* Nothing names the new chain: its buckets are free again. */
		for (i = 0; i < g->nr_prio_buckets; i++)
			bch_alloc_release(&s->a, chain[i]);
		bch_free(chain);
		return r;
	}
	s->jw.head.prio_bucket[g->nr_this_dev] = cpu_to_le64(chain[0]);
	r = journal_head(s);
	if (r) {
		/*
		 * The entry may be on disk naming the new chain: its buckets
		 * stay taken (the set is failing; the next open recounts).
		 */
		bch_free(chain);
		return r;
	}
	for (i = 0; i < g->nr_prio_buckets; i++)
		bch_alloc_release(&s->a, s->prio_chain[i]);
	bch_free(s->prio_chain);
	s->prio_chain = chain;
	return 0;
}

int bch_set_refill(struct bch_set *s, u64 want)
{
	u64 got;
	int r;

	r = journal_room(s);
	if (r)
		return r;
	excl(s, true);
	got = bch_alloc_invalidate(&s->a, want);
	/*
	 * The new prio chain takes nr_prio_buckets: with no more than that
	 * pending, a refill frees nothing (the old chain's buckets, released
	 * after it, are all the next one would find).
	 */
	if (s->a.nr_pending <= s->g.nr_prio_buckets) {
		excl(s, false);
		return -ENOSPC;
	}
	if (s->reuse_fence)
		s->reuse_fence(s->reuse_ctx);
	excl(s, false);
	/* The new chain may go into a reclaimed bucket: nothing in flight. */
	if (s->reuse_wait)
		s->reuse_wait(s->reuse_ctx);
	r = write_prios(s);
	if (r)
		return r;
	/* What reclaim found (the new chain may have taken some of it). */
	s->reclaimed += got;
	bch_alloc_commit(&s->a);
	s->refills++;
	return 0;
}

int bch_set_save_prios(struct bch_set *s)
{
	return journal_room(s) ?: write_prios(s);
}

static bool live_key(void *ctx, const struct bch_key *k)
{
	struct bch_set *s = ctx;

	return bch_key_live(&s->g, s->a.gens, k);
}

/* Drop a leaf's stale keys when they are many or old. */
static int gc_leaf(struct bch_set *s, struct bch_bnode *n)
{
	u32 i, j, stale = 0, total = 0, worst = 0;
	u64 b;
	int r;

	for (i = 0; i < n->ks.nr_sets; i++)
		for (j = 0; j < n->ks.set[i].e.nr; j++) {
			const struct bch_key *k = &n->ks.set[i].e.k[j];

			total++;
			if (live_key(s, k))
				continue;
			stale++;
			b = bch_key_ptrs(k) ? bch_ptr_bucket(&s->g, k->ptr[0]) :
					     s->a.nbuckets;
			if (b < s->a.nbuckets)
				worst = max(worst, bch_gen_lag(s->a.gens[b],
							       bch_ptr_gen(k->ptr[0])));
		}
	if (!stale || (stale * 4 < total && worst < BCH_GC_GEN_MAX / 2))
		return 0;
	excl(s, true);
	r = bch_keyset_filter(&n->ks, live_key, s);
	if (r >= 0)
		n->rewrite = true;
	excl(s, false);
	return r < 0 ? r : 0;
}

/*
 * gc's count of the live data the keys of leaf @n point to: every key
 * for the clean count and oldest gens, only the visible part of a dirty
 * key for the dirty count; and, for coalescing at the end, the keys the
 * leaf would hold merged, counted here with readers in.
 */
static void count_leaf(struct bch_set *s, struct bch_bnode *n)
{
	u32 i, j;

	for (i = 0; i < n->ks.nr_sets; i++)
		for (j = 0; j < n->ks.set[i].e.nr; j++)
			bch_alloc_count_key(&s->a, &n->ks.set[i].e.k[j]);
	n->gc_count = visible_dirty(s, &n->ks, bch_alloc_count_dirty);
	n->gc_counted = true;
}

/* The end of a pass: merges, the counts installed, a commit. */
static int gc_finish(struct bch_set *s)
{
	int r;

	/*
	 * Nodes left nearly empty merge; the commit below names the smaller
	 * tree and only then frees the buckets of the nodes that went.
	 */
	excl(s, true);
	r = bch_btree_coalesce(&s->t);
	excl(s, false);
	if (r == -ENOMEM)	/* merges made so far leave a valid tree */
		r = 0;
	/*
	 * The counts are installed only once the nodes on disk hold every
	 * key they were made from: a dirty key masked only in memory (or in
	 * the journal) is still visible in the nodes, and its bucket's gen
	 * must not be raised and persisted until they are rewritten.
	 */
	r = r ?: bch_set_commit(s);
	if (r)
		bch_alloc_count_cancel(&s->a);
	else
		bch_alloc_count_end(&s->a);
	free_view(s);
	s->gc_running = false;
	s->gcs++;
	return r;
}

int bch_set_gc_step(struct bch_set *s, u32 leaves)
{
	struct bch_bnode *n;
	int r;

	if (!s->gc_running) {
		/* Nothing is live until a key says so (alloc.h). */
		bch_alloc_count_begin(&s->a);
		s->gc_running = true;
		s->gc_inode = 0;
		s->gc_offset = 0;
	}
	for (; leaves; leaves--) {
		n = bch_btree_leaf_after(&s->t, s->gc_inode, s->gc_offset);
		r = gc_leaf(s, n);
		if (r) {
			bch_alloc_count_cancel(&s->a);
			free_view(s);
			s->gc_running = false;
			return r;
		}
		count_leaf(s, n);
		if (!bch_key_cmp_pos(&n->key, bch_key_inode(&bch_max_key),
				     bch_max_key.low))
			return gc_finish(s);
		s->gc_inode = bch_key_inode(&n->key);
		s->gc_offset = n->key.low;
	}
	return 1;
}

int bch_set_gc(struct bch_set *s)
{
	int r;

	do {
		r = bch_set_gc_step(s, ~0U);
	} while (r == 1);
	return r;
}

/* @c, as a lookup saw it, clipped to [@from, @to). */
static void clip(struct bch_key *out, const struct bch_key *c, u64 from,
		 u64 to)
{
	*out = *c;
	if (from > bch_key_start(out))
		bch_key_cut_front(out, from);
	if (to < out->low)
		bch_key_cut_back(out, to);
}

u32 bch_set_dirty_scan(const struct bch_set *s, u64 inode, u64 *pos, u64 end,
		       struct bch_key *out, u32 max, u32 max_lookups)
{
	u64 sector = *pos, next;
	u32 n = 0, lookups = 0;

	while (sector < end && n < max && lookups < max_lookups) {
		const struct bch_key *k = bch_btree_lookup(&s->t, inode, sector,
							   &next);

		lookups++;
		next = max(min(next, end), sector + 1);
		if (k && bch_key_dirty(k) && bch_key_live(&s->g, s->a.gens, k))
			clip(&out[n++], k, sector, next);
		sector = next;
	}
	*pos = sector;
	return n;
}

/*
 * Is @c (a key a lookup returned) still the dirty data of piece @k, whose
 * pointer minus start is @rel?  The same device, gen and placement
 * relative to the start mean the same sectors written by the same
 * write: a bucket holding dirty data is never reused, so nothing else
 * can have been written there since.
 */
static bool same_dirty_data(const struct bch_key *c, const struct bch_key *k,
			    u64 rel)
{
	return bch_key_dirty(c) && bch_key_ptrs(c) &&
	       bch_ptr_dev(c->ptr[0]) == bch_ptr_dev(k->ptr[0]) &&
	       bch_ptr_gen(c->ptr[0]) == bch_ptr_gen(k->ptr[0]) &&
	       bch_ptr_offset(c->ptr[0]) - bch_key_start(c) == rel;
}

u32 bch_set_clean_pieces(const struct bch_set *s, const struct bch_key *k,
			 struct bch_key *out, u32 max)
{
	u64 inode = bch_key_inode(k), sector, next, rel;
	u32 n = 0;

	if (!bch_key_ptrs(k) || !bch_key_size(k) || bch_key_size(k) > k->low)
		return 0;
	rel = bch_ptr_offset(k->ptr[0]) - bch_key_start(k);
	for (sector = bch_key_start(k); sector < k->low && n < max;
	     sector = next) {
		const struct bch_key *c = bch_btree_lookup(&s->t, inode, sector,
							   &next);

		next = max(min(next, k->low), sector + 1);
		if (c && same_dirty_data(c, k, rel)) {
			clip(&out[n], c, sector, next);
			bch_key_set_dirty(&out[n++], false);
		}
	}
	return n;
}

static void uuid_key(struct bch_set *s, u64 bucket, struct bch_key *k)
{
	bch_key_init(k, 0, 0, s->g.meta_bucket_bytes / 512, false);
	bch_key_add_ptr(k, bch_make_ptr(s->g.nr_this_dev,
					bch_bucket_sector(&s->g, bucket),
					s->a.gens[bucket]));
}

/* Does the journal name a table in the legacy layout (jset version 0)? */
static bool uuid_legacy(const struct bch_set *s)
{
	return le32_to_cpu(s->jw.head.version) < 1;
}

/*
 * Read the table (in the current layout, converted if legacy): the slot
 * holding @uuid (or -ENOENT), and a free one.
 */
static int uuid_find(struct bch_set *s, const u8 uuid[16], int *free)
{
	struct bch_uuid_entry_disk *t = s->buf;
	int found = -ENOENT;
	u32 i;
	int r;

	r = s->io->read(s->io->ctx, bch_bucket_sector(&s->g, s->uuid_bucket),
			s->buf, s->g.meta_bucket_bytes);
	if (r)
		return r;
	if (uuid_legacy(s))
		bch_uuid_table_from_v0(s->buf, s->g.nr_uuids);
	*free = -1;
	for (i = 0; i < s->g.nr_uuids; i++) {
		if (found < 0 && !memcmp(t[i].uuid, uuid, 16))
			found = i;
		if (*free < 0 && bch_uuid_slot_kind(t[i].uuid) == BCH_UUID_FREE)
			*free = i;
	}
	return found;
}

int bch_set_uuid_lookup(struct bch_set *s, const u8 uuid[16])
{
	int free;

	return uuid_find(s, uuid, &free);
}

int bch_set_uuid_slot(struct bch_set *s, const u8 uuid[16],
		      const char *label, bool fresh)
{
	struct bch_uuid_entry_disk *e;
	struct bch_key k;
	u64 bucket, old = s->uuid_bucket;
	int r, slot;

	/*
	 * A legacy table is rewritten in the current layout, as the driver
	 * does at start-up, the first time the set looks at it: the entries
	 * the set writes from then on say version 1, which names the layout.
	 */
	bool legacy = uuid_legacy(s);

	r = uuid_find(s, uuid, &slot);
	if (r != -ENOENT && (r < 0 || (!fresh && !legacy)))
		return r;
	if (slot < 0 && (r == -ENOENT || fresh))
		return -ENOSPC;
	r = journal_room(s);
	if (r)
		return r;
	r = bch_alloc_meta(&s->a, &bucket);
	if (r == -ENOSPC) {
		r = bch_set_refill(s, bch_set_refill_batch(s));
		if (!r)
			r = bch_alloc_meta(&s->a, &bucket);
	}
	if (r)
		return r;
	/* A refill uses the buffer: read the table again, then add. */
	r = uuid_find(s, uuid, &slot);
	if (r >= 0 && !fresh) {		/* legacy: the slot as it was */
		slot = r;
		r = s->io->write(s->io->ctx, bch_bucket_sector(&s->g, bucket),
				 s->buf, s->g.meta_bucket_bytes);
	} else if (r >= 0) {	/* fresh: retire the old slot */
		e = (struct bch_uuid_entry_disk *)s->buf + r;
		memcpy(e->uuid, bch_invalid_uuid, 16);
		e->invalidated = cpu_to_le32(bch_now_seconds());
		r = -ENOENT;
	}
	if (r == -ENOENT && slot < 0)
		r = -ENOSPC;
	if (r == -ENOENT) {
		e = (struct bch_uuid_entry_disk *)s->buf + slot;
		memset(e, 0, sizeof(*e));
		memcpy(e->uuid, uuid, 16);
		memcpy(e->label, label, min(strlen(label), sizeof(e->label)));
		e->first_reg = cpu_to_le32(bch_now_seconds());
		e->last_reg = e->first_reg;
		r = s->io->write(s->io->ctx, bch_bucket_sector(&s->g, bucket),
				 s->buf, s->g.meta_bucket_bytes);
	}
	if (r) {
		bch_alloc_release(&s->a, bucket);
		return r;
	}
	uuid_key(s, bucket, &k);
	memset(s->jw.head.uuid_bucket, 0, sizeof(s->jw.head.uuid_bucket));
	bch_key_encode(&k, s->jw.head.uuid_bucket);
	s->jw.head.version = cpu_to_le32(BCH_JSET_VERSION);
	r = journal_head(s);
	if (r)
		return r;
	s->uuid_bucket = bucket;
	bch_alloc_release(&s->a, old);
	return slot;
}
