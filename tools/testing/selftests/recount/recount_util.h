/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Workloads and helpers shared by the recount selftests.
 */
#ifndef _RECOUNT_UTIL_H
#define _RECOUNT_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL

#define RECOUNT_SYSCTL	"/proc/sys/kernel/recount"
#define RECOUNT_PMU_SYSCTL	"/proc/sys/kernel/recount_pmu"

static inline unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Every possible CPU, as a cpumask of register. */
static inline const char *every_cpu(void)
{
	static char all_cpus[32];

	snprintf(all_cpus, sizeof(all_cpus), "0-%d", get_nprocs_conf() - 1);
	return all_cpus;
}

/* CLOCK_BOOTTIME, the clock of the records' times (start, exit, longest waits). */
static inline unsigned long long boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/*
 * Nothing the kernel times within a span of CLOCK_MONOTONIC can be longer
 * than it, but for 1% and 1 ms of slack: the kernel's clock is sched_clock(),
 * which may tick from another clock source, on another CPU, at a rate that
 * differs by tenths of a percent (seen under TCG: 1.6 ms in 620 ms).
 */
static inline unsigned long long wall_bound(unsigned long long wall)
{
	return wall + wall / 100 + NSEC_PER_MSEC;
}

/* The calling thread's CPU time, as the scheduler counts it. */
static inline unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The CPU time of thread @t of this process, as the scheduler counts it. */
static inline unsigned long long thread_clock_ns(pthread_t t)
{
	struct timespec ts;
	clockid_t clock;

	if (pthread_getcpuclockid(t, &clock) || clock_gettime(clock, &ts))
		abort();
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline void sleep_ns(unsigned long long ns)
{
	struct timespec ts = { .tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Spin in user mode for @ns of wall time, looking at the clock rarely. */
static inline void spin_user(unsigned long long ns)
{
	unsigned long long end = now_ns() + ns;
	unsigned long x = 0;
	int i;

	do {
		for (i = 0; i < 200000; i++) {
			x++;
			/* Keep the compiler from folding the loop away. */
			asm volatile("" : "+r" (x));
		}
	} while (now_ns() < end);
}

/* Spin in user mode until the calling thread has had @ns of CPU time. */
static inline void spin_user_cpu(unsigned long long ns)
{
	unsigned long long end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		spin_user(NSEC_PER_MSEC / 10);
}

/* Spend @ns of wall time in syscalls that work in the kernel: reading zeroes. */
static inline void spin_kernel(unsigned long long ns)
{
	static char buf[65536];
	unsigned long long end = now_ns() + ns;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		abort();
	do {
		if (read(fd, buf, sizeof(buf)) != sizeof(buf))
			abort();
	} while (now_ns() < end);
	close(fd);
}

static inline pid_t sys_gettid(void)
{
	return syscall(SYS_gettid);
}

/*
 * Whether thread @tid, found sleeping, woke before it was switched out: a
 * thread sets its state to sleep before it switches out, and may be
 * preempted between the two. Reading /proc/@tid/syscall waits until it is
 * off its CPU and its run queue (wait_task_inactive()), and gives "running"
 * if it woke meanwhile. False where it cannot be read (the caller may not
 * trace the thread).
 */
static inline bool thread_woke(pid_t tid)
{
	char path[64], buf[16];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 && !strncmp(buf, "running", 7);
}

/*
 * The state of thread @tid as /proc/@tid/stat gives it ('R', 'S', 'D', ...),
 * or 0 if there is none to read: the thread is gone, or not in the pid
 * namespace of /proc. A thread found sleeping ('S', 'D') is so once it has
 * switched out, which this waits for; if it woke first, it is 'R'.
 */
static inline char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	/* /proc names the caller with the caller's own id in its namespace. */
	n = readlink("/proc/self", buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (atoi(buf) != getpid())
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) S ...": the comm may hold anything but the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	if ((p[2] == 'S' || p[2] == 'D') && thread_woke(tid))
		return 'R';
	return p[2];
}

/*
 * Become user @id (uid and gid @id, no capabilities), as a user who logged
 * in would be. Dropping root's credentials makes the process undumpable,
 * which a process its user started is not: restore that, or only privileged
 * callers could read it. Returns 0, or -1 with errno set.
 */
static inline int become_user(uid_t id)
{
	if (setgroups(0, NULL) || setgid(id) || setuid(id))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/*
 * In a child of @parent: be killed when @parent ends, as when the test fails
 * before it stops the child. 0, or -1 if @parent has ended already.
 */
static inline int die_with(pid_t parent)
{
	return prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent ? -1 : 0;
}

/* Become nobody, uid and gid 65534. */
static inline int become_nobody(void)
{
	return become_user(65534);
}

/*
 * Give the calling test a /tmp of its own: a tmpfs in a mount namespace of
 * its own, which ends with the test's last process, and with it whatever
 * the test left there, such as a set-user-ID-root copy of a program, which
 * runs there whatever the options of the system's /tmp. 0, or -1 (errno).
 */
static inline int private_tmp(void)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	return mount("recount-tmp", "/tmp", "tmpfs", 0, "mode=1777");
}

/*
 * Copy @from to @path, a new file of ours, set-user-ID (mode 04755). 0, or
 * -1 (errno) with nothing left at @path.
 */
static inline int setuid_copy(const char *from, const char *path)
{
	int in, out, err = 0;
	char buf[65536];
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	if (out < 0) {
		err = errno;
		close(in);
		errno = err;
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	if (n)
		err = errno ? errno : EIO;
	if (!err && fchmod(out, 04755))
		err = errno;
	if (close(out) && !err)
		err = errno;
	close(in);
	if (err) {
		unlink(path);
		errno = err;
		return -1;
	}
	return 0;
}

/* Read kernel.recount; -1 if it does not exist. */
static inline int recount_sysctl_get(void)
{
	char c = 0;
	int fd = open(RECOUNT_SYSCTL, O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == '1';
}

/* Is @param (such as "recount=on") on the kernel command line? */
static inline bool cmdline_has(const char *param, char *value, size_t size)
{
	char cmdline[4096] = "", *p;
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f)
		return false;
	if (!fgets(cmdline, sizeof(cmdline), f))
		cmdline[0] = 0;
	fclose(f);
	p = strstr(cmdline, param);
	if (!p)
		return false;
	if (value) {
		p += strlen(param);
		snprintf(value, size, "%.*s", (int)strcspn(p, "\n "), p);
	}
	return true;
}

/*
 * Write @value to the sysctl at @path from a child process that has dropped
 * CAP_SYS_ADMIN, and stays root otherwise. Returns the write's result:
 * 0 or -errno.
 */
static inline int write_without_cap_sys_admin(const char *path, const char *value)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (syscall(SYS_capget, &hdr, data))
			_exit(EPROTO);
		data[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
		data[CAP_SYS_ADMIN / 32].permitted &= ~(1u << (CAP_SYS_ADMIN % 32));
		if (syscall(SYS_capset, &hdr, data))
			_exit(EPROTO);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			_exit(errno);
		_exit(write(fd, value, strlen(value)) == (ssize_t)strlen(value) ? 0 : errno);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return -WEXITSTATUS(status);
}

/* Write @s to the file @path, as echo does; returns 0 or -errno. */
static inline int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

/* Read the integer in the file (a sysctl) at @path into @v; 0, or -1. */
static inline int int_file_get(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int ok = f && fscanf(f, "%d", v) == 1;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* Write @v to the file (a sysctl) at @path; 0, or -errno. */
static inline int int_file_set(const char *path, int v)
{
	char s[16];

	snprintf(s, sizeof(s), "%d\n", v);
	return write_file(path, s);
}

/* Write kernel.recount; returns 0 or -errno. */
static inline int recount_sysctl_set(int on)
{
	return write_file(RECOUNT_SYSCTL, on ? "1\n" : "0\n");
}

#define PARANOID "/proc/sys/kernel/perf_event_paranoid"

/* Read kernel.perf_event_paranoid; -9 if it cannot be read. */
static inline int paranoid_get(void)
{
	int v;

	return int_file_get(PARANOID, &v) ? -9 : v;
}

/* Write kernel.perf_event_paranoid; returns 0 or -errno. */
static inline int paranoid_set(int v)
{
	return int_file_set(PARANOID, v);
}

/* Whether @cpu is in the list of CPUs ("0,2-3") in the file at @path. */
static inline bool cpu_listed(const char *path, int cpu)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	char *p = buf;

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	while (*p >= '0' && *p <= '9') {
		int lo = strtol(p, &p, 10), hi = lo;

		if (*p == '-')
			hi = strtol(p + 1, &p, 10);
		if (cpu >= lo && cpu <= hi)
			return true;
		if (*p == ',')
			p++;
	}
	return false;
}

/*
 * The first CPU other than @not (-1 excludes none) that the caller may run
 * on, online, and nohz_full or not as @nohz says, or -1 if there is none. On
 * a nohz_full CPU a thread that runs alone takes no tick.
 */
static inline int pick_cpu(bool nohz, int not)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (cpu != not && CPU_ISSET(cpu, &set) &&
		    cpu_listed("/sys/devices/system/cpu/nohz_full", cpu) == nohz)
			return cpu;
	return -1;
}

/* Pin the calling thread to @cpu. Returns 0, or -1 with errno set. */
static inline int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static inline int nohz_full_cpu(int not)
{
	return pick_cpu(true, not);
}

static inline int ticking_cpu(int not)
{
	return pick_cpu(false, not);
}

/*
 * A thread that runs a piece of work each time it is told to, and otherwise
 * blocks in read(): between two runs its values are stable.
 */
struct worker {
	pthread_t thread;
	pid_t tid;
	int go[2], done[2];
	void (*work)(struct worker *w);
	unsigned long long arg;
	int cpu;		/* CPU to pin to, or -1 */
	/* CPU time spent in the work, by the worker's own clock */
	unsigned long long worked;
	/* when the last work began and ended, by now_ns() */
	unsigned long long began, ended;
	/* set by work_sleep() as it goes to sleep */
	int asleep;
};

static void *worker_main(void *p)
{
	struct worker *w = p;
	char c = 'r';

	if (w->cpu >= 0 && pin_self(w->cpu))
		abort();
	w->tid = sys_gettid();
	if (write(w->done[1], &c, 1) != 1)
		abort();
	while (read(w->go[0], &c, 1) == 1 && c == 'r') {
		unsigned long long t0 = thread_cpu_ns();

		w->began = now_ns();
		w->work(w);
		w->worked += thread_cpu_ns() - t0;
		w->ended = now_ns();
		if (write(w->done[1], &c, 1) != 1)
			abort();
	}
	return NULL;
}

/* Start @w; returns once it is blocked waiting for work. */
static inline int worker_start(struct worker *w, void (*work)(struct worker *),
			       unsigned long long arg, int cpu)
{
	char c;

	memset(w, 0, sizeof(*w));
	w->work = work;
	w->arg = arg;
	w->cpu = cpu;
	if (pipe(w->go) || pipe(w->done))
		return -1;
	if (pthread_create(&w->thread, NULL, worker_main, w))
		return -1;
	return read(w->done[0], &c, 1) == 1 ? 0 : -1;
}

/* Run the work once; returns once the worker is blocked again. */
static inline int worker_run(struct worker *w)
{
	char c = 'r';

	if (write(w->go[1], &c, 1) != 1)
		return -1;
	return read(w->done[0], &c, 1) == 1 ? 0 : -1;
}

static inline void worker_stop(struct worker *w)
{
	char c = 'q';

	if (write(w->go[1], &c, 1) != 1)
		abort();
	pthread_join(w->thread, NULL);
	close(w->go[0]);
	close(w->go[1]);
	close(w->done[0]);
	close(w->done[1]);
}

static inline void work_spin_user(struct worker *w)
{
	spin_user(w->arg);
}

static inline void work_spin_user_cpu(struct worker *w)
{
	spin_user_cpu(w->arg);
}

static inline void work_spin_kernel(struct worker *w)
{
	spin_kernel(w->arg);
}

static inline void work_sleep(struct worker *w)
{
	__atomic_store_n(&w->asleep, 1, __ATOMIC_RELEASE);
	sleep_ns(w->arg);
	__atomic_store_n(&w->asleep, 0, __ATOMIC_RELEASE);
}

/* Whether @w is in work_sleep()'s sleep, or on its way to it. */
static inline bool worker_sleeping(struct worker *w)
{
	return __atomic_load_n(&w->asleep, __ATOMIC_ACQUIRE);
}

/*
 * Wait up to 10 s for @w to sleep in work_sleep(), however long it takes a
 * slow kernel to get it there. True once it does (where /proc cannot tell
 * the thread's state, once it is on its way and 20 ms have passed).
 */
static inline bool worker_asleep(struct worker *w)
{
	unsigned long long end = now_ns() + 10 * NSEC_PER_SEC;
	char state;

	while (now_ns() < end) {
		state = thread_state(w->tid);
		if (worker_sleeping(w) && (state == 'S' || !state)) {
			if (!state)
				sleep_ns(20 * NSEC_PER_MSEC);
			return true;
		}
		sleep_ns(NSEC_PER_MSEC);
	}
	return false;
}

#endif /* _RECOUNT_UTIL_H */
