// SPDX-License-Identifier: GPL-2.0
/*
 * recount: user and kernel time of threads and processes.
 *
 * Each test drives threads through work whose nature is known (spinning in
 * user mode, working in syscalls, sleeping) and checks that recount put the
 * time where it belongs (a KVM guest's time too, where there is KVM). Threads
 * are read while blocked between two pieces of work, so their values are
 * stable.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"

#define SPIN_NS		(400 * NSEC_PER_MSEC)

/* How long a measured work took. */
struct span {
	/* from before the first read of the thread to after the second */
	unsigned long long wall;
	/* the CPU time of the work, by the thread's own clock */
	unsigned long long worked;
};

/*
 * Run @work for @ns in a new thread, on @cpu (or any, -1); return what the
 * thread gained meanwhile in @gained, and in @span the wall time, which a
 * single thread cannot exceed, and the CPU time it saw itself work, which
 * is less on a busy or slow machine.
 */
static void measure_work(struct __test_metadata *_metadata, struct rnl *nl,
			 void (*work)(struct worker *w), unsigned long long ns, int cpu,
			 struct rnl_usage *gained, struct span *span)
{
	struct rnl_reply a, b;
	unsigned long long t0;
	struct worker w;

	ASSERT_EQ(0, worker_start(&w, work, ns, cpu));
	t0 = now_ns();
	ASSERT_EQ(0, rnl_get(nl, RECOUNT_A_PID, w.tid, &a));
	ASSERT_EQ(0, worker_run(&w));
	ASSERT_EQ(0, rnl_get(nl, RECOUNT_A_PID, w.tid, &b));
	span->wall = now_ns() - t0;
	span->worked = w.worked;
	worker_stop(&w);
	gained->user = b.rec.usage.user - a.rec.usage.user;
	gained->kernel = b.rec.usage.kernel - a.rec.usage.kernel;
	TH_LOG("%llu ms of work (%llu ms by its clock): user %llu us, kernel %llu us",
	       span->wall / NSEC_PER_MSEC, span->worked / NSEC_PER_MSEC,
	       gained->user / 1000, gained->kernel / 1000);
}

/*
 * A thread spinning in user mode gains user time, and barely kernel time.
 * Its kernel time is that of the interrupts it takes: on a CPU with a tick,
 * mostly the tick's, whose cost depends on the kernel's speed (the test
 * below measures it). So this thread spins where it takes no tick, on a
 * nohz_full CPU, if the machine has one (the harness boots one).
 */
TEST_F(recount, user_time_of_spinning_thread)
{
	int cpu = nohz_full_cpu(-1);
	struct rnl_usage d;
	struct span span;

	TH_LOG("spinning on %s", cpu < 0 ? "any CPU, with a tick" : "a nohz_full CPU");
	measure_work(_metadata, &self->nl, work_spin_user, SPIN_NS, cpu, &d, &span);
	/* With a tick, its interrupts take a tenth on a debug kernel. */
	EXPECT_GE(d.user, cpu < 0 ? span.worked / 2 : span.worked * 9 / 10);
	EXPECT_LE(d.user, wall_bound(span.wall));
	EXPECT_LT(d.kernel, d.user / 10);
}

/*
 * A gap longer than this between two clock reads of the spin below is time
 * the thread did not run in user mode. A turn of its loop takes far less:
 * 63 ns on arm64 under icount, 115 to 170 ns on x86 under TCG.
 */
#define AWAY_NS		2000

static struct {
	unsigned long long ran, away;
	int gaps, turns;
} watched;

/*
 * Spin in user mode for @w->arg ns of wall time, reading the clock at every
 * turn: the gaps between reads are the time the thread was away from user
 * mode (in an interrupt, or not running); the rest of the spin is the time
 * it ran in user mode, interrupts shorter than AWAY_NS aside.
 */
