// SPDX-License-Identifier: GPL-2.0
/*
 * recount: switching accounting off and on (sysctl kernel.recount, boot
 * parameter recount=).
 */
#define _GNU_SOURCE

#include "../kselftest_harness.h"
#include "recount_fixture.h"

/* With recount=on on the command line, accounting was on from boot. */
TEST(boot_parameter)
{
	char cmdline[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(cmdline, sizeof(cmdline), f));
	fclose(f);
	if (!strstr(cmdline, "recount=on"))
		SKIP(return, "booted without recount=on");
	if (recount_sysctl_get() < 0)
		SKIP(return, "no sysctl kernel.recount (CONFIG_RECOUNT=n)");
	/* The other tests of this program run after this one. */
	EXPECT_EQ(1, recount_sysctl_get());
}

/* The CPU time the thread's own clock counted from @from to @to, plus 2%. */
static unsigned long long at_most(unsigned long long from, unsigned long long to)
{
	return to - from + (to - from) / 50;
}

/*
 * The CPU time recount charged from read @a to read @b lies within what the
 * thread's own clock (the scheduler's) counted around them: at least @inner,
 * from after @a returned to before @b was asked, and at most @outer, from
 * before @a was asked to after @b returned; each within 2%. Whatever the
 * reads take, and however long the machine stalls in them, is in @outer.
 */
#define EXPECT_CHARGED(a, b, inner, outer) do {					\
	__u64 __got = rnl_cpu_time(&(b)->usage) - rnl_cpu_time(&(a)->usage);	\
	__u64 __in = (inner), __out = (outer);					\
	EXPECT_GE(__got, __in - __in / 50)					\
		TH_LOG("charged %llu ns, CPU time %llu..%llu ns", __got, __in, __out); \
	EXPECT_LE(__got, __out + __out / 50)					\
		TH_LOG("charged %llu ns, CPU time %llu..%llu ns", __got, __in, __out); \
} while (0)

/* Off freezes every value; on resumes accounting from where it stopped. */
TEST_F(recount, off_freezes_on_resumes)
{
	struct rnl_record a, b, c, d, e, ca, cb, pa, pb;
	unsigned long long on, c0, c1, d0, d1, e0, e1;
	pid_t tid = sys_gettid();

	GET(RECOUNT_A_PID, tid, &a);
	EXPECT_EQ(0, a.flags & RECOUNT_FLAGS_DISABLED);

	ASSERT_EQ(0, recount_sysctl_set(0));
	EXPECT_EQ(0, recount_sysctl_get());
	GET(RECOUNT_A_PID, tid, &a);
	GET(RECOUNT_A_TGID, getpid(), &pa);
	GET(RECOUNT_A_CPU, 0, &ca);
	spin_user(100 * NSEC_PER_MSEC);
	spin_kernel(100 * NSEC_PER_MSEC);
	sleep_ns(100 * NSEC_PER_MSEC);
	GET(RECOUNT_A_PID, tid, &b);
	GET(RECOUNT_A_TGID, getpid(), &pb);
	GET(RECOUNT_A_CPU, 0, &cb);

	EXPECT_TRUE(b.flags & RECOUNT_FLAGS_DISABLED);
	EXPECT_EQ(a.usage.user, b.usage.user);
	EXPECT_EQ(a.usage.kernel, b.usage.kernel);
	EXPECT_EQ(pa.usage.user, pb.usage.user);
	EXPECT_EQ(pa.usage.kernel, pb.usage.kernel);
	EXPECT_EQ(ca.usage.user, cb.usage.user);
	EXPECT_EQ(ca.usage.kernel, cb.usage.kernel);
	EXPECT_EQ(ca.usage.idle, cb.usage.idle);

	on = thread_cpu_ns();
	ASSERT_EQ(0, recount_sysctl_set(1));
	c0 = thread_cpu_ns();
	GET(RECOUNT_A_PID, tid, &c);
	c1 = thread_cpu_ns();
	spin_user(100 * NSEC_PER_MSEC);
	d0 = thread_cpu_ns();
	GET(RECOUNT_A_PID, tid, &d);
	d1 = thread_cpu_ns();
	spin_kernel(100 * NSEC_PER_MSEC);
	e0 = thread_cpu_ns();
	GET(RECOUNT_A_PID, tid, &e);
	e1 = thread_cpu_ns();
	EXPECT_EQ(0, e.flags & RECOUNT_FLAGS_DISABLED);

	/*
	 * Each spin is charged all the CPU time it took, to its own level
	 * mostly: interrupts a spin in user mode takes are kernel time (a
	 * debug kernel's take a good part of it), the copies of a spin in
	 * read() all are.
	 */
	EXPECT_CHARGED(&c, &d, d0 - c1, d1 - c0);
	EXPECT_GT(d.usage.user - c.usage.user, d.usage.kernel - c.usage.kernel);
	EXPECT_CHARGED(&d, &e, e0 - d1, e1 - d0);
	EXPECT_GT(e.usage.kernel - d.usage.kernel, e.usage.user - d.usage.user);
	/*
	 * Nothing was charged for the time accounting was off (200 ms of
	 * spinning): at most what the thread ran from switching it on to
	 * reading c.
	 */
	EXPECT_LE(rnl_cpu_time(&c.usage) - rnl_cpu_time(&b.usage), at_most(on, c1));
}

/* Threads created while recount was off are accounted once it is on. */
TEST_F(recount, tasks_from_before_enabling_are_accounted)
{
	unsigned long long worked_off;
	struct rnl_record a, b;
	struct worker w;

	ASSERT_EQ(0, recount_sysctl_set(0));
	ASSERT_EQ(0, worker_start(&w, work_spin_user, 200 * NSEC_PER_MSEC, -1));
	ASSERT_EQ(0, worker_run(&w));
	GET(RECOUNT_A_PID, w.tid, &a);
	EXPECT_EQ(0, rnl_cpu_time(&a.usage));
	ASSERT_EQ(0, recount_sysctl_set(1));
	worked_off = w.worked;
	ASSERT_EQ(0, worker_run(&w));
	GET(RECOUNT_A_PID, w.tid, &b);
	worker_stop(&w);
	/* A good part of the CPU time it saw itself spin since. */
	EXPECT_GE(b.usage.user, (w.worked - worked_off) / 2);
}

/* Only CAP_SYS_ADMIN may switch recount: drop it and try. */
TEST_F(recount, switching_needs_cap_sys_admin)
{
	EXPECT_EQ(-EPERM, write_without_cap_sys_admin(RECOUNT_SYSCTL, "0\n"));
	EXPECT_EQ(1, recount_sysctl_get());
}

TEST_HARNESS_MAIN
