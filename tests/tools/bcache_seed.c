// SPDX-License-Identifier: GPL-2.0
/*
 * bcache_seed: populate a freshly formatted cache offline with our own
 * writers, for the mainline cross-test ("our writer -> the driver").
 *
 *   bcache_seed [--journal] [--dirty] CACHE BACKING DATA-FILE MIB
 *
 * Copies MIB MiB from DATA-FILE into data buckets of CACHE, indexes them
 * as clean extents of the backing device's data area (inode 0, starting
 * at its data offset) in a btree built by core/btree/btree.c and written by
 * core/btree/node_io.c, records BACKING in UUID slot 0, names the new root in a
 * new journal entry, and marks BACKING attached and clean.  The driver
 * then serves those sectors from the cache: since BACKING itself does not
 * hold that data, reading it back through /dev/bcacheN proves the index
 * was used.  With --journal the extents go into journal entries written
 * by core/journal/journal_write.c instead, and the root stays empty: the driver
 * must replay them.  With --dirty the extents are dirty and BACKING is
 * marked dirty: write-back data only the cache holds (bcache_writeback's
 * host test).  Exit codes: 0 done, 1 refused, 2 error.
 */
#include <stdlib.h>
#include <unistd.h>

#include "util/crc64.h"
#include "btree/btree.h"
#include "check/check.h"
#include "mkfs/format.h"
#include "journal/journal_read.h"
#include "journal/journal_write.h"
#include "btree/node_io.h"
#include "format/origin.h"
#include "devio.h"

#define PROG "bcache_seed"

static struct bch_dev cache, backing;
static struct bch_sb csb, bsb;
static struct bch_geom g;
static u64 next_node_bucket, next_data_bucket;
static bool dirty;

static int die(int code, const char *msg)
{
	fprintf(stderr, PROG ": %s\n", msg);
	return code;
}

static int alloc_node(void *ctx, struct bch_key *key)
{
	(void)ctx;
	if (next_node_bucket >= next_data_bucket)
		return -ENOSPC;
	bch_key_add_ptr(key, bch_make_ptr(0, bch_bucket_sector(&g,
						next_node_bucket++), 0));
	return 0;
}

