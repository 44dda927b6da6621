// SPDX-License-Identifier: GPL-2.0
/*
 * recount: precise CPU resource accounting of threads, processes and CPUs
 *
 * What is measured
 *
 *   For every thread, every process (all of its threads, live and exited)
 *   and every CPU: the time spent on CPU in user mode and in kernel mode,
 *   and, where the hardware counts them, the cycles and instructions of each
 *   mode (pmu.c); the energy used, estimated from a power model
 *   (energy.c). For every CPU, also the time and energy it spent idle.
 *   Nothing is sampled: every nanosecond a CPU runs is charged to exactly one
 *   thread and level, or to the CPU's idle time. Threads keep their usage
 *   per kind of CPU (performance, efficiency: kind.c).
 *
 *   And why a thread was not running: how long it waited for a CPU while
 *   runnable (queue time), in page faults, and for contended sleeping locks.
 *   These waits are timed where they start and end (enqueue and switch-in,
 *   the page fault handler, the locks' contention points) and added to the
 *   thread's runtime.
 *
 * When
 *
 *   A user/kernel transition only advances the CPU's user clock, one
 *   per-CPU word (include/linux/recount.h): a load, a store, a read of
 *   recount's clock (clock.c) and a store; so does an interrupt's entry
 *   and exit on an idle CPU (recount_idle_irq_enter/exit()), whose user
 *   clock runs while it idles. Everything else is done at the accounting
 *   points, where the thread or the state of the CPU changes:
 *
 *     context switch                 recount_sched_switch()
 *     scheduler tick                 recount_sched_tick()
 *     idle loop waits / wakes up     recount_idle_enter/exit()
 *     CPU goes offline               recount_idle_dead()
 *     a thread reads itself          recount_update_current()
 *     a thread starts exiting        recount_thread_exit()
 *
 *   Each folds the CPU's interval since its last one (recount_account()):
 *   the time, split between user and kernel mode by the growth of the user
 *   clock and converted to nanoseconds, goes to the thread the CPU ran (on
 *   the CPU's kind) and to the CPU, or to the CPU's idle time.
 *   The PMU counts user and kernel mode apart (pmu.c), so its counters are
 *   read at accounting points only, and the power model is applied there
 *   too: transitions cost the same whatever is counted. Kernel threads never
 *   enter user mode, so their user time is exactly zero. Counts that could
 *   not be read at both ends of an interval are not added, and marked
 *   inexact in the tracks they should have gone to.
 *
 * By whom, and with what cost
 *
 *   Only the CPU itself writes its state (struct recount_cpu) and the track
 *   of the thread it runs, with interrupts disabled, in write sections of
 *   their seqcount_t (the thread's queue time excepted: whoever enqueues it
 *   marks when it started waiting). No atomic read-modify-write, no
 *   allocation; the only locks are a process's, taken by its threads on
 *   their way out (PF_EXITING) and by a reader of the process that sees one
 *   leave during its sum.
 *
 *   Every hook sits behind the static key recount_enabled_key, so a kernel
 *   with recount off runs NOPs. Switching recount off charges every CPU up
 *   to then and waits for accounting points in flight; once it is on again
 *   at every hook, each CPU's first accounting point starts it afresh and
 *   charges nothing. So every thread that exists is accounted from then on,
 *   whenever it was created, and nothing is charged for the time recount was
 *   off.
 *
 *   A process has no track of its own, and its state does not grow with the
 *   number of CPUs: its usage is the sum of its live threads' and of what
 *   its exited threads consumed, into which a thread moves its usage when it
 *   starts exiting (recount_thread_exit()).
 *
 * Readers
 *
 *   Readers of threads and CPUs use the sequence counts and never block a
 *   writer; a reader of a process may keep its threads from exiting while
 *   it sums them. They add the interval in progress of a running thread or an
 *   idle CPU, up to the read, split by the user clock read on both sides of
 *   the reader's clock read (recount_user_clock_sample()): values read are
 *   current even on a nohz_full CPU that takes no tick, and do not go back
 *   but by the time a store takes to reach the reader's CPU (the writers
 *   order no clock read after a store: Documentation/accounting/recount.rst),
 *   or where a reader that stalled cannot ask the CPU by an IPI.
 *   A read of the calling thread first folds its interval in progress,
 *   counts included (recount_update_current()).
 */

#include <kunit/visibility.h>
#include <linux/capability.h>
#include <linux/cleanup.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/export.h>
#include <linux/init.h>
#include <linux/kstrtox.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/coredump.h>
#include <linux/sched/isolation.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seqlock.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/syscore_ops.h>
#include <linux/sysctl.h>

#include "internal.h"

DEFINE_PER_CPU(struct recount_cpu, recount_cpus);

/* Every hook tests it, those inlined in modules too. */
DEFINE_STATIC_KEY_FALSE(recount_enabled_key);
EXPORT_SYMBOL_GPL(recount_enabled_key);

DEFINE_PER_CPU(u64, recount_user_clock);
EXPORT_PER_CPU_SYMBOL_GPL(recount_user_clock);

/*
 * The CPU idles, but its user clock stands for an interrupt: the outermost
 * exit from it starts the clock again (recount_idle_irq_exit()).
 */
DEFINE_PER_CPU(bool, recount_idle_irq);

/* The energy the CPU used over an interval of @time ns, busy or @idle. */
static __always_inline u64 recount_energy(const struct recount_cpu *rc, u64 time,
					  bool idle)
{
	if (static_branch_unlikely(&recount_energy_estimated_key))
		return recount_energy_estimate(rc->kind, idle, time);
	return 0;
}

/*
 * A thread that left its process (recount_thread_exit()) charges its
 * process's exited usage too: @time and @energy, the counts of @d, or
 * those of @ed. Called with @t's write section and its process's
 * exited_seq section open, one for the whole accounting point
 * (recount_account()); the caller holds the process's exited_lock.
 */
static void recount_exited_add(struct task_struct *t, unsigned int kind, const u64 *time,
			       u64 energy, const struct recount_delta *d,
			       const struct recount_event_delta *ed)
{
	struct recount_process *p = &t->signal->recount;

	if (time)
		recount_usage_add_time(&p->exited[kind], time, energy);
	if (d)
		recount_usage_add_counts(&p->exited[kind], d);
	if (ed)
		recount_usage_add_events(&p->exited[kind], ed);
}

/*
 * Take the lock of @t's process's exited usage if @t may have left its
 * process: only threads on their way out (PF_EXITING) have.
 */
static __always_inline bool recount_exiting_lock(struct task_struct *t)
{
	if (likely(!t || !(READ_ONCE(t->flags) & PF_EXITING)))
		return false;
	raw_spin_lock(&t->signal->recount.exited_lock);
	return true;
}

static __always_inline void recount_exiting_unlock(struct task_struct *t, bool locked)
{
	if (unlikely(locked))
		raw_spin_unlock(&t->signal->recount.exited_lock);
}

