// SPDX-License-Identifier: GPL-2.0
/* Salvaging a damaged cache's index; see salvage.h. */
#include "repair/salvage.h"
#include "repair/orphans.h"
#include "repair/headless.h"
#include "alloc/prio_read.h"
#include "btree/children.h"
#include "btree/extents.h"
#include "format/bset.h"
#include "format/uuid.h"
#include "journal/journal_read.h"
#include "util/array.h"

#define MAX_DEPTH	8	/* as the checker: far beyond any real tree */

struct walker {
	struct bch_salvage *sv;
	const struct bch_meta_io *io;
	const struct bch_salvage_given *given;
	bch_salvage_note_fn note;
	void *ctx;
	void *buf;			/* one node image */
	u8 *slots;			/* per UUID slot: in use */
	u32 nr_slots;
	/* Below a damaged interior node, whose whole range is listed. */
	bool listed;
	u8 *visited;			/* per bucket: a node read from it */
	bool table_fallback;		/* the UUID table is not the newest's */
};

/* A node being read: its keys, and whether any had to be left out. */
struct node_read {
	struct walker *w;
	u32 level;
	struct bch_ikey *kids;		/* interior nodes */
	u32 nr_kids, cap_kids;
	bool bad_key;
	int err;
};

static __printf(2, 3) void say(struct walker *w, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!w->note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->note(w->ctx, msg);
}

int bch_salvage_lose(struct bch_salvage *sv, u64 inode, u64 start, u64 end,
		     const char *why)
{
	struct bch_lost *l;

	if (start >= end)
		return 0;
	if (sv->nr_lost) {
		l = &sv->lost[sv->nr_lost - 1];
		if (l->inode == inode && l->end == start && l->why == why) {
			l->end = end;
			return 0;
		}
	}
	if (bch_array_grow((void **)&sv->lost, &sv->cap_lost, sv->nr_lost,
			   sv->nr_lost + 1, sizeof(*sv->lost), 16))
		return -ENOMEM;
	sv->lost[sv->nr_lost++] = (struct bch_lost){ inode, start, end, why };
	return 0;
}

/*
 * Keys between positions (@lo_inode, @lo_off) and @hi are lost: list
 * the sectors they cover in every origin the UUID table has in use (keys
 * of free or retired slots address nothing anyone reads).
 */
static int lose_range(struct walker *w, u64 lo_inode, u64 lo_off,
		      const struct bch_key *hi, const char *why)
{
	u64 hi_inode = bch_key_inode(hi), i;
	int r = 0;

	if (w->listed)
		return 0;
	for (i = lo_inode; i <= hi_inode && i < w->nr_slots && !r; i++) {
		u64 start = i == lo_inode ? lo_off : 0;
		u64 end = i == hi_inode ? hi->low : BCH_LOST_TO_END;

		if (w->slots[i])
			r = bch_salvage_lose(w->sv, i, start, end, why);
	}
	return r;
}

/*
 * An extent the rebuilt set cannot keep: invalid as the driver judges
 * it, past the maximum key, or with data in a journal bucket (the journal stays where the
 * superblock puts it, so the rebuilt set would hold a bucket twice).
 */
bool bch_salvage_bad_extent(const struct bch_salvage *sv,
			    const struct bch_key *k)
{
	u32 i, p;

	/* Past the maximum key, no node of a rebuilt tree can hold it. */
	if (bch_extent_invalid(k, &sv->g.kg) || bch_key_cmp(k, &bch_max_key) > 0)
		return true;
	for (p = 0; p < bch_key_ptrs(k); p++)
		for (i = 0; i < sv->sb.keys; i++)
			if (bch_ptr_bucket(&sv->g, k->ptr[p]) == sv->sb.d[i])
				return true;
	return false;
}

static int add_key(struct bch_salvage *sv, const struct bch_key *k)
{
	if (bch_array_grow((void **)&sv->keys, &sv->cap_keys, sv->nr_keys,
			   sv->nr_keys + 1, sizeof(*sv->keys), 256))
		return -ENOMEM;
	sv->keys[sv->nr_keys++] = *k;
	return 0;
}

