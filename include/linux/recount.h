/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recount: precise CPU resource accounting of threads, processes and CPUs.
 *
 * The hooks below are called by the scheduler and the entry code. Each one is
 * a static branch that jumps over an out-of-line call while recount is off, and
 * compiles to nothing without CONFIG_RECOUNT.
 *
 * See Documentation/accounting/recount.rst.
 */
#ifndef _LINUX_RECOUNT_H
#define _LINUX_RECOUNT_H

#include <linux/jump_label.h>
#include <linux/recount_types.h>

struct task_struct;
struct signal_struct;

/* Wrapped by kernel/sched/stats.h, which has the rq and its clock. */
void __recount_sched_switch(struct task_struct *prev, u64 now);
void __recount_sched_tick(u64 now);
void __recount_sched_enqueue(struct task_struct *p, u64 now);
void __recount_sched_switch_in(struct task_struct *next, u64 now);

#ifdef CONFIG_RECOUNT

DECLARE_STATIC_KEY_FALSE(recount_enabled_key);

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

void __recount_user_enter(void);
void __recount_user_exit(void);
void __recount_fault_begin(void);
void __recount_fault_end(void);
void __recount_contention_begin(void);
void __recount_contention_end(void);
void __recount_idle_enter(void);
void __recount_idle_exit(void);
void __recount_idle_dead(void);

/**
 * recount_user_enter() - account a return to user mode
 *
 * Charges the time since the CPU's last snapshot to current as kernel time.
 * Called on every return to user mode, after the last kernel work, with
 * interrupts disabled, from an instrumentable section.
 */
static __always_inline void recount_user_enter(void)
{
	if (recount_enabled())
		__recount_user_enter();
}

/**
 * recount_user_exit() - account an entry from user mode
 *
 * Charges the time since the CPU's last snapshot to current as user time.
 * Called on every syscall, exception and interrupt that arrives from user
 * mode, before any other kernel work, with interrupts disabled, from an
 * instrumentable section.
 */
static __always_inline void recount_user_exit(void)
{
	if (recount_enabled())
		__recount_user_exit();
}

/**
 * recount_idle_enter() - account a CPU going idle
 *
 * Charges the time since the CPU's last snapshot to the idle task as kernel
 * time; from now on the CPU accumulates idle time. Called by the idle loop
 * with interrupts disabled, right before the CPU waits.
 */
static __always_inline void recount_idle_enter(void)
{
	if (recount_enabled())
		__recount_idle_enter();
}

/**
 * recount_idle_exit() - account a CPU leaving idle
 *
 * Charges the time since recount_idle_enter() to the CPU as idle time.
 * Called by the idle loop once the CPU has woken up, with preemption
 * disabled; interrupts may be on.
 */
static __always_inline void recount_idle_exit(void)
{
	if (recount_enabled())
		__recount_idle_exit();
}

/**
 * recount_idle_dead() - account a CPU going offline
 *
 * Charges the idle task's last interval and stops accounting the CPU until
 * it runs again: the time it spends offline is nobody's. Called by the idle
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

void recount_task_init(struct task_struct *p);
int recount_signal_init(struct signal_struct *sig);
void recount_signal_free(struct signal_struct *sig);
void recount_thread_dead(struct task_struct *t);

#else /* !CONFIG_RECOUNT */

static inline bool recount_enabled(void) { return false; }
static inline void recount_user_enter(void) { }
static inline void recount_user_exit(void) { }
static inline void recount_idle_enter(void) { }
static inline void recount_idle_exit(void) { }
static inline void recount_idle_dead(void) { }
static inline void recount_fault_begin(void) { }
static inline void recount_fault_end(void) { }
static inline void recount_contention_begin(void) { }
static inline void recount_contention_end(void) { }
static inline void recount_exit(struct task_struct *t, bool group_dead) { }
static inline void recount_task_init(struct task_struct *p) { }
static inline int recount_signal_init(struct signal_struct *sig) { return 0; }
static inline void recount_signal_free(struct signal_struct *sig) { }
static inline void recount_thread_dead(struct task_struct *t) { }

#endif /* CONFIG_RECOUNT */
#endif /* _LINUX_RECOUNT_H */
