// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures, one site at a time.  A run opens a fresh cache set
 * over an in-memory device and makes write-back writes (dirty data, each
 * at its own range), journalling each, with commits, gc passes and a
 * final prio save along the way.  A write is acknowledged once its
 * journal call returned 0.  The run is repeated with the n-th allocation
 * failing, for every n the run reaches (the platform layer's injector,
 * platform_user.h); the first error ends the run as it would end the
 * cache.  Then the device is opened again without failures, as the next
 * table would: it must check clean, open, and read every acknowledged
 * write back (its key live, its data the data written).
 */
#include <stdlib.h>

#include "unit.h"
#include "check/check.h"
#include "mkfs/format.h"
#include "set/set.h"

#define NB		1024		/* buckets */
#define BS		16		/* sectors per bucket */
#define WRITES		96
#define WLEN		8		/* sectors per write */

struct fdev {
	u8 *data;
	struct bch_meta_io io;
};

static int fd_read(void *ctx, u64 sector, void *buf, size_t len)
{
	struct fdev *d = ctx;

	if (sector * 512 + len > (u64)NB * BS * 512)
		return -EIO;
	memcpy(buf, d->data + sector * 512, len);
	return 0;
}

static int fd_write(void *ctx, u64 sector, const void *buf, size_t len)
{
	struct fdev *d = ctx;

	if (sector * 512 + len > (u64)NB * BS * 512)
		return -EIO;
	memcpy(d->data + sector * 512, buf, len);
	return 0;
}

static int fd_flush(void *ctx)
{
	(void)ctx;
	return 0;
}

static void fd_format(struct fdev *d, struct bch_sb *sb)
{
	struct bch_format_params p = { .dev_sectors = NB * BS,
				       .block_size = 1, .bucket_size = BS };

	d->data = calloc(NB * BS, 512);
	d->io = (struct bch_meta_io){ .ctx = d, .sectors = p.dev_sectors,
				      .lbs = 512, .read = fd_read,
				      .write = fd_write, .flush = fd_flush };
	p.uuid[0] = p.set_uuid[0] = 5;
	CHECK(!bch_format_cache_sb(&p, sb));
	CHECK(!bch_sb_write(&d->io, sb));
	CHECK(!bch_format_cache_set(&d->io, sb));
}

/* The tag of sector @s of write @w: what its data sector starts with. */
static u64 tag(u32 w, u64 s)
{
	return ((u64)(w + 1) << 32) | s;
}

static u32 acked[WRITES];	/* sectors of each write acknowledged */

/* Write @w: dirty data, its key, its journal entry. */
static int one_write(struct bch_set *s, struct fdev *d, u32 w)
{
	u64 start = (u64)w * WLEN, ptr, i, t;
	struct bch_key k;
	int got, r;

	got = bch_alloc_data(&s->a, WLEN, &ptr, true);
	if (got == -ENOSPC) {
		r = bch_set_refill(s, bch_set_refill_batch(s));
		if (r)
			return r;
		got = bch_alloc_data(&s->a, WLEN, &ptr, true);
	}
	if (got < 0)
		return got;
	for (i = 0; i < (u64)got; i++) {
		t = tag(w, start + i);
		memcpy(d->data + (bch_ptr_offset(ptr) + i) * 512, &t, sizeof(t));
	}
	bch_key_init(&k, 1, start + got, got, true);
	bch_key_add_ptr(&k, ptr);
	r = bch_set_insert(s, &k);
	if (r)
		return r;
	bch_alloc_dirty_done(&s->a, ptr, got);
	r = bch_set_journal(s, &k, 1);
	if (!r)
		acked[w] = got;
	return r;
}

static int run_ops(struct bch_set *s, struct fdev *d)
{
	u32 w;
	int r = bch_set_refill(s, bch_set_refill_batch(s));

	for (w = 0; !r && w < WRITES; w++) {
		r = one_write(s, d, w);
		if (!r && w % 16 == 15)
			r = bch_set_commit(s);
		if (!r && w % 32 == 31)
			r = bch_set_gc(s);
	}
	return r ?: bch_set_commit(s) ?: bch_set_save_prios(s);
}

