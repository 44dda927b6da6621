// SPDX-License-Identifier: GPL-2.0
/*
 * recount: estimated energy, from a power model.
 *
 * With a power model (sysctl kernel.recount_power_mw: performance busy,
 * performance idle, efficiency busy, efficiency idle, in mW), a thread busy
 * for a time T on a CPU of a kind drawing P gains P * T; a sleeping thread
 * gains nothing; an idle CPU gains its idle power times its idle time.
 * Without a model, energy is unsupported.
 */
#define _GNU_SOURCE

#include "../kselftest_harness.h"
#include "recount_fixture.h"

#define POWER_SYSCTL "/proc/sys/kernel/recount_power_mw"

static int power_get(unsigned int mw[4])
{
	FILE *f = fopen(POWER_SYSCTL, "r");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%u %u %u %u", &mw[0], &mw[1], &mw[2], &mw[3]);
	fclose(f);
	return n == 4 ? 0 : -EINVAL;
}

static int power_set(const unsigned int mw[4])
{
	char buf[64];
	int fd, len, ret = 0;

	len = snprintf(buf, sizeof(buf), "%u %u %u %u\n", mw[0], mw[1], mw[2], mw[3]);
	fd = open(POWER_SYSCTL, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

/* The model the tests use: busy and idle power of each kind, in mW. */
static const unsigned int model[4] = { 2000, 100, 500, 20 };

FIXTURE(energy) {
	struct rnl nl;
	unsigned int saved[4];
};

FIXTURE_SETUP(energy)
{
	int err = rnl_open(&self->nl);

	if (err == -ENOENT)
		SKIP(return, "the kernel has no RECOUNT netlink family (CONFIG_RECOUNT=n)");
	ASSERT_EQ(0, err);
	if (recount_sysctl_get() != 1)
		ASSERT_EQ(0, recount_sysctl_set(1));
	ASSERT_EQ(0, power_get(self->saved));
	ASSERT_EQ(0, power_set(model));
}

FIXTURE_TEARDOWN(energy)
{
	power_set(self->saved);
	rnl_close(&self->nl);
}

/* The first CPU of kind @kind, as get-info lists them, or -1. */
static int first_cpu_of(struct rnl *nl, int kind)
{
	struct rnl_reply r;

	if (rnl_get_info(nl, &r) || !r.rec.kind_cpus[kind][0])
		return -1;
	return atoi(r.rec.kind_cpus[kind]);
}

/* Energy in nJ of @mw milliwatts over @ns nanoseconds. */
static __u64 energy_of(unsigned int mw, __u64 ns)
{
	return (__u64)((long double)mw * ns / 1000);
}

static __u64 diff(__u64 a, __u64 b)
{
	return a > b ? a - b : b - a;
}

TEST_F(energy, model_from_boot_parameter)
{
	char value[64], expect[64];
	unsigned int mw[4];

	if (!cmdline_has("recount_power_mw=", value, sizeof(value)))
		SKIP(return, "booted without recount_power_mw=");
	ASSERT_EQ(0, power_set(self->saved));
	ASSERT_EQ(0, power_get(mw));
	snprintf(expect, sizeof(expect), "%u,%u,%u,%u", mw[0], mw[1], mw[2], mw[3]);
	EXPECT_STREQ(value, expect);
}

/* A thread busy on a kind drawing P for a time T gains P * T, within 2%. */
TEST_F(energy, busy_thread_gains_power_times_time)
{
	struct rnl_reply info;
	int kind, measured = 0;

	ASSERT_EQ(0, rnl_get_info(&self->nl, &info));
	ASSERT_EQ(RECOUNT_ENERGY_SOURCE_ESTIMATED, info.rec.energy_source);
	ASSERT_TRUE(info.rec.metrics & RECOUNT_METRIC_ENERGY);

	for (kind = 0; kind < 2; kind++) {
		int cpu = first_cpu_of(&self->nl, kind);
		unsigned long long t0, wall;
		struct rnl_record a, b;
		__u64 time, energy, expect;
		struct worker w;

		if (cpu < 0)
			continue;
		measured++;
		ASSERT_EQ(0, worker_start(&w, work_spin_user, 300 * NSEC_PER_MSEC, cpu));
		AT_REST(w.tid, &a);
		t0 = now_ns();
		ASSERT_EQ(0, worker_run(&w));
		wall = now_ns() - t0;
		AT_REST(w.tid, &b);
		worker_stop(&w);

		ASSERT_TRUE(b.usage.has & RNL_ENERGY);
		time = rnl_cpu_time(&b.usage) - rnl_cpu_time(&a.usage);
		energy = b.usage.energy - a.usage.energy;
		expect = energy_of(model[kind * 2], time);
		TH_LOG("kind %d (cpu %d): busy %llu us of %llu us, %llu nJ, expected %llu nJ",
		       kind, cpu, time / 1000, wall / 1000, energy, expect);
		/* Its own clock, not wall time: other tasks share the CPU. */
		EXPECT_GE(time, w.worked - w.worked / 50);
		EXPECT_LE(time, wall_bound(wall));
		EXPECT_LE(diff(energy, expect), expect / 50);
	}
	/* get-info names the CPUs of one kind at least. */
	EXPECT_LT(0, measured);
}

struct spinner {
	int cpu;
	pid_t tid;		/* set once pinned; -1 if it could not be */
	int stop;
};

static void *spinner(void *p)
{
	struct spinner *sp = p;

	if (pin_self(sp->cpu)) {
		__atomic_store_n(&sp->tid, -1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&sp->tid, sys_gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sp->stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

/*
 * A reader adds a running thread's interval in progress, estimated with the
 * model of the moment; a new model must not make the energy read go back.
 * From 1 kW to 1 mW: without care, the interval read at 1 kW (up to a tick:
 * millions of nJ) would be folded at 1 mW, and was in every round. Each new
 * model switches recount off and on (a second under QEMU on arm64, which
 * creates and releases the PMU counters of every CPU): few rounds.
 */
TEST_F_TIMEOUT(energy, energy_never_goes_back_when_the_model_changes, 300)
{
	static const unsigned int high[4] = { 1000000, 1, 1000000, 1 };
	static const unsigned int low[4] = { 1, 1, 1, 1 };
	struct spinner sp = { .cpu = -1 };
	int me = -1, cpu, round, back = 0;
	struct rnl_reply a, b;
	cpu_set_t set;
	pthread_t th;
	pid_t tid;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (me < 0)
			me = cpu;
		else if (sp.cpu < 0)
			sp.cpu = cpu;
	}
	if (sp.cpu < 0)
		SKIP(return, "one CPU: the reader must run beside the thread it reads");
	ASSERT_EQ(0, pin_self(me));
	ASSERT_EQ(0, pthread_create(&th, NULL, spinner, &sp));
	while (!(tid = __atomic_load_n(&sp.tid, __ATOMIC_ACQUIRE)))
		sleep_ns(NSEC_PER_MSEC);
	ASSERT_LT(0, tid);

	for (round = 0; round < 5; round++) {
		ASSERT_EQ(0, power_set(high));
		sleep_ns(3 * NSEC_PER_MSEC);
		ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_PID, tid, &a)) TH_LOG("%s", a.extack);
		ASSERT_EQ(0, power_set(low));
		ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_PID, tid, &b)) TH_LOG("%s", b.extack);
		ASSERT_TRUE(a.rec.usage.has & RNL_ENERGY);
		ASSERT_TRUE(b.rec.usage.has & RNL_ENERGY);
		if (b.rec.usage.energy < a.rec.usage.energy) {
			TH_LOG("round %d: %llu nJ, then %llu nJ", round,
			       (unsigned long long)a.rec.usage.energy,
			       (unsigned long long)b.rec.usage.energy);
			back++;
		}
	}
	__atomic_store_n(&sp.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	EXPECT_EQ(0, back);
}

/* A sleeping thread reaches no accounting point: it gains no energy at all. */
TEST_F(energy, sleeping_thread_gains_nothing)
{
	struct rnl_record a, b;
	struct worker w;

	ASSERT_EQ(0, worker_start(&w, work_sleep, 1200 * NSEC_PER_MSEC, -1));
	ASSERT_EQ(1, write(w.go[1], "r", 1));
	ASSERT_TRUE(worker_asleep(&w));
	GET(RECOUNT_A_PID, w.tid, &a);
	sleep_ns(500 * NSEC_PER_MSEC);
	GET(RECOUNT_A_PID, w.tid, &b);
	ASSERT_TRUE(worker_sleeping(&w)) TH_LOG("its sleep ended before the second read");
	ASSERT_EQ(1, read(w.done[0], &(char){ 0 }, 1));
	worker_stop(&w);
	ASSERT_TRUE(b.usage.has & RNL_ENERGY);
	EXPECT_EQ(a.usage.energy, b.usage.energy);
}

/* An idle CPU gains its idle power times its idle time, within 2%. */
TEST_F(energy, idle_cpu_gains_idle_power)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), cpu = ncpu - 1;
	struct rnl_record a, b;
	__u64 idle, energy, expect;

	GET(RECOUNT_A_CPU, cpu, &a);
	sleep_ns(500 * NSEC_PER_MSEC);
	GET(RECOUNT_A_CPU, cpu, &b);
	ASSERT_TRUE(b.usage.has & RNL_IDLE_ENERGY);
	idle = b.usage.idle - a.usage.idle;
	energy = b.usage.idle_energy - a.usage.idle_energy;
	expect = energy_of(model[b.usage.kind * 2 + 1], idle);
	TH_LOG("cpu %d: idle %llu us, %llu nJ, expected %llu nJ", cpu, idle / 1000, energy, expect);
	EXPECT_GT(idle, 100 * NSEC_PER_MSEC);
	EXPECT_LE(diff(energy, expect), expect / 50 + 1);
}

