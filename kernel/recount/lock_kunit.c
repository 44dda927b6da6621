// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of recount's lock contention time: a thread that waits for a
 * contended sleeping lock of each kind recount times (mutex, rw_semaphore,
 * percpu_rw_semaphore, semaphore, rt_mutex), as a reader and as a writer,
 * is charged the wait, counted, and kept as its longest with when it ended.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/percpu-rwsem.h>
#include <linux/recount.h>
#include <linux/rtmutex.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/semaphore.h>

#include "internal.h"
/* The locks a waiter contends for, and what it saw. */
enum recount_test_lock_kind {
	RECOUNT_TEST_MUTEX,
	RECOUNT_TEST_RWSEM,
	RECOUNT_TEST_PERCPU_RWSEM,
	RECOUNT_TEST_SEMAPHORE,
	RECOUNT_TEST_RT_MUTEX,
};

struct recount_test_lock_case {
	const char *name;
	enum recount_test_lock_kind kind;
	/* rw kinds: do the holder and the waiter take it to read? */
	bool holder_reads, waiter_reads;
};

static const struct recount_test_lock_case recount_test_lock_cases[] = {
	{ "mutex", RECOUNT_TEST_MUTEX },
	{ "rwsem, a reader waits for the writer", RECOUNT_TEST_RWSEM, false, true },
	{ "rwsem, a writer waits for a reader", RECOUNT_TEST_RWSEM, true, false },
	{ "percpu_rwsem, a reader waits for the writer", RECOUNT_TEST_PERCPU_RWSEM, false, true },
	{ "percpu_rwsem, a writer waits for a reader", RECOUNT_TEST_PERCPU_RWSEM, true, false },
	{ "percpu_rwsem, a writer waits for the writer", RECOUNT_TEST_PERCPU_RWSEM, false, false },
	{ "semaphore", RECOUNT_TEST_SEMAPHORE },
#ifdef CONFIG_RT_MUTEXES
	{ "rt_mutex", RECOUNT_TEST_RT_MUTEX },
#endif
};

