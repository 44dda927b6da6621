// SPDX-License-Identifier: GPL-2.0
/*
 * recount: exit records, sent to the sockets that listen for them.
 *
 * A listener gets one record per exiting thread and one per process, with
 * values at least those last read before the exit; only for the CPUs it
 * registered; only for tasks it may read, with their pids in its pid
 * namespace; and never loses a record without saying so.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"
#include "recount_check.h"

/* What each thread of the child read of itself last, before exiting. */
struct last_read {
	pid_t tid;
	__u64 user, kernel, queue;
};

#define THREADS 3

static struct last_read *shared;
/* When each thread of the child began its exit, CLOCK_MONOTONIC. */
static unsigned long long *exit_began;

static void *read_then_exit(void *p)
{
	struct last_read *lr = p;
	struct rnl_reply r;
	struct rnl nl;

	spin_user(20 * NSEC_PER_MSEC);
	lr->tid = sys_gettid();
	if (rnl_open(&nl) || rnl_get(&nl, RECOUNT_A_PID, lr->tid, &r))
		abort();
	lr->user = r.rec.usage.user;
	lr->kernel = r.rec.usage.kernel;
	lr->queue = r.rec.runtime.queue;
	rnl_close(&nl);
	exit_began[lr - shared] = now_ns();
	return NULL;
}

/*
 * A listener of every CPU gets one record per thread of an exiting process,
 * and one for the process, each at least what the thread last read of
 * itself before it exited. The process's record is its threads': their user
 * time exactly (a thread's ends before do_exit() takes its record), the rest
 * at least theirs, and its kernel time at most theirs plus what each ran of
 * its exit after its record: 5 ms a thread, or on a debug kernel, which
 * under TCG runs the rest of do_exit() for longer, no more than the time
 * from its exit's start to the child's reaping.
 */
TEST_F(recount, records_for_every_thread_and_the_process)
{
	int threads = 0, processes = 0, matched = 0, i;
	struct rnl_usage sum = {};
	struct rnl_runtime waits = {};
	struct rnl_record rec, proc = {};
	struct rnl_reply r;
	pthread_t th[THREADS];
	struct rnl listener;
	unsigned long long reaped, after = 0;
	pid_t child;

	exit_began = mmap(NULL, sizeof(*exit_began) * (THREADS + 1), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, exit_began);
	shared = mmap(NULL, sizeof(*shared) * (THREADS + 1), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	ASSERT_EQ(0, rnl_open(&listener));
	ASSERT_EQ(0, rnl_listen(&listener, true, every_cpu(), &r)) TH_LOG("%s", r.extack);

	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		for (i = 0; i < THREADS; i++)
			if (pthread_create(&th[i], NULL, read_then_exit, &shared[i]))
				_exit(1);
		for (i = 0; i < THREADS; i++)
			pthread_join(th[i], NULL);
		read_then_exit(&shared[THREADS]);
		_exit(7);
	}
	ASSERT_EQ(child, waitpid(child, &i, 0));
	reaped = now_ns();
	for (i = 0; i <= THREADS; i++) {
		ASSERT_NE(0, exit_began[i]);
		after += reaped - exit_began[i];
	}

	/* do_exit() sends the records before the parent can reap the child. */
	while (rnl_next_exit(&listener, &rec, 500) == 1) {
		if (rec.tgid != (__u32)child)
			continue;
		ASSERT_TRUE(rec.has_exit);
		EXPECT_GT(rec.exit_time, 0);
		if (!rec.has_pid) {
			processes++;
			proc = rec;
			EXPECT_EQ(7 << 8, rec.exit_code);
			EXPECT_TRUE(rec.has_exited);
			continue;
		}
		threads++;
		rnl_usage_add(&sum, &rec.usage);
		waits.queue += rec.runtime.queue;
		waits.fault += rec.runtime.fault;
		waits.lock += rec.runtime.lock;
		for (i = 0; i <= THREADS; i++) {
			if (shared[i].tid != (pid_t)rec.pid)
				continue;
			matched++;
			EXPECT_GE(rec.usage.user, shared[i].user);
			EXPECT_GE(rec.usage.kernel, shared[i].kernel);
			EXPECT_GE(rec.runtime.queue, shared[i].queue);
		}
	}
	rnl_close(&listener);
	EXPECT_EQ(THREADS + 1, threads);
	EXPECT_EQ(THREADS + 1, matched);
	EXPECT_EQ(1, processes);

	TH_LOG("process: user %llu us, kernel %llu us; its threads' records: %llu us, %llu us",
	       proc.usage.user / 1000, proc.usage.kernel / 1000, sum.user / 1000,
	       sum.kernel / 1000);
	EXPECT_EQ(sum.user, proc.usage.user);
	EXPECT_HOLDS(rnl_usage_exceeds(&sum, &proc.usage));
	/*
	 * At most 5 ms a thread; a kernel with lockdep (the debug kernel, with
	 * KASAN and kmemleak) takes longer, bounded there by wall time.
	 */
	if (access("/proc/lockdep", F_OK)) {
		EXPECT_LE(proc.usage.kernel, sum.kernel + (THREADS + 1) * 5 * NSEC_PER_MSEC);
	} else {
		EXPECT_LE(proc.usage.kernel, sum.kernel + after)
			TH_LOG("the threads' exits began %llu us before the reaping, together",
			       after / 1000);
	}
	EXPECT_GE(proc.runtime.queue, waits.queue);
	EXPECT_GE(proc.runtime.fault, waits.fault);
	EXPECT_GE(proc.runtime.lock, waits.lock);
}

static void *exit_on(void *p)
{
	pin_self((long)p);
	*(pid_t *)&shared[(long)p].tid = sys_gettid();
	return NULL;
}

