// SPDX-License-Identifier: GPL-2.0
/* Reading the prio/gen chain; see prio_read.h. */
#include "alloc/prio_read.h"

static int stop(struct bch_prio_result *res, u32 link, u64 bucket,
		const char *why)
{
	if (res) {
		res->link = link;
		res->bucket = bucket;
		res->why = why;
	}
	return 1;
}

static void note_seq(struct bch_prio_result *res, u32 link, u64 seq)
{
	if (!res)
		return;
	if (link && seq != res->seq)
		res->mixed_seq = true;
	res->seq = link ? max(res->seq, seq) : seq;
}

int bch_prio_read(const struct bch_meta_io *io, const struct bch_geom *g,
		  u64 head, u8 *gens, u16 *prios,
		  const struct bch_prio_reader *rd, struct bch_prio_result *res)
{
	struct bch_prio_set_disk *p = bch_zalloc(g->meta_bucket_bytes);
	u64 bucket = head, first = 0;
	u32 link;
	int r = 0;

	if (res)
		memset(res, 0, sizeof(*res));
	if (!p)
		return -ENOMEM;
	for (link = 0; link < g->nr_prio_buckets && !r; link++) {
		const char *err;
		u32 i, count;

		if (bucket < g->kg.first_bucket || bucket >= g->kg.nbuckets) {
			r = stop(res, link, bucket, "outside the device");
			break;
		}
		if (rd && rd->claim && !rd->claim(rd->ctx, link, bucket)) {
			r = stop(res, link, bucket, NULL);
			break;
		}
		r = io->read(io->ctx, bch_bucket_sector(g, bucket), p,
			     g->meta_bucket_bytes);
		if (r)
			break;
		err = bch_prio_validate(p, g);
		if (err) {
			u64 csum = bch_prio_csum(p, g);

			r = stop(res, link, bucket, err);
			if (res && csum != le64_to_cpu(p->csum)) {
				res->what = "csum";
				res->expected = csum;
				res->found = le64_to_cpu(p->csum);
			} else if (res) {
				res->what = "magic";
				res->expected = g->pset_magic;
				res->found = le64_to_cpu(p->magic);
			}
			break;
		}
		count = min_t(u64, g->prios_per_bucket, g->kg.nbuckets - first);
		for (i = 0; i < count; i++) {
			struct bch_prio_entry e;

			bch_prio_get(p, i, &e);
			gens[first + i] = e.gen;
			if (prios)
				prios[first + i] = e.prio;
		}
		note_seq(res, link, le64_to_cpu(p->seq));
		if (rd && rd->visit)
			rd->visit(rd->ctx, bucket, first, count, p);
		first += count;
		bucket = le64_to_cpu(p->next_bucket);
	}
	bch_free(p);
	return r;
}