/*
 * CPUs may start accounting: the static key is on at every hook. While it
 * is being switched on, a CPU may run a hook that is on and one that is not
 * yet, and so miss a transition: it starts only once every hook is on.
 */
static bool recount_may_start;

/*
 * The chosen events' part of an accounting point, from their counters read
 * in @snap, as recount_account_counts() does for cycles and instructions:
 * what they counted since the CPU's last accounting point, in @d, is added
 * to @prev and the CPU. Returns false if there is nothing to add: no @prev,
 * or a CPU that counts no event (it has no PMU, its generation may be
 * old: it must not start a track's generation again).
 */
static noinline bool recount_account_events(struct recount_cpu *rc, struct task_struct *prev,
					    const struct recount_event_snap *snap,
					    struct recount_event_delta *d)
{
	bool add = false;

	if (prev) {
		recount_event_delta(&rc->esnap, snap, d);
		add = d->counted || d->inexact;
	}
	if (add) {
		recount_usage_add_events(&rc->usage, d);
		recount_usage_add_events(&prev->recount.kind[rc->kind], d);
	}
	rc->esnap = *snap;
	return add;
}

/*
 * The counters' part of an accounting point, where recount uses the PMU:
 * read them, and add what they counted since the CPU's last accounting
 * point to @prev and the CPU (or drop it, if the CPU idled or starts: then
 * there is no @prev).
 */
static noinline void recount_account_counts(struct recount_cpu *rc, struct task_struct *prev)
{
	/*
	 * Not zeroed at every context switch (CONFIG_INIT_STACK_ALL_ZERO):
	 * recount_counts_delta() sets all that is read of it, and its time is
	 * not.
	 */
	struct recount_delta d __uninitialized;
	struct recount_event_snap esnap __uninitialized;
	struct recount_event_delta ed __uninitialized;
	bool events = false;
	struct recount_snap snap;

	/*
	 * The chosen events right after cycles and instructions, by the same
	 * instructions every time: an event that counts what one of them
	 * does counts what it does in every interval, at both levels.
	 */
	recount_pmu_read(&snap);
	if (static_branch_unlikely(&recount_events_key))
		recount_events_read(&esnap);
	if (prev) {
		recount_counts_delta(&rc->snap, &snap, &d);
		recount_usage_add_counts(&rc->usage, &d);
		recount_usage_add_counts(&prev->recount.kind[rc->kind], &d);
	}
	rc->snap = snap;
	if (static_branch_unlikely(&recount_events_key))
		events = recount_account_events(rc, prev, &esnap, &ed);
	/* In the section recount_account() opened for the whole point. */
	if (prev && unlikely(prev->recount.released))
		recount_exited_add(prev, rc->kind, NULL, 0, &d, events ? &ed : NULL);
}

/*
 * An idle CPU's ticks read no counter: what the PMU counts in the idle loop
 * and its interrupts is dropped.
 */
static __always_inline bool recount_reads_counters(unsigned int prev_state, unsigned int state)
{
	return prev_state != RECOUNT_CPU_IDLE || state != RECOUNT_CPU_IDLE;
}

/*
 * An idle CPU's interval: @idle ticks idle and @irq ticks handling
 * interrupts, the CPU's kernel time and no thread's. @time is scratch.
 */
static void recount_idle_add(struct recount_cpu *rc, u64 idle, u64 irq,
			     u64 time[RECOUNT_NR_LEVELS])
{
	u64 ns = recount_ticks_to_ns(idle, rc->factor, &rc->frac[RECOUNT_FRAC_IDLE]);

	WRITE_ONCE(rc->idle_time, rc->idle_time + ns);
	WRITE_ONCE(rc->idle_energy, rc->idle_energy + recount_energy(rc, ns, true));
	if (!irq)
		return;
	ns = recount_ticks_to_ns(irq, rc->factor, &rc->frac[RECOUNT_FRAC_IDLE_IRQ]);
	time[RECOUNT_LEVEL_USER] = 0;
	time[RECOUNT_LEVEL_KERNEL] = ns;
	recount_usage_add_time(&rc->usage, time, recount_energy(rc, ns, false));
	WRITE_ONCE(rc->idle_irq_time, rc->idle_irq_time + ns);
}

/*
 * Set the local CPU's user clock, @w at @now, as the CPU starts or stops
 * idling: it runs (@run) while the CPU idles, else it stands, the CPU in
 * kernel mode. An interrupt in progress stays the CPU's idle time.
 */
static __always_inline void recount_user_clock_set(u64 w, u64 now, bool run)
{
	if (recount_user_clock_running(w) != run)
		w = recount_user_clock_next(w, now, run);
	__this_cpu_write(recount_user_clock, w);
	__this_cpu_write(recount_idle_irq, false);
}

/*
 * The accounting point. Folds the local CPU's interval since its last one:
 * its time, split between user and kernel mode by the growth of its user
 * clock, converted to nanoseconds, its PMU counts and its energy, into the
 * tracks of the thread it ran and of the CPU; or if the CPU idled, split by
 * the same clock into its idle time and the kernel time of the interrupts
 * it handled. The user clock of an idle CPU runs but in an interrupt.
 * From now on the CPU is in @state, running @next (RECOUNT_CPU_RUNNING), which
 * waited @queued for it (or RECOUNT_NO_WAIT). At the tick (@tick), the clock
 * is checked too.
 *
 * A CPU whose state is unknown (RECOUNT_CPU_OFF) starts accounting here and
 * charges nothing; one being switched off (RECOUNT_CPU_STOPPING) does nothing.
 * If the clock stepped back since the last point, the interval is empty
 * (recount_ticks_since()), as it is to a reader: nothing is charged, and the
 * CPU goes on from the clock's new value.
 * Called with interrupts disabled, by the only writer of this CPU's state.
 */
