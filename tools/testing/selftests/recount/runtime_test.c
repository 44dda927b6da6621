// SPDX-License-Identifier: GPL-2.0
/*
 * recount: task runtime info, why a thread was not running.
 *
 * Each test forces one cause of waiting from user space and checks that the
 * matching time grows by what was forced: page faults held up by a
 * userfaultfd handler, a pipe's mutex held by a writer stuck in such a fault,
 * two threads sharing one CPU; a free mutex is no contention. And the
 * versioned struct recount_task_runtime gives every client exactly the
 * layout it asked for.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <poll.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <linux/userfaultfd.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"

#define MS NSEC_PER_MSEC

/* The ABI: sizes and offsets of every version, at build time and run time. */
static_assert(sizeof(struct recount_task_runtime_v1) == 16, "v1 is 16 bytes");
static_assert(sizeof(struct recount_task_runtime) == 32, "v2 is 32 bytes");
static_assert(offsetof(struct recount_task_runtime, queue_time) ==
	      offsetof(struct recount_task_runtime_v1, queue_time), "v2 begins with v1");

TEST(abi)
{
	EXPECT_EQ(1, RECOUNT_RUNTIME_V1);
	EXPECT_EQ(2, RECOUNT_RUNTIME_V2);
	EXPECT_EQ(RECOUNT_RUNTIME_V2, RECOUNT_RUNTIME_VERSION);
	EXPECT_EQ(16, sizeof(struct recount_task_runtime_v1));
	EXPECT_EQ(0, offsetof(struct recount_task_runtime_v1, cpu_time));
	EXPECT_EQ(8, offsetof(struct recount_task_runtime_v1, queue_time));
	EXPECT_EQ(32, sizeof(struct recount_task_runtime));
	EXPECT_EQ(0, offsetof(struct recount_task_runtime, cpu_time));
	EXPECT_EQ(8, offsetof(struct recount_task_runtime, queue_time));
	EXPECT_EQ(16, offsetof(struct recount_task_runtime, page_fault_time));
	EXPECT_EQ(24, offsetof(struct recount_task_runtime, lock_contention_time));
}

/* A userfaultfd whose handler resolves each fault after @delay. */
struct uffd_server {
	int uffd;
	char *area;
	size_t size;
	unsigned long long delay;
	int stop;		/* set with __atomic builtins, the handler polls it */
	int seen;		/* faults read, set with __atomic builtins */
	int handled;		/* read once the handler is joined */
	pthread_t thread;
};