/* Every acknowledged sector reads back: a live key, the data written. */
static u32 lost_sectors(const struct bch_set *s, const struct fdev *d)
{
	u32 w, lost = 0;
	u64 sec, next, t;

	for (w = 0; w < WRITES; w++)
		for (sec = (u64)w * WLEN; sec < (u64)w * WLEN + acked[w];
		     sec++) {
			const struct bch_key *k =
				bch_btree_lookup(&s->t, 1, sec, &next);

			if (!k || !bch_key_ptrs(k) ||
			    !bch_key_live(&s->g, s->a.gens, k)) {
				lost++;
				continue;
			}
			memcpy(&t, d->data + (bch_ptr_offset(k->ptr[0]) +
					      sec - bch_key_start(k)) * 512,
			       sizeof(t));
			lost += t != tag(w, sec);
		}
	return lost;
}

/*
 * One run with allocation @n failing (0: none), then the next open.
 * Returns the run's error, or 0; *@acks the writes it acknowledged.
 */
static int one_run(long n, u32 *acks)
{
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_set s;
	struct bch_sb sb;
	struct fdev d;
	u32 w;
	int r;

	fd_format(&d, &sb);
	memset(acked, 0, sizeof(acked));
	bch_fail_alloc_countdown = n;
	r = bch_set_open(&s, &d.io, &sb);
	if (!r) {
		r = run_ops(&s, &d);
		bch_set_close(&s);
	}
	bch_fail_alloc_countdown = 0;

	CHECK(!bch_check(&d.io, &o, NULL, &res));
	CHECK(res.nr_damage == 0);
	if (bch_set_open(&s, &d.io, &sb)) {
		fprintf(stderr, "  allocation %ld failing: the next open fails\n",
			n);
		CHECK(0);
	} else {
		u32 lost = lost_sectors(&s, &d);

		if (lost)
			fprintf(stderr, "  allocation %ld failing: %u acknowledged sectors lost\n",
				n, lost);
		CHECK(lost == 0);
		bch_set_close(&s);
	}
	for (*acks = 0, w = 0; w < WRITES; w++)
		*acks += !!acked[w];
	free(d.data);
	return r;
}

UNIT_TEST(set_alloc_faults_lose_no_acked_write)
{
	u64 before = bch_alloc_calls, sites;
	u32 acks, errors = 0, partial = 0;
	long n;

	CHECK(one_run(0, &acks) == 0);
	CHECK(acks == WRITES);
	sites = bch_alloc_calls - before;
	for (n = 1; n <= (long)sites; n++) {
		int r = one_run(n, &acks);

		if (r) {
			errors++;
			if (r != -ENOMEM)
				fprintf(stderr, "  allocation %ld failing: the run ended with %d, not -ENOMEM\n",
					n, r);
			CHECK(r == -ENOMEM);
		}
		partial += acks > 0 && acks < WRITES;
	}
	fprintf(stderr, "  %llu allocations in a run; %u failures surfaced, %u runs ended part way\n",
		sites, errors, partial);
	CHECK(errors > 0 && partial > 0);
}

/*
 * A journal write, on which every write's completion waits, allocates
 * nothing once the set is open: its buffer is the writer's own.
 */
UNIT_TEST(set_journal_write_allocates_nothing)
{
	struct bch_set s;
	struct bch_sb sb;
	struct fdev d;
	u64 before;
	u32 w;

	fd_format(&d, &sb);
	memset(acked, 0, sizeof(acked));
	CHECK(!bch_set_open(&s, &d.io, &sb));
	CHECK(!bch_set_refill(&s, bch_set_refill_batch(&s)));
	CHECK(!one_write(&s, &d, 0));
	before = bch_alloc_calls;
	for (w = 0; w < 64; w++) {
		struct bch_key k;

		bch_key_init(&k, 1, (u64)w * WLEN + WLEN, WLEN, false);
		CHECK(!bch_set_journal(&s, &k, 1));
	}
	CHECK(!bch_set_journal(&s, NULL, 0));
	CHECK(bch_alloc_calls == before);
	bch_set_close(&s);
	free(d.data);
}
