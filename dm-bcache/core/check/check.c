// SPDX-License-Identifier: GPL-2.0
/*
 * The checker's driver: superblock, prio chain, UUID table and the final
 * bucket accounting, plus the finding and message helpers the journal and
 * btree passes share.  See check.h for what is checked and why.
 */
#include "check/check_priv.h"
#include "alloc/prio_read.h"

const char * const bch_damage_names[BCH_NR_DAMAGE] = {
	[BCH_DMG_SUPERBLOCK]		= "superblock",
	[BCH_DMG_JOURNAL_EMPTY]		= "journal-empty",
	[BCH_DMG_JOURNAL_ENTRY]		= "journal-entry",
	[BCH_DMG_JOURNAL_TAIL]		= "journal-tail",
	[BCH_DMG_JOURNAL_SEQ]		= "journal-seq",
	[BCH_DMG_JOURNAL_KEY]		= "journal-key",
	[BCH_DMG_PRIO]			= "prio",
	[BCH_DMG_UUID]			= "uuid",
	[BCH_DMG_ROOT]			= "btree-root",
	[BCH_DMG_NODE]			= "btree-node",
	[BCH_DMG_KEY_INVALID]		= "key-invalid",
	[BCH_DMG_KEY_ORDER]		= "key-order",
	[BCH_DMG_KEY_OVERLAP]		= "key-overlap",
	[BCH_DMG_KEY_BOUNDS]		= "key-bounds",
	[BCH_DMG_PTR_STALE]		= "ptr-stale",
	[BCH_DMG_BUCKET_CONFLICT]	= "bucket-conflict",
};

bool bch_damage_tolerated(enum bch_damage cls)
{
	return cls == BCH_DMG_JOURNAL_TAIL;
}

void bch_chk_damage(struct bch_chk *c, enum bch_damage cls,
		    const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, args);
	va_end(args);
	c->res->damage[cls]++;
	if (bch_damage_tolerated(cls))
		c->res->nr_tolerated++;
	else
		c->res->nr_damage++;
	if (c->ops && c->ops->finding)
		c->ops->finding(c->ops->ctx, cls, c->msg);
}

void bch_chk_note(struct bch_chk *c, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, args);
	va_end(args);
	c->res->nr_notes++;
	if (c->ops && c->ops->note)
		c->ops->note(c->ops->ctx, c->msg);
}

void *bch_chk_read(struct bch_chk *c, u64 sector, size_t bytes)
{
	void *buf;

	if (sector + bytes / 512 > c->io->sectors)
		return NULL;
	buf = bch_zalloc(bytes);
	if (buf && c->io->read(c->io->ctx, sector, buf, bytes)) {
		bch_free(buf);
		return NULL;
	}
	return buf;
}

bool bch_chk_bucket_ok(struct bch_chk *c, u64 bucket)
{
	return bucket >= c->g.kg.first_bucket && bucket < c->g.kg.nbuckets;
}

void bch_chk_adopt_gen(struct bch_chk *c, u64 ptr)
{
	bch_gen_adopt(&c->g, c->gens, ptr);
}

bool bch_chk_ptr_stale(struct bch_chk *c, u64 ptr)
{
	u64 b = bch_ptr_bucket(&c->g, ptr);

	if (!c->gens_known || b >= c->g.kg.nbuckets)
		return false;
	return bch_gen_stale(c->gens[b], bch_ptr_gen(ptr));
}

static const char * const owner_names[] = {
	[BCH_OWN_NONE]		= "free",
	[BCH_OWN_SUPER]		= "superblock",
	[BCH_OWN_JOURNAL]	= "journal",
	[BCH_OWN_PRIO]		= "prio",
	[BCH_OWN_UUID]		= "uuid",
};

