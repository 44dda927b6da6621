/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recount's vocabulary, shared by the accounting core, the netlink family and
 * the KUnit tests.
 *
 *   user clock  a CPU's user time, kept by the user/kernel
 *               transitions (include/linux/recount.h)     recount_user_clock
 *   snapshot    a CPU's PMU counters at an accounting point struct recount_snap
 *   delta       what a CPU did between two accounting
 *               points                                    struct recount_delta
 *   usage       deltas accumulated per level              struct recount_usage
 *
 * Where the hooks live:
 *   include/linux/entry-common.h        recount_user_exit(), recount_user_enter()
 *   arch/arm64/kernel/entry-common.c    recount_user_exit(), recount_user_enter()
 *   kernel/sched/core.c                 recount_sched_switch(), recount_sched_tick()
 *   kernel/sched/idle.c                 recount_idle_enter(), recount_idle_exit(),
 *                                       recount_idle_dead()
 *   kernel/fork.c                       recount_task_init(), recount_signal_init()
 *   kernel/exit.c                       recount_thread_exit()
 *
 * Files: core.c (accounting and reads); clock.c (its clock); the sources of
 * metrics beyond time: pmu.c (cycles, instructions), energy.c (energy);
 * kind.c (CPU kinds);
 * netlink.c (the RECOUNT family; the policy and ops in netlink_gen.c are
 * generated from its YNL spec); recount_kunit.c (tests of what is here).
 */
#ifndef _KERNEL_RECOUNT_INTERNAL_H
#define _KERNEL_RECOUNT_INTERNAL_H

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/cpumask.h>
#include <linux/jump_label.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/recount.h>
#include <linux/timekeeping.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/types.h>
#include <uapi/linux/recount.h>
#include <linux/math64.h>
#include <linux/seqlock.h>

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
 * struct recount_snap - a CPU's PMU counters at an accounting point
 * @counts: the CPU's mode-filtered PMU counters, per level
 * @tried: RECOUNT_SNAP_* bits of the counters this snapshot read
 * @valid: RECOUNT_SNAP_* bits of the counters it read whole
 *
 * The PMU counts each mode apart (see pmu.c), so the counters are read only
 * at accounting points, never at user/kernel transitions.
 */
struct recount_snap {
	struct recount_counts counts[RECOUNT_NR_LEVELS];
	unsigned int tried;
	unsigned int valid;
};

/**
 * struct recount_delta - what a CPU did between two accounting points
 * @time: the time spent at each level, in nanoseconds
 * @counts: what the PMU counted at each level
 * @counted: whether @counts were read; if not they are 0, and adding them is
 *	skipped
 * @inexact: RECOUNT_INEXACT_* bits of the counts that are missing; only
 *	where they were not @counted
 */
struct recount_delta {
	u64 time[RECOUNT_NR_LEVELS];
	struct recount_counts counts[RECOUNT_NR_LEVELS];
	bool counted;
	u32 inexact;
};

/**
 * struct recount_event_snap - a CPU's counters of the chosen events
 * @count: their values, per event and level (0 at a level not counted)
 * @unrun: per event, how long its counters have been enabled but not
 *	counting, in perf's context time, their levels together
 * @gen: the generation of the events the CPU counts
 * @tried: bit i: the CPU counts event i
 * @valid: bit i: every counter of event i was read
 */
struct recount_event_snap {
	u64 count[RECOUNT_NR_EVENTS][RECOUNT_NR_LEVELS];
	u64 unrun[RECOUNT_NR_EVENTS];
	u32 gen;
	u8 tried;
	u8 valid;
};

/**
 * struct recount_event_delta - what the chosen events counted in an interval
 * @count: per event and level
 * @gen: the generation of the events
 * @counted: bit i: event i was read at both ends
 * @inexact: RECOUNT_INEXACT_EVENT_* bits of the events that were not
 */
struct recount_event_delta {
	u64 count[RECOUNT_NR_EVENTS][RECOUNT_NR_LEVELS];
	u32 gen;
	u8 counted;
	u32 inexact;
};

/* The inexact bit of chosen event @i, and of them all. */
#define RECOUNT_INEXACT_EVENT(i)	(RECOUNT_INEXACT_EVENT_0 << (i))
#define RECOUNT_INEXACT_EVENTS		(RECOUNT_INEXACT_EVENT(RECOUNT_NR_EVENTS) - \
					 RECOUNT_INEXACT_EVENT_0)
static_assert(RECOUNT_INEXACT_EVENT(1) == RECOUNT_INEXACT_EVENT_1);
static_assert(RECOUNT_NR_EVENTS == 2);

/**
 * enum recount_cpu_state - what a CPU has been doing since its last
 *	accounting point
 * @RECOUNT_CPU_OFF: unknown, because recount was off or the CPU offline;
 *	the next accounting point while recount is on starts accounting and
 *	charges nothing
 * @RECOUNT_CPU_RUNNING: running a thread, its @curr
 * @RECOUNT_CPU_IDLE: idle: running its idle task, or a thread that idles it;
 *	the interrupts and exceptions it handles meanwhile, which its user
 *	clock tells apart, are kernel time of the CPU and of no thread
 * @RECOUNT_CPU_STOPPING: recount is being switched off: the CPU has taken its
 *	last accounting point, and takes none until it is off
 */
