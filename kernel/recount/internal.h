/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recount's vocabulary, shared by the accounting core, the netlink family and
 * the KUnit tests.
 *
 *   snapshot  a CPU's counters at an accounting point      struct recount_snap
 *   delta     what a CPU did between two snapshots         struct recount_metrics
 *   usage     deltas accumulated per level                 struct recount_usage
 *   track     a usage with a sequence count: one writer,
 *             lockless readers                             struct recount_track
 *
 * Where the hooks live:
 *   include/linux/entry-common.h        recount_user_exit(), recount_user_enter()
 *   arch/arm64/kernel/entry-common.c    recount_user_exit(), recount_user_enter()
 *   kernel/sched/core.c                 recount_sched_switch(), recount_thread_dead()
 *   kernel/sched/idle.c                 recount_idle_enter(), recount_idle_exit(),
 *                                       recount_idle_dead()
 *   kernel/fork.c                       recount_task_init(), recount_signal_init(),
 *                                       recount_signal_free()
 *
 * Files: core.c (accounting and reads), netlink.c (the RECOUNT family; the
 * policy and ops in netlink_gen.c are generated from its YNL spec),
 * recount_kunit.c (tests of what is here).
 */
#ifndef _KERNEL_RECOUNT_INTERNAL_H
#define _KERNEL_RECOUNT_INTERNAL_H

#include <linux/compiler.h>
#include <linux/recount.h>
#include <linux/types.h>
#include <linux/processor.h>
#include <asm/barrier.h>

/**
 * struct recount_snap - a CPU's counters at an accounting point
 * @time: the CPU's scheduler clock (sched_clock_cpu()), in nanoseconds
 */
struct recount_snap {
	u64 time;
};

/**
 * enum recount_cpu_state - what a CPU has been doing since its last snapshot
 * @RECOUNT_CPU_RESYNC: unknown, because recount was off or the CPU offline;
 *	the next accounting point takes a snapshot and charges nothing
 * @RECOUNT_CPU_USER: running current in user mode
 * @RECOUNT_CPU_KERNEL: running current in kernel mode
 * @RECOUNT_CPU_IDLE: waiting in the idle loop
 */
enum recount_cpu_state {
	RECOUNT_CPU_RESYNC,
	RECOUNT_CPU_USER,
	RECOUNT_CPU_KERNEL,
	RECOUNT_CPU_IDLE,
};

/**
 * struct recount_cpu - recount's state of a CPU
 * @seq: sequence count covering all other fields
 * @state: what the CPU has been doing since @snap, an enum recount_cpu_state
 * @snap: the CPU's last snapshot
 * @usage: what ran on the CPU, per level
 * @idle_time: time the CPU spent idle, in nanoseconds
 *
 * Written only by its own CPU, read by anyone.
 */
struct recount_cpu {
	unsigned int seq;
	unsigned int state;
	struct recount_snap snap;
	struct recount_usage usage;
	u64 idle_time;
};

/**
 * struct recount_cpu_usage - what a CPU did, as read
 * @usage: what ran on the CPU, per level
 * @idle_time: time the CPU spent idle, in nanoseconds
 */
struct recount_cpu_usage {
	struct recount_usage usage;
	u64 idle_time;
};

/*
 * Sequence counts
 *
 * An accounting point updates up to three tracks (thread, process, CPU). As in
 * XNU's Recount, the writer makes every one of their sequence counts odd,
 * issues one write barrier, adds the delta to all of them, issues a second
 * write barrier and makes the counts even again: two barriers per accounting
 * point, not two per track. A reader retries while the count is odd or has
 * changed under it; it never blocks the writer, and a writer never waits.
 *
 * Each track has a single writer (see struct recount_track), which runs with
 * interrupts or preemption disabled, so the writer needs no atomic
 * read-modify-write. Values are stored with WRITE_ONCE() and loaded with
 * READ_ONCE(): a reader that wants a single 64-bit value can skip the
 * sequence count; one that combines several (CPI, say) must not.
 */

/**
 * recount_seq_write_begin() - open a track's sequence count for writing
 * @seq: the sequence count
 *
 * Once every track of the update is open, the writer issues
 * recount_seq_write_fence().
 */
static __always_inline void recount_seq_write_begin(unsigned int *seq)
{
	WRITE_ONCE(*seq, *seq + 1);
}

/**
 * recount_seq_write_fence() - order an update against its sequence counts
 *
 * Issued once after opening every track of an update, and once before
 * closing them.
 */