static void work_spin_user_watched(struct worker *w)
{
	unsigned long long t0 = now_ns(), prev = t0, t;

	watched.away = 0;
	watched.gaps = 0;
	watched.turns = 0;
	do {
		t = now_ns();
		watched.turns++;
		if (t - prev > AWAY_NS) {
			watched.away += t - prev;
			watched.gaps++;
		}
		prev = t;
	} while (t - t0 < w->arg);
	watched.ran = t - t0 - watched.away;
}

/*
 * The same spin on a CPU with a tick, where the thread takes the tick's
 * interrupts, watching its own clock to see how long it was away from user
 * mode. Its user time is the time it saw itself run, within 1% (clocks, and
 * interrupts too short to see). Its kernel time is at most the time it was
 * away, and 2% more for its wake-up and the system calls around the spin.
 * Both bounds hold however costly the tick is; user time charged to the
 * kernel at the tick breaks the first.
 */
TEST_F(recount, user_time_of_spinning_thread_with_a_tick)
{
	int cpu = ticking_cpu(0);
	struct rnl_usage d;
	struct span span;

	TH_LOG("spinning on CPU %d (-1: any)", cpu);
	measure_work(_metadata, &self->nl, work_spin_user_watched, SPIN_NS, cpu, &d, &span);
	TH_LOG("it saw itself run %llu us (%llu ns a turn), away %llu us in %d gaps",
	       watched.ran / 1000, watched.ran / watched.turns, watched.away / 1000,
	       watched.gaps);
	EXPECT_GE(d.user, watched.ran - watched.ran / 100);
	EXPECT_LE(d.user, wall_bound(span.wall));
	EXPECT_LE(d.kernel, watched.away + SPIN_NS / 50);
}

/* A thread working in syscalls gains kernel time. */
TEST_F(recount, kernel_time_of_syscalls)
{
	struct rnl_usage d;
	struct span span;

	measure_work(_metadata, &self->nl, work_spin_kernel, SPIN_NS, -1, &d, &span);
	EXPECT_GT(d.kernel, d.user);
	EXPECT_GE(d.kernel + d.user, span.worked - span.worked / 50);
	EXPECT_LE(d.kernel + d.user, wall_bound(span.wall));
}

/* A sleeping thread gains nothing at all: it reaches no accounting point. */
TEST_F(recount, sleeping_thread_gains_nothing)
{
	struct rnl_record a, b;
	struct worker w;

	ASSERT_EQ(0, worker_start(&w, work_sleep, 1500 * NSEC_PER_MSEC, -1));
	/* Let the worker go to sleep, then read it twice half a second apart. */
	ASSERT_EQ(1, write(w.go[1], "r", 1));
	ASSERT_TRUE(worker_asleep(&w));
	GET(RECOUNT_A_PID, w.tid, &a);
	sleep_ns(500 * NSEC_PER_MSEC);
	GET(RECOUNT_A_PID, w.tid, &b);
	ASSERT_TRUE(worker_sleeping(&w)) TH_LOG("its sleep ended before the second read");
	ASSERT_EQ(1, read(w.done[0], &(char){ 0 }, 1));
	worker_stop(&w);

	EXPECT_EQ(a.usage.user, b.usage.user);
	EXPECT_EQ(a.usage.kernel, b.usage.kernel);
}

static unsigned long long schedstat_runtime(pid_t tid)
{
	unsigned long long run = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &run) != 1)
		run = 0;
	fclose(f);
	return run;
}

/*
 * user + kernel of a thread agrees with the scheduler's sum_exec_runtime
 * (the first field of /proc/PID/schedstat) within 2%: the scheduler also
 * counts, at each wakeup on an idle CPU, the time the CPU took to leave idle
 * (recount.rst, "What is counted where"), a few of which this leaves room for.
 */