/* A listener of CPU 1 never sees an exit on CPU 0, and sees those on CPU 1. */
TEST_F(recount, cpumask_selects_cpus)
{
	int on0 = 0, on1 = 0, round, cpu;
	struct rnl_record rec;
	struct rnl_reply r;
	struct rnl listener;
	pthread_t th;
	pid_t tids[2][10];

	if (get_nprocs() < 2)
		SKIP(return, "needs two CPUs");
	shared = mmap(NULL, sizeof(*shared) * 2, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	ASSERT_EQ(0, rnl_open(&listener));
	ASSERT_EQ(0, rnl_listen(&listener, true, "1", &r)) TH_LOG("%s", r.extack);
	for (round = 0; round < 10; round++) {
		for (cpu = 0; cpu < 2; cpu++) {
			ASSERT_EQ(0, pthread_create(&th, NULL, exit_on, (void *)(long)cpu));
			pthread_join(th, NULL);
			tids[cpu][round] = shared[cpu].tid;
		}
	}
	while (rnl_next_exit(&listener, &rec, 500) == 1) {
		for (round = 0; round < 10; round++) {
			on0 += rec.pid == (__u32)tids[0][round];
			on1 += rec.pid == (__u32)tids[1][round];
		}
	}
	rnl_close(&listener);
	EXPECT_EQ(0, on0);
	EXPECT_EQ(10, on1);
}

/* A socket that closes without deregistering leaves no listener behind. */
TEST_F(recount, closing_ends_the_registration)
{
	struct rnl_reply r;
	struct rnl listener;
	__u32 before;

	ASSERT_EQ(0, rnl_get_info(&self->nl, &r));
	before = r.rec.listeners;
	ASSERT_EQ(0, rnl_open(&listener));
	ASSERT_EQ(0, rnl_listen(&listener, true, "0", &r));
	ASSERT_EQ(0, rnl_listen(&listener, true, every_cpu(), &r));
	ASSERT_EQ(0, rnl_get_info(&self->nl, &r));
	EXPECT_EQ(before + 1, r.rec.listeners);
	rnl_close(&listener);
	ASSERT_EQ(0, rnl_get_info(&self->nl, &r));
	EXPECT_EQ(before, r.rec.listeners);

	/* Deregistering every CPU ends it too. */
	ASSERT_EQ(0, rnl_open(&listener));
	ASSERT_EQ(0, rnl_listen(&listener, true, "0", &r));
	ASSERT_EQ(0, rnl_listen(&listener, false, "0", &r));
	ASSERT_EQ(0, rnl_get_info(&self->nl, &r));
	EXPECT_EQ(before, r.rec.listeners);
	rnl_close(&listener);
}

/*
 * get-info counts the listeners of the caller's network namespace: one in
 * a new namespace is counted there, and not outside. As the child in the
 * new namespace: 0, or the step that failed.
 */
static int listen_in_new_netns(const int ready[2], const int done[2], pid_t parent)
{
	struct rnl_reply r;
	struct rnl nl, l;
	char c;

	/* Never outlive the test: a test killed mid-way would leave it blocked. */
	close(ready[0]);
	close(done[1]);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent || unshare(CLONE_NEWNET))
		return 1;
	if (rnl_open(&nl) || rnl_get_info(&nl, &r) || r.rec.listeners != 0)
		return 2;
	if (rnl_open(&l) || rnl_listen(&l, true, "0", &r))
		return 3;
	if (rnl_get_info(&nl, &r) || r.rec.listeners != 1)
		return 4;
	if (write(ready[1], "r", 1) != 1 || read(done[0], &c, 1) != 1)
		return 5;
	return 0;
}

