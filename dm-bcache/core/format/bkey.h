/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keys and pointers: the bcache bkey encoding, its decoded form, ordering,
 * and the two validators (extent and btree pointer).  docs: ondisk-format
 * section 4.
 *
 * On disk a key is 2 + KEY_PTRS little-endian u64 words: high, low, then
 * the pointers.  In memory the core uses struct bch_key, host order, with
 * room for the largest pointer count the format can express.
 *
 *   high: inode 0-19, size 20-35, dirty 36, csum 56-57, ptrs 60-62, and
 *         bit 63, which the driver sets on every key and nobody reads
 *   low:  offset, the END of the extent (exclusive), in sectors
 *   ptr:  gen 0-7, offset 8-50 (absolute cache sector), dev 51-62
 */
#ifndef DM_BCACHE_CORE_BKEY_H
#define DM_BCACHE_CORE_BKEY_H

#include "util/platform.h"

#define BCH_KEY_MAX_PTRS	7	/* 3 bits of KEY_PTRS */
#define BCH_KEY_MAX_U64S	(2 + BCH_KEY_MAX_PTRS)
#define BCH_BKEY_PAD_U64S	8	/* 64-byte key slots in the jset header */
#define BCH_KEY_MAX_INODE	0xfffffULL
#define BCH_KEY_MAX_OFFSET	0x7fffffffffffffffULL
#define BCH_KEY_MAX_SIZE	0xffffU
#define BCH_KEY_LEGACY_BIT	BIT_ULL(63)
#define BCH_PTR_CHECK_DEV	4095
#define BCH_MAX_CACHES		8
#define BCH_GC_GEN_MAX		96	/* staleness the driver tolerates */

struct bch_key {
	u64 high;
	u64 low;
	u64 ptr[BCH_KEY_MAX_PTRS];
};

static inline u64 bch_key_inode(const struct bch_key *k)
{
	return k->high & BCH_KEY_MAX_INODE;
}

static inline u32 bch_key_size(const struct bch_key *k)
{
	return (k->high >> 20) & BCH_KEY_MAX_SIZE;
}

static inline bool bch_key_dirty(const struct bch_key *k)
{
	return (k->high >> 36) & 1;
}

static inline void bch_key_set_dirty(struct bch_key *k, bool dirty)
{
	k->high = (k->high & ~BIT_ULL(36)) | ((u64)dirty << 36);
}

static inline unsigned int bch_key_csum(const struct bch_key *k)
{
	return (k->high >> 56) & 3;
}

static inline unsigned int bch_key_ptrs(const struct bch_key *k)
{
	return (k->high >> 60) & 7;
}

static inline u64 bch_key_offset(const struct bch_key *k)
{
	return k->low;
}

/* First sector of the extent; meaningful only when size <= offset. */
static inline u64 bch_key_start(const struct bch_key *k)
{
	return k->low - bch_key_size(k);
}

static inline unsigned int bch_ptr_gen(u64 p)
{
	return p & 0xff;
}

static inline u64 bch_ptr_offset(u64 p)
{
	return (p >> 8) & ((1ULL << 43) - 1);
}

static inline unsigned int bch_ptr_dev(u64 p)
{
	return (p >> 51) & 0xfff;
}

static inline u64 bch_make_ptr(unsigned int dev, u64 offset, unsigned int gen)
{
	return ((u64)dev << 51) | (offset << 8) | (gen & 0xff);
}

/* A key with position (inode, offset), size and no pointers yet. */
void bch_key_init(struct bch_key *k, u64 inode, u64 offset, u32 size,
		  bool dirty);
void bch_key_add_ptr(struct bch_key *k, u64 ptr);

/* Words the key occupies on disk. */
static inline unsigned int bch_key_u64s(const struct bch_key *k)
{
	return 2 + bch_key_ptrs(k);
}

/*
 * Decode the key at @words (at most @avail words available).  Returns the
 * words consumed, or 0 when the key runs past @avail.
 */
unsigned int bch_key_decode(const __le64 *words, unsigned int avail,
			    struct bch_key *k);
/* Encode into @words, which must have room; returns the words written. */
unsigned int bch_key_encode(const struct bch_key *k, __le64 *words);

/* Order by (inode, offset) only, as the driver does. */
int bch_key_cmp(const struct bch_key *a, const struct bch_key *b);
/* Compare a key's position with (inode, offset). */
int bch_key_cmp_pos(const struct bch_key *k, u64 inode, u64 offset);

extern const struct bch_key bch_zero_key;
extern const struct bch_key bch_max_key;

/*
 * Generation arithmetic (section 3.3): the distance a pointer lags its
 * bucket, mod 256.  1..128 means stale; 0 live; above 128 the pointer is
 * newer than the bucket, which recovery resolves by adopting its gen.
 */
static inline unsigned int bch_gen_lag(unsigned int bucket_gen,
				       unsigned int ptr_gen)
{
	return (bucket_gen - ptr_gen) & 0xff;
}

static inline bool bch_gen_stale(unsigned int bucket_gen, unsigned int ptr_gen)
{
	unsigned int lag = bch_gen_lag(bucket_gen, ptr_gen);

	return lag >= 1 && lag <= 128;
}

/* The cache geometry the key validators need. */
struct bch_key_geom {
	u64 nbuckets;
	u32 bucket_size;
	u32 first_bucket;
};

/*
 * The driver's "invalid" tests: an extent (leaf key or journal key) and a
 * btree pointer (interior key, root, UUID table).  NULL when valid, else
 * the reason, in the driver's words where it has them.  Pointers on an
 * unavailable device (dev >= 8) are not examined, as in the driver.
 */
const char *bch_extent_invalid(const struct bch_key *k,
			       const struct bch_key_geom *g);
const char *bch_btree_ptr_invalid(const struct bch_key *k,
				  const struct bch_key_geom *g);

/*
 * For messages: an extent as "inode:start-end len N [dirty]", a btree
 * pointer as "inode:offset node N", then "ptr dev:sector gen g" each.
 */
void bch_key_to_text(char *buf, size_t len, const struct bch_key *k,
		     bool extent);

#endif
