#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# getdelays' unit tests (tools/getdelays/unit_test.c), on the host:
# parsing of arguments and CPU lists, decoding of crafted netlink messages,
# intervals, tables, JSON, CSV and OpenMetrics; then its OpenMetrics through
# and --prometheus through real parsers, prometheus_client's (Debian's
# python3-prometheus-client), on the unit tests' crafted records
# (harness/test.sh checks a guest's).
# Built against the tree's uapi headers, not the host's.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/include/linux" "$tmp/out"
cp "$TREE/include/uapi/linux/recount.h" "$TREE/include/uapi/linux/taskstats.h" \
	"$TREE/include/uapi/linux/cgroupstats.h" \
	"$tmp/include/linux/"
status=0
OPENMETRICS_OUT=$tmp/unit.om PROMETHEUS_OUT=$tmp/unit.prom make --no-print-directory -s -C "$TREE/tools/getdelays" \
	OUTPUT="$tmp/out/" KHDR_INCLUDES="-isystem $tmp/include" CFLAGS="-O2 -g -Werror" \
	check || status=1

# metrics <format> <name> <file>: one TAP point, the parser's verdict.
metrics() {
	local out
	if out=$(python3 "$HARNESS/tests/openmetrics.py" "$1" "$3" 2>&1); then
		echo "ok 0 - $2 parses as ${1#--}: $out"
	else
		echo "not ok 0 - $2 parses as ${1#--}"
		sed 's/^/#   /' <<<"$out"
		status=1
	fi
}
metrics --openmetrics "crafted records' --openmetrics" "$tmp/unit.om"
metrics --prometheus "crafted records' --prometheus" "$tmp/unit.prom"
# OpenMetrics is not Prometheus text: its counters would come out untyped.
if python3 "$HARNESS/tests/openmetrics.py" --prometheus "$tmp/unit.om" >/dev/null 2>&1; then
	echo "not ok 0 - the checker tells OpenMetrics from Prometheus text"; status=1
else
	echo "ok 0 - the checker tells OpenMetrics from Prometheus text"
fi

# make install: the program and its manual page, under DESTDIR and prefix.
if make --no-print-directory -s -C "$TREE/tools/getdelays" OUTPUT="$tmp/out/" \
	KHDR_INCLUDES="-isystem $tmp/include" DESTDIR="$tmp/root" prefix=/usr install &&
   [ -x "$tmp/root/usr/sbin/getdelays" ] && [ -f "$tmp/root/usr/share/man/man8/getdelays.8" ]; then
	echo "ok 0 - make install puts getdelays in sbin and getdelays.8 in man8"
else
	echo "not ok 0 - make install puts getdelays in sbin and getdelays.8 in man8"
	find "$tmp/root" 2>/dev/null | sed 's/^/#   /'
	status=1
fi

# The manual page renders without a warning and lists every option --help
# lists.
man=$TREE/tools/getdelays/getdelays.8
if warn=$(LC_ALL=C groff -man -ww -z "$man" 2>&1) && [ -z "$warn" ]; then
	echo "ok 0 - getdelays.8 renders without a warning"
else
	echo "not ok 0 - getdelays.8 renders without a warning"; sed 's/^/#   /' <<<"$warn"
	status=1
fi
text=$(LC_ALL=C groff -man -Tascii "$man" 2>/dev/null | col -b) || true
missing=$(grep -oE '^"  (-[a-zA-Z], )?--[a-z-]+|^"      --[a-z-]+|^"  -c COMMAND' \
		"$TREE/tools/getdelays/options.c" | grep -oE -- '--[a-z-]+|-[a-zA-Z]' | sort -u |
	  while read -r opt; do grep -qF -- "$opt" <<<"$text" || echo "$opt"; done)
if [ -z "$missing" ]; then
	echo "ok 0 - getdelays.8 lists every option of --help"
else
	echo "not ok 0 - getdelays.8 lists every option of --help"; echo "#   missing: $missing"
	status=1
fi
exit $status
