// SPDX-License-Identifier: GPL-2.0
/*
 * recount: CPU hotplug.
 *
 * CPUs go offline and come back in a loop while the threads of a child
 * process run and migrate between them and a reader dumps every CPU and the
 * process. No value any reader sees ever decreases; a CPU is charged nothing
 * while it is offline; and once the child is at rest nothing was lost or
 * counted twice: the process is exactly its live thread and its exited
 * threads, per kind as in total, and its exited threads at least what their
 * exit records said. A CPU back online counts again, its counters too, and
 * the cycle marks neither it nor its per-CPU kernel threads inexact.
 *
 * RECOUNT_HOTPLUG_ROUNDS=<n> sets how many times each CPU goes offline.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"
#include "recount_check.h"

#define WORKERS		6
#define MAX_CPUS	64

/* Why no CPU can go offline here, or NULL. */
static const char *no_hotplug(int ncpus)
{
	static char why[128];

	if (ncpus < 2)
		return "one CPU: nothing to take offline";
	if (access("/sys/devices/system/cpu/cpu1/online", W_OK)) {
		snprintf(why, sizeof(why), "CPU 1 cannot go offline (CONFIG_HOTPLUG_CPU=n?): %s",
			 strerror(errno));
		return why;
	}
	return NULL;
}

static int set_online(int cpu, bool on)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return write_file(path, on ? "1" : "0");
}

/* The child: workers that spin at both levels and hop between CPUs. */
struct child_ctl {
	atomic_int stop;
	int ncpus;
};

