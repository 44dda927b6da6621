// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of recount's pure logic: the user clock and its wraps, the
 * conversion of ticks to nanoseconds and the user/kernel split, counter
 * deltas, usage sums, energy scaling, CPU kinds by capacity, and tracks'
 * sequence counts against a concurrent writer: an imitation one, and the
 * real accounting point.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/perf_event.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/sched/isolation.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <net/netlink.h>

#include "internal.h"

/* A transition at @now, from the word @w, as recount_user_transition() does. */
static u64 recount_test_transition(u64 w, u64 now, bool to_user)
{
	return recount_user_clock_next(w, now, to_user);
}

static void recount_test_user_clock(struct kunit *test)
{
	u64 w = 0;

	/* Kernel mode from 0 to 100, user mode 100-250, kernel 250-400. */
	w = recount_test_transition(w, 100, true);
	KUNIT_EXPECT_EQ(test, w & RECOUNT_USER_CLOCK_COUNT, 1);
	KUNIT_EXPECT_EQ(test, w & RECOUNT_USER_CLOCK_BUSY, 0);
	/* In user mode, the user time grows with the clock. */
	KUNIT_EXPECT_EQ(test, recount_user_clock_user(w, 100), 0);
	KUNIT_EXPECT_EQ(test, recount_user_clock_user(w, 180), 80);
	w = recount_test_transition(w, 250, false);
	KUNIT_EXPECT_EQ(test, w & RECOUNT_USER_CLOCK_COUNT, 2);
	/* In kernel mode, it stands still. */
	KUNIT_EXPECT_EQ(test, recount_user_clock_user(w, 250), 150);
	KUNIT_EXPECT_EQ(test, recount_user_clock_user(w, 400), 150);

	/* A busy bit left by the first store is cleared by the second. */
	w = recount_test_transition(w | RECOUNT_USER_CLOCK_BUSY, 500, true);
	KUNIT_EXPECT_EQ(test, w & RECOUNT_USER_CLOCK_BUSY, 0);
	KUNIT_EXPECT_EQ(test, recount_user_clock_user(w, 520), 170);
}

/*
 * A reader's two reads of a user clock, around its clock read at 1000, in a
 * window of 20 ticks (990-1010) or of 700 (400-1100), trusted up to 50:
 * which word held at 1000, if either is known to.
 */
static void recount_test_user_clock_pick(struct kunit *test)
{
	static const struct {
		bool from_user;	/* from user mode since 300, else kernel since 200 */
		u64 at;		/* the transition's time */
		u64 user;	/* the user time at the clock read, 1000 */
		bool second;	/* the second word held then */
	} one[] = {
		{ true, 995, 100 + 695, true },
		{ true, 1000, 100 + 700, true },
		{ true, 1005, 100 + 700, false },
		{ false, 995, 100 + 5, true },
		{ false, 1005, 100, false },
	};
	u64 k, u, w, word = 0;
	int i;

	/* User mode 100-200, kernel mode from 200: 100 ticks of user time. */
	k = recount_test_transition(recount_test_transition(0, 100, true), 200, false);
	/* ...and user mode again from 300. */
	u = recount_test_transition(k, 300, true);

	/* No transition between the reads: the word held, however long they took. */
	KUNIT_EXPECT_TRUE(test, recount_user_clock_pick(u, u, 990, 1000, 1010, 50, &word));
	KUNIT_EXPECT_EQ(test, word, u);
	word = 0;
	KUNIT_EXPECT_TRUE(test, recount_user_clock_pick(u, u, 400, 1000, 1100, 50, &word));
	KUNIT_EXPECT_EQ(test, word, u);
	word = 0;
	KUNIT_EXPECT_TRUE(test, recount_user_clock_pick(u, u, 1010, 1000, 990, 50, &word));
	KUNIT_EXPECT_EQ(test, word, u);

	/* One transition, into either mode, before or after the clock read. */
	for (i = 0; i < ARRAY_SIZE(one); i++) {
		u64 from = one[i].from_user ? u : k;

		w = recount_test_transition(from, one[i].at, !one[i].from_user);
		KUNIT_EXPECT_TRUE(test, recount_user_clock_pick(from, w, 990, 1000, 1010, 50,
								&word));
		KUNIT_EXPECT_EQ(test, word, one[i].second ? w : from);
		KUNIT_EXPECT_EQ(test, recount_user_clock_user(word, 1000), one[i].user);
	}

	/* Two transitions, or 128 (a count of none, another word): unknown. */
	w = recount_test_transition(recount_test_transition(u, 995, false), 996, true);
	KUNIT_EXPECT_FALSE(test, recount_user_clock_pick(u, w, 990, 1000, 1010, 50, &word));
	w = u;
	for (i = 0; i < 128; i++)
		w = recount_test_transition(w, 500 + i, i & 1);
	KUNIT_EXPECT_EQ(test, (w - u) & RECOUNT_USER_CLOCK_COUNT, 0);
	KUNIT_EXPECT_FALSE(test, recount_user_clock_pick(u, w, 990, 1000, 1010, 50, &word));
	/* One under way: unknown. */
	KUNIT_EXPECT_FALSE(test, recount_user_clock_pick(u, u | RECOUNT_USER_CLOCK_BUSY,
							 990, 1000, 1010, 50, &word));
	KUNIT_EXPECT_FALSE(test, recount_user_clock_pick(u | RECOUNT_USER_CLOCK_BUSY, u,
							 990, 1000, 1010, 50, &word));

	/*
	 * 129 transitions from 500 on, by a reader that stalled between its
	 * reads: the count says one, the window says the count cannot be
	 * trusted. So does a window that ends before it begins (the same word
	 * twice, above, needs no window).
	 */
	w = u;
	for (i = 0; i < 129; i++)
		w = recount_test_transition(w, 500 + i, i & 1);
	KUNIT_EXPECT_EQ(test, (w - u) & RECOUNT_USER_CLOCK_COUNT, 1);
	KUNIT_EXPECT_FALSE(test, recount_user_clock_pick(u, w, 400, 1000, 1100, 50, &word));
	w = recount_test_transition(u, 995, false);
	KUNIT_EXPECT_FALSE(test, recount_user_clock_pick(u, w, 1010, 1000, 990, 50, &word));
}

static void recount_test_user_clock_wraps(struct kunit *test)
{
	u64 w = 0, now = RECOUNT_CLOCK_MASK - 10, user = 0;
	int i;

	/* The count wraps at 128 without touching the busy bit or the time... */
	for (i = 0; i < 300; i++) {
		w = recount_test_transition(w, now, !(i & 1));
		KUNIT_EXPECT_EQ(test, w & RECOUNT_USER_CLOCK_COUNT, (i + 1) & 127);
		KUNIT_EXPECT_EQ(test, w & RECOUNT_USER_CLOCK_BUSY, 0);
		if (i & 1)
			user += 3;
		now += 3;
	}
	/* ...and the clock wraps at 2^56 (and at 2^64) without losing time. */
	KUNIT_EXPECT_EQ(test, recount_user_clock_user(w, now), user);
	w = recount_test_transition(0, U64_MAX - 1, true);
	w = recount_test_transition(w, 5, false);
	KUNIT_EXPECT_EQ(test, recount_user_clock_user(w, 5), 7);
}

static void recount_test_ticks_to_ns(struct kunit *test)
{
	/* 62.5 MHz (arm64's usual counter): 16 ns per tick, exactly. */
	u64 factor = 16ULL << 32, sum = 0;
	u32 frac = 0;
	int i;

	KUNIT_EXPECT_EQ(test, recount_ticks_to_ns(1000, factor, &frac), 16000);
	KUNIT_EXPECT_EQ(test, frac, 0);

	/* 3 GHz: a third of a nanosecond; the fractions add up, not lost. */
	factor = div64_u64(((u64)NSEC_PER_SEC << 32) + 1500000000ULL, 3000000000ULL);
	frac = 0;
	for (i = 0; i < 3000; i++)
		sum += recount_ticks_to_ns(1, factor, &frac);
	KUNIT_EXPECT_GE(test, sum, 999);
	KUNIT_EXPECT_EQ(test, sum, recount_ticks_to_ns(3000, factor, &(u32){ 0 }));

	/* Long intervals (an idle CPU for ten days) do not overflow. */
	frac = 0;
	KUNIT_EXPECT_EQ(test, recount_ticks_to_ns(62500000ULL * 86400 * 10, 16ULL << 32, &frac),
			86400ULL * 10 * NSEC_PER_SEC);
}

/* Intervals between clock reads modulo 2^56: empty if they end first. */
static void recount_test_ticks_since(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, recount_ticks_since(10, 15), 5);
	KUNIT_EXPECT_EQ(test, recount_ticks_since(15, 15), 0);
	KUNIT_EXPECT_EQ(test, recount_ticks_since(15, 10), 0);
	/* Across the wrap, and the clock's high bits ignored. */
	KUNIT_EXPECT_EQ(test, recount_ticks_since(RECOUNT_CLOCK_MASK - 2, 3), 6);
	KUNIT_EXPECT_EQ(test, recount_ticks_since(BIT_ULL(60) | 7, 9), 2);
	/* Half the range is the longest interval; beyond, the clock went back. */
	KUNIT_EXPECT_EQ(test, recount_ticks_since(0, RECOUNT_CLOCK_MASK / 2),
			RECOUNT_CLOCK_MASK / 2);
	KUNIT_EXPECT_EQ(test, recount_ticks_since(0, RECOUNT_CLOCK_MASK / 2 + 1), 0);
}

static void recount_test_split(struct kunit *test)
{
	u32 frac[RECOUNT_NR_FRACS] = {};
	u64 time[RECOUNT_NR_LEVELS];

	recount_split(1000, 300, 1ULL << 32, frac, time);
	KUNIT_EXPECT_EQ(test, time[RECOUNT_LEVEL_USER], 300);
	KUNIT_EXPECT_EQ(test, time[RECOUNT_LEVEL_KERNEL], 700);

	/* User time beyond the interval (an unordered clock read) is capped. */
	recount_split(1000, 1200, 1ULL << 32, frac, time);
	KUNIT_EXPECT_EQ(test, time[RECOUNT_LEVEL_USER], 1000);
	KUNIT_EXPECT_EQ(test, time[RECOUNT_LEVEL_KERNEL], 0);

	/* Each level carries its own fraction: half a ns each, twice. */
	recount_split(1, 1, 1ULL << 31, frac, time);
	recount_split(1, 0, 1ULL << 31, frac, time);
	KUNIT_EXPECT_EQ(test, frac[RECOUNT_LEVEL_USER], 1U << 31);
	KUNIT_EXPECT_EQ(test, frac[RECOUNT_LEVEL_KERNEL], 1U << 31);
	recount_split(2, 1, 1ULL << 31, frac, time);
	KUNIT_EXPECT_EQ(test, time[RECOUNT_LEVEL_USER], 1);
	KUNIT_EXPECT_EQ(test, time[RECOUNT_LEVEL_KERNEL], 1);
}