static int take_bset(void *ctx, const struct bch_bset_disk *b, u32 block,
		     u32 index)
{
	struct node_read *nr = ctx;
	struct bch_salvage *sv = nr->w->sv;
	u32 u64s = le32_to_cpu(b->keys), at = 0;
	struct bch_key prev;
	bool have_prev = false;

	(void)block;
	(void)index;
	while (at < u64s && !nr->err) {
		struct bch_key k;
		u32 n = bch_key_decode(b->d + at, u64s - at, &k);

		if (!n) {
			nr->bad_key = true;
			break;
		}
		at += n;
		if (nr->level) {
			nr->err = bch_array_grow((void **)&nr->kids,
						 &nr->cap_kids, nr->nr_kids,
						 nr->nr_kids + 1,
						 sizeof(*nr->kids), 64);
			if (!nr->err) {
				nr->kids[nr->nr_kids].k = k;
				nr->kids[nr->nr_kids].order = nr->nr_kids;
				nr->nr_kids++;
			}
			continue;
		}
		if (!bch_key_size(&k))
			continue;	/* deleted: the driver drops it */
		if (bch_salvage_bad_extent(sv, &k)) {
			nr->bad_key = true;
			sv->keys_dropped++;
			continue;
		}
		/*
		 * Out of order or overlapping within one bset: which of
		 * the two a lookup answered with is unknown.
		 */
		if (have_prev && (bch_key_cmp(&k, &prev) < 0 ||
				  (bch_key_inode(&k) == bch_key_inode(&prev) &&
				   bch_key_start(&k) < prev.low)))
			nr->bad_key = true;
		prev = k;
		have_prev = true;
		/* The recovery rule, as the checker applies it to extents. */
		bch_gen_adopt(&sv->g, sv->gens, k.ptr[0]);
		nr->err = add_key(sv, &k);
	}
	return nr->err;
}

/*
 * A damaged leaf's valid bsets: of what lookups saw in them, keep the
 * dirty data only.  The lost bsets were newer and may have covered any
 * of it, so all of it is listed as lost either way; but dirty data is
 * the only copy of the writes it holds, while the origin holds clean
 * data's contents or newer ones (a clean piece kept here could hide a
 * newer write that went around the cache).
 */
static int keep_dirty(struct bch_salvage *sv, u32 first)
{
	struct bch_extents seen;
	u32 i;
	int r = 0;

	bch_extents_init(&seen);
	for (i = first; i < sv->nr_keys && !r; i++)
		r = bch_extents_insert(&seen, &sv->keys[i]);
	sv->nr_keys = first;
	for (i = 0; i < seen.nr && !r; i++)
		if (bch_key_dirty(&seen.k[i]) && bch_key_ptrs(&seen.k[i]))
			r = add_key(sv, &seen.k[i]);
	bch_extents_free(&seen);
	return r;
}

static int walk_node(struct walker *w, const struct bch_key *nk, u32 level,
		     u64 lo_inode, u64 lo_off);

static bool is_live(void *ctx, const struct bch_key *k)
{
	struct walker *w = ctx;

	return bch_key_live(&w->sv->g, w->sv->gens, k);
}

/*
 * The live child at each position, in order; what no live child covers
 * up to the node's own key is lost.  Returns 0 or -ENOMEM.
 */
static int walk_children(struct walker *w, struct node_read *nr,
			 const struct bch_key *nk, u64 lo_inode, u64 lo_off)
{
	struct bch_salvage *sv = w->sv;
	u32 i, j;
	int r = 0;

	for (i = 0; i < nr->nr_kids; i++)
		bch_gen_adopt(&sv->g, sv->gens, nr->kids[i].k.ptr[0]);
	bch_ikeys_sort(nr->kids, nr->nr_kids);
	for (i = 0; i < nr->nr_kids && !r; i = j) {
		struct bch_ipick p;

		j = bch_ikeys_pick(nr->kids, nr->nr_kids, i, &sv->g.kg,
				   is_live, w, &p);
		if (!p.live || p.freeing || bch_key_cmp(p.live, nk) > 0 ||
		    bch_key_cmp_pos(p.live, lo_inode, lo_off) <= 0)
			continue;
		/* Two live children here: which one lookups used is unknown. */
		if (p.second)
			r = lose_range(w, lo_inode, lo_off, p.live,
				       "two live btree children");
		else
			r = walk_node(w, p.live, nr->level - 1, lo_inode,
				      lo_off);
		lo_inode = bch_key_inode(p.live);
		lo_off = p.live->low;
	}
	if (!r && bch_key_cmp_pos(nk, lo_inode, lo_off) > 0)
		r = lose_range(w, lo_inode, lo_off, nk, "btree node lost");
	return r;
}

