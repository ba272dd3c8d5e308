// SPDX-License-Identifier: GPL-2.0
/*
 * The checker's journal pass.  Every journal bucket is scanned from its
 * first block, entry after entry, until a block that does not hold a valid
 * entry, as the driver's reader does.  Then:
 *
 *  - no valid entry at all is damage (the driver refuses the set);
 *  - the newest entry's last_seq must not exceed its seq, and every seq
 *    from last_seq to the newest must be present: the driver replays that
 *    range and refuses a gap;
 *  - an entry that has the set's magic but fails its size or checksum
 *    test is damage when it claims a seq inside the replay range that no
 *    valid entry supplies.  One claiming a seq past the newest is class
 *    journal-tail: a torn write of the newest entry, which is what a crash
 *    leaves and what the driver ignores, looks exactly like a damaged one,
 *    so it is reported, and the target's constructor tolerates it.  Below
 *    the replay range it is a note: an old entry nobody reads;
 *  - every key of every entry in the replay range must be a valid extent.
 */
#include "check_priv.h"

struct jentry {
	u64 seq;
	u64 last_seq;
	u32 ring;
	u32 block;
	u32 u64s;
	bool valid;		/* else a damaged one; seq is unverified */
	bool tail;		/* last thing in its bucket */
};

struct jscan {
	struct jentry *e;
	u32 nr;
	u32 cap;
	void *win;		/* window of the bucket being scanned */
	size_t win_bytes;
	u64 win_start;		/* sector of the window in the device */
	size_t win_len;		/* bytes loaded */
};

