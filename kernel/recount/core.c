// SPDX-License-Identifier: GPL-2.0
/*
 * recount: precise CPU resource accounting of threads, processes and CPUs
 *
 * What is measured
 *
 *   For every thread, every process (all of its threads, live and exited)
 *   and every CPU: the time spent on CPU in user mode and in kernel mode,
 *   and, where the hardware counts them, the cycles and instructions of each
 *   mode (pmu.c); the energy used, measured or estimated (energy.c). For
 *   every CPU, also the time and energy it spent idle. Nothing is sampled:
 *   every nanosecond a CPU runs is charged to exactly one thread and level,
 *   or to the CPU's idle time. Threads keep their usage per kind of CPU
 *   (performance, efficiency: kind.c), processes per CPU.
 *
 *   And why a thread was not running: how long it waited for a CPU while
 *   runnable (queue time), in page faults, and for contended sleeping locks.
 *   These waits are timed where they start and end (enqueue and switch-in,
 *   the page fault handler, the locks' contention points) and added to the
 *   thread's and its process's runtime.
 *
 * When
 *
 *   Each CPU keeps a snapshot of its counters, taken at its last accounting
 *   point, and the state it has been in since (user, kernel or idle). The
 *   accounting points are the moments that state changes:
 *
 *     entry from user mode           recount_user_exit()     user -> kernel
 *     return to user mode            recount_user_enter()    kernel -> user
 *     context switch                 recount_sched_switch()  kernel -> kernel
 *     scheduler tick                 recount_sched_tick()    kernel -> kernel
 *     idle loop waits / wakes up     recount_idle_enter/exit() kernel <-> idle
 *     CPU goes offline               recount_idle_dead()     kernel -> nothing
 *
 *   At each one the CPU takes a new snapshot (its clock and its counters),
 *   computes the delta from the previous one, and adds it, according to the
 *   state it was in, to the tracks of the running thread (on the CPU's kind),
 *   of that thread's process and of the CPU (or to the CPU's idle time).
 *   The PMU counts user and kernel mode apart (pmu.c), so the counters are
 *   read only where the running thread changes, at the tick and when a
 *   thread reads itself: user/kernel transitions take the time alone.
 *   Kernel threads never enter user mode, so their user time is exactly
 *   zero. A delta whose counters could not be read at both ends adds none of
 *   them and marks them inexact in the tracks it goes to.
 *
 * By whom, and with what cost
 *
 *   Only the CPU itself writes its state, the track of the thread it runs,
 *   and its own slot of that thread's process (a process keeps one track per
 *   CPU, as XNU's tasks do). Each track thus has one writer, which runs with
 *   interrupts disabled: an accounting point is a clock read
 *   (none at a context switch, which uses the runqueue clock __schedule() has
 *   just updated), a read of each counter, the subtractions, and the
 *   additions, fenced by two write barriers shared by the three tracks (see
 *   internal.h). No locks, no atomic read-modify-write, no allocation.
 *   Counters and energy are static branches of their own: without a PMU or
 *   a power model, an accounting point costs what time alone costs.
 *
 *   Every hook sits behind the static key recount_enabled_key, so a kernel
 *   with recount off runs NOPs. Switching recount off waits for accounting
 *   points in flight and marks every CPU for resynchronisation; the first
 *   accounting point after switching it on takes a fresh snapshot and charges
 *   nothing. So every thread that exists is accounted from then on, whenever
 *   it was created, and nothing is charged for the time recount was off.
 *
 *   The process tracks are allocated with the process (signal_struct), one
 *   per possible CPU, whether recount is on or not. When a thread dies, its
 *   final usage is also folded into its process's exited usage, under a
 *   raw spinlock with a sequence count for readers (the only lock recount
 *   takes, on the slow exit path).
 *
 * Readers
 *
 *   Readers of other threads and CPUs use the tracks' sequence counts and
 *   never block a writer. A read of the calling thread first charges the
 *   interval in progress (recount_update_current()). A read of an idle CPU
 *   adds the idle interval in progress, at the time of that CPU's clock
 *   (sched_clock_cpu()), so its idle time is current; no value read ever
 *   goes back (see recount_cpu_read()).
 */

