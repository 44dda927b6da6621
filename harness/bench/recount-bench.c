// SPDX-License-Identifier: GPL-2.0
/*
 * recount-bench: what recount costs and how fast it reads, measured in one
 * boot. Each measurement alternates between recount off and on (sysctl
 * kernel.recount, and kernel.recount_power_mw for "all metrics") run after
 * run, so that drift of the machine hits every state alike. On a kernel
 * without recount it measures the same workloads once per run, as the
 * baseline of the comparison across kernels.
 *
 * Prints one "BENCH {json}" line per measurement series; harness/bench.sh
 * collects them and harness/bench-report.py makes the tables.
 *
 *   recount-bench [-q] [-r RUNS] [-c CPU] [-p POWER_MODEL] [SECTION...]
 *
 * Sections: cost (the workloads), timerlat (the timerlat tracer's latencies,
 * recount off and on), read (one thread: recount vs taskstats vs /proc),
 * readall (1,000, 10,000 and 50,000 threads), exits (exit records at several rates).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/recount.h>
#include <linux/taskstats.h>

#include "recount_nl.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int runs = 15;
static bool quick;
static int bench_cpu = 1;		/* the measured CPU (nohz_full=1-3 in vtime) */
/* The sysctl takes the boot parameter's four powers separated by blanks. */
static const char *power_model = "1000 50 300 10";
static bool have_recount;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "recount-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void unpin(void)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int write_file(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, v, strlen(v)) == (ssize_t)strlen(v);
	close(fd);
	return ok ? 0 : -1;
}

/* The states a workload is measured in. */
enum state { OFF, ON, ALL, KERNEL, NR_STATES };
static const char *const state_names[] = { "off", "on", "all", "kernel" };

static void set_state(enum state s)
{
	if (s == KERNEL)
		return;
	/* "on" is time alone; "all" adds cycles, instructions and energy. */
	if (write_file("/proc/sys/kernel/recount_power_mw", s == ALL ? power_model : "0 0 0 0"))
		die("sysctl kernel.recount_power_mw");
	if (write_file("/proc/sys/kernel/recount_pmu", s == ALL ? "1" : "0"))
		die("sysctl kernel.recount_pmu");
	if (write_file("/proc/sys/kernel/recount", s == OFF ? "0" : "1"))
		die("sysctl kernel.recount");
	/* Let the switch settle: static keys, RCU. */
	usleep(20000);
}

/* One series: its values in the order measured. */
static void emit(const char *section, const char *name, const char *unit,
		 const char *state, const double *v, int n)
{
	int i;

	printf("BENCH {\"section\":\"%s\",\"name\":\"%s\",\"unit\":\"%s\",\"state\":\"%s\",\"values\":[",
	       section, name, unit, state);
	for (i = 0; i < n; i++)
		printf("%s%.1f", i ? "," : "", v[i]);
	printf("]}\n");
	fflush(stdout);
}

static void emit_count(const char *section, const char *name, const char *fields)
{
	printf("BENCH {\"section\":\"%s\",\"name\":\"%s\",%s}\n", section, name, fields);
	fflush(stdout);
}

/* The workloads whose cost recount adds to. Each returns ns per operation. */

static double w_getppid(long n)
{
	unsigned long long t;
	long i;

	pin(bench_cpu);
	t = now_ns();
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	return (double)(now_ns() - t) / n;
}

struct pingpong {
	int to[2], back[2];
	long n;
	int cpu;
};

static void *pong(void *arg)
{
	struct pingpong *p = arg;
	char c;
	long i;

	pin(p->cpu);
	for (i = 0; i < p->n; i++) {
		if (read(p->to[0], &c, 1) != 1 || write(p->back[1], &c, 1) != 1)
			die("pong");
	}
	return NULL;
}

static double pingpong(long n, int cpu_a, int cpu_b)
{
	struct pingpong p = { .n = n + 1, .cpu = cpu_b };
	unsigned long long t = 0;
	pthread_t th;
	char c = 0;
	long i;

	if (pipe(p.to) || pipe(p.back))
		die("pipe");
	pin(cpu_a);
	pthread_create(&th, NULL, pong, &p);
	for (i = 0; i <= n; i++) {
		/* The first round trip starts the clock: the thread is up. */
		if (i == 1)
			t = now_ns();
		if (write(p.to[1], &c, 1) != 1 || read(p.back[0], &c, 1) != 1)
			die("ping");
	}
	t = now_ns() - t;
	pthread_join(th, NULL);
	close(p.to[0]);
	close(p.to[1]);
	close(p.back[0]);
	close(p.back[1]);
	return (double)t / n;
}

