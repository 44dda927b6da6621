/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recount: precise CPU resource accounting of threads, processes and CPUs.
 *
 * The hooks below are called by the scheduler and the entry code. Each one is
 * a static branch, a NOP while recount is off, and compiles to nothing
 * without CONFIG_RECOUNT. The user/kernel transition hooks are inline; the
 * others call out of line.
 *
 * See Documentation/accounting/recount.rst.
 */
#ifndef _LINUX_RECOUNT_H
#define _LINUX_RECOUNT_H

#include <linux/bits.h>
#include <linux/jump_label.h>
#include <linux/recount_types.h>

struct task_struct;
struct signal_struct;

/* Wrapped by kernel/sched/stats.h, which has the rq and its clock. */
void __recount_sched_switch(struct task_struct *prev, struct task_struct *next,
			    u64 now, bool preempted);
void __recount_sched_enqueue(struct task_struct *p, u64 now);

#ifdef CONFIG_RECOUNT

#include <linux/percpu-defs.h>
#include <linux/preempt.h>
#include <asm/rwonce.h>
#include <linux/sched/clock.h>
#include <asm/recount.h>

DECLARE_STATIC_KEY_FALSE(recount_enabled_key);
DECLARE_STATIC_KEY_FALSE(recount_raw_clock_key);

/**
 * recount_enabled() - is recount accounting?
 *
 * Return: true while accounting is on (boot parameter recount=, sysctl
 * kernel.recount).
 */
static __always_inline bool recount_enabled(void)
{
	return static_branch_unlikely(&recount_enabled_key);
}

/**
 * recount_clock() - read recount's clock on the local CPU
 *
 * The architecture's raw counter (arch_recount_clock()) where it is sound,
 * else local_clock(). Its ticks become nanoseconds where they are folded into
 * the tracks (kernel/recount/clock.c), not here.
 *
 * Return: the clock, in ticks.
 */
static __always_inline u64 recount_clock(void)
{
	if (static_branch_likely(&recount_raw_clock_key))
		return arch_recount_clock();
	return local_clock();
}

/*
 * The user clock
 *
 * Each CPU keeps one word that the user/kernel transitions update: bits
 * 63-8 hold the CPU's user time U, in ticks of recount_clock() modulo 2^56,
 * while the CPU is in kernel mode, and U - s while it is in user mode since
 * s; the accounting points take U from it. While the CPU idles, the word
 * runs as in user mode, but for the interrupts it handles, whose entries
 * and exits are transitions too (recount_idle_irq_enter()): the accounting
 * points start and stop it where the CPU starts and stops idling, and take
 * the CPU's idle time from it. Bits 6-0 count the transitions modulo 128,
 * odd while the word runs, and bit 7
 * is set while a transition is under way, stored before it reads the clock
 * (in program order: no barrier orders the two) and cleared by its final
 * store, so that readers on other CPUs can tell which value of the word
 * goes with which time (kernel/recount/core.c). Only the CPU itself writes
 * the word, with interrupts disabled: no atomic operation, no barrier.
 */
#define RECOUNT_USER_CLOCK_SHIFT	8
#define RECOUNT_USER_CLOCK_BUSY		BIT_ULL(7)
#define RECOUNT_USER_CLOCK_COUNT	GENMASK_ULL(6, 0)

DECLARE_PER_CPU(u64, recount_user_clock);

/**
 * recount_user_clock_next() - the user clock after a transition
 * @word: the user clock before the transition
 * @now: recount_clock() at the transition
 * @to_user: the transition returns to user mode
 *
 * Return: the new value of the word, busy bit clear.
 */
static __always_inline u64 recount_user_clock_next(u64 word, u64 now, bool to_user)
{
	u64 ticks = now << RECOUNT_USER_CLOCK_SHIFT;
	u64 u = to_user ? word - ticks : word + ticks;

	return (u & ~(RECOUNT_USER_CLOCK_BUSY | RECOUNT_USER_CLOCK_COUNT)) |
	       ((word + 1) & RECOUNT_USER_CLOCK_COUNT);
}

/**
 * recount_user_transition() - advance the local CPU's user clock
 * @to_user: the CPU returns to user mode (else it enters from user mode)
 *
 * The whole cost of accounting a user/kernel transition. The busy bit is
 * stored before the clock is read and cleared by the final store.
 */
static __always_inline void recount_user_transition(bool to_user)
{
	u64 *word = raw_cpu_ptr(&recount_user_clock);
	u64 w = *word;

	WRITE_ONCE(*word, w | RECOUNT_USER_CLOCK_BUSY);
	/* The clock is read after the busy bit is stored, in program order. */
	barrier();
	WRITE_ONCE(*word, recount_user_clock_next(w, recount_clock(), to_user));
}

