/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing the journal (ondisk-format 6.1-6.3): entries of keys, each
 * carrying the current root, UUID-table pointer and prio head, written
 * back to back on block boundaries in the journal buckets, seq by seq.
 * Like the driver, a writer opened on an existing journal starts in the
 * bucket after the one holding the newest entry, and moves on to the next
 * bucket only if it holds no entry the replay range still needs.
 */
#ifndef DM_BCACHE_CORE_JOURNAL_WRITE_H
#define DM_BCACHE_CORE_JOURNAL_WRITE_H

#include "journal/journal_read.h"

struct bch_jwriter {
	const struct bch_meta_io *io;
	const struct bch_sb *sb;
	const struct bch_geom *g;
	struct bch_jset_disk head;	/* pointers every entry carries */
	u64 seq;			/* of the next entry */
	u64 last_seq;			/* oldest entry replay still needs */
	u32 ring;			/* bucket being filled */
	u32 block;			/* its next free block */
	u64 *bucket_max_seq;		/* per ring bucket: newest seq in it */
};

/*
 * Open a writer after the journal @s scanned (which must have a newest
 * entry): the next seq, a fresh bucket, the newest entry's pointers.
 */
int bch_jwriter_open(struct bch_jwriter *w, const struct bch_meta_io *io,
		     const struct bch_sb *sb, const struct bch_geom *g,
		     const struct bch_jscan *s);
void bch_jwriter_close(struct bch_jwriter *w);

/* The root future entries name. */
void bch_jwriter_set_root(struct bch_jwriter *w, const struct bch_key *root,
			  u32 level);

/*
 * Write one entry holding as many of @keys (@n) as fit, and return how
 * many it took (0 is possible only for n == 0: a metadata-only entry),
 * or a negative errno (-ENOSPC: the journal is full).
 */
int bch_jwriter_write(struct bch_jwriter *w, const struct bch_key *keys,
		      u32 n);

#endif
