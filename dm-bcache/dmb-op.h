/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ops: dm-bcache's small answer to bcache's closures, and its rules.
 *
 * An op is a piece of work that waits for several I/Os (or other pieces)
 * and then continues.  It is a counter and a continuation:
 *
 *  1. dmb_op_init() sets the count to 1: the starter's reference.
 *  2. Before starting anything whose completion the op waits for (a bio,
 *     usually), take a reference with dmb_op_get(); that completion drops
 *     it with dmb_op_put().  The starter drops its own reference last, once
 *     everything is started, so the op cannot finish half-started.
 *  3. A failing piece records its status with dmb_op_error() before its
 *     put.  The first error is kept.
 *  4. The last put calls the continuation, in whatever context that put ran
 *     in: often a bio completion, in interrupt context.  A continuation
 *     therefore never sleeps; it hands the op to a workqueue (the index
 *     worker, usually), where sleeping, the index lock and metadata I/O
 *     are allowed.
 *  5. An op lives in the bio's per-bio data or in memory its continuation
 *     frees; nothing else holds a pointer to it once the count is zero.
 *
 * Closures also chain parents and wait lists; dm-bcache does not need
 * them: ordering between ops comes from the one ordered index workqueue
 * and the index lock, and waiting is done by workqueue flushes.
 */
#ifndef DM_BCACHE_OP_H
#define DM_BCACHE_OP_H

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/blk_types.h>

struct dmb_op;
typedef void (*dmb_op_fn)(struct dmb_op *op);

struct dmb_op {
	atomic_t remaining;
	blk_status_t status;
	dmb_op_fn done;
};

static inline void dmb_op_init(struct dmb_op *op, dmb_op_fn done)
{
	atomic_set(&op->remaining, 1);
	op->status = BLK_STS_OK;
	op->done = done;
}

static inline void dmb_op_get(struct dmb_op *op)
{
	atomic_inc(&op->remaining);
}

static inline void dmb_op_error(struct dmb_op *op, blk_status_t status)
{
	if (status && !READ_ONCE(op->status))
		WRITE_ONCE(op->status, status);
}

static inline void dmb_op_put(struct dmb_op *op)
{
	int left = atomic_dec_return(&op->remaining);

	/* Below zero: a piece ended twice, and done() already ran. */
	if (!WARN_ON_ONCE(left < 0) && !left)
		op->done(op);
}

#endif