TEST_F(recount, listeners_counted_per_network_namespace)
{
	int ready[2], done[2], status;
	pid_t pid, test = getpid();
	struct rnl_reply r;
	__u32 before;
	char c;

	ASSERT_EQ(0, rnl_get_info(&self->nl, &r));
	before = r.rec.listeners;
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(listen_in_new_netns(ready, done, test));
	close(ready[1]);
	close(done[0]);
	if (read(ready[0], &c, 1) == 1) {
		EXPECT_EQ(0, rnl_get_info(&self->nl, &r));
		EXPECT_EQ(before, r.rec.listeners);
		EXPECT_EQ(1, write(done[1], "d", 1));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/*
	 * 1: unshare (or the test's end), 2: a listener there already,
	 * 3: registering, 4: not counted there
	 */
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the child in a new network namespace failed, status %#x", status);
}

static void *nothing(void *p)
{
	return p;
}

/* The port id of a bound netlink socket, 0 if it has none. */
static __u32 port_of(int fd)
{
	struct sockaddr_nl a = {};
	socklen_t len = sizeof(a);

	return getsockname(fd, (struct sockaddr *)&a, &len) ? 0 : a.nl_pid;
}

struct port_taker {
	__u32 port;
	int fd;
	bool trying;	/* set as it first tries */
	int records;	/* received; -1 if the port never came free */
};

/*
 * Bind a new socket to @arg's port as soon as it is free, then count the
 * messages it receives over 20 ms.
 */
static void *take_port(void *arg)
{
	struct port_taker *pt = arg;
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_pid = pt->port };
	unsigned long long end = now_ns() + 5 * NSEC_PER_SEC;
	struct pollfd pfd;
	char buf[8192];

	pt->records = -1;
	while (bind(pt->fd, (struct sockaddr *)&a, sizeof(a))) {
		__atomic_store_n(&pt->trying, true, __ATOMIC_RELEASE);
		if (errno != EADDRINUSE || now_ns() > end)
			return NULL;
	}
	__atomic_store_n(&pt->trying, true, __ATOMIC_RELEASE);
	pt->records = 0;
	pfd = (struct pollfd){ .fd = pt->fd, .events = POLLIN };
	while (poll(&pfd, 1, 20) == 1 && recv(pt->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		pt->records++;
	return NULL;
}

#define PORT_ROUNDS	50
#define PORT_STORMERS	3

/*
 * A closing socket frees its port id before its registration ends
 * (netlink_release() removes it, then genl_release() ends the listener):
 * a socket that binds the port in between must get none of the listener's
 * records. Threads exit on every CPU while a root listener of every CPU
 * closes and another socket binds its port the moment it is free, 50
 * times: the other socket receives nothing.
 */
TEST_F_TIMEOUT(recount, records_go_to_the_listener_not_to_its_port, 180)
{
	unsigned long long start = now_ns();
	int i, s, leaked = 0, status, rcvbuf = 8 << 20;
	pid_t storm[PORT_STORMERS], test = getpid();
	struct port_taker pt;
	struct rnl_reply r;
	struct rnl listener;
	pthread_t th;

	for (s = 0; s < PORT_STORMERS; s++) {
		storm[s] = fork();
		ASSERT_GE(storm[s], 0);
		if (!storm[s]) {
			/* Never outlive the test, also if it ended before this. */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != test)
				_exit(1);
			for (;;) {
				if (pthread_create(&th, NULL, nothing, NULL))
					_exit(1);
				pthread_join(th, NULL);
			}
		}
	}
	for (i = 0; i < PORT_ROUNDS; i++) {
		ASSERT_EQ(0, rnl_open(&listener));
		/*
		 * Room for the records that come before the registration's
		 * acknowledgment, which a full buffer would drop.
		 */
		setsockopt(listener.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
		ASSERT_EQ(0, rnl_listen(&listener, true, every_cpu(), &r)) TH_LOG("%s", r.extack);
		pt.port = port_of(listener.fd);
		ASSERT_NE(0, pt.port);
		pt.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
		ASSERT_LE(0, pt.fd);
		pt.trying = false;
		ASSERT_EQ(0, pthread_create(&th, NULL, take_port, &pt));
		while (!__atomic_load_n(&pt.trying, __ATOMIC_ACQUIRE))
			sched_yield();
		rnl_close(&listener);
		pthread_join(th, NULL);
		close(pt.fd);
		ASSERT_LE(0, pt.records) TH_LOG("round %d: the port never came free", i);
		if (pt.records)
			TH_LOG("round %d: %d records went to the port's new socket", i, pt.records);
		leaked += pt.records;
	}
	for (s = 0; s < PORT_STORMERS; s++) {
		kill(storm[s], SIGKILL);
		waitpid(storm[s], &status, 0);
	}
	TH_LOG("%d rounds in %llu ms", PORT_ROUNDS, (now_ns() - start) / 1000000);
	EXPECT_EQ(0, leaked);
}

#define STORM_THREADS	2000
#define STORM_PROCS	200

/*
 * An exit storm: thousands of threads and processes exit while an
 * unprivileged listener, its receive buffer tiny, reads slowly. Every
 * record due to it (one per thread, two per process: the workload's own
 * tasks, all it may read) is received or counted in a missed attribute.
 * The storm takes 0.13 s on a normal arm64 kernel under TCG and 25 to 40 s
 * on a debug x86 one (lockdep, KASAN, kmemleak; there a loop of 2,000
 * threads took 16 to 29 s with recount off, 21 to 29 s on): its time limit
 * is not the harness's default of 30 s. Its length is logged.
 */
TEST_F_TIMEOUT(recount, exit_storm_loses_nothing_silently, 300)
{
	int to_listener[2], from_listener[2], status, i;
	unsigned long long t0;
	pid_t listener, workload;
	long got[2];

	ASSERT_EQ(0, pipe(to_listener));
	ASSERT_EQ(0, pipe(from_listener));
	listener = fork();
	ASSERT_GE(listener, 0);
	if (listener == 0) {
		long received = 0, missed = 0, rcvbuf = 1;
		struct rnl_record rec;
		struct rnl_reply r;
		struct rnl nl;
		pthread_t th;
		pid_t last;
		ssize_t n;
		char c;

		/* Never outlive the test as nobody: a listener of nobody's counts. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1 ||
		    become_nobody() || rnl_open(&nl) ||
		    setsockopt(nl.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
		    rnl_listen(&nl, true, every_cpu(), &r) || write(from_listener[1], "r", 1) != 1)
			_exit(1);
		/*
		 * Slowly, until the workload is gone (or the test, then so do
		 * we): a record every 50 ms, which no kernel's storm is as
		 * slow as (a debug kernel under TCG takes 10 ms an exit).
		 */
		fcntl(to_listener[0], F_SETFL, O_NONBLOCK);
		while ((n = read(to_listener[0], &c, 1)) != 1) {
			if (n == 0)
				_exit(4);
			if (rnl_next_exit(&nl, &rec, 10) == 1) {
				received++;
				missed += rec.missed;
			}
			usleep(50000);
		}
		while (rnl_next_exit(&nl, &rec, 200) == 1) {
			received++;
			missed += rec.missed;
		}
		/* One more exit of our own brings what was missed at the end. */
		if (pthread_create(&th, NULL, nothing, NULL))
			_exit(2);
		pthread_join(th, NULL);
		last = 0;
		while (rnl_next_exit(&nl, &rec, 500) == 1) {
			missed += rec.missed;
			if (rec.tgid == (__u32)getpid()) {
				last = rec.pid;
				break;
			}
			received++;
		}
		got[0] = received;
		got[1] = missed;
		if (!last || write(from_listener[1], got, sizeof(got)) != sizeof(got))
			_exit(3);
		_exit(0);
	}
	/* Without these, a listener that died would leave the reads below blocked. */
	close(from_listener[1]);
	close(to_listener[0]);
	ASSERT_EQ(1, read(from_listener[0], &(char){ 0 }, 1));

	t0 = now_ns();
	workload = fork();
	ASSERT_GE(workload, 0);
	if (workload == 0) {
		pthread_t th;

		if (become_nobody())
			_exit(1);
		for (i = 0; i < STORM_THREADS; i++) {
			if (pthread_create(&th, NULL, nothing, NULL))
				_exit(2);
			pthread_join(th, NULL);
		}
		for (i = 0; i < STORM_PROCS; i++) {
			pid_t p = fork();

			if (p < 0)
				_exit(3);
			if (p == 0)
				_exit(0);
			waitpid(p, NULL, 0);
		}
		_exit(0);
	}
	ASSERT_EQ(workload, waitpid(workload, &status, 0));
	TH_LOG("the storm took %llu ms", (now_ns() - t0) / NSEC_PER_MSEC);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(1, write(to_listener[1], "d", 1));
	i = read(from_listener[0], got, sizeof(got));
	ASSERT_EQ(listener, waitpid(listener, &status, 0));
	/* 1: registering, 2: its last thread, 3: its last record never came, 4: EOF */
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the listener failed, status %#x", status);
	ASSERT_EQ(sizeof(got), i);

	TH_LOG("%d exits due: %ld records received, %ld missed and said so",
	       STORM_THREADS + 2 * STORM_PROCS + 2, got[0], got[1]);
	EXPECT_EQ(STORM_THREADS + 2 * STORM_PROCS + 2, got[0] + got[1]);
	/* The buffer was tiny: some were missed, or the test proves little. */
	EXPECT_GT(got[1], 0);
}

static struct sock_filter drop_all = BPF_STMT(BPF_RET | BPF_K, 0);
static const struct sock_fprog drop_all_prog = { .len = 1, .filter = &drop_all };

/* Attach a filter that drops every message to @fd, or detach it. */
static int drop_all_on(int fd, bool on)
{
	if (on)
		return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &drop_all_prog,
				  sizeof(drop_all_prog));
	return setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &(int){ 0 }, sizeof(int));
}

