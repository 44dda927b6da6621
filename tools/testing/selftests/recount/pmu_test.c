// SPDX-License-Identifier: GPL-2.0
/*
 * recount: cycles and instructions.
 *
 * Where the kernel has PMU counters, recount's per-level counts of a thread
 * agree with perf's counts of the same thread, grow at the right level, and
 * are read whole. Where it has none, they are reported unsupported: left
 * out, never 0. A reader gets the counts perf would let it count, and is
 * told what it did not get.
 */
#define _GNU_SOURCE
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"

/* The metrics the kernel counts, or 0 if it does not say. */
static __u32 metrics_of(struct rnl *nl)
{
	struct rnl_reply r;

	if (rnl_get_info(nl, &r))
		return 0;
	return r.rec.metrics;
}

#define NO_PMU "no PMU counters: cycles and instructions are unsupported here"

/* Does the kernel count cycles and instructions? */
static bool have_pmu(struct rnl *nl)
{
	__u32 both = RECOUNT_METRIC_CYCLES | RECOUNT_METRIC_INSTRUCTIONS;

	return (metrics_of(nl) & both) == both;
}

/* Metric @bit is in @u exactly when the kernel counts it. */
static void expect_metric(struct __test_metadata *_metadata, __u32 metrics,
			  __u32 bit, const struct rnl_usage *u, unsigned int has)
{
	EXPECT_EQ(!!(metrics & bit), !!(u->has & has))
		TH_LOG("metric %#x: counted %d, in the record %d", bit,
		       !!(metrics & bit), !!(u->has & has));
}

/* What the kernel does not count is left out of every record, not 0. */
TEST_F(recount, unsupported_metrics_are_absent_not_zero)
{
	struct rnl_record thread, process, cpu;
	__u32 metrics = metrics_of(&self->nl);
	int k;

	GET(RECOUNT_A_PID, sys_gettid(), &thread);
	GET(RECOUNT_A_TGID, getpid(), &process);
	GET(RECOUNT_A_CPU, 0, &cpu);
	ASSERT_TRUE(thread.has_metrics);
	EXPECT_EQ(metrics, thread.metrics);
	EXPECT_TRUE(metrics & RECOUNT_METRIC_TIME);
	TH_LOG("metrics %#x, energy source %u", metrics, thread.energy_source);

	expect_metric(_metadata, metrics, RECOUNT_METRIC_CYCLES, &thread.usage, RNL_CYCLES);
	expect_metric(_metadata, metrics, RECOUNT_METRIC_INSTRUCTIONS, &thread.usage,
		      RNL_INSTRUCTIONS);
	expect_metric(_metadata, metrics, RECOUNT_METRIC_ENERGY, &thread.usage, RNL_ENERGY);
	ASSERT_GT(thread.nr_kinds, 0);
	for (k = 0; k < thread.nr_kinds; k++)
		expect_metric(_metadata, metrics, RECOUNT_METRIC_CYCLES, &thread.per_kind[k],
			      RNL_CYCLES);
	expect_metric(_metadata, metrics, RECOUNT_METRIC_CYCLES, &process.usage, RNL_CYCLES);
	expect_metric(_metadata, metrics, RECOUNT_METRIC_CYCLES, &process.exited, RNL_CYCLES);
	expect_metric(_metadata, metrics, RECOUNT_METRIC_CYCLES, &cpu.usage, RNL_CYCLES);
	expect_metric(_metadata, metrics, RECOUNT_METRIC_ENERGY, &cpu.usage, RNL_IDLE_ENERGY);
	/* Time is counted either way. */
	EXPECT_GT(thread.usage.kernel, 0);
}

