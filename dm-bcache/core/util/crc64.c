// SPDX-License-Identifier: GPL-2.0
/*
 * Table-driven CRC-64 (ECMA-182, MSB first), one byte per step.
 *
 * The table is built at start-up rather than shipped as 256 literals: the
 * generator is eight lines and cannot drift from the polynomial.
 */
#include "util/crc64.h"

#define BCH_CRC64_POLY 0x42F0E1EBA9EA3693ULL

static u64 crc64_table[256];

void bch_crc64_init(void)
{
	unsigned int i, bit;

	for (i = 0; i < 256; i++) {
		u64 r = (u64)i << 56;

		for (bit = 0; bit < 8; bit++)
			r = (r & (1ULL << 63)) ? (r << 1) ^ BCH_CRC64_POLY : r << 1;
		crc64_table[i] = r;
	}
}

u64 bch_crc64_update(u64 crc, const void *data, size_t len)
{
	const u8 *p = data;

	while (len--)
		crc = crc64_table[(crc >> 56) ^ *p++] ^ (crc << 8);
	return crc;
}