/* Have @n threads exit, one after another: 0, or -1 if one did not start. */
static int threads_exit(int n)
{
	pthread_t th;

	while (n--) {
		if (pthread_create(&th, NULL, nothing, NULL))
			return -1;
		pthread_join(th, NULL);
	}
	return 0;
}

/*
 * Read exit records until none comes for @ms: add those of this test's
 * threads to @ours and their missed counts to @missed. Returns how many.
 */
static int read_exits(struct rnl *nl, int ms, int *ours, unsigned long long *missed)
{
	struct rnl_record rec;
	int n = 0;

	while (rnl_next_exit(nl, &rec, ms) == 1) {
		n++;
		*ours += rec.tgid == (__u32)getpid();
		*missed += rec.missed;
	}
	return n;
}

/*
 * A record the listener's own socket filter refuses is not lost: the socket
 * chose not to take it, and, as for any netlink message a filter drops, it
 * is not counted as missed. Threads exit while a filter that drops every
 * record is attached; once it is detached, one more exits: the records
 * received then carry no missed count, and only that thread's is of this
 * test. The buffer has room for any other exits meanwhile.
 */
TEST_F(recount, filtered_records_are_not_missed)
{
	int received, ours = 0, rcvbuf = 8 << 20;
	unsigned long long missed = 0;
	struct rnl_reply r;
	struct rnl listener;

	ASSERT_EQ(0, rnl_open(&listener));
	ASSERT_EQ(0, setsockopt(listener.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)));
	ASSERT_EQ(0, rnl_listen(&listener, true, every_cpu(), &r)) TH_LOG("%s", r.extack);
	ASSERT_EQ(0, drop_all_on(listener.fd, true));
	ASSERT_EQ(0, threads_exit(10));
	ASSERT_EQ(0, drop_all_on(listener.fd, false));
	ASSERT_EQ(0, threads_exit(1));
	received = read_exits(&listener, 500, &ours, &missed);
	rnl_close(&listener);
	TH_LOG("%d records after the filter, %d of this test's threads", received, ours);
	EXPECT_EQ(1, ours);
	EXPECT_EQ(0, missed);
}

/*
 * The missed count a refused record carried is not lost with it: it comes
 * with the next record the socket takes. Four exits overflow a tiny buffer;
 * one more exits while a filter refuses everything; the buffer is read
 * empty, the filter detached, and one more exits: its record, or one
 * before it, carries the count of the overflow. Each of the four was read
 * or counted missed.
 */
TEST_F(recount, filtered_record_keeps_the_missed_count)
{
	int rcvbuf = 1, ours = 0, queued = 0;
	unsigned long long missed = 0;
	struct rnl_reply r;
	struct rnl listener;

	ASSERT_EQ(0, rnl_open(&listener));
	ASSERT_EQ(0, rnl_listen(&listener, true, every_cpu(), &r)) TH_LOG("%s", r.extack);
	/* The smallest buffer takes a record or two, whatever their size: the rest are missed. */
	ASSERT_EQ(0, setsockopt(listener.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)));
	ASSERT_EQ(0, threads_exit(4));
	ASSERT_EQ(0, drop_all_on(listener.fd, true));
	ASSERT_EQ(0, threads_exit(1));
	read_exits(&listener, 200, &queued, &missed);
	ASSERT_EQ(0, drop_all_on(listener.fd, false));
	rcvbuf = 8 << 20;
	ASSERT_EQ(0, setsockopt(listener.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)));
	ASSERT_EQ(0, threads_exit(1));
	read_exits(&listener, 500, &ours, &missed);
	rnl_close(&listener);
	TH_LOG("%d of the four records read, %llu reported missed", queued, missed);
	EXPECT_EQ(1, ours);
	EXPECT_GT(4, queued);
	EXPECT_LE(4 - queued, missed);
}

/* Count, in @seen, the records of the @n processes @pids until none come. */
static void count_records(struct rnl *nl, const pid_t *pids, long *seen, int n)
{
	struct rnl_record rec;
	int i;

	memset(seen, 0, sizeof(*seen) * n);
	while (rnl_next_exit(nl, &rec, 500) == 1)
		for (i = 0; i < n; i++)
			seen[i] += rec.tgid == (__u32)pids[i];
}

/* Become nobody, keeping the capabilities permitted: a process /proc hides. */
static int become_capable_nobody(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) || setgid(65534) ||
	    setuid(65534) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ||
	    syscall(SYS_capget, &hdr, data))
		return -1;
	return data[0].permitted ? 0 : -1;
}

static int stay_root(void)
{
	return 0;
}

