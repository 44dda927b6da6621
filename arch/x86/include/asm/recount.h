/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recount's raw clock on x86: the TSC, where the scheduler's clock trusts it.
 * See include/linux/recount.h.
 */
#ifndef _ASM_X86_RECOUNT_H
#define _ASM_X86_RECOUNT_H

#include <linux/sched/clock.h>
#include <asm/msr.h>
#include <asm/tsc.h>

/**
 * arch_recount_clock() - read recount's raw clock, at a user/kernel transition
 *
 * Return: the TSC, unordered: the transitions take no barrier.
 */
static __always_inline u64 arch_recount_clock(void)
{
	return rdtsc();
}

/**
 * arch_recount_clock_ordered() - read recount's raw clock, after every load
 * before it (rdtsc_ordered()); a later load needs an rmb() between
 *
 * Return: the TSC.
 */
static __always_inline u64 arch_recount_clock_ordered(void)
{
	return rdtsc_ordered();
}

/**
 * arch_recount_clock_rate() - the rate of recount's raw clock
 *
 * The TSC is used only where sched_clock() trusts it (constant, in sync
 * across CPUs) and the kernel has not marked it unstable: a paravirtual
 * sched_clock() (kvm-clock, Hyper-V's TSC page) stays stable when the TSC
 * is marked unstable, as only the native one follows the TSC
 * (mark_tsc_unstable()). Its rate may still be refined after boot
 * (tsc_khz).
 *
 * Return: ticks per second, or 0 if the TSC cannot be recount's clock now.
 */
static inline u64 arch_recount_clock_rate(void)
{
	if (!boot_cpu_has(X86_FEATURE_TSC) || !sched_clock_stable() || check_tsc_unstable())
		return 0;
	return (u64)READ_ONCE(tsc_khz) * 1000;
}

/**
 * arch_recount_clock_rate_now() - the rate of recount's raw clock, again
 * @rate: the rate in use
 *
 * Called at every scheduler tick while the TSC is recount's clock: the TSC
 * may be found unstable after boot, and its rate refined.
 *
 * Return: ticks per second, or 0 if the TSC cannot be recount's clock any
 * more.
 */
static __always_inline u64 arch_recount_clock_rate_now(u64 rate)
{
	return arch_recount_clock_rate();
}

#endif /* _ASM_X86_RECOUNT_H */
