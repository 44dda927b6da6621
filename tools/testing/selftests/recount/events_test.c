// SPDX-License-Identifier: GPL-2.0
/*
 * recount's chosen PMU events (set-events): counted per level exactly as
 * cycles and instructions are, a new generation per choice, never mixed,
 * never torn; refused when the PMU cannot count them or the caller may not.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"

#define NO_PMU "no PMU counters: events are unsupported here"

/* Arm PMUv3 common events, as the architecture numbers them. */
#define ARMV8_INST_RETIRED	0x08
#define ARMV8_CPU_CYCLES	0x11

static __u32 metrics_of(struct rnl *nl)
{
	struct rnl_reply r;

	return rnl_get_info(nl, &r) ? 0 : r.rec.metrics;
}

static bool have_pmu(struct rnl *nl)
{
	__u32 both = RECOUNT_METRIC_CYCLES | RECOUNT_METRIC_INSTRUCTIONS;

	return (metrics_of(nl) & both) == both;
}

/* Are the raw codes above Arm PMUv3's? */
static bool arm64(void)
{
#ifdef __aarch64__
	return true;
#else
	return false;
#endif
}

static int set_events(struct rnl *nl, const struct rnl_event *ev, int nr, struct rnl_reply *r)
{
	return rnl_set_events(nl, ev, nr, r);
}

/* Choose @ev, or fail the test with the kernel's reason. */
#define CHOOSE(ev, nr) do {							\
	struct rnl_reply __r;							\
	int __err = set_events(&self->nl, (ev), (nr), &__r);			\
	ASSERT_EQ(0, __err) TH_LOG("set-events: %s (%s)", strerror(-__err),	\
				   __r.extack);					\
} while (0)

static __u32 gen_of(struct rnl *nl)
{
	struct rnl_reply r;

	return rnl_get_info(nl, &r) ? 0 : r.rec.event_gen;
}

TEST_F(recount, info_says_how_many_and_which)
{
	struct rnl_event ev = { RECOUNT_EVENT_TYPE_HARDWARE, RECOUNT_EVENT_MODE_USER,
				PERF_COUNT_HW_INSTRUCTIONS };
	struct rnl_reply r, before;

	ASSERT_EQ(0, rnl_get_info(&self->nl, &before));
	EXPECT_EQ(2, before.rec.max_events);
	EXPECT_TRUE(before.rec.has_event_gen);
	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	CHOOSE(&ev, 1);
	ASSERT_EQ(0, rnl_get_info(&self->nl, &r));
	EXPECT_EQ(before.rec.event_gen + 1, r.rec.event_gen);
	ASSERT_EQ(1, r.rec.nr_events);
	EXPECT_EQ(RECOUNT_EVENT_TYPE_HARDWARE, r.rec.events[0].type);
	EXPECT_EQ(PERF_COUNT_HW_INSTRUCTIONS, r.rec.events[0].config);
	EXPECT_EQ(RECOUNT_EVENT_MODE_USER, r.rec.events[0].mode);
	EXPECT_TRUE(r.rec.metrics & RECOUNT_METRIC_EVENTS);
	/* Cycles and instructions at two levels, and the event at one, per CPU. */
	EXPECT_EQ(5 * get_nprocs(), r.rec.pmu_counters);
}

/*
 * Without a PMU, choosing an event says events are unsupported; so it does
 * where kernel.recount_pmu=0 leaves the PMU unused.
 */
TEST_F(recount, unsupported_without_a_pmu)
{
	/* An event every PMU counts: refused for want of one, not for itself. */
	struct rnl_event ev = { RECOUNT_EVENT_TYPE_HARDWARE, RECOUNT_EVENT_MODE_ALL,
				PERF_COUNT_HW_INSTRUCTIONS };
	bool pmu = have_pmu(&self->nl);
	struct rnl_reply r;
	__u32 metrics;
	int err;

	if (pmu)
		ASSERT_EQ(0, write_file(RECOUNT_PMU_SYSCTL, "0\n"));
	err = set_events(&self->nl, &ev, 1, &r);
	metrics = metrics_of(&self->nl);
	if (pmu) {
		ASSERT_EQ(0, write_file(RECOUNT_PMU_SYSCTL, "1\n"));
		EXPECT_TRUE(have_pmu(&self->nl));
	}
	EXPECT_EQ(-EOPNOTSUPP, err);
	EXPECT_NE(NULL, strstr(r.extack, "recount counts no PMU event")) TH_LOG("%s", r.extack);
	EXPECT_EQ(0, metrics & RECOUNT_METRIC_EVENTS);
}