/* Become nobody and non-dumpable: a process /proc reads to no one else. */
static int become_nondumpable_nobody(void)
{
	return become_nobody() || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/* Who registers the listener of listen_as(). */
enum registrant {
	NOBODY,			/* nobody, for every CPU */
	ROOT,			/* root, for every CPU, then becomes nobody */
};

/*
 * A listener of every CPU, as nobody, counts in @seen the records of two
 * processes that exit once it listens, each after @become[i]() succeeded.
 * It registered as @who says.
 */
static void listen_as(struct __test_metadata *_metadata, int (*const become[2])(void),
		      long seen[2], enum registrant who)
{
	int to_listener[2], from_listener[2], status, i;
	pid_t listener, pids[2];

	ASSERT_EQ(0, pipe(to_listener));
	ASSERT_EQ(0, pipe(from_listener));
	listener = fork();
	ASSERT_GE(listener, 0);
	if (listener == 0) {
		struct rnl_reply r;
		struct rnl nl;

		if ((who == NOBODY && become_nobody()) || rnl_open(&nl) ||
		    rnl_listen(&nl, true, every_cpu(), &r) ||
		    (who != NOBODY && become_nobody()) ||
		    write(from_listener[1], "r", 1) != 1 ||
		    read(to_listener[0], pids, sizeof(pids)) != sizeof(pids))
			_exit(1);
		count_records(&nl, pids, seen, 2);
		_exit(write(from_listener[1], seen, sizeof(long) * 2) == sizeof(long) * 2 ? 0 : 2);
	}
	close(from_listener[1]);
	close(to_listener[0]);
	ASSERT_EQ(1, read(from_listener[0], &(char){ 0 }, 1));
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (pids[i] == 0)
			_exit(become[i]() ? 1 : 0);
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_EQ(0, status) TH_LOG("process %d could not become what it should", i);
	}
	ASSERT_EQ(sizeof(pids), write(to_listener[1], pids, sizeof(pids)));
	ASSERT_EQ(sizeof(long) * 2, read(from_listener[0], seen, sizeof(long) * 2));
	ASSERT_EQ(listener, waitpid(listener, &status, 0));
	EXPECT_EQ(0, status);
	close(from_listener[0]);
	close(to_listener[1]);
}

/* An unprivileged listener gets its own user's records, not another's. */
TEST_F(recount, unprivileged_listener_sees_only_its_own)
{
	static int (*const become[2])(void) = { become_nobody, stay_root };
	long seen[2];

	listen_as(_metadata, become, seen, NOBODY);
	EXPECT_EQ(2, seen[0]);
	EXPECT_EQ(0, seen[1]);
}

/*
 * A listener follows the capability rule of ptrace, as /proc does: of two
 * processes of its own user, it gets the records of the one that holds no
 * capability and none of the one that holds capabilities it lacks.
 */
TEST_F(recount, listener_follows_capability_rule)
{
	static int (*const become[2])(void) = { become_nobody, become_capable_nobody };
	long seen[2];

	listen_as(_metadata, become, seen, NOBODY);
	EXPECT_EQ(2, seen[0]);
	EXPECT_EQ(0, seen[1]);
}

/*
 * And its dumpability rule: of two processes of its own user, it gets the
 * records of the dumpable one, none of the one that made itself
 * non-dumpable, whose /proc files it cannot read either.
 */
TEST_F(recount, listener_follows_dumpability)
{
	static int (*const become[2])(void) = { become_nobody, become_nondumpable_nobody };
	long seen[2];

	listen_as(_metadata, become, seen, NOBODY);
	EXPECT_EQ(2, seen[0]);
	EXPECT_EQ(0, seen[1]);
}

/*
 * A listener is judged by the credentials it registered with, as an open
 * file is by those it was opened with: registered as root, it still gets
 * root's records once its process has become nobody (which, registering
 * then, would get none: unprivileged_listener_sees_only_its_own).
 */
TEST_F(recount, listener_keeps_the_credentials_it_registered_with)
{
	static int (*const become[2])(void) = { become_nobody, stay_root };
	long seen[2];

	listen_as(_metadata, become, seen, ROOT);
	EXPECT_EQ(2, seen[0]);
	EXPECT_EQ(2, seen[1]);
}

/*
 * As root, register a listener of CPU @mine, become nobody, be refused
 * adding the other CPU of @both, and register @mine again. Returns 'r' when
 * all went as it should, else the letter of the step that did not.
 */
static char register_then_widen(struct rnl *nl, const char *mine, const char *both)
{
	struct rnl_reply r;

	if (rnl_open(nl) || rnl_listen(nl, true, mine, &r))
		return 'a';
	if (become_nobody())
		return 'b';
	if (rnl_listen(nl, true, both, &r) != -EPERM || !r.extack[0])
		return 'c';
	if (rnl_listen(nl, true, mine, &r))
		return 'd';
	return 'r';
}

/*
 * And by those of its first registration: a later one on its socket, by
 * another (nobody, here), changes neither its credentials nor what it
 * receives, as an open file handed to another task keeps its opener's; but
 * only a privileged sender may add CPUs to a privileged listener, as
 * netlink_capable() asks the sender and the opener. Nobody may register the
 * CPUs it listens to again.
 */
