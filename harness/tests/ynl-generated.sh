#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The uapi header and the kernel policy/ops are generated from the YNL spec:
# regenerating them from the spec must give the files in the series.
. "$(dirname "$0")/../lib.sh"

cd "$TREE"
spec=Documentation/netlink/specs/recount.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for gen in "uapi --header include/uapi/linux/recount.h" \
	   "kernel --header kernel/recount/netlink_gen.h" \
	   "kernel --source kernel/recount/netlink_gen.c"; do
	set -- $gen
	# The generator derives the source's #include from the output's name.
	out=$tmp/$(basename "$3")
	python3 tools/net/ynl/ynl-gen-c.py --mode "$1" "$2" --spec "$spec" -o "$out"
	if ! diff -u "$3" "$out"; then
		echo "$3 is out of date: regenerate it from $spec (README)"
		status=1
	fi
done
exit $status
