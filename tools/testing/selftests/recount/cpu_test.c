// SPDX-License-Identifier: GPL-2.0
/*
 * recount: per-CPU user, kernel and idle time.
 *
 * Every nanosecond of a CPU is user, kernel or idle time, so their sum grows
 * with the elapsed time; what a thread pinned to a CPU does shows on that
 * CPU; and the interrupts an idle CPU handles are its kernel time.
 */
#define _GNU_SOURCE
#include <sys/sysinfo.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"

struct cpu_sample {
	struct rnl_record rec;
	/* CLOCK_MONOTONIC before the read was asked and after it returned */
	unsigned long long asked, got;
};

static int sample_cpu(struct rnl *nl, int cpu, struct cpu_sample *s)
{
	struct rnl_reply r;
	int err;

	s->asked = now_ns();
	err = rnl_get(nl, RECOUNT_A_CPU, cpu, &r);
	s->got = now_ns();
	s->rec = r.rec;
	return err;
}

/*
 * Run @w once; read it, at rest, and @cpu before (@ta, @a) and after (@tb,
 * @b). Returns 0, or -1 if a read or the run failed.
 */
static int run_between_samples(struct rnl *nl, struct worker *w, int cpu,
			       struct rnl_record *ta, struct cpu_sample *a,
			       struct rnl_record *tb, struct cpu_sample *b)
{
	if (wait_at_rest(nl, w->tid, ta) || sample_cpu(nl, cpu, a) || worker_run(w) ||
	    wait_at_rest(nl, w->tid, tb) || sample_cpu(nl, cpu, b))
		return -1;
	return 0;
}

static unsigned long long cpu_sum(const struct rnl_record *r)
{
	return r->usage.user + r->usage.kernel + r->usage.idle;
}

/*
 * Per CPU, user + kernel + idle grows by the time elapsed between the reads,
 * within 2%: at least the time from the end of the first read to the start
 * of the second, at most the time from the start of the first to the end of
 * the second.
 */
TEST_F(recount, cpu_time_adds_up_to_elapsed)
{
	int cpu, ncpu = get_nprocs();
	struct cpu_sample a[64], b[64];

	ASSERT_LE(ncpu, 64);
	for (cpu = 0; cpu < ncpu; cpu++)
		ASSERT_EQ(0, sample_cpu(&self->nl, cpu, &a[cpu]));
	/* Keep one CPU busy in user mode meanwhile, sleep on the others. */
	spin_user(300 * NSEC_PER_MSEC);
	sleep_ns(700 * NSEC_PER_MSEC);
	for (cpu = 0; cpu < ncpu; cpu++)
		ASSERT_EQ(0, sample_cpu(&self->nl, cpu, &b[cpu]));

	for (cpu = 0; cpu < ncpu; cpu++) {
		unsigned long long inner = b[cpu].asked - a[cpu].got;
		unsigned long long outer = b[cpu].got - a[cpu].asked;
		unsigned long long sum = cpu_sum(&b[cpu].rec) - cpu_sum(&a[cpu].rec);

		ASSERT_TRUE(b[cpu].rec.usage.has & RNL_IDLE);
		TH_LOG("cpu %d: elapsed %llu..%llu us, user %llu, kernel %llu, idle %llu",
		       cpu, inner / 1000, outer / 1000,
		       (b[cpu].rec.usage.user - a[cpu].rec.usage.user) / 1000,
		       (b[cpu].rec.usage.kernel - a[cpu].rec.usage.kernel) / 1000,
		       (b[cpu].rec.usage.idle - a[cpu].rec.usage.idle) / 1000);
		EXPECT_GE(sum, inner - inner / 50);
		EXPECT_LE(sum, outer + outer / 50);
	}
}

/*
 * A thread pinned to a CPU puts its user time on that CPU. A running CPU's
 * record is as of its last accounting point, up to a tick old, while a
 * thread's is current: both are read once the thread has switched out (the
 * switch charges both), before and after its work.
 */
TEST_F(recount, pinned_thread_charges_its_cpu)
{
	int cpu = get_nprocs() > 1 ? 1 : 0;
	struct cpu_sample a, b;
	struct rnl_record ta, tb;
	struct worker w;

	ASSERT_EQ(0, worker_start(&w, work_spin_user, 400 * NSEC_PER_MSEC, cpu));
	ASSERT_EQ(0, run_between_samples(&self->nl, &w, cpu, &ta, &a, &tb, &b));
	worker_stop(&w);

	/*
	 * The CPU ran at least the thread's user time, in user mode, and that
	 * is a good part of the CPU time the thread saw itself spin (its
	 * interrupts are kernel time: on a debug kernel they take a tenth).
	 */
	TH_LOG("cpu %d: user %llu us; the thread worked %llu us, user %llu us", cpu,
	       (b.rec.usage.user - a.rec.usage.user) / 1000, w.worked / 1000,
	       (tb.usage.user - ta.usage.user) / 1000);
	EXPECT_GE(b.rec.usage.user - a.rec.usage.user, tb.usage.user - ta.usage.user);
	EXPECT_GE(tb.usage.user - ta.usage.user, w.worked / 2);
}

/* Sleep @w->arg times for a millisecond: each wakeup interrupts an idle CPU. */
static void work_naps(struct worker *w)
{
	unsigned long long i;

	for (i = 0; i < w->arg; i++)
		sleep_ns(NSEC_PER_MSEC);
}

/*
 * An interrupt that arrives while a CPU is idle (here the timer that ends a
 * nap of a thread pinned to it) is handled by the CPU, not by a thread: its
 * time is the CPU's kernel time, reported apart as idle-irq-time, and not
 * idle time. Between two reads taken while the thread is at rest, the CPU's
 * kernel time grew by at least the thread's plus that of the interrupts.
 */
TEST_F(recount, idle_cpu_interrupts_are_its_kernel_time)
{
	int cpu = get_nprocs() > 1 ? 1 : 0;
	unsigned long long irq, kernel;
	struct rnl_record ta, tb;
	struct cpu_sample a, b;
	struct worker w;

	ASSERT_EQ(0, worker_start(&w, work_naps, 200, cpu));
	ASSERT_EQ(0, run_between_samples(&self->nl, &w, cpu, &ta, &a, &tb, &b));
	worker_stop(&w);

	ASSERT_TRUE(b.rec.usage.has & RNL_IDLE_IRQ);
	irq = b.rec.usage.idle_irq - a.rec.usage.idle_irq;
	kernel = b.rec.usage.kernel - a.rec.usage.kernel;
	TH_LOG("cpu %d: kernel %llu us, of which interrupts while idle %llu us; "
	       "thread kernel %llu us", cpu, kernel / 1000, irq / 1000,
	       (tb.usage.kernel - ta.usage.kernel) / 1000);
	/* At least a microsecond per wakeup (5 us on arm64 QEMU, 45 us on x86 TCG). */
	EXPECT_GE(irq, 200 * 1000ULL);
	EXPECT_GE(kernel, irq + tb.usage.kernel - ta.usage.kernel);
}

TEST_HARNESS_MAIN
