/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading the journal: scan every journal bucket the superblock lists,
 * entry after entry from the bucket's first block, until a block holding
 * no entry of this set, as the driver's reader does (ondisk-format 6.4).
 * The result is the list of entries found, valid or damaged, and the
 * header of the newest valid one (which names the root, the UUID table
 * and the prio chain).  The checker judges the list; replay at the
 * target's construction reads the keys of the entries in the replay range.
 */
#ifndef DM_BCACHE_CORE_JOURNAL_READ_H
#define DM_BCACHE_CORE_JOURNAL_READ_H

#include "format/jset.h"

struct bch_jentry {
	u64 seq;		/* unverified when !valid */
	u64 last_seq;
	u32 ring;		/* index into the superblock's d[] */
	u32 block;		/* within the bucket */
	u32 u64s;
	bool valid;		/* else it failed its size or checksum test */
};

struct bch_jscan {
	struct bch_jentry *e;
	u32 nr;
	u32 cap;
	bool have_newest;
	u64 newest_seq;
	struct bch_jset_disk newest;	/* header of the newest valid entry */
	/* Replayed entries whose keys stop at one that does not decode. */
	u32 cut_short;
};

/*
 * Called for every entry found: @j is its header as read, @err NULL for a
 * valid entry or the validator's reason.  A damaged entry ends its bucket.
 */
typedef void (*bch_jscan_fn)(void *ctx, const struct bch_jset_disk *j,
			     const char *err, const struct bch_jentry *e,
			     u64 bucket);

/* Scan the journal of the cache @sb into @s.  0 or a negative errno. */
int bch_jscan_run(const struct bch_meta_io *io, const struct bch_sb *sb,
		  const struct bch_geom *g, struct bch_jscan *s,
		  bch_jscan_fn fn, void *ctx);

/* Order the entries by seq, a valid entry before a damaged one. */
void bch_jscan_sort(struct bch_jscan *s);

/*
 * Read entry @e whole, header and keys, into *@out (bch_free() it).
 * -ENOMEM when no buffer could be had, -EIO when the read failed or the
 * entry lies past the device's end; the caller tells the two apart, as
 * only the second says anything about the journal.
 */
int bch_jscan_read(const struct bch_meta_io *io, const struct bch_sb *sb,
		   const struct bch_geom *g, const struct bch_jentry *e,
		   struct bch_jset_disk **out);

void bch_jscan_free(struct bch_jscan *s);

/*
 * Replay: hand the keys of every valid entry from the newest entry's
 * last_seq on to @fn, oldest entry first, each seq once, keys in the
 * order they were logged; an entry's keys end at the first that does not
 * decode (counted in @s->cut_short: the rest cannot be parsed).  Sorts @s.
 * 0, -EIO on a read error, or the first non-zero @fn returned.
 */
int bch_jscan_replay(const struct bch_meta_io *io, const struct bch_sb *sb,
		     const struct bch_geom *g, struct bch_jscan *s,
		     int (*fn)(void *ctx, const struct bch_key *k), void *ctx);

#endif