static double w_pipe_1cpu(long n)
{
	return pingpong(n, bench_cpu, bench_cpu);
}

static double w_pipe_2cpu(long n)
{
	return pingpong(n, bench_cpu, bench_cpu + 1);
}

#define FAULT_PAGES 64

static double w_fault(long n)
{
	long page = sysconf(_SC_PAGESIZE), i, j;
	unsigned long long t;

	pin(bench_cpu);
	t = now_ns();
	for (i = 0; i < n; i++) {
		char *p = mmap(NULL, FAULT_PAGES * page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		for (j = 0; j < FAULT_PAGES; j++)
			p[j * page] = 1;
		munmap(p, FAULT_PAGES * page);
	}
	return (double)(now_ns() - t) / (n * FAULT_PAGES);
}

#define WRITERS 4

struct lockers {
	int fd[2];
	long n;
	pthread_barrier_t go;
};

static void *writer(void *arg)
{
	struct lockers *l = arg;
	char buf[512] = {};
	long i;

	pthread_barrier_wait(&l->go);
	for (i = 0; i < l->n; i++)
		if (write(l->fd[1], buf, sizeof(buf)) != sizeof(buf))
			die("write");
	return NULL;
}

/* Writers contend for the pipe's mutex; a reader drains it. */
static double w_lock(long n)
{
	struct lockers l = { .n = n / WRITERS };
	pthread_t th[WRITERS];
	unsigned long long t;
	long left = l.n * WRITERS * 512;
	char buf[65536];
	int i;

	unpin();
	if (pipe(l.fd))
		die("pipe");
	pthread_barrier_init(&l.go, NULL, WRITERS + 1);
	for (i = 0; i < WRITERS; i++)
		pthread_create(&th[i], NULL, writer, &l);
	pthread_barrier_wait(&l.go);
	t = now_ns();
	while (left > 0) {
		ssize_t r = read(l.fd[0], buf, sizeof(buf));

		if (r <= 0)
			die("read");
		left -= r;
	}
	t = now_ns() - t;
	for (i = 0; i < WRITERS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&l.go);
	close(l.fd[0]);
	close(l.fd[1]);
	return (double)t / (l.n * WRITERS);
}

static double w_fork(long n)
{
	unsigned long long t;
	long i;

	pin(bench_cpu);
	t = now_ns();
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid)
			_exit(0);
		waitpid(pid, NULL, 0);
	}
	return (double)(now_ns() - t) / n;
}

static void *nothing(void *arg)
{
	return arg;
}

static double w_thread(long n)
{
	unsigned long long t;
	pthread_t th;
	long i;

	pin(bench_cpu);
	t = now_ns();
	for (i = 0; i < n; i++) {
		if (pthread_create(&th, NULL, nothing, NULL))
			die("pthread_create");
		pthread_join(th, NULL);
	}
	return (double)(now_ns() - t) / n;
}

static const struct workload {
	const char *name;
	double (*fn)(long n);
	long n;			/* about 100 ms under TCG */
} workloads[] = {
	{ "null syscall (getppid)", w_getppid, 300000 },
	{ "pipe ping-pong, 1 CPU", w_pipe_1cpu, 8000 },
	{ "pipe ping-pong, 2 CPUs", w_pipe_2cpu, 4000 },
	{ "page fault (mmap, touch, munmap)", w_fault, 400 },
	{ "pipe mutex contention, 4 writers", w_lock, 8000 },
	{ "fork + exit + wait", w_fork, 300 },
	{ "thread create + exit + join", w_thread, 1000 },
};

/*
 * A clock read from user space (the vDSO reads the TSC or the generic
 * timer, as local_clock() does in the kernel): what one costs in this VM.
 */
static void reference_clock(void)
{
	double v[64];
	long n = 200000, i;
	int r;

	pin(bench_cpu);
	for (r = 0; r < runs; r++) {
		unsigned long long t = now_ns();

		for (i = 0; i < n; i++)
			now_ns();
		v[r] = (double)(now_ns() - t) / n;
	}
	emit("reference", "clock read (vDSO clock_gettime)", "ns", "kernel", v, runs);
}

