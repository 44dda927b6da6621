/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recount: the accounting state embedded in task_struct and signal_struct.
 * Kept apart from <linux/recount.h> so that <linux/sched.h> pulls in types only.
 */
#ifndef _LINUX_RECOUNT_TYPES_H
#define _LINUX_RECOUNT_TYPES_H

#include <linux/seqlock_types.h>
#include <linux/types.h>

#ifdef CONFIG_RECOUNT

/**
 * enum recount_level - the privilege level a metric is counted at
 * @RECOUNT_LEVEL_USER: user mode
 * @RECOUNT_LEVEL_KERNEL: kernel mode
 * @RECOUNT_NR_LEVELS: number of levels
 */
enum recount_level {
	RECOUNT_LEVEL_USER,
	RECOUNT_LEVEL_KERNEL,
	RECOUNT_NR_LEVELS,
};

/* The kinds of CPUs, enum recount_kind of <uapi/linux/recount.h>. */
#define RECOUNT_NR_KINDS	2

/*
 * The PMU events a user may choose beyond cycles and instructions
 * (kernel/recount/pmu.c): each takes a counter per level it counts on every
 * CPU, and 16 bytes of every usage.
 */
#define RECOUNT_NR_EVENTS	2

/**
 * struct recount_metrics - what is counted at one level
 * @time: time on CPU, in nanoseconds
 * @cycles: CPU cycles
 * @instructions: instructions retired
 * @event: the chosen events, of the usage's @event_gen
 */
struct recount_metrics {
	u64 time;
	u64 cycles;
	u64 instructions;
	u64 event[RECOUNT_NR_EVENTS];
};

/**
 * struct recount_usage - what a thread, a process or a CPU consumed
 * @level: metrics per privilege level
 * @energy: energy, in nanojoules, whatever the level
 * @inexact: RECOUNT_INEXACT_* bits of the metrics that missed part of what
 *	they should have counted (counters not running); sticky
 * @event_gen: the generation of the chosen events its event counts belong
 *	to; a usage of an older one counted none of today's
 */
struct recount_usage {
	struct recount_metrics level[RECOUNT_NR_LEVELS];
	u64 energy;
	u32 inexact;
	u32 event_gen;
};

/**
 * enum recount_wait - what a thread waits for, when it is not running
 * @RECOUNT_WAIT_QUEUE: a CPU, while runnable
 * @RECOUNT_WAIT_FAULT: a page fault to be handled, from its entry to its exit
 * @RECOUNT_WAIT_LOCK: a contended sleeping lock
 * @RECOUNT_NR_WAITS: number of waits
 *
 * The waits overlap (a page fault may wait for a lock) and do not add up to
 * anything: each answers its own question.
 */
enum recount_wait {
	RECOUNT_WAIT_QUEUE,
	RECOUNT_WAIT_FAULT,
	RECOUNT_WAIT_LOCK,
	RECOUNT_NR_WAITS,
};

/**
 * struct recount_wait_stats - how a thread waited for one thing
 * @time: the time of all its waits, in nanoseconds
 * @count: how many waits
 * @max: the longest wait, in nanoseconds
 * @max_at: when the longest wait ended: CLOCK_BOOTTIME, in nanoseconds
 */
struct recount_wait_stats {
	u64 time;
	u64 count;
	u64 max;
	u64 max_at;
};

/**
 * struct recount_runtime - how a thread waited, per wait
 * @wait: the waits, per enum recount_wait
 */
struct recount_runtime {
	struct recount_wait_stats wait[RECOUNT_NR_WAITS];
};

/**
 * struct recount_thread - recount's state of a thread, in task_struct
 * @seq: sequence count of @cpu, @released, @kind and @runtime, written by
 *	the CPU that runs the thread or switches it in; the marks below are
 *	the thread's own (@queued_at: the runqueue's, under its lock)
 * @cpu: the CPU the thread runs on, or last ran on
 * @fault_depth: how many page faults the thread is in, nested
 * @released: the thread has left its process (recount_thread_exit()):
 *	what it consumes from now on goes to the process's exited usage too
 * @kind: what the thread consumed on each kind of CPU
 * @runtime: what the thread waited for
 * @queued_at: when the thread started waiting for a CPU, or 0
 * @fault_at: when the thread's outermost page fault began
 * @lock_at: when the thread started waiting for a contended lock, or 0
 */
struct recount_thread {
	seqcount_t seq;
	unsigned int cpu;
	unsigned int fault_depth;
	bool released;
	struct recount_usage kind[RECOUNT_NR_KINDS];
	struct recount_runtime runtime;
	u64 queued_at;
	u64 fault_at;
	u64 lock_at;
};

/**
 * struct recount_process - recount's state of a process, in signal_struct
 * @moved: serializes the threads leaving the process (recount_thread_exit());
 *	readers sum its live threads without it, and with it if one left
 *	meanwhile
 * @exited_lock: serializes the threads that left the process adding to
 *	@exited; raw, as they add at accounting points
 * @exited_seq: lets readers read @exited and @exited_runtime without the lock
 * @exited: what the threads that left the process consumed, per kind of CPU
 * @exited_runtime: what they waited for
 * @children: what the process's reaped children, and theirs, consumed, all
 *	kinds of CPUs together; under signal_struct::stats_lock, as cutime
 * @children_runtime: what they waited for; under the same
 * @pmu_private: the process ran a non-dumpable image: its cycles and
 *	instructions, and its children's, are kept from its parent's children
 *
 * A process has no track of its own: its usage is the sum of its live
 * threads' and of @exited (recount_process_read()). Its size does not
 * depend on the number of CPUs.
 */
struct recount_process {
	seqlock_t moved;
	raw_spinlock_t exited_lock;
	seqcount_raw_spinlock_t exited_seq;
	struct recount_usage exited[RECOUNT_NR_KINDS];
	struct recount_runtime exited_runtime;
	struct recount_usage children;
	struct recount_runtime children_runtime;
	bool pmu_private;
};

#endif /* CONFIG_RECOUNT */
#endif /* _LINUX_RECOUNT_TYPES_H */