static int walk_node(struct walker *w, const struct bch_key *nk, u32 level,
		     u64 lo_inode, u64 lo_off)
{
	struct bch_salvage *sv = w->sv;
	struct node_read nr = { .w = w, .level = level };
	u64 bucket = bch_ptr_bucket(&sv->g, nk->ptr[0]);
	struct bch_node_info info;
	const char *err = NULL;
	u32 first_key = sv->nr_keys, i;
	int r;

	sv->nodes++;
	if (bch_key_size(nk) != sv->g.btree_sectors)
		err = "wrong node size";
	else if (bucket < sv->g.kg.nbuckets && w->visited[bucket]++)
		err = "reached twice";	/* a loop, or a shared child */
	else if (w->io->read(w->io->ctx, bch_ptr_offset(nk->ptr[0]), w->buf,
			     (size_t)sv->g.btree_sectors * 512))
		err = "unreadable";
	else
		err = bch_node_parse(w->buf, sv->g.btree_sectors, nk->ptr[0],
				     &sv->g, &info, take_bset, &nr);
	if (nr.err) {
		bch_free(nr.kids);
		return nr.err;
	}
	/* A leaf's keys must lie in the range its parent gives it. */
	for (i = first_key; !level && i < sv->nr_keys; i++) {
		const struct bch_key *k = &sv->keys[i];

		if (bch_key_cmp(k, nk) > 0 ||
		    bch_key_cmp_pos(k, lo_inode, lo_off) <= 0 ||
		    (bch_key_inode(k) == lo_inode &&
		     bch_key_start(k) < lo_off)) {
			nr.bad_key = true;
			break;
		}
	}
	if (i < sv->nr_keys && !level) {
		/* Keys out of place: none of the node's can be trusted. */
		sv->keys_dropped += sv->nr_keys - first_key;
		sv->nr_keys = first_key;
	}
	if (!err && nr.bad_key)
		err = "invalid keys";
	if (err) {
		sv->nodes_damaged++;
		say(w, "btree node bucket %llu (level %u, up to %llu:%llu): %s; range lost",
		    bucket, level, bch_key_inode(nk), nk->low, err);
		r = lose_range(w, lo_inode, lo_off, nk, "btree node damaged");
		if (!r && !level)
			r = keep_dirty(sv, first_key);
		if (!r && level) {
			bool was = w->listed;

			w->listed = true;
			r = walk_children(w, &nr, nk, lo_inode, lo_off);
			w->listed = was;
		}
	} else {
		r = level ? walk_children(w, &nr, nk, lo_inode, lo_off) : 0;
	}
	bch_free(nr.kids);
	return r;
}

static int walk_tree(struct walker *w, const struct bch_jset_disk *j)
{
	struct bch_salvage *sv = w->sv;
	u32 level = le16_to_cpu(j->btree_level);
	struct bch_key root;
	const char *err;

	bch_key_decode(j->btree_root, BCH_BKEY_PAD_U64S, &root);
	err = bch_btree_ptr_invalid(&root, &sv->g.kg);
	if (!err && bch_key_cmp(&root, &bch_max_key))
		err = "not at the maximum key";
	if (!err && level >= MAX_DEPTH)
		err = "level too high";
	if (!err) {
		bch_gen_adopt(&sv->g, sv->gens, root.ptr[0]);
		if (!is_live(w, &root))
			err = "stale";
	}
	if (err) {
		sv->root_lost = true;
		say(w, "btree root in journal seq %llu: %s; the whole tree is lost",
		    sv->newest_seq, err);
		return lose_range(w, 0, 0, &bch_max_key, "btree root lost");
	}
	w->buf = bch_zalloc((size_t)sv->g.btree_sectors * 512);
	if (!w->buf)
		return -ENOMEM;
	return walk_node(w, &root, level, 0, 0);
}

/* Dirty data of nodes outside the tree, for the ranges it lost. */
static int keep_orphans(struct walker *w, const struct bch_meta_io *io)
{
	struct bch_salvage *sv = w->sv;
	int r = bch_orphans_keep(sv, io, w->visited);

	if (r)
		return r;
	say(w, "scan: %llu btree nodes outside the tree, %llu more damaged",
	    sv->orphan_nodes, sv->orphan_nodes_bad);
	say(w, "scan: %u dirty extents of theirs kept in lost ranges, %u left out (nodes disagree)",
	    sv->orphan_keys, sv->orphan_conflicts);
	return 0;
}