/* Claim @bucket for a metadata owner; a second owner is damage. */
static bool claim_meta(struct bch_chk *c, u64 bucket, enum bch_owner who,
		       enum bch_damage cls)
{
	if (bucket >= c->g.kg.nbuckets)
		return false;	/* callers have reported it */
	if (c->owner[bucket] != BCH_OWN_NONE) {
		bch_chk_damage(c, cls,
			       "%s: bucket %llu already holds the %s, expected a free bucket",
			       owner_names[who], bucket,
			       owner_names[c->owner[bucket]]);
		return false;
	}
	c->owner[bucket] = who;
	return true;
}

static int check_super(struct bch_chk *c)
{
	struct bch_sb *sb = &c->res->sb;
	u8 *buf;
	const char *err;
	int r;

	if (c->io->sectors < BCH_SB_AREA_BYTES / 512) {
		bch_chk_damage(c, BCH_DMG_SUPERBLOCK,
			       "device of %llu sectors is too small to hold a superblock (sectors 8-15)",
			       c->io->sectors);
		return 1;
	}
	buf = bch_zalloc(BCH_SB_AREA_BYTES);
	if (!buf)
		return -ENOMEM;
	r = c->io->read(c->io->ctx, 0, buf, BCH_SB_AREA_BYTES);
	if (r) {
		bch_free(buf);
		return r;
	}
	if (bch_sb_area_blank(buf)) {
		c->res->blank = true;
		bch_free(buf);
		return 1;
	}
	err = bch_sb_validate((void *)(buf + BCH_SB_BYTES), c->io->sectors,
			      c->io->lbs, sb);
	if (!err && c->ops && c->ops->sb)
		c->ops->sb(c->ops->ctx, sb);
	if (!err && sb->kind == BCH_SB_KIND_CACHE &&
	    bch_set_nbuckets_err(sb->nbuckets)) {
		bch_chk_damage(c, BCH_DMG_SUPERBLOCK,
			       "superblock (sector 8): nbuckets %llu: %s",
			       sb->nbuckets, bch_set_nbuckets_err(sb->nbuckets));
		err = "too few buckets";
	} else if (err) {
		bch_chk_damage(c, BCH_DMG_SUPERBLOCK,
			       "superblock (sector 8): %s", err);
	} else if (sb->kind != BCH_SB_KIND_CACHE) {
		bch_chk_note(c, "superblock: version %llu: a backing device, no other metadata",
			     sb->version);
	} else if (sb->version >= BCH_SB_VERSION_CDEV_WITH_FEATURES &&
		   sb->feature_incompat &
		   BCH_FEATURE_INCOMPAT_OBSO_LARGE_BUCKET) {
		bch_chk_note(c, "superblock: obsolete large buckets; mainline attaches read-only");
	}
	bch_free(buf);
	return err ? 1 : 0;
}

static bool prio_claim(void *ctx, u32 link, u64 bucket)
{
	(void)link;
	return claim_meta(ctx, bucket, BCH_OWN_PRIO, BCH_DMG_PRIO);
}

static void prio_visit(void *ctx, u64 bucket, u64 first, u32 count,
		       const struct bch_prio_set_disk *p)
{
	struct bch_chk *c = ctx;

	if (c->ops && c->ops->prio)
		c->ops->prio(c->ops->ctx, bucket, first, count, p);
	c->res->prio_buckets++;
}

static int check_prios(struct bch_chk *c)
{
	struct bch_geom *g = &c->g;
	struct bch_prio_reader rd = { c, prio_claim, prio_visit };
	struct bch_prio_result bad;
	int r;

	r = bch_prio_read(c->io, g,
			  le64_to_cpu(c->newest.prio_bucket[g->nr_this_dev]),
			  c->gens, NULL, &rd, &bad);
	if (r < 0)
		return r;
	if (!r) {
		c->gens_known = true;
		return 0;
	}
	if (!bad.why)		/* claim_meta() reported it */
		return 0;
	if (!bad.what)
		bch_chk_damage(c, BCH_DMG_PRIO,
			       "prio chain link %u: bucket %llu outside [%u, %llu)",
			       bad.link, bad.bucket, g->kg.first_bucket,
			       g->kg.nbuckets);
	else
		bch_chk_damage(c, BCH_DMG_PRIO,
			       "prio bucket %llu (link %u): %s: expected %s %016llx, found %016llx",
			       bad.bucket, bad.link, bad.why, bad.what,
			       bad.expected, bad.found);
	return 0;
}