static void section_cost(void)
{
	enum state states[3];
	int nstates, w, r, s;

	if (have_recount) {
		states[0] = OFF;
		states[1] = ON;
		states[2] = ALL;
		nstates = 3;
	} else {
		states[0] = KERNEL;
		nstates = 1;
	}
	reference_clock();
	for (w = 0; w < (int)ARRAY_SIZE(workloads); w++) {
		const struct workload *wl = &workloads[w];
		double v[NR_STATES][64] = {};

		/* A warm-up, not counted. */
		wl->fn(wl->n / 20 + 1);
		for (r = 0; r < runs; r++) {
			for (s = 0; s < nstates; s++) {
				/* Rotate the order, run after run. */
				enum state st = states[(s + r) % nstates];

				set_state(st);
				v[st][r] = wl->fn(quick ? wl->n / 2 : wl->n);
			}
		}
		for (s = 0; s < nstates; s++)
			emit("cost", wl->name, "ns", state_names[states[s]], v[states[s]], runs);
	}
	unpin();
	if (have_recount)
		set_state(ON);
}

/*
 * The timerlat tracer's user-space mode (Documentation/trace/timerlat-tracer.rst):
 * a thread pinned to the measured CPU reads osnoise/per_cpu/cpuN/timerlat_fd
 * in a loop. Each read arms a timer and sleeps; the tracer records the IRQ
 * latency of the timer, the thread latency when the thread runs, and when
 * the thread comes back to read again, the user-return latency: the return
 * to user mode and the entry back, which recount's transitions are part of.
 */
#define TRACING		"/sys/kernel/tracing"
#define TIMERLAT_RUNS	200	/* activations per run, 1 ms apart */

static const char *const timerlat_contexts[] = { "irq", "thread", "user-ret" };
#define NR_CONTEXTS	ARRAY_SIZE(timerlat_contexts)

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One run: the median and the maximum of each context's latency, in ns. */
static int timerlat_run(double median[NR_CONTEXTS], double max[NR_CONTEXTS])
{
	static double v[NR_CONTEXTS][TIMERLAT_RUNS * 2];
	int n[NR_CONTEXTS] = {}, c, fd, i;
	char path[128], line[512];
	FILE *f;

	/* Empty the buffer of the previous run. */
	fd = open(TRACING "/trace", O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	close(fd);
	pin(bench_cpu);
	snprintf(path, sizeof(path), TRACING "/osnoise/per_cpu/cpu%d/timerlat_fd", bench_cpu);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	for (i = 0; i < TIMERLAT_RUNS; i++)
		if (read(fd, line, sizeof(line)) < 0)
			break;
	close(fd);

	f = fopen(TRACING "/trace", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " context ");
		char ctx[16];
		double lat;

		if (!p || sscanf(p, " context %15s timer_latency %lf ns", ctx, &lat) != 2)
			continue;
		for (c = 0; c < (int)NR_CONTEXTS; c++)
			if (!strcmp(ctx, timerlat_contexts[c]) && n[c] < TIMERLAT_RUNS * 2)
				v[c][n[c]++] = lat;
	}
	fclose(f);
	for (c = 0; c < (int)NR_CONTEXTS; c++) {
		if (!n[c])
			return -1;
		qsort(v[c], n[c], sizeof(v[c][0]), cmp_double);
		median[c] = v[c][n[c] / 2];
		max[c] = v[c][n[c] - 1];
	}
	return 0;
}

static void section_timerlat(void)
{
	static double med[NR_STATES][NR_CONTEXTS][64], max[NR_STATES][NR_CONTEXTS][64];
	enum state states[] = { OFF, ON, ALL };
	int nstates = ARRAY_SIZE(states), r, s, c, nruns = quick ? 3 : runs;
	char name[64];

	mkdir(TRACING, 0755);
	mount("nodev", TRACING, "tracefs", 0, NULL);
	if (write_file(TRACING "/current_tracer", "nop") ||
	    write_file(TRACING "/osnoise/options", "NO_OSNOISE_WORKLOAD") ||
	    write_file(TRACING "/osnoise/timerlat_period_us", "1000") ||
	    write_file(TRACING "/current_tracer", "timerlat")) {
		fprintf(stderr, "recount-bench: no timerlat tracer (CONFIG_TIMERLAT_TRACER): %s\n",
			strerror(errno));
		return;
	}
	for (r = 0; r < nruns; r++) {
		for (s = 0; s < nstates; s++) {
			enum state st = states[(s + r) % nstates];
			double m[NR_CONTEXTS], x[NR_CONTEXTS];

			set_state(st);
			if (timerlat_run(m, x))
				goto out;
			for (c = 0; c < (int)NR_CONTEXTS; c++) {
				med[st][c][r] = m[c];
				max[st][c][r] = x[c];
			}
		}
	}
out:
	write_file(TRACING "/current_tracer", "nop");
	unpin();
	if (r < nruns) {
		fprintf(stderr, "recount-bench: timerlat run %d failed: %s\n", r, strerror(errno));
		return;
	}
	for (c = 0; c < (int)NR_CONTEXTS; c++) {
		for (s = 0; s < nstates; s++) {
			snprintf(name, sizeof(name), "timerlat %s latency, median", timerlat_contexts[c]);
			emit("timerlat", name, "ns", state_names[states[s]], med[states[s]][c], nruns);
			snprintf(name, sizeof(name), "timerlat %s latency, max", timerlat_contexts[c]);
			emit("timerlat", name, "ns", state_names[states[s]], max[states[s]][c], nruns);
		}
	}
	set_state(ON);
}