static int alloc_slots(struct walker *w)
{
	struct bch_salvage *sv = w->sv;

	w->nr_slots = sv->g.meta_bucket_bytes /
		      sizeof(struct bch_uuid_entry_disk);
	sv->uuids = bch_zalloc(sv->g.meta_bucket_bytes);
	w->slots = bch_zalloc(w->nr_slots);
	return sv->uuids && w->slots ? 0 : -ENOMEM;
}

static void take_slots(struct walker *w, const void *table)
{
	const struct bch_uuid_entry_disk *t = table;
	u32 i;

	for (i = 0; i < w->nr_slots; i++)
		w->slots[i] = bch_uuid_slot_kind(t[i].uuid) == BCH_UUID_IN_USE;
}

/* The table @j names, into sv->uuids, if it reads and every slot is sound. */
static bool read_table(struct walker *w, const struct bch_meta_io *io,
		       const struct bch_jset_disk *j, void *copy)
{
	struct bch_salvage *sv = w->sv;
	const struct bch_uuid_entry_disk *t = copy;
	struct bch_key k;
	u32 i;

	bch_key_decode(j->uuid_bucket, BCH_BKEY_PAD_U64S, &k);
	if (bch_btree_ptr_invalid(&k, &sv->g.kg))
		return false;
	/* A table whose bucket was reused since holds something else. */
	bch_gen_adopt(&sv->g, sv->gens, k.ptr[0]);
	if (!bch_key_live(&sv->g, sv->gens, &k) ||
	    io->read(io->ctx, bch_ptr_offset(k.ptr[0]), sv->uuids,
		     sv->g.meta_bucket_bytes))
		return false;
	memcpy(copy, sv->uuids, sv->g.meta_bucket_bytes);
	if (le32_to_cpu(j->version) < 1)
		bch_uuid_table_from_v0(copy, w->nr_slots);
	/* The checker's rule: every slot but a free one must be sound. */
	for (i = 0; i < w->nr_slots; i++)
		if (bch_uuid_slot_kind(t[i].uuid) != BCH_UUID_FREE &&
		    bch_uuid_entry_validate(&t[i]))
			return false;
	take_slots(w, copy);
	sv->jset_version = le32_to_cpu(j->version);
	return true;
}

/*
 * The UUID table the newest entry names, or else the newest one an
 * older valid entry names (the table moves only when a slot is taken,
 * so an older one most often still says where every origin is).
 */
static int read_uuids(struct walker *w, const struct bch_meta_io *io,
		      struct bch_jscan *js)
{
	struct bch_salvage *sv = w->sv;
	struct bch_jset_disk *j;
	__le64 tried;
	void *copy;
	bool ok;
	u32 i;

	if (alloc_slots(w))
		return -ENOMEM;
	copy = bch_zalloc(sv->g.meta_bucket_bytes);
	if (!copy)
		return -ENOMEM;
	ok = read_table(w, io, &js->newest, copy);
	if (!ok)
		say(w, "the UUID table journal seq %llu names is damaged or unreadable",
		    sv->newest_seq);
	bch_jscan_sort(js);
	tried = js->newest.uuid_bucket[1];
	for (i = js->nr; !ok && i-- > 0;) {
		if (!js->e[i].valid || js->e[i].seq >= sv->newest_seq ||
		    bch_jscan_read(io, &sv->sb, &sv->g, &js->e[i], &j))
			continue;
		/* The same table as the one tried last: damaged there too. */
		if (j->uuid_bucket[1] != tried) {
			tried = j->uuid_bucket[1];
			ok = read_table(w, io, j, copy);
		}
		if (ok) {
			say(w, "UUID table: the one journal seq %llu names is used",
			    js->e[i].seq);
			w->table_fallback = true;
		}
		bch_free(j);
	}
	bch_free(copy);
	if (!ok) {
		say(w, "UUID table lost: no origin's slot is known");
		memset(sv->uuids, 0, sv->g.meta_bucket_bytes);
		sv->uuids_lost = true;
	}
	return 0;
}

/*
 * A journal key: an invalid one is left out, and the range it names,
 * if it names one in an origin in use, is listed as lost.
 */
