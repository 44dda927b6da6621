#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the recount kernel for $ARCH from the prepared tree, its uapi headers,
# tools/getdelays, the selftests and the guest's initramfs, into out/$ARCH/.
. "$(dirname "$0")/lib.sh"

# KEEP_TREE=1 builds out/linux as it is, uncommitted edits included.
"$HARNESS/prepare.sh"
ver=$(source_version)
deb=$(dpkg-query -W -f '${Version}' linux-source-6.12)
mkdir -p "$BUILD"

msg "building Linux $ver (Debian linux-source-6.12 $deb) + recount for $ARCH"
frag=$AOUT/kernel.fragment
cat "$HARNESS/config/base.config" "$HARNESS/config/$ARCH.config" \
    "$TREE/tools/testing/selftests/recount/config" > "$frag.new"
# A variant's options, then its options for this architecture, if any.
for f in ${EXTRA_CONFIG:-} ${VARIANT:+$HARNESS/config/$VARIANT.config}; do cat "$f" >> "$frag.new"; done
[ -z "$VARIANT" ] || [ ! -f "$HARNESS/config/$ARCH-$VARIANT.config" ] ||
	cat "$HARNESS/config/$ARCH-$VARIANT.config" >> "$frag.new"
mv "$frag.new" "$frag"

log=$AOUT/build.log
: > "$log"
run_logged() {
	if ! "$@" >> "$log" 2>&1; then
		grep -E -B2 -A8 'error|Error' "$log" | tail -60 >&2
		die "kernel build failed; full log: ${log#$TOP/}"
	fi
}
run_logged kmake allnoconfig KCONFIG_ALLCONFIG="$frag"
# allnoconfig drops what the fragment asks for when a dependency is missing.
missing=$(grep -E '^CONFIG_[A-Z0-9_]+=' "$frag" | sort -u | while read -r line; do
	grep -qx "$line" "$BUILD/.config" || echo "$line"
done)
[ -z "$missing" ] || die "these options did not make it into .config: $(echo $missing)"

start=$SECONDS
run_logged kmake "$(basename "$KIMAGE")"
run_logged kmake headers
grep -E ' warning: ' "$log" >&2 || true
mkdir -p "$AOUT"
cp "$BUILD/$KIMAGE" "$AOUT/$(basename "$KIMAGE")"
msg "kernel ready in $((SECONDS - start)) s: ${AOUT#$TOP/}/$(basename "$KIMAGE")"

# User-space programs for the guest, linked statically.
KHDR=$BUILD/usr/include
# Static glibc makes the linker warn about libnl's getaddrinfo-style calls,
# which netlink never reaches: keep those three-line notes out of the output.
# umake ARGS...: make's own exit status (the filter's is not).
umake() {
	local rc=0 out
	out=$(mktemp)
	make --no-print-directory -s ARCH="$KARCH" CROSS_COMPILE="$CROSS" CC="${CROSS}gcc" "$@" \
		> "$out" 2>&1 || rc=$?
	grep -v -e 'in statically linked applications requires' -e "in function \`nl_" \
		-e 'libnl-3.a(libnl' "$out" || true
	rm -f "$out"
	return $rc
}
msg "building tools/getdelays and the recount selftests"
rm -rf "$AOUT/guest-bin" "$AOUT/selftests" "$AOUT/getdelays"
mkdir -p "$AOUT/guest-bin" "$AOUT/selftests" "$AOUT/getdelays"
# A program that does not build does not stop the others (make -k) nor the
# run: harness/results.py fails each one missing by its name, as the
# selftests' Makefile lists them.
if umake -C "$TREE/tools/getdelays" OUTPUT="$AOUT/getdelays/" \
	KHDR_INCLUDES="-isystem $KHDR" LDFLAGS=-static; then
	cp "$AOUT/getdelays/getdelays" "$AOUT/guest-bin/"
else
	msg "tools/getdelays did not build (above): the tests that run it fail"
fi
umake -k -C "$TREE/tools/testing/selftests/recount" OUTPUT="$AOUT/selftests" \
	KHDR_INCLUDES="-isystem $KHDR" LDFLAGS=-static ||
	msg "some recount selftests did not build (above): each one missing fails"
"${CROSS}gcc" -O2 -Wall -Werror -static -pthread -o "$AOUT/guest-bin/recount-demo" \
	"$HARNESS/guest/recount-demo.c"
# make bench's program, with the selftests' raw netlink client of recount.
"${CROSS}gcc" -O2 -Wall -Werror -static -pthread -isystem "$KHDR" \
	-I "$TREE/tools/testing/selftests/recount" -o "$AOUT/guest-bin/recount-bench" \
	"$HARNESS/bench/recount-bench.c" "$TREE/tools/testing/selftests/recount/recount_nl.c"

"$HARNESS/initramfs.sh"