static int perf_open(__u64 config)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_HARDWARE,
		.size		= sizeof(attr),
		.config		= config,
		.disabled	= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};

	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static __u64 perf_read(int fd)
{
	__u64 v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* A loop of known length: three instructions an iteration. */
static void run_loop(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		asm volatile("" : "+r" (i));
}

static __u64 within(__u64 a, __u64 b)
{
	return a > b ? a - b : b - a;
}

/*
 * recount's user instructions and cycles of a thread match a user-only perf
 * count of the same thread over the same loop within 0.5%.
 */
TEST_F(recount, user_counts_match_perf)
{
	int fi, fc, i;
	struct rnl_record a, b;
	__u64 pi, pc, ri, rc;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	fi = perf_open(PERF_COUNT_HW_INSTRUCTIONS);
	fc = perf_open(PERF_COUNT_HW_CPU_CYCLES);
	ASSERT_GE(fi, 0) TH_LOG("perf_event_open(instructions): %s", strerror(errno));
	ASSERT_GE(fc, 0) TH_LOG("perf_event_open(cycles): %s", strerror(errno));

	for (i = 0; i < 3; i++) {
		GET(RECOUNT_A_PID, sys_gettid(), &a);
		ASSERT_EQ(0, ioctl(fi, PERF_EVENT_IOC_RESET, 0));
		ASSERT_EQ(0, ioctl(fc, PERF_EVENT_IOC_RESET, 0));
		ASSERT_EQ(0, ioctl(fi, PERF_EVENT_IOC_ENABLE, 0));
		ASSERT_EQ(0, ioctl(fc, PERF_EVENT_IOC_ENABLE, 0));
		run_loop(10000000);
		ASSERT_EQ(0, ioctl(fc, PERF_EVENT_IOC_DISABLE, 0));
		ASSERT_EQ(0, ioctl(fi, PERF_EVENT_IOC_DISABLE, 0));
		GET(RECOUNT_A_PID, sys_gettid(), &b);
		pi = perf_read(fi);
		pc = perf_read(fc);
		ri = b.usage.user_instructions - a.usage.user_instructions;
		rc = b.usage.user_cycles - a.usage.user_cycles;
		TH_LOG("instructions: recount %llu, perf %llu; cycles: recount %llu, perf %llu",
		       ri, pi, rc, pc);
		EXPECT_GT(pi, 25000000);
		EXPECT_LE(within(ri, pi), pi / 200);
		EXPECT_LE(within(rc, pc), pc / 200);
		EXPECT_EQ(0, b.usage.inexact);
	}
	close(fi);
	close(fc);
}

static void work_syscalls(struct worker *w)
{
	unsigned long long i;

	for (i = 0; i < w->arg; i++)
		syscall(SYS_getppid);
}

/* Syscalls add kernel instructions, not user ones; a loop the reverse. */
TEST_F(recount, instructions_grow_at_their_level)
{
	struct rnl_record a, b;
	__u64 user, kernel;
	struct worker w;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	ASSERT_EQ(0, worker_start(&w, work_syscalls, 20000, -1));
	AT_REST(w.tid, &a);
	ASSERT_EQ(0, worker_run(&w));
	AT_REST(w.tid, &b);
	user = b.usage.user_instructions - a.usage.user_instructions;
	kernel = b.usage.kernel_instructions - a.usage.kernel_instructions;
	TH_LOG("20000 getppid(): user %llu instructions, kernel %llu", user, kernel);
	EXPECT_GT(kernel, 20000 * 100);
	EXPECT_GT(kernel, 5 * user);

	w.work = work_spin_user;
	w.arg = 200 * NSEC_PER_MSEC;
	ASSERT_EQ(0, worker_run(&w));
	AT_REST(w.tid, &a);
	worker_stop(&w);
	user = a.usage.user_instructions - b.usage.user_instructions;
	kernel = a.usage.kernel_instructions - b.usage.kernel_instructions;
	TH_LOG("spinning: user %llu instructions, kernel %llu", user, kernel);
	EXPECT_GT(user, 10 * kernel);
}

struct reader {
	pthread_t thread;
	pid_t target;
	unsigned long long until;
	bool event;	/* an event of user-mode instructions is chosen */
	unsigned long reads, moved, torn;
};

/*
 * Read a spinning thread over and over. Between two whole reads its user
 * cycles and user instructions grow together (the spin's CPI is steady); a
 * torn read, cycles of one update and instructions of another, would make
 * one of them move without the other. A chosen event of user-mode
 * instructions, read with them, equals them.
 */
static void *reader_main(void *p)
{
	struct reader *rd = p;
	struct rnl_usage last = {};
	struct rnl_reply r;
	struct rnl nl;

	if (rnl_open(&nl))
		return NULL;
	while (now_ns() < rd->until) {
		__u64 dc, di;

		if (rnl_get(&nl, RECOUNT_A_PID, rd->target, &r))
			break;
		dc = r.rec.usage.user_cycles - last.user_cycles;
		di = r.rec.usage.user_instructions - last.user_instructions;
		if (rd->reads++ && (dc || di)) {
			rd->moved++;
			/* Whole updates keep the ratio within a factor of two. */
			if (!dc || !di || dc > 2 * di || di > 2 * dc)
				rd->torn++;
		}
		if (rd->event && r.rec.usage.event_user[0] != r.rec.usage.user_instructions)
			rd->torn++;
		last = r.rec.usage;
	}
	rnl_close(&nl);
	return NULL;
}

TEST_F(recount, cpi_is_never_torn)
{
	struct reader rd[3];
	unsigned long moved = 0;
	struct rnl_reply r;
	struct worker w;
	bool event;
	int i;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
#ifdef __aarch64__
	{
		/* Arm PMUv3's INST_RETIRED, chosen as an event. */
		struct rnl_event ev = { RECOUNT_EVENT_TYPE_RAW, RECOUNT_EVENT_MODE_USER, 0x08 };

		ASSERT_EQ(0, rnl_set_events(&self->nl, &ev, 1, &r)) TH_LOG("%s", r.extack);
	}
#endif
	event = !rnl_get_info(&self->nl, &r) && r.rec.nr_events == 1;
	ASSERT_EQ(0, worker_start(&w, work_spin_user, 1500 * NSEC_PER_MSEC, 1));
	ASSERT_EQ(1, write(w.go[1], "r", 1));
	sleep_ns(100 * NSEC_PER_MSEC);
	for (i = 0; i < 3; i++) {
		rd[i] = (struct reader){ .target = w.tid, .until = now_ns() + NSEC_PER_SEC,
					 .event = event };
		ASSERT_EQ(0, pthread_create(&rd[i].thread, NULL, reader_main, &rd[i]));
	}
	for (i = 0; i < 3; i++) {
		pthread_join(rd[i].thread, NULL);
		TH_LOG("reader %d: %lu reads, %lu saw the thread move, %lu torn",
		       i, rd[i].reads, rd[i].moved, rd[i].torn);
		EXPECT_EQ(0, rd[i].torn);
		moved += rd[i].moved;
	}
	ASSERT_EQ(1, read(w.done[0], &(char){ 0 }, 1));
	worker_stop(&w);
	/* The readers did watch the counts move. */
	EXPECT_GT(moved, 20);
}

/*
 * A thread that left its process charges the process's exited usage at each
 * accounting point up to its last context switch: the cycles and the time
 * of a point in one section, so that a reader of the process sees the point
 * whole or not at all. Threads exit one after another on one CPU while
 * another thread reads the process on another, for EXIT_READ_NS or until the
 * reads saw the exited cycles grow EXIT_READ_GREW times: between two reads,
 * the exited cycles never grow unless the exited time does (a point spans
 * more than a tick of the clock).
 */
#define EXIT_READ_GREW 1000
#define EXIT_READ_NS (10 * NSEC_PER_SEC)

struct exit_reader {
	pthread_t thread;
	int cpu;
	bool stop;		/* set with __atomic builtins */
	unsigned long reads, grew, torn;
};

static void *exit_at_once(void *arg)
{
	return NULL;
}

static void *exit_reader_main(void *arg)
{
	struct exit_reader *e = arg;
	__u64 cycles = 0, time = 0, c, t;
	struct rnl_reply r;
	struct rnl nl;

	if (pin_self(e->cpu) || rnl_open(&nl))
		return NULL;
	while (!__atomic_load_n(&e->stop, __ATOMIC_RELAXED)) {
		if (rnl_get(&nl, RECOUNT_A_TGID, getpid(), &r))
			break;
		c = r.rec.exited.user_cycles + r.rec.exited.kernel_cycles;
		t = rnl_cpu_time(&r.rec.exited);
		if (e->reads++ && c != cycles) {
			__atomic_store_n(&e->grew, e->grew + 1, __ATOMIC_RELAXED);
			e->torn += t == time;
		}
		cycles = c;
		time = t;
	}
	rnl_close(&nl);
	return NULL;
}

TEST_F(recount, exited_usage_is_read_whole)
{
	struct exit_reader e = { .cpu = ticking_cpu(-1) };
	int cpu = ticking_cpu(e.cpu), i;
	unsigned long long until;
	pthread_attr_t attr;
	cpu_set_t set;
	pthread_t t;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	if (e.cpu < 0 || cpu < 0)
		SKIP(return, "fewer than two CPUs that tick");
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setaffinity_np(&attr, sizeof(set), &set));
	ASSERT_EQ(0, pthread_create(&e.thread, NULL, exit_reader_main, &e));
	until = now_ns() + EXIT_READ_NS;
	for (i = 0; now_ns() < until &&
	     __atomic_load_n(&e.grew, __ATOMIC_RELAXED) < EXIT_READ_GREW; i++) {
		ASSERT_EQ(0, pthread_create(&t, &attr, exit_at_once, NULL));
		ASSERT_EQ(0, pthread_join(t, NULL));
	}
	__atomic_store_n(&e.stop, true, __ATOMIC_RELAXED);
	pthread_join(e.thread, NULL);
	pthread_attr_destroy(&attr);
	TH_LOG("%d threads exited on CPU %d; %lu reads on CPU %d: %lu saw the cycles grow",
	       i, cpu, e.reads, e.cpu, e.grew);
	TH_LOG("%lu of them without the time", e.torn);
	EXPECT_EQ(0, e.torn);
	EXPECT_LT(100, e.grew);
}

