// SPDX-License-Identifier: GPL-2.0
/* Finding the prio chain and the UUID table by scanning; see headless.h. */
#include "repair/headless.h"
#include "alloc/prio_read.h"
#include "format/prio.h"
#include "format/uuid.h"
#include "util/array.h"

struct pset_seen {
	u64 bucket, seq;
};

static bool journal_bucket(const struct bch_sb *sb, u64 b)
{
	u32 i;

	for (i = 0; i < sb->keys; i++)
		if (sb->d[i] == b)
			return true;
	return false;
}

static int by_seq_down(const void *a, const void *b)
{
	const struct pset_seen *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq > y->seq ? -1 : 1;
	return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

/*
 * Whether a whole chain reads from @head, every link of the seq the head
 * has (the seq it was found by).
 */
static int whole_chain(const struct bch_meta_io *io, const struct bch_geom *g,
		       u64 head, u8 *gens)
{
	struct bch_prio_result res;
	int r = bch_prio_read(io, g, head, gens, NULL, NULL, &res);

	if (r == -ENOMEM)
		return r;
	return !r && !res.mixed_seq;
}

/* The prio sets of this cache: each bucket's first sector, magic only. */
static int find_psets(const struct bch_meta_io *io, const struct bch_sb *sb,
		      const struct bch_geom *g, struct pset_seen **sets,
		      u32 *nr)
{
	struct bch_prio_set_disk *p = bch_zalloc(512);
	u32 cap = 0;
	u64 b;
	int r = 0;

	if (!p)
		return -ENOMEM;
	for (b = g->kg.first_bucket; b < g->kg.nbuckets && !r; b++) {
		if (journal_bucket(sb, b) ||
		    io->read(io->ctx, bch_bucket_sector(g, b), p, 512) ||
		    le64_to_cpu(p->magic) != g->pset_magic)
			continue;
		r = bch_array_grow((void **)sets, &cap, *nr, *nr + 1,
				   sizeof(**sets), 16);
		if (!r)
			(*sets)[(*nr)++] = (struct pset_seen){
				b, le64_to_cpu(p->seq) };
	}
	bch_free(p);
	return r;
}

int bch_prio_scan(const struct bch_meta_io *io, const struct bch_sb *sb,
		  const struct bch_geom *g, struct bch_prio_found *f)
{
	struct pset_seen *sets = NULL;
	u32 nr = 0, i, j, heads;
	u8 *gens;
	int r;

	memset(f, 0, sizeof(*f));
	gens = bch_zalloc(g->kg.nbuckets);
	r = gens ? find_psets(io, sb, g, &sets, &nr) : -ENOMEM;
	f->sets = nr;
	if (!r)
		bch_sort(sets, nr, sizeof(*sets), by_seq_down);
	/* One seq at a time, from the highest. */
	for (i = 0, r = r ?: -ENODATA; i < nr && r == -ENODATA; i = j) {
		int w = 0;

		heads = 0;
		for (j = i; j < nr && sets[j].seq == sets[i].seq; j++) {
			w = whole_chain(io, g, sets[j].bucket, gens);
			if (w < 0)
				break;
			if (w && heads++)
				f->other = sets[j].bucket;
			else if (w)
				f->head = sets[j].bucket;
		}
		if (w < 0) {
			r = w;
		} else if (heads) {
			f->seq = sets[i].seq;
			r = heads > 1 ? -ENOTUNIQ : 0;
		} else if (!f->cut_seq) {
			f->cut_seq = sets[i].seq;
		}
	}
	bch_free(sets);
	bch_free(gens);
	return r;
}

/*
 * A label as the driver copies it from a superblock, and the target from
 * a string: NUL-padded.
 */
static bool padded_label(const u8 *l, u32 len)
{
	u32 i = 0;

	while (i < len && l[i])
		i++;
	while (i < len && !l[i])
		i++;
	return i == len;
}

/*
 * Slot @e as a table the driver wrote would hold it: sound, its padding
 * zero, all zero when free, and when in use a registration time (both
 * the driver and the target set it when they take the slot) and a
 * NUL-padded label.  1 when in use, 0 when not, -1 when no table holds
 * such a slot.
 */
static int table_slot(const struct bch_uuid_entry_disk *e)
{
	static const u8 zero[sizeof(*e)];

	if (bch_uuid_entry_validate(e) || memcmp(e->pad, zero, sizeof(e->pad)))
		return -1;
	switch (bch_uuid_slot_kind(e->uuid)) {
	case BCH_UUID_FREE:
		return memcmp(e, zero, sizeof(*e)) ? -1 : 0;
	case BCH_UUID_RETIRED:
		return 0;
	default:
		return e->first_reg && padded_label(e->label, sizeof(e->label)) ?
		       1 : -1;
	}
}

/* Whether the first @nr slots of @t read as a table; *@in_use counts. */
static bool table_like(const struct bch_uuid_entry_disk *t, u32 nr,
		       u32 *in_use)
{
	u32 i;
	int s;

	*in_use = 0;
	for (i = 0; i < nr; i++) {
		s = table_slot(&t[i]);
		if (s < 0)
			return false;
		*in_use += s;
	}
	return true;
}

/*
 * Two equally new tables agree when every slot holds the same UUID, and
 * every slot in use the same flags and size: the label alone may differ
 * (a relabel in the same second).
 */
static bool tables_agree(const struct bch_uuid_entry_disk *a,
			 const struct bch_uuid_entry_disk *b, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++)
		if (memcmp(a[i].uuid, b[i].uuid, sizeof(a[i].uuid)) ||
		    a[i].flags != b[i].flags || a[i].sectors != b[i].sectors)
			return false;
	return true;
}

