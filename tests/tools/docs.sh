#!/usr/bin/env bash
# The documentation's contracts (tests/tools/docs.py): the target page
# renders without a warning, lists every constructor error of the source
# and no other, and every tool's man page names its options, renders
# without a groff warning and has an EXIT STATUS section.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
python3 "$top/tests/tools/docs.py"
for page in "$top"/docs/man/*.8; do
	out=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
	if [ -z "$out" ]; then
		echo "PASS tools/docs/groff/$(basename "$page")"
	else
		echo "FAIL tools/docs/groff/$(basename "$page") $(echo "$out" | head -n 2 | tr '\n' ' ')"
	fi
done
