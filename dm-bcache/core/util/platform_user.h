/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace half of the platform layer: the kernel names the core uses,
 * defined on top of libc.  Only platform.h includes this file.
 */
#ifndef DM_BCACHE_CORE_PLATFORM_USER_H
#define DM_BCACHE_CORE_PLATFORM_USER_H

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
/* long long, as in the kernel, so one printf format fits both. */
typedef unsigned long long u64;
typedef long long s64;

/* __le16/32/64 come from the kernel's UAPI headers, as tools expect. */
#include <linux/types.h>

#define le16_to_cpu(x) le16toh(x)
#define le32_to_cpu(x) le32toh(x)
#define le64_to_cpu(x) ((u64)le64toh(x))
#define cpu_to_le16(x) htole16(x)
#define cpu_to_le32(x) htole32(x)
#define cpu_to_le64(x) ((__le64)htole64(x))

#define BIT_ULL(n) (1ULL << (n))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define __packed __attribute__((packed))

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define min_t(t, a, b) min((t)(a), (t)(b))
#define max_t(t, a, b) max((t)(a), (t)(b))
#define clamp_t(t, v, lo, hi) min_t(t, max_t(t, v, lo), hi)
#define __printf(a, b) __attribute__((format(printf, a, b)))

static inline void bch_sort(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *))
{
	if (n)		/* qsort() must not see a NULL base, even for 0 */
		qsort(base, n, size, cmp);
}

/*
 * Allocation failure injection, for the unit tests' fault runs: while
 * bch_fail_alloc_countdown is positive, every allocation counts it down,
 * and the one that brings it to zero fails.  bch_alloc_calls counts
 * allocations, so a test can learn how many sites a run passes.  Both
 * live in util/platform_user.c, which only userspace builds.
 */
extern long bch_fail_alloc_countdown;
extern u64 bch_alloc_calls;

static inline void *bch_zalloc(size_t size)
{
	bch_alloc_calls++;
	if (bch_fail_alloc_countdown > 0 && --bch_fail_alloc_countdown == 0)
		return NULL;
	return calloc(1, size ? size : 1);
}

static inline void bch_free(void *p)
{
	free(p);
}

static inline u64 bch_random_u64(void)
{
	u64 v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		abort();
	return v;
}

static inline u32 bch_now_seconds(void)
{
	return (u32)time(NULL);
}

#ifndef static_assert
#define static_assert _Static_assert
#endif

#endif
