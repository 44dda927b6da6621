#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the instructions go, per kernel function, under QEMU with -icount
# shift=0 (instructions are exact from boot to boot; on x86_64 a "rep movs"
# or "rep stos" counts an instruction per iteration, as -icount does):
#
#   harness/prof.sh UNITS 'COMMAND' ['BASELINE COMMAND']
#
# boots out/ARCH's kernel (make build [ARCH=arm64]) with the TCG plugin
# harness/prof/tbprof.c, runs COMMAND in the guest, and prints the
# instructions each function executed, divided by UNITS (how many
# operations COMMAND did), less what BASELINE COMMAND executed in a boot of
# its own (the same program doing everything but the operations). Files in
# GUEST_FILES are the guest's /extra (harness/initramfs.sh). For example,
# with a program that makes 10,000 threads and dumps them N times:
#
#   GUEST_FILES=dir harness/prof.sh 50000 '/extra/p 10000 5' '/extra/p 10000 0'
. "$(dirname "$0")/lib.sh"

units=${1:?units}
cmd=${2:?command}
base=${3:-}
work=$AOUT/prof
mkdir -p "$work"
gcc -shared -fPIC -O2 -Wall -o "$work/tbprof.so" "$HARNESS/prof/tbprof.c" -lpthread ||
	die "the QEMU plugin did not build"
image=$AOUT/bzImage
[ "$ARCH" != arm64 ] || image=$AOUT/Image
[ -f "$image" ] && [ -f "$BUILD/System.map" ] || die "no $ARCH kernel: make build ARCH=$ARCH"

# prof_boot OUT COMMAND: one boot (harness/boot.sh, in its cmd mode) with the
# plugin, its counts in OUT; on x86_64 too under -icount shift=0.
prof_boot() {
	CMD="$2" "$HARNESS/initramfs.sh" >/dev/null
	QEMU_EXTRA="-plugin $work/tbprof.so,out=$1" QEMU_ICOUNT=${QEMU_ICOUNT:-shift=0} \
		QEMU_MEM=2G BOOT_ARGS=nokaslr SERIAL_LOG="$work/serial.log" QUIET=1 \
		KERNEL_IMAGE="$image" "$HARNESS/boot.sh" cmd 1500 ||
		die "boot.sh exited $? (124: timeout; 125: init did not finish; else the command's): see ${work#"$TOP"/}/serial.log"
}

prof_boot "$work/run.txt" "$cmd"
if [ -n "$base" ]; then
	prof_boot "$work/base.txt" "$base"
else
	: > "$work/base.txt"
fi
python3 "$HARNESS/prof/sym.py" "$BUILD/System.map" "$work/run.txt" "$work/base.txt" "$units"
