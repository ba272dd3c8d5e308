#!/usr/bin/env bash
# The documentation's contracts (tests/tools/docs.py): the target page
# renders without a warning, lists every constructor error of the source
# and no other, and every tool's man page names its options, renders
# without a groff warning and has an EXIT STATUS section; lvmbcache(7)
# is what scripts/md2man.py makes of docs/lvm.md.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
python3 "$top/tests/tools/docs.py"
# Man pages made from Markdown (docs/lvm.md) are what it says now.
python3 "$top/scripts/md2man.py" --check
for page in "$top"/docs/man/*.[78]; do
	out=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
	if [ -z "$out" ]; then
		echo "PASS tools/docs/groff/$(basename "$page")"
	else
		echo "FAIL tools/docs/groff/$(basename "$page") $(echo "$out" | head -n 2 | tr '\n' ' ')"
	fi
done
