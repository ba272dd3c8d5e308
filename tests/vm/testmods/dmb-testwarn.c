// SPDX-License-Identifier: GPL-2.0
/*
 * dmb-testwarn: a test-only device-mapper target that logs a kernel
 * warning on demand, so that the VM suite can prove its kernel-log check
 * catches a WARN wherever a test is when it happens (tests/vm/tests/
 * klog-*.sh and the planted runs of tests/run-all.sh).  It is never part
 * of dm-bcache.ko and is only loaded inside the test VM.
 *
 * Table line: "<start> <len> dmb_testwarn <when>", <when> one of
 *   ctr   warn while the table is constructed
 *   dtr   warn when the table is destroyed (dmsetup remove)
 *   none  warn never
 * Every bio is failed: the device holds no data.
 *
 * No state is shared between targets, so there is nothing to lock.
 */
#include <linux/module.h>
#include <linux/device-mapper.h>
#include <linux/bio.h>

#define DM_MSG_PREFIX "dmb_testwarn"

static void planted_warning(const char *where)
{
	/* The words the runner's pattern looks for come from WARN() itself. */
	WARN(1, "dmb_testwarn: warning planted in %s\n", where);
}

static int testwarn_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	bool in_dtr;

	if (argc != 1) {
		ti->error = "Want one argument: ctr, dtr or none";
		return -EINVAL;
	}
	if (!strcmp(argv[0], "ctr")) {
		planted_warning("ctr");
		in_dtr = false;
	} else if (!strcmp(argv[0], "dtr")) {
		in_dtr = true;
	} else if (!strcmp(argv[0], "none")) {
		in_dtr = false;
	} else {
		ti->error = "Unknown argument: want ctr, dtr or none";
		return -EINVAL;
	}
	/* The flag fits in the pointer: no allocation to fail or free. */
	ti->private = in_dtr ? ti : NULL;
	return 0;
}

static void testwarn_dtr(struct dm_target *ti)
{
	if (ti->private)
		planted_warning("dtr");
}

static int testwarn_map(struct dm_target *ti, struct bio *bio)
{
	return DM_MAPIO_KILL;
}

static struct target_type testwarn_target = {
	.name = "dmb_testwarn",
	.version = {1, 0, 0},
	.module = THIS_MODULE,
	.ctr = testwarn_ctr,
	.dtr = testwarn_dtr,
	.map = testwarn_map,
};

static int __init testwarn_init(void)
{
	return dm_register_target(&testwarn_target);
}

static void __exit testwarn_exit(void)
{
	dm_unregister_target(&testwarn_target);
}

module_init(testwarn_init);
module_exit(testwarn_exit);
MODULE_DESCRIPTION("Test-only target that logs a kernel warning on demand");
MODULE_LICENSE("GPL");
