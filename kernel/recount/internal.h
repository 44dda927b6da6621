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
 * Files: core.c (accounting and reads); the sources of metrics beyond time:
 * pmu.c (cycles, instructions), energy.c (energy), kind.c (CPU kinds);
 * netlink.c (the RECOUNT family; the policy and ops in netlink_gen.c are
 * generated from its YNL spec); recount_kunit.c (tests of what is here).
 */
#ifndef _KERNEL_RECOUNT_INTERNAL_H
#define _KERNEL_RECOUNT_INTERNAL_H

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/cpumask.h>
#include <linux/jump_label.h>
#include <linux/percpu.h>
#include <linux/recount.h>
#include <linux/string.h>
#include <linux/types.h>
#include <uapi/linux/recount.h>
#include <linux/processor.h>
#include <asm/barrier.h>

/**
 * struct recount_counts - what a CPU's PMU counted in one mode
 * @cycles: cycles
 * @instructions: instructions retired
 */
struct recount_counts {
	u64 cycles;
	u64 instructions;
};

/* Counters of a snapshot: in @tried, those it read; in @valid, those it got. */
#define RECOUNT_SNAP_PMU	BIT(0)	/* @counts */

/**
 * struct recount_snap - a CPU's counters at an accounting point
 * @time: the CPU's scheduler clock (sched_clock_cpu()), in nanoseconds
 * @counts: the CPU's mode-filtered PMU counters, per level
 * @tried: RECOUNT_SNAP_* bits of the counters this snapshot read
 * @valid: RECOUNT_SNAP_* bits of the counters it read whole
 *
 * The PMU counts each mode apart (see pmu.c), so the counters are read only
 * where the running thread changes (context switch, idle, a read of the
 * caller), not at user/kernel transitions, which take the time alone.
 */
struct recount_snap {
	u64 time;
	struct recount_counts counts[RECOUNT_NR_LEVELS];
	unsigned int tried;
	unsigned int valid;
};

/**
 * struct recount_delta - what a CPU did between two snapshots
 * @time: the time, in nanoseconds, all spent at one level
 * @counts: what the PMU counted at each level
 * @counted: whether @counts were read; if not they are 0, and adding them is
 *	skipped (the user/kernel transitions, where no counter is read)
 * @inexact: RECOUNT_INEXACT_* bits of the counts that are missing
 */
struct recount_delta {
	u64 time;
	struct recount_counts counts[RECOUNT_NR_LEVELS];
	bool counted;
	u32 inexact;
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
 * @seq: sequence count covering all fields but @kind
 * @state: what the CPU has been doing since @snap, an enum recount_cpu_state
 * @kind: the CPU's kind, an enum recount_kind, set before recount runs
 * @snap: the CPU's last snapshot
 * @usage: what ran on the CPU, per level
 * @idle_time: time the CPU spent idle, in nanoseconds
 * @idle_energy: energy the CPU used while idle, in nanojoules
 *
 * Written only by its own CPU, read by anyone.
 */
struct recount_cpu {
	unsigned int seq;
	unsigned int state;
	unsigned int kind;
	struct recount_snap snap;
	struct recount_usage usage;
	u64 idle_time;
	u64 idle_energy;
};

/**
 * struct recount_cpu_usage - what a CPU did, as read
 * @kind: the CPU's kind
 * @usage: what ran on the CPU, per level
 * @idle_time: idle time, in nanoseconds
 * @idle_energy: energy used while idle, in nanojoules
 */
struct recount_cpu_usage {
	unsigned int kind;
	struct recount_usage usage;
	u64 idle_time;
	u64 idle_energy;
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
 * interrupts disabled, so the writer needs no atomic
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
 * Such a snapshot adds no time (see recount_snap_advance()), so no interval is
 * counted twice and none is lost.
 *
 * Counters are 64-bit and only move forward: their deltas are plain
 * differences, which a counter wrapping around its 64 bits does not disturb.
 * A snapshot that did not read the counters gives none: they will be counted
 * at the next one that does. One that tried and failed, or whose predecessor
 * did, gives none and marks them inexact: those counts are lost.
 */
static __always_inline void recount_snap_delta(const struct recount_snap *prev,
					       const struct recount_snap *now,
					       struct recount_delta *delta)
{
	int l;

