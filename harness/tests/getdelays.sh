#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# getdelays' unit tests (tools/getdelays/unit_test.c), on the host:
# parsing of arguments and CPU lists, decoding of crafted netlink messages,
# tables and JSON. Built against the tree's uapi headers, not the host's.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/include/linux" "$tmp/out"
cp "$TREE/include/uapi/linux/recount.h" "$TREE/include/uapi/linux/taskstats.h" \
	"$tmp/include/linux/"
make --no-print-directory -s -C "$TREE/tools/getdelays" OUTPUT="$tmp/out/" \
	KHDR_INCLUDES="-isystem $tmp/include" CFLAGS="-O2 -g -Werror" check