TEST_F(recount, agrees_with_sum_exec_runtime)
{
	unsigned long long rc, sched, diff;
	struct rnl_record r;
	struct worker w;

	ASSERT_EQ(0, worker_start(&w, work_spin_user, 150 * NSEC_PER_MSEC, -1));
	ASSERT_EQ(0, worker_run(&w));
	w.work = work_spin_kernel;
	ASSERT_EQ(0, worker_run(&w));
	w.work = work_spin_user;
	ASSERT_EQ(0, worker_run(&w));

	AT_REST(w.tid, &r);
	sched = schedstat_runtime(w.tid);
	worker_stop(&w);
	ASSERT_NE(0, sched) TH_LOG("no /proc/PID/schedstat (CONFIG_SCHED_INFO)");

	rc = rnl_cpu_time(&r.usage);
	diff = rc > sched ? rc - sched : sched - rc;
	TH_LOG("recount %llu us, sum_exec_runtime %llu us", rc / 1000, sched / 1000);
	EXPECT_LE(diff, sched / 50);
}

/* Two back-to-back reads of oneself strictly increase every metric counted. */
TEST_F(recount, self_reads_strictly_increase)
{
	struct rnl_record a, b;
	pid_t tid = sys_gettid();
	int i;

	for (i = 0; i < 100; i++) {
		GET(RECOUNT_A_PID, tid, &a);
		GET(RECOUNT_A_PID, tid, &b);
		ASSERT_GT(b.usage.kernel, a.usage.kernel);
		ASSERT_GT(b.usage.user, a.usage.user);
		if (b.usage.has & RNL_CYCLES) {
			ASSERT_GT(b.usage.user_cycles, a.usage.user_cycles);
			ASSERT_GT(b.usage.kernel_cycles, a.usage.kernel_cycles);
		}
		if (b.usage.has & RNL_INSTRUCTIONS) {
			ASSERT_GT(b.usage.user_instructions, a.usage.user_instructions);
			ASSERT_GT(b.usage.kernel_instructions, a.usage.kernel_instructions);
		}
		if (b.usage.has & RNL_ENERGY)
			ASSERT_GT(b.usage.energy, a.usage.energy);
	}
	TH_LOG("metrics %#x: every one of them grew", b.metrics);
}

/* A kernel thread never runs in user mode: its user time is exactly zero. */
TEST_F(recount, kernel_thread_has_no_user_time)
{
	struct rnl_record r;

	/* pid 2 is kthreadd in the initial pid namespace. */
	GET(RECOUNT_A_PID, 2, &r);
	ASSERT_EQ(0, strcmp(r.comm, "kthreadd")) TH_LOG("pid 2 is %s", r.comm);
	EXPECT_EQ(0, r.usage.user);
	EXPECT_GT(r.usage.kernel, 0);
	GET(RECOUNT_A_TGID, 2, &r);
	EXPECT_EQ(0, r.usage.user);
}

/*
 * A process's totals include its exited threads: they never decrease as
 * threads exit, every thread is at most its process, and at rest the live
 * threads are exactly the process minus its exited threads.
 */
#define NR_WORKERS 4