/* taskstats, over raw generic netlink. */

/* The sizes of the last replies, for the report. */
static ssize_t recount_reply_bytes, recount_lean_reply_bytes, taskstats_reply_bytes;

struct tsnl {
	int fd;
	__u16 family;
	__u32 seq;
};

struct genl_req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char buf[256];
};

static void put_attr(struct genl_req *r, __u16 type, const void *data, int len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void req_init(struct genl_req *r, __u16 type, __u8 cmd, __u32 seq)
{
	memset(r, 0, sizeof(r->n) + sizeof(r->g));
	r->n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->n.nlmsg_type = type;
	r->n.nlmsg_flags = NLM_F_REQUEST;
	r->n.nlmsg_seq = seq;
	r->g.cmd = cmd;
	r->g.version = 1;
}

static int ts_open(struct tsnl *t)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct genl_req r;
	char buf[4096];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct nlattr *a;
	int len;

	t->fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (t->fd < 0 || bind(t->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	req_init(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, ++t->seq);
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME, strlen(TASKSTATS_GENL_NAME) + 1);
	if (send(t->fd, &r, r.n.nlmsg_len, 0) < 0)
		return -1;
	len = recv(t->fd, buf, sizeof(buf), 0);
	if (len <= 0 || h->nlmsg_type == NLMSG_ERROR)
		return -1;
	len = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	for (a = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN); len >= NLA_HDRLEN;
	     len -= NLA_ALIGN(a->nla_len), a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			t->family = *(__u16 *)((char *)a + NLA_HDRLEN);
	return t->family ? 0 : -1;
}

/* Find the struct taskstats in a reply or exit record. */
static const struct taskstats *ts_find(const struct nlmsghdr *h)
{
	const struct nlattr *a, *b;
	int len = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), blen;

	for (a = (const void *)((const char *)NLMSG_DATA(h) + GENL_HDRLEN); len >= NLA_HDRLEN;
	     len -= NLA_ALIGN(a->nla_len), a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len))) {
		if (a->nla_type != TASKSTATS_TYPE_AGGR_PID && a->nla_type != TASKSTATS_TYPE_AGGR_TGID)
			continue;
		blen = a->nla_len - NLA_HDRLEN;
		for (b = (const void *)((const char *)a + NLA_HDRLEN); blen >= NLA_HDRLEN;
		     blen -= NLA_ALIGN(b->nla_len),
		     b = (const void *)((const char *)b + NLA_ALIGN(b->nla_len)))
			if (b->nla_type == TASKSTATS_TYPE_STATS)
				return (const void *)((const char *)b + NLA_HDRLEN);
	}
	return NULL;
}

static int ts_get(struct tsnl *t, __u32 pid, struct taskstats *out)
{
	struct genl_req r;
	char buf[2048];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	const struct taskstats *s;

	req_init(&r, t->family, TASKSTATS_CMD_GET, ++t->seq);
	put_attr(&r, TASKSTATS_CMD_ATTR_PID, &pid, sizeof(pid));
	if (send(t->fd, &r, r.n.nlmsg_len, 0) < 0)
		return -1;
	taskstats_reply_bytes = recv(t->fd, buf, sizeof(buf), 0);
	if (taskstats_reply_bytes <= 0)
		return -1;
	if (h->nlmsg_type == NLMSG_ERROR)
		return -1;
	s = ts_find(h);
	if (!s)
		return -1;
	memcpy(out, s, sizeof(*out));
	return 0;
}

/*
 * recount's get and dump as a client would issue them: no ACK asked (the
 * reply says it all), each record's attributes walked to its pid, as ts_get()
 * walks taskstats' to its struct. (The selftests' client asks for ACKs and
 * decodes every attribute: it checks, this measures.)
 */
static const struct nlattr *recount_find(const struct nlmsghdr *h, __u16 type)
{
	const struct nlattr *a;
	int len = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

	for (a = (const void *)((const char *)NLMSG_DATA(h) + GENL_HDRLEN); len >= NLA_HDRLEN;
	     len -= NLA_ALIGN(a->nla_len), a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len)))
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
	return NULL;
}