	delta->time = now->time > prev->time ? now->time - prev->time : 0;
	delta->inexact = 0;
	if ((now->tried & RECOUNT_SNAP_PMU) &&
	    (now->valid & prev->valid & RECOUNT_SNAP_PMU)) {
		for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
			delta->counts[l].cycles = now->counts[l].cycles - prev->counts[l].cycles;
			delta->counts[l].instructions =
				now->counts[l].instructions - prev->counts[l].instructions;
		}
		delta->counted = true;
		return;
	}
	memset(delta->counts, 0, sizeof(delta->counts));
	delta->counted = false;
	if (now->tried & RECOUNT_SNAP_PMU)
		delta->inexact = RECOUNT_INEXACT_CYCLES | RECOUNT_INEXACT_INSTRUCTIONS;
}

/**
 * recount_snap_advance() - make @now the CPU's last snapshot
 * @prev: the CPU's last snapshot, updated
 * @now: the snapshot just taken
 *
 * A time older than @prev's leaves it as it is. Counters @now did not read
 * keep their value in @prev, the base of their next delta.
 */
static __always_inline void recount_snap_advance(struct recount_snap *prev,
						 const struct recount_snap *now)
{
	int l;

	if (now->time > prev->time)
		WRITE_ONCE(prev->time, now->time);
	if (!(now->tried & RECOUNT_SNAP_PMU))
		return;
	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		WRITE_ONCE(prev->counts[l].cycles, now->counts[l].cycles);
		WRITE_ONCE(prev->counts[l].instructions, now->counts[l].instructions);
	}
	WRITE_ONCE(prev->valid, now->valid);
}

/**
 * recount_usage_add() - add a delta to a usage, inside a write section
 * @usage: the usage of a track being written
 * @level: the level the delta's time was spent at
 * @delta: the delta
 * @energy: the energy used over the delta, in nanojoules
 */
static __always_inline void recount_usage_add(struct recount_usage *usage,
					      enum recount_level level,
					      const struct recount_delta *delta, u64 energy)
{
	struct recount_metrics *m;
	int l;

	m = &usage->level[level];
	WRITE_ONCE(m->time, m->time + delta->time);
	/* Most accounting points read no counter and estimate no energy. */
	for (l = 0; delta->counted && l < RECOUNT_NR_LEVELS; l++) {
		m = &usage->level[l];
		WRITE_ONCE(m->cycles, m->cycles + delta->counts[l].cycles);
		WRITE_ONCE(m->instructions, m->instructions + delta->counts[l].instructions);
	}
	if (energy)
		WRITE_ONCE(usage->energy, usage->energy + energy);
	if (unlikely(delta->inexact & ~usage->inexact))
		WRITE_ONCE(usage->inexact, usage->inexact | delta->inexact);
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

	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		dst->level[l].time = READ_ONCE(src->level[l].time);
		dst->level[l].cycles = READ_ONCE(src->level[l].cycles);
		dst->level[l].instructions = READ_ONCE(src->level[l].instructions);
	}
	dst->energy = READ_ONCE(src->energy);
	dst->inexact = READ_ONCE(src->inexact);
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

	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		dst->level[l].time += src->level[l].time;
		dst->level[l].cycles += src->level[l].cycles;
		dst->level[l].instructions += src->level[l].instructions;
	}
	dst->energy += src->energy;
	dst->inexact |= src->inexact;
}

/**
 * recount_runtime_copy() - copy a runtime, inside a read section
 * @dst: where to copy to
 * @src: the runtime of a track being read
 */