enum recount_cpu_state {
	RECOUNT_CPU_OFF,
	RECOUNT_CPU_RUNNING,
	RECOUNT_CPU_IDLE,
	RECOUNT_CPU_STOPPING,
};

/*
 * The fractions of a nanosecond a CPU carries, per level, for idle and for
 * interrupts handled while idle.
 */
#define RECOUNT_FRAC_IDLE	RECOUNT_NR_LEVELS
#define RECOUNT_FRAC_IDLE_IRQ	(RECOUNT_NR_LEVELS + 1)
#define RECOUNT_NR_FRACS	(RECOUNT_NR_LEVELS + 2)

/**
 * struct recount_cpu - recount's state of a CPU
 * @seq: sequence count covering all fields but @kind
 * @state: what the CPU has been doing since @at, an enum recount_cpu_state
 * @kind: the CPU's kind, an enum recount_kind, set before recount runs
 * @curr: the thread the CPU runs, while RECOUNT_CPU_RUNNING; compared, never
 *	dereferenced, by readers
 * @at: recount_clock() at the CPU's last accounting point
 * @user: the user time of its user clock then (bits 63-8 of the word)
 * @factor: nanoseconds per tick of recount_clock(), 32.32 fixed point
 * @frac: fractions of a nanosecond carried to the next accounting point,
 *	2^-32 ns, per level, for idle and for interrupts while idle
 * @snap: the CPU's PMU counters at its last accounting point
 * @esnap: its counters of the chosen events then
 * @usage: what ran on the CPU, per level
 * @idle_time: time the CPU spent idle, in nanoseconds
 * @idle_energy: energy the CPU used while idle, in nanojoules
 * @idle_irq_time: time the CPU spent handling interrupts while idle, in
 *	nanoseconds: part of its kernel time in @usage
 *
 * Written only by its own CPU, with interrupts disabled, read by anyone.
 */
struct recount_cpu {
	seqcount_t seq;
	unsigned int state;
	unsigned int kind;
	struct task_struct *curr;
	u64 at;
	u64 user;
	u64 factor;
	u32 frac[RECOUNT_NR_FRACS];
	struct recount_snap snap;
	struct recount_event_snap esnap;
	struct recount_usage usage;
	u64 idle_time;
	u64 idle_energy;
	u64 idle_irq_time;
};

/**
 * struct recount_cpu_usage - what a CPU did, as read
 * @kind: the CPU's kind
 * @usage: what ran on the CPU, per level
 * @idle_time: idle time, in nanoseconds
 * @idle_energy: energy used while idle, in nanojoules
 * @idle_irq_time: time spent handling interrupts while idle, in nanoseconds
 */
struct recount_cpu_usage {
	unsigned int kind;
	struct recount_usage usage;
	u64 idle_time;
	u64 idle_energy;
	u64 idle_irq_time;
};

/* Ticks of recount_clock() are compared modulo 2^56, the user clock's range. */
#define RECOUNT_CLOCK_MASK	GENMASK_ULL(63 - RECOUNT_USER_CLOCK_SHIFT, 0)

/**
 * recount_ticks_since() - the ticks of recount's clock from one read to another
 * @a: the earlier read, or a user time, modulo 2^56
 * @b: the later one
 *
 * A reader compares its clock with another CPU's, and a CPU's own clock may
 * step back: on x86, idle entry and a periodic timer restore a TSC_ADJUST
 * that firmware changed (tsc_verify_tsc_adjust()), and the TSC jumps
 * without being marked unstable. An interval that ends before it starts is
 * empty, not 2^56 ticks less its length.
 *
 * Return: @b - @a modulo 2^56, or 0 if that is more than half the range
 * (@b is before @a).
 */
static __always_inline u64 recount_ticks_since(u64 a, u64 b)
{
	u64 d = (b - a) & RECOUNT_CLOCK_MASK;

	return d <= RECOUNT_CLOCK_MASK / 2 ? d : 0;
}

/**
 * recount_ticks_to_ns() - convert ticks of recount's clock to nanoseconds
 * @ticks: the ticks
 * @factor: nanoseconds per tick, 32.32 fixed point
 * @frac: the fraction of a nanosecond carried from the previous conversion,
 *	updated with the one this conversion leaves
 *
 * The carried fraction makes a sum of conversions the conversion of the
 * sum, to within a nanosecond: rounding loses nothing over time.
 *
 * Return: the nanoseconds.
 */
static inline u64 recount_ticks_to_ns(u64 ticks, u64 factor, u32 *frac)
{
	u64 low = (u64)(u32)(ticks * factor) + *frac;

	*frac = (u32)low;
	return mul_u64_u64_shr(ticks, factor, 32) + (low >> 32);
}

/**
 * recount_user_clock_user() - the user time a user clock says
 * @word: the user clock
 * @now: recount_clock() at the time the word is read for
 *
 * Return: the user time, in ticks modulo 2^56, as of @now.
 */
static inline u64 recount_user_clock_user(u64 word, u64 now)
{
	u64 u = word >> RECOUNT_USER_CLOCK_SHIFT;

	if (word & 1)
		u += now;
	return u & RECOUNT_CLOCK_MASK;
}

/*
 * Long windows (recount_user_clock_pick()) in one sample after which a
 * reader asks the CPU (recount_user_clock_sample()).
 */
#define RECOUNT_SAMPLE_TRIES	16

