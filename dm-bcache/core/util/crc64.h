/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CRC-64 that every bcache checksum uses: ECMA-182 polynomial
 * 0x42F0E1EBA9EA3693, processed MSB first (not reflected).  In catalogue
 * terms bch_crc64() is CRC-64/WE: init and final xor all ones.
 *
 * bch_crc64_update() is the raw engine: no inversion on entry or exit.
 * Btree node checksums seed it with a pointer word instead of all ones,
 * which is why the raw form is exposed.
 */
#ifndef DM_BCACHE_CORE_CRC64_H
#define DM_BCACHE_CORE_CRC64_H

#include "util/platform.h"

/* Build the lookup table; call once before any other function here. */
void bch_crc64_init(void);

u64 bch_crc64_update(u64 crc, const void *data, size_t len);

/* CRC-64/WE of @len bytes: the checksum of superblocks, jsets, prios. */
static inline u64 bch_crc64(const void *data, size_t len)
{
	return ~bch_crc64_update(~0ULL, data, len);
}

#endif