static int take_jkey(void *ctx, const struct bch_key *k)
{
	struct walker *w = ctx;
	struct bch_salvage *sv = w->sv;
	u64 inode = bch_key_inode(k);

	if (!bch_salvage_bad_extent(sv, k)) {
		if (bch_key_ptrs(k))
			bch_gen_adopt(&sv->g, sv->gens, k->ptr[0]);
		return add_key(sv, k);
	}
	sv->keys_dropped++;
	say(w, "journal key at %llu:%llu (%u sectors): invalid; left out",
	    inode, k->low, bch_key_size(k));
	if (inode < w->nr_slots && w->slots[inode])
		return bch_salvage_lose(sv, inode, bch_key_start(k), k->low,
					"invalid journal key");
	return 0;
}

/*
 * Seqs of the replay range with no valid entry: their keys are lost.  By
 * the gaps between the entries found, not seq by seq: a damaged header
 * may put last_seq anywhere below the newest seq.
 */
static void count_missing(struct walker *w, const struct bch_jscan *js)
{
	struct bch_salvage *sv = w->sv;
	u64 want = le64_to_cpu(js->newest.last_seq);
	u32 i;

	/* bch_jscan_replay() sorted the entries by seq. */
	for (i = 0; i < js->nr; i++) {
		u64 seq = js->e[i].seq;

		if (!js->e[i].valid || seq < want || seq > sv->newest_seq)
			continue;
		if (seq > want) {
			sv->journal_missing += seq - want;
			say(w, "journal entries %llu-%llu missing: the writes they logged are lost",
			    want, seq - 1);
		}
		want = seq + 1;
	}
}

/*
 * A journal key when the replay range is unknown: its range is listed
 * (bch_jscan_replay() hands on only keys whose size fits their offset).
 */
static int lose_jkey(void *ctx, const struct bch_key *k)
{
	struct walker *w = ctx;
	u64 inode = bch_key_inode(k);

	if (inode >= w->nr_slots || !w->slots[inode])
		return 0;
	return bch_salvage_lose(w->sv, inode, bch_key_start(k), k->low,
				"journal replay range unknown");
}

/*
 * The journal's keys after the tree's, from the newest entry's last_seq
 * on.  When that is past the newest seq itself, where replay starts is
 * unknown: nothing is replayed (entries older than the real start could
 * put back data written over since) and every key any valid entry holds
 * is listed instead.
 */
static int replay_journal(struct walker *w, const struct bch_meta_io *io,
			  struct bch_jscan *js)
{
	struct bch_salvage *sv = w->sv;
	u64 last = le64_to_cpu(js->newest.last_seq);
	int r;

	if (last <= sv->newest_seq) {
		r = bch_jscan_replay(io, &sv->sb, &sv->g, js, take_jkey, w);
		if (!r)
			count_missing(w, js);
	} else {
		say(w, "journal seq %llu: last_seq %llu is past it: replay's start unknown",
		    sv->newest_seq, last);
		say(w, "journal: nothing replayed; every range it logs is listed");
		js->newest.last_seq = 0;
		r = bch_jscan_replay(io, &sv->sb, &sv->g, js, lose_jkey, w);
	}
	sv->journal_cut = js->cut_short;
	if (js->cut_short)
		say(w, "journal: %u entries cut short by a key that does not decode",
		    js->cut_short);
	return r;
}

static int read_prios(struct walker *w, const struct bch_meta_io *io,
		      u64 head)
{
	struct bch_salvage *sv = w->sv;
	struct bch_prio_result res;
	int r;

	sv->gens = bch_zalloc(sv->g.kg.nbuckets);
	sv->prios = bch_zalloc(sv->g.kg.nbuckets * sizeof(*sv->prios));
	if (!sv->gens || !sv->prios)
		return -ENOMEM;
	r = bch_prio_read(io, &sv->g, head, sv->gens, sv->prios, NULL, &res);
	if (r == -ENOMEM)
		return r;
	if (r) {
		say(w, "prio chain from bucket %llu unreadable: bucket generations are unknown",
		    head);
		return -ENODATA;
	}
	if (w->given->prio && res.mixed_seq) {
		say(w, "the prio chain from bucket %llu is not one prio write: %s",
		    head, "its links' seqs differ");
		return -ENODATA;
	}
	/* The rebuilt set's prio write must be newer than any link. */
	sv->prio_seq = res.seq;
	return 0;
}