/**
 * recount_user_clock_pick() - which of two reads of a user clock held at a
 *	clock read between them
 * @w1: the word, read after @before
 * @w2: the word, read after @now and before @after
 * @before: a clock read before @w1, on the reader's CPU
 * @now: recount's clock, read after @w1
 * @after: a clock read after @w2, on the reader's CPU
 * @window: how long the reads may take, in ticks of the clock of @before
 *	and @after
 * @word: receives the word that held at @now
 *
 * The same word twice held throughout. Else the count of transitions in
 * between, modulo 128, says how many came only if fewer than 128 fit in the
 * reads, which a window of @window ensures (recount_clock_window()): then
 * one is resolved by its time s, which the two words give (@w2 held if s
 * was before @now), and more, or one under way, are read again, as is one
 * in a longer window (the reader stalled).
 *
 * Return: true if @word is set; false to read again.
 */
static inline bool recount_user_clock_pick(u64 w1, u64 w2, u64 before, u64 now, u64 after,
					   u64 window, u64 *word)
{
	u64 s;

	if ((w1 | w2) & RECOUNT_USER_CLOCK_BUSY)
		return false;
	if (w2 == w1) {
		*word = w1;
		return true;
	}
	if (((w2 - w1) & RECOUNT_USER_CLOCK_COUNT) != 1 || after < before ||
	    after - before > window)
		return false;
	/* One transition, at s: U - s entering user mode, U + s leaving it. */
	s = (w2 >> RECOUNT_USER_CLOCK_SHIFT) - (w1 >> RECOUNT_USER_CLOCK_SHIFT);
	if (w2 & 1)
		s = -s;
	s &= RECOUNT_CLOCK_MASK;
	*word = ((now - s) & RECOUNT_CLOCK_MASK) <= RECOUNT_CLOCK_MASK / 2 ? w2 : w1;
	return true;
}

/**
 * recount_split() - split an interval between user and kernel mode
 * @ticks: the interval, in ticks
 * @user: the growth of the user clock over it, in ticks modulo 2^56
 * @factor: nanoseconds per tick, 32.32 fixed point
 * @frac: the fractions carried per level, updated
 * @time: receives the nanoseconds per level
 *
 * User time cannot exceed the interval; if the clocks say so (an unordered
 * clock read at a transition), the interval is all user time.
 */
static inline void recount_split(u64 ticks, u64 user, u64 factor, u32 *frac,
				 u64 time[RECOUNT_NR_LEVELS])
{
	if (user > ticks)
		user = ticks;
	time[RECOUNT_LEVEL_USER] = recount_ticks_to_ns(user, factor,
						       &frac[RECOUNT_LEVEL_USER]);
	time[RECOUNT_LEVEL_KERNEL] = recount_ticks_to_ns(ticks - user, factor,
							 &frac[RECOUNT_LEVEL_KERNEL]);
}

/**
 * recount_counts_delta() - what a CPU's PMU counted between two snapshots
 * @prev: the earlier snapshot
 * @now: the later snapshot
 * @delta: its @counts, @counted and @inexact are set
 *
 * Counters are 64-bit and only move forward: their deltas are plain
 * differences, which a counter wrapping around its 64 bits does not disturb.
 * Where either snapshot did not read them (the CPU had no counters), there
 * are none. Where either tried and failed, there are none, and they are
 * marked inexact: those counts are lost.
 */
static inline void recount_counts_delta(const struct recount_snap *prev,
					const struct recount_snap *now,
					struct recount_delta *delta)
{
	int l;

	delta->inexact = 0;
	if (now->tried & prev->tried & now->valid & prev->valid & RECOUNT_SNAP_PMU) {
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
	if (now->tried & prev->tried & RECOUNT_SNAP_PMU)
		delta->inexact = RECOUNT_INEXACT_CYCLES | RECOUNT_INEXACT_INSTRUCTIONS;
}

/**
 * recount_usage_add_time() - add time and energy to a usage, inside a write
 *	section
 * @usage: the usage of a track being written
 * @time: the time spent at each level, in nanoseconds
 * @energy: the energy used meanwhile, in nanojoules
 */
static __always_inline void recount_usage_add_time(struct recount_usage *usage,
						   const u64 time[RECOUNT_NR_LEVELS], u64 energy)
{
	int l;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++)
		WRITE_ONCE(usage->level[l].time, usage->level[l].time + time[l]);
	if (energy)
		WRITE_ONCE(usage->energy, usage->energy + energy);
}

/**
 * recount_usage_add_counts() - add a delta's counts to a usage, inside a
 *	write section
 * @usage: the usage of a track being written
 * @delta: the delta: its counts, if it has any, and its inexact flags
 */
static inline void recount_usage_add_counts(struct recount_usage *usage,
					    const struct recount_delta *delta)
{
	struct recount_metrics *m;
	int l;

	if (likely(delta->counted)) {
		for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
			m = &usage->level[l];
			WRITE_ONCE(m->cycles, m->cycles + delta->counts[l].cycles);
			WRITE_ONCE(m->instructions,
				   m->instructions + delta->counts[l].instructions);
		}
	} else if (unlikely(delta->inexact & ~usage->inexact)) {
		WRITE_ONCE(usage->inexact, usage->inexact | delta->inexact);
	}
}

