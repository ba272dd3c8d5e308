// SPDX-License-Identifier: GPL-2.0
/*
 * The index as a whole, measured: instructions per lookup and per insert
 * in a btree (core/btree/btree.c) of @keys extents with the kernel's node
 * limits (256 KiB nodes).  The tree is built first, outside the
 * measurement; then @ops lookups of random cached sectors, or @ops
 * inserts of new extents into random gaps, run with callgrind's
 * instrumentation on (run.sh starts callgrind with it off), so the count
 * is of those operations only, the leaves sealed every 2048 inserts as
 * commits seal them (sealing counted).  Deterministic: a fixed seed.
 *
 *   bench_btree <lookup|insert> <keys> <ops>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

#include "btree/btree.h"
#include "xorshift.h"

#define NODE_SECTORS	512	/* 256 KiB, the constructor's default */
#define KEY_BYTES	24	/* as core/set/set.c sizes a node's keys */

static int no_placement(void *ctx, struct bch_key *key)
{
	(void)ctx;
	(void)key;
	return 0;
}

/*
 * What a commit does to the leaves in memory (core/btree/btree_write.c): each
 * leaf's open set is sealed, so the next inserts start a short new one.
 * The set layer commits every 2048 inserted keys; so does this.
 */
#define COMMIT_KEYS	2048

static void seal_leaves(struct bch_btree *t)
{
	struct bch_bnode *n;
	u64 inode = 0, offset = 0;

	while ((n = bch_btree_leaf_after(t, inode, offset))) {
		if (bch_keyset_seal(&n->ks))
			exit(2);
		if (inode == bch_key_inode(&n->key) && offset == n->key.low)
			break;		/* the last leaf: its key is the maximum */
		inode = bch_key_inode(&n->key);
		offset = n->key.low;
	}
}

/* Extent @i: 8 sectors at 16 * i, a gap of 8 after it. */
static void extent(struct bch_key *k, u64 i, u64 at)
{
	bch_key_init(k, 1, at + 8, 8, false);
	bch_key_add_ptr(k, bch_make_ptr(0, (i * 8) & ((1ULL << 40) - 1), 0));
}

int main(int argc, char **argv)
{
	u32 node_keys = NODE_SECTORS * 512 / KEY_BYTES / 2;
	struct bch_btree t;
	struct bch_key k;
	u64 keys, ops, i, *order, hits = 0;
	bool insert;

	if (argc != 4 || (strcmp(argv[1], "lookup") && strcmp(argv[1], "insert"))) {
		fprintf(stderr, "usage: bench_btree <lookup|insert> <keys> <ops>\n");
		return 2;
	}
	insert = !strcmp(argv[1], "insert");
	keys = strtoull(argv[2], NULL, 0);
	ops = strtoull(argv[3], NULL, 0);
	if (bch_btree_init(&t, node_keys, node_keys, NODE_SECTORS, no_placement,
			   NULL))
		return 2;
	/* Built in random order, as a cache fills. */
	order = malloc(keys * sizeof(*order));
	if (!order)
		return 2;
	for (i = 0; i < keys; i++)
		order[i] = i;
	for (i = keys - 1; i > 0; i--) {
		u64 j = rnd() % (i + 1), x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	for (i = 0; i < keys; i++) {
		extent(&k, order[i], order[i] * 16);
		if (bch_btree_insert(&t, &k))
			return 2;
		if (i % COMMIT_KEYS == COMMIT_KEYS - 1)
			seal_leaves(&t);
	}
	seal_leaves(&t);
	free(order);

	CALLGRIND_START_INSTRUMENTATION;
	for (i = 0; i < ops; i++) {
		u64 at = (rnd() % keys) * 16, next;

		if (insert) {
			/* Into the gap after extent at/16: no overlap. */
			extent(&k, keys + i, at + 8);
			if (bch_btree_insert(&t, &k))
				return 2;
			if (i % COMMIT_KEYS == COMMIT_KEYS - 1)
				seal_leaves(&t);
		} else if (bch_btree_lookup(&t, 1, at + (rnd() & 7), &next)) {
			hits++;
		}
	}
	CALLGRIND_STOP_INSTRUMENTATION;
	printf("%s keys %llu ops %llu hits %llu depth %u nodes %llu\n",
	       argv[1], (unsigned long long)keys, (unsigned long long)ops,
	       (unsigned long long)hits, bch_btree_depth(&t),
	       (unsigned long long)t.nr_nodes);
	bch_btree_free(&t);
	return hits == (insert ? 0 : ops) ? 0 : 1;
}