static int write_tree(struct bch_bnode *n)
{
	struct bch_node_out out = { .key = n->key };
	struct bch_key *keys;
	u32 i, nr;
	int r = 0;

	if (!n->level) {
		if (bch_keyset_compact(&n->ks))
			return -ENOMEM;
		return bch_node_write_new(&cache.io, &g, &out,
					  n->ks.set[0].e.k, n->ks.set[0].e.nr);
	}
	keys = calloc(n->nr_child, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	nr = n->nr_child;
	for (i = 0; i < nr && !r; i++) {
		keys[i] = n->child[i]->key;
		r = write_tree(n->child[i]);
	}
	if (!r)
		r = bch_node_write_new(&cache.io, &g, &out, keys, nr);
	free(keys);
	return r;
}

/*
 * Copy @mib MiB from @data into data buckets, a bucket at a time, indexed
 * as 4 KiB extents (as 4 KiB writes would leave them), so that a few MiB
 * make a tree of several nodes.
 */
static int fill(struct bch_btree *t, FILE *data, u64 mib)
{
	u64 sector = bsb.data_offset, left = mib << 11;
	u32 bucket_sectors = min_t(u32, g.kg.bucket_size, BCH_KEY_MAX_SIZE);
	u8 *buf = malloc((size_t)bucket_sectors * 512);
	int r = 0;

	if (!buf)
		return -ENOMEM;
	while (left && !r) {
		u32 n = min_t(u64, left, bucket_sectors), at;
		u64 b = --next_data_bucket;

		if (b < next_node_bucket + 64 ||
		    fread(buf, 512, n, data) != n ||
		    cache.io.write(cache.io.ctx, bch_bucket_sector(&g, b), buf,
				   (size_t)n * 512)) {
			r = -ENOSPC;
			break;
		}
		for (at = 0; at < n && !r; at += 8) {
			u32 len = min_t(u32, 8, n - at);
			struct bch_key k;

			bch_key_init(&k, 0, sector + at + len, len, dirty);
			bch_key_add_ptr(&k, bch_make_ptr(0,
					bch_bucket_sector(&g, b) + at, 0));
			r = bch_btree_insert(t, &k);
		}
		sector += n;
		left -= n;
	}
	free(buf);
	return r;
}

/* UUID slot 0 := the backing device, in place. */
static int record_backing(const struct bch_jset_disk *newest)
{
	struct bch_uuid_entry_disk *tbl;
	struct bch_key uk;
	int r;

	bch_key_decode(newest->uuid_bucket, BCH_BKEY_PAD_U64S, &uk);
	tbl = calloc(1, g.meta_bucket_bytes);
	if (!tbl)
		return -ENOMEM;
	r = cache.io.read(cache.io.ctx, bch_ptr_offset(uk.ptr[0]), tbl,
			  g.meta_bucket_bytes);
	if (!r) {
		memset(&tbl[0], 0, sizeof(tbl[0]));
		memcpy(tbl[0].uuid, bsb.uuid, 16);
		memcpy(tbl[0].label, bsb.label, sizeof(tbl[0].label));
		tbl[0].first_reg = tbl[0].last_reg =
			cpu_to_le32(bch_now_seconds());
		r = cache.io.write(cache.io.ctx, bch_ptr_offset(uk.ptr[0]), tbl,
				   g.meta_bucket_bytes);
	}
	free(tbl);
	return r;
}

/* The next journal entry after @s's newest, naming @t's root. */
static int write_entry(const struct bch_jscan *s, const struct bch_btree *t)
{
	size_t block = (size_t)g.block_sectors * 512;
	const struct bch_jentry *last = NULL;
	struct bch_jset_disk *j;
	u64 sector;
	u32 i;
	int r;

	for (i = 0; i < s->nr; i++)
		if (s->e[i].valid && s->e[i].seq == s->newest_seq)
			last = &s->e[i];
	/* Right after the newest entry, in the same bucket. */
	sector = bch_bucket_sector(&g, csb.d[last->ring]) +
		 (last->block + DIV_ROUND_UP(sizeof(*j) + 8 * (size_t)last->u64s,
					     block)) * (u64)g.block_sectors;
	j = calloc(1, block);
	if (!j)
		return -ENOMEM;
	memcpy(j, &s->newest, sizeof(*j));
	j->seq = j->last_seq = cpu_to_le64(s->newest_seq + 1);
	j->keys = 0;
	memset(j->btree_root, 0, sizeof(j->btree_root));
	bch_key_encode(&t->root->key, j->btree_root);
	j->btree_level = cpu_to_le16(t->root->level);
	j->csum = cpu_to_le64(bch_jset_csum(j));
	r = cache.io.write(cache.io.ctx, sector, j, block);
	free(j);
	return r;
}

/* Every extent of the tree's leaves, in order, into journal entries. */
static int journal_keys(struct bch_btree *t, struct bch_jscan *s)
{
	struct bch_bnode *n = t->root;
	struct bch_jwriter w;
	struct bch_key *k;
	u32 left;
	int r;

	if (n->level || bch_keyset_compact(&n->ks))
		return -EINVAL;		/* main() keeps it one leaf */
	r = bch_jwriter_open(&w, &cache.io, &csb, &g, s);
	k = n->ks.set[0].e.k;
	left = n->ks.set[0].e.nr;
	while (!r && left) {
		r = bch_jwriter_write(&w, k, left);
		if (r > 0) {
			k += r;
			left -= r;
			r = 0;
		}
	}
	bch_jwriter_close(&w);
	return r;
}

int main(int argc, char **argv)
{
	bool journal = false;
	struct bch_check_opts o = { 0 };
	struct bch_check_result res;
	struct bch_sb_disk *d;
	struct bch_btree t;
	struct bch_jscan s;
	FILE *data;
	const char *err;

	for (; argc > 1 && !strncmp(argv[1], "--", 2); argc--, argv++) {
		if (!strcmp(argv[1], "--journal"))
			journal = true;
		else if (!strcmp(argv[1], "--dirty"))
			dirty = true;
		else
			break;
	}
	if (argc != 5)
		return die(2, "usage: " PROG " [--journal] [--dirty] CACHE BACKING DATA-FILE MIB");
	bch_crc64_init();
	if (bch_dev_open(&cache, argv[1], BCH_OPEN_WRITE) ||
	    bch_dev_open(&backing, argv[2], BCH_OPEN_WRITE))
		return 2;
	data = fopen(argv[3], "rb");
	if (!data)
		return die(2, "cannot open the data file");
	if (bch_check(&cache.io, &o, NULL, &res) || res.nr_damage ||
	    !res.synchronous || res.btree_keys)
		return die(1, "the cache must be freshly formatted and sound");
	csb = res.sb;
	bch_geom_init(&g, &csb);
	d = calloc(1, BCH_SB_BYTES);
	if (!d || bch_sb_read(&backing.io, d))
		return die(2, "cannot read the backing superblock");
	err = bch_sb_validate(d, backing.sectors, backing.lbs, &bsb);
	free(d);
	if (err || bsb.kind != BCH_SB_KIND_BACKING)
		return die(1, "BACKING needs a valid backing superblock");

	if (bch_jscan_run(&cache.io, &csb, &g, &s, NULL, NULL) ||
	    !s.have_newest)
		return die(2, "cannot read the journal");
	/* Nodes after the formatted metadata; data from the top down. */
	next_node_bucket = bch_ptr_bucket(&g, le64_to_cpu(s.newest.btree_root[2])) + 1;
	next_data_bucket = csb.nbuckets;
	/* --journal: one leaf in memory, never written; its keys are logged. */
	if (bch_btree_init(&t, journal ? ~0U : 1000, 64, g.btree_sectors,
			   alloc_node, NULL) ||
	    fill(&t, data, strtoull(argv[4], NULL, 10)) ||
	    record_backing(&s.newest) ||
	    (journal ? journal_keys(&t, &s) :
	     write_tree(t.root) || write_entry(&s, &t)))
		return die(2, "writing the cache failed");

	/* Attached: the driver attaches to UUID slot 0. */
	bch_origin_record(&bsb, csb.set_uuid, dirty ? BCH_BDEV_STATE_DIRTY :
			  BCH_BDEV_STATE_CLEAN);
	if (bch_sb_write(&backing.io, &bsb) || fsync(backing.fd) ||
	    fsync(cache.fd))
		return die(2, "writing the backing superblock failed");
	if (journal)
		printf("%s: %u keys in the journal, %llu data buckets\n",
		       argv[1], t.root->ks.set[0].e.nr,
		       csb.nbuckets - next_data_bucket);
	else
		printf("%s: %llu nodes, root level %u, %llu data buckets\n",
		       argv[1], t.nr_nodes, t.root->level,
		       csb.nbuckets - next_data_bucket);
	bch_btree_free(&t);
	bch_jscan_free(&s);
	return 0;
}