/**
 * recount_usage_start_events() - start a usage's counts of new chosen events
 * @usage: the usage, of a track being written or not
 * @gen: the generation of the events
 *
 * The counts of the generation before are dropped, and their inexact flags.
 */
static inline void recount_usage_start_events(struct recount_usage *usage, u32 gen)
{
	int l, e;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++)
		for (e = 0; e < RECOUNT_NR_EVENTS; e++)
			WRITE_ONCE(usage->level[l].event[e], 0);
	WRITE_ONCE(usage->inexact, usage->inexact & ~RECOUNT_INEXACT_EVENTS);
	WRITE_ONCE(usage->event_gen, gen);
}

/**
 * recount_usage_add_events() - add what the chosen events counted to a
 *	usage, inside a write section
 * @usage: the usage of a track being written
 * @delta: what they counted, and which could not be read
 *
 * A usage of an older generation starts from zero.
 */
static inline void recount_usage_add_events(struct recount_usage *usage,
					    const struct recount_event_delta *delta)
{
	u64 *count;
	int l, e;

	if (unlikely(usage->event_gen != delta->gen))
		recount_usage_start_events(usage, delta->gen);
	for (e = 0; e < RECOUNT_NR_EVENTS; e++) {
		if (!(delta->counted & BIT(e)))
			continue;
		for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
			count = &usage->level[l].event[e];
			WRITE_ONCE(*count, *count + delta->count[e][l]);
		}
	}
	if (unlikely(delta->inexact & ~usage->inexact))
		WRITE_ONCE(usage->inexact, usage->inexact | delta->inexact);
}

/**
 * recount_event_delta() - what the chosen events counted between two
 *	snapshots of a CPU's counters
 * @prev: the snapshot at the start
 * @now: the snapshot at the end
 * @delta: set whole
 *
 * An event read at both ends, that counted all the time between (perf did
 * not rotate it out meanwhile: its time enabled but not running did not
 * grow), counted the difference; one the CPU counts but could not read at
 * either end, or that did not count all along, counted nothing and is
 * inexact; one the CPU did not count at either end (it was starting) is
 * neither.
 */
static inline void recount_event_delta(const struct recount_event_snap *prev,
				       const struct recount_event_snap *now,
				       struct recount_event_delta *delta)
{
	u8 tried = now->tried & prev->tried;
	int l, e;

	delta->gen = now->gen;
	if (prev->gen != now->gen)
		tried = 0;
	delta->counted = tried & now->valid & prev->valid;
	delta->inexact = 0;
	for (e = 0; e < RECOUNT_NR_EVENTS; e++) {
		if ((delta->counted & BIT(e)) && now->unrun[e] != prev->unrun[e])
			delta->counted &= ~BIT(e);
		for (l = 0; l < RECOUNT_NR_LEVELS; l++)
			delta->count[e][l] = delta->counted & BIT(e) ?
					     now->count[e][l] - prev->count[e][l] : 0;
		if ((tried & ~delta->counted) & BIT(e))
			delta->inexact |= RECOUNT_INEXACT_EVENT(e);
	}
}

/**
 * recount_usage_add() - add a delta to a usage, inside a write section
 * @usage: the usage of a track being written
 * @delta: the delta
 * @energy: the energy used over the delta, in nanojoules
 */
static inline void recount_usage_add(struct recount_usage *usage,
				     const struct recount_delta *delta, u64 energy)
{
	recount_usage_add_time(usage, delta->time, energy);
	recount_usage_add_counts(usage, delta);
}

/**
 * recount_usage_copy() - copy a usage, inside a read section
 * @dst: where to copy to
 * @src: the usage of a track being read
 */
static __always_inline void recount_usage_copy(struct recount_usage *dst,
					       const struct recount_usage *src)
{
	int l, e;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		dst->level[l].time = READ_ONCE(src->level[l].time);
		dst->level[l].cycles = READ_ONCE(src->level[l].cycles);
		dst->level[l].instructions = READ_ONCE(src->level[l].instructions);
		for (e = 0; e < RECOUNT_NR_EVENTS; e++)
			dst->level[l].event[e] = READ_ONCE(src->level[l].event[e]);
	}
	dst->energy = READ_ONCE(src->energy);
	dst->inexact = READ_ONCE(src->inexact);
	dst->event_gen = READ_ONCE(src->event_gen);
}

/*
 * Zero @u with stores kept inline: a memset() of its 96 bytes is a call on
 * arm64, as long as the copy of a usage (recount_usage_copy()).
 */
static __always_inline void recount_usage_zero(struct recount_usage *u)
{
	int l, e;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		u->level[l].time = 0;
		u->level[l].cycles = 0;
		u->level[l].instructions = 0;
		for (e = 0; e < RECOUNT_NR_EVENTS; e++)
			u->level[l].event[e] = 0;
	}
	u->energy = 0;
	u->inexact = 0;
	u->event_gen = 0;
}

/**
 * recount_usage_sum() - add one usage to another
 * @dst: the sum
 * @src: what to add
 */
