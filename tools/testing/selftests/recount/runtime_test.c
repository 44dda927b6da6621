// SPDX-License-Identifier: GPL-2.0
/*
 * recount: task runtime info, why a thread was not running.
 *
 * Each test forces one cause of waiting from user space and checks that the
 * matching time grows by what was forced: page faults held up by a
 * userfaultfd handler, a pipe's mutex held by a writer stuck in such a fault,
 * two threads sharing one CPU; a free mutex is no contention. Each wait is
 * counted, and the longest kept with when it ended: a thread that must meet
 * a deadline every 10 ms learns why it missed two. The versioned struct
 * recount_task_runtime gives every client exactly the layout it asked for.
 * A process's record carries its parent, and what its reaped children did.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <poll.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <linux/userfaultfd.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"

#define MS NSEC_PER_MSEC

/* The ABI: sizes and offsets of every version, at build time and run time. */
static_assert(sizeof(struct recount_task_runtime_v1) == 16, "v1 is 16 bytes");
static_assert(sizeof(struct recount_task_runtime_v2) == 32, "v2 is 32 bytes");
static_assert(sizeof(struct recount_task_runtime) == 104, "v3 is 104 bytes");
static_assert(offsetof(struct recount_task_runtime_v2, queue_time) ==
	      offsetof(struct recount_task_runtime_v1, queue_time), "v2 begins with v1");
static_assert(offsetof(struct recount_task_runtime, lock_contention_time) ==
	      offsetof(struct recount_task_runtime_v2, lock_contention_time), "v3 begins with v2");

/* The members of version 2, where @type has them. */
#define EXPECT_V2_PREFIX(type) do {						\
		EXPECT_EQ(0, offsetof(type, cpu_time));				\
		EXPECT_EQ(8, offsetof(type, queue_time));			\
		EXPECT_EQ(16, offsetof(type, page_fault_time));			\
		EXPECT_EQ(24, offsetof(type, lock_contention_time));		\
	} while (0)

TEST(abi)
{
	EXPECT_EQ(1, RECOUNT_RUNTIME_V1);
	EXPECT_EQ(2, RECOUNT_RUNTIME_V2);
	EXPECT_EQ(3, RECOUNT_RUNTIME_V3);
	EXPECT_EQ(RECOUNT_RUNTIME_V3, RECOUNT_RUNTIME_VERSION);
	EXPECT_EQ(16, sizeof(struct recount_task_runtime_v1));
	EXPECT_EQ(0, offsetof(struct recount_task_runtime_v1, cpu_time));
	EXPECT_EQ(8, offsetof(struct recount_task_runtime_v1, queue_time));
	EXPECT_EQ(32, sizeof(struct recount_task_runtime_v2));
	EXPECT_V2_PREFIX(struct recount_task_runtime_v2);
	EXPECT_EQ(104, sizeof(struct recount_task_runtime));
	EXPECT_V2_PREFIX(struct recount_task_runtime);
	EXPECT_EQ(32, offsetof(struct recount_task_runtime, queue_count));
	EXPECT_EQ(40, offsetof(struct recount_task_runtime, queue_max));
	EXPECT_EQ(48, offsetof(struct recount_task_runtime, queue_max_time));
	EXPECT_EQ(56, offsetof(struct recount_task_runtime, page_fault_count));
	EXPECT_EQ(64, offsetof(struct recount_task_runtime, page_fault_max));
	EXPECT_EQ(72, offsetof(struct recount_task_runtime, page_fault_max_time));
	EXPECT_EQ(80, offsetof(struct recount_task_runtime, lock_contention_count));
	EXPECT_EQ(88, offsetof(struct recount_task_runtime, lock_contention_max));
	EXPECT_EQ(96, offsetof(struct recount_task_runtime, lock_contention_max_time));
}

/*
 * A userfaultfd whose handler resolves each fault after @delay; if
 * @wait_for, only @delay after that thread blocked (in a lock, say).
 */
struct uffd_server {
	int uffd;
	char *area;
	size_t size;
	unsigned long long delay;
	pid_t wait_for;		/* set with __atomic builtins, the handler reads it */
	int blocked;		/* wait_for was seen blocked, read once the handler is joined */
	int stop;		/* set with __atomic builtins, the handler polls it */
	int seen;		/* faults read, set with __atomic builtins */
	int handled;		/* read once the handler is joined */
	int hold;		/* set with __atomic builtins: keep the fault after delay */
	unsigned long long released_at;	/* the last fault's, by CLOCK_BOOTTIME */
	pthread_t thread;
};

/* Wait up to 5 s for thread @tid to sleep uninterruptibly. */
static bool wait_until_blocked(pid_t tid)
{
	unsigned long long end = now_ns() + 5 * NSEC_PER_SEC;

	while (now_ns() < end) {
		char state = thread_state(tid);

		if (!state)
			return false;
		if (state == 'D')
			return true;
		sleep_ns(NSEC_PER_MSEC / 10);
	}
	return false;
}

/* Wait up to 5 s for @s's handler to have read a fault. */
static bool uffd_seen(struct uffd_server *s)
{
	unsigned long long end = now_ns() + 5 * NSEC_PER_SEC;

	while (!__atomic_load_n(&s->seen, __ATOMIC_ACQUIRE)) {
		if (now_ns() > end)
			return false;
		sleep_ns(NSEC_PER_MSEC / 10);
	}
	return true;
}