static void *churn(void *p)
{
	struct child_ctl *ctl = p;
	unsigned int r = sys_gettid();
	cpu_set_t set;

	while (!atomic_load(&ctl->stop)) {
		spin_user(2 * NSEC_PER_MSEC);
		spin_kernel(NSEC_PER_MSEC);
		/* CPU 0 never goes offline: no affinity is ever broken. */
		CPU_ZERO(&set);
		CPU_SET(0, &set);
		CPU_SET(rand_r(&r) % ctl->ncpus, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	return NULL;
}

static void run_child(struct child_ctl *ctl, int done_fd, int go_fd)
{
	pthread_t th[WORKERS];
	char c = 'd';
	int i;

	for (i = 0; i < WORKERS; i++)
		if (pthread_create(&th[i], NULL, churn, ctl))
			_exit(1);
	for (i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	if (write(done_fd, &c, 1) != 1)
		_exit(1);
	/* At rest until the parent has read everything. */
	if (read(go_fd, &c, 1) != 1)
		_exit(1);
	_exit(0);
}

/* The reader: every CPU and the child, again and again; nothing decreases. */
struct reader {
	pthread_t thread;
	pid_t child;
	atomic_int stop;
	unsigned long dumps, regressions;
	char first[200];
	struct rnl_usage last[MAX_CPUS];
	bool seen[MAX_CPUS];
};

static void check_cpu(const struct rnl_record *rec, void *arg)
{
	struct reader *rd = arg;
	const char *m;

	if (!rec->has_cpu || rec->cpu >= MAX_CPUS)
		return;
	m = rd->seen[rec->cpu] ? rnl_usage_exceeds(&rd->last[rec->cpu], &rec->usage) : NULL;
	if (m && !rd->regressions++)
		snprintf(rd->first, sizeof(rd->first), "cpu %u: %s decreased", rec->cpu, m);
	rd->last[rec->cpu] = rec->usage;
	rd->seen[rec->cpu] = true;
}

static void *reader_main(void *p)
{
	struct reader *rd = p;
	struct rnl_usage proc = {};
	struct rnl_reply r;
	struct rnl nl;
	int intr, multi;
	const char *m;

	if (rnl_open(&nl))
		return NULL;
	while (!atomic_load(&rd->stop)) {
		if (rnl_dump(&nl, RECOUNT_SCOPE_CPUS, 0, check_cpu, rd, &intr, &multi, &r) == 0)
			rd->dumps++;
		if (rnl_get(&nl, RECOUNT_A_TGID, rd->child, &r))
			continue;
		m = rnl_usage_exceeds(&proc, &r.rec.usage);
		if (m && !rd->regressions++)
			snprintf(rd->first, sizeof(rd->first), "process: %s decreased", m);
		proc = r.rec.usage;
	}
	rnl_close(&nl);
	return NULL;
}

struct cpu_sums {
	__u64 time[MAX_CPUS];
};

static void sum_cpu(const struct rnl_record *rec, void *arg)
{
	struct cpu_sums *s = arg;

	if (rec->has_cpu && rec->cpu < MAX_CPUS)
		s->time[rec->cpu] = rec->usage.user + rec->usage.kernel + rec->usage.idle;
}

static int rounds(void)
{
	const char *env = getenv("RECOUNT_HOTPLUG_ROUNDS");

	return env ? atoi(env) : 10;
}

TEST_F_TIMEOUT(recount, cpus_go_offline_and_come_back, 300)
{
	int ncpus = get_nprocs_conf(), go[2], done[2], intr, multi, i, cpu, err = 0;
	unsigned long long offline[MAX_CPUS] = {}, t0, t1, elapsed;
	struct cpu_sums before = {}, after = {}, at_off = {}, at_on = {};
	__u64 grew_offline[MAX_CPUS] = {};
	int read_err = 0;
	struct rnl_record proc, main_thr, rec;
	struct rnl_usage records = {}, live_and_exited;
	struct child_ctl *ctl;
	struct reader *rd;
	int nrecords = 0, bad_cpu = -1;
	__u64 missed = 0;
	struct rnl_reply r;
	struct rnl ls;
	char c, mask[16];
	pid_t child;

	if (no_hotplug(ncpus))
		SKIP(return, "%s", no_hotplug(ncpus));
	ASSERT_LE(ncpus, MAX_CPUS);

	/* Exit records of the child's threads, none lost. */
	ASSERT_EQ(0, rnl_open(&ls));
	i = 4 << 20;
	setsockopt(ls.fd, SOL_SOCKET, SO_RCVBUFFORCE, &i, sizeof(i));
	snprintf(mask, sizeof(mask), "0-%d", ncpus - 1);
	ASSERT_EQ(0, rnl_listen(&ls, true, mask, &r)) TH_LOG("%s", r.extack);

	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctl);
	ctl->ncpus = ncpus;
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	i = getpid();
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		/* Not left churning if the test fails before it stops it. */
		if (die_with(i))
			_exit(1);
		run_child(ctl, done[1], go[0]);
	}

	rd = calloc(1, sizeof(*rd));
	ASSERT_NE(NULL, rd);
	rd->child = child;
	t0 = now_ns();
	ASSERT_EQ(0, rnl_dump(&self->nl, RECOUNT_SCOPE_CPUS, 0, sum_cpu, &before, &intr, &multi,
			      &r));
	ASSERT_EQ(0, pthread_create(&rd->thread, NULL, reader_main, rd));

	/* No assertion until every CPU is back online. */
	for (i = 0; i < rounds() && !err; i++) {
		for (cpu = 1; cpu < ncpus && !err; cpu++) {
			unsigned long long off;

			err = set_online(cpu, false);
			if (err) {
				bad_cpu = cpu;
				break;
			}
			off = now_ns();
			read_err |= rnl_get(&self->nl, RECOUNT_A_CPU, cpu, &r);
			sum_cpu(&r.rec, &at_off);
			sleep_ns(30 * NSEC_PER_MSEC);
			read_err |= rnl_get(&self->nl, RECOUNT_A_CPU, cpu, &r);
			sum_cpu(&r.rec, &at_on);
			grew_offline[cpu] += at_on.time[cpu] - at_off.time[cpu];
			offline[cpu] += now_ns() - off;
			err = set_online(cpu, true);
			if (err)
				bad_cpu = cpu;
			sleep_ns(10 * NSEC_PER_MSEC);
		}
	}
	for (cpu = 1; cpu < ncpus; cpu++)
		set_online(cpu, true);
	ASSERT_EQ(0, err) TH_LOG("cpu %d: %s", bad_cpu, strerror(-err));
	ASSERT_EQ(0, read_err) TH_LOG("reading an offline CPU failed");

	atomic_store(&rd->stop, 1);
	pthread_join(rd->thread, NULL);
	ASSERT_EQ(0, rnl_dump(&self->nl, RECOUNT_SCOPE_CPUS, 0, sum_cpu, &after, &intr, &multi,
			      &r));
	t1 = now_ns();

	/* Quiescence: the workers joined, the child's main thread blocked. */
	atomic_store(&ctl->stop, 1);
	ASSERT_EQ(1, read(done[0], &c, 1));
	AT_REST(child, &main_thr);
	GET(RECOUNT_A_TGID, child, &proc);
	while (rnl_next_exit(&ls, &rec, 500) == 1) {
		missed += rec.missed;
		if (rec.tgid != (__u32)child || !rec.has_pid)
			continue;
		nrecords++;
		rnl_usage_add(&records, &rec.usage);
	}
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(child, waitpid(child, &i, 0));
	rnl_close(&ls);

	TH_LOG("%d rounds over %d CPUs: %lu dumps read meanwhile", rounds(), ncpus - 1, rd->dumps);
	EXPECT_GT(rd->dumps, 0);
	EXPECT_EQ(0, rd->regressions) TH_LOG("%lu regressions, first: %s", rd->regressions,
					     rd->first);
	free(rd);

	/* Conservation: the process is its live thread plus its exited ones. */
	EXPECT_EQ(0, missed);
	EXPECT_EQ(WORKERS, nrecords);
	live_and_exited = main_thr.usage;
	rnl_usage_add(&live_and_exited, &proc.exited);
	EXPECT_HOLDS(rnl_usage_differs(&live_and_exited, &proc.usage));
	EXPECT_HOLDS(rnl_kinds_differ(&proc));
	EXPECT_HOLDS(rnl_kinds_differ(&main_thr));
	/* A thread's record is taken in do_exit(); it runs a little after. */
	EXPECT_HOLDS(rnl_usage_exceeds(&records, &proc.exited));
	EXPECT_GE(records.user, 100 * NSEC_PER_MSEC);

	/*
	 * Per CPU: user + kernel + idle did not grow at all while the CPU was
	 * offline, read right after it went and right before it came back;
	 * and over the whole run grew by no more than the time the CPU was not
	 * known to be offline from before the first read to after the last
	 * (within 2%, plus a tick: a running CPU's values are as of its last
	 * accounting point, up to a tick before the first read).
	 */
	elapsed = t1 - t0;
	for (cpu = 0; cpu < ncpus; cpu++) {
		__u64 grew = after.time[cpu] - before.time[cpu];
		__u64 on = elapsed - offline[cpu];

		TH_LOG("cpu %d: %llu of at most %llu ms online, %llu ms offline (%llu ns charged)",
		       cpu, grew / NSEC_PER_MSEC, on / NSEC_PER_MSEC, offline[cpu] / NSEC_PER_MSEC,
		       grew_offline[cpu]);
		EXPECT_EQ(0, grew_offline[cpu]);
		EXPECT_LE(grew, on + on / 50 + 5 * NSEC_PER_MSEC);
	}
}

/*
 * A CPU that went offline and came back counts again: a thread pinned to it
 * is charged all the CPU time it took, mostly as user time, with cycles and
 * instructions where there are counters, exact ones (the CPU's perf events
 * were recreated when it came back). All the CPU time: at least what the
 * thread's own clock counted around its work, at most what the scheduler
 * counted in all (which also counts, from each wakeup of the thread on the
 * idle CPU, the time the CPU took to leave idle), each within 2%.
 */
TEST_F(recount, cpus_count_again_once_back)
{
	int ncpus = get_nprocs_conf(), cpu;
	unsigned long long took;
	struct rnl_record rec;
	struct worker w;

	if (no_hotplug(ncpus))
		SKIP(return, "%s", no_hotplug(ncpus));
	for (cpu = 1; cpu < ncpus; cpu++) {
		ASSERT_EQ(0, set_online(cpu, false));
		sleep_ns(20 * NSEC_PER_MSEC);
		ASSERT_EQ(0, set_online(cpu, true));
		/*
		 * By its own clock: its start is kernel time, up to 40 ms on
		 * a debug kernel, and kernel threads share the new CPU.
		 */
		ASSERT_EQ(0, worker_start(&w, work_spin_user_cpu, 150 * NSEC_PER_MSEC, cpu));
		ASSERT_EQ(0, worker_run(&w));
		AT_REST(w.tid, &rec);
		took = thread_clock_ns(w.thread);
		worker_stop(&w);

		TH_LOG("cpu %d: user %llu us, kernel %llu us, CPU time %llu us, %llu us working",
		       cpu, rec.usage.user / 1000, rec.usage.kernel / 1000, took / 1000,
		       w.worked / 1000);
		EXPECT_GE(rnl_cpu_time(&rec.usage), w.worked - w.worked / 50);
		EXPECT_LE(rnl_cpu_time(&rec.usage), took + took / 50);
		EXPECT_GT(rec.usage.user, rec.usage.kernel);
		EXPECT_EQ(0, rec.usage.inexact);
		if (rec.metrics & RECOUNT_METRIC_CYCLES)
			EXPECT_GT(rec.usage.user_cycles, 0);
		if (rec.metrics & RECOUNT_METRIC_INSTRUCTIONS)
			EXPECT_GT(rec.usage.user_instructions, 0);
	}
}

/* The pid of the kernel thread named @name, or 0. */
static pid_t kthread_pid(const char *name)
{
	char path[300], comm[64];
	struct dirent *d;
	pid_t pid = 0;
	DIR *dir;
	FILE *f;

	dir = opendir("/proc");
	if (!dir)
		return 0;
	while (!pid && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = 0;
			if (!strcmp(comm, name))
				pid = atoi(d->d_name);
		}
		fclose(f);
	}
	closedir(dir);
	return pid;
}