/* Of one record: its withheld flags, and which levels of PMU counts it has. */
struct pmu_view {
	__u32 withheld;
	unsigned int has;
};

/* A reader's own thread, process, CPU 0, and a child's exit record. */
struct pmu_views {
	int err;
	struct pmu_view thread, process, cpu, exit;
};

static struct pmu_view pmu_view_of(const struct rnl_record *r)
{
	return (struct pmu_view){ r->withheld, r->usage.has & (RNL_USER_PMU | RNL_KERNEL_PMU) };
}

/*
 * In a child process, as nobody or as root: listen for exit records, read
 * the child's own thread, process and CPU 0, and the exit record of a child
 * of its own. Returns 0 with @v filled, or the step that failed.
 */
static int read_pmu_views(bool as_nobody, struct pmu_views *v)
{
	pid_t child;
	int fds[2];

	if (pipe(fds))
		return -1;
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		struct pmu_views out = { .err = 1 };
		struct rnl_record rec;
		struct rnl_reply r;
		char cpus[32];
		struct rnl nl;
		pid_t p;

		snprintf(cpus, sizeof(cpus), "0-%d", get_nprocs_conf() - 1);
		if ((as_nobody && become_nobody()) || rnl_open(&nl) ||
		    rnl_listen(&nl, true, cpus, &r))
			goto out;
		out.err = 2;
		if (rnl_get(&nl, RECOUNT_A_PID, sys_gettid(), &r))
			goto out;
		out.thread = pmu_view_of(&r.rec);
		if (rnl_get(&nl, RECOUNT_A_TGID, getpid(), &r))
			goto out;
		out.process = pmu_view_of(&r.rec);
		if (rnl_get(&nl, RECOUNT_A_CPU, 0, &r))
			goto out;
		out.cpu = pmu_view_of(&r.rec);
		out.err = 3;
		p = fork();
		if (p == 0)
			_exit(0);
		if (p < 0 || waitpid(p, NULL, 0) != p)
			goto out;
		while (rnl_next_exit(&nl, &rec, 2000) == 1) {
			if (rec.has_pid && rec.pid == (__u32)p) {
				out.exit = pmu_view_of(&rec);
				out.err = 0;
				break;
			}
		}
out:
		_exit(write(fds[1], &out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], v, sizeof(*v)) != sizeof(*v))
		v->err = 4;
	close(fds[0]);
	waitpid(child, NULL, 0);
	return v->err;
}

