/* SPDX-License-Identifier: GPL-2.0 */
/* Growable arrays for the core: one helper instead of one per user. */
#ifndef DM_BCACHE_CORE_ARRAY_H
#define DM_BCACHE_CORE_ARRAY_H

#include "util/platform.h"

/*
 * Make room for @need elements of @size bytes in *@p, which holds @nr
 * and has room for *@cap.  Grows by doubling (at least @min elements).
 * Returns 0, or -ENOMEM with the array unchanged.
 */
int bch_array_grow(void **p, u32 *cap, u32 nr, u32 need, size_t size,
		   u32 min);

#endif