/*
 * Spin in user mode and make system calls on CPU 1 in a thread that starts
 * after the events are chosen, and return its record once it is at rest.
 */
static int spin_and_read(struct rnl *nl, struct rnl_record *rec)
{
	struct worker w;
	int err, i;

	if (worker_start(&w, work_spin_user, 30 * NSEC_PER_MSEC, 1))
		return -1;
	for (i = 0; i < 3; i++)
		if (worker_run(&w))
			return -1;
	err = wait_at_rest(nl, w.tid, rec);
	worker_stop(&w);
	return err;
}

/* The event and the built-in metric, per level, of a record's usage. */
static void expect_equal(struct __test_metadata *_metadata, const struct rnl_usage *u,
			 __u64 user, __u64 kernel, const char *what)
{
	TH_LOG("%s: user %llu event %llu, kernel %llu event %llu", what,
	       (unsigned long long)user, (unsigned long long)u->event_user[0],
	       (unsigned long long)kernel, (unsigned long long)u->event_kernel[0]);
	ASSERT_EQ(3, u->event_has & 3);
	EXPECT_GT(user, 1000000);
	EXPECT_EQ(user, u->event_user[0]);
	EXPECT_EQ(kernel, u->event_kernel[0]);
	EXPECT_EQ(0, u->inexact);
}

/*
 * The raw codes of instructions and cycles, chosen as events, count what
 * recount's own instructions and cycles do, per level, exactly: they are
 * read at the same points, right after them.
 */
TEST_F(recount, raw_instructions_and_cycles_equal_the_builtin_counts)
{
	struct rnl_event ev = { RECOUNT_EVENT_TYPE_RAW, RECOUNT_EVENT_MODE_ALL };
	struct rnl_record rec;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	if (!arm64() || get_nprocs() < 2)
		SKIP(return, "needs an Arm PMUv3's raw event codes and two CPUs");

	ev.config = ARMV8_INST_RETIRED;
	CHOOSE(&ev, 1);
	ASSERT_EQ(0, spin_and_read(&self->nl, &rec));
	ASSERT_TRUE(rec.has_event_gen);
	EXPECT_EQ(gen_of(&self->nl), rec.event_gen);
	expect_equal(_metadata, &rec.usage, rec.usage.user_instructions,
		     rec.usage.kernel_instructions, "instructions");

	ev.config = ARMV8_CPU_CYCLES;
	CHOOSE(&ev, 1);
	ASSERT_EQ(0, spin_and_read(&self->nl, &rec));
	expect_equal(_metadata, &rec.usage, rec.usage.user_cycles, rec.usage.kernel_cycles,
		     "cycles");
}

/* A common event the PMU does not list, or -1. */
static int unlisted_event(void)
{
	static const char *const dirs[] = {
		"/sys/bus/event_source/devices/armv8_pmuv3_0/events",
		"/sys/bus/event_source/devices/armv8_pmuv3/events",
	};
	bool listed[0x40] = { false };
	struct dirent *de;
	unsigned int code;
	char path[512];
	DIR *d = NULL;
	size_t i;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(dirs) && !d; i++)
		d = opendir(dirs[i]);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirs[i - 1], de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "event=%x", &code) == 1 && code < 0x40)
			listed[code] = true;
		fclose(f);
	}
	closedir(d);
	/* 0 is SW_INCR, counted by writes to a register. */
	for (code = 1; code < 0x40; code++)
		if (!listed[code])
			return code;
	return -1;
}

