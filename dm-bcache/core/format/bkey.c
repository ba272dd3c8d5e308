// SPDX-License-Identifier: GPL-2.0
/*
 * Key encoding, ordering and validation.  The validators state the rules
 * the mainline driver enforces on every key it reads (ondisk-format 4.3);
 * they are the only copy of those rules in the tree.
 */
#include "format/bkey.h"

const struct bch_key bch_zero_key = {
	.high = BCH_KEY_LEGACY_BIT,
	.low = 0,
};

const struct bch_key bch_max_key = {
	.high = BCH_KEY_LEGACY_BIT | BCH_KEY_MAX_INODE,
	.low = BCH_KEY_MAX_OFFSET,
};

void bch_key_init(struct bch_key *k, u64 inode, u64 offset, u32 size,
		  bool dirty)
{
	memset(k, 0, sizeof(*k));
	k->high = BCH_KEY_LEGACY_BIT | (inode & BCH_KEY_MAX_INODE) |
		  ((u64)(size & BCH_KEY_MAX_SIZE) << 20) | ((u64)dirty << 36);
	k->low = offset;
}

void bch_key_add_ptr(struct bch_key *k, u64 ptr)
{
	unsigned int n = bch_key_ptrs(k);

	if (n >= BCH_KEY_MAX_PTRS)
		return;
	k->ptr[n] = ptr;
	k->high = (k->high & ~(7ULL << 60)) | ((u64)(n + 1) << 60);
}

unsigned int bch_key_decode(const __le64 *words, unsigned int avail,
			    struct bch_key *k)
{
	unsigned int i, n;

	if (avail < 2)
		return 0;
	memset(k, 0, sizeof(*k));
	k->high = le64_to_cpu(words[0]);
	k->low = le64_to_cpu(words[1]);
	n = bch_key_ptrs(k);
	if (2 + n > avail)
		return 0;
	for (i = 0; i < n; i++)
		k->ptr[i] = le64_to_cpu(words[2 + i]);
	return 2 + n;
}

unsigned int bch_key_encode(const struct bch_key *k, __le64 *words)
{
	unsigned int i, n = bch_key_ptrs(k);

	words[0] = cpu_to_le64(k->high);
	words[1] = cpu_to_le64(k->low);
	for (i = 0; i < n; i++)
		words[2 + i] = cpu_to_le64(k->ptr[i]);
	return 2 + n;
}

int bch_key_cmp_pos(const struct bch_key *k, u64 inode, u64 offset)
{
	u64 ki = bch_key_inode(k);

	if (ki != inode)
		return ki < inode ? -1 : 1;
	if (k->low != offset)
		return k->low < offset ? -1 : 1;
	return 0;
}

int bch_key_cmp(const struct bch_key *a, const struct bch_key *b)
{
	return bch_key_cmp_pos(a, bch_key_inode(b), b->low);
}

/* The pointer checks shared by both kinds of key; NULL when in range. */
static const char *ptr_invalid(const struct bch_key *k, u64 ptr,
			       const struct bch_key_geom *g)
{
	u64 offset = bch_ptr_offset(ptr);
	u64 bucket = offset / g->bucket_size;

	if (offset % g->bucket_size + bch_key_size(k) > g->bucket_size)
		return "bad, length too big";
	if (bucket < g->first_bucket)
		return "bad, short offset";
	if (bucket >= g->nbuckets)
		return "bad, offset past end of device";
	return NULL;
}

/* Every pointer on an available device (dev < 8) checked; NULL if sound. */
static const char *ptrs_invalid(const struct bch_key *k,
				const struct bch_key_geom *g)
{
	unsigned int i;
	const char *err;

	for (i = 0; i < bch_key_ptrs(k); i++) {
		if (bch_ptr_dev(k->ptr[i]) >= BCH_MAX_CACHES)
			continue;
		err = ptr_invalid(k, k->ptr[i], g);
		if (err)
			return err;
	}
	return NULL;
}

const char *bch_extent_invalid(const struct bch_key *k,
			       const struct bch_key_geom *g)
{
	if (bch_key_csum(k))
		return "bad, data checksum type set";
	if (bch_key_size(k) > k->low)
		return "bad, size larger than offset";
	return ptrs_invalid(k, g);
}

const char *bch_btree_ptr_invalid(const struct bch_key *k,
				  const struct bch_key_geom *g)
{
	if (!bch_key_ptrs(k))
		return "bad, no pointers";
	if (!bch_key_size(k))
		return "bad, zero size";
	if (bch_key_dirty(k))
		return "bad, dirty btree pointer";
	if (bch_key_csum(k))
		return "bad, data checksum type set";
	return ptrs_invalid(k, g);
}

void bch_key_to_text(char *buf, size_t len, const struct bch_key *k,
		     bool extent)
{
	size_t n;
	unsigned int i;

	if (extent && bch_key_size(k) <= k->low)
		n = snprintf(buf, len, "%llu:%llu-%llu len %u%s",
			     bch_key_inode(k), bch_key_start(k), k->low,
			     bch_key_size(k), bch_key_dirty(k) ? " dirty" : "");
	else	/* a btree pointer: its position, the size of the node */
		n = snprintf(buf, len, "%llu:%llu node %u%s", bch_key_inode(k),
			     k->low, bch_key_size(k),
			     bch_key_dirty(k) ? " dirty" : "");
	for (i = 0; i < bch_key_ptrs(k) && n < len; i++)
		n += snprintf(buf + n, len - n, " ptr %u:%llu gen %u",
			      bch_ptr_dev(k->ptr[i]),
			      bch_ptr_offset(k->ptr[i]),
			      bch_ptr_gen(k->ptr[i]));
}
