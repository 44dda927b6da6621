// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of recount's pure logic: deltas between snapshots and counter
 * wrap, usage sums, energy scaling, CPU kinds by capacity, and the
 * sequence-count protocol of tracks against a concurrent writer.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>

#include "internal.h"

static void recount_test_snap_delta(struct kunit *test)
{
	struct recount_snap prev = { .time = 1000 }, now = {};
	struct recount_delta delta;

	now.time = 1500;
	recount_snap_delta(&prev, &now, &delta);
	KUNIT_EXPECT_EQ(test, delta.time, 500);
	KUNIT_EXPECT_EQ(test, delta.inexact, 0);

	now.time = 1000;
	recount_snap_delta(&prev, &now, &delta);
	KUNIT_EXPECT_EQ(test, delta.time, 0);

	/* A lagging runqueue clock adds nothing rather than wrapping around. */
	now.time = 900;
	recount_snap_delta(&prev, &now, &delta);
	KUNIT_EXPECT_EQ(test, delta.time, 0);

	prev.time = U64_MAX - 10;
	now.time = U64_MAX;
	recount_snap_delta(&prev, &now, &delta);
	KUNIT_EXPECT_EQ(test, delta.time, 10);
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
	recount_snap_delta(&prev, &now, &delta);
	KUNIT_EXPECT_TRUE(test, delta.counted);
	KUNIT_EXPECT_EQ(test, delta.inexact, 0);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_USER].cycles, 250);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_USER].instructions, 200);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_KERNEL].cycles, 20);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_KERNEL].instructions, 5);

	/* Counters are 64-bit: a wrap past U64_MAX still gives the delta. */
	prev.counts[RECOUNT_LEVEL_USER].cycles = U64_MAX - 5;
	now.counts[RECOUNT_LEVEL_USER].cycles = 10;
	recount_snap_delta(&prev, &now, &delta);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_USER].cycles, 16);

	/* Not read at this point (a transition): nothing now, nothing lost. */
	now.tried = 0;
	now.valid = 0;
	recount_snap_delta(&prev, &now, &delta);
	KUNIT_EXPECT_FALSE(test, delta.counted);
	KUNIT_EXPECT_EQ(test, delta.inexact, 0);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_USER].cycles, 0);

	/* Read but failed, at either end: nothing, and it says so. */
	now.tried = RECOUNT_SNAP_PMU;
	recount_snap_delta(&prev, &now, &delta);
	KUNIT_EXPECT_FALSE(test, delta.counted);
	KUNIT_EXPECT_EQ(test, delta.inexact,
			RECOUNT_INEXACT_CYCLES | RECOUNT_INEXACT_INSTRUCTIONS);
	KUNIT_EXPECT_EQ(test, delta.counts[RECOUNT_LEVEL_KERNEL].instructions, 0);
	now.valid = RECOUNT_SNAP_PMU;
	prev.valid = 0;
	recount_snap_delta(&prev, &now, &delta);
	KUNIT_EXPECT_NE(test, delta.inexact, 0);
}

static void recount_test_snap_advance(struct kunit *test)
{
	struct recount_snap prev = { .time = 1000, .tried = RECOUNT_SNAP_PMU,
				     .valid = RECOUNT_SNAP_PMU };
	struct recount_snap now = { .time = 900 };

	prev.counts[RECOUNT_LEVEL_USER].cycles = 7;
	now.counts[RECOUNT_LEVEL_USER].cycles = 5;

	/* An older time must not move the CPU's last snapshot back... */
	recount_snap_advance(&prev, &now);
	KUNIT_EXPECT_EQ(test, prev.time, 1000);
	/* ...and counters not read keep their base and its validity. */
	KUNIT_EXPECT_EQ(test, prev.counts[RECOUNT_LEVEL_USER].cycles, 7);
	KUNIT_EXPECT_EQ(test, prev.valid, RECOUNT_SNAP_PMU);

	/* Counters read move; a later time moves, or [900, 1000] counts twice. */
	now.time = 1200;
	now.tried = RECOUNT_SNAP_PMU;
	recount_snap_advance(&prev, &now);
	KUNIT_EXPECT_EQ(test, prev.time, 1200);
	KUNIT_EXPECT_EQ(test, prev.counts[RECOUNT_LEVEL_USER].cycles, 5);
	KUNIT_EXPECT_EQ(test, prev.valid, 0);
}