/* An event the PMU cannot count is refused, by name, and nothing changes. */
TEST_F(recount, an_event_the_pmu_does_not_count_is_refused)
{
	struct rnl_event ev[2] = {
		{ RECOUNT_EVENT_TYPE_HARDWARE, RECOUNT_EVENT_MODE_USER,
		  PERF_COUNT_HW_INSTRUCTIONS },
		{ RECOUNT_EVENT_TYPE_RAW, RECOUNT_EVENT_MODE_ALL },
	};
	struct rnl_reply r, info;
	int code;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	code = unlisted_event();
	if (code < 0)
		SKIP(return, "no Arm PMUv3 event list, or it lists every common event");
	ev[1].config = code;
	CHOOSE(ev, 1);
	ASSERT_EQ(0, rnl_get_info(&self->nl, &info));
	EXPECT_EQ(-EOPNOTSUPP, set_events(&self->nl, ev, 2, &r));
	TH_LOG("raw %#x: %s", code, r.extack);
	EXPECT_NE(NULL, strstr(r.extack, "event 1"));
	ASSERT_EQ(0, rnl_get_info(&self->nl, &r));
	EXPECT_EQ(info.rec.event_gen, r.rec.event_gen);
	EXPECT_EQ(1, r.rec.nr_events);
}

/* Bad requests get their errno and a message; nothing changes. */
TEST_F(recount, bad_requests_are_refused)
{
	struct rnl_event ev[3] = {
		{ RECOUNT_EVENT_TYPE_HARDWARE, RECOUNT_EVENT_MODE_USER,
		  PERF_COUNT_HW_INSTRUCTIONS },
		{ RECOUNT_EVENT_TYPE_HARDWARE, RECOUNT_EVENT_MODE_USER, PERF_COUNT_HW_CPU_CYCLES },
		{ RECOUNT_EVENT_TYPE_HARDWARE, RECOUNT_EVENT_MODE_USER, PERF_COUNT_HW_CPU_CYCLES },
	};
	struct rnl_event bad_mode = { RECOUNT_EVENT_TYPE_HARDWARE, 7, 0 };
	struct rnl_event bad_type = { 9, RECOUNT_EVENT_MODE_USER, 0 };
	__u32 gen = gen_of(&self->nl);
	struct rnl_reply r;

	EXPECT_EQ(-E2BIG, set_events(&self->nl, ev, 3, &r));
	EXPECT_NE(NULL, strstr(r.extack, "at most 2"));
	EXPECT_EQ(-ERANGE, set_events(&self->nl, &bad_mode, 1, &r));
	EXPECT_TRUE(r.has_offs);
	EXPECT_EQ(-ERANGE, set_events(&self->nl, &bad_type, 1, &r));
	EXPECT_TRUE(r.has_offs);
	EXPECT_EQ(gen, gen_of(&self->nl));
}

/*
 * Choose no event as nobody holding the capabilities @caps (a mask of
 * CAP_*), in a child, with perf_event_paranoid at @paranoid. Returns the
 * errno of the answer, or -1000 if the child could not ask. A refusal must
 * say which capability it takes.
 */
static int choose_none_as(int paranoid, __u64 caps)
{
	int status;
	pid_t child;

	if (paranoid_set(paranoid))
		return -1000;
	child = fork();
	if (child < 0)
		return -1000;
	if (child == 0) {
		struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct data[2] = {};
		struct rnl_reply r;
		struct rnl nl;
		int err;

		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) ||
		    setgid(65534) || setuid(65534))
			_exit(255);
		data[0].permitted = (__u32)caps;
		data[1].permitted = (__u32)(caps >> 32);
		data[0].effective = data[0].permitted;
		data[1].effective = data[1].permitted;
		if (syscall(SYS_capset, &hdr, data) || rnl_open(&nl))
			_exit(255);
		err = set_events(&nl, NULL, 0, &r);
		if (err == -EPERM && !strstr(r.extack, caps ? "CAP_SYS_ADMIN" : "CAP_PERFMON"))
			_exit(254);
		_exit(-err);
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status) >= 254)
		return -1000;
	return -WEXITSTATUS(status);
}

