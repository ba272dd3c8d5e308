# shellcheck shell=bash
# Host side, sourced by tests/vm/run.sh and bench/run.sh: build what a boot
# needs and boot it, one way for both, so the VM the tests pass in is the
# VM the benchmark measures (TCG, as KVM is not available here;
# docs/vm-notes: 2 vCPUs, 2 GiB, serial console, virtio disks).

VM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# vm_build KVER OUT.cpio LOG: the module, the test-only modules
# (tests/vm/testmods) and the userspace tools for KVER, then the initramfs
# holding them, the tests and the benchmark's guest side.  Output goes to
# LOG; non-zero if any step fails.
vm_build() {
	local kver=$1 out=$2 log=$3
	local tw=$VM_TOP/build/kmod/$kver-testmods

	rm -rf "$tw" && mkdir -p "$tw" && cp "$VM_TOP"/tests/vm/testmods/* "$tw"/ &&
		make -s -j"$(nproc)" -C "$VM_TOP" module KVER="$kver" >"$log" 2>&1 &&
		make -s -j"$(nproc)" -C "/lib/modules/$kver/build" M="$tw" W=1 modules >>"$log" 2>&1 &&
		make -s -j"$(nproc)" -C "$VM_TOP" userspace >>"$log" 2>&1 &&
		bash "$VM_TOP/tests/vm/mkinitramfs.sh" "$kver" \
			"$VM_TOP/build/kmod/$kver/dm-bcache.ko" "$out" \
			"$tw" >>"$log" 2>&1
}

# The kernel log the guest runner reads must hold a whole test's lines
# (log_buf_len), and the runner and the tests write their markers to
# /dev/kmsg, which is rate-limited unless printk.devkmsg=on.
KLOG_APPEND="log_buf_len=4M printk.devkmsg=on"

# vm_boot KVER INITRD SECONDS APPEND LOG DISK...: boot KVER, killed after
# SECONDS, with APPEND added to the kernel command line and the serial
# console in LOG; each DISK (an image, optionally followed by qemu drive
# options: "a.img,readonly=on") is a virtio disk, vda first.  Returns
# qemu's exit code.
vm_boot() {
	local kver=$1 initrd=$2 limit=$3 append=$4 log=$5 d
	local drives=()

	shift 5
	for d in "$@"; do
		drives+=(-drive "file=$d,if=virtio,format=raw,cache=none,aio=threads")
	done
	timeout -s KILL "$limit" qemu-system-x86_64 -accel tcg -cpu max \
		-m 2G -smp 2 -kernel "/boot/vmlinuz-$kver" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 oops=panic loglevel=1 $KLOG_APPEND $append" \
		-display none -vga none -no-reboot -monitor none -serial stdio \
		"${drives[@]}" </dev/null >"$log" 2>&1
}