static void recount_account(struct task_struct *next, unsigned int state, u64 queued,
			    bool tick)
{
	struct recount_cpu *rc = this_cpu_ptr(&recount_cpus);
	unsigned int prev_state = rc->state;
	struct task_struct *prev = prev_state == RECOUNT_CPU_RUNNING ? rc->curr : NULL;
	bool prev_locked, prev_exited, next_same_cpu = false;
	u64 now, w, word, ticks, idle, energy, time[RECOUNT_NR_LEVELS];

	lockdep_assert_irqs_disabled();
	if (prev_state == RECOUNT_CPU_STOPPING ||
	    (prev_state == RECOUNT_CPU_OFF && !READ_ONCE(recount_may_start)))
		return;
	if (next == prev)
		next = NULL;
	/* Only threads that left their process take a lock: see recount_thread_exit(). */
	prev_locked = recount_exiting_lock(prev);

	/*
	 * @next's section only if it comes from another CPU: a reader that
	 * found it on its old CPU must retry. On the CPU it last ran on, the
	 * CPU's own section tells readers it runs again.
	 */
	if (next && READ_ONCE(next->recount.cpu) == smp_processor_id())
		next_same_cpu = true;
	raw_write_seqcount_begin(&rc->seq);
	if (prev)
		raw_write_seqcount_begin(&prev->recount.seq);
	if (next && !next_same_cpu)
		raw_write_seqcount_begin(&next->recount.seq);
	/*
	 * A thread that left its process charges its exited usage too, the
	 * counts and the time of this point in one section: a reader of the
	 * process sees the point whole or not at all.
	 */
	prev_exited = prev && unlikely(prev->recount.released);
	if (prev_exited)
		write_seqcount_begin(&prev->signal->recount.exited_seq);

	if (static_branch_unlikely(&recount_pmu_key) && recount_reads_counters(prev_state, state))
		recount_account_counts(rc, prev);
	now = recount_clock();
	w = __this_cpu_read(recount_user_clock);
	word = recount_user_clock_user(w, now);

	if (unlikely(prev_state == RECOUNT_CPU_OFF)) {
		/*
		 * Start: a transition taken while the key was changing may
		 * have left the word out of step; the CPU is in kernel mode.
		 */
		word = 0;
		w = 0;
		WRITE_ONCE(rc->factor, recount_clock_factor());
		memset(rc->frac, 0, sizeof(rc->frac));
	} else if (likely(prev)) {
		recount_split(recount_ticks_since(rc->at, now),
			      recount_ticks_since(rc->user, word), rc->factor, rc->frac, time);
		energy = recount_energy(rc, time[RECOUNT_LEVEL_USER] + time[RECOUNT_LEVEL_KERNEL],
					false);
		recount_usage_add_time(&rc->usage, time, energy);
		recount_usage_add_time(&prev->recount.kind[rc->kind], time, energy);
		if (unlikely(prev_exited)) {
			recount_exited_add(prev, rc->kind, time, energy, NULL, NULL);
			write_seqcount_end(&prev->signal->recount.exited_seq);
		}
	} else {
		/* What the PMU counts in the idle loop is no thread's: it is dropped. */
		ticks = recount_ticks_since(rc->at, now);
		idle = min(recount_ticks_since(rc->user, word), ticks);
		recount_idle_add(rc, idle, ticks - idle, time);
	}

	/*
	 * From one thread to another the CPU stays in kernel mode; while it
	 * idles, its interrupts' hooks keep its user clock.
	 */
	if (prev_state != state || unlikely(prev_state == RECOUNT_CPU_OFF))
		recount_user_clock_set(w, now, state == RECOUNT_CPU_IDLE);
	WRITE_ONCE(rc->at, now);
	WRITE_ONCE(rc->user, word);
	if (tick)
		recount_clock_check(rc);
	if (state == RECOUNT_CPU_RUNNING && !next)
		next = prev;
	WRITE_ONCE(rc->curr, state == RECOUNT_CPU_RUNNING ? next : NULL);
	WRITE_ONCE(rc->state, state);

	if (next && next != prev) {
		struct recount_thread *rt = &next->recount;

		WRITE_ONCE(rt->cpu, smp_processor_id());
		/*
		 * A thread that left its process waits apart: recount_wait_add().
		 * On its last CPU, @next's waits are written in the CPU's
		 * section only: recount_thread_read() reads them inside it.
		 */
		if (queued != RECOUNT_NO_WAIT && !rt->released)
			recount_wait_stats_add(&rt->runtime.wait[RECOUNT_WAIT_QUEUE], queued, 0);
		if (!next_same_cpu)
			raw_write_seqcount_end(&rt->seq);
	}
	if (prev)
		raw_write_seqcount_end(&prev->recount.seq);
	raw_write_seqcount_end(&rc->seq);
	recount_exiting_unlock(prev, prev_locked);
}

/*
 * Add a wait of @time to @t's waits @wait, and if @t left its process, to
 * the process's exited waits. Called by the CPU that runs @t, or that
 * switches it in, so the only writer of its track.
 */
static void recount_wait_add(struct task_struct *t, enum recount_wait wait, u64 time)
{
	struct recount_thread *rt = &t->recount;
	struct recount_process *p;
	unsigned long flags;
	bool locked;
	u64 at;

	local_irq_save(flags);
	locked = recount_exiting_lock(t);
	raw_write_seqcount_begin(&rt->seq);
	at = recount_wait_stats_add(&rt->runtime.wait[wait], time, 0);
	if (unlikely(rt->released)) {
		p = &t->signal->recount;
		write_seqcount_begin(&p->exited_seq);
		recount_wait_stats_add(&p->exited_runtime.wait[wait], time, at);
		write_seqcount_end(&p->exited_seq);
	}
	raw_write_seqcount_end(&rt->seq);
	recount_exiting_unlock(t, locked);
	local_irq_restore(flags);
}

/*
 * Is @p the local CPU's idle task? is_idle_task() is also true of a thread
 * injecting idle (play_idle_precise()), which idles the CPU only between
 * recount_idle_enter() and recount_idle_exit(). Idle tasks alone have pid 0.
 */
static __always_inline bool recount_is_idle(struct task_struct *p)
{
	return is_idle_task(p) && !p->pid;
}

/*
 * Fold the local CPU's interval in progress, keeping its state; at the
 * tick, check the clock too. Interrupts disabled.
 */
static void recount_account_current(bool tick)
{
	unsigned int state = __this_cpu_read(recount_cpus.state);

	/*
	 * A thread injecting idle (PF_IDLE, like the idle task) idles the CPU
	 * only between recount_idle_enter() and recount_idle_exit().
	 */
	if (state == RECOUNT_CPU_IDLE ||
		 (state == RECOUNT_CPU_OFF && recount_is_idle(current)))
		recount_account(NULL, RECOUNT_CPU_IDLE, RECOUNT_NO_WAIT, tick);
	else
		recount_account(current, RECOUNT_CPU_RUNNING, RECOUNT_NO_WAIT, tick);
}

/**
 * __recount_sched_tick() - account the scheduler tick
 *
 * See recount_sched_tick().
 */
void __recount_sched_tick(void)
{
	recount_account_current(true);
}

/*
 * When accounting last started. A thread's marks (queued_at, fault_at,
 * lock_at) from before are stale: what they would measure spans a time
 * recount was off.
 */
static u64 recount_started_at;

static __always_inline bool recount_mark_valid(u64 mark)
{
	return mark && mark >= READ_ONCE(recount_started_at);
}

/*
 * The wait from @mark to @now, 0 if @now is not later (a runqueue clock the
 * scheduler did not update for a wakeup that preempts); RECOUNT_NO_WAIT if
 * @mark is not valid.
 */
static __always_inline u64 recount_since(u64 mark, u64 now)
{
	if (!recount_mark_valid(mark))
		return RECOUNT_NO_WAIT;
	return now > mark ? now - mark : 0;
}

