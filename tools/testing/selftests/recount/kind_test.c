// SPDX-License-Identifier: GPL-2.0
/*
 * recount: CPU kinds.
 *
 * The test run declares a two-kind machine with the boot parameter
 * recount_efficiency_cpus=. A thread's per-kind usage moves only on the kind
 * it runs on; per-kind values add up exactly to the totals; a thread never
 * exceeds its process.
 */
#define _GNU_SOURCE
#include <sys/sysinfo.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"
#include "recount_check.h"

/* The first CPU of kind @kind, as get-info lists them, or -1. */
static int first_cpu_of(struct rnl *nl, int kind)
{
	struct rnl_reply r;

	if (rnl_get_info(nl, &r) || !r.rec.kind_cpus[kind][0])
		return -1;
	return atoi(r.rec.kind_cpus[kind]);
}

TEST_F(recount, kinds_from_boot_parameter)
{
	char efficiency[64];
	struct rnl_record cpu;
	struct rnl_reply r;

	if (!cmdline_has("recount_efficiency_cpus=", efficiency, sizeof(efficiency)))
		SKIP(return, "booted without recount_efficiency_cpus=");
	ASSERT_EQ(0, rnl_get_info(&self->nl, &r));
	EXPECT_STREQ(efficiency, r.rec.kind_cpus[RECOUNT_KIND_EFFICIENCY]);
	TH_LOG("performance CPUs %s, efficiency CPUs %s",
	       r.rec.kind_cpus[RECOUNT_KIND_PERFORMANCE], r.rec.kind_cpus[RECOUNT_KIND_EFFICIENCY]);

	GET(RECOUNT_A_CPU, first_cpu_of(&self->nl, RECOUNT_KIND_EFFICIENCY), &cpu);
	EXPECT_TRUE(cpu.usage.has & RNL_KIND);
	EXPECT_EQ(RECOUNT_KIND_EFFICIENCY, cpu.usage.kind);
	GET(RECOUNT_A_CPU, first_cpu_of(&self->nl, RECOUNT_KIND_PERFORMANCE), &cpu);
	EXPECT_EQ(RECOUNT_KIND_PERFORMANCE, cpu.usage.kind);
}

static void work_mixed(struct worker *w)
{
	spin_user(w->arg);
	spin_kernel(w->arg);
}

static const struct rnl_usage *kind_of(const struct rnl_record *r, __u32 kind)
{
	int k;

	for (k = 0; k < r->nr_kinds; k++)
		if (r->per_kind[k].kind == kind)
			return &r->per_kind[k];
	return NULL;
}

#define NO_TWO_KINDS "needs CPUs of both kinds: boot with recount_efficiency_cpus="

/* A CPU of each kind, in @perf and @eff; false if there are not two kinds. */
static bool two_kinds(struct rnl *nl, int *perf, int *eff)
{
	*perf = first_cpu_of(nl, RECOUNT_KIND_PERFORMANCE);
	*eff = first_cpu_of(nl, RECOUNT_KIND_EFFICIENCY);
	return *perf >= 0 && *eff >= 0;
}