static void *uffd_handler(void *p)
{
	struct uffd_server *s = p;
	long page_size = sysconf(_SC_PAGESIZE);
	char *page = malloc(page_size);
	pid_t wait_for;

	memset(page, 'x', page_size);
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		struct pollfd pfd = { .fd = s->uffd, .events = POLLIN };
		struct uffdio_copy copy = {};
		struct uffd_msg msg;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if (read(s->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		__atomic_add_fetch(&s->seen, 1, __ATOMIC_RELEASE);
		wait_for = __atomic_load_n(&s->wait_for, __ATOMIC_ACQUIRE);
		if (wait_for)
			s->blocked = wait_until_blocked(wait_for);
		sleep_ns(s->delay);
		while (__atomic_load_n(&s->hold, __ATOMIC_ACQUIRE) &&
		       !__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
			sleep_ns(NSEC_PER_MSEC);
		__atomic_store_n(&s->released_at, boot_ns(), __ATOMIC_RELEASE);
		copy.dst = msg.arg.pagefault.address & ~(page_size - 1);
		copy.src = (unsigned long)page;
		copy.len = page_size;
		if (ioctl(s->uffd, UFFDIO_COPY, &copy) == 0)
			s->handled++;
	}
	free(page);
	return NULL;
}

/*
 * Returns 0, or a negative errno: -ENOSYS if the kernel has no userfaultfd
 * (the tests skip), any other a failure of the setup (the tests fail).
 */
static int uffd_start(struct uffd_server *s, int pages, unsigned long long delay)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {};

	memset(s, 0, sizeof(*s));
	s->delay = delay;
	s->size = pages * sysconf(_SC_PAGESIZE);
	s->area = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->area == MAP_FAILED)
		return -errno;
	s->uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (s->uffd < 0)
		return -errno;
	reg.range.start = (unsigned long)s->area;
	reg.range.len = s->size;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(s->uffd, UFFDIO_API, &api) || ioctl(s->uffd, UFFDIO_REGISTER, &reg))
		return -errno;
	return -pthread_create(&s->thread, NULL, uffd_handler, s);
}

static void uffd_stop(struct uffd_server *s)
{
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	pthread_join(s->thread, NULL);
	close(s->uffd);
	munmap(s->area, s->size);
}

#define NO_UFFD "no userfaultfd (CONFIG_USERFAULTFD=n)"

/* uffd_start() failed because the kernel has no userfaultfd: the tests skip. */
static bool uffd_missing(int err)
{
	return err == -ENOSYS;
}

static struct uffd_server *fault_server;
static unsigned long long touch_ns, touch_began, touch_ended, touch_faults;

/* The page faults of the calling thread, by getrusage(). */
static unsigned long long thread_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

/* Touch every page of the userfaultfd area: one fault each, timed. */
static void work_touch(struct worker *w)
{
	long page_size = sysconf(_SC_PAGESIZE);
	unsigned long long start;
	size_t off;

	touch_faults = thread_faults();
	touch_began = boot_ns();
	start = now_ns();
	for (off = 0; off < fault_server->size; off += page_size)
		fault_server->area[off] = 1;
	touch_ns = now_ns() - start;
	touch_ended = boot_ns();
	touch_faults = thread_faults() - touch_faults;
}

/*
 * The kernel reads CLOCK_BOOTTIME for when a longest wait ended with
 * ktime_get_boot_fast_ns(), user space with clock_gettime(): allow them a
 * millisecond apart.
 */
#define BOOT_SLACK	MS

/* The longest wait of @w ended within [@from, @to], by CLOCK_BOOTTIME. */
#define EXPECT_ENDED_WITHIN(w, from, to) do {					\
		__u64 __at = (w).max_time;					\
										\
		EXPECT_GE(__at + BOOT_SLACK, (from));				\
		EXPECT_LE(__at, (to) + BOOT_SLACK);				\
	} while (0)

/* At least @held, but for 1% of rate between sched_clock and CLOCK_MONOTONIC. */
#define EXPECT_HELD(got, held) do {						\
		__u64 __got = (got);						\
										\
		EXPECT_GE(__got + __got / 100, (held));				\
	} while (0)

/*
 * Each fault the handler holds up for D adds at least D; and the faults are
 * all of the time the touching took, as the toucher timed it, but the time
 * it ran or waited for a CPU between them.
 */