TEST_F(recount, listener_keeps_the_credentials_of_its_first_registration)
{
	/* Where the listener failed, if it did: the step's letter. */
	static const char *const steps[] = {
		"root registering its CPU", "becoming nobody",
		"nobody adding a CPU: not refused with EPERM and a message",
		"nobody registering the listener's CPU again", "reading the pids",
	};
	int to_listener[2], from_listener[2], status, i, cpu[2];
	char mine[16], both[32], step;
	pid_t listener, pids[3];
	long seen[3];

	cpu[0] = pick_cpu(false, -1);
	cpu[1] = cpu[0] < 0 ? -1 : pick_cpu(false, cpu[0]);
	if (cpu[1] < 0)
		SKIP(return, "one CPU: no other to add");
	snprintf(mine, sizeof(mine), "%d", cpu[0]);
	snprintf(both, sizeof(both), "%d,%d", cpu[0], cpu[1]);
	ASSERT_EQ(0, pipe(to_listener));
	ASSERT_EQ(0, pipe(from_listener));
	listener = fork();
	ASSERT_GE(listener, 0);
	if (listener == 0) {
		struct rnl nl;

		step = register_then_widen(&nl, mine, both);
		if (write(from_listener[1], &step, 1) != 1 || step != 'r')
			_exit(1);
		if (read(to_listener[0], pids, sizeof(pids)) != sizeof(pids)) {
			step = 'e';
			_exit(write(from_listener[1], &step, 1) == 1 ? 1 : 2);
		}
		count_records(&nl, pids, seen, 3);
		_exit(write(from_listener[1], seen, sizeof(seen)) == sizeof(seen) ? 0 : 2);
	}
	close(from_listener[1]);
	close(to_listener[0]);
	ASSERT_EQ(1, read(from_listener[0], &step, 1));
	ASSERT_EQ('r', step) TH_LOG("the listener failed at %s",
				    step >= 'a' && step <= 'e' ? steps[step - 'a'] : "?");
	/* Nobody and root exit on the listener's CPU, root on the one refused. */
	for (i = 0; i < 3; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (pids[i] == 0)
			_exit(pin_self(cpu[i / 2]) || (i == 0 && become_nobody()) ? 1 : 0);
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_EQ(0, status) TH_LOG("process %d could not become what it should", i);
	}
	ASSERT_EQ(sizeof(pids), write(to_listener[1], pids, sizeof(pids)));
	ASSERT_EQ(sizeof(seen), read(from_listener[0], seen, sizeof(seen)));
	ASSERT_EQ(listener, waitpid(listener, &status, 0));
	EXPECT_EQ(0, status);
	close(from_listener[0]);
	close(to_listener[1]);
	EXPECT_EQ(2, seen[0]);
	EXPECT_EQ(2, seen[1]) TH_LOG("root's records, on the CPU root registered");
	EXPECT_EQ(0, seen[2]) TH_LOG("records from CPU %d, which nobody was refused", cpu[1]);
}

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_restrict_self 446
#endif

/* Enter a new Landlock domain; returns 0 or -errno. */
static int enter_landlock_domain(void)
{
	struct landlock_ruleset_attr attr = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_FIFO,
	};
	int fd = syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0), err = 0;

	if (fd < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_landlock_restrict_self, fd, 0))
		err = -errno;
	close(fd);
	return err;
}

/*
 * Security modules' ptrace policy holds for every read, exit records
 * included: a process in a Landlock domain may ptrace-read only the
 * processes of its domain. As nobody in one, a listener gets the records of
 * its own child and none of a process of its own user outside, which it
 * cannot get either.
 */