/* A thread pinned to one kind shows exactly no change on the other. */
TEST_F(recount, pinned_thread_stays_on_its_kind)
{
	int perf, eff, kind;

	if (!two_kinds(&self->nl, &perf, &eff))
		SKIP(return, NO_TWO_KINDS);
	for (kind = 0; kind < 2; kind++) {
		const struct rnl_usage *ua, *ub;
		struct rnl_record a, b;
		struct worker w;

		ASSERT_EQ(0, worker_start(&w, work_mixed, 100 * NSEC_PER_MSEC,
					  kind == RECOUNT_KIND_PERFORMANCE ? perf : eff));
		AT_REST(w.tid, &a);
		ASSERT_EQ(0, worker_run(&w));
		AT_REST(w.tid, &b);
		worker_stop(&w);

		/*
		 * Its own kind moved, by at least the CPU time the thread saw
		 * itself work, less 2% (wall time would not do: interrupts and
		 * other tasks take a share of it, a large one on a debug
		 * kernel)...
		 */
		ua = kind_of(&a, kind);
		ub = kind_of(&b, kind);
		ASSERT_NE(NULL, ua);
		ASSERT_NE(NULL, ub);
		TH_LOG("kind %d: worked %llu us, user %llu us, kernel %llu us", kind,
		       w.worked / 1000, (ub->user - ua->user) / 1000,
		       (ub->kernel - ua->kernel) / 1000);
		EXPECT_GE(ub->user - ua->user + ub->kernel - ua->kernel,
			  w.worked - w.worked / 50);
		EXPECT_GT(ub->user, ua->user);
		EXPECT_GT(ub->kernel, ua->kernel);
		/* ...the other did not, in any metric. */
		ua = kind_of(&a, !kind);
		ub = kind_of(&b, !kind);
		ASSERT_NE(NULL, ua);
		ASSERT_NE(NULL, ub);
		EXPECT_EQ(0, memcmp(ua, ub, sizeof(*ua)))
			TH_LOG("kind %d: time %llu/%llu -> %llu/%llu", !kind, ua->user, ua->kernel,
			       ub->user, ub->kernel);
	}
}

/* The CPU time work_both_kinds() spent on each CPU, by its own clock. */
static unsigned long long worked_on[2];

static void work_both_kinds(struct worker *w)
{
	int cpus[2] = { w->arg >> 32, w->arg & 0xffffffff };
	unsigned long long t0;
	int i;

	for (i = 0; i < 2; i++) {
		if (pin_self(cpus[i]))
			abort();
		/* sched_setaffinity() returns on the new CPU. */
		t0 = thread_cpu_ns();
		work_mixed(&(struct worker){ .arg = 60 * NSEC_PER_MSEC });
		worked_on[i] = thread_cpu_ns() - t0;
	}
}

/*
 * Per-kind values add up exactly to the totals, for threads and processes;
 * a thread is at most its process, in total and on every kind.
 */
TEST_F(recount, kinds_add_up_and_threads_stay_within_process)
{
	struct rnl_record thread, process;
	struct worker w;
	int perf, eff, i, k;

	if (!two_kinds(&self->nl, &perf, &eff))
		SKIP(return, NO_TWO_KINDS);
	ASSERT_EQ(0, worker_start(&w, work_both_kinds, ((__u64)perf << 32) | eff, -1));
	ASSERT_EQ(0, worker_run(&w));
	AT_REST(w.tid, &thread);
	GET(RECOUNT_A_TGID, getpid(), &process);
	worker_stop(&w);

	ASSERT_EQ(2, thread.nr_kinds);
	ASSERT_EQ(2, process.nr_kinds);
	/*
	 * Each kind has at least the CPU time the thread saw itself work on
	 * its CPU of that kind, less 2%, and some of it in each level. Its
	 * start, before it was pinned, adds to one kind or the other.
	 */
	for (i = 0; i < 2; i++) {
		const struct rnl_usage *u;

		k = i ? RECOUNT_KIND_EFFICIENCY : RECOUNT_KIND_PERFORMANCE;
		u = kind_of(&thread, k);
		ASSERT_NE(NULL, u);
		TH_LOG("kind %d: worked %llu us, user %llu us, kernel %llu us", k,
		       worked_on[i] / 1000, u->user / 1000, u->kernel / 1000);
		EXPECT_GE(u->user + u->kernel, worked_on[i] - worked_on[i] / 50);
		EXPECT_GT(u->user, 0);
		EXPECT_GT(u->kernel, 0);
	}
	EXPECT_HOLDS(rnl_kinds_differ(&thread));
	EXPECT_HOLDS(rnl_kinds_differ(&process));
	EXPECT_HOLDS(rnl_usage_exceeds(&thread.usage, &process.usage));
	for (k = 0; k < 2; k++)
		EXPECT_HOLDS(rnl_usage_exceeds(kind_of(&thread, k), kind_of(&process, k)));
}

TEST_HARNESS_MAIN
