#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot out/$ARCH's kernel and initramfs under QEMU (TCG, 4 CPUs) in one of the
# guest's modes: demo, test, cmd, bench, boot (prints kernel.recount as the
# boot parameters left it; BOOT_ARGS gives recount=). The serial console goes
# to the terminal (or not, QUIET=1) and to out/$ARCH/serial-<mode>.log. The
# exit status is that of what ran in the guest; 124 if the guest did not
# finish in time, 125 if its init stopped before it finished.
# KERNEL_IMAGE, QEMU_MEM (1G), SERIAL_LOG and BOOT_ARGS override the defaults;
# QEMU_ICOUNT is QEMU's -icount (arm64: shift=0; x86_64: none, TCG times);
# QEMU_EXTRA, more QEMU options, split at spaces (harness/prof.sh's plugin).
#
#   boot.sh MODE [TIMEOUT_SECONDS]
. "$(dirname "$0")/lib.sh"

mode=${1:?mode}
limit=${2:-600}
log=${SERIAL_LOG:-$AOUT/serial-$mode.log}
mem=${QEMU_MEM:-1G}

cmdline="panic=-1 RECOUNT_MODE=$mode"
[ "$mode" = boot ] || cmdline="$cmdline recount=on"
if [ "$mode" = test ]; then
	# A two-kind machine and a power model, for the kind and energy tests;
	# a nohz_full CPU, for the reads of threads running without a tick.
	cmdline="$cmdline kunit.enable=1 recount_efficiency_cpus=2-3 recount_power_mw=1000,50,300,10 nohz_full=3"
elif [ "$mode" != boot ]; then
	# The boot mode's log is checked for splats: it keeps the console.
	cmdline="$cmdline quiet"
fi
cmdline="$cmdline ${BOOT_ARGS:-}"
case "$ARCH" in
x86_64)
	# etc/sercon-port=0 keeps SeaBIOS off the serial console. tsc=reliable:
	# the guest's TSC is the host's, but under TCG (slower still with a
	# debug kernel) the clocksource watchdog's read-back delays can mark it
	# unstable, and an unstable sched_clock stalls up to a tick, so that
	# two back-to-back accounting points can read the same time.
	qemu=(qemu-system-x86_64 -accel tcg -cpu max -smp 4 -m "$mem"
	      -fw_cfg name=etc/sercon-port,string=0
	      -kernel "${KERNEL_IMAGE:-$AOUT/bzImage}" -append "console=ttyS0 tsc=reliable $cmdline")
	[ -z "${QEMU_ICOUNT:-}" ] || qemu+=(-icount "$QEMU_ICOUNT")
	;;
arm64)
	qemu=(qemu-system-aarch64 -M virt -cpu max -icount "${QEMU_ICOUNT:-shift=0}" -smp 4 -m "$mem"
	      -kernel "${KERNEL_IMAGE:-$AOUT/Image}" -append "console=ttyAMA0 $cmdline")
	;;
esac
qemu+=(-initrd "$AOUT/initramfs.cpio.gz" -nographic -no-reboot -nic none)
read -ra extra <<< "${QEMU_EXTRA:-}"
qemu+=("${extra[@]}")

msg "booting $ARCH ($mode), serial log: ${log#$TOP/}"
set +e
# QEMU warns that etc/sercon-port is not under opt/: SeaBIOS wants that name.
quiet_qemu() { grep --line-buffered -v 'fw_cfg item names should be prefixed'; }
if [ -n "${QUIET:-}" ]; then
	timeout -k 10 "$limit" "${qemu[@]}" < /dev/null 2>&1 | quiet_qemu > "$log"
else
	timeout -k 10 "$limit" "${qemu[@]}" < /dev/null 2>&1 | quiet_qemu | tee "$log"
fi
status=${PIPESTATUS[0]}
set -e
[ "$log" = "$AOUT/serial.log" ] || cp "$log" "$AOUT/serial.log"
if [ "$status" = 124 ] || [ "$status" = 137 ]; then
	echo "harness: the $ARCH guest did not power off within $limit s" >&2
	exit 124
fi
rc=$(sed -n 's/^RECOUNT-EXIT: \([0-9]*\).*/\1/p' "$log" | tail -1)
if [ -z "$rc" ]; then
	echo "harness: the $ARCH guest stopped before its init finished (see ${log#$TOP/})" >&2
	exit 125
fi
exit "$rc"