#define CAP(c) (1ULL << (c))

/*
 * A choice changes what every CPU counts and restarts recount for everyone:
 * it takes CAP_PERFMON whatever perf_event_paranoid lets users read, even at
 * -1, where perf lets anyone open CPU-wide events; and CAP_SYS_ADMIN where
 * perf_event_paranoid is above 2, as perf then wants.
 */
TEST_F(recount, choosing_takes_cap_perfmon_whatever_perf_event_paranoid_says)
{
	int saved = paranoid_get(), none_2, none_m1, perfmon_2, perfmon_3;
	__u32 gen = gen_of(&self->nl);

	ASSERT_LT(-9, saved);
	none_2 = choose_none_as(2, 0);
	none_m1 = choose_none_as(-1, 0);
	perfmon_3 = choose_none_as(3, CAP(CAP_PERFMON));
	perfmon_2 = choose_none_as(2, CAP(CAP_PERFMON));
	ASSERT_EQ(0, paranoid_set(saved));

	EXPECT_EQ(-EPERM, none_2);
	EXPECT_EQ(-EPERM, none_m1);
	EXPECT_EQ(-EPERM, perfmon_3);
	EXPECT_EQ(0, perfmon_2);
	EXPECT_EQ(gen + 1, gen_of(&self->nl));
}

/*
 * A pinned perf event of this thread counting its user instructions, which
 * reads its times enabled and running.
 */
static int task_pinned_event(void)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_HARDWARE,
		.size		= sizeof(attr),
		.config		= PERF_COUNT_HW_INSTRUCTIONS,
		.pinned		= 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
		.read_format	= PERF_FORMAT_TOTAL_TIME_ENABLED |
				  PERF_FORMAT_TOTAL_TIME_RUNNING,
	};

	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

/*
 * Has the pinned event @fd counted whenever it was enabled? One that could
 * not be scheduled is in error, and reads nothing.
 */
static bool counts_all_along(int fd)
{
	__u64 v[3];

	return read(fd, v, sizeof(v)) == sizeof(v) && v[1] == v[2];
}

/*
 * The chosen events' counters are flexible: they never take a counter from
 * a pinned perf user, even one that came after them, such as a task's
 * pinned events (KVM's counters of a guest's PMU, perf stat -p with :D).
 * This thread fills its CPU's free counters with pinned events of its own,
 * and an event is chosen: its pinned events keep counting, recount holds
 * one counter fewer than it would, and the thread's count of the event is
 * inexact, not short.
 */
TEST_F(recount, a_chosen_event_never_takes_a_pinned_users_counter)
{
	struct rnl_event ev = { RECOUNT_EVENT_TYPE_HARDWARE, RECOUNT_EVENT_MODE_USER,
				PERF_COUNT_HW_INSTRUCTIONS };
	int fd[16], n = 0, i, cpu = sched_getcpu();
	struct rnl_record rec;
	struct rnl_reply r;
	cpu_set_t one, all;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	while (n < (int)ARRAY_SIZE(fd)) {
		fd[n] = task_pinned_event();
		ASSERT_LE(0, fd[n]) TH_LOG("perf_event_open: %s", strerror(errno));
		if (!counts_all_along(fd[n])) {
			close(fd[n]);
			break;
		}
		n++;
	}
	TH_LOG("CPU %d: this thread's pinned events hold %d counters", cpu, n);
	ASSERT_LT(0, n);
	ASSERT_GT((int)ARRAY_SIZE(fd), n);

	CHOOSE(&ev, 1);
	for (i = 0; i < 5; i++) {
		spin_user(10 * NSEC_PER_MSEC);
		sleep_ns(5 * NSEC_PER_MSEC);
	}
	ASSERT_EQ(0, rnl_get_info(&self->nl, &r));
	GET(RECOUNT_A_PID, sys_gettid(), &rec);
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(counts_all_along(fd[i])) TH_LOG("pinned event %d lost its counter", i);
		close(fd[i]);
	}
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(all), &all));

	/* Cycles and instructions at two levels, and the event at one, per CPU. */
	EXPECT_EQ(5 * get_nprocs() - 1, r.rec.pmu_counters);
	EXPECT_TRUE(rec.usage.inexact & RECOUNT_INEXACT_EVENT_0);
}