/*
 * Keys of slots the table used does not have in use are left out: a
 * retired slot's are dead, and a free slot may be handed to a new origin,
 * which must not find them.  When that table is not the newest (an older
 * one, or none could be read), those slots may have been origins in use:
 * everything they held is listed as lost.
 */
static int drop_unslotted(struct walker *w)
{
	struct bch_salvage *sv = w->sv;
	bool list = w->table_fallback || sv->uuids_lost;
	u8 *listed = NULL;
	u32 i, n = 0, tree = 0;
	int r = 0;

	if (list) {
		listed = bch_zalloc((BCH_KEY_MAX_INODE + 1) / 8);
		if (!listed)
			return -ENOMEM;
	}
	for (i = 0; i < sv->nr_keys && !r; i++) {
		const struct bch_key *k = &sv->keys[i];
		u64 inode = bch_key_inode(k);

		if (inode < w->nr_slots && w->slots[inode]) {
			sv->keys[n++] = *k;
			tree += i < sv->tree_keys;
			continue;
		}
		sv->keys_unslotted++;
		if (!list ||
		    (listed[inode / 8] & (1 << (inode % 8))))
			continue;
		listed[inode / 8] |= 1 << (inode % 8);
		r = bch_salvage_lose(sv, inode, 0, BCH_LOST_TO_END,
				     sv->uuids_lost ? "UUID table lost" :
				     "slot not in the UUID table used");
	}
	sv->nr_keys = n;
	sv->tree_keys = tree;
	bch_free(listed);
	return r;
}

/* The salvage when the journal names root, prio chain and UUID table. */
static int salvage_journalled(struct walker *w, const struct bch_meta_io *io,
			      struct bch_jscan *js)
{
	struct bch_salvage *sv = w->sv;
	u64 head = le64_to_cpu(js->newest.prio_bucket[sv->g.nr_this_dev]);
	int r;

	sv->newest_seq = js->newest_seq;
	sv->jset_version = le32_to_cpu(js->newest.version);
	if (w->given->uuids) {
		say(w, "journal seq %llu names the UUID table: --uuid-bucket is for a lost journal",
		    sv->newest_seq);
		return -EINVAL;
	}
	if (w->given->prio) {
		say(w, "prio chain: from bucket %llu as given, %s %llu as journal seq %llu names",
		    w->given->prio_bucket, "not bucket", head, sv->newest_seq);
		head = w->given->prio_bucket;
	}
	r = read_prios(w, io, head);
	if (!r)
		r = read_uuids(w, io, js);
	if (!r)
		r = walk_tree(w, &js->newest);
	if (!r && sv->nr_lost)
		r = keep_orphans(w, io);
	sv->tree_keys = sv->nr_keys;
	if (!r)
		r = replay_journal(w, io, js);
	if (!r)
		r = drop_unslotted(w);
	return r;
}

/* The UUID table as given, or by scanning (repair/headless.h). */
static int scan_uuids(struct walker *w, const struct bch_meta_io *io)
{
	struct bch_salvage *sv = w->sv;
	const struct bch_salvage_given *gv = w->given;
	struct bch_uuid_found f;
	int r = alloc_slots(w);

	if (r)
		return r;
	if (gv->uuids) {
		r = bch_uuid_given(io, &sv->sb, &sv->g, gv->uuid_bucket, sv->uuids);
		if (!r)
			say(w, "UUID table: bucket %llu, as given", gv->uuid_bucket);
		else if (r == -ENODATA)
			say(w, "bucket %llu (given) does not read as a UUID table",
			    gv->uuid_bucket);
	} else {
		r = bch_uuid_scan(io, &sv->sb, &sv->g, sv->uuids, &f);
		if (!r)
			say(w, "UUID table: bucket %llu (%s %u found, stamped %u; %u as new)",
			    f.bucket, "the newest of", f.tables, f.when,
			    f.same - 1);
		else if (r == -ENOTUNIQ)
			say(w, "UUID tables in buckets %llu and %llu, %s %u, disagree: %s",
			    f.bucket, f.other, "both stamped", f.when,
			    "which is current is unknown");
	}
	if (r == -ENOMEM)
		return r;
	if (!r) {
		take_slots(w, sv->uuids);
		/* The table found may be a copy lacking a slot taken since. */
		w->table_fallback = true;
		return 0;
	}
	say(w, "UUID table lost: no origin's slot is known");
	memset(sv->uuids, 0, sv->g.meta_bucket_bytes);
	sv->uuids_lost = true;
	return 0;
}

