// SPDX-License-Identifier: GPL-2.0
/* The userspace platform layer's state; see platform_user.h. */
#include "util/platform.h"

long bch_fail_alloc_countdown;
u64 bch_alloc_calls;
