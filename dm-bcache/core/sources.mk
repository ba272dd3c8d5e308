# SPDX-License-Identifier: GPL-2.0
# The core's sources, one folder per layer, lowest first.  A layer uses
# only the layers listed before it; peers (joined by a comma) never use
# each other: scripts/check-layers.py enforces it.  This one list builds
# both dm-bcache.ko (dm-bcache/Kbuild) and libbcache-core.a
# (userspace/Makefile).
DMB_CORE_LAYERS := util format alloc,journal btree mkfs set,check repair

DMB_CORE_SRCS := \
	util/crc64.c util/array.c \
	format/super.c format/origin.c format/bkey.c format/geometry.c \
	format/jset.c format/bset.c format/prio.c format/uuid.c \
	alloc/alloc.c alloc/prio_read.c alloc/prio_write.c \
	journal/journal_read.c journal/journal_write.c \
	btree/extents.c btree/keyset.c btree/btree.c btree/btree_merge.c \
	btree/children.c btree/node_io.c btree/btree_load.c btree/btree_write.c \
	mkfs/format.c \
	set/set.c \
	check/check.c check/check_journal.c check/check_btree.c

# Userspace only: the userspace platform layer's own state (the kernel's
# platform layer is the kernel).
DMB_CORE_USER_SRCS := util/platform_user.c

# Userspace only: the offline tools' layer (bcache_repair), which the
# target never runs and so does not carry.
DMB_CORE_TOOL_SRCS := repair/salvage.c repair/orphans.c repair/headless.c \
	repair/rebuild.c