/**
 * __recount_sched_enqueue() - a thread starts waiting for a CPU
 * @p: the thread, woken up, new, or preempted while runnable
 * @now: the runqueue clock, in nanoseconds
 *
 * A thread moved from one runqueue to another keeps waiting since it first
 * did. Called through kernel/sched/stats.h with the runqueue locked.
 */
void __recount_sched_enqueue(struct task_struct *p, u64 now)
{
	if (!recount_mark_valid(p->recount.queued_at))
		p->recount.queued_at = now;
}

/**
 * __recount_sched_switch() - account a context switch
 * @prev: the thread leaving the CPU
 * @next: the thread the CPU switches to
 * @now: the runqueue clock __schedule() has just updated, in nanoseconds,
 *	for queue time
 * @preempted: @prev stays runnable: it starts waiting for a CPU
 *
 * Charges the CPU's interval since its last accounting point to @prev; from
 * now on the CPU runs @next, or idles if @next is its idle task. @next's
 * queue time grows by its wait. Called through recount_sched_switch() in
 * kernel/sched/stats.h, with the runqueue locked and interrupts disabled.
 */
void __recount_sched_switch(struct task_struct *prev, struct task_struct *next,
			    u64 now, bool preempted)
{
	u64 queued;

	if (recount_is_idle(next)) {
		recount_account(NULL, RECOUNT_CPU_IDLE, RECOUNT_NO_WAIT, false);
	} else {
		queued = recount_since(next->recount.queued_at, now);
		next->recount.queued_at = 0;
		recount_account(next, RECOUNT_CPU_RUNNING, queued, false);
		if (unlikely(queued != RECOUNT_NO_WAIT && next->recount.released))
			recount_wait_add(next, RECOUNT_WAIT_QUEUE, queued);
	}
	if (preempted && !recount_is_idle(prev))
		__recount_sched_enqueue(prev, now);
}

/**
 * __recount_fault_begin() - current enters a page fault
 *
 * See recount_fault_begin().
 */
void __recount_fault_begin(void)
{
	struct recount_thread *rt = &current->recount;

	/*
	 * A fault in NMI context may interrupt an update of current's track:
	 * it is not timed. A fault taken while handling another (in an
	 * interrupt, say) nests; a depth left over from a time recount was
	 * off restarts.
	 */
	if (in_nmi())
		return;
	if (!rt->fault_depth || !recount_mark_valid(rt->fault_at)) {
		rt->fault_depth = 0;
		rt->fault_at = local_clock();
	}
	rt->fault_depth++;
}

/**
 * __recount_fault_end() - current leaves a page fault
 *
 * See recount_fault_end().
 */
void __recount_fault_end(void)
{
	struct recount_thread *rt = &current->recount;
	u64 time;

	if (in_nmi() || !rt->fault_depth || --rt->fault_depth)
		return;
	time = recount_since(rt->fault_at, local_clock());
	if (time != RECOUNT_NO_WAIT)
		recount_wait_add(current, RECOUNT_WAIT_FAULT, time);
}

/**
 * __recount_contention_begin() - current waits for a contended sleeping lock
 *
 * See recount_contention_begin().
 */
void __recount_contention_begin(void)
{
	struct recount_thread *rt = &current->recount;

	/* Read by KUnit's lock_kunit.c from another thread. */
	if (!recount_mark_valid(rt->lock_at))
		WRITE_ONCE(rt->lock_at, local_clock());
}

/**
 * __recount_contention_end() - current is done waiting for a sleeping lock
 *
 * See recount_contention_end().
 */
void __recount_contention_end(void)
{
	struct recount_thread *rt = &current->recount;
	u64 time;

	/* A mutex taken at its first try was not waited for. */
	if (!recount_mark_valid(rt->lock_at))
		return;
	time = recount_since(rt->lock_at, local_clock());
	WRITE_ONCE(rt->lock_at, 0);
	if (time != RECOUNT_NO_WAIT)
		recount_wait_add(current, RECOUNT_WAIT_LOCK, time);
}

/**
 * __recount_idle_enter() - account a thread idling its CPU
 *
 * See recount_idle_enter().
 */
void __recount_idle_enter(void)
{
	/*
	 * The idle task's CPU is idle from the switch to it; is_idle_task()
	 * is true of a thread injecting idle too.
	 */
	if (!recount_is_idle(current))
		recount_account(NULL, RECOUNT_CPU_IDLE, RECOUNT_NO_WAIT, false);
}

/**
 * __recount_idle_exit() - account a thread done idling its CPU
 *
 * See recount_idle_exit().
 */
void __recount_idle_exit(void)
{
	unsigned long flags;

	if (recount_is_idle(current))
		return;
	/* The idle loop has interrupts on here; the tick must not nest. */
	local_irq_save(flags);
	if (__this_cpu_read(recount_cpus.state) == RECOUNT_CPU_IDLE)
		recount_account(current, RECOUNT_CPU_RUNNING, RECOUNT_NO_WAIT, false);
	local_irq_restore(flags);
}

/**
 * __recount_idle_dead() - account a CPU going offline
 *
 * See recount_idle_dead().
 */
void __recount_idle_dead(void)
{
	recount_account(NULL, RECOUNT_CPU_OFF, RECOUNT_NO_WAIT, false);
}

/**
 * recount_update_current() - fold the local CPU's interval in progress
 *
 * Called before the calling thread reads itself, its process or its CPU, so
 * that the values read include everything up to now, counters included.
 */
void recount_update_current(void)
{
	unsigned long flags;

	local_irq_save(flags);
	/* Checked with interrupts off: see recount_set_enabled(). */
	if (recount_enabled())
		recount_account_current(false);
	local_irq_restore(flags);
}
EXPORT_SYMBOL_IF_KUNIT(recount_update_current);

/**
 * recount_thread_exit() - an exiting thread leaves its process's live threads
 * @t: the thread, current, on its way out (PF_EXITING)
 *
 * Moves what @t consumed and waited for so far into its process's exited
 * usage; whatever it consumes from now on, up to its last context switch,
 * goes there too as it is charged. Process readers skip threads that left,
 * so they see every thread once: live, or in the exited usage; the move is
 * made holding the process's seqlock recount.moved, which they take if they
 * see it change. Called by do_exit() whether recount is on or not, so that
 * a process's exited usage is always the sum of its exited threads.
 */