static int check_uuids(struct bch_chk *c)
{
	struct bch_geom *g = &c->g;
	struct bch_key k;
	const char *err;
	bool v0 = le32_to_cpu(c->newest.version) < 1;
	size_t entry = v0 ? sizeof(struct bch_uuid_entry_v0_disk) :
		       sizeof(struct bch_uuid_entry_disk);
	u64 bucket;
	u8 *tbl;
	u32 i, n;

	bch_key_decode(c->newest.uuid_bucket, BCH_BKEY_PAD_U64S, &k);
	err = bch_btree_ptr_invalid(&k, &g->kg);
	if (!err && bch_ptr_dev(k.ptr[0]) != g->nr_this_dev)
		err = "bad, pointer to another device";
	if (err) {
		bch_chk_damage(c, BCH_DMG_UUID, "uuid pointer in journal seq %llu: %s",
			       c->res->newest_seq, err);
		return 0;
	}
	if (bch_key_size(&k) != g->meta_bucket_bytes / 512) {
		bch_chk_damage(c, BCH_DMG_UUID,
			       "uuid pointer in journal seq %llu: size %u sectors, expected %u",
			       c->res->newest_seq, bch_key_size(&k),
			       g->meta_bucket_bytes / 512);
		return 0;
	}
	bucket = bch_ptr_bucket(g, k.ptr[0]);
	bch_chk_adopt_gen(c, k.ptr[0]);
	if (bch_chk_ptr_stale(c, k.ptr[0])) {
		bch_chk_damage(c, BCH_DMG_PTR_STALE,
			       "uuid table pointer: pointer gen %u is stale, bucket %llu is at gen %u",
			       bch_ptr_gen(k.ptr[0]), bucket, c->gens[bucket]);
		return 0;
	}
	if (!claim_meta(c, bucket, BCH_OWN_UUID, BCH_DMG_UUID))
		return 0;
	tbl = bch_chk_read(c, bch_ptr_offset(k.ptr[0]), g->meta_bucket_bytes);
	if (!tbl)
		return -EIO;
	n = g->meta_bucket_bytes / entry;
	for (i = 0; i < n; i++) {
		const struct bch_uuid_entry_disk *e = (void *)(tbl + i * entry);
		u32 flags = v0 ? 0 : le32_to_cpu(e->flags);
		u64 sectors = v0 ? 0 : le64_to_cpu(e->sectors);

		if (bch_uuid_slot_kind(e->uuid) == BCH_UUID_FREE)
			continue;
		err = v0 ? NULL : bch_uuid_entry_validate(e);
		if (err)
			bch_chk_damage(c, BCH_DMG_UUID,
				       "uuid table (bucket %llu) slot %u: %s (flags %#x, sectors %llu)",
				       bucket, i, err, flags, sectors);
		if (bch_uuid_slot_kind(e->uuid) == BCH_UUID_IN_USE)
			c->res->uuids_in_use++;
		if (c->ops && c->ops->uuid)
			c->ops->uuid(c->ops->ctx, i, e->uuid, e->label, flags,
				     sectors);
	}
	bch_free(tbl);
	return 0;
}

