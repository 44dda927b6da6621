#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: what recount costs and how fast it reads, under QEMU.
#
# Three kernels from the same tree and the same configuration, but for:
#   recount   CONFIG_RECOUNT=y: each workload alternates, run after run, between
#             kernel.recount=0, =1 (time) and =1 with a power model (all
#             metrics), in one boot; then reads and exit records against
#             taskstats and /proc, in the same boot;
#   norecount CONFIG_RECOUNT=n: the same workloads, for "compiled in but off";
#   vtime     CONFIG_RECOUNT=n, CONFIG_VIRT_CPU_ACCOUNTING_GEN and nohz_full=1-3
#             (the workloads run on CPU 1): the kernel's own precise accounting;
#   timerlat  the recount kernel again, the timerlat section alone, under
#             -icount shift=0,sleep=off: an idle guest's virtual clock jumps
#             to its next timer instead of following the host's, so that a
#             timer's latencies are instruction counts, exact from run to run
#             (with the host's clock, they varied by microseconds);
#   reboot    the recount kernel again, its workloads only: how much the same
#             kernel differs from one boot to the next, the noise of the
#             comparisons across kernels.
#   norecount2, norecount3, reboot2: more boots of those kernels, their
#             workloads only. fork + exit + wait varies by several percent
#             between boots of one kernel even under -icount (memory layout),
#             so "compiled in and off vs CONFIG_RECOUNT=n" is also judged on
#             the medians of three boots of each kernel.
# harness/bench-report.py makes the tables: out/bench/$ARCH.{md,json}.
# QUICK=1 runs fewer and shorter rounds and no more boots; BENCH_KERNELS
# chooses the kernels (BENCH_KERNELS=recount boots only the recount kernel).
. "$(dirname "$0")/lib.sh"

quick=${QUICK:-}
# QUICK=1 skips the second boot that measures the noise between boots.
if [ -n "$quick" ]; then
	kernels=${BENCH_KERNELS:-recount timerlat norecount vtime}
else
	kernels=${BENCH_KERNELS:-recount timerlat norecount vtime reboot norecount2 reboot2 norecount3}
fi
bdir=$OUT/bench
mkdir -p "$bdir"
# The same guest for every kernel: the recount build's initramfs.
"$HARNESS/build.sh"
img=$AOUT/$(basename "$KIMAGE")
rm -f "$bdir/$ARCH"-*.log

# Build a variant kernel: the recount kernel's fragment without recount,
# plus $2 (a file), in its own object directory.
build_variant() {
	local name=$1 extra=$2 frag
	BUILD=$AOUT/bench-$name/build
	mkdir -p "$BUILD"
	frag=$AOUT/bench-$name/kernel.fragment
	grep -v -e '^CONFIG_RECOUNT' -e "${3:-^\$^}" "$AOUT/kernel.fragment" > "$frag"
	[ -z "$extra" ] || cat "$extra" >> "$frag"
	msg "building the $name kernel for $ARCH"
	kmake allnoconfig KCONFIG_ALLCONFIG="$frag" > "$AOUT/bench-$name/build.log" 2>&1 ||
		die "configuring the $name kernel failed: see ${AOUT#$TOP/}/bench-$name/build.log"
	local missing
	missing=$(grep -E '^CONFIG_[A-Z0-9_]+=' "$frag" | sort -u | while read -r line; do
		grep -qx "$line" "$BUILD/.config" || echo "$line"
	done)
	[ -z "$missing" ] || die "the $name kernel lacks: $(echo $missing)"
	kmake "$(basename "$KIMAGE")" >> "$AOUT/bench-$name/build.log" 2>&1 ||
		die "building the $name kernel failed: see ${AOUT#$TOP/}/bench-$name/build.log"
	cp "$BUILD/$KIMAGE" "$AOUT/bench-$name/"
	BUILD=$AOUT/build
}

vtime_frag=$AOUT/vtime.config
printf '%s\n' CONFIG_NO_HZ_FULL=y CONFIG_VIRT_CPU_ACCOUNTING_GEN=y CONFIG_CPU_ISOLATION=y \
	> "$vtime_frag"

status=0
for k in $kernels; do
	icount=""
	case $k in
	recount)
		kimg=$img
		args="RECOUNT_BENCH_SECTION=cost,read,readall,exits"
		;;
	timerlat)
		kimg=$img
		args="RECOUNT_BENCH_SECTION=timerlat"
		icount=shift=0,sleep=off
		;;
	reboot|reboot[0-9])
		kimg=$img
		args="RECOUNT_BENCH_SECTION=cost"
		;;
	norecount)
		build_variant norecount ""
		kimg=$AOUT/bench-norecount/$(basename "$KIMAGE")
		args=""
		;;
	norecount[0-9])
		kimg=$AOUT/bench-norecount/$(basename "$KIMAGE")
		[ -f "$kimg" ] || build_variant norecount ""
		args="RECOUNT_BENCH_SECTION=cost"
		;;
	vtime)
		build_variant vtime "$vtime_frag" '^CONFIG_NO_HZ_IDLE='
		kimg=$AOUT/bench-vtime/$(basename "$KIMAGE")
		args="nohz_full=1-3"
		;;
	*)
		die "BENCH_KERNELS: unknown kernel '$k' (recount, timerlat, norecount, vtime, reboot, norecountN, rebootN)"
		;;
	esac
	log=$bdir/$ARCH-$k.log
	KERNEL_IMAGE=$kimg SERIAL_LOG=$log QEMU_MEM=2G QUIET=1 QEMU_ICOUNT=$icount \
		BOOT_ARGS="$args ${quick:+RECOUNT_BENCH_QUICK=1}" \
		"$HARNESS/boot.sh" bench "${BENCH_TIMEOUT:-900}" || {
			echo "harness: the $k kernel's bench run failed: see ${log#$TOP/}" >&2
			status=1
		}
done

deb=$(dpkg-query -W -f '${Version}' linux-source-6.12)
python3 "$HARNESS/bench-report.py" --arch "$ARCH" --out "$bdir" \
	--kernel "Linux $(source_version) (Debian linux-source-6.12 $deb)" \
	--qemu "$(qemu-system-"$([ "$ARCH" = arm64 ] && echo aarch64 || echo x86_64)" --version | head -1)" \
	"$bdir/$ARCH"-*.log
exit $status