static inline void recount_usage_sum(struct recount_usage *dst,
				     const struct recount_usage *src)
{
	u32 events = RECOUNT_INEXACT_EVENTS;
	int l, e;

	/*
	 * Event counts of two generations never add up: the newer stay. 0 is
	 * the oldest: that of a usage never charged with events.
	 */
	if (dst->event_gen != src->event_gen) {
		if (!src->event_gen ||
		    (dst->event_gen && (s32)(src->event_gen - dst->event_gen) < 0))
			events = 0;
		else
			recount_usage_start_events(dst, src->event_gen);
	}
	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		dst->level[l].time += src->level[l].time;
		dst->level[l].cycles += src->level[l].cycles;
		dst->level[l].instructions += src->level[l].instructions;
		for (e = 0; events && e < RECOUNT_NR_EVENTS; e++)
			dst->level[l].event[e] += src->level[l].event[e];
	}
	dst->energy += src->energy;
	dst->inexact |= src->inexact & (~RECOUNT_INEXACT_EVENTS | events);
}

/**
 * recount_usage_drop_counts() - leave a usage's PMU counts out
 * @u: the usage, not a track
 *
 * Its cycles, instructions and chosen events go, flagged inexact: what they
 * were must not be read by whoever reads @u.
 */
static inline void recount_usage_drop_counts(struct recount_usage *u)
{
	int l;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		u->level[l].cycles = 0;
		u->level[l].instructions = 0;
		memset(u->level[l].event, 0, sizeof(u->level[l].event));
	}
	u->inexact |= RECOUNT_INEXACT_CYCLES | RECOUNT_INEXACT_INSTRUCTIONS |
		      RECOUNT_INEXACT_EVENTS;
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

	for (w = 0; w < RECOUNT_NR_WAITS; w++) {
		dst->wait[w].time = READ_ONCE(src->wait[w].time);
		dst->wait[w].count = READ_ONCE(src->wait[w].count);
		dst->wait[w].max = READ_ONCE(src->wait[w].max);
		dst->wait[w].max_at = READ_ONCE(src->wait[w].max_at);
	}
}

/* No wait to add: recount was off when it began, or nothing waited. */
#define RECOUNT_NO_WAIT		U64_MAX

/**
 * recount_wait_stats_add() - add one wait to a track's waits
 * @s: the waits, in a track whose write section is open
 * @time: how long the wait was, in nanoseconds
 * @at: when it ended (CLOCK_BOOTTIME, in nanoseconds), or 0 to read the
 *	clock should it be the longest
 *
 * A wait costs two adds and a compare: the clock is read only for a new
 * longest wait, which waits of independent lengths make about ln(n) times
 * in n (waits that grow steadily make it every time).
 *
 * Return: when the wait ended, if that was read or given, else 0.
 */
static __always_inline u64 recount_wait_stats_add(struct recount_wait_stats *s, u64 time,
						  u64 at)
{
	WRITE_ONCE(s->time, s->time + time);
	WRITE_ONCE(s->count, s->count + 1);
	if (unlikely(time > s->max)) {
		if (!at)
			at = ktime_get_boot_fast_ns();
		WRITE_ONCE(s->max, time);
		WRITE_ONCE(s->max_at, at);
	}
	return at;
}

/**
 * recount_runtime_sum() - add one runtime to another
 * @dst: the sum: a reader's, or a process's exited runtime in the write
 *	section of its exited_seq (plain stores, as recount_usage_sum())
 * @src: what to add
 *
 * Times and counts add up; the longest wait is the longer of the two, the
 * earlier one where they are as long.
 */
static inline void recount_runtime_sum(struct recount_runtime *dst,
				       const struct recount_runtime *src)
{
	int w;

	for (w = 0; w < RECOUNT_NR_WAITS; w++) {
		struct recount_wait_stats *d = &dst->wait[w];
		const struct recount_wait_stats *s = &src->wait[w];

		d->time += s->time;
		d->count += s->count;
		if (s->max > d->max || (s->max == d->max && s->max && s->max_at < d->max_at)) {
			d->max = s->max;
			d->max_at = s->max_at;
		}
	}
}

/* clock.c: recount's clock */
u64 recount_clock_raw_rate(void);
void recount_clock_select(void);
u64 recount_clock_factor(void);
u64 recount_clock_window(void);
u64 recount_clock_window_clock(void);
u64 recount_clock_of(unsigned int cpu);
#if IS_ENABLED(CONFIG_KUNIT)
u64 __recount_clock_of(unsigned int cpu);
#endif
void recount_clock_check(struct recount_cpu *rc);

/* core.c: reads */
int recount_restart(void);
int recount_reconfigure(void (*apply)(void));
void recount_thread_read(struct task_struct *t,
			 struct recount_usage usage[RECOUNT_NR_KINDS],
			 struct recount_runtime *runtime);
void recount_process_read(struct signal_struct *sig,
			  struct recount_usage total[RECOUNT_NR_KINDS],
			  struct recount_runtime *runtime,
			  struct recount_usage *exited,
			  struct recount_runtime *exited_runtime);
void recount_cpu_read(unsigned int cpu, struct recount_cpu_usage *usage);
void recount_children_read(struct signal_struct *sig, struct recount_usage *usage,
			   struct recount_runtime *runtime);
int recount_suspend(void *data);
void recount_resume(void *data);
u32 recount_metrics_supported(void);

DECLARE_PER_CPU(struct recount_cpu, recount_cpus);
struct recount_cpu *recount_cpu_ptr(unsigned int cpu);

/**
 * struct recount_thread_section - a read of a thread's track
 * @rc: the state of the CPU the thread last ran on
 * @cpu: that CPU
 * @seq: the thread's sequence count as the read began
 * @cseq: the CPU's
 */