static __always_inline void recount_runtime_copy(struct recount_runtime *dst,
						 const struct recount_runtime *src)
{
	int w;

	for (w = 0; w < RECOUNT_NR_WAITS; w++)
		dst->wait[w] = READ_ONCE(src->wait[w]);
}

/**
 * recount_runtime_sum() - add one runtime to another
 * @dst: the sum
 * @src: what to add
 */
static inline void recount_runtime_sum(struct recount_runtime *dst,
				       const struct recount_runtime *src)
{
	int w;

	for (w = 0; w < RECOUNT_NR_WAITS; w++)
		dst->wait[w] += src->wait[w];
}

/**
 * recount_track_read() - read a track whole
 * @track: the track
 * @usage: receives its usage
 * @runtime: receives its runtime
 */
static inline void recount_track_read(const struct recount_track *track,
				      struct recount_usage *usage,
				      struct recount_runtime *runtime)
{
	unsigned int seq;

	do {
		seq = recount_seq_read_begin(&track->seq);
		recount_usage_copy(usage, &track->usage);
		recount_runtime_copy(runtime, &track->runtime);
	} while (recount_seq_read_retry(&track->seq, seq));
}

/* core.c: reads */
void recount_update_current(void);
void recount_thread_read(struct task_struct *t,
			 struct recount_usage usage[RECOUNT_NR_KINDS],
			 struct recount_runtime *runtime);
void recount_process_read(struct signal_struct *sig,
			  struct recount_usage total[RECOUNT_NR_KINDS],
			  struct recount_runtime *runtime,
			  struct recount_usage *exited,
			  struct recount_runtime *exited_runtime);
void recount_cpu_read(unsigned int cpu, struct recount_cpu_usage *usage);
u32 recount_metrics_supported(void);

DECLARE_PER_CPU(struct recount_cpu, recount_cpus);

/* netlink.c: the family, and records for listener.c's exit records */
struct genl_family;
struct genl_info;
struct pid_namespace;
struct sk_buff;
extern struct genl_family recount_nl_family;
size_t recount_nl_record_size(void);
int recount_nl_fill_thread(struct sk_buff *msg, struct task_struct *t,
			   struct pid_namespace *ns, u32 version);
int recount_nl_fill_process(struct sk_buff *msg, struct task_struct *leader,
			    struct pid_namespace *ns, u32 version);

/* listener.c: exit records */
struct recount_listener;

/**
 * struct recount_sock - recount's state of a netlink socket
 * @listener: its registration for exit records, or NULL
 */
struct recount_sock {
	struct recount_listener *listener;
};

void recount_listeners_init(void);
int recount_listener_register(struct recount_sock *rs, struct genl_info *info,
			      const struct cpumask *cpus);
int recount_listener_deregister(struct recount_sock *rs, struct genl_info *info,
				const struct cpumask *cpus);
void recount_sock_destroy(void *priv);
unsigned int recount_nr_sockets_listening(void);

/* kind.c: CPU kinds */
extern struct cpumask recount_kind_cpus[RECOUNT_NR_KINDS];
void recount_kind_init(void);
enum recount_kind recount_kind_of_capacity(unsigned long capacity,
					   unsigned long max_capacity);

/* pmu.c: cycles and instructions */
DECLARE_STATIC_KEY_FALSE(recount_pmu_key);
void recount_pmu_read(struct recount_snap *snap);
int recount_pmu_start(void);
void recount_pmu_stop(void);
bool recount_pmu_supported(void);
int recount_pmu_cpu_online(unsigned int cpu);
int recount_pmu_cpu_offline(unsigned int cpu);

/* energy.c: energy sources */
DECLARE_STATIC_KEY_FALSE(recount_energy_estimated_key);
void recount_energy_init(void);
u64 recount_energy_estimate(unsigned int kind, bool idle, u64 time);
u32 recount_energy_source(void);
u64 recount_energy_factor(u32 milliwatts);
u64 recount_energy_scale(u64 time, u64 factor);

#endif /* _KERNEL_RECOUNT_INTERNAL_H */