TEST_F(recount, page_fault_time_is_the_fault_delay)
{
	__u64 fault, lock, queued;
	struct rnl_record a, b;
	struct uffd_server s;
	struct worker w;
	int err;

	err = uffd_start(&s, 3, 200 * MS);
	if (uffd_missing(err))
		SKIP(return, NO_UFFD);
	ASSERT_EQ(0, err) TH_LOG("userfaultfd setup: %s", strerror(-err));
	fault_server = &s;
	ASSERT_EQ(0, worker_start(&w, work_touch, 0, -1));
	AT_REST(w.tid, &a);
	ASSERT_EQ(0, worker_run(&w));
	AT_REST(w.tid, &b);
	worker_stop(&w);
	uffd_stop(&s);

	ASSERT_TRUE(b.runtime.has);
	fault = b.runtime.fault - a.runtime.fault;
	lock = b.runtime.lock - a.runtime.lock;
	queued = b.runtime.queue - a.runtime.queue;
	TH_LOG("3 faults held 200 ms each, in %llu us: faults %llu, CPU %llu, queue %llu us",
	       touch_ns / 1000, fault / 1000, w.worked / 1000, queued / 1000);
	EXPECT_EQ(3, s.handled);
	EXPECT_HELD(fault, 3 * 200 * MS);
	EXPECT_LE(fault, wall_bound(touch_ns));
	/* Between the faults, it ran or waited for a CPU. */
	EXPECT_HELD(fault + w.worked + queued, touch_ns);
	EXPECT_EQ(0, lock);
	/*
	 * Every fault getrusage() saw, and at most a few more, of the worker's
	 * stack around them; the longest is one of the three, held 200 ms, not
	 * their sum, and ended once one of them had been held.
	 */
	TH_LOG("faults: %llu counted, %llu by getrusage()",
	       b.runtime.wait[RNL_FAULT].count - a.runtime.wait[RNL_FAULT].count, touch_faults);
	EXPECT_GE(touch_faults, 3);
	EXPECT_GE(b.runtime.wait[RNL_FAULT].count - a.runtime.wait[RNL_FAULT].count, touch_faults);
	EXPECT_LE(b.runtime.wait[RNL_FAULT].count - a.runtime.wait[RNL_FAULT].count,
		  touch_faults + 4);
	EXPECT_HELD(b.runtime.wait[RNL_FAULT].max, 200 * MS);
	EXPECT_LE(b.runtime.wait[RNL_FAULT].max + 2 * 200 * MS, fault + fault / 100);
	EXPECT_ENDED_WITHIN(b.runtime.wait[RNL_FAULT], touch_began + 200 * MS, touch_ended);
	EXPECT_EQ(a.runtime.wait[RNL_LOCK].count, b.runtime.wait[RNL_LOCK].count);
}

struct pipe_writer {
	int fd;
	const void *buf;
	size_t len;
	ssize_t ret;
};

static void *pipe_write_main(void *p)
{
	struct pipe_writer *pw = p;

	pw->ret = write(pw->fd, pw->buf, pw->len);
	return NULL;
}

static int contended_pipe = -1;
static unsigned long long contended_write_ns;

/* One write() to the contended pipe, timed from the writer's own side. */
static void work_pipe_write(struct worker *w)
{
	unsigned long long start = now_ns();

	if (write(contended_pipe, "y", 1) != 1)
		abort();
	contended_write_ns = now_ns() - start;
}

/*
 * A writer to a pipe faults inside write() on a userfaultfd page, holding the
 * pipe's mutex while the handler delays the fault. Once the handler has the
 * fault, a second writer writes; the handler resolves the fault 300 ms after
 * the second writer blocked on the mutex. Its lock contention time is that
 * write() as it timed it, less only the few steps of the system call around
 * the wait.
 */
TEST_F(recount, lock_contention_time_is_the_mutex_wait)
{
	struct pipe_writer holder;
	struct rnl_record a, b;
	__u64 lock, queued;
	struct uffd_server s;
	pthread_t thread;
	struct worker w;
	int fds[2], err;

	err = uffd_start(&s, 1, 300 * MS);
	if (uffd_missing(err))
		SKIP(return, NO_UFFD);
	ASSERT_EQ(0, err) TH_LOG("userfaultfd setup: %s", strerror(-err));
	ASSERT_EQ(0, pipe(fds));
	contended_pipe = fds[1];
	ASSERT_EQ(0, worker_start(&w, work_pipe_write, 0, -1));
	AT_REST(w.tid, &a);
	/* The 300 ms start once the worker waits for the mutex, however slow it is. */
	__atomic_store_n(&s.wait_for, w.tid, __ATOMIC_RELEASE);

	holder = (struct pipe_writer){ .fd = fds[1], .buf = s.area, .len = s.size };
	ASSERT_EQ(0, pthread_create(&thread, NULL, pipe_write_main, &holder));
	ASSERT_TRUE(uffd_seen(&s));
	ASSERT_EQ(0, worker_run(&w));
	AT_REST(w.tid, &b);
	pthread_join(thread, NULL);
	worker_stop(&w);
	uffd_stop(&s);
	close(fds[0]);
	close(fds[1]);

	EXPECT_EQ((ssize_t)s.size, holder.ret);
	ASSERT_TRUE(s.blocked) TH_LOG("the worker was not seen waiting for the mutex");
	lock = b.runtime.lock - a.runtime.lock;
	queued = b.runtime.queue - a.runtime.queue;
	TH_LOG("write() blocked %llu us: lock contention %llu, CPU %llu, queue %llu us",
	       contended_write_ns / 1000, lock / 1000, w.worked / 1000, queued / 1000);
	/* The holder kept the mutex 300 ms after the worker blocked on it. */
	ASSERT_GE(contended_write_ns, 300 * MS);
	/* The wait is inside the write(), and is all of it but a few steps. */
	EXPECT_LE(lock, wall_bound(contended_write_ns));
	/* Around the wait, it ran or waited for a CPU. */
	EXPECT_HELD(lock + w.worked + queued, contended_write_ns);
	/* The wait was for the mutex, not a fault of its own (those are brief). */
	EXPECT_LT(b.runtime.fault - a.runtime.fault, 10 * MS);
}

/*
 * Taking a free mutex is no contention. A pipe's reads and writes each take
 * its mutex, here never contended; on a kernel with CONFIG_DEBUG_LOCK_ALLOC
 * every mutex_lock() goes the way a contended one does.
 */
TEST_F(recount, free_mutex_is_no_contention)
{
	struct rnl_record a, b;
	char buf[64] = "";
	int fds[2], i;

	ASSERT_EQ(0, pipe(fds));
	GET(RECOUNT_A_PID, sys_gettid(), &a);
	for (i = 0; i < 10000; i++) {
		ASSERT_EQ(sizeof(buf), write(fds[1], buf, sizeof(buf)));
		ASSERT_EQ(sizeof(buf), read(fds[0], buf, sizeof(buf)));
	}
	GET(RECOUNT_A_PID, sys_gettid(), &b);
	close(fds[0]);
	close(fds[1]);

	ASSERT_TRUE(b.runtime.has);
	EXPECT_EQ(0, b.runtime.lock - a.runtime.lock);
}

