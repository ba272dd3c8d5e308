/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing the journal (ondisk-format 6.1-6.3): entries of keys, each
 * carrying the current root, UUID-table pointer and prio head, written
 * back to back on block boundaries in the journal buckets, seq by seq.
 * A writer opened on an existing journal goes on right after the newest
 * entry, in its bucket (the driver starts a fresh bucket instead, which
 * costs a bucket per open: a cache that crashes after every open would run
 * out of journal before its first commit).  It moves on to the next bucket
 * only when an entry no longer fits, and only if that bucket holds no
 * entry the durable journal still needs: the last_seq of the newest entry
 * written, never the one the next entry will carry, since the entry that
 * would free the bucket is not yet on disk while it is being written.
 */
#ifndef DM_BCACHE_CORE_JOURNAL_WRITE_H
#define DM_BCACHE_CORE_JOURNAL_WRITE_H

#include "journal/journal_read.h"

struct bch_jwriter {
	const struct bch_meta_io *io;
	const struct bch_sb *sb;
	const struct bch_geom *g;
	/*
	 * What every entry carries: pointers, and the version, which names
	 * the UUID table's layout (the set raises it when it rewrites a
	 * legacy table).
	 */
	struct bch_jset_disk head;
	u64 seq;			/* of the next entry */
	u64 last_seq;			/* the next entry's: oldest it needs */
	u64 disk_last_seq;		/* the newest written entry's */
	u32 ring;			/* bucket being filled */
	u32 block;			/* its next free block */
	u64 *bucket_max_seq;		/* per ring bucket: newest seq in it */
	void *buf;			/* an entry, as written */
	size_t buf_bytes;
};

/*
 * Open a writer after the journal @s scanned (which must have a newest
 * entry): the next seq, the place after the newest entry, its pointers.
 * -ENOSPC when that bucket is full and every other holds needed entries.
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
 * or a negative errno (-ENOSPC: the journal is full).  The caller flushes
 * after an entry that moves last_seq before writing the next one.
 */
int bch_jwriter_write(struct bch_jwriter *w, const struct bch_key *keys,
		      u32 n);

#endif
