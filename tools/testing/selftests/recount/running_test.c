// SPDX-License-Identifier: GPL-2.0
/*
 * recount: reads of threads that are running right now, from another CPU.
 *
 * A read includes the interval in progress on the CPU that runs the thread,
 * up to the read, split between user and kernel mode: a thread spinning in
 * user mode on a nohz_full CPU, which takes no tick and so no accounting
 * point, still grows read after read, and no value read ever goes back.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/sysinfo.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"
#include "recount_check.h"

#define READ_EVERY_NS	(100 * NSEC_PER_MSEC)
#define NR_READS	8

/* Start @w's work without waiting for it to end. */
static int worker_kick(struct worker *w)
{
	char c = 'r';

	return write(w->go[1], &c, 1) == 1 ? 0 : -1;
}

static int worker_wait(struct worker *w)
{
	char c;

	return read(w->done[0], &c, 1) == 1 ? 0 : -1;
}

/* Set to end the workers below: a spin of fixed length can end before the last read. */
static int spinner_stop;

static bool spinning(void)
{
	return !__atomic_load_n(&spinner_stop, __ATOMIC_RELAXED);
}

static void spinners_stop(void)
{
	__atomic_store_n(&spinner_stop, 1, __ATOMIC_RELAXED);
}

/* Spin in user mode until told to stop. */
static void work_spin_until_stopped(struct worker *w)
{
	while (spinning())
		spin_user(NSEC_PER_MSEC);
}

/* Spin in user mode and in syscalls by turns, so reads fall in both. */
static void work_mixed_until_stopped(struct worker *w)
{
	while (spinning()) {
		spin_user(200 * 1000);
		spin_kernel(200 * 1000);
	}
}

/*
 * A thread spins in user mode on a nohz_full CPU; read from CPU 0 every
 * 100 ms, it grows by the time between the reads, +-5%, all of it user time.
 * Where the spinner did not have its CPU all that time (a kernel thread ran
 * there: on a slow kernel that can take more than 5%), it grows by at least
 * the CPU time its own clock gained between the reads, less 2%.
 */
TEST_F(recount, spinner_on_nohz_full_cpu_is_current)
{
	unsigned long long before[NR_READS], after[NR_READS], lo, hi, grown, user;
	unsigned long long ran_before[NR_READS], ran_after[NR_READS], ran, least;
	struct rnl_record r[NR_READS];
	struct worker w;
	int cpu, i;

	cpu = nohz_full_cpu(0);
	if (cpu < 0)
		SKIP(return, "no nohz_full CPU (boot with nohz_full=, CONFIG_NO_HZ_FULL)");
	ASSERT_EQ(0, pin_self(0));
	spinner_stop = 0;
	ASSERT_EQ(0, worker_start(&w, work_spin_until_stopped, 0, cpu));
	ASSERT_EQ(0, worker_kick(&w));
	sleep_ns(READ_EVERY_NS);
	for (i = 0; i < NR_READS; i++) {
		before[i] = now_ns();
		ran_before[i] = thread_clock_ns(w.thread);
		GET(RECOUNT_A_PID, w.tid, &r[i]);
		ran_after[i] = thread_clock_ns(w.thread);
		after[i] = now_ns();
		if (i + 1 < NR_READS)
			sleep_ns(READ_EVERY_NS);
	}
	spinners_stop();
	ASSERT_EQ(0, worker_wait(&w));
	worker_stop(&w);

	/*
	 * Each read happened somewhere between the clock reads around it: the
	 * time between two reads is at least @lo and at most @hi.
	 */
	for (i = 1; i < NR_READS; i++) {
		lo = before[i] - after[i - 1];
		hi = after[i] - before[i - 1];
		grown = r[i].usage.user + r[i].usage.kernel -
			r[i - 1].usage.user - r[i - 1].usage.kernel;
		user = r[i].usage.user - r[i - 1].usage.user;
		ran = ran_before[i] - ran_after[i - 1];
		least = ran < lo - lo / 20 ? ran - ran / 50 : lo - lo / 20;
		TH_LOG("read %d: %llu-%llu us later, ran %llu us; grew %llu us, %llu us of it user",
		       i, lo / 1000, hi / 1000, ran / 1000, grown / 1000, user / 1000);
		EXPECT_GE(grown, least);
		EXPECT_LE(grown, hi + hi / 20);
		EXPECT_GE(user, grown * 9 / 10);
		/* It had its CPU for most of it, or the bounds above prove little. */
		EXPECT_GE(ran, lo / 2);
	}
}