static void *uffd_handler(void *p)
{
	struct uffd_server *s = p;
	long page_size = sysconf(_SC_PAGESIZE);
	char *page = malloc(page_size);

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
		sleep_ns(s->delay);
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

static struct uffd_server *fault_server;
static unsigned long long touch_ns;

/* Touch every page of the userfaultfd area: one fault each, timed. */
static void work_touch(struct worker *w)
{
	long page_size = sysconf(_SC_PAGESIZE);
	unsigned long long start = now_ns();
	size_t off;

	for (off = 0; off < fault_server->size; off += page_size)
		fault_server->area[off] = 1;
	touch_ns = now_ns() - start;
}

/*
 * Each fault the handler holds up for D adds at least D; and the faults are
 * all of the time the touching took, as the toucher timed it, but a few steps.
 */
TEST_F(recount, page_fault_time_is_the_fault_delay)
{
	struct rnl_record a, b;
	struct uffd_server s;
	__u64 fault, lock;
	struct worker w;
	int err;

	err = uffd_start(&s, 3, 200 * MS);
	if (err == -ENOSYS)
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
	TH_LOG("3 faults held 200 ms each, in %llu ms: page fault time %llu ms",
	       touch_ns / MS, fault / MS);
	EXPECT_EQ(3, s.handled);
	EXPECT_GE(fault, 3 * 200 * MS);
	EXPECT_LE(fault, wall_bound(touch_ns));
	EXPECT_GE(fault, touch_ns - 10 * MS);
	EXPECT_EQ(0, lock);
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
 * pipe's mutex for the 300 ms the handler delays the fault. Once the handler
 * has the fault, a second writer writes: it waits for the mutex for most of
 * what remains, and its lock contention time is that write() as it timed it,
 * less only the few steps of the system call around the wait.
 */
TEST_F(recount, lock_contention_time_is_the_mutex_wait)
{
	struct pipe_writer holder;
	struct rnl_record a, b;
	struct uffd_server s;
	pthread_t thread;
	int fds[2], err;
	struct worker w;
	__u64 lock;

	err = uffd_start(&s, 1, 300 * MS);
	if (err == -ENOSYS)
		SKIP(return, NO_UFFD);
	ASSERT_EQ(0, err) TH_LOG("userfaultfd setup: %s", strerror(-err));
	ASSERT_EQ(0, pipe(fds));
	contended_pipe = fds[1];
	ASSERT_EQ(0, worker_start(&w, work_pipe_write, 0, -1));
	AT_REST(w.tid, &a);

	holder = (struct pipe_writer){ .fd = fds[1], .buf = s.area, .len = s.size };
	ASSERT_EQ(0, pthread_create(&thread, NULL, pipe_write_main, &holder));
	while (!__atomic_load_n(&s.seen, __ATOMIC_ACQUIRE))
		sleep_ns(MS);
	ASSERT_EQ(0, worker_run(&w));
	AT_REST(w.tid, &b);
	pthread_join(thread, NULL);
	worker_stop(&w);
	uffd_stop(&s);
	close(fds[0]);
	close(fds[1]);

	EXPECT_EQ((ssize_t)s.size, holder.ret);
	lock = b.runtime.lock - a.runtime.lock;
	TH_LOG("write() blocked %llu ms: lock contention time %llu ms",
	       contended_write_ns / MS, lock / MS);
	/* The holder kept the mutex for most of its 300 ms fault after that. */
	ASSERT_GE(contended_write_ns, 150 * MS);
	/* The wait is inside the write(), and is all of it but a few steps. */
	EXPECT_LE(lock, wall_bound(contended_write_ns));
	EXPECT_GE(lock, contended_write_ns - 10 * MS);
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
 * wakeup to its first run, within 15%. (A wakeup queued to an idle CPU
 * waits for it to take the IPI before it is runnable: that is not queue
 * time, under TCG it took 100 ms.) A thread alone on a CPU gains less than
 * 10% of T.
 */
TEST_F(recount, queue_time_follows_cpu_sharing)
{
	const unsigned long long T = 800 * MS;
	int ncpu = get_nprocs(), shared = ncpu - 1, alone = ncpu > 2 ? ncpu - 2 : 0;
	unsigned long long woken[3];
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
		worker_stop(&w[i]);
		queue = b[i].runtime.queue - a[i].runtime.queue;
		cpu = b[i].runtime.cpu - a[i].runtime.cpu;
		share = w[i].ended - w[i].began - w[i].worked;
		most = w[i].ended - woken[i] - w[i].worked;
		TH_LOG("thread %d (cpu %d), ms: queue %llu, cpu %llu, ran %llu of %llu, %llu late",
		       i, i < 2 ? shared : alone, queue / MS, cpu / MS, w[i].worked / MS,
		       (w[i].ended - w[i].began) / MS, (w[i].began - woken[i]) / MS);
		if (i < 2) {
			EXPECT_GE(share, T / 4);
			EXPECT_GE(queue, share - share * 15 / 100);
			EXPECT_LE(queue, most + most * 15 / 100);
		} else {
			EXPECT_LT(queue, T / 10);
		}
	}
}

/*
 * Version 1 and 2 of the struct, asked by the same process, agree on their
 * common prefix and with the attributes; each is exactly its size; a version
 * the kernel does not know is an error.
 */
TEST_F(recount, versions_give_their_layout)
{
	struct recount_task_runtime_v1 v1;
	struct recount_task_runtime v2;
	struct rnl_record rest;
	struct rnl_reply r;
	struct worker w;

	ASSERT_EQ(0, worker_start(&w, work_spin_user, 50 * MS, -1));
	ASSERT_EQ(0, worker_run(&w));
	AT_REST(w.tid, &rest);

	ASSERT_EQ(0, rnl_get_runtime(&self->nl, RECOUNT_A_PID, w.tid, RECOUNT_RUNTIME_V1, &r));
	ASSERT_EQ(sizeof(v1), r.rec.runtime_struct_len);
	memcpy(&v1, r.rec.runtime_struct, sizeof(v1));
	ASSERT_EQ(0, rnl_get_runtime(&self->nl, RECOUNT_A_PID, w.tid, RECOUNT_RUNTIME_V2, &r));
	ASSERT_EQ(sizeof(v2), r.rec.runtime_struct_len);
	memcpy(&v2, r.rec.runtime_struct, sizeof(v2));
	worker_stop(&w);

	EXPECT_EQ(0, memcmp(&v1, &v2, sizeof(v1)));
	EXPECT_EQ(rest.runtime.cpu, v2.cpu_time);
	EXPECT_EQ(rest.runtime.queue, v2.queue_time);
	EXPECT_EQ(rest.runtime.fault, v2.page_fault_time);
	EXPECT_EQ(rest.runtime.lock, v2.lock_contention_time);
	EXPECT_EQ(rnl_cpu_time(&rest.usage), v2.cpu_time);
	EXPECT_GE(v2.cpu_time, 40 * MS);

	/* Without a version, no struct; the attributes are always there. */
	EXPECT_EQ(0, rest.runtime_struct_len);
	EXPECT_TRUE(rest.runtime.has);

	rnl_get_runtime(&self->nl, RECOUNT_A_TGID, getpid(), RECOUNT_RUNTIME_V1, &r);
	EXPECT_EQ(0, r.error);
	EXPECT_EQ(sizeof(v1), r.rec.runtime_struct_len);

	rnl_get_runtime(&self->nl, RECOUNT_A_PID, getpid(), RECOUNT_RUNTIME_VERSION + 1, &r);
	EXPECT_EQ(-EINVAL, r.error);
	EXPECT_NE(NULL, strstr(r.extack, "unknown runtime version"));
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
	if (err == -ENOSYS)
		SKIP(return, NO_UFFD);
	ASSERT_EQ(0, err) TH_LOG("userfaultfd setup: %s", strerror(-err));
	fault_server = &s;
	GET(RECOUNT_A_TGID, getpid(), &before);
	ASSERT_EQ(0, pthread_create(&thread, NULL, fault_and_exit, NULL));
	pthread_join(thread, NULL);
	uffd_stop(&s);
	GET(RECOUNT_A_TGID, getpid(), &after);

	EXPECT_GE(after.runtime.fault - before.runtime.fault, 2 * 100 * MS);
	EXPECT_GE(after.exited_runtime.fault - before.exited_runtime.fault, 2 * 100 * MS);
	EXPECT_GE(after.runtime.cpu, before.runtime.cpu);
	EXPECT_GE(after.runtime.queue, before.runtime.queue);
	EXPECT_GE(after.runtime.lock, before.runtime.lock);
	EXPECT_LE(after.exited_runtime.fault, after.runtime.fault);
}

TEST_HARNESS_MAIN