static void recount_test_counter_delta(struct kunit *test)
{
	struct recount_snap prev = { .tried = RECOUNT_SNAP_PMU, .valid = RECOUNT_SNAP_PMU };
	struct recount_snap now = prev;
	struct recount_delta delta;

	prev.counts[RECOUNT_LEVEL_USER] = (struct recount_counts){ 100, 40 };
	prev.counts[RECOUNT_LEVEL_KERNEL] = (struct recount_counts){ 10, 4 };
	now.counts[RECOUNT_LEVEL_USER] = (struct recount_counts){ 350, 240 };
	now.counts[RECOUNT_LEVEL_KERNEL] = (struct recount_counts){ 30, 9 };
	recount_counts_delta(&prev, &now, &delta);
	KUNIT_EXPECT_TRUE(test, delta.counted);
	KUNIT_EXPECT_EQ(test, delta.inexact, 0);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_USER].cycles, 250);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_USER].instructions, 200);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_KERNEL].cycles, 20);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_KERNEL].instructions, 5);

	/* Counters are 64-bit: a wrap past U64_MAX still gives the delta. */
	prev.counts[RECOUNT_LEVEL_USER].cycles = U64_MAX - 5;
	now.counts[RECOUNT_LEVEL_USER].cycles = 10;
	recount_counts_delta(&prev, &now, &delta);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_USER].cycles, 16);

	/* No counters at this point (CPU hotplug): nothing, nothing lost. */
	now.tried = 0;
	now.valid = 0;
	recount_counts_delta(&prev, &now, &delta);
	KUNIT_EXPECT_FALSE(test, delta.counted);
	KUNIT_EXPECT_EQ(test, delta.inexact, 0);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_USER].cycles, 0);

	/* Read but failed, at either end: nothing, and it says so. */
	now.tried = RECOUNT_SNAP_PMU;
	recount_counts_delta(&prev, &now, &delta);
	KUNIT_EXPECT_FALSE(test, delta.counted);
	KUNIT_EXPECT_EQ(test, delta.inexact,
			RECOUNT_INEXACT_CYCLES | RECOUNT_INEXACT_INSTRUCTIONS);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_KERNEL].instructions, 0);
	now.valid = RECOUNT_SNAP_PMU;
	prev.valid = 0;
	recount_counts_delta(&prev, &now, &delta);
	KUNIT_EXPECT_NE(test, delta.inexact, 0);

	/* Counters back after none (a CPU online): a new base, nothing lost. */
	prev.tried = 0;
	recount_counts_delta(&prev, &now, &delta);
	KUNIT_EXPECT_FALSE(test, delta.counted);
	KUNIT_EXPECT_EQ(test, delta.inexact, 0);
}

static void recount_test_usage_add_sum(struct kunit *test)
{
	struct recount_delta d1 = { .time = { 7, 0 }, .counted = true };
	struct recount_delta d2 = { .time = { 11, 0 }, .counted = true };
	struct recount_delta d3 = { .time = { 0, 7 }, .counted = true };
	/* Counts that could not be read: none, and marked (recount_counts_delta()). */
	struct recount_delta lost = { .inexact = RECOUNT_INEXACT_CYCLES };
	struct recount_usage a = {}, b = {}, copy;

	d1.counts[RECOUNT_LEVEL_USER] = (struct recount_counts){ 70, 35 };
	d1.counts[RECOUNT_LEVEL_KERNEL] = (struct recount_counts){ 3, 1 };
	d2.counts[RECOUNT_LEVEL_USER] = (struct recount_counts){ 110, 55 };

	d3.counts[RECOUNT_LEVEL_USER] = d1.counts[RECOUNT_LEVEL_USER];
	d3.counts[RECOUNT_LEVEL_KERNEL] = d1.counts[RECOUNT_LEVEL_KERNEL];
	recount_usage_add(&a, &d1, 3);
	recount_usage_add(&a, &lost, 0);
	recount_usage_add(&a, &d2, 4);
	recount_usage_add(&a, &d3, 5);
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_USER].time, 18);
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_KERNEL].time, 7);
	/* Counts go to their own level, whatever the time's. */
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_USER].cycles, 250);
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_USER].instructions, 125);
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_KERNEL].cycles, 6);
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_KERNEL].instructions, 2);
	KUNIT_EXPECT_EQ(test, a.energy, 12);
	/* Inexact is sticky. */
	KUNIT_EXPECT_EQ(test, a.inexact, RECOUNT_INEXACT_CYCLES);

	lost.inexact = RECOUNT_INEXACT_INSTRUCTIONS;
	lost.time[RECOUNT_LEVEL_KERNEL] = 11;
	recount_usage_add(&b, &lost, 1);
	recount_usage_sum(&b, &a);
	KUNIT_EXPECT_EQ(test, b.level[RECOUNT_LEVEL_USER].time, 18);
	KUNIT_EXPECT_EQ(test, b.level[RECOUNT_LEVEL_KERNEL].time, 18);
	KUNIT_EXPECT_EQ(test, b.level[RECOUNT_LEVEL_USER].cycles, 250);
	KUNIT_EXPECT_EQ(test, b.energy, 13);
	KUNIT_EXPECT_EQ(test, b.inexact, RECOUNT_INEXACT_CYCLES | RECOUNT_INEXACT_INSTRUCTIONS);

	/* A delta without counts adds its time and nothing else. */
	d1.counted = false;
	recount_usage_add(&a, &d1, 0);
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_USER].time, 25);
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_USER].cycles, 250);
	KUNIT_EXPECT_EQ(test, a.energy, 12);

	recount_usage_copy(&copy, &b);
	KUNIT_EXPECT_MEMEQ(test, &copy, &b, sizeof(b));
}

/*
 * Waits add their time and count; the longest is kept with its end, and a
 * sum keeps the longest of either, the earlier where they are as long.
 */
static void recount_test_wait_stats(struct kunit *test)
{
	struct recount_runtime a = {}, b = {}, sum = {};
	struct recount_wait_stats *q = &a.wait[RECOUNT_WAIT_QUEUE];
	struct recount_wait_stats *f = &a.wait[RECOUNT_WAIT_FAULT];

	KUNIT_EXPECT_EQ(test, recount_wait_stats_add(q, 5, 100), 100);
	KUNIT_EXPECT_EQ(test, recount_wait_stats_add(q, 30, 200), 200);
	/* Not longer: when it ended is not needed, nor read. */
	KUNIT_EXPECT_EQ(test, recount_wait_stats_add(q, 30, 0), 0);
	KUNIT_EXPECT_EQ(test, recount_wait_stats_add(q, 2, 0), 0);
	KUNIT_EXPECT_EQ(test, q->time, 67);
	KUNIT_EXPECT_EQ(test, q->count, 4);
	KUNIT_EXPECT_EQ(test, q->max, 30);
	KUNIT_EXPECT_EQ(test, q->max_at, 200);
	/* Longer and no end given: the end is read now. */
	recount_wait_stats_add(f, 1, 0);
	KUNIT_EXPECT_GT(test, f->max_at, 0);
	KUNIT_EXPECT_LE(test, f->max_at, ktime_get_boot_fast_ns());

	recount_wait_stats_add(&b.wait[RECOUNT_WAIT_QUEUE], 30, 150);
	recount_wait_stats_add(&b.wait[RECOUNT_WAIT_LOCK], 9, 300);
	recount_runtime_sum(&sum, &a);
	recount_runtime_sum(&sum, &b);
	KUNIT_EXPECT_EQ(test, sum.wait[RECOUNT_WAIT_QUEUE].time, 97);
	KUNIT_EXPECT_EQ(test, sum.wait[RECOUNT_WAIT_QUEUE].count, 5);
	KUNIT_EXPECT_EQ(test, sum.wait[RECOUNT_WAIT_QUEUE].max, 30);
	KUNIT_EXPECT_EQ(test, sum.wait[RECOUNT_WAIT_QUEUE].max_at, 150);
	KUNIT_EXPECT_EQ(test, sum.wait[RECOUNT_WAIT_FAULT].max_at, f->max_at);
	KUNIT_EXPECT_EQ(test, sum.wait[RECOUNT_WAIT_LOCK].count, 1);
	KUNIT_EXPECT_EQ(test, sum.wait[RECOUNT_WAIT_LOCK].max, 9);
	KUNIT_EXPECT_EQ(test, sum.wait[RECOUNT_WAIT_LOCK].max_at, 300);
	/* A longer one wins whenever it ended. */
	recount_wait_stats_add(&b.wait[RECOUNT_WAIT_LOCK], 10, 400);
	recount_runtime_sum(&sum, &b);
	KUNIT_EXPECT_EQ(test, sum.wait[RECOUNT_WAIT_LOCK].max, 10);
	KUNIT_EXPECT_EQ(test, sum.wait[RECOUNT_WAIT_LOCK].max_at, 400);

	recount_runtime_copy(&b, &sum);
	KUNIT_EXPECT_MEMEQ(test, &b, &sum, sizeof(sum));
}

static void recount_test_energy_scale(struct kunit *test)
{
	/* 1 W for 1 s is 1 J. */
	KUNIT_EXPECT_EQ(test, recount_energy_scale(NSEC_PER_SEC, recount_energy_factor(1000)),
			1000000000ULL);
	/* 1 kW, the highest power, for 11.6 days: 10^18 nJ, no overflow. */
	KUNIT_EXPECT_EQ(test, recount_energy_scale(1000000ULL * NSEC_PER_SEC,
						   recount_energy_factor(1000000)),
			1000000000000000000ULL);
	/* A power that is no whole number of nJ/ns: exact to a part in 10^9. */
	KUNIT_EXPECT_LE(test, 333000000000ULL -
			recount_energy_scale(1000ULL * NSEC_PER_SEC, recount_energy_factor(333)),
			333ULL);
	/* No power, no energy; no time, no energy. */
	KUNIT_EXPECT_EQ(test, recount_energy_scale(NSEC_PER_SEC, recount_energy_factor(0)), 0);
	KUNIT_EXPECT_EQ(test, recount_energy_scale(0, recount_energy_factor(5000)), 0);
	/* Ten years of an idle CPU drawing 1 mW in one interval: 315 kJ. */
	KUNIT_EXPECT_EQ(test, recount_energy_scale(315360000ULL * NSEC_PER_SEC,
						   recount_energy_factor(1)) / NSEC_PER_SEC,
			315360ULL - 1);
}

static void recount_test_kind_of_capacity(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, recount_kind_of_capacity(1024, 1024), RECOUNT_KIND_PERFORMANCE);
	KUNIT_EXPECT_EQ(test, recount_kind_of_capacity(512, 1024), RECOUNT_KIND_EFFICIENCY);
	/* Three tiers: the middle one is efficiency. */
	KUNIT_EXPECT_EQ(test, recount_kind_of_capacity(800, 1024), RECOUNT_KIND_EFFICIENCY);
	/* A homogeneous machine has only performance CPUs. */
	KUNIT_EXPECT_EQ(test, recount_kind_of_capacity(1024, 1024), RECOUNT_KIND_PERFORMANCE);
	KUNIT_EXPECT_EQ(test, recount_kind_of_capacity(0, 0), RECOUNT_KIND_PERFORMANCE);
}

/*
 * The reader runs until it has had to retry this many reads (it read while
 * the writer wrote) and completed as many, or for 10 seconds.
 */
#define RECOUNT_TEST_RETRIES	100
#define RECOUNT_TEST_READS	100

/* A track as a thread's: a usage under a seqcount_t. */
struct recount_test_track {
	seqcount_t seq;
	struct recount_usage usage;
};

struct recount_test_race {
	struct recount_test_track track[2];
	struct completion started;
	bool stop;
};

/*
 * Writes as an accounting point does: both tracks, nested sections. Every
 * metric, a chosen event's count too, grows by the same amount at both
 * levels, so a whole read has them all equal: a torn one, say cycles of one
 * update and instructions of another, does not.
 */