static void recount_test_lock_desc(const struct recount_test_lock_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(recount_test_lock, recount_test_lock_cases, recount_test_lock_desc);

/* One lock of each kind, the case's, and what its waiter saw. */
struct recount_test_locks {
	/* one of each kind; the case says which is contended */
	struct mutex mutex;
	struct rw_semaphore rwsem;
	struct percpu_rw_semaphore percpu_rwsem;
	struct semaphore semaphore;
#ifdef CONFIG_RT_MUTEXES
	struct rt_mutex rt_mutex;
#endif
	const struct recount_test_lock_case *c;
	struct completion done;
	bool trying;		/* the waiter is about to take the lock */
	u64 elapsed;		/* the waiter's lock call, by local_clock() */
	u64 began, ended;	/* and by CLOCK_BOOTTIME */
	u64 waited;		/* the lock time recount charged it meanwhile */
	u64 waits;		/* the waits it counted meanwhile */
	u64 max, max_at;	/* the waiter's longest wait, and its end */
};

/* Take (@take) or release the lock of @l's case, as its reader if @read. */
static void recount_test_lock_op(struct recount_test_locks *l, bool read, bool take)
{
	switch (l->c->kind) {
	case RECOUNT_TEST_MUTEX:
		if (take)
			mutex_lock(&l->mutex);
		else
			mutex_unlock(&l->mutex);
		break;
	case RECOUNT_TEST_RWSEM:
		if (take && read)
			down_read(&l->rwsem);
		else if (take)
			down_write(&l->rwsem);
		else if (read)
			up_read(&l->rwsem);
		else
			up_write(&l->rwsem);
		break;
	case RECOUNT_TEST_PERCPU_RWSEM:
		if (take && read)
			percpu_down_read(&l->percpu_rwsem);
		else if (take)
			percpu_down_write(&l->percpu_rwsem);
		else if (read)
			percpu_up_read(&l->percpu_rwsem);
		else
			percpu_up_write(&l->percpu_rwsem);
		break;
	case RECOUNT_TEST_SEMAPHORE:
		if (take)
			down(&l->semaphore);
		else
			up(&l->semaphore);
		break;
	case RECOUNT_TEST_RT_MUTEX:
#ifdef CONFIG_RT_MUTEXES
		if (take)
			rt_mutex_lock(&l->rt_mutex);
		else
			rt_mutex_unlock(&l->rt_mutex);
#endif
		break;
	}
}

/* Current's lock contention waits. */
static struct recount_wait_stats recount_test_lock_stats(void)
{
	struct recount_usage usage[RECOUNT_NR_KINDS];
	struct recount_runtime runtime;

	recount_thread_read(current, usage, &runtime);
	return runtime.wait[RECOUNT_WAIT_LOCK];
}

static int recount_test_lock_waiter(void *data)
{
	struct recount_test_locks *l = data;
	struct recount_wait_stats before = recount_test_lock_stats(), after;
	u64 t0;

	WRITE_ONCE(l->trying, true);
	l->began = ktime_get_boottime_ns();
	t0 = local_clock();
	recount_test_lock_op(l, l->c->waiter_reads, true);
	l->elapsed = local_clock() - t0;
	l->ended = ktime_get_boottime_ns();
	after = recount_test_lock_stats();
	l->waited = after.time - before.time;
	l->waits = after.count - before.count;
	l->max = after.max;
	l->max_at = after.max_at;
	recount_test_lock_op(l, l->c->waiter_reads, false);
	complete(&l->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

#define RECOUNT_TEST_HOLD_MS	30

/*
 * A thread that waits for a contended sleeping lock of each kind is charged
 * the wait as its lock time: the lock's holder keeps it 30 ms past the
 * moment the waiter began to wait (its contention mark), so the waiter's
 * lock time is at least those 30 ms and at most its whole lock call.
 */
static void recount_test_lock_wait(struct kunit *test)
{
	struct recount_test_locks *l;
	struct task_struct *waiter;
	bool waiting = false;
	unsigned long timeout;
	u64 mark;

	if (!recount_enabled())
		kunit_skip(test, "recount is off (boot with recount=on)");
	l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l);
	l->c = test->param_value;
	mutex_init(&l->mutex);
	init_rwsem(&l->rwsem);
	KUNIT_ASSERT_EQ(test, percpu_init_rwsem(&l->percpu_rwsem), 0);
	sema_init(&l->semaphore, 1);
#ifdef CONFIG_RT_MUTEXES
	rt_mutex_init(&l->rt_mutex);
#endif
	init_completion(&l->done);

	recount_test_lock_op(l, l->c->holder_reads, true);
	waiter = kthread_create(recount_test_lock_waiter, l, "recount_kunit_lock");
	if (IS_ERR(waiter)) {
		recount_test_lock_op(l, l->c->holder_reads, false);
		percpu_free_rwsem(&l->percpu_rwsem);
		KUNIT_FAIL(test, "no waiter thread: %pe", waiter);
		return;
	}
	/* On one CPU: its lock call and its lock time are on one clock. */
	kthread_bind(waiter, cpumask_first(cpu_online_mask));
	wake_up_process(waiter);
	/*
	 * Hold the lock 30 ms past the mark of the waiter's wait in it: a mark
	 * that changed meanwhile was of another wait (percpu_down_write() may
	 * wait for an RCU grace period's mutex first), and the hold starts
	 * again from the next one.
	 */
	timeout = jiffies + 10 * HZ;
	while (!waiting && time_before(jiffies, timeout)) {
		mark = READ_ONCE(l->trying) ? READ_ONCE(waiter->recount.lock_at) : 0;
		if (!mark) {
			usleep_range(500, 1000);
			continue;
		}
		msleep(RECOUNT_TEST_HOLD_MS);
		waiting = READ_ONCE(waiter->recount.lock_at) == mark;
	}
	recount_test_lock_op(l, l->c->holder_reads, false);
	wait_for_completion(&l->done);
	kthread_stop(waiter);
	percpu_free_rwsem(&l->percpu_rwsem);

	kunit_info(test, "%s: lock call %llu us, lock time %llu us", l->c->name,
		   l->elapsed / NSEC_PER_USEC, l->waited / NSEC_PER_USEC);
	KUNIT_ASSERT_TRUE_MSG(test, waiting, "%s: the waiter never began to wait as contention",
			      l->c->name);
	KUNIT_EXPECT_GE(test, l->waited, RECOUNT_TEST_HOLD_MS * NSEC_PER_MSEC);
	KUNIT_EXPECT_LE(test, l->waited, l->elapsed);
	/* The hold was the longest wait: it is the maximum, with its end. */
	KUNIT_EXPECT_GE(test, l->waits, 1);
	KUNIT_EXPECT_GE(test, l->max, RECOUNT_TEST_HOLD_MS * NSEC_PER_MSEC);
	KUNIT_EXPECT_LE(test, l->max, l->waited);
	KUNIT_EXPECT_GE(test, l->max_at + NSEC_PER_MSEC, l->began + l->max);
	KUNIT_EXPECT_LE(test, l->max_at, l->ended);
}

static struct kunit_case recount_lock_test_cases[] = {
	KUNIT_CASE_PARAM(recount_test_lock_wait, recount_test_lock_gen_params),
	{}
};

static struct kunit_suite recount_lock_test_suite = {
	.name = "recount_lock",
	.test_cases = recount_lock_test_cases,
};

kunit_test_suite(recount_lock_test_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests of recount's lock contention time");
MODULE_LICENSE("GPL");
