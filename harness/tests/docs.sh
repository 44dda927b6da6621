#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Documentation: recount.rst parses as reStructuredText without a warning
# (tables whose cells outgrow their columns, short title lines, broken
# literal blocks), and is listed in the accounting index.
. "$(dirname "$0")/../lib.sh"

cd "$TREE"
doc=Documentation/accounting/recount.rst
status=0
python3 - "$doc" <<'PY' || status=1
import sys
import docutils.core

src = open(sys.argv[1]).read()
out = []

class Stream:
    def write(self, s):
        out.append(s)

docutils.core.publish_doctree(src, source_path=sys.argv[1], settings_overrides={
    "report_level": 2, "halt_level": 5, "warning_stream": Stream()})
text = "".join(out)
if text:
    print(text, end="")
    sys.exit(1)
PY
grep -qx '   recount' Documentation/accounting/index.rst ||
	{ echo "$doc is not in Documentation/accounting/index.rst"; status=1; }
exit $status
