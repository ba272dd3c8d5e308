# The write-back power cut on a make-bcache -B origin: persist-wb-write
# with WB_LAYOUT=backing (persist-wbb-read is the second boot).
WB_LAYOUT=backing
. /tests/tests/persist-wb-write.sh