/* What perf_event_open() would refuse this reader, as withheld flags. */
static __u32 pmu_refused(bool pmu, bool cpu, int paranoid, bool root)
{
	const __u32 all = RECOUNT_WITHHELD_USER_PMU | RECOUNT_WITHHELD_KERNEL_PMU;

	if (!pmu || root)
		return 0;
	if (paranoid > 2)
		return all;
	if (cpu)
		return paranoid > 0 ? all : 0;
	return paranoid > 1 ? RECOUNT_WITHHELD_KERNEL_PMU : 0;
}

static void expect_view(struct __test_metadata *_metadata, const char *what,
			const struct pmu_view *v, __u32 withheld, bool pmu)
{
	unsigned int has = 0;

	if (pmu && !(withheld & RECOUNT_WITHHELD_USER_PMU))
		has |= RNL_USER_PMU;
	if (pmu && !(withheld & RECOUNT_WITHHELD_KERNEL_PMU))
		has |= RNL_KERNEL_PMU;
	EXPECT_EQ(withheld, v->withheld) TH_LOG("%s: withheld %#x, expected %#x",
						what, v->withheld, withheld);
	EXPECT_EQ(has, v->has) TH_LOG("%s: PMU levels %#x, expected %#x", what, v->has, has);
}

/*
 * perf_event_paranoid decides what of the PMU's counts an unprivileged
 * reader gets, as it decides what perf lets it count: a task's kernel-mode
 * counts from 2, a CPU's counts from 1, everything from 3 (Debian). What is
 * withheld is left out and flagged, in replies and in exit records; root
 * (CAP_SYS_ADMIN) gets everything. Without a PMU nothing is withheld, as
 * there is nothing to withhold.
 */
