/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture every recount selftest uses: a RECOUNT socket, with recount on;
 * the sysctls a test may change are set back as they were when it ends,
 * also after a failed assertion (not after a timeout, which kills it).
 * Include after kselftest_harness.h.
 */
#ifndef _RECOUNT_FIXTURE_H
#define _RECOUNT_FIXTURE_H

#include "recount_nl.h"
#include "recount_util.h"

FIXTURE(recount) {
	struct rnl nl;
	bool has_paranoid, has_pmu;
	int paranoid, pmu;	/* perf_event_paranoid, recount_pmu at the start */
};

FIXTURE_SETUP(recount)
{
	int err = rnl_open(&self->nl);

	if (err == -ENOENT)
		SKIP(return, "the kernel has no RECOUNT netlink family (CONFIG_RECOUNT=n)");
	ASSERT_EQ(0, err);
	self->has_paranoid = !int_file_get(PARANOID, &self->paranoid);
	self->has_pmu = !int_file_get(RECOUNT_PMU_SYSCTL, &self->pmu);
	if (recount_sysctl_get() != 1)
		ASSERT_EQ(0, recount_sysctl_set(1)) TH_LOG("cannot switch recount on");
}

/* A test that chose PMU events (events_test.c) leaves none chosen. */
FIXTURE_TEARDOWN(recount)
{
	struct rnl_reply r;
	int v;

	if (!rnl_get_info(&self->nl, &r) && r.rec.nr_events)
		rnl_set_events(&self->nl, NULL, 0, &r);
	rnl_close(&self->nl);
	if (self->has_paranoid && !int_file_get(PARANOID, &v) && v != self->paranoid)
		int_file_set(PARANOID, self->paranoid);
	if (self->has_pmu && !int_file_get(RECOUNT_PMU_SYSCTL, &v) && v != self->pmu)
		int_file_set(RECOUNT_PMU_SYSCTL, self->pmu);
}

/* Get a record or fail the test with the kernel's reason. */
#define GET(sel, id, out) do {							\
	__u32 __id = (id);							\
	struct rnl_reply __r;							\
	int __err = rnl_get(&self->nl, (sel), __id, &__r);			\
	ASSERT_EQ(0, __err) TH_LOG("get %s %u: %s (%s)", #sel, __id,		\
				   strerror(-__err), __r.extack);		\
	*(out) = __r.rec;							\
} while (0)

/*
 * Wait until thread @tid is at rest (blocked, switched out): it is not
 * runnable before either of two reads 20 ms apart that are equal, nor after
 * them, which a running thread cannot manage with a periodic tick. Equal
 * reads alone do not do: a thread that waits for a CPU gains nothing
 * either, and a slow kernel makes it wait long. (Where /proc cannot tell,
 * as for a thread of another pid namespace, the reads alone decide.)
 * Returns 0 with its record, or a negative errno.
 */
static inline int wait_at_rest(struct rnl *nl, pid_t tid, struct rnl_record *rec)
{
	unsigned long long end = now_ns() + 10 * NSEC_PER_SEC;
	struct rnl_reply a, b;
	int err;

	while (now_ns() < end) {
		if (thread_state(tid) == 'R') {
			sleep_ns(NSEC_PER_MSEC);
			continue;
		}
		err = rnl_get(nl, RECOUNT_A_PID, tid, &a);
		if (err)
			return err;
		sleep_ns(20 * NSEC_PER_MSEC);
		/* Switched out before the second read, if it ran since the first. */
		if (thread_state(tid) == 'R')
			continue;
		err = rnl_get(nl, RECOUNT_A_PID, tid, &b);
		if (err)
			return err;
		if (thread_state(tid) != 'R' &&
		    a.rec.usage.user == b.rec.usage.user &&
		    a.rec.usage.kernel == b.rec.usage.kernel) {
			*rec = b.rec;
			return 0;
		}
	}
	return -EBUSY;
}

#define AT_REST(tid, out) do {							\
	pid_t __tid = (tid);							\
	ASSERT_EQ(0, wait_at_rest(&self->nl, __tid, (out)))			\
		TH_LOG("thread %d never came to rest", (int)__tid);		\
} while (0)

#endif /* _RECOUNT_FIXTURE_H */
