// SPDX-License-Identifier: GPL-2.0
/* Writing the prio/gen chain; see prio_write.h. */
#include "alloc/prio_write.h"

int bch_prio_write(const struct bch_meta_io *io, const struct bch_geom *g,
		   const u64 *chain, u64 seq, bch_prio_entry_fn fn, void *ctx,
		   void *buf)
{
	struct bch_prio_set_disk *p = buf;
	u64 bucket = 0;
	u32 n;
	int r;

	for (n = 0; n < g->nr_prio_buckets; n++) {
		u32 i;

		memset(buf, 0, g->meta_bucket_bytes);
		p->magic = cpu_to_le64(g->pset_magic);
		p->seq = cpu_to_le64(seq);
		p->next_bucket = cpu_to_le64(n + 1 < g->nr_prio_buckets ?
					     chain[n + 1] : 0);
		for (i = 0; i < g->prios_per_bucket && bucket < g->kg.nbuckets;
		     i++, bucket++) {
			struct bch_prio_entry e = { 0, 0 };

			fn(ctx, bucket, &e);
			bch_prio_put(p, i, &e);
		}
		p->csum = cpu_to_le64(bch_prio_csum(p, g));
		r = io->write(io->ctx, bch_bucket_sector(g, chain[n]), buf,
			      g->meta_bucket_bytes);
		if (r)
			return r;
	}
	return 0;
}
