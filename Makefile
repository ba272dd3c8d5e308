# dm-bcache top-level Makefile.
#
#   make               dm-bcache.ko for the running kernel and the tools;
#                      needs only the build dependencies (make deps-build)
#   make KVER=...      the module for another installed kernel's headers
#   make deps-build    install the build dependencies (compiler, libblkid,
#                      the headers of KVER) and nothing else
#   make deps          install what the tests, demo and benchmarks need
#                      (kernel images, qemu, ...); the targets below that
#                      need it run it themselves
#   make lint          checkpatch and sparse over the module (must be clean)
#   make unit          userspace unit tests of core/ under ASan/UBSan
#   make check         every test: unit, lint, VM suites on 6.1 and 6.12
#   make check-lvm2    lvm2's own cache and writecache tests against the
#                      patched lvm2 (run when lvm2-plugin/patches change)
#   make demo          boot a VM, create a bcache device, show it working
#   make lvm2          Debian's lvm2 packages with lvm2-plugin/patches applied,
#                      built once per series (cached), into build/lvm2/
#   make bench         the benchmark matrix against dm-linear, mainline
#                      bcache, dm-cache and dm-writecache, one VM boot per
#                      kernel (BENCH_QUICK=1: the short variant)
#
# The test kernels are resolved by scripts/deps.sh and recorded in
# build/kernels.mk; the test scripts read it themselves.

TOP := $(CURDIR)
BUILD := $(TOP)/build

KVER ?= $(shell uname -r)
KDIR = /lib/modules/$(KVER)/build
KMOD_DIR = $(BUILD)/kmod/$(KVER)
MODULE = $(KMOD_DIR)/dm-bcache.ko
CHECKPATCH = $(BUILD)/linux-scripts/scripts/checkpatch.pl

.PHONY: all deps deps-build module userspace lint unit check check-lvm2 demo bench lvm2 clean

all: module userspace

deps-build:
	bash scripts/deps-build.sh $(KVER)

deps:
	bash scripts/deps.sh

# Kbuild writes objects next to the sources, so each kernel version gets
# its own copy of the tree to build in.
module:
	@test -d $(KDIR) || { echo "make: no headers for kernel $(KVER) ($(KDIR)):"; \
		echo "  install linux-headers-$(KVER) (make deps-build does), or give KVER="; exit 1; }
	rm -rf $(KMOD_DIR) && mkdir -p $(KMOD_DIR)
	cp -a dm-bcache/. $(KMOD_DIR)/
	$(MAKE) -C $(KDIR) M=$(KMOD_DIR) W=1 KCFLAGS=-Werror modules

userspace:
	$(MAKE) -C userspace

lint: deps
	bash scripts/lint.sh

unit:
	$(MAKE) -C userspace unit

check:
	bash tests/run-all.sh

check-lvm2:
	bash tests/lvm2-suite.sh

demo:
	bash scripts/demo.sh

bench: deps
	bash bench/run.sh

lvm2:
	bash scripts/lvm2.sh

clean:
	rm -rf $(BUILD)/kmod $(BUILD)/user $(BUILD)/vm $(BUILD)/results
	$(MAKE) -C userspace clean