/* The prio chain as given, or by scanning (repair/headless.h). */
static int scan_prios(struct walker *w, const struct bch_meta_io *io)
{
	struct bch_salvage *sv = w->sv;
	struct bch_prio_found pf;
	int r;

	if (w->given->prio) {
		r = read_prios(w, io, w->given->prio_bucket);
		if (!r)
			say(w, "prio chain: seq %llu from bucket %llu, as given",
			    sv->prio_seq, w->given->prio_bucket);
		return r;
	}
	r = bch_prio_scan(io, &sv->sb, &sv->g, &pf);
	if (r == -ENOTUNIQ)
		say(w, "prio chains from buckets %llu and %llu both have seq %llu: %s",
		    pf.head, pf.other, pf.seq, "which is current is unknown");
	else if (r == -ENODATA)
		say(w, "no whole prio chain among %u prio sets: bucket generations are unknown",
		    pf.sets);
	if (r)
		return r == -ENOTUNIQ ? -ENODATA : r;
	if (pf.cut_seq)
		say(w, "prio sets of seq %llu form no whole chain: a prio write cut short",
		    pf.cut_seq);
	say(w, "prio chain: seq %llu from bucket %llu", pf.seq, pf.head);
	return read_prios(w, io, pf.head);
}

/*
 * No valid journal entry: the prio chain and the UUID table are found by
 * scanning (or named by the administrator), the root is lost with the
 * entries, and so is every write logged only in them, anywhere: every
 * origin's whole range is listed, and the scan for orphaned nodes gives
 * back the dirty data it can.
 */
static int salvage_headless(struct walker *w, const struct bch_meta_io *io)
{
	struct bch_salvage *sv = w->sv;
	int r;

	sv->journal_lost = true;
	sv->root_lost = true;
	sv->jset_version = BCH_JSET_VERSION;
	say(w, "journal: no valid entry: root, prio chain and UUID table %s",
	    "unknown; scanning for the last two");
	r = scan_prios(w, io);
	if (!r)
		r = scan_uuids(w, io);
	/* Neither journal nor table: no key can be tied to an origin. */
	if (!r && sv->uuids_lost)
		r = -ENODATA;
	if (!r)
		r = lose_range(w, 0, 0, &bch_max_key, "journal lost");
	if (!r)
		r = keep_orphans(w, io);
	sv->tree_keys = sv->nr_keys;
	if (!r)
		r = drop_unslotted(w);
	return r;
}

int bch_salvage_read(struct bch_salvage *sv, const struct bch_meta_io *io,
		     const struct bch_sb *sb, bch_salvage_note_fn note,
		     void *ctx)
{
	static const struct bch_salvage_given none;

	return bch_salvage_read_given(sv, io, sb, &none, note, ctx);
}

int bch_salvage_read_given(struct bch_salvage *sv,
			   const struct bch_meta_io *io,
			   const struct bch_sb *sb,
			   const struct bch_salvage_given *given,
			   bch_salvage_note_fn note, void *ctx)
{
	struct walker w = {
		.sv = sv, .io = io, .given = given, .note = note, .ctx = ctx,
	};
	struct bch_jscan js;
	int r;

	memset(sv, 0, sizeof(*sv));
	sv->sb = *sb;
	bch_geom_init(&sv->g, &sv->sb);
	r = bch_jscan_run(io, &sv->sb, &sv->g, &js, NULL, NULL);
	w.visited = bch_zalloc(sv->g.kg.nbuckets);
	if (!r && !w.visited)
		r = -ENOMEM;
	if (!r)
		r = js.have_newest ? salvage_journalled(&w, io, &js) :
				     salvage_headless(&w, io);
	bch_jscan_free(&js);
	bch_free(w.buf);
	bch_free(w.slots);
	bch_free(w.visited);
	if (r)
		bch_salvage_free(sv);
	return r;
}

void bch_salvage_free(struct bch_salvage *sv)
{
	bch_free(sv->gens);
	bch_free(sv->prios);
	bch_free(sv->uuids);
	bch_free(sv->keys);
	bch_free(sv->lost);
	memset(sv, 0, sizeof(*sv));
}