/* Without a power model, energy is unsupported: absent, never 0. */
TEST_F(energy, no_model_no_energy)
{
	static const unsigned int none[4];
	struct rnl_record r;
	int k;

	ASSERT_EQ(0, power_set(none));
	GET(RECOUNT_A_PID, sys_gettid(), &r);
	EXPECT_FALSE(r.metrics & RECOUNT_METRIC_ENERGY);
	EXPECT_EQ(RECOUNT_ENERGY_SOURCE_NONE, r.energy_source);
	EXPECT_FALSE(r.usage.has & RNL_ENERGY);
	for (k = 0; k < r.nr_kinds; k++)
		EXPECT_FALSE(r.per_kind[k].has & RNL_ENERGY);
	GET(RECOUNT_A_CPU, 0, &r);
	EXPECT_FALSE(r.usage.has & (RNL_ENERGY | RNL_IDLE_ENERGY));
	/* And back: the model is a run-time setting. */
	ASSERT_EQ(0, power_set(model));
	GET(RECOUNT_A_PID, sys_gettid(), &r);
	EXPECT_TRUE(r.usage.has & RNL_ENERGY);
}

/* Only CAP_SYS_ADMIN may change the model. */
TEST_F(energy, model_needs_cap_sys_admin)
{
	unsigned int mw[4];

	EXPECT_EQ(-EPERM, write_without_cap_sys_admin(POWER_SYSCTL, "1 2 3 4\n"));
	ASSERT_EQ(0, power_get(mw));
	EXPECT_EQ(0, memcmp(mw, model, sizeof(mw)));
}

TEST_HARNESS_MAIN