struct recount_thread_section {
	const struct recount_cpu *rc;
	unsigned int cpu;
	unsigned int seq;
	unsigned int cseq;
};

/**
 * recount_thread_read_begin() - begin a read of a thread's track
 * @t: the thread
 * @s: the read
 *
 * What @t consumed and waited for as of its last accounting point, its
 * track's usage and runtime, may be read until recount_thread_read_retry()
 * says if it was consistent: plainly, as KCSAN takes the next
 * KCSAN_SEQLOCK_REGION_MAX accesses after a sequence count's begin as
 * atomic (a record written from the track, recount_nl_put_track(), takes a
 * few hundred). The read is in the thread's section and in that of the CPU
 * it last ran on, as both are written: a thread is switched in again on the
 * CPU it last ran on, its queue wait with it, in the CPU's section only
 * (recount_account()).
 *
 * Return: true if @t runs: the track lacks its interval in progress, which
 * recount_thread_read() adds.
 */
static __always_inline bool recount_thread_read_begin(const struct task_struct *t,
						      struct recount_thread_section *s)
{
	const struct recount_thread *rt = &t->recount;

	s->seq = read_seqcount_begin(&rt->seq);
	s->cpu = READ_ONCE(rt->cpu);
	s->rc = per_cpu_ptr(&recount_cpus, s->cpu);
	s->cseq = read_seqcount_begin(&s->rc->seq);
	/*
	 * A thread that has left its process is read as of its last
	 * accounting point, as the process's exited usage is: never more than
	 * its process.
	 */
	return READ_ONCE(s->rc->curr) == t && !READ_ONCE(rt->released);
}

/**
 * recount_thread_read_retry() - end a read of a thread's track
 * @t: the thread
 * @s: the read, begun by recount_thread_read_begin()
 *
 * Return: true if a writer changed the track meanwhile: read it again.
 */
static __always_inline bool recount_thread_read_retry(const struct task_struct *t,
						      const struct recount_thread_section *s)
{
	return read_seqcount_retry(&s->rc->seq, s->cseq) ||
	       read_seqcount_retry(&t->recount.seq, s->seq);
}

/* netlink.c: the family, and records for listener.c's exit records */
struct genl_family;
struct genl_info;
struct pid_namespace;
struct net;
struct sk_buff;
struct netlink_ext_ack;
extern struct genl_family recount_nl_family;

/**
 * struct recount_nl_format - how the records of a reply are written
 * @withheld: what of the PMU's counts the requester may not read, from
 *	recount_nl_withheld()
 * @version: the version of struct recount_task_runtime to add, or 0
 * @state: add the state: flags, metrics, energy source and @withheld
 * @lean: leave out what the reply says once or elsewhere (RECOUNT_A_LEAN):
 *	per-kind nests on a machine with one kind of CPU, the runtime nest
 *	where the struct of @version carries every value, and, in a dump, the
 *	state where it is the same as in the record before
 * @sent: in a dump, the state the last record was read with, or 0
 *
 * Small enough for a dump's context in struct netlink_callback.
 */
struct recount_nl_format {
	u8 withheld;
	u8 version;
	bool state;
	bool lean;
	u32 sent;
};

size_t recount_nl_record_size(void);

/**
 * recount_nl_task_withheld() - what of @t's PMU counts a requester may not
 *	read
 * @t: the task a record is of
 * @withheld: what it may not read of any task's, recount_nl_withheld()
 * @withheld_private: what it may not read of a CPU's, recount_nl_withheld()
 *	too
 *
 * A process that executed a non-dumpable image (recount_exec_private()) was
 * counted from then on only by CPU-wide events: perf stopped counting it
 * for everyone else's, and a per-task event opened since counts from its
 * opening. So its records, its threads' and its exit records carry their
 * cumulative counts only to a requester perf would let count a CPU.
 *
 * Return: RECOUNT_WITHHELD_* flags.
 */
static inline u8 recount_nl_task_withheld(struct task_struct *t, u8 withheld,
					  u8 withheld_private)
{
	if (unlikely(READ_ONCE(t->signal->recount.pmu_private)))
		withheld |= withheld_private;
	return withheld;
}

bool recount_nl_capable(const struct sk_buff *skb, int cap);
const struct cred *recount_nl_opener(const struct sk_buff *skb, const struct cred *cred);
bool recount_nl_may_read_current(const struct cred *cred);
u32 recount_nl_withheld(const struct sk_buff *skb, bool cpu);
int recount_nl_fill_thread(struct sk_buff *msg, struct task_struct *t,
			   struct pid_namespace *ns, const struct recount_nl_format *fmt);
int recount_nl_fill_process(struct sk_buff *msg, struct task_struct *leader,
			    struct pid_namespace *ns, const struct recount_nl_format *fmt);
int recount_nl_fill_cpu(struct sk_buff *msg, unsigned int cpu,
			const struct recount_nl_format *fmt);
size_t recount_nl_fill_size(u32 scope, const struct recount_nl_format *fmt);

/* listener.c: exit records */
struct recount_listener;

/**
 * struct recount_sock - recount's state of a netlink socket
 * @listener: its registration for exit records, or NULL
 */
struct recount_sock {
	struct recount_listener *listener;
};