/*
 * A hotplug cycle loses no counts: the counters of a CPU are released when it
 * goes offline and recreated when it comes back, between two accounting
 * points that read them whole. Neither the CPU nor the per-CPU kernel threads
 * that run on it while it goes and comes (its hotplug thread, its softirq
 * thread, its stopper) may be marked inexact for it.
 */
TEST_F(recount, hotplug_loses_no_counts)
{
	static const char *const kthreads[] = { "cpuhp/%d", "ksoftirqd/%d", "migration/%d" };
	int ncpus = get_nprocs_conf(), cpu, round, k, err = 0;
	/* The inexact flags of each CPU and of its kernel threads, before */
	__u32 before[MAX_CPUS][4];
	pid_t pids[MAX_CPUS][3];
	struct rnl_reply r;
	char name[32];

	if (no_hotplug(ncpus))
		SKIP(return, "%s", no_hotplug(ncpus));
	ASSERT_LE(ncpus, MAX_CPUS);
	ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_CPU, 0, &r)) TH_LOG("%s", r.extack);
	if (!(r.rec.metrics & RECOUNT_METRIC_CYCLES))
		SKIP(return, "no PMU counters: cycles and instructions are unsupported here");

	/* Flags are sticky: what was inexact before is not this test's. */
	for (cpu = 0; cpu < ncpus; cpu++) {
		ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_CPU, cpu, &r)) TH_LOG("%s", r.extack);
		before[cpu][0] = r.rec.usage.inexact;
		for (k = 0; k < 3; k++) {
			snprintf(name, sizeof(name), kthreads[k], cpu);
			pids[cpu][k] = kthread_pid(name);
			before[cpu][k + 1] = 0;
			if (pids[cpu][k] && !rnl_get(&self->nl, RECOUNT_A_PID, pids[cpu][k], &r))
				before[cpu][k + 1] = r.rec.usage.inexact;
		}
	}
	for (round = 0; round < 3 && !err; round++) {
		for (cpu = 1; cpu < ncpus && !err; cpu++) {
			err = set_online(cpu, false);
			sleep_ns(10 * NSEC_PER_MSEC);
			err = set_online(cpu, true) ?: err;
			sleep_ns(10 * NSEC_PER_MSEC);
		}
	}
	for (cpu = 1; cpu < ncpus; cpu++)
		set_online(cpu, true);
	ASSERT_EQ(0, err) TH_LOG("taking a CPU offline and back: %s", strerror(-err));

	for (cpu = 0; cpu < ncpus; cpu++) {
		ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_CPU, cpu, &r)) TH_LOG("%s", r.extack);
		EXPECT_EQ(before[cpu][0], r.rec.usage.inexact) TH_LOG("cpu %d", cpu);
		for (k = 0; k < 3; k++) {
			if (!pids[cpu][k])
				continue;
			snprintf(name, sizeof(name), kthreads[k], cpu);
			ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_PID, pids[cpu][k], &r))
				TH_LOG("%s: %s", name, r.extack);
			EXPECT_EQ(before[cpu][k + 1], r.rec.usage.inexact)
				TH_LOG("%s (pid %d)", name, pids[cpu][k]);
		}
	}
}

TEST_HARNESS_MAIN