/*
 * Lean records, as a poller asks for them: what a reply says once, once,
 * and the waits in the versioned runtime struct (the runtime-info ABI
 * taskstats' struct compares with), not also in the runtime nest.
 */
static void put_lean(struct genl_req *r)
{
	__u32 version = RECOUNT_RUNTIME_VERSION;

	put_attr(r, RECOUNT_A_LEAN, NULL, 0);
	put_attr(r, RECOUNT_A_RUNTIME_VERSION, &version, sizeof(version));
}

static int recount_get(struct rnl *nl, __u32 pid, bool lean)
{
	struct genl_req r;
	__u64 buf[1024];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	const struct nlattr *a;
	ssize_t got;

	req_init(&r, nl->family, RECOUNT_CMD_GET, ++nl->seq);
	r.g.version = RECOUNT_FAMILY_VERSION;
	put_attr(&r, RECOUNT_A_PID, &pid, sizeof(pid));
	if (lean)
		put_lean(&r);
	if (send(nl->fd, &r, r.n.nlmsg_len, 0) < 0)
		return -1;
	got = recv(nl->fd, buf, sizeof(buf), 0);
	if (got <= 0)
		return -1;
	if (lean)
		recount_lean_reply_bytes = got;
	else
		recount_reply_bytes = got;
	if (h->nlmsg_type != nl->family)
		return -1;
	a = recount_find(h, RECOUNT_A_PID);
	return a && *(__u32 *)((char *)a + NLA_HDRLEN) == pid ? 0 : -1;
}

/* Dump the threads of @tgid, @lean or not; returns how many records came, or -1. */
static int recount_dump(struct rnl *nl, __u32 tgid, bool lean)
{
	static __u64 buf[32768];
	struct genl_req r;
	__u32 scope = RECOUNT_SCOPE_THREADS;
	int n = 0;

	req_init(&r, nl->family, RECOUNT_CMD_GET, ++nl->seq);
	r.n.nlmsg_flags |= NLM_F_DUMP;
	r.g.version = RECOUNT_FAMILY_VERSION;
	put_attr(&r, RECOUNT_A_SCOPE, &scope, sizeof(scope));
	put_attr(&r, RECOUNT_A_TGID, &tgid, sizeof(tgid));
	if (lean)
		put_lean(&r);
	if (send(nl->fd, &r, r.n.nlmsg_len, 0) < 0)
		return -1;
	for (;;) {
		ssize_t got = recv(nl->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		int len = got;

		if (got <= 0)
			return -1;
		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return n;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -1;
			n += recount_find(h, RECOUNT_A_PID) != NULL;
		}
	}
}

