// SPDX-License-Identifier: GPL-2.0
/* Known-answer tests for the bcache CRC-64 (docs/ondisk-format.md 1.4). */
#include <string.h>

#include "unit.h"
#include "util/crc64.h"

UNIT_TEST(crc64_check_string)
{
	CHECK(bch_crc64("123456789", 9) == 0x62EC59E3F1A4F00AULL);
}

UNIT_TEST(crc64_single_byte)
{
	CHECK(bch_crc64("a", 1) == 0xCE73F427ACC0A99AULL);
}

UNIT_TEST(crc64_zero_bytes)
{
	static const unsigned char zeros[8];

	CHECK(bch_crc64(zeros, sizeof(zeros)) == 0x03534142A6CE566DULL);
}

UNIT_TEST(crc64_empty)
{
	CHECK(bch_crc64("", 0) == 0);
}

/* The raw engine with init 0 and no final xor is CRC-64/ECMA-182. */
UNIT_TEST(crc64_raw_engine_is_ecma182)
{
	CHECK(bch_crc64_update(0, "123456789", 9) == 0x6C40DF5F0B497347ULL);
}

/* Feeding data in pieces gives the same result as in one go. */
UNIT_TEST(crc64_incremental)
{
	const char *s = "The quick brown fox jumps over the lazy dog";
	size_t n = strlen(s), cut;

	for (cut = 0; cut <= n; cut++) {
		unsigned long long c = bch_crc64_update(~0ULL, s, cut);

		c = ~bch_crc64_update(c, s + cut, n - cut);
		CHECK(c == bch_crc64(s, n));
	}
}