static const char *first_decrease(const struct rnl_record *a, const struct rnl_record *b)
{
	if (b->usage.user < a->usage.user)
		return "user";
	if (b->usage.kernel < a->usage.kernel)
		return "kernel";
	return NULL;
}

/*
 * Reads of a thread that is running, of its process and of its CPU, as fast
 * as they come: no level of any of them ever goes back.
 */
TEST_F(recount, busy_thread_reads_never_go_back)
{
	struct rnl_record thread[2], process[2], cpu_rec[2];
	unsigned long long start, end, ran;
	int cpu, n = 0, grew = 0;
	const char *m;
	struct worker w;

	cpu = nohz_full_cpu(0);
	if (cpu < 0)
		cpu = get_nprocs() > 1 ? 1 : 0;
	ASSERT_EQ(0, pin_self(0));
	spinner_stop = 0;
	ASSERT_EQ(0, worker_start(&w, work_mixed_until_stopped, 0, cpu));
	ASSERT_EQ(0, worker_kick(&w));
	/* From the moment the worker runs. */
	GET(RECOUNT_A_PID, w.tid, &thread[0]);
	do {
		GET(RECOUNT_A_PID, w.tid, &thread[1]);
	} while (thread[1].usage.user + thread[1].usage.kernel ==
		 thread[0].usage.user + thread[0].usage.kernel);
	thread[0] = thread[1];
	GET(RECOUNT_A_TGID, getpid(), &process[0]);
	GET(RECOUNT_A_CPU, cpu, &cpu_rec[0]);
	start = now_ns();
	ran = thread_clock_ns(w.thread);
	end = start + 1000 * NSEC_PER_MSEC;
	while (now_ns() < end) {
		GET(RECOUNT_A_PID, w.tid, &thread[1]);
		GET(RECOUNT_A_TGID, getpid(), &process[1]);
		GET(RECOUNT_A_CPU, cpu, &cpu_rec[1]);
		m = first_decrease(&thread[0], &thread[1]);
		ASSERT_EQ(NULL, m) TH_LOG("read %d: the thread's %s time went back", n, m);
		m = first_decrease(&process[0], &process[1]);
		ASSERT_EQ(NULL, m) TH_LOG("read %d: the process's %s time went back", n, m);
		m = first_decrease(&cpu_rec[0], &cpu_rec[1]);
		ASSERT_EQ(NULL, m) TH_LOG("read %d: CPU %d's %s time went back", n, cpu, m);
		grew += thread[1].usage.user + thread[1].usage.kernel >
			thread[0].usage.user + thread[0].usage.kernel;
		thread[0] = thread[1];
		process[0] = process[1];
		cpu_rec[0] = cpu_rec[1];
		n++;
	}
	ran = thread_clock_ns(w.thread) - ran;
	end = now_ns();
	spinners_stop();
	ASSERT_EQ(0, worker_wait(&w));
	worker_stop(&w);
	TH_LOG("%d reads of each, the thread grew at %d; it ran %llu of %llu ms", n, grew,
	       ran / NSEC_PER_MSEC, (end - start) / NSEC_PER_MSEC);
	/*
	 * Running, it grew at (nearly) every read: at 90% of them, or of its
	 * share of the time where other tasks took its CPU part of it, which
	 * was not most of it.
	 */
	EXPECT_GE(ran, (end - start) / 4);
	EXPECT_GE(grew, n * 9 / 10 * ran / (end - start));
}

/*
 * Enter and leave the kernel as fast as it goes, 64 times, then spin in
 * user mode a little, until told to stop: reads fall among many
 * transitions, and next to a lone one after a stretch in one mode.
 */
static void work_syscalls_until_stopped(struct worker *w)
{
	unsigned long x = 0;
	int i;

	while (spinning()) {
		for (i = 0; i < 64; i++)
			syscall(SYS_getppid);
		for (i = 0; i < 20000; i++)
			asm volatile("" : "+r" (x));
	}
}

#define SYSCALL_READERS	3