void recount_thread_exit(struct task_struct *t)
{
	struct recount_process *p = &t->signal->recount;
	struct recount_thread *rt = &t->recount;
	unsigned long flags;
	int k;

	/*
	 * Interrupts on until the lock is held: a reader holding it may wait
	 * for this CPU to answer an IPI (recount_process_read()).
	 */
	write_seqlock(&p->moved);
	local_irq_save(flags);
	if (recount_enabled())
		recount_account_current(false);
	raw_spin_lock(&p->exited_lock);
	write_seqcount_begin(&p->exited_seq);
	for (k = 0; k < RECOUNT_NR_KINDS; k++)
		recount_usage_sum(&p->exited[k], &rt->kind[k]);
	recount_runtime_sum(&p->exited_runtime, &rt->runtime);
	raw_write_seqcount_begin(&rt->seq);
	WRITE_ONCE(rt->released, true);
	raw_write_seqcount_end(&rt->seq);
	write_seqcount_end(&p->exited_seq);
	raw_spin_unlock(&p->exited_lock);
	local_irq_restore(flags);
	write_sequnlock(&p->moved);
}

/**
 * recount_reap() - a process's parent reaps it
 * @parent: the parent, its signal_struct::stats_lock held for writing
 * @child: the process reaped: all its threads have left it
 *
 * Adds what @child's threads consumed and waited for, and what its own
 * reaped children did, to @parent's children, as wait_task_zombie() adds
 * their times to cutime and cstime. Called whether recount is on or not.
 * What @child's last thread runs and waits for from now to its last context
 * switch (its exit's end, and a wait for the CPU if its parent's wakeup
 * preempted it) stays in @child's exited usage, as it does for cutime.
 *
 * The cycles and instructions of a child that ran a non-dumpable image
 * (recount_exec_private()) are left out, and the children flagged inexact
 * in them: perf stops counting such a task for its parent's events, and its
 * parent may not read it.
 */
void recount_reap(struct signal_struct *parent, struct signal_struct *child)
{
	struct recount_process *p = &parent->recount, *c = &child->recount;
	struct recount_usage kind[RECOUNT_NR_KINDS], exited = {}, children = c->children;
	struct recount_runtime exited_runtime;
	unsigned int seq;
	int k;

	do {
		seq = read_seqcount_begin(&c->exited_seq);
		for (k = 0; k < RECOUNT_NR_KINDS; k++)
			recount_usage_copy(&kind[k], &c->exited[k]);
		recount_runtime_copy(&exited_runtime, &c->exited_runtime);
	} while (read_seqcount_retry(&c->exited_seq, seq));

	for (k = 0; k < RECOUNT_NR_KINDS; k++)
		recount_usage_sum(&exited, &kind[k]);
	if (READ_ONCE(c->pmu_private)) {
		recount_usage_drop_counts(&exited);
		recount_usage_drop_counts(&children);
	}
	recount_usage_sum(&p->children, &exited);
	recount_usage_sum(&p->children, &children);
	recount_runtime_sum(&p->children_runtime, &exited_runtime);
	recount_runtime_sum(&p->children_runtime, &c->children_runtime);
}

/**
 * recount_exec_private() - a process execs a non-dumpable image
 * @sig: the process, its only thread in begin_new_exec()
 *
 * Called where begin_new_exec() stops perf counting the task for events it
 * inherited (set-user-ID, set-group-ID or file capabilities): from now on,
 * the cycles and instructions of the process and of the children it reaps
 * are kept from its parent's children (recount_reap()). Sticky.
 */
void recount_exec_private(struct signal_struct *sig)
{
	WRITE_ONCE(sig->recount.pmu_private, true);
}

/**
 * recount_children_read() - read what a process's reaped children consumed
 * @sig: the process
 * @usage: receives what they, and their reaped children, consumed
 * @runtime: receives what they waited for
 *
 * Context: any, but not holding @sig's stats_lock: a reader of it retries
 * while a parent reaps.
 */
void recount_children_read(struct signal_struct *sig, struct recount_usage *usage,
			   struct recount_runtime *runtime)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&sig->stats_lock);
		*usage = sig->recount.children;
		*runtime = sig->recount.children_runtime;
	} while (read_seqretry(&sig->stats_lock, seq));
}

/* A user clock and recount's clock, read together. */
struct recount_user_clock_read {
	u64 word;
	u64 now;
};

/*
 * Called by smp_call_function_single() on the CPU asked, with interrupts
 * disabled there, so that none of its transitions is under way: its user
 * clock and recount's clock, as a transition reads it.
 */
static void recount_user_clock_read_local(void *info)
{
	struct recount_user_clock_read *r = info;

	r->word = __this_cpu_read(recount_user_clock);
	r->now = recount_clock();
}

/*
 * Ask @cpu for its user clock and recount's clock, read together, and wait
 * for them. Not from an interrupt or with interrupts disabled, where
 * smp_call_function_single() could deadlock; not of an isolated CPU
 * (nohz_full, isolcpus), which no reader disturbs; nor of an offline one:
 * then false.
 */
static bool recount_user_clock_ask(unsigned int cpu, u64 *word, u64 *now)
{
	struct recount_user_clock_read r;

	if (!in_task() || irqs_disabled() || cpu_is_isolated(cpu) ||
	    smp_call_function_single(cpu, recount_user_clock_read_local, &r, true))
		return false;
	*word = r.word;
	*now = r.now;
	return true;
}

/*
 * Read @cpu's user clock and recount's clock together: @word is what the
 * word was when @now was read. The reader reads the word on both sides of
 * the clock, and its own clock on both sides of the two words, interrupts
 * off, and lets recount_user_clock_pick() say which word held; if neither
 * is known to, it reads again, as a sequence count's reader does: a
 * transition under way is waited out, and a reader that stalled (an NMI, a
 * preempted vCPU) reads again only if the word changed meanwhile. A reader
 * whose windows are long (a vCPU its host keeps preempting, a hypervisor
 * that traps the counter) might never see one transition resolved: after
 * RECOUNT_SAMPLE_TRIES such windows in one sample it asks the CPU for both
 * (recount_user_clock_ask(): an IPI, and a wait for it). If it cannot (it
 * runs in an interrupt or with interrupts disabled, or the CPU is isolated
 * or offline), it trusts the count, modulo 128, rather than spin on.
 *
 * A sample that straddles recount being switched off and on (a change of
 * clock, and of the window's unit) is discarded by the caller: the switch
 * opens the CPU's sequence count.
 */
static void recount_user_clock_sample(unsigned int cpu, u64 *word, u64 *now)
{
	const u64 *p = per_cpu_ptr(&recount_user_clock, cpu);
	u64 window = recount_clock_window(), w1, w2, before, after;
	unsigned long flags;
	int long_windows = 0;

	for (;;) {
		local_irq_save(flags);
		before = recount_clock_window_clock();
		/*
		 * The window's start before the first load of the word: rmb()
		 * (LFENCE on x86, which the SDM asks for after RDTSC to order
		 * it before later loads; smp_rmb() would be a compiler barrier).
		 */
		rmb();
		w1 = READ_ONCE(*p);
		/* The clock after the first load of the word... */
		smp_rmb();
		*now = recount_clock_of(cpu);
		/* ...and the second load after the clock, as above. */
		rmb();
		w2 = READ_ONCE(*p);
		/* ...and its end after the second. */
		smp_rmb();
		after = recount_clock_window_clock();
		local_irq_restore(flags);
		if (recount_user_clock_pick(w1, w2, before, *now, after, window, word))
			return;
		if (after - before > window && ++long_windows == RECOUNT_SAMPLE_TRIES) {
			if (recount_user_clock_ask(cpu, word, now))
				return;
			window = U64_MAX;
		}
		cpu_relax();
	}
}