/*
 * Two CPU-bound threads pinned to one CPU spin for T each: a thread that
 * never sleeps waits for the CPU whenever it does not run, so each gains
 * queue time the wall time of its spin less the CPU time it got (by the
 * scheduler's clock), about T/2, and at most that plus the time from its
 * wakeup to its first run, and from the end of its spin to its rest, within
 * 15%. (A wakeup queued to an idle CPU waits for it to take the IPI before
 * it is runnable: that is not queue time, under TCG it took 100 ms.) A
 * thread alone on a CPU gains less than 10% of T, if no kernel thread took
 * its CPU as long (on a debug kernel one may), and at most the same bound
 * as the others: after its spin, a kernel thread may take its CPU before it
 * sleeps, and that wait is queue time too.
 */
TEST_F(recount, queue_time_follows_cpu_sharing)
{
	const unsigned long long T = 800 * MS;
	int ncpu = get_nprocs(), shared = ncpu - 1, alone = ncpu > 2 ? ncpu - 2 : 0;
	unsigned long long woken[3], rest;
	struct rnl_record a[3], b[3];
	struct worker w[3];
	int i;

	if (ncpu < 2)
		SKIP(return, "needs two CPUs");
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, worker_start(&w[i], work_spin_user, T, i < 2 ? shared : alone));
	for (i = 0; i < 3; i++)
		AT_REST(w[i].tid, &a[i]);
	for (i = 0; i < 3; i++) {
		woken[i] = now_ns();
		ASSERT_EQ(1, write(w[i].go[1], "r", 1));
	}
	for (i = 0; i < 3; i++)
		ASSERT_EQ(1, read(w[i].done[0], &(char){ 0 }, 1));
	for (i = 0; i < 3; i++) {
		__u64 queue, cpu, share, most;

		AT_REST(w[i].tid, &b[i]);
		rest = now_ns();
		worker_stop(&w[i]);
		queue = b[i].runtime.queue - a[i].runtime.queue;
		cpu = b[i].runtime.cpu - a[i].runtime.cpu;
		share = w[i].ended - w[i].began - w[i].worked;
		/* It waited only between its wakeup and its rest, less its runs. */
		most = rest - woken[i] - w[i].worked;
		TH_LOG("thread %d (cpu %d), ms: queue %llu, cpu %llu, ran %llu of %llu, %llu late",
		       i, i < 2 ? shared : alone, queue / MS, cpu / MS, w[i].worked / MS,
		       (w[i].ended - w[i].began) / MS, (w[i].began - woken[i]) / MS);
		if (i < 2) {
			EXPECT_GE(share, T / 4);
			EXPECT_GE(queue, share - share * 15 / 100);
			EXPECT_LE(queue, most + most * 15 / 100);
		} else {
			/* Alone, unless kernel threads took its CPU a while. */
			EXPECT_LE(queue, most + most * 15 / 100);
			if (share < T / 10)
				EXPECT_LT(queue, T / 10);
		}
	}
}

/*
 * Versions 1, 2 and 3 of the struct, asked by the same process, agree on
 * their common prefix and with the attributes; each is exactly its size, as
 * a client built against that version's header declared it; a version the
 * kernel does not know is an error that names those it knows.
 */