int recount_listeners_init(void);
void recount_listeners_exit(void);
/* user.max_recount_listeners in the initial user namespace. */
#define RECOUNT_LISTENERS_PER_USER	16
int recount_listener_register(struct recount_sock *rs, struct sk_buff *skb,
			      struct genl_info *info, const struct cpumask *cpus);
int recount_listener_deregister(struct recount_sock *rs, struct genl_info *info,
				const struct cpumask *cpus);
void recount_sock_destroy(void *priv);
unsigned int recount_nr_sockets_listening(const struct net *net);

/* netlink.c: get-info's CPU lists of the kinds */
size_t recount_nl_kind_cpus_size(const unsigned long *const kinds[RECOUNT_NR_KINDS],
				 unsigned int nbits);
int recount_nl_put_kind_cpus(struct sk_buff *msg,
			     const unsigned long *const kinds[RECOUNT_NR_KINDS],
			     unsigned int nbits);

/* kind.c: CPU kinds */
extern struct cpumask recount_kind_cpus[RECOUNT_NR_KINDS];
extern bool recount_kinds_mixed;
extern unsigned int recount_kinds_used;
void recount_kind_init(void);
enum recount_kind recount_kind_of_capacity(unsigned long capacity,
					   unsigned long max_capacity);

/* pmu.c: cycles and instructions */
DECLARE_STATIC_KEY_FALSE(recount_pmu_key);

/*
 * Which of its counters a CPU has: struct recount_pmu's @ready. NONE until it
 * is given them (coming online) and once they go (going offline, recount
 * off); SOME once given them if some, or all, could not be created, whose
 * reads fail.
 */
enum recount_pmu_ready {
	RECOUNT_PMU_NONE,
	RECOUNT_PMU_SOME,
	RECOUNT_PMU_ALL,
};

/*
 * The counters of a CPU: cycles and instructions, per level, and the first
 * @nr_events chosen events (of generation @event_gen) at the levels of
 * @event_levels (bit i: enum recount_level i). @ready, an enum
 * recount_pmu_ready, is set once they are created, and cleared before the
 * first is released: creating and releasing counters sleeps, and the
 * accounting points of the CPU's threads meanwhile must not read some
 * counters but not others. @held: how many of the pinned ones (cycles and
 * instructions) the PMU scheduled; those of the events are flexible.
 */
struct recount_pmu {
	u8 ready;
	u8 nr_events;
	u8 held;
	u8 event_levels[RECOUNT_NR_EVENTS];
	u32 event_gen;
	struct perf_event *cycles[RECOUNT_NR_LEVELS];
	struct perf_event *instructions[RECOUNT_NR_LEVELS];
	struct perf_event *event[RECOUNT_NR_EVENTS][RECOUNT_NR_LEVELS];
};

DECLARE_PER_CPU(struct recount_pmu, recount_pmus);

/*
 * Read one of the local CPU's counters, interrupts disabled. This is
 * perf_event_read_local() without what recount's counters cannot need: they
 * are recount's own, bound to this CPU and not inherited, and the caller has
 * interrupts disabled, so perf cannot schedule them in or out meanwhile (it
 * does that on this CPU, interrupts disabled, from its multiplexing hrtimer
 * too): a counter is active here if and only if its ->oncpu is this CPU,
 * and an active counter is brought up to date by its PMU's ->read().
 * perf_event_read_local()'s checks and interrupt save and restore cost 64
 * instructions per counter on arm64, four counters at every context switch.
 * A counter that is not active fails the read: a pinned one in error (the
 * PMU could not schedule it), or a chosen event's flexible one that perf
 * has rotated out.
 */
static __always_inline bool recount_pmu_read_one(struct perf_event *event, int cpu,
						 u64 *value)
{
	if (READ_ONCE(event->oncpu) != cpu)
		return false;
	event->pmu->read(event);
	*value = local64_read(&event->count);
	return true;
}

/**
 * recount_pmu_read() - read the local CPU's counters into a snapshot
 * @snap: the snapshot; RECOUNT_SNAP_PMU is set in @snap->tried if the CPU
 *	has counters, and in @snap->valid if every counter was read
 *
 * Called at the accounting points that read counters, interrupts disabled.
 * A CPU that lacks one of its counters, or one that is not active, gives
 * no counts: the reads stop at the first that fails.
 */
static __always_inline void recount_pmu_read(struct recount_snap *snap)
{
	struct recount_pmu *pmu = this_cpu_ptr(&recount_pmus);
	unsigned int ready = READ_ONCE(pmu->ready);
	int cpu = smp_processor_id();

	snap->valid = 0;
	if (unlikely(ready != RECOUNT_PMU_ALL)) {
		/*
		 * A CPU without its counters (going offline, coming online)
		 * has no counts: an interval with such an end adds none and
		 * loses none.
		 */
		snap->tried = ready == RECOUNT_PMU_SOME ? RECOUNT_SNAP_PMU : 0;
		return;
	}
	snap->tried = RECOUNT_SNAP_PMU;
	if (recount_pmu_read_one(pmu->cycles[RECOUNT_LEVEL_USER], cpu,
				 &snap->counts[RECOUNT_LEVEL_USER].cycles) &&
	    recount_pmu_read_one(pmu->instructions[RECOUNT_LEVEL_USER], cpu,
				 &snap->counts[RECOUNT_LEVEL_USER].instructions) &&
	    recount_pmu_read_one(pmu->cycles[RECOUNT_LEVEL_KERNEL], cpu,
				 &snap->counts[RECOUNT_LEVEL_KERNEL].cycles) &&
	    recount_pmu_read_one(pmu->instructions[RECOUNT_LEVEL_KERNEL], cpu,
				 &snap->counts[RECOUNT_LEVEL_KERNEL].instructions))
		snap->valid = RECOUNT_SNAP_PMU;
}

