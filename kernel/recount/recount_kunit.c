// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of recount's pure logic: deltas between snapshots, usage sums,
 * and the sequence-count protocol of tracks against a concurrent writer.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>

#include "internal.h"

static void recount_test_snap_delta(struct kunit *test)
{
	struct recount_snap prev = { .time = 1000 }, now;
	struct recount_metrics delta;

	now.time = 1500;
	recount_snap_delta(&prev, &now, &delta);
	KUNIT_EXPECT_EQ(test, delta.time, 500);

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

static void recount_test_snap_advance(struct kunit *test)
{
	struct recount_snap prev = { .time = 1000 }, now = { .time = 900 };

	/* An older snapshot must not move the CPU's last snapshot back... */
	recount_snap_advance(&prev, &now);
	KUNIT_EXPECT_EQ(test, prev.time, 1000);

	/* ...or the next delta would count [900, 1000] a second time. */
	now.time = 1200;
	recount_snap_advance(&prev, &now);
	KUNIT_EXPECT_EQ(test, prev.time, 1200);
}

static void recount_test_usage_add_sum(struct kunit *test)
{
	struct recount_metrics d1 = { .time = 7 }, d2 = { .time = 11 };
	struct recount_usage a = {}, b = {}, copy;

	recount_usage_add(&a, RECOUNT_LEVEL_USER, &d1);
	recount_usage_add(&a, RECOUNT_LEVEL_USER, &d2);
	recount_usage_add(&a, RECOUNT_LEVEL_KERNEL, &d1);
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_USER].time, 18);
	KUNIT_EXPECT_EQ(test, a.level[RECOUNT_LEVEL_KERNEL].time, 7);

	recount_usage_add(&b, RECOUNT_LEVEL_KERNEL, &d2);
	recount_usage_sum(&b, &a);
	KUNIT_EXPECT_EQ(test, b.level[RECOUNT_LEVEL_USER].time, 18);
	KUNIT_EXPECT_EQ(test, b.level[RECOUNT_LEVEL_KERNEL].time, 18);

	recount_usage_copy(&copy, &b);
	KUNIT_EXPECT_MEMEQ(test, &copy, &b, sizeof(b));
}

/*
 * The reader runs until it had to retry this many reads (it read while the
 * writer wrote), or for 10 seconds.
 */
#define RECOUNT_TEST_RETRIES	100

struct recount_test_race {
	struct recount_track track[2];
	struct completion started;
	bool stop;
};

/* Writes as an accounting point does: both tracks, one barrier pair. */
static int recount_test_writer(void *data)
{
	struct recount_test_race *race = data;
	struct recount_metrics one = { .time = 1 };

	complete(&race->started);
	while (!READ_ONCE(race->stop)) {
		recount_seq_write_begin(&race->track[0].seq);
		recount_seq_write_begin(&race->track[1].seq);
		recount_seq_write_fence();
		recount_usage_add(&race->track[0].usage, RECOUNT_LEVEL_USER, &one);
		recount_usage_add(&race->track[1].usage, RECOUNT_LEVEL_USER, &one);
		recount_usage_add(&race->track[0].usage, RECOUNT_LEVEL_KERNEL, &one);
		recount_usage_add(&race->track[1].usage, RECOUNT_LEVEL_KERNEL, &one);
		recount_seq_write_fence();
		recount_seq_write_end(&race->track[1].seq);
		recount_seq_write_end(&race->track[0].seq);
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * A reader on one CPU, a writer on another: every read is whole (user equals
 * kernel, as the writer always adds to both in one update) and never goes
 * backwards, however often the reader has to retry.
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
			if (u.level[RECOUNT_LEVEL_USER].time != u.level[RECOUNT_LEVEL_KERNEL].time)
				torn++;
			if (u.level[RECOUNT_LEVEL_USER].time < last[i])
				torn++;
			if (u.level[RECOUNT_LEVEL_USER].time != last[i])
				moved++;
			last[i] = u.level[RECOUNT_LEVEL_USER].time;
			reads++;
		}
		cond_resched();
	} while (retries < RECOUNT_TEST_RETRIES && ktime_get_ns() < deadline);

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
	KUNIT_CASE(recount_test_snap_advance),
	KUNIT_CASE(recount_test_usage_add_sum),
	KUNIT_CASE_SLOW(recount_test_track_read_race),
	{}
};

static struct kunit_suite recount_test_suite = {
	.name = "recount",
	.test_cases = recount_test_cases,
};

kunit_test_suite(recount_test_suite);

MODULE_DESCRIPTION("KUnit tests for recount");
MODULE_LICENSE("GPL");