#include <linux/capability.h>
#include <linux/cleanup.h>
#include <linux/cpuhotplug.h>
#include <linux/init.h>
#include <linux/kstrtox.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seqlock.h>
#include <linux/string.h>
#include <linux/sysctl.h>

#include "internal.h"

DEFINE_STATIC_KEY_FALSE(recount_enabled_key);

DEFINE_PER_CPU(struct recount_cpu, recount_cpus);

/* The per-CPU tracks of init_task's process (the boot CPU's idle thread). */
static DEFINE_PER_CPU(struct recount_track, recount_init_tracks);

/*
 * Take a snapshot of the local CPU at time @now; with its PMU counters if
 * @counters, at the accounting points where the running thread changes.
 */
static __always_inline void recount_snapshot(struct recount_snap *snap, u64 now,
					     bool counters)
{
	snap->time = now;
	snap->tried = 0;
	snap->valid = 0;
	if (counters && static_branch_unlikely(&recount_pmu_key))
		recount_pmu_read(snap);
}

/* The energy the CPU used over an interval of @time ns, busy or @idle. */
static __always_inline u64 recount_energy(const struct recount_cpu *rc, u64 time,
					  bool idle)
{
	if (static_branch_unlikely(&recount_energy_estimated_key))
		return recount_energy_estimate(rc->kind, idle, time);
	return 0;
}

/*
 * Charge the CPU's interval since its last snapshot to @t, its time at
 * @level, then make @snap the last snapshot and @next the CPU's state.
 */
static __always_inline void recount_charge_thread(struct recount_cpu *rc,
						  struct task_struct *t,
						  enum recount_level level,
						  const struct recount_snap *snap,
						  enum recount_cpu_state next)
{
	struct recount_thread *rt = &t->recount;
	struct recount_usage *tu = &rt->kind[rc->kind];
	struct recount_track *pt = raw_cpu_ptr(t->signal->recount.tracks);
	struct recount_delta delta;
	u64 energy;

	recount_snap_delta(&rc->snap, snap, &delta);
	energy = recount_energy(rc, delta.time, false);

	recount_seq_write_begin(&rt->seq);
	recount_seq_write_begin(&pt->seq);
	recount_seq_write_begin(&rc->seq);
	recount_seq_write_fence();

	recount_usage_add(tu, level, &delta, energy);
	recount_usage_add(&pt->usage, level, &delta, energy);
	recount_usage_add(&rc->usage, level, &delta, energy);
	recount_snap_advance(&rc->snap, snap);
	WRITE_ONCE(rc->state, next);

	recount_seq_write_fence();
	recount_seq_write_end(&rc->seq);
	recount_seq_write_end(&pt->seq);
	recount_seq_write_end(&rt->seq);
}

/*
 * Charge the CPU's interval since its last snapshot to its idle time if it
 * was idle, or to nobody if it has to resynchronise; then make @snap the last
 * snapshot and @next the CPU's state.
 */
static void recount_charge_cpu(struct recount_cpu *rc, struct recount_snap *snap,
			       enum recount_cpu_state next)
{
	unsigned int state = rc->state;
	struct recount_delta delta;

	recount_seq_write_begin(&rc->seq);
	recount_seq_write_fence();
	/*
	 * The end of an idle interval reads the clock here, inside the write
	 * section (recount_idle_exit() passes no time): a reader that added
	 * the interval in progress read it before, or retries, so the idle
	 * time charged is never less than one it read (recount_cpu_read()).
	 */
	if (!snap->time)
		snap->time = local_clock();
	recount_snap_delta(&rc->snap, snap, &delta);

	/* What the PMU counts in the idle loop is no thread's: it is dropped. */
	if (state == RECOUNT_CPU_IDLE) {
		WRITE_ONCE(rc->idle_time, rc->idle_time + delta.time);
		WRITE_ONCE(rc->idle_energy,
			   rc->idle_energy + recount_energy(rc, delta.time, true));
	} else {
		/* Resynchronising: the new snapshot is the base, whatever its time. */
		WRITE_ONCE(rc->snap.time, snap->time);
	}
	recount_snap_advance(&rc->snap, snap);
	WRITE_ONCE(rc->state, next);

	recount_seq_write_fence();
	recount_seq_write_end(&rc->seq);
}

