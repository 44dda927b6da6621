#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check getdelays' metrics with prometheus_client's parsers, and print what
was in them:

  openmetrics.py --openmetrics FILE   getdelays --openmetrics: OpenMetrics
  openmetrics.py --prometheus FILE    getdelays --prometheus: Prometheus's
                                      text format 0.0.4 (node_exporter's
                                      textfile collector reads it)

Every family must be recount's, typed (a counter or a gauge: a sample the
parser could not tie to its family's metadata comes out untyped), and every
value a non-negative number."""
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families as om
from prometheus_client.parser import text_string_to_metric_families as prom

fmt, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
families = list(om(text) if fmt == "--openmetrics" else prom(text))
samples = sum(len(f.samples) for f in families)
if not families or not samples:
    sys.exit("no metric families or no samples")
for f in families:
    if not f.name.startswith("recount_"):
        sys.exit(f"family {f.name}: not recount's")
    if f.type not in ("counter", "gauge"):
        sys.exit(f"family {f.name}: {f.type}, not a counter or a gauge")
    if f.type == "counter" and any(not s.name.endswith("_total") for s in f.samples):
        sys.exit(f"counter {f.name}: a sample without _total")
    for s in f.samples:
        if s.value < 0:
            sys.exit(f"{s.name}{s.labels}: negative")
print(f"{len(families)} families, {samples} samples")