TEST_F(recount, versions_give_their_layout)
{
	struct recount_task_runtime_v1 v1;
	struct recount_task_runtime_v2 v2;
	struct recount_task_runtime v3;
	const struct rnl_wait *q, *f, *l;
	struct rnl_record rest;
	struct rnl_reply r;
	struct worker w;
	char want[32];

	ASSERT_EQ(0, worker_start(&w, work_spin_user, 50 * MS, -1));
	ASSERT_EQ(0, worker_run(&w));
	AT_REST(w.tid, &rest);

	ASSERT_EQ(0, rnl_get_runtime(&self->nl, RECOUNT_A_PID, w.tid, RECOUNT_RUNTIME_V1, &r));
	ASSERT_EQ(sizeof(v1), r.rec.runtime_struct_len);
	memcpy(&v1, r.rec.runtime_struct, sizeof(v1));
	ASSERT_EQ(0, rnl_get_runtime(&self->nl, RECOUNT_A_PID, w.tid, RECOUNT_RUNTIME_V2, &r));
	ASSERT_EQ(sizeof(v2), r.rec.runtime_struct_len);
	memcpy(&v2, r.rec.runtime_struct, sizeof(v2));
	ASSERT_EQ(0, rnl_get_runtime(&self->nl, RECOUNT_A_PID, w.tid, RECOUNT_RUNTIME_V3, &r));
	ASSERT_EQ(sizeof(v3), r.rec.runtime_struct_len);
	memcpy(&v3, r.rec.runtime_struct, sizeof(v3));
	worker_stop(&w);

	EXPECT_EQ(0, memcmp(&v1, &v2, sizeof(v1)));
	EXPECT_EQ(0, memcmp(&v2, &v3, sizeof(v2)));
	EXPECT_EQ(rest.runtime.cpu, v2.cpu_time);
	EXPECT_EQ(rest.runtime.queue, v2.queue_time);
	EXPECT_EQ(rest.runtime.fault, v2.page_fault_time);
	EXPECT_EQ(rest.runtime.lock, v2.lock_contention_time);
	EXPECT_EQ(rnl_cpu_time(&rest.usage), v2.cpu_time);
	EXPECT_GE(v2.cpu_time, w.worked - w.worked / 50);
	q = &rest.runtime.wait[RNL_QUEUE];
	f = &rest.runtime.wait[RNL_FAULT];
	l = &rest.runtime.wait[RNL_LOCK];
	EXPECT_EQ(q->count, v3.queue_count);
	EXPECT_EQ(q->max, v3.queue_max);
	EXPECT_EQ(q->max_time, v3.queue_max_time);
	EXPECT_EQ(f->count, v3.page_fault_count);
	EXPECT_EQ(f->max, v3.page_fault_max);
	EXPECT_EQ(f->max_time, v3.page_fault_max_time);
	EXPECT_EQ(l->count, v3.lock_contention_count);
	EXPECT_EQ(l->max, v3.lock_contention_max);
	EXPECT_EQ(l->max_time, v3.lock_contention_max_time);
	/* The worker woke up to run: a wait for a CPU, no longer than all. */
	EXPECT_GE(v3.queue_count, 1);
	EXPECT_LE(v3.queue_max, v3.queue_time);
	EXPECT_EQ(!v3.queue_max, !v3.queue_max_time);

	/* Without a version, no struct; the attributes are always there. */
	EXPECT_EQ(0, rest.runtime_struct_len);
	EXPECT_TRUE(rest.runtime.has);

	rnl_get_runtime(&self->nl, RECOUNT_A_TGID, getpid(), RECOUNT_RUNTIME_V1, &r);
	EXPECT_EQ(0, r.error);
	EXPECT_EQ(sizeof(v1), r.rec.runtime_struct_len);

	rnl_get_runtime(&self->nl, RECOUNT_A_PID, getpid(), RECOUNT_RUNTIME_VERSION + 1, &r);
	EXPECT_EQ(-EINVAL, r.error);
	EXPECT_NE(NULL, strstr(r.extack, "unknown runtime version"));
	snprintf(want, sizeof(want), "versions 1 to %d", RECOUNT_RUNTIME_VERSION);
	EXPECT_NE(NULL, strstr(r.extack, want)) TH_LOG("%s", r.extack);
	rnl_get_runtime(&self->nl, RECOUNT_A_PID, getpid(), 0, &r);
	EXPECT_EQ(-ERANGE, r.error);
	rnl_get_runtime(&self->nl, RECOUNT_A_CPU, 0, RECOUNT_RUNTIME_V1, &r);
	EXPECT_EQ(-EINVAL, r.error);
	EXPECT_NE(NULL, strstr(r.extack, "a CPU has no runtime"));
}

static void *fault_and_exit(void *p)
{
	work_touch(NULL);
	return NULL;
}

/* A process's runtime keeps its exited threads', and never decreases. */
TEST_F(recount, process_runtime_keeps_exited_threads)
{
	struct rnl_record before, after;
	struct uffd_server s;
	pthread_t thread;
	int err;

	err = uffd_start(&s, 2, 100 * MS);
	if (uffd_missing(err))
		SKIP(return, NO_UFFD);
	ASSERT_EQ(0, err) TH_LOG("userfaultfd setup: %s", strerror(-err));
	fault_server = &s;
	GET(RECOUNT_A_TGID, getpid(), &before);
	ASSERT_EQ(0, pthread_create(&thread, NULL, fault_and_exit, NULL));
	pthread_join(thread, NULL);
	uffd_stop(&s);
	GET(RECOUNT_A_TGID, getpid(), &after);

	EXPECT_HELD(after.runtime.fault - before.runtime.fault, 2 * 100 * MS);
	EXPECT_HELD(after.exited_runtime.fault - before.exited_runtime.fault, 2 * 100 * MS);
	EXPECT_GE(after.runtime.cpu, before.runtime.cpu);
	EXPECT_GE(after.runtime.queue, before.runtime.queue);
	EXPECT_GE(after.runtime.lock, before.runtime.lock);
	EXPECT_LE(after.exited_runtime.fault, after.runtime.fault);
}

/*
 * The audio mixer of Fuchsia's RFC-0084: a thread must do 2 ms of work in
 * each 10 ms period, released at absolute times (clock_nanosleep() with
 * TIMER_ABSTIME), for 50 periods; a period whose work ends past its
 * deadline, the next release, missed it, and the mixer skips to the next
 * release ahead. In period 20 its work touches a page whose fault a
 * userfaultfd handler holds 100 ms; in period 35 it writes to a pipe whose
 * mutex another thread holds through a fault of its own, which its handler
 * holds 20 ms from the moment the mixer blocks on the mutex; in period 40 a
 * fault held 2 ms, which misses nothing (on a slow kernel, the gap between
 * the two holds keeps the short one from passing for the longest). The
 * mixer sees the deadlines of periods 20 and 35 missed. Its record says
 * why, where totals could not: its longest page fault took at least the
 * 100 ms held (less 1% for the two clocks' rates) and ended in period 20,
 * after its handler let it go, not in period 40; its longest lock wait
 * took at least the 20 ms held, at most its write(), and ended in period
 * 35 after the holder's fault was let go; and it counted its faults, its
 * lock wait, and a wait for a CPU per wakeup from a sleep of more than a
 * millisecond.
 */
#define PERIODS		50
#define PERIOD		(10 * MS)
#define WORK		(2 * MS)
#define FAULT_PERIOD	20
#define FAULT_HELD	(100 * MS)
#define LOCK_PERIOD	35
#define LOCK_HELD	(20 * MS)
#define SHORT_PERIOD	40
#define SHORT_HELD	(2 * MS)