/*
 * The accounting point: the local CPU has been running @t (or idling) since
 * its last snapshot, takes a snapshot at @now (with its counters if
 * @counters), and from now on is in state @next. Called with interrupts
 * disabled, by the only writer of this CPU's tracks.
 */
static __always_inline void recount_account(struct task_struct *t, u64 now,
					    enum recount_cpu_state next, bool counters)
{
	struct recount_cpu *rc = this_cpu_ptr(&recount_cpus);
	struct recount_snap snap;

	/* The tick is an accounting point too: no two may nest on a CPU. */
	lockdep_assert_irqs_disabled();
	recount_snapshot(&snap, now, counters || rc->state == RECOUNT_CPU_RESYNC);
	switch (rc->state) {
	case RECOUNT_CPU_USER:
		recount_charge_thread(rc, t, RECOUNT_LEVEL_USER, &snap, next);
		break;
	case RECOUNT_CPU_KERNEL:
		recount_charge_thread(rc, t, RECOUNT_LEVEL_KERNEL, &snap, next);
		break;
	default:
		recount_charge_cpu(rc, &snap, next);
		break;
	}
}

/**
 * __recount_user_enter() - account a return to user mode
 *
 * See recount_user_enter().
 */
void __recount_user_enter(void)
{
	recount_account(current, local_clock(), RECOUNT_CPU_USER, false);
}

/**
 * __recount_user_exit() - account an entry from user mode
 *
 * See recount_user_exit().
 */
void __recount_user_exit(void)
{
	recount_account(current, local_clock(), RECOUNT_CPU_KERNEL, false);
}

/**
 * __recount_sched_switch() - account a context switch
 * @prev: the thread leaving the CPU
 * @now: the runqueue clock __schedule() has just updated, in nanoseconds
 *
 * Charges the CPU's interval since its last snapshot to @prev. Called through
 * recount_sched_switch() in kernel/sched/stats.h, with the runqueue locked and
 * interrupts disabled.
 */
void __recount_sched_switch(struct task_struct *prev, u64 now)
{
	recount_account(prev, now, RECOUNT_CPU_KERNEL, true);
}

/**
 * __recount_sched_tick() - account the scheduler tick
 * @now: the runqueue clock sched_tick() has just updated, in nanoseconds
 *
 * Charges the running thread with what it did since the CPU's last snapshot,
 * counters included: the thread's counts are never more than a tick old.
 * The tick interrupts kernel mode (or user mode, whose entry was accounted):
 * in the idle loop's wait, or before the CPU's state is known, it does
 * nothing. Called through recount_sched_tick() in kernel/sched/stats.h, in
 * hard interrupt context with the runqueue locked.
 */