/* When the table was written, at the earliest: its newest time stamp. */
static u32 table_time(const struct bch_uuid_entry_disk *t, u32 nr)
{
	u32 i, when = 0;

	for (i = 0; i < nr; i++) {
		when = max(when, le32_to_cpu(t[i].first_reg));
		when = max(when, le32_to_cpu(t[i].last_reg));
		when = max(when, le32_to_cpu(t[i].invalidated));
	}
	return when;
}

/*
 * A node, prio set or journal entry whose bytes after the header are zero
 * (an empty leaf) would read as a table with one slot in use, its UUID
 * the checksum and magic: those magics are no UUID's second half.
 */
static bool other_metadata(const struct bch_geom *g, const void *buf)
{
	u64 magic = le64_to_cpu(((const __le64 *)buf)[1]);

	return magic == g->bset_magic || magic == g->pset_magic ||
	       magic == g->jset_magic;
}

/* Whether bucket @b holds a table, read into @buf (meta_bucket_bytes). */
static bool table_at(const struct bch_meta_io *io, const struct bch_sb *sb,
		     const struct bch_geom *g, u64 b, void *buf)
{
	u32 nr = g->meta_bucket_bytes / sizeof(struct bch_uuid_entry_disk);
	u32 head = 512 / sizeof(struct bch_uuid_entry_disk), in_use;
	u64 at = bch_bucket_sector(g, b);

	/* The first sector first: most buckets fail there. */
	return b >= g->kg.first_bucket && b < g->kg.nbuckets &&
	       !journal_bucket(sb, b) && !io->read(io->ctx, at, buf, 512) &&
	       !other_metadata(g, buf) && table_like(buf, head, &in_use) &&
	       !io->read(io->ctx, at, buf, g->meta_bucket_bytes) &&
	       table_like(buf, nr, &in_use) && in_use;
}

int bch_uuid_scan(const struct bch_meta_io *io, const struct bch_sb *sb,
		  const struct bch_geom *g, void *table,
		  struct bch_uuid_found *f)
{
	u32 nr = g->meta_bucket_bytes / sizeof(struct bch_uuid_entry_disk);
	void *buf = bch_zalloc(g->meta_bucket_bytes);
	u32 when;
	u64 b;

	memset(f, 0, sizeof(*f));
	if (!buf)
		return -ENOMEM;
	for (b = g->kg.first_bucket; b < g->kg.nbuckets; b++) {
		if (!table_at(io, sb, g, b, buf))
			continue;
		when = table_time(buf, nr);
		if (!f->tables++ || when > f->when) {
			memcpy(table, buf, g->meta_bucket_bytes);
			f->bucket = b;
			f->when = when;
			f->other = 0;
			f->same = 1;
		} else if (when == f->when) {
			f->same++;
			if (!f->other && !tables_agree(table, buf, nr))
				f->other = b;
		}
	}
	bch_free(buf);
	if (!f->tables)
		return -ENODATA;
	return f->other ? -ENOTUNIQ : 0;
}

int bch_uuid_given(const struct bch_meta_io *io, const struct bch_sb *sb,
		   const struct bch_geom *g, u64 bucket, void *table)
{
	void *buf = bch_zalloc(g->meta_bucket_bytes);
	int r = -ENODATA;

	if (!buf)
		return -ENOMEM;
	if (table_at(io, sb, g, bucket, buf)) {
		memcpy(table, buf, g->meta_bucket_bytes);
		r = 0;
	}
	bch_free(buf);
	return r;
}
