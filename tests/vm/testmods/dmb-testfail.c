// SPDX-License-Identifier: GPL-2.0
/*
 * dmb-testfail: a test-only error injector for the VM suite, since
 * Debian's kernels are built without the kernel's fault injection
 * (failslab and friends need a debug kernel).  A kretprobe on one
 * function makes some of its successful calls return an error instead:
 * every @every-th call, at most @times times (0: no limit), once @armed
 * is set.  The function ran in full; only its caller is told it failed,
 * as when its last allocation fails after the others succeeded.  It is
 * never part of dm-bcache.ko and is only loaded inside the test VM.
 *
 * Parameters: func (the symbol, "module:name" form allowed), err (the
 * errno returned, negative), every, times; armed (0/1, writable at run
 * time); calls and injected (read-only counts).
 *
 * The counts are atomics; the handler runs in any context and takes no
 * lock.
 */
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>

static char *func = "dm_bcache:bch_set_insert";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "function whose return value is rewritten");

static int err = -ENOMEM;
module_param(err, int, 0444);
MODULE_PARM_DESC(err, "error returned instead of success");

static unsigned int every = 4;
module_param(every, uint, 0444);
MODULE_PARM_DESC(every, "fail every n-th successful call");

static unsigned int times;
module_param(times, uint, 0444);
MODULE_PARM_DESC(times, "failures at most (0: no limit)");

static bool armed;
module_param(armed, bool, 0644);
MODULE_PARM_DESC(armed, "inject only while set");

static atomic_t calls = ATOMIC_INIT(0), injected = ATOMIC_INIT(0);

static int get_atomic(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(kp->arg));
}

static const struct kernel_param_ops count_ops = { .get = get_atomic };
module_param_cb(calls, &count_ops, &calls, 0444);
module_param_cb(injected, &count_ops, &injected, 0444);

static int on_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (!READ_ONCE(armed) || regs_return_value(regs) != 0)
		return 0;
	if (atomic_inc_return(&calls) % every)
		return 0;
	if (times && atomic_inc_return(&injected) > times) {
		atomic_dec(&injected);
		return 0;
	}
	if (!times)
		atomic_inc(&injected);
	regs_set_return_value(regs, err);
	return 0;
}

static struct kretprobe probe = {
	.handler = on_return,
	.maxactive = 64,
};

static int __init testfail_init(void)
{
	int r;

	if (!every || err >= 0 || err < -MAX_ERRNO)
		return -EINVAL;
	probe.kp.symbol_name = func;
	r = register_kretprobe(&probe);
	if (r)
		pr_err("dmb_testfail: cannot probe %s (%d)\n", func, r);
	return r;
}

static void __exit testfail_exit(void)
{
	unregister_kretprobe(&probe);
	pr_info("dmb_testfail: %s: %d calls counted, %d failed\n", func,
		atomic_read(&calls), atomic_read(&injected));
}

module_init(testfail_init);
module_exit(testfail_exit);
MODULE_DESCRIPTION("dm-bcache test-only error injector (kretprobe)");
MODULE_LICENSE("GPL");
