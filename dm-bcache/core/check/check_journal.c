// SPDX-License-Identifier: GPL-2.0
/*
 * The checker's journal pass.  journal_read.c scans the journal as the
 * driver's reader does; this file judges what it found:
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
#include "check/check_priv.h"
#include "journal/journal_read.h"

static void on_entry(void *ctx, const struct bch_jset_disk *j,
		     const char *err, const struct bch_jentry *e, u64 bucket)
{
	struct bch_chk *c = ctx;

	if (err) {
		bch_chk_note(c, "journal bucket %llu (ring %u) block %u: %s (seq %llu?)",
			     bucket, e->ring, e->block, err, e->seq);
		return;
	}
	c->res->journal_entries++;
	if (c->ops && c->ops->jset)
		c->ops->jset(c->ops->ctx, j, e->ring, bucket, e->block, false);
}

/* Keys of one entry in the replay range: each must be a valid extent. */
static int check_entry_keys(struct bch_chk *c, const struct bch_jentry *e)
{
	struct bch_sb *sb = &c->res->sb;
	struct bch_jset_disk *j;
	u32 at = 0;
	int r = bch_jscan_read(c->io, sb, &c->g, e, &j);

	if (r)
		return r;
	if (c->ops && c->ops->jset)
		c->ops->jset(c->ops->ctx, j, e->ring, sb->d[e->ring], e->block,
			     true);
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
		err = bch_extent_invalid(&k, &c->g.kg);
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

static int check_sequence(struct bch_chk *c, struct bch_jscan *s)
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
	bch_jscan_sort(s);
	for (i = 0; i < s->nr; i++) {
		struct bch_jentry *e = &s->e[i];
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
	struct bch_jscan s;
	int r;

	r = bch_jscan_run(c->io, &c->res->sb, &c->g, &s, on_entry, c);
	if (!r && !s.have_newest)
		bch_chk_damage(c, BCH_DMG_JOURNAL_EMPTY,
			       "journal: no valid entry in %u buckets from bucket %u (the set is synchronous, so at least one is required)",
			       c->res->sb.keys, c->res->sb.first_bucket);
	if (!r && s.have_newest) {
		memcpy(&c->newest, &s.newest, sizeof(c->newest));
		c->have_newest = true;
		c->res->newest_seq = s.newest_seq;
		r = check_sequence(c, &s);
	}
	bch_jscan_free(&s);
	return r;
}