/* Read the file /proc/@tgid/task/@tid/@name into @buf. */
static int read_task_file(pid_t tgid, pid_t tid, const char *name, char *buf, int size)
{
	char path[64];
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", tgid, tid, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* /proc/PID/task/TID/stat and schedstat, read and parsed. */
static int proc_read(pid_t tgid, pid_t tid, unsigned long long *utime, unsigned long long *rt)
{
	char buf[1024], *p;

	if (read_task_file(tgid, tid, "stat", buf, sizeof(buf)))
		return -1;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu", utime) != 1)
		return -1;
	if (read_task_file(tgid, tid, "schedstat", buf, sizeof(buf)))
		return -1;
	return sscanf(buf, "%llu", rt) == 1 ? 0 : -1;
}

static void *sleeper(void *arg)
{
	int *fd = arg;
	char c;

	/* Until the write end closes. */
	while (read(*fd, &c, 1) > 0)
		;
	return NULL;
}

static void section_read(void)
{
	int n = quick ? 300 : 2000, r, k, fd[2];
	double v[4][64] = {};
	struct rnl nl = {};
	struct tsnl ts = {};
	struct taskstats st;
	unsigned long long t, a, b;
	pthread_t th;
	pid_t tid = 0;
	bool has_ts;

	if (pipe(fd))
		die("pipe");
	pthread_create(&th, NULL, sleeper, &fd[0]);
	/* The sleeper's tid: the highest in the task directory. */
	{
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;

		while ((e = readdir(d)))
			if (atoi(e->d_name) > tid)
				tid = atoi(e->d_name);
		closedir(d);
	}
	if (rnl_open(&nl))
		die("recount netlink");
	has_ts = !ts_open(&ts) && !ts_get(&ts, tid, &st);
	for (r = 0; r < runs; r++) {
		t = now_ns();
		for (k = 0; k < n; k++)
			if (recount_get(&nl, tid, false))
				die("recount get");
		v[0][r] = (double)(now_ns() - t) / n;
		t = now_ns();
		for (k = 0; k < n; k++)
			if (recount_get(&nl, tid, true))
				die("recount get, lean");
		v[3][r] = (double)(now_ns() - t) / n;
		if (has_ts) {
			t = now_ns();
			for (k = 0; k < n; k++)
				if (ts_get(&ts, tid, &st))
					die("taskstats get");
			v[1][r] = (double)(now_ns() - t) / n;
		}
		t = now_ns();
		for (k = 0; k < n; k++)
			if (proc_read(getpid(), tid, &a, &b))
				die("/proc read");
		v[2][r] = (double)(now_ns() - t) / n;
	}
	emit("read", "read one thread", "ns", "recount", v[0], runs);
	emit("read", "read one thread", "ns", "recount-lean", v[3], runs);
	if (has_ts)
		emit("read", "read one thread", "ns", "taskstats", v[1], runs);
	emit("read", "read one thread", "ns", "proc", v[2], runs);
	{
		char f[128];

		snprintf(f, sizeof(f),
			 "\"recount_bytes\":%zd,\"recount_lean_bytes\":%zd,\"taskstats_bytes\":%zd",
			 recount_reply_bytes, recount_lean_reply_bytes, taskstats_reply_bytes);
		emit_count("read", "reply sizes", f);
	}
	close(fd[1]);
	pthread_join(th, NULL);
	close(fd[0]);
	rnl_close(&nl);
	close(ts.fd);
}

/*
 * Reading every thread of a process with 1,000, 10,000 and 50,000 threads:
 * one recount dump, one taskstats request per thread, and /proc. The
 * 10,000-thread row keeps its old name and carries the target; the others
 * show how the cost grows with the number of threads.
 */
static const int readall_sizes[] = { 1000, 10000, 50000 };
#define MANY 50000

/* The ids of the calling process's threads; returns how many. */
static int list_tids(pid_t *tids, int room)
{
	struct dirent *e;
	int n = 0;
	DIR *d;

	d = opendir("/proc/self/task");
	if (!d)
		die("/proc/self/task");
	while ((e = readdir(d)) && n < room)
		if (e->d_name[0] != '.')
			tids[n++] = atoi(e->d_name);
	closedir(d);
	return n;
}

static void readall_measure(struct rnl *nl, struct tsnl *ts, bool has_ts, int size,
			    const pid_t *tids, int ntids)
{
	int nruns = quick ? 2 : (size > 10000 ? 3 : 5), r, k, got;
	unsigned long long t, a, b;
	double v[4][16] = {};
	struct taskstats st;
	char name[64], f[64];
	struct dirent *e;
	DIR *d;

	if (size == 10000)
		snprintf(name, sizeof(name), "read all threads");
	else
		snprintf(name, sizeof(name), "read all threads, %d", size);
	for (r = 0; r < nruns; r++) {
		for (k = 0; k < 2; k++) {
			t = now_ns();
			got = recount_dump(nl, getpid(), k);
			v[k ? 3 : 0][r] = (now_ns() - t) / 1e3;
			if (got < 0)
				die("recount dump");
			if (got < ntids) {
				printf("recount-bench: the dump listed %d of %d threads\n", got, ntids);
				fflush(stdout);
			}
		}
		if (has_ts) {
			t = now_ns();
			for (k = 0; k < ntids; k++)
				if (ts_get(ts, tids[k], &st))
					die("taskstats get");
			v[1][r] = (now_ns() - t) / 1e3;
		}
		t = now_ns();
		d = opendir("/proc/self/task");
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				proc_read(getpid(), atoi(e->d_name), &a, &b);
		closedir(d);
		v[2][r] = (now_ns() - t) / 1e3;
	}
	emit("readall", name, "us", "recount", v[0], nruns);
	emit("readall", name, "us", "recount-lean", v[3], nruns);
	if (has_ts)
		emit("readall", name, "us", "taskstats", v[1], nruns);
	emit("readall", name, "us", "proc", v[2], nruns);
	snprintf(f, sizeof(f), "\"threads\":%d,\"size\":%d", ntids, size);
	emit_count("readall", "threads", f);
}

static void section_readall(void)
{
	pid_t *tids = calloc(MANY + 64, sizeof(pid_t));
	pthread_t *th = calloc(MANY, sizeof(pthread_t));
	struct rnl nl = {};
	struct tsnl ts = {};
	struct taskstats st;
	pthread_attr_t attr;
	int ntids, started = 0, i, k, fd[2];
	bool has_ts;

	/* 50,000 threads: more than the default pid_max and map count allow. */
	write_file("/proc/sys/kernel/threads-max", "200000");
	write_file("/proc/sys/kernel/pid_max", "262144");
	write_file("/proc/sys/vm/max_map_count", "262144");
	if (pipe(fd))
		die("pipe");
	pthread_attr_init(&attr);
	/* The smallest stack the C library takes: 50,000 of them must fit. */
	if (pthread_attr_setstacksize(&attr, 65536))
		pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
	if (rnl_open(&nl))
		die("recount netlink");
	ntids = list_tids(tids, MANY + 64);
	has_ts = !ts_open(&ts) && !ts_get(&ts, tids[0], &st);
	for (i = 0; i < (int)ARRAY_SIZE(readall_sizes); i++) {
		int size = readall_sizes[i];

		for (; started < size - 1; started++)
			if (pthread_create(&th[started], &attr, sleeper, &fd[0]))
				break;
		if (started < size - 1) {
			printf("recount-bench: only %d of %d threads started\n", started + 1, size);
			fflush(stdout);
			break;
		}
		ntids = list_tids(tids, MANY + 64);
		readall_measure(&nl, &ts, has_ts, size, tids, ntids);
	}
	close(fd[1]);
	for (k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	close(fd[0]);
	rnl_close(&nl);
	close(ts.fd);
	free(tids);
	free(th);
}

/* Exit records: one listener of each kind, a storm of thread exits. */

/* The storm's threads are named, so that only their exits count. */
#define STORM_COMM "storm"

struct exit_count {
	struct rnl nl;		/* recount's listener */
	int fd;			/* taskstats' listener */
	pid_t tgid;
	long received, missed, enobufs;
	bool slow;		/* a busy consumer: 2 ms per record */
	bool stop;
};

static void *recount_listener(void *arg)
{
	struct exit_count *c = arg;
	struct rnl_record rec;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		int r = rnl_next_exit(&c->nl, &rec, 100);

		if (r < 0 && r != -ENOBUFS && r != -EAGAIN && r != -EINTR)
			break;
		if (r == -ENOBUFS)
			c->enobufs++;
		if (r != 1)
			continue;
		c->missed += rec.missed;
		if (rec.tgid == (__u32)c->tgid && rec.has_pid && !strcmp(rec.comm, STORM_COMM))
			c->received++;
		if (c->slow)
			usleep(2000);
	}
	return NULL;
}

static void *taskstats_listener(void *arg)
{
	struct exit_count *c = arg;
	char buf[16384];

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		int len = n;

		if (n < 0) {
			if (errno == ENOBUFS)
				c->enobufs++;
			else
				usleep(1000);
			continue;
		}
		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			const struct taskstats *s = ts_find(h);

			if (s && s->ac_tgid == (__u32)c->tgid && !strcmp(s->ac_comm, STORM_COMM))
				c->received++;
		}
		if (c->slow)
			usleep(2000);
	}
	return NULL;
}

