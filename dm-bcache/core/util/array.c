// SPDX-License-Identifier: GPL-2.0
/* Growable arrays; see array.h. */
#include "util/array.h"

int bch_array_grow(void **p, u32 *cap, u32 nr, u32 need, size_t size,
		   u32 min)
{
	u32 n;
	void *q;

	if (need <= *cap)
		return 0;
	n = max_t(u32, max_t(u32, 2 * *cap, need), min);
	q = bch_zalloc((size_t)n * size);
	if (!q)
		return -ENOMEM;
	if (nr)
		memcpy(q, *p, (size_t)nr * size);
	bch_free(*p);
	*p = q;
	*cap = n;
	return 0;
}