/*
 * Inside a read section of @rc, @cpu's: what the CPU did since its last
 * accounting point, up to now. @d->time gets the time a thread ran, per
 * level, @idle the time it idled. Returns the CPU's state.
 */
static unsigned int recount_cpu_progress(const struct recount_cpu *rc, unsigned int cpu,
					 struct recount_delta *d, u64 *idle)
{
	unsigned int state = READ_ONCE(rc->state);
	u32 frac[RECOUNT_NR_FRACS];
	u64 word, now, ticks, user, factor;

	d->time[RECOUNT_LEVEL_USER] = 0;
	d->time[RECOUNT_LEVEL_KERNEL] = 0;
	*idle = 0;
	if (state != RECOUNT_CPU_RUNNING && state != RECOUNT_CPU_IDLE)
		return state;
	recount_user_clock_sample(cpu, &word, &now);
	ticks = recount_ticks_since(READ_ONCE(rc->at), now);
	factor = READ_ONCE(rc->factor);
	memcpy(frac, rc->frac, sizeof(frac));
	user = recount_ticks_since(READ_ONCE(rc->user), recount_user_clock_user(word, now));
	if (state == RECOUNT_CPU_IDLE) {
		/* An idle CPU's user clock runs but in its interrupts. */
		user = min(user, ticks);
		*idle = recount_ticks_to_ns(user, factor, &frac[RECOUNT_FRAC_IDLE]);
		d->time[RECOUNT_LEVEL_KERNEL] = recount_ticks_to_ns(ticks - user, factor,
								    &frac[RECOUNT_FRAC_IDLE_IRQ]);
		return state;
	}
	recount_split(ticks, user, factor, frac, d->time);
	return state;
}

/**
 * recount_thread_read() - read what a thread consumed and waited for
 * @t: the thread
 * @usage: receives its usage on each kind of CPU
 * @runtime: receives what it waited for
 *
 * If @t runs, its usage includes the interval in progress on its CPU, up to
 * now, split between user and kernel mode (its counters as of the CPU's last
 * accounting point).
 *
 * Context: any but NMI. From a task with interrupts enabled, a read of
 * another CPU may send it an IPI and wait for it
 * (recount_user_clock_sample()): hold no lock that CPU may spin on with
 * interrupts disabled.
 */
void recount_thread_read(struct task_struct *t,
			 struct recount_usage usage[RECOUNT_NR_KINDS],
			 struct recount_runtime *runtime)
{
	const struct recount_thread *rt = &t->recount;
	struct recount_thread_section s;
	/* Its time is set by recount_cpu_progress() before it is read. */
	struct recount_delta d __uninitialized;
	unsigned int kind;
	bool running;
	u64 idle;
	int k;

	/* No CPU is of the kind: it stays 0. */
	for (k = 0; k < RECOUNT_NR_KINDS; k++)
		if (!(recount_kinds_used & BIT(k)))
			recount_usage_zero(&usage[k]);
	do {
		running = recount_thread_read_begin(t, &s);
		for (k = 0; k < RECOUNT_NR_KINDS; k++)
			if (recount_kinds_used & BIT(k))
				recount_usage_copy(&usage[k], &rt->kind[k]);
		recount_runtime_copy(runtime, &rt->runtime);
		running = running &&
			  recount_cpu_progress(s.rc, s.cpu, &d, &idle) == RECOUNT_CPU_RUNNING;
	} while (recount_thread_read_retry(t, &s));

	if (!running)
		return;
	kind = s.rc->kind;
	for (k = 0; k < RECOUNT_NR_LEVELS; k++)
		usage[kind].level[k].time += d.time[k];
	usage[kind].energy += recount_energy(s.rc, d.time[RECOUNT_LEVEL_USER] +
					     d.time[RECOUNT_LEVEL_KERNEL], false);
}
EXPORT_SYMBOL_IF_KUNIT(recount_thread_read);

/**
 * recount_process_read() - read what a process consumed and waited for
 * @sig: the process
 * @total: receives, per kind of CPU, the usage of all its threads, live
 *	and exited
 * @runtime: receives what all its threads, live and exited, waited for
 * @exited: receives the usage of its exited threads, a part of the sum of
 *	@total
 * @exited_runtime: receives what its exited threads waited for, a part of
 *	@runtime
 *
 * The live threads are summed under RCU, those that left the process
 * skipped: their usage is in the exited usage, read before the sum. If a
 * thread left meanwhile, it may have been counted in neither: the sum is
 * taken again holding recount.moved, which keeps threads from leaving (as
 * thread_group_cputime() does with signal_struct::stats_lock).
 * Interrupts stay on, and the exited usage's raw lock is not taken: the
 * threads that left go on charging it.
 *
 * Context: process context: it may take recount.moved. A read of another
 * CPU may send it an IPI and wait for it (recount_user_clock_sample()):
 * hold no lock that CPU may spin on with interrupts disabled.
 */
void recount_process_read(struct signal_struct *sig,
			  struct recount_usage total[RECOUNT_NR_KINDS],
			  struct recount_runtime *runtime,
			  struct recount_usage *exited,
			  struct recount_runtime *exited_runtime)
{
	struct recount_process *p = &sig->recount;
	struct recount_usage usage[RECOUNT_NR_KINDS];
	struct recount_runtime thread_runtime;
	struct task_struct *t;
	unsigned int eseq;
	int k, seq, nextseq = 0;