static void *storm_thread(void *arg)
{
	prctl(PR_SET_NAME, STORM_COMM);
	return arg;
}

struct storm {
	long n;
	long interval_ns;	/* between exits; 0: as fast as possible */
};

/* After a storm, one exit whose record carries the count missed before it. */
static struct storm last_storm = { 1, 0 };

static void *storm_creator(void *arg)
{
	struct storm *s = arg;
	unsigned long long next = now_ns();
	pthread_t th;
	long i;

	/* The creators' own exits count too (the last one's is main's: none). */
	if (arg != &last_storm)
		prctl(PR_SET_NAME, STORM_COMM);

	for (i = 0; i < s->n; i++) {
		if (s->interval_ns) {
			while (now_ns() < next)
				;
			next += s->interval_ns;
		}
		if (pthread_create(&th, NULL, storm_thread, NULL))
			die("pthread_create");
		pthread_join(th, NULL);
	}
	return NULL;
}

static void section_exits(void)
{
	/*
	 * Exits per second (TCG makes about 1,500 with one thread); 0: flat out,
	 * the last time with listeners that take 2 ms per record.
	 */
	static const long rates[] = { 200, 1000, 0, 0 };
	long n = quick ? 500 : 4000;
	/* Time for the listeners to drain, before and after the last exit. */
	useconds_t settle = quick ? 300000 : 1000000;
	char cpus[32];
	int ri;

	snprintf(cpus, sizeof(cpus), "0-%ld", sysconf(_SC_NPROCESSORS_CONF) - 1);
	for (ri = 0; ri < (int)ARRAY_SIZE(rates); ri++) {
		bool slow = ri == ARRAY_SIZE(rates) - 1;
		struct exit_count rc = { .tgid = getpid(), .slow = slow };
		struct exit_count tc = { .tgid = getpid(), .slow = slow };
		struct rnl_reply reply;
		struct tsnl ts = {};
		struct genl_req req;
		pthread_t lr, lt, creators[4];
		struct storm s[4];
		int ncreators = rates[ri] ? 1 : 4, k;
		unsigned long long t;
		char f[512];

		if (rnl_open(&rc.nl) || rnl_listen(&rc.nl, true, cpus, &reply))
			die("recount listener");
		if (!ts_open(&ts)) {
			req_init(&req, ts.family, TASKSTATS_CMD_GET, ++ts.seq);
			put_attr(&req, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, cpus, strlen(cpus) + 1);
			if (send(ts.fd, &req, req.n.nlmsg_len, 0) < 0)
				die("taskstats register");
			tc.fd = ts.fd;
		} else {
			tc.fd = -1;
		}
		pthread_create(&lr, NULL, recount_listener, &rc);
		if (tc.fd >= 0)
			pthread_create(&lt, NULL, taskstats_listener, &tc);
		t = now_ns();
		for (k = 0; k < ncreators; k++) {
			s[k].n = n / ncreators;
			s[k].interval_ns = rates[ri] ? 1000000000L / rates[ri] : 0;
			pthread_create(&creators[k], NULL, storm_creator, &s[k]);
		}
		for (k = 0; k < ncreators; k++)
			pthread_join(creators[k], NULL);
		t = now_ns() - t;
		/* A last exit carries the count of records missed before it. */
		usleep(settle);
		storm_creator(&last_storm);
		usleep(settle);
		__atomic_store_n(&rc.stop, true, __ATOMIC_RELEASE);
		__atomic_store_n(&tc.stop, true, __ATOMIC_RELEASE);
		pthread_join(lr, NULL);
		if (tc.fd >= 0)
			pthread_join(lt, NULL);
		snprintf(f, sizeof(f),
			 "\"rate\":%ld,\"achieved_rate\":%.0f,\"exits\":%ld,"
			 "\"recount\":{\"received\":%ld,\"missed_reported\":%ld,\"enobufs\":%ld},"
			 "\"taskstats\":%s%ld,\"lost\":%ld,\"enobufs\":%ld}",
			 rates[ri], (n / ncreators * ncreators) * 1e9 / t,
			 n / ncreators * ncreators + ncreators + 1,
			 rc.received, rc.missed, rc.enobufs,
			 tc.fd >= 0 ? "{\"received\":" : "{\"unavailable\":true,\"received\":",
			 tc.received, n / ncreators * ncreators + ncreators + 1 - tc.received,
			 tc.enobufs);
		emit_count("exits", rates[ri] ? "paced" : slow ? "flat out, slow listeners" : "flat out",
			   f);
		rnl_close(&rc.nl);
		if (tc.fd >= 0)
			close(ts.fd);
	}
}