struct syscall_reader {
	pthread_t thread;
	pid_t tid;
	int cpu, target_cpu, reads, err;
	char first[96];
};

/* One reader, on its own CPU: the thread and its CPU, read after read. */
static void *syscall_reader_main(void *p)
{
	struct syscall_reader *rd = p;
	struct rnl_record thread[2], cpu[2];
	unsigned long long end;
	struct rnl_reply r;
	const char *m;
	struct rnl nl;

	if (pin_self(rd->cpu)) {
		rd->err = -errno;
		return NULL;
	}
	rd->err = rnl_open(&nl);
	if (rd->err)
		return NULL;
	thread[0] = (struct rnl_record){};
	cpu[0] = (struct rnl_record){};
	end = now_ns() + 3 * NSEC_PER_SEC;
	while (now_ns() < end && !rd->first[0]) {
		rd->err = rnl_get(&nl, RECOUNT_A_PID, rd->tid, &r);
		if (rd->err)
			break;
		thread[1] = r.rec;
		rd->err = rnl_get(&nl, RECOUNT_A_CPU, rd->target_cpu, &r);
		if (rd->err)
			break;
		cpu[1] = r.rec;
		m = first_decrease(&thread[0], &thread[1]);
		if (m)
			snprintf(rd->first, sizeof(rd->first),
				 "read %d: the thread's %s time went back by %llu ns", rd->reads, m,
				 rnl_usage_drop(&thread[0].usage, &thread[1].usage, m));
		m = first_decrease(&cpu[0], &cpu[1]);
		if (m && !rd->first[0])
			snprintf(rd->first, sizeof(rd->first),
				 "read %d: the CPU's %s time went back by %llu ns", rd->reads, m,
				 rnl_usage_drop(&cpu[0].usage, &cpu[1].usage, m));
		thread[0] = thread[1];
		cpu[0] = cpu[1];
		rd->reads++;
	}
	rnl_close(&nl);
	return NULL;
}

/*
 * A thread in bursts of syscalls changes mode every few hundred nanoseconds,
 * then spins in user mode; readers on up to three other CPUs read it and its
 * CPU at once, as fast as they can, for 3 s: for each of them no level goes
 * back, however close to a transition its read falls. The documentation
 * allows a read to show a store's way to another CPU too much (a transition
 * does not order its clock read after its first store); no run has shown
 * it, so the test allows nothing and says by how much, if one does.
 */
TEST_F(recount, reads_during_syscalls_never_go_back)
{
	struct syscall_reader rd[SYSCALL_READERS];
	int cpus[SYSCALL_READERS + 1], cpu, i, n = 0;
	struct worker w;
	cpu_set_t set;

	/* The thread on one CPU we may use, readers on up to three others. */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (i = 0; i < CPU_SETSIZE && n < SYSCALL_READERS + 1; i++)
		if (CPU_ISSET(i, &set))
			cpus[n++] = i;
	if (n < 2)
		SKIP(return, "one CPU: a read from another CPU needs two");
	cpu = cpus[0];
	n--;
	spinner_stop = 0;
	ASSERT_EQ(0, worker_start(&w, work_syscalls_until_stopped, 0, cpu));
	ASSERT_EQ(0, worker_kick(&w));
	for (i = 0; i < n; i++) {
		memset(&rd[i], 0, sizeof(rd[i]));
		rd[i].tid = w.tid;
		rd[i].target_cpu = cpu;
		rd[i].cpu = cpus[i + 1];
		ASSERT_EQ(0, pthread_create(&rd[i].thread, NULL, syscall_reader_main, &rd[i]));
	}
	for (i = 0; i < n; i++)
		pthread_join(rd[i].thread, NULL);
	spinners_stop();
	ASSERT_EQ(0, worker_wait(&w));
	worker_stop(&w);
	for (i = 0; i < n; i++) {
		TH_LOG("reader %d on CPU %d: %d reads", i, rd[i].cpu, rd[i].reads);
		EXPECT_EQ(0, rd[i].err) TH_LOG("reader %d: %s", i, strerror(-rd[i].err));
		EXPECT_EQ(0, rd[i].first[0]) TH_LOG("reader %d: %s", i, rd[i].first);
		EXPECT_GT(rd[i].reads, 100);
	}
}

TEST_HARNESS_MAIN