/**
 * recount_events_read() - read the local CPU's counters of the chosen events
 * @snap: the snapshot, set whole but for the counts of events not counted
 *
 * As recount_pmu_read(), for the chosen events: an event is read if the CPU
 * counts it, valid if every one of its counters was read. Their counters are
 * flexible: perf may rotate them out and in between two accounting points,
 * when they and its flexible events do not fit in the PMU together. It
 * then adds the time one was out to its time enabled, but not to its time
 * running, once it is in again (__perf_update_times()): while a counter
 * counts, the difference stays as it is. Two loads per counter, where
 * perf_event_read_local()'s times would read the clock.
 */
static __always_inline void recount_events_read(struct recount_event_snap *snap)
{
	struct recount_pmu *pmu = this_cpu_ptr(&recount_pmus);
	int cpu = smp_processor_id(), e, l;
	struct perf_event *event;
	bool ok;

	snap->gen = pmu->event_gen;
	snap->tried = 0;
	snap->valid = 0;
	if (READ_ONCE(pmu->ready) == RECOUNT_PMU_NONE)
		return;
	for (e = 0; e < pmu->nr_events; e++) {
		ok = true;
		snap->unrun[e] = 0;
		for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
			snap->count[e][l] = 0;
			if (!(pmu->event_levels[e] & BIT(l)))
				continue;
			event = pmu->event[e][l];
			ok = ok && event && recount_pmu_read_one(event, cpu, &snap->count[e][l]);
			if (ok)
				snap->unrun[e] += event->total_time_enabled -
						  event->total_time_running;
		}
		snap->tried |= BIT(e);
		if (ok)
			snap->valid |= BIT(e);
	}
}

/**
 * struct recount_event_spec - a chosen PMU event
 * @type: what @config is, an enum recount_event_type
 * @mode: where it is counted, an enum recount_event_mode: bit i is level i
 * @config: the event
 */
struct recount_event_spec {
	u32 type;
	u32 mode;
	u64 config;
};

static_assert(BIT(RECOUNT_LEVEL_USER) == RECOUNT_EVENT_MODE_USER);
static_assert(BIT(RECOUNT_LEVEL_KERNEL) == RECOUNT_EVENT_MODE_KERNEL);
static_assert((BIT(RECOUNT_LEVEL_USER) | BIT(RECOUNT_LEVEL_KERNEL)) == RECOUNT_EVENT_MODE_ALL);

/**
 * struct recount_event_set - the chosen PMU events
 * @rcu: frees a set replaced by another
 * @gen: its generation: every set gets a new one
 * @nr: how many events
 * @event: the events
 */
struct recount_event_set {
	struct rcu_head rcu;
	u32 gen;
	u32 nr;
	struct recount_event_spec event[RECOUNT_NR_EVENTS];
};

DECLARE_STATIC_KEY_FALSE(recount_events_key);
extern struct recount_event_set __rcu *recount_events;
int recount_events_choose(const struct recount_event_spec *spec, unsigned int nr,
			  const struct sk_buff *skb, struct netlink_ext_ack *extack);
unsigned int recount_pmu_held(void);

int recount_pmu_start(void);
void recount_pmu_stop(void);
void recount_pmu_forget(void);
bool recount_pmu_supported(void);
#if IS_ENABLED(CONFIG_KUNIT)
struct perf_event *recount_pmu_perf_create(struct perf_event_attr *attr, unsigned int cpu);
const struct recount_pmu *recount_pmu_of(unsigned int cpu);
#endif
int recount_pmu_cpu_online(unsigned int cpu);
int recount_pmu_cpu_offline(unsigned int cpu);

/* energy.c: energy sources */
DECLARE_STATIC_KEY_FALSE(recount_energy_estimated_key);
extern u64 recount_power_factor[RECOUNT_NR_KINDS][2];
void recount_energy_init(void);
u32 recount_energy_source(void);
u64 recount_energy_factor(u32 milliwatts);

/**
 * recount_energy_scale() - the energy drawn at a power over a time
 * @time: the time, in nanoseconds
 * @factor: the power, from recount_energy_factor()
 *
 * Return: the energy, in nanojoules; exact to a part in 2^32 of the power.
 */
static __always_inline u64 recount_energy_scale(u64 time, u64 factor)
{
	return mul_u64_u64_shr(time, factor, 32);
}

/**
 * recount_energy_estimate() - the estimated energy of an interval
 * @kind: the kind of the CPU
 * @idle: whether the CPU was idle
 * @time: the length of the interval, in nanoseconds
 *
 * Called at accounting points while the estimated source is on: inline, a
 * load and a multiplication (an out-of-line call cost 7 instructions more
 * per context switch on arm64, with the spills around it).
 *
 * Return: the energy, in nanojoules.
 */
static __always_inline u64 recount_energy_estimate(unsigned int kind, bool idle, u64 time)
{
	return recount_energy_scale(time, READ_ONCE(recount_power_factor[kind][idle]));
}

#endif /* _KERNEL_RECOUNT_INTERNAL_H */