static int push(struct jscan *s, const struct jentry *e)
{
	if (s->nr == s->cap) {
		u32 cap = s->cap ? 2 * s->cap : 64;
		struct jentry *n = bch_zalloc(cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		if (s->e)
			memcpy(n, s->e, s->nr * sizeof(*n));
		bch_free(s->e);
		s->e = n;
		s->cap = cap;
	}
	s->e[s->nr++] = *e;
	return 0;
}

/* Make [sector, sector + bytes) readable from the window. */
static const void *window(struct bch_chk *c, struct jscan *s, u64 sector,
			  size_t bytes)
{
	if (sector < s->win_start ||
	    (sector - s->win_start) * 512 + bytes > s->win_len) {
		s->win_start = sector;
		s->win_len = min_t(u64, s->win_bytes,
				   (c->io->sectors - sector) * 512);
		if (s->win_len < bytes ||
		    c->io->read(c->io->ctx, sector, s->win, s->win_len))
			return NULL;
	}
	return (const u8 *)s->win + (sector - s->win_start) * 512;
}

static int scan_bucket(struct bch_chk *c, struct jscan *s, u32 ring)
{
	struct bch_geom *g = &c->g;
	u64 bucket = c->res->sb.d[ring];
	u64 base = bch_bucket_sector(g, bucket);
	u32 bsize = g->kg.bucket_size;
	u32 off = 0;

	s->win_start = ~0ULL;
	while (off < bsize) {
		size_t left = (size_t)(bsize - off) * 512;
		size_t want = min_t(size_t, left, BCH_JSET_MAX_BYTES);
		const struct bch_jset_disk *j;
		struct jentry e = { 0 };
		const char *err;
		size_t blocks;

		j = window(c, s, base + off, want);
		if (!j)
			return -EIO;
		err = bch_jset_validate(j, want, g);
		if (err == BCH_JSET_NO_ENTRY)
			break;
		e.seq = le64_to_cpu(j->seq);
		e.last_seq = le64_to_cpu(j->last_seq);
		e.ring = ring;
		e.block = off / g->block_sectors;
		e.u64s = le32_to_cpu(j->keys);
		e.valid = !err;
		if (err) {
			bch_chk_note(c, "journal bucket %llu (ring %u) block %u: %s (seq %llu?)",
				     bucket, ring, e.block, err, e.seq);
			e.tail = true;
			return push(s, &e);
		}
		if (c->ops && c->ops->jset)
			c->ops->jset(c->ops->ctx, j, ring, bucket, e.block,
				     false);
		if (!c->have_newest || e.seq > c->res->newest_seq) {
			memcpy(&c->newest, j, sizeof(c->newest));
			c->have_newest = true;
			c->res->newest_seq = e.seq;
		}
		c->res->journal_entries++;
		blocks = DIV_ROUND_UP(bch_jset_bytes(j),
				      (size_t)g->block_sectors * 512);
		off += blocks * g->block_sectors;
		if (push(s, &e))
			return -ENOMEM;
	}
	if (s->nr && s->e[s->nr - 1].ring == ring)
		s->e[s->nr - 1].tail = true;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct jentry *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (int)y->valid - (int)x->valid;	/* valid ones first */
}

/* Keys of one entry in the replay range: each must be a valid extent. */
static int check_entry_keys(struct bch_chk *c, const struct jentry *e)
{
	struct bch_geom *g = &c->g;
	u64 sector = bch_bucket_sector(g, c->res->sb.d[e->ring]) +
		     (u64)e->block * g->block_sectors;
	size_t bytes = sizeof(struct bch_jset_disk) + 8 * (size_t)e->u64s;
	struct bch_jset_disk *j;
	u32 at = 0;

	bytes = DIV_ROUND_UP(bytes, 512) * 512;
	j = bch_chk_read(c, sector, bytes);
	if (!j)
		return -EIO;
	if (c->ops && c->ops->jset)
		c->ops->jset(c->ops->ctx, j, e->ring, c->res->sb.d[e->ring],
			     e->block, true);
	while (at < e->u64s) {
		struct bch_key k;
		u32 n = bch_key_decode(j->d + at, e->u64s - at, &k);
		const char *err;

		if (!n) {
			bch_chk_damage(c, BCH_DMG_JOURNAL_KEY,
				       "journal seq %llu, word %u: key runs past the entry's end (%u words)",
				       e->seq, at, e->u64s);
			break;
		}
		at += n;
		c->res->journal_keys++;
		if (c->ops && c->ops->jkey)
			c->ops->jkey(c->ops->ctx, &k);
		if (!bch_key_size(&k))
			continue;
		err = bch_extent_invalid(&k, &g->kg);
		if (err) {
			char kt[128];

			bch_key_to_text(kt, sizeof(kt), &k, true);
			bch_chk_damage(c, BCH_DMG_JOURNAL_KEY,
				       "journal seq %llu, word %u: invalid extent %s: %s",
				       e->seq, at - n, kt, err);
		}
	}
	bch_free(j);
	return 0;
}

static int check_sequence(struct bch_chk *c, struct jscan *s)
{
	struct bch_check_result *res = c->res;
	u64 newest = res->newest_seq, last = le64_to_cpu(c->newest.last_seq);
	u64 want = last;
	u32 i;
	int r;

	res->last_seq = last;
	if (last > newest) {
		bch_chk_damage(c, BCH_DMG_JOURNAL_SEQ,
			       "journal seq %llu: last_seq %llu is newer than the entry itself",
			       newest, last);
		return 0;
	}
	bch_sort(s->e, s->nr, sizeof(*s->e), cmp_entry);
	for (i = 0; i < s->nr; i++) {
		struct jentry *e = &s->e[i];
		bool dup = i && s->e[i - 1].seq == e->seq &&
			   s->e[i - 1].valid;

		if (!e->valid) {
			if (e->seq >= last && e->seq <= newest && !dup)
				bch_chk_damage(c, BCH_DMG_JOURNAL_ENTRY,
					       "journal bucket %llu block %u: entry seq %llu in the replay range %llu-%llu is damaged (bad csum or size)",
					       res->sb.d[e->ring], e->block,
					       e->seq, last, newest);
			else if (e->seq > newest)
				bch_chk_damage(c, BCH_DMG_JOURNAL_TAIL,
					       "journal bucket %llu block %u: entry claiming seq %llu after the newest valid one (%llu) fails its checksum: a torn write or damage",
					       res->sb.d[e->ring], e->block,
					       e->seq, newest);
			continue;
		}
		if (e->seq < last || dup)
			continue;
		if (e->seq > want)
			bch_chk_damage(c, BCH_DMG_JOURNAL_SEQ,
				       "journal entries %llu-%llu missing (replay range %llu-%llu)",
				       want, e->seq - 1, last, newest);
		want = e->seq + 1;
		r = check_entry_keys(c, e);
		if (r)
			return r;
	}
	return 0;
}

int bch_chk_journal(struct bch_chk *c)
{
	struct bch_geom *g = &c->g;
	struct jscan s = { 0 };
	u32 ring;
	int r = 0;

	s.win_bytes = min_t(size_t, (size_t)g->kg.bucket_size * 512, 1 << 20);
	s.win = bch_zalloc(s.win_bytes);
	if (!s.win)
		return -ENOMEM;
	for (ring = 0; ring < c->res->sb.keys && !r; ring++)
		r = scan_bucket(c, &s, ring);
	if (!r && !c->have_newest)
		bch_chk_damage(c, BCH_DMG_JOURNAL_EMPTY,
			       "journal: no valid entry in %u buckets from bucket %u (the set is synchronous, so at least one is required)",
			       c->res->sb.keys, c->res->sb.first_bucket);
	if (!r && c->have_newest)
		r = check_sequence(c, &s);
	bch_free(s.e);
	bch_free(s.win);
	return r;
}