TEST_F(recount, process_includes_exited_threads)
{
	struct rnl_record proc, prev, thr, main_thr;
	struct worker w[NR_WORKERS];
	int to_parent[2], to_child[2];
	__u64 live_user, live_kernel;
	pid_t child;
	char c;
	int i;

	/*
	 * The process under test is a child whose every thread is blocked when
	 * we read it; main threads read themselves in the middle of a syscall,
	 * so they are not at rest.
	 */
	ASSERT_EQ(0, pipe(to_parent));
	ASSERT_EQ(0, pipe(to_child));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		for (i = 0; i < NR_WORKERS; i++) {
			if (worker_start(&w[i], i % 2 ? work_spin_kernel : work_spin_user,
					 60 * NSEC_PER_MSEC, -1) || worker_run(&w[i]))
				_exit(1);
			/* Report the tid, wait for the parent's read. */
			if (write(to_parent[1], &w[i].tid, sizeof(pid_t)) != sizeof(pid_t) ||
			    read(to_child[0], &c, 1) != 1)
				_exit(1);
		}
		/* Workers exit one by one, the parent reads after each exit. */
		for (i = 0; i < NR_WORKERS - 1; i++) {
			worker_stop(&w[i]);
			if (write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}

	memset(&prev, 0, sizeof(prev));
	for (i = 0; i < NR_WORKERS; i++) {
		pid_t tid;

		ASSERT_EQ(sizeof(pid_t), read(to_parent[0], &tid, sizeof(pid_t)));
		w[i].tid = tid;
		GET(RECOUNT_A_PID, tid, &thr);
		GET(RECOUNT_A_TGID, child, &proc);
		EXPECT_LE(thr.usage.user, proc.usage.user);
		EXPECT_LE(thr.usage.kernel, proc.usage.kernel);
		EXPECT_GE(proc.usage.user, prev.usage.user);
		EXPECT_GE(proc.usage.kernel, prev.usage.kernel);
		prev = proc;
		ASSERT_EQ(1, write(to_child[1], "c", 1));
	}
	for (i = 0; i < NR_WORKERS - 1; i++) {
		ASSERT_EQ(1, read(to_parent[0], &c, 1));
		/* Worker i has exited (joined); the process does not shrink. */
		GET(RECOUNT_A_TGID, child, &proc);
		EXPECT_GE(proc.usage.user, prev.usage.user);
		EXPECT_GE(proc.usage.kernel, prev.usage.kernel);
		EXPECT_GE(proc.exited.user + proc.exited.kernel,
			  prev.exited.user + prev.exited.kernel);
		prev = proc;

		/*
		 * At rest (every thread of the child blocked), the live threads
		 * are exactly the process minus its exited threads.
		 */
		AT_REST(child, &main_thr);
		live_user = main_thr.usage.user;
		live_kernel = main_thr.usage.kernel;
		for (int j = i + 1; j < NR_WORKERS; j++) {
			AT_REST(w[j].tid, &thr);
			live_user += thr.usage.user;
			live_kernel += thr.usage.kernel;
		}
		GET(RECOUNT_A_TGID, child, &proc);
		EXPECT_EQ(live_user, proc.usage.user - proc.exited.user);
		EXPECT_EQ(live_kernel, proc.usage.kernel - proc.exited.kernel);
		ASSERT_EQ(1, write(to_child[1], "c", 1));
	}
	ASSERT_EQ(child, waitpid(child, &i, 0));
	EXPECT_TRUE(WIFEXITED(i) && WEXITSTATUS(i) == 0);
	EXPECT_GT(prev.exited.user, 0);
	EXPECT_GT(prev.exited.kernel, 0);
}

static void work_nothing(struct worker *w)
{
}

/*
 * A thread's record says when it was created, by CLOCK_BOOTTIME; a
 * process's, when its first thread was, whichever thread reads it.
 */
TEST_F(recount, start_time)
{
	unsigned long long t0, t1;
	struct rnl_reply r, main_thread;
	struct worker w;

	t0 = boot_ns();
	ASSERT_EQ(0, worker_start(&w, work_nothing, 0, -1));
	t1 = boot_ns();
	ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_PID, w.tid, &r));
	ASSERT_TRUE(r.rec.has_start_time);
	EXPECT_GE(r.rec.start_time, t0);
	EXPECT_LE(r.rec.start_time, t1);

	ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_PID, getpid(), &main_thread));
	ASSERT_TRUE(main_thread.rec.has_start_time);
	EXPECT_LT(main_thread.rec.start_time, t0);
	ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_TGID, getpid(), &r));
	ASSERT_TRUE(r.rec.has_start_time);
	EXPECT_EQ(main_thread.rec.start_time, r.rec.start_time);
	/* CPUs have none. */
	ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_CPU, 0, &r));
	EXPECT_FALSE(r.rec.has_start_time);
	worker_stop(&w);
}

#ifdef __x86_64__
/*
 * A KVM guest of one virtual CPU, in real mode, whose code counts ECX down
 * from the worker's argument and halts.
 */
static struct {
	int kvm, vm, vcpu;
	struct kvm_run *run;
	unsigned char *mem;
	int exit_reason, runs;
} guest = { -1, -1, -1 };