TEST_F(recount, landlock_domain_limits_reads)
{
	int to_listener[2], from_listener[2], go[2], status;
	pid_t listener, outside;
	long res[4];

	if (syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) < 0)
		SKIP(return, "no Landlock (CONFIG_SECURITY_LANDLOCK=n, or not in lsm=)");
	ASSERT_EQ(0, pipe(to_listener));
	ASSERT_EQ(0, pipe(from_listener));
	ASSERT_EQ(0, pipe(go));
	outside = fork();
	ASSERT_GE(outside, 0);
	if (outside == 0)
		_exit(become_nobody() || read(go[0], &(char){ 0 }, 1) != 1 ? 1 : 0);
	listener = fork();
	ASSERT_GE(listener, 0);
	if (listener == 0) {
		struct rnl_reply r;
		pid_t pids[2];
		struct rnl nl;
		long seen[2];

		/* The parent's end: a failed parent ends the waits below. */
		close(to_listener[1]);
		if (become_nobody() || enter_landlock_domain() || rnl_open(&nl) ||
		    rnl_listen(&nl, true, every_cpu(), &r) ||
		    read(to_listener[0], &pids[1], sizeof(pid_t)) != sizeof(pid_t))
			_exit(1);
		res[0] = rnl_get(&nl, RECOUNT_A_TGID, pids[1], &r);
		res[1] = rnl_get(&nl, RECOUNT_A_TGID, getpid(), &r);
		pids[0] = fork();
		if (pids[0] == 0)
			_exit(0);
		/* Counted once the outside process has exited too. */
		if (pids[0] < 0 || waitpid(pids[0], NULL, 0) != pids[0] ||
		    write(from_listener[1], "r", 1) != 1 ||
		    read(to_listener[0], &(char){ 0 }, 1) != 1)
			_exit(2);
		count_records(&nl, pids, seen, 2);
		res[2] = seen[0];
		res[3] = seen[1];
		_exit(write(from_listener[1], res, sizeof(res)) == sizeof(res) ? 0 : 3);
	}
	close(from_listener[1]);
	close(to_listener[0]);
	ASSERT_EQ(sizeof(pid_t), write(to_listener[1], &outside, sizeof(pid_t)));
	ASSERT_EQ(1, read(from_listener[0], &(char){ 0 }, 1));
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(outside, waitpid(outside, &status, 0));
	EXPECT_EQ(0, status);
	ASSERT_EQ(1, write(to_listener[1], "x", 1));
	ASSERT_EQ(sizeof(res), read(from_listener[0], res, sizeof(res)));
	ASSERT_EQ(listener, waitpid(listener, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(-EACCES, res[0]);
	EXPECT_EQ(0, res[1]);
	EXPECT_EQ(2, res[2]);
	EXPECT_EQ(0, res[3]);
}

/*
 * One exit seen by a listener outside a pid namespace and one inside it:
 * each gets the exit's records with the pids of its own namespace (an exit
 * builds its records once per namespace and copies them to the listeners
 * of that namespace).
 */
#define NS_EXIT_COMM "recount-nsexit"

/*
 * The pid, tgid and exit code of @nl's records of NS_EXIT_COMM, or -1;
 * how many there were. Reads until 700 ms pass without a record, or for
 * 5 s at most: a listener of the whole system may never see such a pause.
 * @missed: what the records said the socket missed.
 */
static int ns_exit_seen(struct rnl *nl, int res[3], unsigned long long *missed)
{
	unsigned long long end = now_ns() + 5 * NSEC_PER_SEC;
	struct rnl_record rec;
	int n = 0, i;

	for (i = 0; i < 3; i++)
		res[i] = -1;
	*missed = 0;
	while (now_ns() < end && rnl_next_exit(nl, &rec, 700) == 1) {
		*missed += rec.missed;
		if (strcmp(rec.comm, NS_EXIT_COMM) || !rec.has_pid)
			continue;
		res[0] = rec.pid;
		res[1] = rec.tgid;
		res[2] = rec.exit_code;
		n++;
	}
	return n;
}

TEST_F(recount, listeners_in_and_outside_a_pid_namespace)
{
	int report[2], inner[3], outer[3], status, rcvbuf = 4 << 20;
	unsigned long long missed;
	struct rnl_reply r;
	struct rnl outside;
	pid_t maker;

	ASSERT_EQ(0, pipe(report));
	ASSERT_EQ(0, rnl_open(&outside));
	/* It hears every exit of the system: room for them all. */
	setsockopt(outside.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	ASSERT_EQ(0, rnl_listen(&outside, true, every_cpu(), &r)) TH_LOG("%s", r.extack);
	maker = fork();
	ASSERT_GE(maker, 0);
	if (maker == 0) {
		pid_t init;

		if (unshare(CLONE_NEWPID))
			_exit(errno == EINVAL ? 11 : 12);
		init = fork();
		if (init < 0)
			_exit(13);
		if (init == 0) {
			struct rnl nl;
			pid_t child;
			int res[3];

			if (rnl_open(&nl) || rnl_listen(&nl, true, every_cpu(), &r))
				_exit(20);
			child = fork();
			if (child == 0) {
				prctl(PR_SET_NAME, NS_EXIT_COMM);
				_exit(7);
			}
			if (child != 2 || waitpid(child, NULL, 0) != child)
				_exit(21);
			if (ns_exit_seen(&nl, res, &missed) != 1 || missed ||
			    write(report[1], res, sizeof(res)) != sizeof(res))
				_exit(22);
			_exit(0);
		}
		_exit(waitpid(init, &status, 0) == init && WIFEXITED(status) ?
		      WEXITSTATUS(status) : 14);
	}
	ASSERT_EQ(maker, waitpid(maker, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 11)
		SKIP(return, "no pid namespaces (CONFIG_PID_NS=n)");
	/* 12-14: making the namespace; 20-22: in it. */
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(sizeof(inner), read(report[0], inner, sizeof(inner)));
	EXPECT_EQ(1, ns_exit_seen(&outside, outer, &missed)) TH_LOG("%llu missed", missed);
	rnl_close(&outside);
	TH_LOG("inside: pid %d tgid %d code %d; outside: pid %d tgid %d code %d",
	       inner[0], inner[1], inner[2], outer[0], outer[1], outer[2]);
	EXPECT_EQ(2, inner[0]);
	EXPECT_EQ(2, inner[1]);
	EXPECT_GT(outer[0], 2);
	EXPECT_EQ(outer[0], outer[1]);
	EXPECT_EQ(inner[2], outer[2]);
}

/*
 * A listener in a new pid namespace sees its namespace's pids, and nothing
 * of the tasks it cannot see.
 */
TEST_F(recount, listener_in_pid_namespace)
{
	int sync[2], go[2], gone[2], status;
	pid_t inside, outside;

	ASSERT_EQ(0, pipe(sync));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(gone));
	/* Forked before unshare(), it stays outside the new namespace. */
	outside = fork();
	ASSERT_GE(outside, 0);
	if (outside == 0)
		_exit(read(go[0], &(char){ 0 }, 1) == 1 ? 0 : 1);
	if (unshare(CLONE_NEWPID)) {
		kill(outside, SIGKILL);
		ASSERT_EQ(EINVAL, errno);
		SKIP(return, "no pid namespaces (CONFIG_PID_NS=n)");
	}
	inside = fork();
	ASSERT_GE(inside, 0);
	if (inside == 0) {
		int nsthread = 0, outsiders = 0, ok;
		struct rnl_record rec;
		struct rnl_reply r;
		struct rnl nl;
		pthread_t th;

		/* The parent's end: a failed parent ends the wait below. */
		close(gone[1]);
		if (rnl_open(&nl) || rnl_listen(&nl, true, every_cpu(), &r) ||
		    write(sync[1], "r", 1) != 1)
			_exit(1);
		if (pthread_create(&th, NULL, nothing, NULL))
			_exit(2);
		pthread_join(th, NULL);
		/* Counted once the process outside has exited. */
		if (read(gone[0], &(char){ 0 }, 1) != 1)
			_exit(4);
		while (rnl_next_exit(&nl, &rec, 700) == 1) {
			if (rec.tgid == 1 && rec.has_pid && rec.pid < 100)
				nsthread++;
			else
				outsiders++;
		}
		ok = getpid() == 1 && nsthread == 1 && outsiders == 0;
		_exit(ok ? 0 : 3);
	}
	ASSERT_EQ(1, read(sync[0], &(char){ 0 }, 1));
	/* A process outside the namespace exits meanwhile. */
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(outside, waitpid(outside, NULL, 0));
	ASSERT_EQ(1, write(gone[1], "x", 1));
	ASSERT_EQ(inside, waitpid(inside, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * An unprivileged container: a user namespace, a network namespace and a pid
 * namespace, made by nobody. Its init registers a listener with no privilege
 * in the initial namespaces, and gets the records of its own child, with the
 * pids of its namespace.
 */
TEST_F(recount, listener_in_container)
{
	int status;
	pid_t outer;

	outer = fork();
	ASSERT_GE(outer, 0);
	if (outer == 0) {
		pid_t init;

		if (become_nobody())
			_exit(10);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID))
			_exit(errno == EINVAL ? 11 : 12);
		if (write_file("/proc/self/setgroups", "deny") ||
		    write_file("/proc/self/uid_map", "0 65534 1") ||
		    write_file("/proc/self/gid_map", "0 65534 1"))
			_exit(13);
		init = fork();
		if (init < 0)
			_exit(14);
		if (init == 0) {
			int threads = 0, processes = 0, others = 0;
			struct rnl_record rec;
			struct rnl_reply r;
			struct rnl nl;
			pid_t child;

			if (rnl_open(&nl))
				_exit(20);
			if (rnl_listen(&nl, true, every_cpu(), &r))
				_exit(21);
			/* A query from in here uses and reports the namespace's pids. */
			if (rnl_get(&nl, RECOUNT_A_PID, 1, &r) || r.rec.pid != 1 || r.rec.tgid != 1)
				_exit(22);
			child = fork();
			if (child == 0)
				_exit(5);
			if (child != 2 || waitpid(child, &status, 0) != child)
				_exit(23);
			while (rnl_next_exit(&nl, &rec, 500) == 1) {
				if (rec.tgid != 2)
					others++;
				else if (!rec.has_pid && rec.exit_code == 5 << 8)
					processes++;
				else if (rec.pid == 2 && rec.exit_code == 5 << 8)
					threads++;
			}
			_exit(threads == 1 && processes == 1 && others == 0 ? 0 : 24);
		}
		if (waitpid(init, &status, 0) != init || !WIFEXITED(status))
			_exit(15);
		_exit(WEXITSTATUS(status));
	}
	ASSERT_EQ(outer, waitpid(outer, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 11)
		SKIP(return, "no user, network or pid namespaces (CONFIG_*_NS=n)");
	/* 10-15: setting up the container; 20-24: in it (see above). */
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * Every listener costs each exit a check: a user without CAP_SYS_PTRACE or
 * CAP_NET_ADMIN may have RECOUNT_LISTENERS_PER_USER (16) listening sockets,
 * one more is refused with EMFILE and a reason; closing one, or
 * deregistering all its CPUs, makes room again. Twice, so that a count
 * leaked on any of these paths shows. Root's are not counted.
 */
#define LISTENERS_PER_USER 16

/* As nobody: 0, or which step failed. */
static int fill_listeners_as_nobody(void)
{
	struct rnl nl[LISTENERS_PER_USER + 2];
	struct rnl_reply r;
	int i;

	if (become_nobody())
		return 1;
	for (i = 0; i < LISTENERS_PER_USER; i++)
		if (rnl_open(&nl[i]) || rnl_listen(&nl[i], true, "0", &r))
			return 2;
	/* A second registration of a listening socket is no new listener. */
	if (rnl_listen(&nl[0], true, every_cpu(), &r))
		return 3;
	if (rnl_open(&nl[i]) || rnl_listen(&nl[i], true, "0", &r) != -EMFILE || !r.extack[0])
		return 4;
	rnl_close(&nl[0]);
	if (rnl_listen(&nl[i], true, "0", &r))
		return 5;
	if (rnl_listen(&nl[1], false, "0", &r) || rnl_open(&nl[i + 1]) ||
	    rnl_listen(&nl[i + 1], true, "0", &r))
		return 6;
	if (rnl_listen(&nl[1], true, "0", &r) != -EMFILE)
		return 7;
	return 0;
}

TEST_F(recount, listeners_per_user_are_bounded)
{
	struct rnl nl[LISTENERS_PER_USER + 1];
	struct rnl_reply r;
	int i, round, status;
	pid_t child;

	for (round = 0; round < 2; round++) {
		child = fork();
		ASSERT_GE(child, 0);
		if (child == 0)
			_exit(fill_listeners_as_nobody());
		ASSERT_EQ(child, waitpid(child, &status, 0));
		/*
		 * 1: setuid, 2: one of the 16, 3: re-registering, 4: the 17th,
		 * 5: room after a close, 6: room after a deregistration,
		 * 7: the bound after it
		 */
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("round %d: the unprivileged user failed, status %#x", round, status);
	}

	for (i = 0; i <= LISTENERS_PER_USER; i++) {
		ASSERT_EQ(0, rnl_open(&nl[i]));
		ASSERT_EQ(0, rnl_listen(&nl[i], true, "0", &r)) TH_LOG("%d: %s", i, r.extack);
	}
	for (i = 0; i <= LISTENERS_PER_USER; i++)
		rnl_close(&nl[i]);
}

/*
 * In a user namespace of user 1000 into which root mapped 100 uids
 * (subordinate ids, as newuidmap maps them), its uid 0 fills the 16
 * listeners of user 1000, and its uid 1, another user outside, gets no
 * 17th: the bound holds for the namespace's creator, whichever uids it
 * maps. As the child in the namespace: 0, or which step failed.
 */
static int listen_in_mapped_namespace(int ready, int mapped)
{
	struct rnl nl[LISTENERS_PER_USER + 1];
	struct rnl_reply r;
	int i, status;
	pid_t other;

	if (become_user(1000))
		return 10;
	if (unshare(CLONE_NEWUSER))
		return errno == EINVAL ? 11 : 12;
	if (write(ready, "x", 1) != 1 || read(mapped, &(char){ 0 }, 1) != 1)
		return 13;
	if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
		return 14;
	for (i = 0; i < LISTENERS_PER_USER; i++)
		if (rnl_open(&nl[i]) || rnl_listen(&nl[i], true, "0", &r))
			return 20;
	other = fork();
	if (other < 0)
		return 15;
	if (other == 0)
		_exit(setresuid(1, 1, 1) || rnl_open(&nl[i]) ? 1 :
		      rnl_listen(&nl[i], true, "0", &r) == -EMFILE ? 0 : 2);
	if (waitpid(other, &status, 0) != other || !WIFEXITED(status))
		return 16;
	return WEXITSTATUS(status) ? 20 + WEXITSTATUS(status) : 0;
}

TEST_F(recount, listeners_bounded_across_mapped_uids)
{
	int ready[2], mapped[2], status;
	char path[64];
	pid_t child;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(mapped));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		close(ready[0]);
		close(mapped[1]);
		_exit(listen_in_mapped_namespace(ready[1], mapped[0]));
	}
	close(ready[1]);
	close(mapped[0]);
	if (read(ready[0], &(char){ 0 }, 1) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/uid_map", child);
		EXPECT_EQ(0, write_file(path, "0 300000 100"));
		snprintf(path, sizeof(path), "/proc/%d/gid_map", child);
		EXPECT_EQ(0, write_file(path, "0 300000 100"));
		ASSERT_EQ(1, write(mapped[1], "x", 1));
	}
	close(mapped[1]);
	close(ready[0]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 11)
		SKIP(return, "no user namespaces (CONFIG_USER_NS=n)");
	/*
	 * 10-16: setting up; 20: one of the 16; 21: the other user cannot
	 * open a socket; 22: it got a 17th listener.
	 */
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