void __recount_sched_tick(u64 now)
{
	if (this_cpu_ptr(&recount_cpus)->state == RECOUNT_CPU_KERNEL)
		recount_account(current, now, RECOUNT_CPU_KERNEL, true);
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
 * Add @time to @t's wait @wait, and to its process's. Called by the CPU that
 * runs @t, or that is switching it in.
 */
static void recount_wait_add(struct task_struct *t, enum recount_wait wait, u64 time)
{
	struct recount_thread *rt = &t->recount;
	struct recount_track *pt;
	unsigned long flags;

	local_irq_save(flags);
	pt = raw_cpu_ptr(t->signal->recount.tracks);
	recount_seq_write_begin(&rt->seq);
	recount_seq_write_begin(&pt->seq);
	recount_seq_write_fence();
	WRITE_ONCE(rt->runtime.wait[wait], rt->runtime.wait[wait] + time);
	WRITE_ONCE(pt->runtime.wait[wait], pt->runtime.wait[wait] + time);
	recount_seq_write_fence();
	recount_seq_write_end(&pt->seq);
	recount_seq_write_end(&rt->seq);
	local_irq_restore(flags);
}

/* The time from @mark to @now, if @mark is valid; else 0. */
static __always_inline u64 recount_since(u64 mark, u64 now)
{
	return recount_mark_valid(mark) && now > mark ? now - mark : 0;
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
 * __recount_sched_switch_in() - a thread stops waiting for a CPU
 * @next: the thread the CPU switches to
 * @now: the runqueue clock of the switch, in nanoseconds
 *
 * @next's queue time grows by its wait. Called through kernel/sched/stats.h
 * with the runqueue locked and interrupts disabled.
 */
void __recount_sched_switch_in(struct task_struct *next, u64 now)
{
	u64 wait = recount_since(next->recount.queued_at, now);

	next->recount.queued_at = 0;
	if (wait)
		recount_wait_add(next, RECOUNT_WAIT_QUEUE, wait);
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
	 * A fault taken while handling another (in an interrupt, say) nests;
	 * a depth left over from a time recount was off restarts.
	 */
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

	if (!rt->fault_depth || --rt->fault_depth)
		return;
	time = recount_since(rt->fault_at, local_clock());
	if (time)
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

	if (!recount_mark_valid(rt->lock_at))
		rt->lock_at = local_clock();
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
	rt->lock_at = 0;
	if (time)
		recount_wait_add(current, RECOUNT_WAIT_LOCK, time);
}

/**
 * __recount_idle_enter() - account a CPU going idle
 *
 * See recount_idle_enter().
 */
void __recount_idle_enter(void)
{
	recount_account(current, local_clock(), RECOUNT_CPU_IDLE, true);
}

/**
 * __recount_idle_exit() - account a CPU leaving idle
 *
 * See recount_idle_exit().
 */
void __recount_idle_exit(void)
{
	unsigned long flags;
	unsigned int state;

	/* The idle loop has interrupts on here; the tick must not nest. */
	local_irq_save(flags);
	state = this_cpu_read(recount_cpus.state);
	/*
	 * Idle, or resynchronising if recount was switched on meanwhile: the
	 * clock is read inside the CPU's write section (recount_charge_cpu()).
	 */
	recount_account(current, state == RECOUNT_CPU_IDLE || state == RECOUNT_CPU_RESYNC ?
			0 : local_clock(), RECOUNT_CPU_KERNEL, true);
	local_irq_restore(flags);
}

/**
 * __recount_idle_dead() - account a CPU going offline
 *
 * See recount_idle_dead().
 */
void __recount_idle_dead(void)
{
	recount_account(current, local_clock(), RECOUNT_CPU_RESYNC, true);
}

/**
 * recount_update_current() - charge the calling thread's interval in progress
 *
 * Called before reading the calling thread, its process or its CPU, so the
 * values read include everything up to now.
 */
void recount_update_current(void)
{
	unsigned long flags;

	local_irq_save(flags);
	/* Checked with interrupts off: see recount_set_enabled(). */
	if (recount_enabled())
		recount_account(current, local_clock(), RECOUNT_CPU_KERNEL, true);
	local_irq_restore(flags);
}

/**
 * recount_thread_read() - read what a thread consumed and waited for
 * @t: the thread
 * @usage: receives its usage on each kind of CPU
 * @runtime: receives what it waited for
 */
void recount_thread_read(struct task_struct *t,
			 struct recount_usage usage[RECOUNT_NR_KINDS],
			 struct recount_runtime *runtime)
{
	const struct recount_thread *rt = &t->recount;
	unsigned int seq;
	int k;

	do {
		seq = recount_seq_read_begin(&rt->seq);
		for (k = 0; k < RECOUNT_NR_KINDS; k++)
			recount_usage_copy(&usage[k], &rt->kind[k]);
		recount_runtime_copy(runtime, &rt->runtime);
	} while (recount_seq_read_retry(&rt->seq, seq));
}

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
 * The exited part is read first: everything it holds was charged to the
 * totals before, so a total is never less than its exited part.
 */
void recount_process_read(struct signal_struct *sig,
			  struct recount_usage total[RECOUNT_NR_KINDS],
			  struct recount_runtime *runtime,
			  struct recount_usage *exited,
			  struct recount_runtime *exited_runtime)
{
	struct recount_process *p = &sig->recount;
	struct recount_runtime cpu_runtime;
	struct recount_usage usage;
	unsigned int seq;
	int cpu;

	do {
		seq = read_seqcount_begin(&p->exited_seq);
		*exited = p->exited;
		*exited_runtime = p->exited_runtime;
	} while (read_seqcount_retry(&p->exited_seq, seq));

	memset(total, 0, sizeof(*total) * RECOUNT_NR_KINDS);
	memset(runtime, 0, sizeof(*runtime));
	for_each_possible_cpu(cpu) {
		recount_track_read(per_cpu_ptr(p->tracks, cpu), &usage, &cpu_runtime);
		recount_usage_sum(&total[per_cpu(recount_cpus, cpu).kind], &usage);
		recount_runtime_sum(runtime, &cpu_runtime);
	}
}

/**
 * recount_cpu_read() - read what a CPU did
 * @cpu: the CPU
 * @cu: receives its kind, usage, idle time and idle energy
 *
 * An idle CPU's idle time and energy include the interval in progress, by the
 * CPU's own clock; the rest is as of the CPU's last accounting point (at most
 * a tick old for a CPU that runs). Only idle is brought forward: the
 * accounting point that ends an idle interval takes its time after this read
 * did, so what it charges is never less than what was read, while one that
 * ends a thread's interval may use a runqueue clock from before the read.
 */
void recount_cpu_read(unsigned int cpu, struct recount_cpu_usage *cu)
{
	struct recount_cpu *rc = per_cpu_ptr(&recount_cpus, cpu);
	unsigned int seq, state;
	u64 snap, now, time;

	do {
		seq = recount_seq_read_begin(&rc->seq);
		recount_usage_copy(&cu->usage, &rc->usage);
		cu->idle_time = READ_ONCE(rc->idle_time);
		cu->idle_energy = READ_ONCE(rc->idle_energy);
		state = READ_ONCE(rc->state);
		snap = READ_ONCE(rc->snap.time);
		/* Before the retry check: an idle exit after it reads a later time. */
		now = state == RECOUNT_CPU_IDLE ? sched_clock_cpu(cpu) : 0;
	} while (recount_seq_read_retry(&rc->seq, seq));
	cu->kind = rc->kind;

	if (now <= snap)
		return;
	time = now - snap;
	cu->idle_time += time;
	cu->idle_energy += recount_energy(rc, time, true);
}

/**
 * recount_metrics_supported() - which metrics recount counts
 *
 * Return: RECOUNT_METRIC_* bits: time always; cycles and instructions with
 * counters; energy with an energy source.
 */
u32 recount_metrics_supported(void)
{
	u32 metrics = RECOUNT_METRIC_TIME;

	if (recount_pmu_supported())
		metrics |= RECOUNT_METRIC_CYCLES | RECOUNT_METRIC_INSTRUCTIONS;
	if (recount_energy_source() != RECOUNT_ENERGY_SOURCE_NONE)
		metrics |= RECOUNT_METRIC_ENERGY;
	return metrics;
}

static void recount_process_init_exited(struct recount_process *p)
{
	raw_spin_lock_init(&p->exited_lock);
	seqcount_raw_spinlock_init(&p->exited_seq, &p->exited_lock);
}

/**
 * recount_task_init() - initialize a new thread's state
 * @p: the new thread, not yet running
 *
 * Called by copy_process(): @p's track starts at zero.
 */
void recount_task_init(struct task_struct *p)
{
	memset(&p->recount, 0, sizeof(p->recount));
}

/**
 * recount_signal_init() - initialize a new process's state
 * @sig: the new process's signal_struct, zeroed
 *
 * Called by copy_signal(). Allocates one track per possible CPU, whether
 * recount is on or not, so that a process created while it is off is
 * accounted from the moment it is switched on.
 *
 * Return: 0, or -ENOMEM.
 */
int recount_signal_init(struct signal_struct *sig)
{
	sig->recount.tracks = alloc_percpu_gfp(struct recount_track, GFP_KERNEL_ACCOUNT);
	if (!sig->recount.tracks)
		return -ENOMEM;
	recount_process_init_exited(&sig->recount);
	return 0;
}

/**
 * recount_signal_free() - release a process's state
 * @sig: the signal_struct being freed
 *
 * Called by free_signal_struct(), possibly from atomic context.
 */
void recount_signal_free(struct signal_struct *sig)
{
	free_percpu(sig->recount.tracks);
}

/**
 * recount_thread_dead() - fold a dead thread into its process's exited usage
 * @t: the thread, switched out for the last time
 *
 * Called by finish_task_switch() for a TASK_DEAD thread, after its final
 * accounting point. Runs whether recount is on or not, so that a process's
 * exited usage is always the sum of its exited threads.
 */
void recount_thread_dead(struct task_struct *t)
{
	struct recount_process *p = &t->signal->recount;
	struct recount_usage usage[RECOUNT_NR_KINDS];
	struct recount_runtime runtime;
	int k;

	recount_thread_read(t, usage, &runtime);
	raw_spin_lock(&p->exited_lock);
	write_seqcount_begin(&p->exited_seq);
	for (k = 0; k < RECOUNT_NR_KINDS; k++)
		recount_usage_sum(&p->exited, &usage[k]);
	recount_runtime_sum(&p->exited_runtime, &runtime);
	write_seqcount_end(&p->exited_seq);
	raw_spin_unlock(&p->exited_lock);
}

static DEFINE_MUTEX(recount_control_mutex);

/*
 * Mark @cpu's state unknown; only while no accounting point can run. An idle
 * CPU's interval in progress is charged first: readers have been adding it
 * (recount_cpu_read()), and what they read must not go back.
 */
static void recount_cpu_stop(int cpu)
{
	struct recount_cpu *rc = per_cpu_ptr(&recount_cpus, cpu);
	u64 now, time;

	recount_seq_write_begin(&rc->seq);
	recount_seq_write_fence();
	now = sched_clock_cpu(cpu);
	if (rc->state == RECOUNT_CPU_IDLE && now > rc->snap.time) {
		time = now - rc->snap.time;
		WRITE_ONCE(rc->idle_time, rc->idle_time + time);
		WRITE_ONCE(rc->idle_energy, rc->idle_energy + recount_energy(rc, time, true));
	}
	WRITE_ONCE(rc->state, RECOUNT_CPU_RESYNC);
	recount_seq_write_fence();
	recount_seq_write_end(&rc->seq);
}

static void recount_set_enabled(bool on)
{
	int cpu;

	guard(mutex)(&recount_control_mutex);

	if (on == recount_enabled())
		return;
	if (on) {
		/* Marks threads left from before are stale from now on. */
		WRITE_ONCE(recount_started_at, local_clock());
		/* Without counters, cycles and instructions are unsupported. */
		recount_pmu_start();
		/* Every CPU is in RECOUNT_CPU_RESYNC: see below and recount_cpus. */
		static_branch_enable(&recount_enabled_key);
		return;
	}

	static_branch_disable(&recount_enabled_key);
	/*
	 * Accounting points run with interrupts disabled and test
	 * the key inside that section: once a grace period has elapsed, none is
	 * running any more and none will start, and the CPUs' states are ours.
	 */
	synchronize_rcu();
	for_each_possible_cpu(cpu)
		recount_cpu_stop(cpu);
	recount_pmu_stop();
}

static bool recount_boot_on __initdata;

static int __init recount_setup(char *str)
{
	if (kstrtobool(str, &recount_boot_on))
		pr_warn("recount: ignoring recount=%s, expected on or off\n", str);
	return 1;
}
__setup("recount=", recount_setup);

#ifdef CONFIG_SYSCTL
static int recount_sysctl_enabled(const struct ctl_table *table, int write,
				  void *buffer, size_t *lenp, loff_t *ppos)
{
	int state = recount_enabled();
	struct ctl_table t;
	int err;

	if (write && !capable(CAP_SYS_ADMIN))
		return -EPERM;

	t = *table;
	t.data = &state;
	err = proc_dointvec_minmax(&t, write, buffer, lenp, ppos);
	if (err < 0)
		return err;
	if (write)
		recount_set_enabled(state);
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
	struct signal_struct *sig = init_task.signal;
	int ret;

	BUILD_BUG_ON(ARRAY_SIZE(init_task.recount.kind) != RECOUNT_KIND_MAX + 1);

	/* init_task's signal_struct is static: copy_signal() never saw it. */
	sig->recount.tracks = &recount_init_tracks;
	recount_process_init_exited(&sig->recount);

	recount_kind_init();
	recount_energy_init();
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "recount:online",
					recount_pmu_cpu_online, recount_pmu_cpu_offline);
	if (ret < 0)
		pr_warn("recount: no CPU hotplug callbacks (%d): CPUs that come online will not count cycles\n",
			ret);
	recount_sysctl_init();
	if (recount_boot_on)
		recount_set_enabled(true);
	return 0;
}
late_initcall_sync(recount_init);
