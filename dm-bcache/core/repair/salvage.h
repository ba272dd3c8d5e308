/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Salvage: what a damaged cache device still proves, read the way the
 * driver reads a cache at registration but without giving up at the
 * first bad structure.  The newest valid journal entry names the root,
 * the UUID table and the prio chain; the tree is walked from that root
 * and every node that verifies gives its keys (those of a node damaged
 * after some valid bsets too), bset by bset; the journal's replay range
 * gives the keys logged since.  The keys are kept in the order the
 * driver would apply them, so inserting them in that order into an empty
 * index gives every position the key a lookup would have answered with.
 *
 * With no valid journal entry the prio chain and the UUID table are found
 * by scanning (repair/headless.h), and every origin's whole range is
 * listed as lost: the root and every write logged only in the journal
 * went with it.
 *
 * What cannot be read is listed as lost: the key range of a node that
 * does not verify (a damaged node's newer keys may have covered any of
 * it), and the journal entries missing from the replay range or cut short
 * by a key that does not decode (their ranges are unknown, so they are
 * counted, not listed).
 *
 * Used by bcache_repair only: the target never runs it.  Not thread-safe:
 * one caller owns a struct bch_salvage.
 */
#ifndef DM_BCACHE_CORE_SALVAGE_H
#define DM_BCACHE_CORE_SALVAGE_H

#include "format/geometry.h"
#include "format/jset.h"

/*
 * Sectors [start, end) of origin @inode whose newest data may be lost;
 * end BCH_LOST_TO_END: to the origin's end.
 */
#define BCH_LOST_TO_END		(~0ULL)

struct bch_lost {
	u64 inode;
	u64 start, end;
	const char *why;
};

struct bch_salvage {
	struct bch_sb sb;
	struct bch_geom g;
	u8 *gens;			/* nbuckets, the prio chain's */
	u16 *prios;
	void *uuids;			/* the UUID table, meta_bucket_bytes */
	u32 jset_version;		/* names the table's layout */
	u64 newest_seq;			/* the newest valid journal entry's */
	u64 prio_seq;			/* the chain read's */
	/* Leaf keys bset by bset, then the journal's, oldest first. */
	struct bch_key *keys;
	u32 nr_keys, cap_keys;
	u32 tree_keys;			/* the first this many are the tree's */
	struct bch_lost *lost;
	u32 nr_lost, cap_lost;
	u64 nodes, nodes_damaged;
	u64 journal_missing;		/* entries of the replay range */
	u32 journal_cut;		/* entries whose keys stop early */
	u64 keys_dropped;		/* invalid keys left out */
	u64 keys_unslotted;		/* of slots the table has not in use */
	/* Nodes outside the walked tree (repair/orphans.h). */
	u64 orphan_nodes, orphan_nodes_bad;
	u32 orphan_keys, orphan_conflicts;
	bool root_lost;
	bool uuids_lost;		/* no table read: every slot free */
	/* No valid journal entry: found by scanning (repair/headless.h). */
	bool journal_lost;
};

/* Findings, one line each ("btree node bucket 12: bad checksum"). */
typedef void (*bch_salvage_note_fn)(void *ctx, const char *msg);

/*
 * What an administrator names instead of what the newest journal entry
 * or the scan would give (bcache_repair --prio-bucket, --uuid-bucket).
 */
struct bch_salvage_given {
	bool prio;		/* the prio chain read from prio_bucket */
	bool uuids;		/* the UUID table from uuid_bucket */
	u64 prio_bucket, uuid_bucket;
};

/*
 * Salvage the cache behind @io, whose superblock @sb has been validated.
 * 0; -ENODATA when nothing usable is left (no readable prio chain, or
 * with no valid journal entry no single newest one: without bucket
 * generations no key can be told current from stale; or with no valid
 * journal entry no UUID table: no key can be tied to an origin);
 * another -errno when memory ran out.  Read errors are damage, not
 * failures: @io should return them, or zeroes, per
 * structure.
 */
int bch_salvage_read(struct bch_salvage *sv, const struct bch_meta_io *io,
		     const struct bch_sb *sb, bch_salvage_note_fn note,
		     void *ctx);

/*
 * The same, with the prio chain or the UUID table (journal lost only: a
 * valid entry names the table) taken from the buckets @given names.  A
 * chain that does not read whole as one prio write, or a bucket that
 * does not read as a table, leaves nothing usable (-ENODATA); a UUID
 * table given with a valid journal entry is refused (-EINVAL).
 */
int bch_salvage_read_given(struct bch_salvage *sv,
			   const struct bch_meta_io *io,
			   const struct bch_sb *sb,
			   const struct bch_salvage_given *given,
			   bch_salvage_note_fn note, void *ctx);
void bch_salvage_free(struct bch_salvage *sv);

/*
 * An extent the rebuilt set cannot keep: invalid as the driver judges
 * it, past the maximum key, or with data in a journal bucket.
 */
bool bch_salvage_bad_extent(const struct bch_salvage *sv,
			    const struct bch_key *k);

/* Record sectors [start, end) of @inode as lost.  0 or -ENOMEM. */
int bch_salvage_lose(struct bch_salvage *sv, u64 inode, u64 start, u64 end,
		     const char *why);

#endif