static __always_inline void recount_seq_write_fence(void)
{
	/* Pairs with smp_rmb() in recount_seq_read_begin() and _retry(). */
	smp_wmb();
}

/**
 * recount_seq_write_end() - close a track's sequence count
 * @seq: the sequence count
 *
 * The writer issues recount_seq_write_fence() once before closing the
 * tracks of the update.
 */
static __always_inline void recount_seq_write_end(unsigned int *seq)
{
	WRITE_ONCE(*seq, *seq + 1);
}

/**
 * recount_seq_read_begin() - start reading a track
 * @seq: the track's sequence count
 *
 * Return: the count to pass to recount_seq_read_retry().
 */
static __always_inline unsigned int recount_seq_read_begin(const unsigned int *seq)
{
	unsigned int s;

	while ((s = READ_ONCE(*seq)) & 1)
		cpu_relax();
	/* Pairs with the first recount_seq_write_fence() of the writer. */
	smp_rmb();
	return s;
}

/**
 * recount_seq_read_retry() - did the track change while it was read?
 * @seq: the track's sequence count
 * @start: what recount_seq_read_begin() returned
 *
 * Return: true if the values read must be read again.
 */
static __always_inline bool recount_seq_read_retry(const unsigned int *seq,
						   unsigned int start)
{
	/* Pairs with the second recount_seq_write_fence() of the writer. */
	smp_rmb();
	return unlikely(READ_ONCE(*seq) != start);
}

/**
 * recount_snap_delta() - what a CPU did between two snapshots
 * @prev: the earlier snapshot
 * @now: the later snapshot
 * @delta: set to @now - @prev
 *
 * The runqueue clock __schedule() passes can lag a clock the CPU read at an
 * accounting point just before, because the scheduler may skip a clock update.
 * Such a snapshot adds nothing (see recount_snap_advance()), so no interval is
 * counted twice and none is lost.
 */
static __always_inline void recount_snap_delta(const struct recount_snap *prev,
					       const struct recount_snap *now,
					       struct recount_metrics *delta)
{
	delta->time = now->time > prev->time ? now->time - prev->time : 0;
}

/**
 * recount_snap_advance() - make @now the CPU's last snapshot
 * @prev: the CPU's last snapshot, updated
 * @now: the snapshot just taken
 *
 * A snapshot older than @prev leaves it as it is.
 */
static __always_inline void recount_snap_advance(struct recount_snap *prev,
						 const struct recount_snap *now)
{
	if (now->time > prev->time)
		WRITE_ONCE(prev->time, now->time);
}

/**
 * recount_usage_add() - add a delta to a usage, inside a write section
 * @usage: the usage of a track being written
 * @level: the level the delta was counted at
 * @delta: the delta
 */
static __always_inline void recount_usage_add(struct recount_usage *usage,
					      enum recount_level level,
					      const struct recount_metrics *delta)
{
	struct recount_metrics *m = &usage->level[level];

	WRITE_ONCE(m->time, m->time + delta->time);
}

/**
 * recount_usage_copy() - copy a usage, inside a read section
 * @dst: where to copy to
 * @src: the usage of a track being read
 */
static __always_inline void recount_usage_copy(struct recount_usage *dst,
					       const struct recount_usage *src)
{
	int l;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++)
		dst->level[l].time = READ_ONCE(src->level[l].time);
}

/**
 * recount_usage_sum() - add one usage to another
 * @dst: the sum
 * @src: what to add
 */
static inline void recount_usage_sum(struct recount_usage *dst,
				     const struct recount_usage *src)
{
	int l;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++)
		dst->level[l].time += src->level[l].time;
}

/**
 * recount_track_read() - read a track whole
 * @track: the track
 * @usage: receives its usage
 */
static inline void recount_track_read(const struct recount_track *track,
				      struct recount_usage *usage)
{
	unsigned int seq;

	do {
		seq = recount_seq_read_begin(&track->seq);
		recount_usage_copy(usage, &track->usage);
	} while (recount_seq_read_retry(&track->seq, seq));
}

void recount_update_current(void);
void recount_thread_read(struct task_struct *t, struct recount_usage *usage);
void recount_process_read(struct signal_struct *sig, struct recount_usage *total,
			  struct recount_usage *exited);
void recount_cpu_read(unsigned int cpu, struct recount_cpu_usage *usage);

#endif /* _KERNEL_RECOUNT_INTERNAL_H */