/**
 * recount_user_clock_running() - does a user clock run?
 * @word: the user clock
 *
 * Return: true if the word counts the transitions of a CPU in user mode, or
 * of an idle CPU that handles no interrupt (see recount_idle_irq_enter()).
 */
static __always_inline bool recount_user_clock_running(u64 word)
{
	return word & 1;
}

/**
 * recount_user_enter() - account a return to user mode
 *
 * Starts the CPU's user clock. Called on every return to user mode, after
 * the last kernel work, and on every entry to a KVM guest (guest mode is
 * user time), with interrupts disabled, from an instrumentable section.
 * Inline: a static branch, a clock read and two stores to one per-CPU word.
 */
static __always_inline void recount_user_enter(void)
{
	if (recount_enabled())
		recount_user_transition(true);
}

/**
 * recount_user_exit() - account an entry from user mode
 *
 * Stops the CPU's user clock. Called on every syscall, exception and
 * interrupt that arrives from user mode, before any other kernel work, and
 * on every exit from a KVM guest, with interrupts disabled, from an
 * instrumentable section.
 */
static __always_inline void recount_user_exit(void)
{
	if (recount_enabled())
		recount_user_transition(false);
}

void __recount_sched_tick(void);

/**
 * recount_sched_tick() - account the scheduler tick
 *
 * Folds the local CPU's interval in progress into the running thread's and
 * the CPU's tracks, counters included, so that they are never more than a
 * tick old. Called by sched_tick() with the runqueue locked, interrupts
 * disabled.
 */
static __always_inline void recount_sched_tick(void)
{
	if (recount_enabled())
		__recount_sched_tick();
}

void __recount_fault_begin(void);
void __recount_fault_end(void);
void __recount_contention_begin(void);
void __recount_contention_end(void);
void __recount_idle_enter(void);
void __recount_idle_exit(void);
void __recount_idle_dead(void);

/**
 * recount_idle_enter() - account a thread idling its CPU
 *
 * A CPU is idle while it runs its idle task; a thread that runs the idle
 * loop itself (idle injection) idles it from here. Charges the thread up to
 * now; from now on the CPU accumulates idle time. Called by the idle loop
 * with interrupts disabled, right before the CPU waits.
 */
static __always_inline void recount_idle_enter(void)
{
	if (recount_enabled())
		__recount_idle_enter();
}

/**
 * recount_idle_exit() - account a thread done idling its CPU
 *
 * Ends the idle interval recount_idle_enter() began, if it began one.
 * Called by the idle loop once the CPU has woken up, with preemption
 * disabled; interrupts may be on.
 */
static __always_inline void recount_idle_exit(void)
{
	if (recount_enabled())
		__recount_idle_exit();
}

DECLARE_PER_CPU(bool, recount_idle_irq);

/*
 * Is an entry of the idle task the outermost one, not one that interrupts
 * an interrupt's handler or the softirqs it runs on its way out? The entry
 * hooks run before irq_enter() and after irq_exit().
 */
static __always_inline bool recount_idle_irq_outermost(void)
{
	return !(preempt_count() & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET));
}

/**
 * recount_idle_irq_enter() - account an interrupt arriving on an idle CPU
 *
 * What an idle CPU does for an interrupt or an exception (the handler, and
 * the softirqs run on its way out) is kernel time of the CPU and of no
 * thread: it is not idle time, and is reported apart. An idle CPU's user
 * clock runs while it idles: the outermost entry stops it, as an entry from
 * user mode does, and the CPU's next accounting point splits its interval
 * by it. Called by the entry code for an entry from kernel mode that
 * interrupts the idle task, with interrupts disabled, once RCU watches.
 * Inline: a static branch, a preemption count and a word tested, and where
 * the CPU idles, a clock read and two stores to the word and one to a flag.
 */
static __always_inline void recount_idle_irq_enter(void)
{
	if (!recount_enabled() || !recount_idle_irq_outermost() ||
	    !recount_user_clock_running(raw_cpu_read(recount_user_clock)))
		return;
	/*
	 * An unstable sched_clock() stays within a tick of its last update
	 * until irq_enter() tells it the CPU woke up: tell it now, or most of
	 * a tickless sleep would read as this interrupt's.
	 */
	if (!static_branch_likely(&recount_raw_clock_key))
		sched_clock_idle_wakeup_event();
	recount_user_transition(false);
	raw_cpu_write(recount_idle_irq, true);
}

/**
 * recount_idle_irq_exit() - account the end of an interrupt on an idle CPU
 *
 * Ends what the outermost recount_idle_irq_enter() began: the CPU idles
 * again, and its user clock runs. Called by the entry code with interrupts
 * disabled, while RCU still watches.
 */
static __always_inline void recount_idle_irq_exit(void)
{
	if (!recount_enabled() || !recount_idle_irq_outermost() ||
	    !raw_cpu_read(recount_idle_irq))
		return;
	raw_cpu_write(recount_idle_irq, false);
	if (!recount_user_clock_running(raw_cpu_read(recount_user_clock)))
		recount_user_transition(true);
}