struct mixer_period {
	unsigned long long began, ended;	/* the work, by CLOCK_BOOTTIME */
	bool missed;
};

static struct timespec ns_to_ts(unsigned long long ns)
{
	return (struct timespec){ .tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC };
}

TEST_F(recount, deadline_misses_are_explained)
{
	unsigned long long release, write_began = 0, write_ended = 0;
	struct mixer_period p[PERIODS] = {};
	struct uffd_server fs, ls, ss;
	struct pipe_writer holder;
	const struct rnl_wait *f, *l, *q;
	int fds[2], i, err, sleeps = 0, missed = 0;
	struct rnl_record a, b;
	bool holding = false;
	pthread_t thread;

	err = uffd_start(&fs, 1, FAULT_HELD);
	if (uffd_missing(err))
		SKIP(return, NO_UFFD);
	ASSERT_EQ(0, err) TH_LOG("userfaultfd setup: %s", strerror(-err));
	err = uffd_start(&ls, 1, LOCK_HELD);
	ASSERT_EQ(0, err) TH_LOG("userfaultfd setup: %s", strerror(-err));
	err = uffd_start(&ss, 1, SHORT_HELD);
	ASSERT_EQ(0, err) TH_LOG("userfaultfd setup: %s", strerror(-err));
	__atomic_store_n(&ls.wait_for, sys_gettid(), __ATOMIC_RELEASE);
	ASSERT_EQ(0, pipe(fds));
	holder = (struct pipe_writer){ .fd = fds[1], .buf = ls.area, .len = ls.size };
	GET(RECOUNT_A_PID, sys_gettid(), &a);

	release = now_ns() + PERIOD;
	for (i = 0; i < PERIODS; i++) {
		struct timespec ts = ns_to_ts(release);

		/* A sleep of less than a millisecond may end before it blocks. */
		sleeps += now_ns() + MS < release;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		p[i].began = boot_ns();
		if (i == FAULT_PERIOD)
			fs.area[0] = 1;
		if (i == SHORT_PERIOD)
			ss.area[0] = 1;
		if (i == LOCK_PERIOD) {
			ASSERT_EQ(0, pthread_create(&thread, NULL, pipe_write_main, &holder));
			holding = true;
			ASSERT_TRUE(uffd_seen(&ls));
			write_began = boot_ns();
			ASSERT_EQ(1, write(fds[1], "m", 1));
			write_ended = boot_ns();
		}
		spin_user(WORK);
		p[i].ended = boot_ns();
		p[i].missed = now_ns() > release + PERIOD;
		missed += p[i].missed;
		release += PERIOD;
		while (release <= now_ns())
			release += PERIOD;
	}
	GET(RECOUNT_A_PID, sys_gettid(), &b);
	if (holding)
		pthread_join(thread, NULL);
	uffd_stop(&fs);
	uffd_stop(&ls);
	uffd_stop(&ss);
	close(fds[0]);
	close(fds[1]);

	f = &b.runtime.wait[RNL_FAULT];
	l = &b.runtime.wait[RNL_LOCK];
	q = &b.runtime.wait[RNL_QUEUE];
	TH_LOG("%d deadlines missed of %d; period %d took %llu ms, period %d %llu ms",
	       missed, PERIODS, FAULT_PERIOD,
	       (p[FAULT_PERIOD].ended - p[FAULT_PERIOD].began) / MS, LOCK_PERIOD,
	       (p[LOCK_PERIOD].ended - p[LOCK_PERIOD].began) / MS);
	TH_LOG("longest fault %llu us of %llu, lock wait %llu us of %llu (write() %llu us)",
	       f->max / 1000, f->count - a.runtime.wait[RNL_FAULT].count, l->max / 1000,
	       l->count - a.runtime.wait[RNL_LOCK].count, (write_ended - write_began) / 1000);
	TH_LOG("longest wait for a CPU %llu us of %llu, after %d sleeps", q->max / 1000,
	       q->count - a.runtime.wait[RNL_QUEUE].count, sleeps);
	/* The mixer itself saw the two deadlines missed. */
	EXPECT_TRUE(p[FAULT_PERIOD].missed);
	EXPECT_TRUE(p[LOCK_PERIOD].missed);
	EXPECT_EQ(1, fs.seen);
	EXPECT_EQ(1, ss.seen);
	EXPECT_TRUE(ls.blocked);

	/* The fault: what the handler held it, ended in period 20, not 40. */
	EXPECT_HELD(f->max, FAULT_HELD);
	EXPECT_LE(f->max, wall_bound(p[FAULT_PERIOD].ended - p[FAULT_PERIOD].began));
	EXPECT_ENDED_WITHIN(*f, fs.released_at, p[FAULT_PERIOD].ended);
	EXPECT_GE(f->max_time, p[FAULT_PERIOD].began);
	EXPECT_GE(f->count - a.runtime.wait[RNL_FAULT].count, 2);

	/* The lock wait: what the holder held it, within the write(). */
	EXPECT_HELD(l->max, LOCK_HELD);
	EXPECT_LE(l->max, wall_bound(write_ended - write_began));
	EXPECT_ENDED_WITHIN(*l, ls.released_at, write_ended);
	EXPECT_GE(l->max_time, p[LOCK_PERIOD].began);
	EXPECT_GE(l->count - a.runtime.wait[RNL_LOCK].count, 1);

	/* Each wakeup from a real sleep waited for a CPU, if only for a moment. */
	EXPECT_GE(q->count - a.runtime.wait[RNL_QUEUE].count, sleeps);
	EXPECT_LE(q->max, b.runtime.queue);
}

