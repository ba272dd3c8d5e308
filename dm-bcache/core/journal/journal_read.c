// SPDX-License-Identifier: GPL-2.0
/* Scanning the journal; see journal_read.h. */
#include "journal/journal_read.h"
#include "util/array.h"

struct window {
	const struct bch_meta_io *io;
	void *buf;
	size_t bytes;		/* capacity */
	u64 start;		/* first sector held */
	size_t len;		/* bytes held */
};

static int push(struct bch_jscan *s, const struct bch_jentry *e)
{
	if (bch_array_grow((void **)&s->e, &s->cap, s->nr, s->nr + 1,
			   sizeof(*e), 64))
		return -ENOMEM;
	s->e[s->nr++] = *e;
	return 0;
}

/* Make [sector, sector + bytes) readable; reads a window at a time. */
static const void *window_at(struct window *w, u64 sector, size_t bytes)
{
	if (sector < w->start || (sector - w->start) * 512 + bytes > w->len) {
		w->start = sector;
		w->len = min_t(u64, w->bytes, (w->io->sectors - sector) * 512);
		if (w->len < bytes ||
		    w->io->read(w->io->ctx, sector, w->buf, w->len))
			return NULL;
	}
	return (const u8 *)w->buf + (sector - w->start) * 512;
}

static int scan_bucket(struct window *w, const struct bch_sb *sb,
		       const struct bch_geom *g, struct bch_jscan *s,
		       u32 ring, bch_jscan_fn fn, void *ctx)
{
	u64 bucket = sb->d[ring];
	u64 base = bch_bucket_sector(g, bucket);
	u32 bsize = g->kg.bucket_size, off = 0;

	w->start = ~0ULL;
	while (off < bsize) {
		size_t want = min_t(size_t, (size_t)(bsize - off) * 512,
				    BCH_JSET_MAX_BYTES);
		const struct bch_jset_disk *j = window_at(w, base + off, want);
		struct bch_jentry e = { 0 };
		const char *err;

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
		if (fn)
			fn(ctx, j, err, &e, bucket);
		if (push(s, &e))
			return -ENOMEM;
		if (err)
			break;	/* the driver's reader stops here too */
		if (!s->have_newest || e.seq > s->newest_seq) {
			memcpy(&s->newest, j, sizeof(s->newest));
			s->have_newest = true;
			s->newest_seq = e.seq;
		}
		off += DIV_ROUND_UP(bch_jset_bytes(j),
				    (size_t)g->block_sectors * 512) *
		       g->block_sectors;
	}
	return 0;
}

int bch_jscan_run(const struct bch_meta_io *io, const struct bch_sb *sb,
		  const struct bch_geom *g, struct bch_jscan *s,
		  bch_jscan_fn fn, void *ctx)
{
	struct window w = { .io = io };
	u32 ring;
	int r = 0;

	memset(s, 0, sizeof(*s));
	w.bytes = min_t(size_t, (size_t)g->kg.bucket_size * 512, 1 << 20);
	w.buf = bch_zalloc(w.bytes);
	if (!w.buf)
		return -ENOMEM;
	for (ring = 0; ring < sb->keys && !r; ring++)
		r = scan_bucket(&w, sb, g, s, ring, fn, ctx);
	bch_free(w.buf);
	return r;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct bch_jentry *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (int)y->valid - (int)x->valid;
}

void bch_jscan_sort(struct bch_jscan *s)
{
	bch_sort(s->e, s->nr, sizeof(*s->e), cmp_entry);
}

int bch_jscan_read(const struct bch_meta_io *io, const struct bch_sb *sb,
		   const struct bch_geom *g, const struct bch_jentry *e,
		   struct bch_jset_disk **out)
{
	u64 sector = bch_bucket_sector(g, sb->d[e->ring]) +
		     (u64)e->block * g->block_sectors;
	size_t bytes = DIV_ROUND_UP(sizeof(struct bch_jset_disk) +
				    8 * (size_t)e->u64s, 512) * 512;
	struct bch_jset_disk *j;

	*out = NULL;
	if (sector + bytes / 512 > io->sectors)
		return -EIO;
	j = bch_zalloc(bytes);
	if (!j)
		return -ENOMEM;
	if (io->read(io->ctx, sector, j, bytes)) {
		bch_free(j);
		return -EIO;
	}
	*out = j;
	return 0;
}

void bch_jscan_free(struct bch_jscan *s)
{
	bch_free(s->e);
	s->e = NULL;
	s->nr = 0;
	s->cap = 0;
}

int bch_jscan_replay(const struct bch_meta_io *io, const struct bch_sb *sb,
		     const struct bch_geom *g, struct bch_jscan *s,
		     int (*fn)(void *ctx, const struct bch_key *k), void *ctx)
{
	u64 last = le64_to_cpu(s->newest.last_seq);
	int r = 0;
	u32 i;

	bch_jscan_sort(s);
	s->cut_short = 0;
	for (i = 0; i < s->nr && !r; i++) {
		const struct bch_jentry *e = &s->e[i];
		struct bch_jset_disk *j;
		u32 at = 0;

		if (!e->valid || e->seq < last || e->seq > s->newest_seq ||
		    (i && s->e[i - 1].seq == e->seq && s->e[i - 1].valid))
			continue;
		r = bch_jscan_read(io, sb, g, e, &j);
		if (r)
			return r;
		while (at < e->u64s && !r) {
			struct bch_key k;
			u32 n = bch_key_decode(j->d + at, e->u64s - at, &k);

			if (!n) {
				s->cut_short++;
				break;
			}
			at += n;
			if (bch_key_size(&k) && bch_key_size(&k) <= k.low)
				r = fn(ctx, &k);
		}
		bch_free(j);
	}
	return r;
}