/**
 * recount_idle_dead() - account a CPU going offline
 *
 * Charges the CPU's last interval and stops accounting it until it runs
 * again: the time it spends offline is nobody's. Called by the idle
 * loop of an offline CPU, with interrupts disabled, before it dies.
 */
static __always_inline void recount_idle_dead(void)
{
	if (recount_enabled())
		__recount_idle_dead();
}

/**
 * recount_fault_begin() - a page fault begins
 *
 * Called by the architecture's page fault handler on entry, for faults from
 * user and kernel mode. Faults may nest; the outermost one is timed.
 */
static __always_inline void recount_fault_begin(void)
{
	if (recount_enabled())
		__recount_fault_begin();
}

/**
 * recount_fault_end() - a page fault ends
 *
 * Called by the architecture's page fault handler on exit: current's page
 * fault time grows by the time since the outermost recount_fault_begin(),
 * whatever the fault waited for meanwhile (I/O, userfaultfd, locks).
 */
static __always_inline void recount_fault_end(void)
{
	if (recount_enabled())
		__recount_fault_end();
}

/**
 * recount_contention_begin() - current starts waiting for a sleeping lock
 *
 * Called where a sleeping lock (mutex, rw_semaphore, percpu_rw_semaphore,
 * rt_mutex, semaphore) finds itself contended, next to
 * trace_contention_begin(); again while it waits, if it likes.
 */
static __always_inline void recount_contention_begin(void)
{
	if (recount_enabled())
		__recount_contention_begin();
}

/**
 * recount_contention_end() - current is done waiting for a sleeping lock
 *
 * Called next to trace_contention_end(), whether the lock was taken or the
 * wait interrupted: current's lock contention time grows by the time since
 * the first recount_contention_begin() of the wait, if one began.
 */
static __always_inline void recount_contention_end(void)
{
	if (recount_enabled())
		__recount_contention_end();
}

DECLARE_STATIC_KEY_FALSE(recount_listening_key);
void __recount_exit(struct task_struct *t, bool group_dead);

/**
 * recount_exit() - a thread exits: send its record to the listeners
 * @t: the exiting thread, current
 * @group_dead: whether @t is the last thread of its process
 *
 * Called by do_exit(), after the thread's exit code is set and before its mm
 * goes. The listeners of the CPU get the thread's record, and if
 * @group_dead its process's: what they consumed up to now, the rest of the
 * exit being a few microseconds more. A static branch while nobody listens.
 */
static __always_inline void recount_exit(struct task_struct *t, bool group_dead)
{
	if (static_branch_unlikely(&recount_listening_key))
		__recount_exit(t, group_dead);
}

void recount_update_current(void);

/**
 * recount_exit_notify() - an exiting thread's parent may reap it from now on
 *
 * Called by do_exit() right before exit_notify(), which may wake a parent
 * that reaps the process on another CPU (recount_reap()) before this CPU
 * takes its next accounting point: on a nohz_full CPU, none may come before
 * the thread's last context switch. Folds what the exit ran since the last
 * one (exit_mm() and the rest of the teardown) into the process's exited
 * usage now, where the parent's children take it from. An accounting point,
 * behind a static branch.
 */
static __always_inline void recount_exit_notify(void)
{
	if (recount_enabled())
		recount_update_current();
}

void recount_task_init(struct task_struct *p);
void recount_signal_init(struct signal_struct *sig);
void recount_thread_exit(struct task_struct *t);
void recount_reap(struct signal_struct *parent, struct signal_struct *child);
void recount_exec_private(struct signal_struct *sig);

#else /* !CONFIG_RECOUNT */

static inline bool recount_enabled(void) { return false; }
static inline void recount_user_enter(void) { }
static inline void recount_user_exit(void) { }
static inline void recount_idle_enter(void) { }
static inline void recount_idle_exit(void) { }
static inline void recount_idle_dead(void) { }
static inline void recount_idle_irq_enter(void) { }
static inline void recount_idle_irq_exit(void) { }
static inline void recount_fault_begin(void) { }
static inline void recount_fault_end(void) { }
static inline void recount_contention_begin(void) { }
static inline void recount_contention_end(void) { }
static inline void recount_exit(struct task_struct *t, bool group_dead) { }
static inline void recount_task_init(struct task_struct *p) { }
static inline void recount_signal_init(struct signal_struct *sig) { }
static inline void recount_exit_notify(void) { }
static inline void recount_thread_exit(struct task_struct *t) { }
static inline void recount_reap(struct signal_struct *parent,
				struct signal_struct *child) { }
static inline void recount_exec_private(struct signal_struct *sig) { }
static inline void recount_sched_tick(void) { }

#endif /* CONFIG_RECOUNT */
#endif /* _LINUX_RECOUNT_H */
