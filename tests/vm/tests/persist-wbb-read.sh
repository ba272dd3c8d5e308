# The second boot of the write-back power cut on a make-bcache -B origin:
# persist-wb-read with WB_LAYOUT=backing.
WB_LAYOUT=backing
. /tests/tests/persist-wb-read.sh