static int recount_test_writer(void *data)
{
	struct recount_test_race *race = data;
	struct recount_delta one = { .time = { 1, 1 }, .counted = true };
	struct recount_event_delta events = { .gen = 1, .counted = 1 };
	unsigned long flags;
	int l;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		one.counts[l] = (struct recount_counts){ 1, 1 };
		events.count[0][l] = 1;
	}

	complete(&race->started);
	while (!READ_ONCE(race->stop)) {
		local_irq_save(flags);
		raw_write_seqcount_begin(&race->track[0].seq);
		raw_write_seqcount_begin(&race->track[1].seq);
		recount_usage_add(&race->track[0].usage, &one, 2);
		recount_usage_add_events(&race->track[0].usage, &events);
		recount_usage_add(&race->track[1].usage, &one, 2);
		recount_usage_add_events(&race->track[1].usage, &events);
		raw_write_seqcount_end(&race->track[1].seq);
		raw_write_seqcount_end(&race->track[0].seq);
		local_irq_restore(flags);
		/*
		 * Real writers pause between updates: on a slow (debug,
		 * emulated) kernel a writer that never did would starve the
		 * reader, whose copy takes longer than an update.
		 */
		ndelay(500);
		/* Not to starve the reader, should it share the CPU. */
		cond_resched();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* Is @u whole: every metric of both levels, and energy, equal? */
static bool recount_test_whole(const struct recount_usage *u)
{
	const struct recount_metrics *user = &u->level[RECOUNT_LEVEL_USER];
	const struct recount_metrics *kernel = &u->level[RECOUNT_LEVEL_KERNEL];

	return user->time == kernel->time && user->cycles == user->time &&
	       user->instructions == user->time && kernel->cycles == user->time &&
	       kernel->instructions == user->time && u->energy == 2 * user->time &&
	       user->event[0] == user->time && kernel->event[0] == user->time &&
	       (!user->time || u->event_gen == 1);
}

/*
 * A reader on one CPU, a writer on another: every read is whole (every
 * metric equal, as the writer always adds to all in one update, so that a
 * CPI computed from it is never torn) and never goes backwards, however
 * often the reader has to retry.
 */
static void recount_test_track_read_race(struct kunit *test)
{
	unsigned long reads = 0, retries = 0, torn = 0, moved = 0;
	struct recount_test_race *race;
	u64 last[2] = { 0, 0 }, deadline;
	struct task_struct *writer;
	int cpu, other, i;

	race = kunit_kzalloc(test, sizeof(*race), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, race);
	init_completion(&race->started);
	seqcount_init(&race->track[0].seq);
	seqcount_init(&race->track[1].seq);

	cpu = get_cpu();
	other = cpumask_any_but(cpu_online_mask, cpu);
	put_cpu();
	if (other >= nr_cpu_ids)
		kunit_skip(test, "needs a second online CPU for the writer");

	writer = kthread_create(recount_test_writer, race, "recount_kunit_writer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(writer));
	kthread_bind(writer, other);
	wake_up_process(writer);
	wait_for_completion(&race->started);

	deadline = ktime_get_ns() + 10 * NSEC_PER_SEC;
	do {
		for (i = 0; i < 2; i++) {
			const struct recount_test_track *t = &race->track[i];
			struct recount_usage u;
			unsigned int seq;

			/* recount_thread_read(), counting its retries. */
			for (;;) {
				seq = read_seqcount_begin(&t->seq);
				recount_usage_copy(&u, &t->usage);
				if (!read_seqcount_retry(&t->seq, seq))
					break;
				retries++;
			}
			if (!recount_test_whole(&u))
				torn++;
			if (u.level[RECOUNT_LEVEL_USER].time < last[i])
				torn++;
			if (u.level[RECOUNT_LEVEL_USER].time != last[i])
				moved++;
			last[i] = u.level[RECOUNT_LEVEL_USER].time;
			reads++;
		}
		cond_resched();
	} while ((retries < RECOUNT_TEST_RETRIES || reads < RECOUNT_TEST_READS) &&
		 ktime_get_ns() < deadline);

	WRITE_ONCE(race->stop, true);
	kthread_stop(writer);

	kunit_info(test, "%lu reads, %lu retried, %lu saw a new value", reads, retries, moved);
	KUNIT_EXPECT_EQ_MSG(test, torn, 0, "%lu torn reads", torn);
	/* The reads overlapped the writes, even in the middle of an update. */
	KUNIT_EXPECT_GT(test, moved, 2);
	KUNIT_EXPECT_GT(test, retries, 0);
}

struct recount_test_accounter {
	struct completion started;
	bool stop;
};

/*
 * Take accounting points over and over, the real code: recount_update_current()
 * folds the CPU's interval in progress, its counters and energy into this
 * thread's track and the CPU's, as a context switch or a tick does.
 */
static int recount_test_accounting(void *data)
{
	struct recount_test_accounter *a = data;

	complete(&a->started);
	while (!READ_ONCE(a->stop)) {
		int i;

		recount_update_current();
		/* Work of a steady CPI between two points. */
		for (i = 0; i < 100; i++)
			cpu_relax();
		cond_resched();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* The sum over kinds of @usage[]. */
static void recount_test_total(struct recount_usage *total,
			       const struct recount_usage usage[RECOUNT_NR_KINDS])
{
	int k;

	memset(total, 0, sizeof(*total));
	for (k = 0; k < RECOUNT_NR_KINDS; k++)
		recount_usage_sum(total, &usage[k]);
}

/* The first metric of @b below @a's, or NULL. */
static const char *recount_test_decrease(const struct recount_usage *a,
					 const struct recount_usage *b)
{
	int l;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		if (b->level[l].time < a->level[l].time)
			return "time";
		if (b->level[l].cycles < a->level[l].cycles)
			return "cycles";
		if (b->level[l].instructions < a->level[l].instructions)
			return "instructions";
	}
	return b->energy < a->energy ? "energy" : NULL;
}

static u64 recount_test_time(const struct recount_usage *u)
{
	return u->level[RECOUNT_LEVEL_USER].time + u->level[RECOUNT_LEVEL_KERNEL].time;
}

/* What a CPU was charged: idle time and every level's. */
static u64 recount_test_cpu_total(const struct recount_cpu_usage *c)
{
	return recount_test_time(&c->usage) + c->idle_time;
}

/* What a CPU was charged from @a to @b. */
static u64 recount_test_cpu_time(const struct recount_cpu_usage *a,
				 const struct recount_cpu_usage *b)
{
	return recount_test_cpu_total(b) - recount_test_cpu_total(a);
}

/*
 * Did @b's kernel counts move from @a's at a CPI more than twice off the
 * CPI since @first? A loop's whole accounting points keep its CPI; a read
 * of the cycles of one point and the instructions of another does not.
 */
static bool recount_test_torn(const struct recount_usage *first,
			      const struct recount_usage *a, const struct recount_usage *b)
{
	const struct recount_metrics *f = &first->level[RECOUNT_LEVEL_KERNEL];
	const struct recount_metrics *x = &a->level[RECOUNT_LEVEL_KERNEL];
	const struct recount_metrics *y = &b->level[RECOUNT_LEVEL_KERNEL];
	u64 dc = y->cycles - x->cycles, di = y->instructions - x->instructions;
	u64 c = y->cycles - f->cycles, i = y->instructions - f->instructions;

	if (!dc && !di)
		return false;
	return !dc || !di || dc * i > 2 * di * c || di * c > 2 * dc * i;
}

/*
 * Run @fn(@data), which completes @started first, in a kthread bound to an
 * online CPU of @cpus other than the caller's, which the caller stays on
 * until it has stopped the kthread (then migrate_enable()). Skips the test,
 * saying @none, if there is none. Returns the kthread; *@cpu gets its CPU.
 */
static struct task_struct *recount_test_run_beside(struct kunit *test, const struct cpumask *cpus,
						   const char *none, int (*fn)(void *),
						   void *data, struct completion *started,
						   const char *name, int *cpu)
{
	struct task_struct *t;

	init_completion(started);
	t = kthread_create(fn, data, "%s", name);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	migrate_disable();
	*cpu = cpumask_any_and_but(cpus, cpu_online_mask, raw_smp_processor_id());
	if (*cpu >= nr_cpu_ids) {
		migrate_enable();
		kthread_stop(t);
		kunit_skip(test, "%s", none);
	}
	kthread_bind(t, *cpu);
	wake_up_process(t);
	wait_for_completion(started);
	return t;
}

/*
 * A thread on one CPU takes real accounting points as fast as it can; a
 * reader on another reads it and its CPU as fast as it can. No metric of
 * either ever goes back; neither grows by more than the wall time since the
 * first read (an interval counted twice, once folded and once in progress,
 * would); and where the PMU counts exactly, the thread's kernel cycles and
 * instructions move together from read to read (at the CPI of the whole
 * run, within a factor of two), as they would not if a read took them from
 * different accounting points.
 */
static void recount_test_accounting_race(struct kunit *test)
{
	struct recount_usage usage[RECOUNT_NR_KINDS], first, thread[2];
	unsigned long reads = 0, moved = 0, counts_moved = 0, torn = 0;
	struct recount_test_accounter *a;
	struct recount_cpu_usage cpu[2];
	struct recount_runtime runtime;
	struct task_struct *writer;
	u64 t0, wall, cpu_first, deadline;
	const char *m = NULL;
	bool counted;
	int other;

	if (!recount_enabled())
		kunit_skip(test, "recount is off (boot with recount=on)");
	counted = recount_metrics_supported() & RECOUNT_METRIC_INSTRUCTIONS;
	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	/* The reader stays on its CPU, the writer on another. */
	writer = recount_test_run_beside(test, cpu_online_mask, "needs a second online CPU",
					 recount_test_accounting, a, &a->started,
					 "recount_kunit_acct", &other);

	t0 = local_clock();
	recount_thread_read(writer, usage, &runtime);
	recount_test_total(&first, usage);
	thread[0] = first;
	recount_cpu_read(other, &cpu[0]);
	cpu_first = recount_test_cpu_total(&cpu[0]);
	deadline = ktime_get_ns() + 2 * NSEC_PER_SEC;
	while (ktime_get_ns() < deadline) {
		recount_thread_read(writer, usage, &runtime);
		recount_test_total(&thread[1], usage);
		recount_cpu_read(other, &cpu[1]);
		/* Clocks differ by parts per million; allow 0.1%. */
		wall = local_clock() - t0;
		wall += wall / 1000 + 10 * NSEC_PER_USEC;
		reads++;
		m = recount_test_decrease(&thread[0], &thread[1]);
		if (m) {
			KUNIT_FAIL(test, "read %lu: the thread's %s went back", reads, m);
			break;
		}
		m = recount_test_decrease(&cpu[0].usage, &cpu[1].usage);
		if (m || cpu[1].idle_time < cpu[0].idle_time) {
			KUNIT_FAIL(test, "read %lu: its CPU's %s went back", reads,
				   m ?: "idle time");
			break;
		}
		if (recount_test_time(&thread[1]) - recount_test_time(&first) > wall ||
		    recount_test_cpu_total(&cpu[1]) - cpu_first > wall) {
			KUNIT_FAIL(test, "read %lu: more time than the %llu ns since the first",
				   reads, wall);
			break;
		}
		moved += recount_test_time(&thread[1]) != recount_test_time(&thread[0]);
		if (counted && !thread[1].inexact) {
			counts_moved += thread[1].level[RECOUNT_LEVEL_KERNEL].instructions !=
					thread[0].level[RECOUNT_LEVEL_KERNEL].instructions;
			torn += recount_test_torn(&first, &thread[0], &thread[1]);
		}
		thread[0] = thread[1];
		cpu[0] = cpu[1];
		cond_resched();
	}
	WRITE_ONCE(a->stop, true);
	kthread_stop(writer);
	migrate_enable();

	kunit_info(test, "%lu reads, %lu saw the thread's time move, %lu its counts, %lu torn",
		   reads, moved, counts_moved, torn);
	KUNIT_EXPECT_EQ(test, torn, 0);
	KUNIT_EXPECT_GT(test, moved, 10);
}

struct recount_test_injection {
	struct completion done;
	struct hrtimer step;	/* steps the clock back, if @stepping */
	struct recount_cpu_usage a, b;	/* its CPU's, before and after */
	struct recount_cpu_usage at_step;	/* its CPU's, right after the step */
	u64 thread_time;	/* what the thread was charged meanwhile, ns */
	u64 wall;		/* from the CPU's first read to its second, ns */
	u64 step_at;		/* when the clock stepped, by ktime_get_ns() */
	u64 since_step;		/* from the step to the CPU's second read, ns */
	bool enabled;
	bool stepping;
	bool stepped;		/* in an interrupt of the injected idle */
};

static u64 recount_test_self_time(void)
{
	struct recount_usage usage[RECOUNT_NR_KINDS], total;
	struct recount_runtime runtime;

	recount_update_current();
	recount_thread_read(current, usage, &runtime);
	recount_test_total(&total, usage);
	return recount_test_time(&total);
}

/*
 * Spin @ns by the clock, not by mdelay(): under QEMU's TCG, its calibrated
 * loop may take a tenth of its time.
 */
static void recount_test_spin(u64 ns)
{
	u64 end = ktime_get_ns() + ns;

	while (ktime_get_ns() < end)
		cpu_relax();
}

/*
 * A kthread that makes the user/kernel transitions of its CPU, as many as a
 * reader's stub of recount_clock_of() asks for at a time, in the reader's
 * sample of that CPU's user clock (recount_test_sampled_clock()).
 */
struct recount_test_flips {
	struct completion started;
	int asked;		/* transitions to make, or RECOUNT_TEST_HOME; 0 once made */
	u64 user_ns;		/* to spend in each return to user mode */
	u64 kernel_ns;		/* to spend in each entry from user mode */
	bool stop;
	/* The stub's, in the reader: */
	unsigned int calls;
	bool passthrough;
	bool late;		/* the flipper did not answer: ask no more */
	struct recount_cpu_usage truth;	/* the CPU's at the split clock read */
};

static bool recount_test_user_mode(void)
{
	return recount_user_clock_running(__this_cpu_read(recount_user_clock));
}

/* @n transitions of the local CPU, interrupts disabled. */
static void recount_test_flip(int n, u64 user_ns, u64 kernel_ns)
{
	while (n--) {
		if (recount_test_user_mode()) {
			recount_user_exit();
			recount_test_spin(kernel_ns);
		} else {
			recount_user_enter();
			recount_test_spin(user_ns);
		}
	}
}

/* Asked of a flipper: back to kernel mode, if it is not there. */
#define RECOUNT_TEST_HOME	(-1)

/*
 * The CPU stays "in user mode" only with interrupts disabled, so that
 * nothing else runs on it while its user clock runs: if not asked for more
 * within 100 ms, or told to stop, it comes back to kernel mode by itself.
 * An IPI to it waits for that.
 */
static int recount_test_flipper(void *data)
{
	struct recount_test_flips *f = data;
	bool in_user = false;
	u64 until = 0;
	int n;

	complete(&f->started);
	for (;;) {
		bool stop = READ_ONCE(f->stop) || kthread_should_stop();
		/* Acquire: the spans asked for, stored before. */
		int asked = stop ? 0 : smp_load_acquire(&f->asked);

		if (asked) {
			n = asked == RECOUNT_TEST_HOME ? in_user : asked;
			if (n && !in_user)
				local_irq_disable();
			recount_test_flip(n, f->user_ns, f->kernel_ns);
			in_user = recount_test_user_mode();
			if (n && !in_user)
				local_irq_enable();
			until = ktime_get_ns() + 100 * NSEC_PER_MSEC;
			/* Release: the transitions, made before. */
			smp_store_release(&f->asked, 0);
		} else if (in_user && (stop || ktime_get_ns() > until)) {
			recount_test_flip(1, 0, 0);
			in_user = false;
			local_irq_enable();
		} else if (stop && !in_user) {
			break;
		} else if (!in_user) {
			cond_resched();
		}
		cpu_relax();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * Ask the flipper for @n transitions and wait for them, at most a second;
 * if it does not answer in time, ask it nothing more.
 */
static void recount_test_flips_ask(struct recount_test_flips *f, int n, u64 user_ns,
				   u64 kernel_ns)
{
	u64 deadline = ktime_get_ns() + NSEC_PER_SEC;

	if (f->late)
		return;
	f->user_ns = user_ns;
	f->kernel_ns = kernel_ns;
	/* Release: the spans, stored before. */
	smp_store_release(&f->asked, n);
	/* Acquire: the flipper's transitions, made before it stored 0. */
	while (smp_load_acquire(&f->asked)) {
		if (ktime_get_ns() > deadline) {
			f->late = true;
			return;
		}
		cpu_relax();
	}
}

/*
 * The stub of recount_clock_of() in the reader's sample of the flipper's
 * CPU (recount_user_clock_sample()), between its two reads of the user
 * clock. Each call makes the reads' window long. The first
 * RECOUNT_SAMPLE_TRIES of every RECOUNT_SAMPLE_TRIES + 1 calls have two
 * transitions made, with 2 us of user mode between them, which no reader
 * resolves; the next 129: as many as one, modulo 128, 64 before the clock
 * read, spending 2 us in each return to user mode, and 65 after it,
 * spending 2 us in each entry from user mode. Whichever word a reader that
 * trusts the count picks, it misplaces 64 us between the levels; what the
 * CPU did up to the clock read is read at the read (truth).
 */
static u64 recount_test_sampled_clock(unsigned int cpu)
{
	struct recount_test_flips *f = kunit_get_current_test()->priv;
	u64 now;

	if (f->passthrough)
		return __recount_clock_of(cpu);
	if (++f->calls % (RECOUNT_SAMPLE_TRIES + 1)) {
		recount_test_flips_ask(f, 2, 2 * NSEC_PER_USEC, 0);
		recount_test_spin(NSEC_PER_USEC);
		return __recount_clock_of(cpu);
	}
	recount_test_flips_ask(f, 64, 2 * NSEC_PER_USEC, 0);
	f->passthrough = true;
	recount_cpu_read(cpu, &f->truth);
	f->passthrough = false;
	now = __recount_clock_of(cpu);
	recount_test_flips_ask(f, 65, 0, 2 * NSEC_PER_USEC);
	return now;
}

/* The online CPUs that are isolated (cpu_is_isolated()), or those that are not. */
static struct cpumask *recount_test_cpus(struct kunit *test, bool isolated)
{
	struct cpumask *cpus = kunit_kzalloc(test, sizeof(*cpus), GFP_KERNEL);
	int cpu;

	KUNIT_ASSERT_NOT_NULL(test, cpus);
	for_each_online_cpu(cpu)
		if (cpu_is_isolated(cpu) == isolated)
			cpumask_set_cpu(cpu, cpus);
	return cpus;
}

/*
 * A reader whose every window is long, as a vCPU its host keeps preempting,
 * reads a CPU of @cpus, which the stub makes 129 transitions in one window
 * after RECOUNT_SAMPLE_TRIES long ones. Returns how many times the stub was
 * called in the read; *@off gets how far the user time read is from what
 * the CPU had at the clock read the read used: the stub's if it was called
 * more often, else the one in the IPI, which the read after, with the CPU
 * quiet since, reads too.
 */
static unsigned int recount_test_long_windows(struct kunit *test, const struct cpumask *cpus,
					      const char *none, u64 *off)
{
	struct recount_cpu_usage got, after;
	struct recount_test_flips *f;
	struct task_struct *flipper;
	struct recount_cpu *rc;
	int other, tries;
	unsigned int seq;
	u64 want;

	if (!recount_enabled())
		kunit_skip(test, "recount is off (boot with recount=on)");
	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	test->priv = f;
	f->passthrough = true;
	kunit_activate_static_stub(test, recount_clock_of, recount_test_sampled_clock);
	flipper = recount_test_run_beside(test, cpus, none, recount_test_flipper, f, &f->started,
					  "recount_kunit_flip", &other);
	rc = recount_cpu_ptr(other);

	/* Again if the CPU took an accounting point meanwhile: the read retried. */
	for (tries = 0; tries < 10; tries++) {
		f->calls = 0;
		seq = raw_read_seqcount_begin(&rc->seq);
		f->passthrough = false;
		recount_cpu_read(other, &got);
		f->passthrough = true;
		if (!read_seqcount_retry(&rc->seq, seq))
			break;
		recount_test_flips_ask(f, RECOUNT_TEST_HOME, 0, 0);
	}
	recount_test_flips_ask(f, RECOUNT_TEST_HOME, 0, 0);
	recount_cpu_read(other, &after);

	WRITE_ONCE(f->stop, true);
	kthread_stop(flipper);
	migrate_enable();
	kunit_deactivate_static_stub(test, recount_clock_of);

	KUNIT_ASSERT_FALSE_MSG(test, f->late, "the flipper did not answer within a second");
	KUNIT_ASSERT_LT_MSG(test, tries, 10, "the CPU took an accounting point in every read");
	if (f->calls > RECOUNT_SAMPLE_TRIES)
		want = f->truth.usage.level[RECOUNT_LEVEL_USER].time;
	else
		want = after.usage.level[RECOUNT_LEVEL_USER].time;
	*off = abs_diff(got.usage.level[RECOUNT_LEVEL_USER].time, want);
	kunit_info(test, "CPU %d: %u reads of its user clock, %d retried, %llu ns off",
		   other, f->calls, tries, *off);
	return f->calls;
}

/*
 * More than 128 transitions may come in a long window, so the count of
 * them, modulo 128, cannot tell a reader which word held at its clock
 * read: after RECOUNT_SAMPLE_TRIES long windows the reader asks the CPU (an
 * IPI), before the stub makes 129 in one, and reads the user time exactly.
 * Were the count trusted, it would be 64 us off.
 */
static void recount_test_user_clock_ask(struct kunit *test)
{
	unsigned int calls;
	u64 off;

	calls = recount_test_long_windows(test, recount_test_cpus(test, false),
					  "needs a second CPU that is not isolated", &off);
	KUNIT_EXPECT_EQ_MSG(test, calls, RECOUNT_SAMPLE_TRIES,
			    "the reader did not ask the CPU after %d long windows",
			    RECOUNT_SAMPLE_TRIES);
	KUNIT_EXPECT_LE_MSG(test, off, NSEC_PER_USEC,
			    "the user time read was %llu ns off: the count of transitions was trusted",
			    off);
}

/*
 * No read sends an isolated CPU (nohz_full, isolcpus) an IPI: a reader of
 * one trusts the count after RECOUNT_SAMPLE_TRIES long windows, and the
 * stub's 129 transitions in one window misplace user time.
 */
static void recount_test_user_clock_isolated(struct kunit *test)
{
	struct cpumask *housekeeping = recount_test_cpus(test, false);
	unsigned int calls;
	u64 off;

	/* The reader on a CPU that is not isolated, beside an isolated one. */
	if (cpumask_empty(housekeeping) ||
	    set_cpus_allowed_ptr(current, housekeeping))
		kunit_skip(test, "no CPU that is not isolated for the reader");
	calls = recount_test_long_windows(test, recount_test_cpus(test, true),
					  "no isolated CPU (boot with nohz_full=)", &off);
	KUNIT_EXPECT_EQ_MSG(test, calls, RECOUNT_SAMPLE_TRIES + 1,
			    "the reader did not trust the count after %d long windows",
			    RECOUNT_SAMPLE_TRIES);
	KUNIT_EXPECT_GT(test, off, 10 * NSEC_PER_USEC);
}

/*
 * recount's clock steps back a second on this CPU, in an interrupt of its
 * idle time: its last accounting point is moved a second ahead of its clock.
 * Not if the CPU does not idle (the injection has not begun), nor while
 * recount is switched off: the CPU is then stopping (recount_cpu_stop()),
 * and its state is written from another CPU only after an RCU grace period,
 * which this interrupt holds off once it saw the key on.
 */
static enum hrtimer_restart recount_test_step_back(struct hrtimer *timer)
{
	struct recount_test_injection *inj = container_of(timer, typeof(*inj), step);
	struct recount_cpu *rc = recount_cpu_ptr(smp_processor_id());

	if (!recount_enabled() || READ_ONCE(rc->state) != RECOUNT_CPU_IDLE)
		return HRTIMER_NORESTART;
	raw_write_seqcount_begin(&rc->seq);
	WRITE_ONCE(rc->at, rc->at + div64_u64((u64)NSEC_PER_SEC << 32, rc->factor));
	raw_write_seqcount_end(&rc->seq);
	recount_cpu_read(smp_processor_id(), &inj->at_step);
	inj->step_at = ktime_get_ns();
	inj->stepped = true;
	return HRTIMER_NORESTART;
}

/*
 * Inject 20 ms of idle on this CPU, as a powerclamp thread does; if
 * @inj->stepping, 100 ms, and recount's clock steps back a second 50 ms
 * after the injection is set up.
 */
static int recount_test_injector(void *data)
{
	struct recount_test_injection *inj = data;
	u64 time, now;

	sched_set_fifo(current);
	time = recount_test_self_time();
	/* This thread has run: it has time unless recount is off. */
	inj->enabled = time;
	inj->wall = ktime_get_ns();
	recount_cpu_read(raw_smp_processor_id(), &inj->a);
	if (inj->stepping) {
		hrtimer_init(&inj->step, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		inj->step.function = recount_test_step_back;
		hrtimer_start(&inj->step, ms_to_ktime(50), HRTIMER_MODE_REL_PINNED_HARD);
	}
	play_idle_precise((inj->stepping ? 100 : 20) * NSEC_PER_MSEC, U64_MAX);
	if (inj->stepping)
		hrtimer_cancel(&inj->step);
	inj->thread_time = recount_test_self_time() - time;
	recount_cpu_read(raw_smp_processor_id(), &inj->b);
	now = ktime_get_ns();
	if (inj->stepped)
		inj->since_step = now - inj->step_at;
	inj->wall = now - inj->wall;
	complete(&inj->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* Fill the record of the calling thread, its process or its CPU. */
static int recount_test_fill(struct sk_buff *msg, u32 scope, const struct recount_nl_format *fmt)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	int err;

	rcu_read_lock();
	if (scope == RECOUNT_SCOPE_THREADS)
		err = recount_nl_fill_thread(msg, current, ns, fmt);
	else if (scope == RECOUNT_SCOPE_PROCESSES)
		err = recount_nl_fill_process(msg, current, ns, fmt);
	else
		err = recount_nl_fill_cpu(msg, raw_smp_processor_id(), fmt);
	rcu_read_unlock();
	return err;
}

/*
 * Records are written in room checked once per record: no record of any
 * format is larger than recount_nl_fill_size() says, every one is a whole
 * stream of attributes, and one that does not fit is not written at all.
 */
static void recount_test_record_size(struct kunit *test)
{
	static const u32 scopes[] = {
		RECOUNT_SCOPE_THREADS, RECOUNT_SCOPE_PROCESSES, RECOUNT_SCOPE_CPUS,
	};
	struct recount_nl_format fmt = {};
	unsigned int s, f, off, len;
	const struct nlattr *nla;
	struct sk_buff *msg;
	size_t size;
	int err, rem;

	msg = alloc_skb(2 * recount_nl_record_size(), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	for (s = 0; s < ARRAY_SIZE(scopes); s++) {
		/*
		 * Lean or not, state or not, each withheld, each version; at
		 * an offset of 0 and 4 bytes (a record follows the 20 bytes of
		 * its headers), for where 64-bit values are padded.
		 */
		for (f = 0; f < 32 * (RECOUNT_RUNTIME_VERSION + 1); f++) {
			fmt.lean = f & 1;
			fmt.state = f & 2;
			fmt.withheld = (f >> 2) & (RECOUNT_WITHHELD_USER_PMU |
						   RECOUNT_WITHHELD_KERNEL_PMU);
			off = f & 16 ? 4 : 0;
			fmt.version = f >> 5;
			if (scopes[s] == RECOUNT_SCOPE_CPUS && fmt.version)
				continue;
			size = recount_nl_fill_size(scopes[s], &fmt);
			KUNIT_EXPECT_LE(test, size, recount_nl_record_size());

			skb_trim(msg, 0);
			__skb_put_zero(msg, off);
			err = recount_test_fill(msg, scopes[s], &fmt);
			KUNIT_EXPECT_EQ(test, err, 0);
			KUNIT_EXPECT_GT(test, msg->len, off);
			KUNIT_EXPECT_LE_MSG(test, msg->len - off, size, "scope %u, format %u",
					    scopes[s], f);
			nla_for_each_attr(nla, (struct nlattr *)(msg->data + off), msg->len - off,
					  rem)
				;
			KUNIT_EXPECT_EQ_MSG(test, rem, 0, "scope %u, format %u", scopes[s], f);

			/* One byte short of the room it may take: none of it. */
			skb_trim(msg, 0);
			__skb_put(msg, skb_tailroom(msg) - (size - 1));
			len = msg->len;
			err = recount_test_fill(msg, scopes[s], &fmt);
			KUNIT_EXPECT_EQ(test, err, -EMSGSIZE);
			KUNIT_EXPECT_EQ(test, msg->len, len);
		}
	}
	kfree_skb(msg);
}

static int recount_test_exit_now(void *unused)
{
	return 0;
}

/*
 * A task reaped since it was found has no record: its pid, tgid and parent
 * are gone, and a record of it would name it 0. A kernel thread is reaped
 * as it exits: kthreadd ignores SIGCHLD.
 */
static void recount_test_record_of_reaped(struct kunit *test)
{
	const struct recount_nl_format fmt = { .state = true };
	struct pid_namespace *ns = task_active_pid_ns(current);
	int i, thread, process;
	struct task_struct *t;
	struct sk_buff *msg;

	msg = alloc_skb(recount_nl_record_size(), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	t = kthread_create(recount_test_exit_now, NULL, "recount_kunit_reap");
	if (IS_ERR(t)) {
		kfree_skb(msg);
		KUNIT_FAIL_AND_ABORT(test, "no kernel thread: %ld", PTR_ERR(t));
	}
	get_task_struct(t);
	wake_up_process(t);
	/* pid_alive(), racing __unhash_process(). */
	for (i = 0; i < 10000 && READ_ONCE(t->thread_pid); i++)
		usleep_range(1000, 2000);
	if (READ_ONCE(t->thread_pid)) {
		put_task_struct(t);
		kfree_skb(msg);
		KUNIT_FAIL_AND_ABORT(test, "the thread was not reaped in 10 s");
	}

	rcu_read_lock();
	thread = recount_nl_fill_thread(msg, t, ns, &fmt);
	process = recount_nl_fill_process(msg, t, ns, &fmt);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, thread, -ESRCH);
	KUNIT_EXPECT_EQ(test, process, -ESRCH);
	KUNIT_EXPECT_EQ(test, msg->len, 0);
	put_task_struct(t);
	kfree_skb(msg);
}

/* Fill the record of @t alone in @msg. */
static void recount_test_fill_thread(struct kunit *test, struct sk_buff *msg,
				     struct task_struct *t, const struct recount_nl_format *fmt)
{
	int err;

	skb_trim(msg, 0);
	rcu_read_lock();
	err = recount_nl_fill_thread(msg, t, task_active_pid_ns(current), fmt);
	rcu_read_unlock();
	KUNIT_ASSERT_EQ(test, err, 0);
}

/* Spend a millisecond in the kernel, then sleep, off CPU, until stopped. */
static int recount_test_sleeper(void *data)
{
	recount_test_spin(NSEC_PER_MSEC);
	complete(data);
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

KUNIT_DEFINE_ACTION_WRAPPER(recount_test_kthread_stop, kthread_stop, struct task_struct *);
KUNIT_DEFINE_ACTION_WRAPPER(recount_test_kfree_skb, kfree_skb, struct sk_buff *);

/*
 * A kernel thread that ran a millisecond in the kernel and now sleeps, off
 * its CPU, until the test ends.
 */
static struct task_struct *recount_test_sleeping(struct kunit *test, const char *name)
{
	DECLARE_COMPLETION_ONSTACK(ran);
	struct task_struct *t;
	int i;

	t = kthread_run(recount_test_sleeper, &ran, "%s", name);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, recount_test_kthread_stop, t), 0);
	wait_for_completion(&ran);
	for (i = 0; i < 1000 && (task_is_running(t) || READ_ONCE(t->on_cpu)); i++)
		usleep_range(1000, 2000);
	KUNIT_ASSERT_FALSE(test, task_is_running(t) || READ_ONCE(t->on_cpu));
	return t;
}

/* A message for one record, freed when the test ends. */
static struct sk_buff *recount_test_record_msg(struct kunit *test)
{
	struct sk_buff *msg = alloc_skb(recount_nl_record_size(), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, msg);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, recount_test_kfree_skb, msg), 0);
	return msg;
}

/* The u64 attribute @type of @nest, which must be there. */
static u64 recount_test_u64(struct kunit *test, const struct nlattr *nest, int type)
{
	const struct nlattr *a = nest ? nla_find_nested(nest, type) : NULL;

	KUNIT_EXPECT_NOT_NULL_MSG(test, a, "attribute %d", type);
	return a ? nla_get_u64(a) : 0;
}

/* Does the usage nest @nest say @u, for @metrics? */
static void recount_test_usage_is(struct kunit *test, const struct nlattr *nest, u32 metrics,
				  const struct recount_usage *u, u32 f)
{
	const struct recount_metrics *user = &u->level[RECOUNT_LEVEL_USER];
	const struct recount_metrics *kernel = &u->level[RECOUNT_LEVEL_KERNEL];

	KUNIT_EXPECT_EQ_MSG(test, recount_test_u64(test, nest, RECOUNT_A_USAGE_USER_TIME),
			    user->time, "format %u", f);
	KUNIT_EXPECT_EQ_MSG(test, recount_test_u64(test, nest, RECOUNT_A_USAGE_KERNEL_TIME),
			    kernel->time, "format %u", f);
	if (metrics & RECOUNT_METRIC_CYCLES) {
		KUNIT_EXPECT_EQ(test, recount_test_u64(test, nest, RECOUNT_A_USAGE_USER_CYCLES),
				user->cycles);
		KUNIT_EXPECT_EQ(test, recount_test_u64(test, nest, RECOUNT_A_USAGE_KERNEL_CYCLES),
				kernel->cycles);
	}
	if (metrics & RECOUNT_METRIC_INSTRUCTIONS) {
		KUNIT_EXPECT_EQ(test,
				recount_test_u64(test, nest, RECOUNT_A_USAGE_USER_INSTRUCTIONS),
				user->instructions);
		KUNIT_EXPECT_EQ(test,
				recount_test_u64(test, nest, RECOUNT_A_USAGE_KERNEL_INSTRUCTIONS),
				kernel->instructions);
	}
	if (metrics & RECOUNT_METRIC_ENERGY)
		KUNIT_EXPECT_EQ(test, recount_test_u64(test, nest, RECOUNT_A_USAGE_ENERGY),
				u->energy);
}

/*
 * A thread that does not run has its record written from its track, one
 * that runs from a copy (recount_thread_read(), which adds the interval in
 * progress): in every format, a sleeping thread's record says what a copy
 * of its track says.
 */
static void recount_test_record_of_track(struct kunit *test)
{
	struct recount_usage usage[RECOUNT_NR_KINDS], total = {};
	struct recount_nl_format fmt = { .state = true };
	const struct recount_wait_stats *q, *fault, *lock;
	struct recount_task_runtime rt;
	const struct nlattr *nla, *a;
	struct recount_runtime runtime;
	struct task_struct *t;
	struct sk_buff *msg;
	u32 f, metrics;
	int k, rem;
	size_t size;

	if (!recount_enabled())
		kunit_skip(test, "recount is off (boot with recount=on)");
	t = recount_test_sleeping(test, "recount_kunit_sleep");
	msg = recount_test_record_msg(test);
	recount_thread_read(t, usage, &runtime);
	for (k = 0; k < RECOUNT_NR_KINDS; k++)
		recount_usage_sum(&total, &usage[k]);
	q = &runtime.wait[RECOUNT_WAIT_QUEUE];
	fault = &runtime.wait[RECOUNT_WAIT_FAULT];
	lock = &runtime.wait[RECOUNT_WAIT_LOCK];
	rt = (struct recount_task_runtime){
		.cpu_time = total.level[RECOUNT_LEVEL_USER].time +
			    total.level[RECOUNT_LEVEL_KERNEL].time,
		.queue_time = q->time, .page_fault_time = fault->time,
		.lock_contention_time = lock->time, .queue_count = q->count,
		.queue_max = q->max, .queue_max_time = q->max_at,
		.page_fault_count = fault->count, .page_fault_max = fault->max,
		.page_fault_max_time = fault->max_at, .lock_contention_count = lock->count,
		.lock_contention_max = lock->max, .lock_contention_max_time = lock->max_at,
	};
	kunit_info(test, "the sleeper's kernel time: %llu us",
		   total.level[RECOUNT_LEVEL_KERNEL].time / NSEC_PER_USEC);

	/* Lean or not, each version. */
	for (f = 0; f < 2 * (RECOUNT_RUNTIME_VERSION + 1); f++) {
		fmt.lean = f & 1;
		fmt.version = f >> 1;
		recount_test_fill_thread(test, msg, t, &fmt);

		a = nla_find((struct nlattr *)msg->data, msg->len, RECOUNT_A_METRICS);
		KUNIT_ASSERT_NOT_NULL(test, a);
		metrics = nla_get_u32(a);
		a = nla_find((struct nlattr *)msg->data, msg->len, RECOUNT_A_USAGE);
		recount_test_usage_is(test, a, metrics, &total, f);
		nla_for_each_attr_type(nla, RECOUNT_A_PER_KIND, (struct nlattr *)msg->data,
				       msg->len, rem) {
			a = nla_find_nested(nla, RECOUNT_A_USAGE_KIND);
			KUNIT_ASSERT_NOT_NULL(test, a);
			k = nla_get_u32(a);
			KUNIT_ASSERT_LT(test, k, RECOUNT_NR_KINDS);
			recount_test_usage_is(test, nla, metrics, &usage[k], f);
		}
		a = nla_find((struct nlattr *)msg->data, msg->len, RECOUNT_A_RUNTIME);
		if (a) {
			KUNIT_EXPECT_EQ(test, recount_test_u64(test, a, RECOUNT_A_RUNTIME_CPU_TIME),
					rt.cpu_time);
			KUNIT_EXPECT_EQ(test,
					recount_test_u64(test, a, RECOUNT_A_RUNTIME_QUEUE_TIME),
					rt.queue_time);
			KUNIT_EXPECT_EQ(test,
					recount_test_u64(test, a, RECOUNT_A_RUNTIME_QUEUE_COUNT),
					rt.queue_count);
		}
		a = nla_find((struct nlattr *)msg->data, msg->len, RECOUNT_A_RUNTIME_STRUCT);
		KUNIT_EXPECT_EQ(test, !a, !fmt.version);
		if (!a)
			continue;
		size = fmt.version == RECOUNT_RUNTIME_V1 ? sizeof(struct recount_task_runtime_v1) :
		       fmt.version == RECOUNT_RUNTIME_V2 ? sizeof(struct recount_task_runtime_v2) :
		       sizeof(rt);
		KUNIT_ASSERT_EQ(test, nla_len(a), size);
		KUNIT_EXPECT_MEMEQ_MSG(test, nla_data(a), &rt, size, "format %u", f);
	}
}

struct recount_test_hopper {
	struct completion started;
	bool stop;
};

/* Run 20 us and sleep 20 us, over and over: its track changes all the time. */
static int recount_test_hop(void *data)
{
	struct recount_test_hopper *h = data;

	complete(&h->started);
	while (!READ_ONCE(h->stop) && !kthread_should_stop()) {
		recount_test_spin(20 * NSEC_PER_USEC);
		usleep_range(20, 40);
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * The record of a thread that runs and sleeps all the time, written while
 * its CPU switches it in and out, from its track or from a copy: every
 * record is of one moment, its runtime's CPU time the sum of its usage's
 * user and kernel time, and the records follow its track as it moves.
 */
static void recount_test_record_race(struct kunit *test)
{
	struct recount_nl_format fmt = { .state = true, .version = RECOUNT_RUNTIME_VERSION };
	unsigned long records = 0, moved = 0;
	struct recount_test_hopper *h;
	const struct nlattr *a, *u;
	u64 cpu_time, last = 0;
	struct task_struct *t;
	struct sk_buff *msg;
	unsigned int cpu;
	u64 deadline;

	if (!recount_enabled())
		kunit_skip(test, "recount is off (boot with recount=on)");
	cpu = get_cpu();
	cpu = cpumask_any_but(cpu_online_mask, cpu);
	put_cpu();
	if (cpu >= nr_cpu_ids)
		kunit_skip(test, "needs a second online CPU for the thread");
	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	init_completion(&h->started);
	msg = recount_test_record_msg(test);
	t = kthread_create(recount_test_hop, h, "recount_kunit_hop");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, recount_test_kthread_stop, t), 0);
	kthread_bind(t, cpu);
	wake_up_process(t);
	wait_for_completion(&h->started);

	deadline = ktime_get_ns() + 200 * NSEC_PER_MSEC;
	do {
		/* Lean or not: with the per-kind usages or without. */
		fmt.lean = records & 1;
		recount_test_fill_thread(test, msg, t, &fmt);
		u = nla_find((struct nlattr *)msg->data, msg->len, RECOUNT_A_USAGE);
		a = nla_find((struct nlattr *)msg->data, msg->len, RECOUNT_A_RUNTIME_STRUCT);
		KUNIT_ASSERT_NOT_NULL(test, u);
		KUNIT_ASSERT_NOT_NULL(test, a);
		cpu_time = get_unaligned((u64 *)nla_data(a));
		KUNIT_EXPECT_EQ(test, cpu_time,
				recount_test_u64(test, u, RECOUNT_A_USAGE_USER_TIME) +
				recount_test_u64(test, u, RECOUNT_A_USAGE_KERNEL_TIME));
		moved += cpu_time != last;
		last = cpu_time;
		records++;
		cond_resched();
	} while (ktime_get_ns() < deadline);
	WRITE_ONCE(h->stop, true);

	kunit_info(test, "%lu records, %lu of a new CPU time", records, moved);
	KUNIT_EXPECT_GT(test, moved, 2);
}

/*
 * A record's command name is copied a word at a time: every length, a name
 * with no NUL in its 16 bytes, and one that a rename left unpadded after
 * its NUL (the rest of an older, longer one) give the name up to its NUL
 * (at most 15 bytes), and the attribute's padding is zero.
 */
static void recount_test_record_comm(struct kunit *test)
{
	static const char letters[] = "abcdefghijklmnop";
	const struct recount_nl_format fmt = { .lean = true };
	char comm[TASK_COMM_LEN], name[TASK_COMM_LEN];
	const struct nlattr *a;
	struct task_struct *t;
	struct sk_buff *msg;
	unsigned int i;

	t = recount_test_sleeping(test, "recount_kunit_comm");
	msg = recount_test_record_msg(test);
	for (i = 0; i <= TASK_COMM_LEN + 1; i++) {
		/* As __set_task_comm() names the sleeping thread, but the last two. */
		if (i < TASK_COMM_LEN) {
			memset(comm, 0, sizeof(comm));
			memcpy(comm, letters, i);
		} else if (i == TASK_COMM_LEN) {
			memcpy(comm, letters, sizeof(comm));
		} else {
			memset(comm, 'z', sizeof(comm));
			memcpy(comm, "xy", 3);
		}
		task_lock(t);
		memcpy(t->comm, comm, sizeof(comm));
		task_unlock(t);
		strscpy(name, comm, sizeof(name));
		recount_test_fill_thread(test, msg, t, &fmt);
		a = nla_find((struct nlattr *)msg->data, msg->len, RECOUNT_A_COMM);
		KUNIT_ASSERT_NOT_NULL(test, a);
		KUNIT_EXPECT_EQ_MSG(test, nla_len(a), strlen(name) + 1, "name '%s'", name);
		KUNIT_EXPECT_STREQ(test, (char *)nla_data(a), name);
		KUNIT_EXPECT_NULL_MSG(test, memchr_inv(nla_data(a) + nla_len(a), 0,
						       nla_total_size(nla_len(a)) - a->nla_len),
				      "name '%s'", name);
	}
}

/*
 * Check that what took @time on the thread, and its CPU from @a to @b,
 * charged neither: the thread's own work around it takes a millisecond,
 * five on a KCSAN kernel.
 */
static void recount_test_charged_nothing(struct kunit *test, const char *what, u64 time,
					 const struct recount_cpu_usage *a,
					 const struct recount_cpu_usage *b)
{
	u64 cpu_time = recount_test_cpu_time(a, b);

	kunit_info(test, "%s: the thread was charged %llu us, its CPU %llu us", what,
		   time / NSEC_PER_USEC, cpu_time / NSEC_PER_USEC);
	KUNIT_EXPECT_LT(test, time, 10 * NSEC_PER_MSEC);
	KUNIT_EXPECT_LT(test, cpu_time, 10 * NSEC_PER_MSEC);
}

/*
 * Suspend to RAM and hibernation (syscore_suspend(): the other CPUs
 * offline, interrupts disabled): what the last CPU does from its suspend to
 * its resume is nobody's time, as the 20 ms it spins here are neither the
 * suspending thread's nor its CPU's, whatever its clock did meanwhile.
 */
static void recount_test_suspend(struct kunit *test)
{
	struct recount_cpu_usage a, b;
	unsigned int cpu;
	u64 time;

	if (!recount_enabled())
		kunit_skip(test, "recount is off (boot with recount=on)");
	preempt_disable();
	cpu = smp_processor_id();
	time = recount_test_self_time();
	recount_cpu_read(cpu, &a);
	local_irq_disable();
	recount_suspend(NULL);
	recount_test_spin(20 * NSEC_PER_MSEC);
	recount_resume(NULL);
	local_irq_enable();
	time = recount_test_self_time() - time;
	recount_cpu_read(cpu, &b);
	preempt_enable();

	recount_test_charged_nothing(test, "20 ms suspended", time, &a, &b);
}

/*
 * recount's clock steps back on a CPU (x86: a TSC_ADJUST restored at idle
 * entry), here by a second: the CPU's last accounting point is moved a
 * second ahead of its clock. The next accounting point charges nothing for
 * an interval that ends before it starts, where the difference of the two
 * clock reads, modulo 2^56, would be years, and the CPU goes on from the
 * clock's new value. The same for the user clock's growth (it stepped back
 * in user mode): the CPU, which runs this kernel thread throughout, gains
 * no user time, where the interval was all user time before. Then the
 * thread spins 2 ms on that CPU: it and the CPU are charged them.
 */
static void recount_test_clock_steps_back(struct kunit *test)
{
	struct recount_cpu_usage a, b, c;
	struct recount_cpu *rc;
	unsigned long flags;
	unsigned int cpu;
	u64 time, second, spun;

	if (!recount_enabled())
		kunit_skip(test, "recount is off (boot with recount=on)");
	/*
	 * The interval the step empties is after the reads: it must not take
	 * back what they saw of the interval in progress.
	 */
	local_irq_save(flags);
	cpu = smp_processor_id();
	rc = recount_cpu_ptr(cpu);
	time = recount_test_self_time();
	recount_cpu_read(cpu, &a);
	recount_update_current();
	second = div64_u64((u64)NSEC_PER_SEC << 32, READ_ONCE(rc->factor));
	raw_write_seqcount_begin(&rc->seq);
	WRITE_ONCE(rc->at, rc->at + second);
	raw_write_seqcount_end(&rc->seq);
	recount_update_current();
	/* The user clock alone steps back: a CPU in kernel mode gains no user time. */
	raw_write_seqcount_begin(&rc->seq);
	WRITE_ONCE(rc->user, (rc->user + second) & RECOUNT_CLOCK_MASK);
	raw_write_seqcount_end(&rc->seq);
	recount_update_current();
	time = recount_test_self_time() - time;
	recount_cpu_read(cpu, &b);
	/* The CPU goes on from the clock's new value. */
	spun = recount_test_self_time();
	recount_test_spin(2 * NSEC_PER_MSEC);
	spun = recount_test_self_time() - spun;
	recount_cpu_read(cpu, &c);
	local_irq_restore(flags);

	recount_test_charged_nothing(test, "clock a second back", time, &a, &b);
	KUNIT_EXPECT_EQ(test, b.usage.level[RECOUNT_LEVEL_USER].time,
			a.usage.level[RECOUNT_LEVEL_USER].time);
	kunit_info(test, "then 2 ms of spin: the thread was charged %llu us, its CPU %llu us",
		   spun / NSEC_PER_USEC, recount_test_cpu_time(&b, &c) / NSEC_PER_USEC);
	KUNIT_EXPECT_GE(test, spun, NSEC_PER_MSEC);
	KUNIT_EXPECT_GE(test, recount_test_cpu_time(&b, &c), NSEC_PER_MSEC);
}

#ifdef CONFIG_ARM_ARCH_TIMER_OOL_WORKAROUND
static u64 notrace recount_test_read_cntvct(void)
{
	return read_sysreg(cntvct_el0);
}
#endif

/*
 * arm64: a CPU whose counter reads need an erratum workaround (an
 * out-of-line read) keeps recount from the raw counter; one whose
 * workaround leaves those reads alone (erratum 1418040's) does not. Each
 * is given to this CPU in turn, with interrupts off. The timer reads its
 * counter through them only if one was there when it registered the
 * counter; a read that did would find one that reads the counter, or
 * none, and read it itself.
 */
static void recount_test_clock_erratum(struct kunit *test)
{
#ifdef CONFIG_ARM_ARCH_TIMER_OOL_WORKAROUND
	static const struct arch_timer_erratum_workaround empty = {
		.desc = "recount KUnit, no counter reads",
	};
	static const struct arch_timer_erratum_workaround reads = {
		.desc = "recount KUnit, counter reads",
		.read_cntvct_el0 = recount_test_read_cntvct,
	};
	u64 rate, with_empty, with_reads;
	unsigned long flags;

	local_irq_save(flags);
	if (__this_cpu_read(timer_unstable_counter_workaround)) {
		local_irq_restore(flags);
		kunit_skip(test, "this CPU's counter has a workaround of its own");
	}
	rate = recount_clock_raw_rate();
	__this_cpu_write(timer_unstable_counter_workaround, &empty);
	with_empty = recount_clock_raw_rate();
	__this_cpu_write(timer_unstable_counter_workaround, &reads);
	with_reads = recount_clock_raw_rate();
	__this_cpu_write(timer_unstable_counter_workaround, NULL);
	local_irq_restore(flags);
	if (!rate)
		kunit_skip(test, "the counter is not recount's clock here");
	KUNIT_EXPECT_EQ(test, with_empty, rate);
	KUNIT_EXPECT_EQ(test, with_reads, 0);
#else
	kunit_skip(test, "no counter erratum workarounds in this kernel (arm64's)");
#endif
}

/*
 * x86: the TSC is recount's clock only while the kernel trusts it, whatever
 * sched_clock() says: a paravirtual one stays stable when the TSC is
 * marked unstable (booted with tsc=unstable, or found so by the clocksource
 * watchdog). Marked, it stays so.
 */
static void recount_test_clock_tsc_unstable(struct kunit *test)
{
#ifdef CONFIG_X86
	if (!check_tsc_unstable())
		kunit_skip(test, "the TSC is not marked unstable here (tsc=unstable marks it)");
	KUNIT_EXPECT_EQ(test, recount_clock_raw_rate(), 0);
#else
	kunit_skip(test, "no TSC in this kernel (x86's)");
#endif
}

/*
 * Run recount_test_injector() on the last CPU; the test is skipped if
 * recount is off.
 */
static struct recount_test_injection *recount_test_inject(struct kunit *test, bool stepping)
{
	struct recount_test_injection *inj;
	struct task_struct *injector;

	inj = kunit_kzalloc(test, sizeof(*inj), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, inj);
	init_completion(&inj->done);
	inj->stepping = stepping;
	injector = kthread_create(recount_test_injector, inj, "recount_kunit_inj");
	KUNIT_ASSERT_FALSE(test, IS_ERR(injector));
	kthread_bind(injector, cpumask_last(cpu_online_mask));
	wake_up_process(injector);
	wait_for_completion(&inj->done);
	kthread_stop(injector);
	if (!inj->enabled)
		kunit_skip(test, "recount is off (boot with recount=on)");
	return inj;
}

/*
 * Idle injection (play_idle_precise(), run by a thread with PF_IDLE, like
 * the idle task's) idles the CPU: the injected time is the CPU's idle time,
 * not the injecting thread's kernel time.
 */
static void recount_test_idle_injection(struct kunit *test)
{
	struct recount_test_injection *inj = recount_test_inject(test, false);
	u64 idle = inj->b.idle_time - inj->a.idle_time;

	kunit_info(test, "20 ms injected: the thread was charged %llu us, its CPU idled %llu us",
		   inj->thread_time / NSEC_PER_USEC, idle / NSEC_PER_USEC);
	/*
	 * Most of the 20 ms is idle, not the thread's: its own work around
	 * the injection takes a millisecond, five on a KCSAN kernel.
	 */
	KUNIT_EXPECT_LT(test, inj->thread_time, 10 * NSEC_PER_MSEC);
	KUNIT_EXPECT_GE(test, idle, 15 * NSEC_PER_MSEC);
}

/*
 * recount's clock steps back a second while its CPU idles, as in
 * recount_test_clock_steps_back() while it runs a thread: the interval the
 * step falls in (each wakeup of the idle loop ends one) ends before it
 * starts and is charged nothing, where the difference of the two clock
 * reads, modulo 2^56, would be years; the intervals after it are charged.
 * The CPU is charged no more than the time that passed, idle and kernel
 * time together, and its thread no more than without the step.
 */
static void recount_test_clock_steps_back_idle(struct kunit *test)
{
	/*
	 * Enough idle after the step to judge: half of it is more than the
	 * CPU can lose to its next accounting point.
	 */
	const u64 least = 10 * NSEC_PER_MSEC + 2 * TICK_NSEC;
	struct recount_test_injection *inj;
	u64 cpu_time, after;
	int tries = 0;

	if (!recount_enabled())
		kunit_skip(test, "recount is off (boot with recount=on)");
	/*
	 * A slow kernel may take the 50 ms to the step before it idles, or
	 * a late timer leave too little idle after the step to judge it by.
	 */
	do {
		inj = recount_test_inject(test, true);
	} while ((!inj->stepped || inj->since_step < least) && ++tries < 3);
	KUNIT_ASSERT_TRUE_MSG(test, inj->stepped, "the clock did not step in the injected idle");
	KUNIT_ASSERT_GE_MSG(test, inj->since_step, least,
			    "the clock stepped too late in the injected idle");
	cpu_time = recount_test_cpu_time(&inj->a, &inj->b);
	after = recount_test_cpu_time(&inj->at_step, &inj->b);
	kunit_info(test, "clock a second back in idle: in %llu us, the thread was charged %llu us, its CPU %llu us, %llu us of the %llu us after the step",
		   inj->wall / NSEC_PER_USEC, inj->thread_time / NSEC_PER_USEC,
		   cpu_time / NSEC_PER_USEC, after / NSEC_PER_USEC,
		   inj->since_step / NSEC_PER_USEC);
	KUNIT_EXPECT_LT(test, inj->thread_time, 10 * NSEC_PER_MSEC);
	/* The two clocks may run a little apart. */
	KUNIT_EXPECT_LE(test, cpu_time, inj->wall + inj->wall / 100);
	/*
	 * The CPU goes on from the clock's new value: the idle after the step
	 * (50 ms, less if the step's timer came late) is charged but for the
	 * end of the interval the step fell in, to the CPU's next accounting
	 * point: tens of microseconds, or up to a tick if the idle loop polls.
	 */
	KUNIT_EXPECT_GE(test, after, inj->since_step / 2);
}

/*
 * Chosen events: a delta of both ends counted adds, one not read or
 * rotated out between is inexact, ends of two generations count nothing;
 * a usage of an older generation starts from zero, and sums keep the
 * newest generation only.
 */
static void recount_test_event_generations(struct kunit *test)
{
	struct recount_event_snap prev = { .gen = 2, .tried = 3, .valid = 3 };
	struct recount_event_snap now = prev;
	struct recount_event_delta d;
	struct recount_usage u = {}, old = {}, sum = {};

	prev.count[0][RECOUNT_LEVEL_USER] = 10;
	now.count[0][RECOUNT_LEVEL_USER] = 15;
	now.count[1][RECOUNT_LEVEL_KERNEL] = 7;
	now.valid = 1;
	recount_event_delta(&prev, &now, &d);
	KUNIT_EXPECT_EQ(test, d.counted, 1);
	KUNIT_EXPECT_EQ(test, d.count[0][RECOUNT_LEVEL_USER], 5);
	KUNIT_EXPECT_EQ(test, d.count[1][RECOUNT_LEVEL_KERNEL], 0);
	KUNIT_EXPECT_EQ(test, d.inexact, RECOUNT_INEXACT_EVENT_1);

	/* Read at both ends, but rotated out between: inexact, nothing added. */
	now.unrun[0] = 3;
	recount_event_delta(&prev, &now, &d);
	KUNIT_EXPECT_EQ(test, d.counted, 0);
	KUNIT_EXPECT_EQ(test, d.count[0][RECOUNT_LEVEL_USER], 0);
	KUNIT_EXPECT_EQ(test, d.inexact, RECOUNT_INEXACT_EVENT_0 | RECOUNT_INEXACT_EVENT_1);
	prev.unrun[0] = 3;
	recount_event_delta(&prev, &now, &d);
	KUNIT_EXPECT_EQ(test, d.counted, 1);

	/* A usage of generation 1 drops its counts and flags for 2's. */
	old.event_gen = 1;
	old.level[RECOUNT_LEVEL_USER].event[0] = 100;
	old.inexact = RECOUNT_INEXACT_EVENT_0 | RECOUNT_INEXACT_CYCLES;
	u = old;
	recount_usage_add_events(&u, &d);
	KUNIT_EXPECT_EQ(test, u.event_gen, 2);
	KUNIT_EXPECT_EQ(test, u.level[RECOUNT_LEVEL_USER].event[0], 5);
	KUNIT_EXPECT_EQ(test, u.inexact, RECOUNT_INEXACT_EVENT_1 | RECOUNT_INEXACT_CYCLES);

	/* Sums: the older generation's counts are left out, whichever comes first. */
	recount_usage_sum(&sum, &old);
	recount_usage_sum(&sum, &u);
	recount_usage_sum(&sum, &old);
	KUNIT_EXPECT_EQ(test, sum.event_gen, 2);
	KUNIT_EXPECT_EQ(test, sum.level[RECOUNT_LEVEL_USER].event[0], 5);
	KUNIT_EXPECT_EQ(test, sum.inexact, RECOUNT_INEXACT_EVENT_1 | RECOUNT_INEXACT_CYCLES);

	/* Ends of two generations: nothing counted, nothing inexact. */
	prev.gen = 1;
	recount_event_delta(&prev, &now, &d);
	KUNIT_EXPECT_EQ(test, d.counted, 0);
	KUNIT_EXPECT_EQ(test, d.inexact, 0);
	KUNIT_EXPECT_EQ(test, d.gen, 2);
}

/*
 * get-info's CPU lists fit its reply on any machine: with 8192 CPUs,
 * alternately of each kind (the longest lists, 20 KiB each), the reply takes
 * the room recount_nl_kind_cpus_size() says, and the lists read back whole.
 */
static void recount_test_kind_cpus_fit(struct kunit *test)
{
	struct nlattr *a, *tb[RECOUNT_A_KIND_CPUS_MAX + 1];
	const unsigned long *kinds[RECOUNT_NR_KINDS];
	unsigned long *bits[RECOUNT_NR_KINDS];
	const unsigned int nbits = 8192;
	struct sk_buff *msg;
	unsigned int cpu;
	int k, rem, n = 0;
	size_t size;
	char *want;

	for (k = 0; k < RECOUNT_NR_KINDS; k++) {
		bits[k] = kunit_kzalloc(test, BITS_TO_LONGS(nbits) * sizeof(long), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, bits[k]);
		kinds[k] = bits[k];
	}
	for (cpu = 0; cpu < nbits; cpu++)
		__set_bit(cpu, bits[cpu % RECOUNT_NR_KINDS]);
	size = recount_nl_kind_cpus_size(kinds, nbits);
	KUNIT_EXPECT_GT(test, size, 2 * 16384);
	want = kunit_kzalloc(test, 6 * nbits, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	msg = nlmsg_new(size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	/* Expectations only from here: the message is freed at the end. */
	if (recount_nl_put_kind_cpus(msg, kinds, nbits)) {
		KUNIT_FAIL(test, "%zu bytes are not room for the lists", size);
		goto out;
	}
	KUNIT_EXPECT_EQ(test, msg->len, size);
	nla_for_each_attr(a, (struct nlattr *)msg->data, msg->len, rem) {
		KUNIT_EXPECT_EQ(test, nla_type(a), RECOUNT_A_KIND_CPUS);
		if (nla_parse_nested_deprecated(tb, RECOUNT_A_KIND_CPUS_MAX, a, NULL, NULL) ||
		    !tb[RECOUNT_A_KIND_CPUS_KIND] || !tb[RECOUNT_A_KIND_CPUS_CPUS]) {
			KUNIT_FAIL(test, "kind nest %d lacks its kind or its list", n);
			goto out;
		}
		k = nla_get_u32(tb[RECOUNT_A_KIND_CPUS_KIND]);
		KUNIT_EXPECT_EQ(test, k, n);
		if (k >= RECOUNT_NR_KINDS)
			goto out;
		snprintf(want, 6 * nbits, "%*pbl", nbits, kinds[k]);
		KUNIT_EXPECT_STREQ(test, (char *)nla_data(tb[RECOUNT_A_KIND_CPUS_CPUS]), want);
		KUNIT_EXPECT_EQ(test, nla_len(tb[RECOUNT_A_KIND_CPUS_CPUS]), strlen(want) + 1);
		n++;
	}
	KUNIT_EXPECT_EQ(test, rem, 0);
	KUNIT_EXPECT_EQ(test, n, RECOUNT_NR_KINDS);
	KUNIT_EXPECT_EQ(test, strncmp(want, "1,3,5,", 6), 0);
out:
	kfree_skb(msg);
}

/* perf refuses every counter on CPU 1: a PMU that does not cover it. */
static struct perf_event *recount_test_create_not_on_cpu1(struct perf_event_attr *attr,
							  unsigned int cpu)
{
	if (cpu == 1)
		return ERR_PTR(-ENOENT);
	return perf_event_create_kernel_counter(attr, cpu, NULL, NULL, NULL);
}

/* perf refuses instructions: a guest PMU without them. */
static struct perf_event *recount_test_create_no_instructions(struct perf_event_attr *attr,
							      unsigned int cpu)
{
	if (attr->type == PERF_TYPE_HARDWARE && attr->config == PERF_COUNT_HW_INSTRUCTIONS)
		return ERR_PTR(-ENOENT);
	return perf_event_create_kernel_counter(attr, cpu, NULL, NULL, NULL);
}

/*
 * A CPU that could not have its counters, while others have theirs, fails
 * their reads: the counts of what runs there are inexact, not zero (a CPU
 * not given them yet reads none and loses none).
 */
static void recount_test_pmu_cpu_without_counters(struct kunit *test)
{
	unsigned int ready;

	if (!recount_enabled() || !recount_pmu_supported())
		kunit_skip(test, "no PMU counters: cycles and instructions are unsupported here");
	if (!cpu_online(1))
		kunit_skip(test, "needs CPU 1 online");
	kunit_activate_static_stub(test, recount_pmu_perf_create,
				   recount_test_create_not_on_cpu1);
	recount_restart();
	cpus_read_lock();
	ready = READ_ONCE(recount_pmu_of(1)->ready);
	cpus_read_unlock();
	kunit_deactivate_static_stub(test, recount_pmu_perf_create);
	recount_restart();
	KUNIT_EXPECT_EQ(test, ready, RECOUNT_PMU_SOME);
	KUNIT_EXPECT_TRUE(test, recount_pmu_supported());
}

/*
 * Where no CPU gets all its counters, cycles and instructions are
 * unsupported, and recount holds none of the counters it could make: they
 * would take the PMU from perf for nothing.
 */
static void recount_test_pmu_unsupported_holds_none(struct kunit *test)
{
	bool supported, held = false;
	unsigned int cpu;
	int l;

	if (!recount_enabled() || !recount_pmu_supported())
		kunit_skip(test, "no PMU counters: cycles and instructions are unsupported here");
	kunit_activate_static_stub(test, recount_pmu_perf_create,
				   recount_test_create_no_instructions);
	recount_restart();
	supported = recount_pmu_supported();
	cpus_read_lock();
	for_each_possible_cpu(cpu)
		for (l = 0; l < RECOUNT_NR_LEVELS; l++)
			held |= !!READ_ONCE(recount_pmu_of(cpu)->cycles[l]);
	cpus_read_unlock();
	kunit_deactivate_static_stub(test, recount_pmu_perf_create);
	recount_restart();
	KUNIT_EXPECT_FALSE(test, supported);
	KUNIT_EXPECT_FALSE(test, held);
	KUNIT_EXPECT_TRUE(test, recount_pmu_supported());
}

static struct kunit_case recount_test_cases[] = {
	KUNIT_CASE(recount_test_kind_cpus_fit),
	KUNIT_CASE(recount_test_user_clock),
	KUNIT_CASE(recount_test_user_clock_wraps),
	KUNIT_CASE(recount_test_user_clock_pick),
	KUNIT_CASE(recount_test_ticks_to_ns),
	KUNIT_CASE(recount_test_ticks_since),
	KUNIT_CASE(recount_test_split),
	KUNIT_CASE(recount_test_counter_delta),
	KUNIT_CASE(recount_test_pmu_cpu_without_counters),
	KUNIT_CASE(recount_test_pmu_unsupported_holds_none),
	KUNIT_CASE(recount_test_usage_add_sum),
	KUNIT_CASE(recount_test_event_generations),
	KUNIT_CASE(recount_test_wait_stats),
	KUNIT_CASE(recount_test_energy_scale),
	KUNIT_CASE(recount_test_kind_of_capacity),
	KUNIT_CASE_SLOW(recount_test_track_read_race),
	KUNIT_CASE_SLOW(recount_test_accounting_race),
	KUNIT_CASE(recount_test_user_clock_ask),
	KUNIT_CASE(recount_test_user_clock_isolated),
	KUNIT_CASE(recount_test_idle_injection),
	KUNIT_CASE(recount_test_suspend),
	KUNIT_CASE(recount_test_clock_steps_back),
	KUNIT_CASE(recount_test_clock_steps_back_idle),
	KUNIT_CASE(recount_test_clock_erratum),
	KUNIT_CASE(recount_test_clock_tsc_unstable),
	KUNIT_CASE(recount_test_record_size),
	KUNIT_CASE(recount_test_record_of_reaped),
	KUNIT_CASE(recount_test_record_of_track),
	KUNIT_CASE_SLOW(recount_test_record_race),
	KUNIT_CASE(recount_test_record_comm),
	{}
};

static struct kunit_suite recount_test_suite = {
	.name = "recount",
	.test_cases = recount_test_cases,
};

kunit_test_suite(recount_test_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests for recount");
MODULE_LICENSE("GPL");