TEST_F(recount, pmu_counts_follow_perf_event_paranoid)
{
	bool pmu = have_pmu(&self->nl);
	int saved = paranoid_get(), p, i;
	struct {
		int paranoid;
		bool root;
	} runs[] = { { -1, false }, { 0, false }, { 1, false }, { 2, false }, { 3, false },
		      { 3, true } };
	struct pmu_views v;

	ASSERT_NE(-9, saved) TH_LOG("cannot read " PARANOID);
	for (i = 0; i < (int)ARRAY_SIZE(runs); i++) {
		p = runs[i].paranoid;
		ASSERT_EQ(0, paranoid_set(p));
		memset(&v, 0, sizeof(v));
		EXPECT_EQ(0, read_pmu_views(!runs[i].root, &v))
			TH_LOG("paranoid %d: the reader failed at step %d", p, v.err);
		TH_LOG("paranoid %d, %s: thread %#x, process %#x, CPU %#x, exit %#x", p,
		       runs[i].root ? "root" : "nobody", v.thread.withheld, v.process.withheld,
		       v.cpu.withheld, v.exit.withheld);
		expect_view(_metadata, "thread", &v.thread,
			    pmu_refused(pmu, false, p, runs[i].root), pmu);
		expect_view(_metadata, "process", &v.process,
			    pmu_refused(pmu, false, p, runs[i].root), pmu);
		expect_view(_metadata, "CPU", &v.cpu,
			    pmu_refused(pmu, true, p, runs[i].root), pmu);
		expect_view(_metadata, "exit record", &v.exit,
			    pmu_refused(pmu, false, p, runs[i].root), pmu);
	}
	EXPECT_EQ(0, paranoid_set(saved));
}

/*
 * As nobody, register a listener of every CPU, say so on @fds[0], wait for
 * the go on @fds[1], and read the exit record of a child. Returns 0 with
 * @v filled, or the step that failed.
 */
static int listen_for_a_child(const int *fds, struct pmu_view *v)
{
	struct rnl_record rec;
	struct rnl_reply r;
	struct rnl nl;
	char c;
	pid_t p;

	if (become_nobody() || rnl_open(&nl) || rnl_listen(&nl, true, every_cpu(), &r))
		return 1;
	if (write(fds[0], "r", 1) != 1 || read(fds[1], &c, 1) != 1)
		return 2;
	p = fork();
	if (p == 0)
		_exit(0);
	if (p < 0 || waitpid(p, NULL, 0) != p)
		return 3;
	while (rnl_next_exit(&nl, &rec, 2000) == 1) {
		if (rec.has_pid && rec.pid == (__u32)p) {
			*v = pmu_view_of(&rec);
			return 0;
		}
	}
	return 4;
}

/*
 * What perf would refuse a listener is decided when it registers, whatever
 * the PMU counts then: one that registered while the PMU counted nothing
 * (kernel.recount_pmu=0) gets no kernel-mode counts at perf_event_paranoid 2
 * once it counts again, and its records say so.
 */
TEST_F(recount, listener_registered_without_pmu_keeps_perf_rules)
{
	int saved = paranoid_get(), ready[2], go[2], res[2], status, err;
	struct pmu_view v = {};
	pid_t child;
	char c;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	ASSERT_NE(-9, saved) TH_LOG("cannot read " PARANOID);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(res));
	ASSERT_EQ(0, paranoid_set(2));
	ASSERT_EQ(0, write_file(RECOUNT_PMU_SYSCTL, "0\n"));
	EXPECT_FALSE(have_pmu(&self->nl));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		int fds[2] = { ready[1], go[0] };

		err = listen_for_a_child(fds, &v);
		_exit(write(res[1], &v, sizeof(v)) == sizeof(v) ? err : 5);
	}
	close(ready[1]);
	close(go[0]);
	close(res[1]);
	err = read(ready[0], &c, 1) != 1;
	EXPECT_EQ(0, write_file(RECOUNT_PMU_SYSCTL, "1\n"));
	EXPECT_TRUE(have_pmu(&self->nl));
	EXPECT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(sizeof(v), read(res[0], &v, sizeof(v)));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(0, paranoid_set(saved));
	EXPECT_FALSE(err) TH_LOG("the listener did not register");
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the listener failed at step %d", WEXITSTATUS(status));
	expect_view(_metadata, "exit record", &v, RECOUNT_WITHHELD_KERNEL_PMU, true);
	close(ready[0]);
	close(go[1]);
	close(res[0]);
}