int main(int argc, char **argv)
{
	int opt, i;

	while ((opt = getopt(argc, argv, "qr:c:p:")) != -1) {
		switch (opt) {
		case 'q':
			quick = true;
			runs = 5;
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		case 'c':
			bench_cpu = atoi(optarg);
			break;
		case 'p':
			power_model = optarg;
			break;
		default:
			fprintf(stderr, "usage: recount-bench [-q] [-r RUNS] [-c CPU] [-p MODEL] [SECTION...]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > 64)
		runs = 15;
	have_recount = !access("/proc/sys/kernel/recount", F_OK);
	printf("BENCH {\"section\":\"machine\",\"recount\":%s,\"runs\":%d,\"quick\":%s}\n",
	       have_recount ? "true" : "false", runs, quick ? "true" : "false");
	/* Delay accounting on, as the taskstats comparisons need it. */
	write_file("/proc/sys/kernel/task_delayacct", "1");
	if (optind == argc) {
		static char *all[] = { "cost", "timerlat", "read", "readall", "exits" };

		argv = all;
		argc = ARRAY_SIZE(all);
		optind = 0;
	}
	for (i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "cost")) {
			section_cost();
		} else if (!have_recount) {
			continue;	/* the rest compare recount with the others */
		} else if (!strcmp(argv[i], "timerlat")) {
			section_timerlat();
		} else if (!strcmp(argv[i], "read")) {
			set_state(ALL);
			section_read();
		} else if (!strcmp(argv[i], "readall")) {
			set_state(ALL);
			section_readall();
		} else if (!strcmp(argv[i], "exits")) {
			set_state(ALL);
			section_exits();
		} else {
			fprintf(stderr, "recount-bench: unknown section '%s'\n", argv[i]);
			return 2;
		}
	}
	printf("BENCH {\"section\":\"done\"}\n");
	return 0;
}
