/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmarks' random numbers: xorshift64 from a fixed seed, so that
 * every run does exactly the same operations and callgrind's counts
 * repeat.
 */
#ifndef BENCH_XORSHIFT_H
#define BENCH_XORSHIFT_H

#include "util/platform.h"

static u64 rng = 0x2545f4914f6cdd1dULL;

static inline u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#endif