static int guest_create(void)
{
	struct kvm_userspace_memory_region region = { .guest_phys_addr = 0x1000,
						       .memory_size = 0x1000 };
	struct kvm_sregs sregs;
	int size;

	guest.kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	guest.vm = ioctl(guest.kvm, KVM_CREATE_VM, 0);
	if (guest.vm < 0)
		return -1;
	guest.mem = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (guest.mem == MAP_FAILED)
		return -1;
	region.userspace_addr = (unsigned long)guest.mem;
	if (ioctl(guest.vm, KVM_SET_USER_MEMORY_REGION, &region))
		return -1;
	guest.vcpu = ioctl(guest.vm, KVM_CREATE_VCPU, 0);
	size = ioctl(guest.kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (guest.vcpu < 0 || size <= 0)
		return -1;
	guest.run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, guest.vcpu, 0);
	if (guest.run == MAP_FAILED || ioctl(guest.vcpu, KVM_GET_SREGS, &sregs))
		return -1;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	return ioctl(guest.vcpu, KVM_SET_SREGS, &sregs);
}

/*
 * Run the guest, mov ecx, 10^7; 1: dec ecx; jnz 1b; hlt, to its halt, again
 * and again for @w->arg ns of the thread's CPU time.
 */
static void work_guest(struct worker *w)
{
	const unsigned char code[] = { 0x66, 0xb9, 0x80, 0x96, 0x98, 0x00,
				       0x66, 0x49, 0x75, 0xfc, 0xf4 };
	unsigned long long t0 = thread_cpu_ns();
	struct kvm_regs regs = { .rip = 0x1000, .rflags = 2 };

	memcpy(guest.mem, code, sizeof(code));
	guest.runs = 0;
	do {
		guest.exit_reason = -1;
		if (ioctl(guest.vcpu, KVM_SET_REGS, &regs))
			return;
		do {
			if (ioctl(guest.vcpu, KVM_RUN, 0) && errno != EINTR)
				return;
		} while (guest.run->exit_reason == KVM_EXIT_INTR);
		guest.exit_reason = guest.run->exit_reason;
		guest.runs++;
	} while (guest.exit_reason == KVM_EXIT_HLT && thread_cpu_ns() - t0 < w->arg);
}
#endif

/*
 * The time a KVM virtual CPU spends in guest mode is its thread's user time,
 * as getrusage() counts it, not kernel time: a thread that runs a guest
 * loop for 300 ms of its CPU time gains user time, and kernel time only for
 * the entries and exits. Most exits are the tick's, so the thread runs on
 * the nohz_full CPU, if there is one: there the kernel time is 1 to 4% on
 * the test kernel and 11 to 21% on the debug kernel (KASAN, lockdep), where
 * a CPU with a tick gives 14% and 18 to 36%. Guest mode charged to the
 * kernel leaves the thread no user time at all.
 */
TEST_F(recount, kvm_guest_time_is_user_time)
{
	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "no /dev/kvm: no KVM, or no virtualization in this CPU");
#ifndef __x86_64__
	SKIP(return, "the test's guest is x86 code");
#else
	struct rnl_usage d;
	struct span span;
	int cpu;

	ASSERT_EQ(0, guest_create()) TH_LOG("creating a guest: %s", strerror(errno));
	cpu = nohz_full_cpu(-1);
	TH_LOG("running the guest on %s", cpu < 0 ? "any CPU, with a tick" : "a nohz_full CPU");
	measure_work(_metadata, &self->nl, work_guest, 300 * NSEC_PER_MSEC, cpu, &d, &span);
	ASSERT_EQ(KVM_EXIT_HLT, guest.exit_reason);
	TH_LOG("%d runs of the guest", guest.runs);
	EXPECT_GE(d.user + d.kernel, span.worked - span.worked / 50);
	EXPECT_GE(d.user, (d.user + d.kernel) / 2);
	EXPECT_LE(d.user + d.kernel, wall_bound(span.wall));
#endif
}

TEST_HARNESS_MAIN
