# shellcheck shell=bash
# What in a kernel log fails a run: sourced by the guest runner (each
# test's new dmesg lines) and by bench/run.sh (the benchmark's serial log),
# so both judge a kernel by the same words.
# shellcheck disable=SC2034
KERNEL_BAD='WARNING:|BUG:|BUG [a-z]|Oops|general protection|Call Trace|hung_task|blocked for more than|UBSAN|KASAN|kernel BUG'
