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

/* Off freezes every value; on resumes accounting from where it stopped. */
TEST_F(recount, off_freezes_on_resumes)
{
	struct rnl_record a, b, c, ca, cb, pa, pb;
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

	ASSERT_EQ(0, recount_sysctl_set(1));
	spin_user(100 * NSEC_PER_MSEC);
	spin_kernel(100 * NSEC_PER_MSEC);
	GET(RECOUNT_A_PID, tid, &c);
	EXPECT_EQ(0, c.flags & RECOUNT_FLAGS_DISABLED);
	EXPECT_GE(c.usage.user - b.usage.user, 90 * NSEC_PER_MSEC);
	EXPECT_GE(c.usage.kernel - b.usage.kernel, 50 * NSEC_PER_MSEC);
	/* Nothing was charged for the time accounting was off. */
	EXPECT_LE(rnl_cpu_time(&c.usage) - rnl_cpu_time(&b.usage), 300 * NSEC_PER_MSEC);
}

/* Threads created while recount was off are accounted once it is on. */
TEST_F(recount, tasks_from_before_enabling_are_accounted)
{
	struct rnl_record a, b;
	struct worker w;

	ASSERT_EQ(0, recount_sysctl_set(0));
	ASSERT_EQ(0, worker_start(&w, work_spin_user, 200 * NSEC_PER_MSEC, -1));
	ASSERT_EQ(0, worker_run(&w));
	GET(RECOUNT_A_PID, w.tid, &a);
	EXPECT_EQ(0, rnl_cpu_time(&a.usage));
	ASSERT_EQ(0, recount_sysctl_set(1));
	ASSERT_EQ(0, worker_run(&w));
	GET(RECOUNT_A_PID, w.tid, &b);
	worker_stop(&w);
	EXPECT_GE(b.usage.user, 180 * NSEC_PER_MSEC);
}

/* Only CAP_SYS_ADMIN may switch recount: drop it and try. */
TEST_F(recount, switching_needs_cap_sys_admin)
{
	EXPECT_EQ(-EPERM, write_without_cap_sys_admin(RECOUNT_SYSCTL, "0\n"));
	EXPECT_EQ(1, recount_sysctl_get());
}

TEST_HARNESS_MAIN
