#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kernel-doc: every non-static function of kernel/recount has a kernel-doc
# comment, and scripts/kernel-doc finds nothing to complain about in any
# recount file.
. "$(dirname "$0")/../lib.sh"

cd "$TREE"
files=$(ls kernel/recount/*.c kernel/recount/*.h include/linux/recount*.h)
status=0
out=$(scripts/kernel-doc -none -Wall $files 2>&1) || status=1
if [ -n "$out" ]; then
	echo "$out"
	status=1
fi
python3 - $files <<'PY' || status=1
import re, sys
bad = 0
for path in sys.argv[1:]:
    if not path.endswith(".c") or path.endswith("_gen.c"):
        continue
    lines = open(path).read().split("\n")
    for i, line in enumerate(lines):
        # A function definition at column 0 that is not static.
        if re.match(r"^(?!static\b)[a-z_][\w\s\*]*\b(\w+)\(.*[^;]$", line) and \
           not line.startswith(("return", "if", "for", "while", "switch")):
            j = i - 1
            while j >= 0 and lines[j].startswith((" *", "/**")) and not lines[j].startswith("/**"):
                j -= 1
            if j < 0 or not lines[j].startswith("/**"):
                print(f"{path}:{i + 1}: non-static function without kernel-doc: {line}")
                bad += 1
sys.exit(1 if bad else 0)
PY
exit $status
