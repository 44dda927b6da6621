#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pack the guest's root file system: busybox, the harness's init and scripts,
# getdelays, the demo, the selftests and, for 'make run', CMD and GUEST_FILES.
. "$(dirname "$0")/lib.sh"

root=$AOUT/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,root,etc,recount/bin,recount/tests,extra}

case "$ARCH" in
x86_64) busybox=/bin/busybox ;;
arm64)  busybox=$CACHE/arm64-root/bin/busybox ;;
esac
[ -x "$busybox" ] || die "$busybox is missing: run harness/deps.sh"
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"

cp "$HARNESS/guest/init" "$root/init"
cp "$HARNESS"/guest/*.sh "$root/recount/"
cp "$HARNESS/guest/kcsan-ignore" "$root/recount/"
cp "$AOUT"/guest-bin/* "$root/recount/bin/"
# Every selftest binary the selftests' Makefile built.
find "$AOUT/selftests" -maxdepth 1 -type f -executable -exec cp {} "$root/recount/tests/" \;
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"

if [ -n "${CMD:-}" ]; then
	printf '%s\n' "$CMD" > "$root/recount/cmd"
fi
if [ -n "${GUEST_FILES:-}" ]; then
	[ -d "$GUEST_FILES" ] || die "GUEST_FILES=$GUEST_FILES is not a directory"
	cp -a "$GUEST_FILES"/. "$root/extra/"
fi

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$AOUT/initramfs.cpio.gz"
