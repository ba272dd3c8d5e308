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
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

/* __le16/32/64 come from the kernel's UAPI headers, as tools expect. */
#include <linux/types.h>

#define le16_to_cpu(x) le16toh(x)
#define le32_to_cpu(x) le32toh(x)
#define le64_to_cpu(x) le64toh(x)
#define cpu_to_le16(x) htole16(x)
#define cpu_to_le32(x) htole32(x)
#define cpu_to_le64(x) htole64(x)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define __packed __attribute__((packed))

#ifndef static_assert
#define static_assert _Static_assert
#endif

#endif
