#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the instructions go, per kernel function, on arm64 under QEMU with
# -icount shift=0 (instructions are exact from boot to boot):
#
#   harness/prof.sh UNITS 'COMMAND' ['BASELINE COMMAND']
#
# boots out/arm64/Image (make build ARCH=arm64) with the TCG plugin
# harness/prof/tbprof.c, runs COMMAND in the guest, and prints the
# instructions each function executed, divided by UNITS (how many
# operations COMMAND did), less what BASELINE COMMAND executed in a boot of
# its own (the same program doing everything but the operations). Files in
# GUEST_FILES are the guest's /extra (harness/initramfs.sh). For example,
# with a program that makes 10,000 threads and dumps them N times:
#
#   GUEST_FILES=dir harness/prof.sh 50000 '/extra/p 10000 5' '/extra/p 10000 0'
. "$(dirname "$0")/lib.sh"

[ "$ARCH" = arm64 ] || die "prof.sh counts instructions with arm64's -icount: ARCH=arm64"
units=${1:?units}
cmd=${2:?command}
base=${3:-}
work=$AOUT/prof
mkdir -p "$work"
gcc -shared -fPIC -O2 -Wall -o "$work/tbprof.so" "$HARNESS/prof/tbprof.c" -lpthread ||
	die "the QEMU plugin did not build"
[ -f "$AOUT/Image" ] && [ -f "$BUILD/System.map" ] || die "no arm64 kernel: make build ARCH=arm64"

# prof_boot OUT COMMAND: one boot with the plugin, its counts in OUT.
prof_boot() {
	CMD="$2" "$HARNESS/initramfs.sh" >/dev/null
	timeout -k 10 1500 qemu-system-aarch64 -plugin "$work/tbprof.so,out=$1" \
		-M virt -cpu max -icount "${QEMU_ICOUNT:-shift=0}" -smp 4 -m 2G -kernel "$AOUT/Image" \
		-append "console=ttyAMA0 panic=-1 RECOUNT_MODE=cmd recount=on quiet nokaslr" \
		-initrd "$AOUT/initramfs.cpio.gz" -nographic -no-reboot -nic none \
		< /dev/null > "$work/serial.log" 2>&1
	grep -q '^RECOUNT-EXIT: 0' "$work/serial.log" ||
		die "the guest command failed: see ${work#$TOP/}/serial.log"
}

prof_boot "$work/run.txt" "$cmd"
if [ -n "$base" ]; then
	prof_boot "$work/base.txt" "$base"
else
	: > "$work/base.txt"
fi
python3 "$HARNESS/prof/sym.py" "$BUILD/System.map" "$work/run.txt" "$work/base.txt" "$units"