static void recount_test_usage_add_sum(struct kunit *test)
{
	struct recount_delta d1 = { .time = 7, .counted = true };
	struct recount_delta d2 = { .time = 11, .counted = true };
	struct recount_usage a = {}, b = {}, copy;

	d1.counts[RECOUNT_LEVEL_USER] = (struct recount_counts){ 70, 35 };
	d1.counts[RECOUNT_LEVEL_KERNEL] = (struct recount_counts){ 3, 1 };
	d2.counts[RECOUNT_LEVEL_USER] = (struct recount_counts){ 110, 55 };
	d2.inexact = RECOUNT_INEXACT_CYCLES;

	recount_usage_add(&a, RECOUNT_LEVEL_USER, &d1, 3);
	recount_usage_add(&a, RECOUNT_LEVEL_USER, &d2, 4);
	recount_usage_add(&a, RECOUNT_LEVEL_KERNEL, &d1, 5);
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

	d2.inexact = RECOUNT_INEXACT_ENERGY;
	recount_usage_add(&b, RECOUNT_LEVEL_KERNEL, &d2, 1);
	recount_usage_sum(&b, &a);
	KUNIT_EXPECT_EQ(test, b.level[RECOUNT_LEVEL_USER].time, 18);
	KUNIT_EXPECT_EQ(test, b.level[RECOUNT_LEVEL_KERNEL].time, 18);
	KUNIT_EXPECT_EQ(test, b.level[RECOUNT_LEVEL_USER].cycles, 360);
	KUNIT_EXPECT_EQ(test, b.energy, 13);
	KUNIT_EXPECT_EQ(test, b.inexact, RECOUNT_INEXACT_CYCLES | RECOUNT_INEXACT_ENERGY);

	/* A delta without counts adds its time and nothing else. */
	d1.counted = false;
	recount_usage_add(&a, RECOUNT_LEVEL_USER, &d1, 0);
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_USER].time, 25);
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_USER].cycles, 250);
	KUNIT_EXPECT_EQ(test, a.energy, 12);

	recount_usage_copy(&copy, &b);
	KUNIT_EXPECT_MEMEQ(test, &copy, &b, sizeof(b));
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

struct recount_test_race {
	struct recount_track track[2];
	struct completion started;
	bool stop;
};

/*
 * Writes as an accounting point does: both tracks, one barrier pair. Every
 * metric grows by the same amount at both levels, so a whole read has them
 * all equal: a torn one, say cycles of one update and instructions of
 * another, does not.
 */
static int recount_test_writer(void *data)
{
	struct recount_test_race *race = data;
	struct recount_delta one = { .time = 1, .counted = true };
	int l;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++)
		one.counts[l] = (struct recount_counts){ 1, 1 };

	complete(&race->started);
	while (!READ_ONCE(race->stop)) {
		recount_seq_write_begin(&race->track[0].seq);
		recount_seq_write_begin(&race->track[1].seq);
		recount_seq_write_fence();
		recount_usage_add(&race->track[0].usage, RECOUNT_LEVEL_USER, &one, 1);
		recount_usage_add(&race->track[1].usage, RECOUNT_LEVEL_USER, &one, 1);
		recount_usage_add(&race->track[0].usage, RECOUNT_LEVEL_KERNEL, &one, 1);
		recount_usage_add(&race->track[1].usage, RECOUNT_LEVEL_KERNEL, &one, 1);
		recount_seq_write_fence();
		recount_seq_write_end(&race->track[1].seq);
		recount_seq_write_end(&race->track[0].seq);
		/*
		 * Real writers pause between updates: on a slow (debug,
		 * emulated) kernel a writer that never did would starve the
		 * reader, whose copy takes longer than an update.
		 */
		ndelay(500);
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

	return user->time == kernel->time && user->cycles == 2 * user->time &&
	       user->instructions == 2 * user->time && kernel->cycles == 2 * user->time &&
	       kernel->instructions == 2 * user->time && u->energy == 2 * user->time;
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
			const struct recount_track *t = &race->track[i];
			struct recount_usage u;
			unsigned int seq;

			/* recount_track_read(), counting its retries. */
			for (;;) {
				seq = recount_seq_read_begin(&t->seq);
				recount_usage_copy(&u, &t->usage);
				if (!recount_seq_read_retry(&t->seq, seq))
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

static struct kunit_case recount_test_cases[] = {
	KUNIT_CASE(recount_test_snap_delta),
	KUNIT_CASE(recount_test_counter_delta),
	KUNIT_CASE(recount_test_snap_advance),
	KUNIT_CASE(recount_test_usage_add_sum),
	KUNIT_CASE(recount_test_energy_scale),
	KUNIT_CASE(recount_test_kind_of_capacity),
	KUNIT_CASE_SLOW(recount_test_track_read_race),
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
