// SPDX-License-Identifier: GPL-2.0
/*
 * recount's clock
 *
 * The user/kernel transitions read recount_clock() (include/linux/recount.h):
 * the architecture's raw counter, read in one instruction, where it is sound
 * (asm/recount.h), else local_clock(). Its ticks become nanoseconds where
 * they are folded into the tracks, by a 32.32 fixed-point factor each CPU
 * keeps with its state (struct recount_cpu), so that a reader and the
 * accounting point after it convert an interval alike.
 *
 * The clock is chosen when recount is switched on. The scheduler tick checks
 * it again: a rate refined after boot (the TSC's, by its late calibration)
 * takes effect at each CPU's next tick; a raw counter that is no longer
 * sound (a TSC marked unstable) makes recount switch itself off and on again
 * with local_clock(), from a work item, as the tick cannot.
 */

#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <linux/export.h>
#include <linux/irq_work.h>
#include <linux/math64.h>
#include <linux/sched/clock.h>
#include <linux/time64.h>
#include <linux/workqueue.h>

#include "internal.h"

DEFINE_STATIC_KEY_FALSE(recount_raw_clock_key);
EXPORT_SYMBOL_GPL(recount_raw_clock_key);

/* The raw clock's rate in use, ticks per second, or 0 for local_clock(). */
static u64 recount_clock_rate;
/* Nanoseconds per tick of recount_clock(), 32.32 fixed point. */
static u64 recount_clock_ns_factor = 1ULL << 32;

/*
 * How long a reader's reads of a remote CPU's user clock may take, in
 * nanoseconds, for it to trust their count of transitions, modulo 128: a
 * user/kernel transition is a privilege change and entry or exit code, tens
 * of nanoseconds at the least (an arm64 getppid() round trip is 251
 * instructions), so 128 cannot come in 500 ns, which even a reader under
 * QEMU's TCG takes only when it stalls.
 */
#define RECOUNT_WINDOW_NS	500
/* The same in ticks of recount_clock_window_clock(). */
static u64 recount_clock_window_ticks = RECOUNT_WINDOW_NS;

static u64 recount_clock_factor_of(u64 rate)
{
	return div64_u64(((u64)NSEC_PER_SEC << 32) + rate / 2, rate);
}

static void recount_clock_set_rate(u64 rate)
{
	WRITE_ONCE(recount_clock_ns_factor, rate ? recount_clock_factor_of(rate) : 1ULL << 32);
	WRITE_ONCE(recount_clock_window_ticks,
		   rate ? max(div64_u64(RECOUNT_WINDOW_NS * rate, NSEC_PER_SEC), 1ULL) :
		   RECOUNT_WINDOW_NS);
	WRITE_ONCE(recount_clock_rate, rate);
}

/**
 * recount_clock_raw_rate() - the rate of the raw counter, if it is sound
 *
 * Return: arch_recount_clock_rate(): ticks per second, or 0 if the counter
 * cannot be recount's clock.
 */
u64 recount_clock_raw_rate(void)
{
	return arch_recount_clock_rate();
}
EXPORT_SYMBOL_IF_KUNIT(recount_clock_raw_rate);

/**
 * recount_clock_select() - choose recount's clock
 *
 * Called while recount is off, with the CPU hotplug lock held.
 */
void recount_clock_select(void)
{
	u64 rate = recount_clock_raw_rate();

	recount_clock_set_rate(rate);
	if (rate)
		static_branch_enable_cpuslocked(&recount_raw_clock_key);
	else
		static_branch_disable_cpuslocked(&recount_raw_clock_key);
}

/**
 * recount_clock_factor() - nanoseconds per tick of recount's clock
 *
 * Return: the factor, 32.32 fixed point.
 */
u64 recount_clock_factor(void)
{
	return READ_ONCE(recount_clock_ns_factor);
}

/**
 * recount_clock_window() - how long a reader's reads of a user clock may take
 *
 * See recount_user_clock_pick().
 *
 * Return: the window, in ticks of recount_clock_window_clock().
 */
u64 recount_clock_window(void)
{
	return READ_ONCE(recount_clock_window_ticks);
}

/**
 * recount_clock_window_clock() - the clock a reader times its reads with
 *
 * The raw counter, ordered after every load before it; without one,
 * sched_clock(), as cheap and, unlike local_clock(), not held back at the
 * tick's bound while interrupts are off. Only its progress on the reader's
 * own CPU matters.
 *
 * Return: the clock, in ticks of the raw counter or in nanoseconds.
 */
u64 recount_clock_window_clock(void)
{
	if (static_branch_likely(&recount_raw_clock_key))
		return arch_recount_clock_ordered();
	return sched_clock();
}

/* recount_clock_of(), which KUnit stubs, as it reads. */
VISIBLE_IF_KUNIT u64 __recount_clock_of(unsigned int cpu)
{
	if (static_branch_likely(&recount_raw_clock_key))
		return arch_recount_clock_ordered();
	return sched_clock_cpu(cpu);
}
EXPORT_SYMBOL_IF_KUNIT(__recount_clock_of);

/**
 * recount_clock_of() - read recount's clock as @cpu reads it, after every
 *	load before (the raw counter)
 * @cpu: the CPU whose interval in progress is read
 *
 * What a reader compares with @cpu's last accounting point: the raw
 * counter, the same on every CPU; or local_clock() as @cpu has it.
 *
 * Return: the clock, in ticks.
 */
u64 recount_clock_of(unsigned int cpu)
{
	KUNIT_STATIC_STUB_REDIRECT(recount_clock_of, cpu);
	return __recount_clock_of(cpu);
}
EXPORT_SYMBOL_IF_KUNIT(recount_clock_of);

static void recount_clock_restart_work_fn(struct work_struct *work)
{
	pr_info("recount: the raw clock is no longer sound: restarting with local_clock()\n");
	recount_restart();
}

static DECLARE_WORK(recount_clock_restart_work, recount_clock_restart_work_fn);

static void recount_clock_restart_irq_work_fn(struct irq_work *work)
{
	schedule_work(&recount_clock_restart_work);
}

static DEFINE_IRQ_WORK(recount_clock_restart_irq_work, recount_clock_restart_irq_work_fn);

/**
 * recount_clock_check() - check recount's clock at the scheduler tick
 * @rc: the local CPU's state, inside its write section
 *
 * Adopts a refined rate; restarts recount if the raw clock is not sound.
 * The tick holds the runqueue lock: the restart is queued from an irq_work.
 */
void recount_clock_check(struct recount_cpu *rc)
{
	u64 rate, factor;

	if (!static_branch_likely(&recount_raw_clock_key))
		return;
	rate = arch_recount_clock_rate_now(READ_ONCE(recount_clock_rate));
	if (unlikely(!rate)) {
		irq_work_queue(&recount_clock_restart_irq_work);
		return;
	}
	if (unlikely(rate != READ_ONCE(recount_clock_rate)))
		recount_clock_set_rate(rate);
	factor = READ_ONCE(recount_clock_ns_factor);
	if (unlikely(rc->factor != factor))
		WRITE_ONCE(rc->factor, factor);
}