/*
 * Choosing again starts a new generation: a thread's counts of the old one
 * are dropped, not added to those of the new one, which count only what it
 * ran after the choice.
 */
TEST_F(recount, a_new_generation_never_mixes_counts)
{
	struct rnl_event ev = { RECOUNT_EVENT_TYPE_HARDWARE, RECOUNT_EVENT_MODE_USER,
				PERF_COUNT_HW_INSTRUCTIONS };
	struct rnl_record a, b, c;
	struct worker w;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	CHOOSE(&ev, 1);
	ASSERT_EQ(0, worker_start(&w, work_spin_user, 50 * NSEC_PER_MSEC, 1));
	ASSERT_EQ(0, worker_run(&w));
	ASSERT_EQ(0, wait_at_rest(&self->nl, w.tid, &a));
	EXPECT_GT(a.usage.event_user[0], 1000000);

	CHOOSE(&ev, 1);
	GET(RECOUNT_A_PID, w.tid, &b);
	EXPECT_EQ(a.event_gen + 1, b.event_gen);
	EXPECT_EQ(1, b.usage.event_has & 1);
	EXPECT_EQ(0, b.usage.event_user[0]);

	ASSERT_EQ(0, worker_run(&w));
	ASSERT_EQ(0, wait_at_rest(&self->nl, w.tid, &c));
	worker_stop(&w);
	TH_LOG("generation %u: %llu, %u: %llu; instructions %llu, then %llu",
	       a.event_gen, (unsigned long long)a.usage.event_user[0], c.event_gen,
	       (unsigned long long)c.usage.event_user[0],
	       (unsigned long long)a.usage.user_instructions,
	       (unsigned long long)c.usage.user_instructions);
	EXPECT_EQ(b.event_gen, c.event_gen);
	EXPECT_GT(c.usage.event_user[0], 1000000);
	/* What it counted since the choice, when the thread was at rest, only. */
	if (arm64())
		EXPECT_EQ(c.usage.user_instructions - b.usage.user_instructions,
			  c.usage.event_user[0]);
}

/*
 * Exit records carry the chosen events: a child that spins and exits gets
 * its thread's and its process's final counts, equal to its instructions.
 */
TEST_F(recount, exit_records_carry_the_events)
{
	struct rnl_event ev = { RECOUNT_EVENT_TYPE_HARDWARE, RECOUNT_EVENT_MODE_USER,
				PERF_COUNT_HW_INSTRUCTIONS };
	struct rnl_record rec;
	struct rnl listener;
	struct rnl_reply r;
	int got = 0, status;
	pid_t child;

	if (!have_pmu(&self->nl))
		SKIP(return, NO_PMU);
	CHOOSE(&ev, 1);
	ASSERT_EQ(0, rnl_open(&listener));
	ASSERT_EQ(0, rnl_listen(&listener, true, every_cpu(), &r)) TH_LOG("%s", r.extack);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		spin_user(30 * NSEC_PER_MSEC);
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	while (rnl_next_exit(&listener, &rec, 500) == 1) {
		if (rec.tgid != (__u32)child)
			continue;
		got++;
		TH_LOG("%s: event %llu, instructions %llu, generation %u",
		       rec.has_pid ? "thread" : "process",
		       (unsigned long long)rec.usage.event_user[0],
		       (unsigned long long)rec.usage.user_instructions, rec.event_gen);
		EXPECT_TRUE(rec.has_event_gen);
		EXPECT_EQ(gen_of(&self->nl), rec.event_gen);
		EXPECT_EQ(1, rec.usage.event_has & 3);
		EXPECT_GT(rec.usage.event_user[0], 1000000);
		if (arm64())
			EXPECT_EQ(rec.usage.user_instructions, rec.usage.event_user[0]);
	}
	rnl_close(&listener);
	EXPECT_EQ(2, got);
}

TEST_HARNESS_MAIN