	rcu_read_lock();
	do {
		seq = nextseq;
		read_seqbegin_or_lock(&p->moved, &seq);
		do {
			eseq = read_seqcount_begin(&p->exited_seq);
			for (k = 0; k < RECOUNT_NR_KINDS; k++)
				recount_usage_copy(&total[k], &p->exited[k]);
			recount_runtime_copy(runtime, &p->exited_runtime);
		} while (read_seqcount_retry(&p->exited_seq, eseq));
		memset(exited, 0, sizeof(*exited));
		for (k = 0; k < RECOUNT_NR_KINDS; k++)
			recount_usage_sum(exited, &total[k]);
		*exited_runtime = *runtime;

		__for_each_thread(sig, t) {
			if (READ_ONCE(t->recount.released))
				continue;
			recount_thread_read(t, usage, &thread_runtime);
			for (k = 0; k < RECOUNT_NR_KINDS; k++)
				recount_usage_sum(&total[k], &usage[k]);
			recount_runtime_sum(runtime, &thread_runtime);
		}
		/* If a thread left meanwhile, again with the lock. */
		nextseq = 1;
	} while (need_seqretry(&p->moved, seq));
	done_seqretry(&p->moved, seq);
	rcu_read_unlock();
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * recount_cpu_ptr() - a CPU's accounting state, for KUnit
 * @cpu: the CPU
 *
 * Return: its struct recount_cpu, which only @cpu writes.
 */
struct recount_cpu *recount_cpu_ptr(unsigned int cpu)
{
	return per_cpu_ptr(&recount_cpus, cpu);
}
EXPORT_SYMBOL_IF_KUNIT(recount_cpu_ptr);
#endif

/**
 * recount_cpu_read() - read what a CPU did
 * @cpu: the CPU
 * @cu: receives its kind, usage, idle time, idle energy and the time it
 *	handled interrupts while idle
 *
 * The interval in progress is included, up to now: the time of the thread
 * the CPU runs, split between user and kernel mode, or its idle time; its
 * counters are as of the CPU's last accounting point.
 *
 * Context: any but NMI. From a task with interrupts enabled, a read of
 * another CPU may send it an IPI and wait for it
 * (recount_user_clock_sample()): hold no lock that CPU may spin on with
 * interrupts disabled.
 */
void recount_cpu_read(unsigned int cpu, struct recount_cpu_usage *cu)
{
	struct recount_cpu *rc = per_cpu_ptr(&recount_cpus, cpu);
	struct recount_delta d;
	unsigned int seq, state;
	u64 idle;
	int l;

	do {
		seq = read_seqcount_begin(&rc->seq);
		recount_usage_copy(&cu->usage, &rc->usage);
		cu->idle_time = READ_ONCE(rc->idle_time);
		cu->idle_energy = READ_ONCE(rc->idle_energy);
		cu->idle_irq_time = READ_ONCE(rc->idle_irq_time);
		state = recount_cpu_progress(rc, cpu, &d, &idle);
	} while (read_seqcount_retry(&rc->seq, seq));
	cu->kind = rc->kind;

	if (state == RECOUNT_CPU_IDLE) {
		cu->idle_time += idle;
		cu->idle_energy += recount_energy(rc, idle, true);
		cu->idle_irq_time += d.time[RECOUNT_LEVEL_KERNEL];
	}
	if (state == RECOUNT_CPU_RUNNING || state == RECOUNT_CPU_IDLE) {
		for (l = 0; l < RECOUNT_NR_LEVELS; l++)
			cu->usage.level[l].time += d.time[l];
		cu->usage.energy += recount_energy(rc, d.time[RECOUNT_LEVEL_USER] +
						   d.time[RECOUNT_LEVEL_KERNEL], false);
	}
}
EXPORT_SYMBOL_IF_KUNIT(recount_cpu_read);

/**
 * recount_metrics_supported() - which metrics recount counts
 *
 * Return: RECOUNT_METRIC_* bits: time always; cycles and instructions with
 * counters, and the chosen events if some are; energy with an energy source.
 */
u32 recount_metrics_supported(void)
{
	u32 metrics = RECOUNT_METRIC_TIME;

	if (recount_pmu_supported())
		metrics |= RECOUNT_METRIC_CYCLES | RECOUNT_METRIC_INSTRUCTIONS;
	if (recount_energy_source() != RECOUNT_ENERGY_SOURCE_NONE)
		metrics |= RECOUNT_METRIC_ENERGY;
	rcu_read_lock();
	if (recount_pmu_supported() && rcu_dereference(recount_events)->nr)
		metrics |= RECOUNT_METRIC_EVENTS;
	rcu_read_unlock();
	return metrics;
}
EXPORT_SYMBOL_IF_KUNIT(recount_metrics_supported);

/**
 * recount_task_init() - initialize a new thread's state
 * @p: the new thread, not yet running
 *
 * Called by copy_process(): @p's track starts at zero.
 */
void recount_task_init(struct task_struct *p)
{
	memset(&p->recount, 0, sizeof(p->recount));
	seqcount_init(&p->recount.seq);
}

/**
 * recount_signal_init() - initialize a new process's state
 * @sig: the new process's signal_struct, zeroed
 *
 * Called by copy_signal(), in the parent. Nothing is allocated: a
 * process's state has a fixed size. A process forked while its parent runs
 * a non-dumpable image it executed runs that image until it executes
 * another, with nothing of its parent's events of others on it: it is
 * private as its parent is (recount_exec_private()).
 */
void recount_signal_init(struct signal_struct *sig)
{
	struct mm_struct *mm = current->mm;

	seqlock_init(&sig->recount.moved);
	raw_spin_lock_init(&sig->recount.exited_lock);
	seqcount_raw_spinlock_init(&sig->recount.exited_seq, &sig->recount.exited_lock);
	sig->recount.pmu_private = READ_ONCE(current->signal->recount.pmu_private) && mm &&
				   get_dumpable(mm) != SUID_DUMP_USER;
}

static DEFINE_MUTEX(recount_control_mutex);

/* sysctl kernel.recount_pmu: take the PMU's counters when switched on. */
static int recount_use_pmu = 1;

/* Start accounting the local CPU: its first accounting point charges nothing. */
static void recount_cpu_start(void *unused)
{
	recount_account_current(false);
}

/* The local CPU's last accounting point before recount is switched off. */
static void recount_cpu_stop(void *unused)
{
	struct recount_cpu *rc = this_cpu_ptr(&recount_cpus);

	if (rc->state == RECOUNT_CPU_OFF)
		return;
	recount_account_current(false);
	raw_write_seqcount_begin(&rc->seq);
	WRITE_ONCE(rc->state, RECOUNT_CPU_STOPPING);
	raw_write_seqcount_end(&rc->seq);
}

static void recount_set_enabled(bool on)
{
	struct recount_cpu *rc;
	int cpu;

	lockdep_assert_held(&recount_control_mutex);
	if (on == recount_enabled())
		return;

	cpus_read_lock();
	if (on) {
		/* Marks threads left from before are stale from now on. */
		WRITE_ONCE(recount_started_at, local_clock());
		recount_clock_select();
		/* Without counters, cycles and instructions are unsupported. */
		if (READ_ONCE(recount_use_pmu))
			recount_pmu_start();
		else
			recount_pmu_forget();
		/* Every CPU is RECOUNT_CPU_OFF: see recount_cpus, and below. */
		static_branch_enable_cpuslocked(&recount_enabled_key);
		WRITE_ONCE(recount_may_start, true);
		on_each_cpu(recount_cpu_start, NULL, 1);
		cpus_read_unlock();
		return;
	}

	/* Charge every CPU up to now; from then on, nothing. */
	WRITE_ONCE(recount_may_start, false);
	on_each_cpu(recount_cpu_stop, NULL, 1);
	static_branch_disable_cpuslocked(&recount_enabled_key);
	/*
	 * Accounting points run with interrupts disabled and test the key
	 * inside that section: once a grace period has elapsed, none is
	 * running any more and none will start, and the CPUs' states are ours.
	 */
	synchronize_rcu();
	for_each_possible_cpu(cpu) {
		rc = per_cpu_ptr(&recount_cpus, cpu);
		/* Readers spin while the section is open: keep it short. */
		local_irq_disable();
		raw_write_seqcount_begin(&rc->seq);
		WRITE_ONCE(rc->state, RECOUNT_CPU_OFF);
		WRITE_ONCE(rc->curr, NULL);
		raw_write_seqcount_end(&rc->seq);
		local_irq_enable();
	}
	recount_pmu_stop();
	cpus_read_unlock();
}

/**
 * recount_reconfigure() - change what recount folds intervals with
 * @apply: the change, or NULL
 *
 * If recount is on, it is switched off, @apply is called, and it is switched
 * on again: every interval is folded with what readers of its progress
 * computed it with (clock factor, power model), so that no value read goes
 * back. For a change of its clock (kernel/recount/clock.c) or of its power
 * model (kernel/recount/energy.c).
 *
 * Return: 0.
 */
int recount_reconfigure(void (*apply)(void))
{
	guard(mutex)(&recount_control_mutex);
	if (!recount_enabled()) {
		if (apply)
			apply();
		return 0;
	}
	recount_set_enabled(false);
	if (apply)
		apply();
	recount_set_enabled(true);
	return 0;
}

/**
 * recount_restart() - switch recount off and on again
 *
 * Return: 0.
 */
int recount_restart(void)
{
	return recount_reconfigure(NULL);
}
EXPORT_SYMBOL_IF_KUNIT(recount_restart);

/*
 * A CPU coming online got its counters (pmu.c): it starts from them. One
 * going offline folds what its counters counted before they go.
 */
static int recount_cpu_online(unsigned int cpu)
{
	recount_pmu_cpu_online(cpu);
	recount_update_current();
	return 0;
}

static int recount_cpu_offline(unsigned int cpu)
{
	recount_update_current();
	recount_pmu_cpu_offline(cpu);
	return 0;
}

/**
 * recount_suspend() - stop accounting the last CPU as the system sleeps
 * @data: unused
 *
 * Suspend to RAM and hibernation take every CPU but one offline, each of
 * which stops accounting in recount_idle_dead(), then suspend the last one,
 * with interrupts disabled (syscore_suspend()). The time the system sleeps
 * is nobody's: the last CPU stops accounting as an offline CPU does, and
 * starts again as it resumes. Its clock may run through the sleep (arm64's
 * counter does) or start again from anywhere (a TSC after S3): the
 * scheduler's clock hides both as well (sched_clock_suspend(),
 * tsc_restore_sched_clock_state()).
 *
 * Return: 0.
 */
int recount_suspend(void *data)
{
	if (recount_enabled())
		__recount_idle_dead();
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(recount_suspend);

/**
 * recount_resume() - start accounting the last CPU again as the system wakes
 * @data: unused
 *
 * Its first accounting point since recount_suspend() starts it afresh and
 * charges nothing. Interrupts disabled (syscore_resume()).
 */
void recount_resume(void *data)
{
	if (recount_enabled())
		recount_account_current(false);
}
EXPORT_SYMBOL_IF_KUNIT(recount_resume);

static const struct syscore_ops recount_syscore_ops = {
	.suspend = recount_suspend,
	.resume = recount_resume,
};

static struct syscore recount_syscore = {
	.ops = &recount_syscore_ops,
};

static bool recount_boot_on __initdata;

static int __init recount_setup(char *str)
{
	if (kstrtobool(str, &recount_boot_on))
		pr_warn("recount: ignoring recount=%s, expected on or off\n", str);
	return 1;
}
__setup("recount=", recount_setup);

#ifdef CONFIG_SYSCTL
/* Read or write a 0/1 switch through @val; writing needs CAP_SYS_ADMIN. */
static int recount_sysctl_switch(const struct ctl_table *table, int write, void *buffer,
				 size_t *lenp, loff_t *ppos, int *val)
{
	struct ctl_table t;

	if (write && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	t = *table;
	t.data = val;
	return proc_dointvec_minmax(&t, write, buffer, lenp, ppos);
}

static int recount_sysctl_enabled(const struct ctl_table *table, int write,
				  void *buffer, size_t *lenp, loff_t *ppos)
{
	int state = recount_enabled();
	int err = recount_sysctl_switch(table, write, buffer, lenp, ppos, &state);

	if (err < 0)
		return err;
	if (write) {
		guard(mutex)(&recount_control_mutex);
		recount_set_enabled(state);
	}
	return err;
}

static int recount_sysctl_pmu(const struct ctl_table *table, int write,
			      void *buffer, size_t *lenp, loff_t *ppos)
{
	int use = READ_ONCE(recount_use_pmu);
	int err = recount_sysctl_switch(table, write, buffer, lenp, ppos, &use);

	if (err < 0 || !write)
		return err;
	guard(mutex)(&recount_control_mutex);
	if (use == recount_use_pmu)
		return err;
	/* The counters are taken when recount is switched on: restart it. */
	if (recount_enabled()) {
		recount_set_enabled(false);
		WRITE_ONCE(recount_use_pmu, use);
		recount_set_enabled(true);
	} else {
		WRITE_ONCE(recount_use_pmu, use);
	}
	return err;
}

static struct ctl_table recount_sysctls[] = {
	{
		.procname	= "recount",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= recount_sysctl_enabled,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "recount_pmu",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= recount_sysctl_pmu,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
};

static void __init recount_sysctl_init(void)
{
	register_sysctl_init("kernel", recount_sysctls);
}
#else
static inline void recount_sysctl_init(void) { }
#endif

/*
 * Late, so that the CPUs' capacities, the Energy Model and the PMU drivers are
 * there: with recount=on, accounting starts here, before user space.
 */
static int __init recount_init(void)
{
	int cpu, ret;

	BUILD_BUG_ON(ARRAY_SIZE(init_task.recount.kind) != RECOUNT_KIND_MAX + 1);

	/* init_task and its signal_struct are static: copy_process() never saw them. */
	seqcount_init(&init_task.recount.seq);
	for_each_possible_cpu(cpu)
		seqcount_init(&per_cpu(recount_cpus, cpu).seq);
	recount_signal_init(init_task.signal);

	recount_kind_init();
	recount_energy_init();
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "recount:online",
					recount_cpu_online, recount_cpu_offline);
	if (ret < 0)
		pr_warn("recount: no CPU hotplug callbacks (%d): CPUs that come online will not count cycles\n",
			ret);
	register_syscore(&recount_syscore);
	recount_sysctl_init();
	if (recount_boot_on) {
		guard(mutex)(&recount_control_mutex);
		recount_set_enabled(true);
	}
	return 0;
}
late_initcall_sync(recount_init);