/* After the walk: every bucket's claims against its final gen. */
static void settle_buckets(struct bch_chk *c)
{
	u64 b;

	for (b = 0; b < c->g.kg.nbuckets; b++) {
		struct bch_bucket_use *u = &c->use[b];
		u8 gen = c->gens[b];
		bool btree = (u->flags & BCH_USE_BTREE) && u->btree_gen == gen;
		bool data = (u->flags & BCH_USE_DATA) && u->data_gen == gen;

		if (btree)
			c->res->buckets_btree++;
		if (data)
			c->res->buckets_data++;
		if (btree && u->btree_count > 1)
			bch_chk_damage(c, BCH_DMG_BUCKET_CONFLICT,
				       "bucket %llu (gen %u): holds %u live btree nodes, expected 1",
				       b, gen, u->btree_count);
		if (btree && data)
			bch_chk_damage(c, BCH_DMG_BUCKET_CONFLICT,
				       "bucket %llu (gen %u): holds a btree node and live data extents",
				       b, gen);
		if ((btree || data) && c->owner[b] != BCH_OWN_NONE)
			bch_chk_damage(c, BCH_DMG_BUCKET_CONFLICT,
				       "bucket %llu: the %s bucket is also referenced by %s",
				       b, owner_names[c->owner[b]],
				       btree ? "a btree node pointer" :
				       "a data extent");
		if (!(u->flags & BCH_USE_DIRTY))
			continue;
		if (bch_gen_stale(gen, u->dirty_gen))
			bch_chk_damage(c, BCH_DMG_PTR_STALE,
				       "bucket %llu: dirty data with pointer gen %u, but the bucket is at gen %u (dirty data lost)",
				       b, u->dirty_gen, gen);
		else
			c->res->buckets_dirty++;
	}
}

static int check_set(struct bch_chk *c)
{
	struct bch_sb *sb = &c->res->sb;
	u64 b;
	int r;
	u32 i;

	bch_geom_init(&c->g, sb);
	c->gens = bch_zalloc(sb->nbuckets);
	c->owner = bch_zalloc(sb->nbuckets);
	c->use = bch_zalloc(sb->nbuckets * sizeof(*c->use));
	if (!c->gens || !c->owner || !c->use)
		return -ENOMEM;
	for (b = 0; b < sb->first_bucket && b < sb->nbuckets; b++)
		c->owner[b] = BCH_OWN_SUPER;
	for (i = 0; i < sb->keys; i++)
		c->owner[sb->d[i]] = BCH_OWN_JOURNAL;

	r = bch_chk_journal(c);
	if (r || !c->have_newest)
		return r;
	if (!c->o->skip_prios) {
		r = check_prios(c);
		if (r)
			return r;
	}
	if (!c->o->skip_uuids) {
		r = check_uuids(c);
		if (r)
			return r;
	}
	if (!c->o->skip_btree) {
		r = bch_chk_btree(c);
		if (r)
			return r;
		settle_buckets(c);
	}
	return 0;
}

int bch_check(const struct bch_meta_io *io, const struct bch_check_opts *o,
	      const struct bch_check_ops *ops, struct bch_check_result *res)
{
	struct bch_chk *c = bch_zalloc(sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	memset(res, 0, sizeof(*res));
	c->io = io;
	c->o = o;
	c->ops = ops;
	c->res = res;

	r = check_super(c);
	if (r > 0) {
		r = 0;
		goto out;
	}
	if (r)
		goto out;
	if (res->sb.kind != BCH_SB_KIND_CACHE)
		goto out;
	res->synchronous = res->sb.flags & BCH_CACHE_SYNC;
	res->needs_check = res->sb.flags & BCH_CACHE_NEEDS_CHECK;
	if (res->needs_check)
		bch_chk_note(c, "superblock: needs_check set: a table failed on this cache");
	if (!res->synchronous) {
		bch_chk_note(c, "superblock: not synchronous: the set is created on first use");
		goto out;
	}
	if (o->super_block_only || o->skip_journal)
		goto out;
	r = check_set(c);
out:
	bch_free(c->use);
	bch_free(c->owner);
	bch_free(c->gens);
	bch_free(c);
	return r;
}
