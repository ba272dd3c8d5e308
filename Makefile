# dm-bcache top-level Makefile.
#
#   make               build dm-bcache.ko (for KVER) and the userspace side
#   make KVER=...      build against another installed kernel
#   make deps          install every Debian package the project needs
#   make lint          checkpatch and sparse over the module (must be clean)
#   make unit          userspace unit tests of core/ under ASan/UBSan
#   make check         every test: unit, lint, VM suites on 6.1 and 6.12
#   make demo          boot a VM, create a bcache device, show it working
#   make bench         the benchmark matrix against dm-linear, mainline
#                      bcache, dm-cache and dm-writecache, one VM boot per
#                      kernel (BENCH_QUICK=1: the short variant)
#
# The kernels are resolved by scripts/deps.sh and recorded in
# build/kernels.mk; KVER defaults to the 6.1 one.

TOP := $(CURDIR)
BUILD := $(TOP)/build
-include $(BUILD)/kernels.mk

KVER ?= $(KVER_61)
KDIR = /lib/modules/$(KVER)/build
KMOD_DIR = $(BUILD)/kmod/$(KVER)
MODULE = $(KMOD_DIR)/dm-bcache.ko
CHECKPATCH = $(BUILD)/linux-scripts/scripts/checkpatch.pl

.PHONY: all deps module userspace lint unit check demo bench clean

all: module userspace

$(BUILD)/kernels.mk:
	bash scripts/deps.sh

deps:
	bash scripts/deps.sh

# Kbuild writes objects next to the sources, so each kernel version gets
# its own copy of the tree to build in.
module: $(BUILD)/kernels.mk
	@test -n "$(KVER)" || { echo "no kernel version: run make deps"; exit 1; }
	rm -rf $(KMOD_DIR) && mkdir -p $(KMOD_DIR)
	cp -a dm-bcache/. $(KMOD_DIR)/
	$(MAKE) -C $(KDIR) M=$(KMOD_DIR) W=1 modules

userspace:
	$(MAKE) -C userspace

lint: $(BUILD)/kernels.mk
	bash scripts/lint.sh $(KVER)

unit:
	$(MAKE) -C userspace unit

check: $(BUILD)/kernels.mk
	bash tests/run-all.sh

demo: $(BUILD)/kernels.mk
	bash scripts/demo.sh

bench: $(BUILD)/kernels.mk
	bash bench/run.sh

clean:
	rm -rf $(BUILD)/kmod $(BUILD)/user $(BUILD)/vm $(BUILD)/results
	$(MAKE) -C userspace clean