/*
 * A wait that straddles recount being switched off and on is not counted:
 * not its time, and not as the longest wait, which it would be: the
 * worker's other faults (its stack's, say) take microseconds. The handler
 * keeps the fault until recount is on again, however long switching it off
 * and on takes.
 */
TEST_F(recount, wait_across_off_is_not_counted)
{
	struct rnl_record a, b;
	struct uffd_server s;
	struct worker w;
	int err;

	if (recount_sysctl_get() < 0)
		SKIP(return, "no sysctl kernel.recount (CONFIG_RECOUNT=n)");
	err = uffd_start(&s, 1, 300 * MS);
	if (uffd_missing(err))
		SKIP(return, NO_UFFD);
	ASSERT_EQ(0, err) TH_LOG("userfaultfd setup: %s", strerror(-err));
	fault_server = &s;
	ASSERT_EQ(0, worker_start(&w, work_touch, 0, -1));
	AT_REST(w.tid, &a);
	__atomic_store_n(&s.hold, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(1, write(w.go[1], "r", 1));
	ASSERT_TRUE(uffd_seen(&s));
	ASSERT_EQ(0, recount_sysctl_set(0));
	ASSERT_EQ(0, recount_sysctl_set(1));
	__atomic_store_n(&s.hold, 0, __ATOMIC_RELEASE);
	ASSERT_EQ(1, read(w.done[0], &(char){ 0 }, 1));
	AT_REST(w.tid, &b);
	worker_stop(&w);
	uffd_stop(&s);

	TH_LOG("fault held 300 ms in %llu ms: page fault time +%llu ms, longest %llu ms",
	       touch_ns / MS, (b.runtime.fault - a.runtime.fault) / MS,
	       b.runtime.wait[RNL_FAULT].max / MS);
	EXPECT_GE(touch_ns, 300 * MS);
	EXPECT_LT(b.runtime.fault - a.runtime.fault, 10 * MS);
	EXPECT_LT(b.runtime.wait[RNL_FAULT].max, 10 * MS);
}

/* The CPU time of the calling process's reaped children, by getrusage(). */
static unsigned long long children_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

/* The process exit record of @tgid on @nl, waiting up to 5 s for it. */
static bool exit_record_of(struct rnl *nl, pid_t tgid, struct rnl_record *rec)
{
	unsigned long long end = now_ns() + 5 * NSEC_PER_SEC;

	while (now_ns() < end && rnl_next_exit(nl, rec, 500) >= 0)
		if (rec->tgid == (__u32)tgid && !rec->has_pid)
			return true;
	return false;
}

/*
 * A process's record carries its parent's tgid, and what its reaped children
 * did, theirs included, as getrusage(RUSAGE_CHILDREN) does: a child that
 * reaps a grandchild that ran 100 ms, then runs 100 ms itself, adds both,
 * with their waits, to its parent's children once its parent reaps it: not
 * while it runs, nor while it is a zombie. Its own record and its exit
 * record carry its children: the grandchild. The children are not a part
 * of the usage.
 */
TEST_F(recount, children_are_added_when_reaped)
{
	struct rnl_record before, alive, zombie, after, child, exit_rec;
	unsigned long long ru0, ru1, got;
	int ready[2], go[2], status, rcvbuf = 4 << 20;
	struct rnl listener;
	struct rnl_reply r;
	siginfo_t info;
	pid_t pid;

	ASSERT_EQ(0, rnl_open(&listener));
	setsockopt(listener.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	ASSERT_EQ(0, rnl_listen(&listener, true, every_cpu(), &r)) TH_LOG("%s", r.extack);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	GET(RECOUNT_A_TGID, getpid(), &before);
	ru0 = children_cpu_ns();
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		pid_t grandchild;

		close(ready[0]);
		close(go[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		grandchild = fork();
		if (!grandchild) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			spin_user_cpu(100 * MS);
			_exit(0);
		}
		if (grandchild < 0 || waitpid(grandchild, &status, 0) != grandchild)
			_exit(1);
		spin_user_cpu(100 * MS);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &status, 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &status, 1) != 1) {
		waitpid(pid, &status, 0);
		ASSERT_TRUE(false) TH_LOG("the child failed: status %#x", status);
	}
	GET(RECOUNT_A_TGID, pid, &child);
	GET(RECOUNT_A_TGID, getpid(), &alive);
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(0, waitid(P_PID, pid, &info, WEXITED | WNOWAIT));
	GET(RECOUNT_A_TGID, getpid(), &zombie);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	GET(RECOUNT_A_TGID, getpid(), &after);
	ru1 = children_cpu_ns();
	EXPECT_TRUE(exit_record_of(&listener, pid, &exit_rec));
	rnl_close(&listener);
	close(ready[0]);
	close(go[1]);

	/* The parents: ours, and the child's. */
	EXPECT_TRUE(before.has_parent_tgid);
	EXPECT_EQ(getppid(), before.parent_tgid);
	EXPECT_EQ(getpid(), child.parent_tgid);
	EXPECT_EQ(getpid(), exit_rec.parent_tgid);

	/* Nothing of the child before it is reaped. */
	ASSERT_TRUE(before.has_children);
	EXPECT_EQ(rnl_cpu_time(&before.children), rnl_cpu_time(&alive.children));
	EXPECT_EQ(rnl_cpu_time(&before.children), rnl_cpu_time(&zombie.children));
	EXPECT_EQ(before.children_runtime.wait[RNL_QUEUE].count,
		  zombie.children_runtime.wait[RNL_QUEUE].count);
	EXPECT_EQ(before.children_runtime.wait[RNL_FAULT].count,
		  zombie.children_runtime.wait[RNL_FAULT].count);

	/* The child's record had its reaped grandchild: 100 ms of CPU, and waits. */
	EXPECT_TRUE(child.has_children);
	EXPECT_GE(rnl_cpu_time(&child.children), 95 * MS);
	EXPECT_GE(child.children_runtime.wait[RNL_QUEUE].count, 1);
	EXPECT_GE(child.children_runtime.wait[RNL_FAULT].count, 1);
	EXPECT_TRUE(exit_rec.has_children);
	EXPECT_EQ(rnl_cpu_time(&child.children), rnl_cpu_time(&exit_rec.children));

	/*
	 * Once reaped, both: at least what the child's exit record said of it
	 * and of its children, and as getrusage() counts them. That is the
	 * children's sum_exec_runtime, which gives a thread woken on an idle
	 * CPU the time from its wakeup to its switch, whatever the CPU does
	 * meanwhile on its way out of idle (softirqs included), which recount
	 * charges to the CPU: up to milliseconds on a debug kernel under
	 * emulation (8.7 of 263 in one run). Within 2% and 2 ms above, 5% and
	 * 5 ms below.
	 */
	got = rnl_cpu_time(&after.children) - rnl_cpu_time(&before.children);
	TH_LOG("children: %llu us by recount, %llu us by getrusage()", got / 1000,
	       (ru1 - ru0) / 1000);
	EXPECT_GE(got, rnl_cpu_time(&child.children) + 95 * MS);
	EXPECT_GE(got, rnl_cpu_time(&exit_rec.usage) + rnl_cpu_time(&exit_rec.children));
	EXPECT_GE(got + (ru1 - ru0) / 20 + 5 * MS, ru1 - ru0);
	EXPECT_LE(got, ru1 - ru0 + (ru1 - ru0) / 50 + 2 * MS);
	EXPECT_GE(after.children_runtime.wait[RNL_QUEUE].count -
		  before.children_runtime.wait[RNL_QUEUE].count, 2);
	EXPECT_GE(after.children_runtime.wait[RNL_FAULT].count -
		  before.children_runtime.wait[RNL_FAULT].count,
		  child.children_runtime.wait[RNL_FAULT].count + 1);
	EXPECT_EQ(after.children_runtime.cpu - before.children_runtime.cpu, got);

	/* And not a part of our usage: we slept meanwhile. */
	EXPECT_LT(rnl_cpu_time(&after.usage) - rnl_cpu_time(&before.usage), got / 2);
}

#define TEARDOWN_CHILDREN	16
#define TEARDOWN_BYTES		(64 << 20)

/*
 * A parent's children include each reaped child's exit: what the child ran
 * from its last thread's leaving to becoming a zombie, exit_mm() and the
 * rest of the teardown. Children that share 64 MiB of their parent's
 * memory, copy-on-write, and exit at once on a nohz_full CPU, where no tick
 * folds the teardown (unmapping it is most of their time), are reaped the
 * moment they are zombies by a parent that polls from another CPU: their
 * time in its children is at least 97% of what their CPU was busy with
 * meanwhile, less a millisecond (the CPU's own interrupts and kernel
 * threads, and each child's exit_notify() and switch out, are not the
 * children's; what each ran on the parent's CPU before it moved is, which
 * the CPU's time lacks). Without their exits, the children have a small
 * part of it.
 */
TEST_F(recount, reaped_children_include_their_exit)
{
	int cpu = nohz_full_cpu(0), i, status;
	struct rnl_record p0, p1, c0, c1;
	unsigned long long children, busy;
	pid_t pid, got;
	char *mem;

	if (cpu < 0)
		SKIP(return, "no nohz_full CPU (boot with nohz_full=, CONFIG_NO_HZ_FULL)");
	ASSERT_EQ(0, pin_self(0));
	mem = mmap(NULL, TEARDOWN_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	/* Small pages: a page table entry each to tear down. */
	madvise(mem, TEARDOWN_BYTES, MADV_NOHUGEPAGE);
	memset(mem, 1, TEARDOWN_BYTES);
	GET(RECOUNT_A_TGID, getpid(), &p0);
	GET(RECOUNT_A_CPU, cpu, &c0);
	for (i = 0; i < TEARDOWN_CHILDREN; i++) {
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid)
			_exit(pin_self(cpu) ? 1 : 0);
		/* Poll rather than sleep: reap it the moment it is a zombie. */
		do {
			got = waitpid(pid, &status, WNOHANG);
		} while (!got);
		ASSERT_EQ(pid, got);
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	/* The last child's last context switch, and the CPU idle again. */
	usleep(100 * 1000);
	GET(RECOUNT_A_TGID, getpid(), &p1);
	GET(RECOUNT_A_CPU, cpu, &c1);
	munmap(mem, TEARDOWN_BYTES);
	children = rnl_cpu_time(&p1.children) - rnl_cpu_time(&p0.children);
	busy = rnl_cpu_time(&c1.usage) - rnl_cpu_time(&c0.usage);
	TH_LOG("children %llu us, CPU %d busy %llu us", children / 1000, cpu, busy / 1000);
	ASSERT_GT(busy, 0);
	EXPECT_GE(children + MS, busy / 100 * 97);
}

TEST_HARNESS_MAIN
