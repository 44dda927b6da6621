/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recount's raw clock on arm64: the generic timer's virtual counter, which
 * the kernel's clocks read too, unless KVM may offset it. See
 * include/linux/recount.h.
 */
#ifndef __ASM_RECOUNT_H
#define __ASM_RECOUNT_H

#include <linux/percpu.h>
#include <asm/arch_timer.h>
#include <asm/sysreg.h>
#include <asm/virt.h>

/**
 * arch_recount_clock() - read recount's raw clock, at a user/kernel transition
 *
 * Return: CNTVCT_EL0, without the ISB that would order it: the transitions
 * take no barrier.
 */
static __always_inline u64 arch_recount_clock(void)
{
	return read_sysreg(cntvct_el0);
}

/**
 * arch_recount_clock_ordered() - read recount's raw clock, after every
 * instruction before it
 *
 * Return: CNTVCT_EL0.
 */
static __always_inline u64 arch_recount_clock_ordered(void)
{
	return __arch_counter_get_cntvct();
}

/**
 * arch_recount_clock_rate() - the rate of recount's raw clock
 *
 * A CPU whose counter reads need an erratum workaround (an out-of-line
 * read_cntvct_el0()) cannot be read in one instruction: then recount reads
 * local_clock(). A workaround that leaves those reads alone (erratum
 * 1418040's, for AArch32 reads) does not matter. Nor can a kernel at EL1
 * with EL2 available (KVM without VHE, protected KVM) use the counter: KVM
 * sets CNTVOFF_EL2 to a guest's offset from vcpu_load() to vcpu_put(), and
 * the virtual counter jumps (the scheduler's clock reads the physical
 * counter there). At EL2 (VHE), CNTVOFF_EL2 does not apply to the host.
 *
 * Return: ticks per second, or 0 if the counter cannot be recount's clock.
 */
static inline u64 arch_recount_clock_rate(void)
{
	if (is_hyp_mode_available() && !is_kernel_in_hyp_mode())
		return 0;
#ifdef CONFIG_ARM_ARCH_TIMER_OOL_WORKAROUND
	const struct arch_timer_erratum_workaround *wa;
	int cpu;

	for_each_possible_cpu(cpu) {
		wa = per_cpu(timer_unstable_counter_workaround, cpu);
		if (wa && wa->read_cntvct_el0)
			return 0;
	}
#endif
	return arch_timer_get_rate();
}

/**
 * arch_recount_clock_rate_now() - the rate of recount's raw clock, again
 * @rate: the rate in use
 *
 * The counter's rate and soundness are settled when recount is switched
 * on. A workaround for an SoC's counter is set on every CPU when the timer
 * is probed; one for a CPU's own erratum (Cortex-A73's 858921) is refused
 * to a CPU brought online later, unless a CPU up at boot had it too
 * (verify_local_cpu_caps()), whose workaround arch_recount_clock_rate()
 * saw.
 *
 * Return: @rate.
 */
static __always_inline u64 arch_recount_clock_rate_now(u64 rate)
{
	return rate;
}

#endif /* __ASM_RECOUNT_H */