#define LOOP "i=0; while [ $i -lt 5000 ]; do i=$((i+1)); done"

/*
 * A process reaps two children that run the same loop: one as itself, one
 * from a set-user-ID copy of the shell, which perf stops counting for its
 * parent at exec (the image makes it non-dumpable). Both children's time
 * goes to its children; only the first one's cycles and instructions do,
 * and the second leaves them flagged inexact. Run as nobody, as a user who
 * may not read the set-user-ID process would.
 */
TEST_F(recount, setuid_child_counts_are_kept_from_its_parent)
{
	const char *path = "/tmp/recount-suid";
	struct rnl_record r[3];
	int go[2], done[2], i, status;
	pid_t mid;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	/* In a /tmp of the test's own, which a failure does not leave behind. */
	ASSERT_EQ(0, private_tmp()) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, setuid_copy("/bin/busybox", path)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	mid = fork();
	ASSERT_GE(mid, 0);
	if (!mid) {
		close(go[1]);
		close(done[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (become_nobody())
			_exit(1);
		for (i = 0; i < 2; i++) {
			pid_t child;

			if (read(go[0], &status, 1) != 1)
				_exit(1);
			child = fork();
			if (!child) {
				execl(i ? path : "/bin/busybox", "sh", "-c", LOOP, (char *)NULL);
				_exit(127);
			}
			if (child < 0 || waitpid(child, &status, 0) != child ||
			    !WIFEXITED(status) || WEXITSTATUS(status) ||
			    write(done[1], "d", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	for (i = 0; i < 3; i++) {
		GET(RECOUNT_A_TGID, mid, &r[i]);
		if (i < 2) {
			ASSERT_EQ(1, write(go[1], "g", 1));
			ASSERT_EQ(1, read(done[0], &status, 1));
		}
	}
	close(go[1]);
	close(done[0]);
	ASSERT_EQ(mid, waitpid(mid, &status, 0));
	unlink(path);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	TH_LOG("children: as itself %llu us, %llu user cycles; set-user-ID %llu us, %llu",
	       (rnl_cpu_time(&r[1].children) - rnl_cpu_time(&r[0].children)) / 1000,
	       r[1].children.user_cycles - r[0].children.user_cycles,
	       (rnl_cpu_time(&r[2].children) - rnl_cpu_time(&r[1].children)) / 1000,
	       r[2].children.user_cycles - r[1].children.user_cycles);
	ASSERT_TRUE(r[0].has_children);
	EXPECT_GT(rnl_cpu_time(&r[1].children), rnl_cpu_time(&r[0].children));
	EXPECT_GT(r[1].children.user_cycles, r[0].children.user_cycles);
	EXPECT_GT(r[1].children.user_instructions, r[0].children.user_instructions);
	EXPECT_EQ(0, r[1].children.inexact & RECOUNT_INEXACT_INSTRUCTIONS);
	EXPECT_GT(rnl_cpu_time(&r[2].children), rnl_cpu_time(&r[1].children));
	EXPECT_EQ(r[1].children.user_cycles, r[2].children.user_cycles);
	EXPECT_EQ(r[1].children.user_instructions, r[2].children.user_instructions);
	EXPECT_EQ(RECOUNT_INEXACT_CYCLES | RECOUNT_INEXACT_INSTRUCTIONS,
		  r[2].children.inexact & (RECOUNT_INEXACT_CYCLES | RECOUNT_INEXACT_INSTRUCTIONS));
}

/*
 * A process that executed a non-dumpable image was counted from then on only
 * by CPU-wide events: perf stopped counting it for everyone else's there, and
 * an event opened since counts from its opening. So its cumulative cycles
 * and instructions go only to a reader perf would let count a CPU, whatever
 * it executed since; so do those of a process it forked meanwhile. This
 * program, run with PRIVATE_ENV set, spins, gives up any privilege it was
 * run with, writes its pid on fd 3, and executes a plain program: run
 * set-user-ID-root by nobody, its process turns non-dumpable, then nobody's
 * and dumpable again. With PRIVATE_ENV "fork", a child it forks first does
 * it, and the program exits.
 */
#define PRIVATE_ENV "RECOUNT_PRIVATE_IMAGE"

__attribute__((constructor)) static void private_image(void)
{
	const char *how = getenv(PRIVATE_ENV);
	uid_t uid = getuid();
	pid_t pid;

	if (!how)
		return;
	if (!strcmp(how, "fork")) {
		pid = fork();
		if (pid)
			_exit(pid < 0);
	}
	spin_user(10 * NSEC_PER_MSEC);
	pid = getpid();
	if (setresuid(uid, uid, uid) || write(3, &pid, sizeof(pid)) != sizeof(pid))
		_exit(1);
	execl("/bin/busybox", "sleep", "10", (char *)NULL);
	_exit(127);
}

/*
 * What nobody sees of the process: a get, dumps, its exit record; and in the
 * lean dump, a plain process of its own after it.
 */
struct private_views {
	int err;
	struct pmu_view thread, process, threads, processes, lean, exit, after;
};

/*
 * The records of a dump's processes @tgid[0] and @tgid[1], with their
 * withheld flags as a lean dump says them; @tgid[1] only after @tgid[0].
 */
struct dump_view {
	pid_t tgid[2];
	bool found[2];
	__u32 withheld;
	struct pmu_view v[2];
};

static void dump_view_record(const struct rnl_record *rec, void *arg)
{
	struct dump_view *d = arg;
	int i;

	/* A lean record without the state has the one before. */
	if (rec->has_metrics)
		d->withheld = rec->withheld;
	for (i = 0; i < 2; i++) {
		if (rec->tgid == (__u32)d->tgid[i] && !d->found[i] && (!i || d->found[0])) {
			d->found[i] = true;
			d->v[i] = (struct pmu_view){ d->withheld, rec->usage.has &
						     (RNL_USER_PMU | RNL_KERNEL_PMU) };
		}
	}
}

static int dump_view(struct rnl *nl, int scope, pid_t tgid, pid_t after, bool lean,
		     struct pmu_view *v, struct pmu_view *v_after)
{
	struct dump_view d = { .tgid = { tgid, after } };
	int intr, not_multi, err;
	struct rnl_reply r;

	nl->lean = lean;
	err = rnl_dump(nl, scope, scope == RECOUNT_SCOPE_THREADS ? tgid : 0, dump_view_record,
		       &d, &intr, &not_multi, &r);
	nl->lean = false;
	*v = d.v[0];
	if (v_after)
		*v_after = d.v[1];
	return err || !d.found[0] || (v_after && !d.found[1]);
}

/*
 * As nobody: run @image as above (its child if @fork), and read the
 * process; a subreaper, to reap a forked one.
 */
static int read_private_views(const char *image, bool fork_first, struct private_views *v)
{
	char *const env[] = { fork_first ? PRIVATE_ENV "=fork" : PRIVATE_ENV "=1", NULL };
	struct rnl_record rec;
	int fds[2], block[2], i;
	struct rnl_reply r;
	char cpus[32];
	struct rnl nl;
	pid_t image_pid, p, q;

	snprintf(cpus, sizeof(cpus), "0-%d", get_nprocs_conf() - 1);
	if (become_nobody() || prctl(PR_SET_CHILD_SUBREAPER, 1) || rnl_open(&nl) ||
	    rnl_listen(&nl, true, cpus, &r) || pipe(fds) || pipe(block))
		return 1;
	image_pid = fork();
	if (image_pid < 0)
		return 2;
	if (image_pid == 0) {
		/* Not the blocker's pipe: it must see the end of it. */
		close(block[0]);
		close(block[1]);
		if (dup2(fds[1], 3) != 3)
			_exit(1);
		execle(image, "recount-private", NULL, env);
		_exit(127);
	}
	close(fds[1]);
	if (read(fds[0], &p, sizeof(p)) != sizeof(p))
		return 3;
	/* A plain process with a pid above @p's, listed after it. */
	q = fork();
	if (q < 0)
		return 2;
	if (q == 0) {
		close(block[1]);
		_exit(read(block[0], &(char){ 0 }, 1) != 0);
	}
	close(block[0]);
	/* Pids wrapped: it would be listed before @p. */
	if (q < p)
		return 9;
	/* The image that forked exits: its child is then the subreaper's. */
	if (p != image_pid && waitpid(image_pid, NULL, 0) != image_pid)
		return 3;
	/* Denied until it executes the plain program. */
	for (i = 0; rnl_get(&nl, RECOUNT_A_TGID, p, &r); i++) {
		if (r.error != -EACCES || i == 1000)
			return 4;
		sleep_ns(NSEC_PER_MSEC);
	}
	v->process = pmu_view_of(&r.rec);
	if (rnl_get(&nl, RECOUNT_A_PID, p, &r))
		return 5;
	v->thread = pmu_view_of(&r.rec);
	if (dump_view(&nl, RECOUNT_SCOPE_THREADS, p, 0, false, &v->threads, NULL) ||
	    dump_view(&nl, RECOUNT_SCOPE_PROCESSES, p, 0, false, &v->processes, NULL) ||
	    dump_view(&nl, RECOUNT_SCOPE_PROCESSES, p, q, true, &v->lean, &v->after))
		return 6;
	close(block[1]);
	if (waitpid(q, NULL, 0) != q)
		return 7;
	kill(p, SIGKILL);
	if (waitpid(p, NULL, 0) != p)
		return 7;
	while (rnl_next_exit(&nl, &rec, 2000) == 1) {
		if (rec.has_pid && rec.pid == (__u32)p) {
			v->exit = pmu_view_of(&rec);
			return 0;
		}
	}
	return 8;
}

/* In a child: read_private_views(). Returns its step that failed, or 0. */
static int private_views(const char *image, bool fork_first, struct private_views *v)
{
	pid_t child;
	int fds[2];

	v->err = 10;
	if (pipe(fds))
		return v->err;
	child = fork();
	if (child < 0)
		return v->err;
	if (child == 0) {
		struct private_views out = { 0 };

		close(fds[0]);
		out.err = read_private_views(image, fork_first, &out);
		_exit(write(fds[1], &out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], v, sizeof(*v)) != sizeof(*v))
		v->err = 11;
	close(fds[0]);
	waitpid(child, NULL, 0);
	return v->err;
}

static void expect_private_views(struct __test_metadata *_metadata, const char *image,
				 const struct private_views *v, __u32 withheld)
{
	TH_LOG("%s: expected withheld %#x", image, withheld);
	EXPECT_EQ(0, v->err) TH_LOG("%s: failed at step %d", image, v->err);
	if (v->err)
		return;
	expect_view(_metadata, "get of the thread", &v->thread, withheld, true);
	expect_view(_metadata, "get of the process", &v->process, withheld, true);
	expect_view(_metadata, "dump of its threads", &v->threads, withheld, true);
	expect_view(_metadata, "dump of every process", &v->processes, withheld, true);
	expect_view(_metadata, "lean dump of every process", &v->lean, withheld, true);
	expect_view(_metadata, "exit record", &v->exit, withheld, true);
	expect_view(_metadata, "lean dump, the plain process after it", &v->after, 0, true);
}

/*
 * Nobody, at a perf_event_paranoid of 1 (it may count its own tasks at both
 * levels, not a CPU), reads a process of its own that ran this program
 * set-user-ID-root, and one that this program forked while it ran so:
 * every read withholds their cycles and instructions, and a lean dump says
 * so again for a plain process after them. The same program run plain,
 * they come whole. Nothing between the set-user-ID copy and its removal
 * stops the test.
 */
TEST_F(recount, counts_of_a_non_dumpable_image_need_cpu_wide_perf)
{
	const __u32 all = RECOUNT_WITHHELD_USER_PMU | RECOUNT_WITHHELD_KERNEL_PMU;
	const char *path = "/tmp/recount-suid";
	/* Step 12: not read (no copy, or no sysctl). */
	struct private_views plain = { .err = 12 }, private = { .err = 12 }, forked = { .err = 12 };
	int saved = paranoid_get();
	bool copied;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	/* In a /tmp of the test's own, which a failure does not leave behind. */
	ASSERT_EQ(0, private_tmp()) TH_LOG("%s", strerror(errno));
	copied = !setuid_copy("/proc/self/exe", path);
	if (copied && !paranoid_set(1)) {
		private_views("/proc/self/exe", false, &plain);
		private_views(path, false, &private);
		private_views(path, true, &forked);
	}
	paranoid_set(saved);
	if (copied)
		unlink(path);
	ASSERT_TRUE(copied) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(saved, paranoid_get());
	expect_private_views(_metadata, "run plain", &plain, 0);
	expect_private_views(_metadata, "run set-user-ID-root", &private, all);
	expect_private_views(_metadata, "forked by it", &forked, all);
}

TEST_HARNESS_MAIN
