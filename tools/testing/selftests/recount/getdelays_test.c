// SPDX-License-Identifier: GPL-2.0
/*
 * recount: tools/getdelays against the real kernel, in every mode: queries
 * of threads, processes and CPUs, command mode, dumps, intervals, the top
 * view, listener mode with a cpumask and its log, cgroups, taskstats
 * figures, JSON, CSV and OpenMetrics, and its errors and exit codes.
 *
 * getdelays is built next to this test (TEST_GEN_PROGS_EXTENDED); $GETDELAYS
 * names another one.
 */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>

#include "../kselftest_harness.h"
#include "../../../getdelays/json_check.h"
#include "recount_fixture.h"

static char getdelays[PATH_MAX];

static const char *getdelays_path(void)
{
	char self[PATH_MAX];
	ssize_t n;

	if (getdelays[0])
		return getdelays;
	if (getenv("GETDELAYS")) {
		snprintf(getdelays, sizeof(getdelays), "%s", getenv("GETDELAYS"));
		return getdelays;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return "getdelays";
	self[n] = '\0';
	snprintf(getdelays, sizeof(getdelays), "%s/getdelays", dirname(self));
	return getdelays;
}

/* A run of getdelays: its output, error output and exit status. */
struct run {
	pid_t pid;
	int out_fd, err_fd;
	char out[1 << 20], err[1 << 14];
	size_t out_len, err_len;
	int status;		/* exit status, or 128 + signal */
	uid_t uid;		/* run as this user, if not 0 */
};

static int start(struct run *r, char *const argv[])
{
	int out[2], err[2];

	r->out_len = 0;
	r->err_len = 0;
	r->out[0] = '\0';
	r->err[0] = '\0';
	if (pipe(out) || pipe(err))
		return -1;
	r->pid = fork();
	if (r->pid < 0)
		return -1;
	if (r->pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		if (r->uid && become_nobody())
			_exit(126);
		execv(getdelays_path(), argv);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	r->out_fd = out[0];
	r->err_fd = err[0];
	return 0;
}

/* Read what is there to read, up to @timeout_ms; returns 0 at EOF on both. */
static int pump(struct run *r, int timeout_ms)
{
	struct pollfd pfd[2] = { { r->out_fd, POLLIN }, { r->err_fd, POLLIN } };
	int open = (r->out_fd >= 0) + (r->err_fd >= 0), i;

	if (!open)
		return 0;
	pfd[0].fd = r->out_fd;
	pfd[1].fd = r->err_fd;
	if (poll(pfd, 2, timeout_ms) <= 0)
		return open;
	for (i = 0; i < 2; i++) {
		char *buf = i ? r->err : r->out;
		size_t *len = i ? &r->err_len : &r->out_len;
		size_t size = i ? sizeof(r->err) : sizeof(r->out);
		int *fd = i ? &r->err_fd : &r->out_fd;
		ssize_t n;

		if (*fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP)))
			continue;
		/* Full: what comes is dropped, not left to block getdelays. */
		if (*len == size - 1) {
			char sink[4096];

			if (read(*fd, sink, sizeof(sink)) > 0)
				continue;
		}
		n = read(*fd, buf + *len, size - 1 - *len);
		if (n <= 0) {
			close(*fd);
			*fd = -1;
			continue;
		}
		*len += n;
		buf[*len] = '\0';
	}
	return (r->out_fd >= 0) + (r->err_fd >= 0);
}

/* Wait until @what shows in @buf, r->out or r->err; false after 10 s. */
static bool wait_in(struct run *r, const char *buf, const char *what)
{
	unsigned long long end = now_ns() + 10 * NSEC_PER_SEC;

	while (!strstr(buf, what) && now_ns() < end)
		if (!pump(r, 10))
			break;
	return strstr(buf, what);
}

/* Wait until @what shows in the error output; false after 10 s. */
static bool wait_for(struct run *r, const char *what)
{
	return wait_in(r, r->err, what);
}

static int finish(struct run *r)
{
	int status;

	while (pump(r, 100))
		;
	waitpid(r->pid, &status, 0);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return r->status;
}

/* Wait until @what shows in the output; false after 10 s. */
static bool wait_out(struct run *r, const char *what)
{
	return wait_in(r, r->out, what);
}

/*
 * Stop a listener with -l once @what shows: other exits on its CPUs (a
 * shell's, a timeout's watcher) may come first.
 */
static int stop_listener(struct run *r, const char *what)
{
	bool seen = wait_out(r, what);

	kill(r->pid, SIGINT);
	return finish(r) || !seen ? -1 : 0;
}

/* Run getdelays with @argv to its end: its exit status, or -1. */
static int run_to_end(struct run *r, char *const argv[])
{
	return start(r, argv) ? -1 : finish(r);
}

/*
 * Run getdelays with @argv, its output into @path and its errors nowhere;
 * its exit status.
 */
static int run_into(const char *path, char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		int out = open(path, O_WRONLY), err = open("/dev/null", O_WRONLY);

		if (out < 0 || err < 0 || dup2(out, STDOUT_FILENO) < 0 ||
		    dup2(err, STDERR_FILENO) < 0)
			_exit(126);
		close(out);
		close(err);
		execv(getdelays_path(), argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Run getdelays with the arguments given, to its end. */
#define GETDELAYS(r, ...) \
	run_to_end(r, (char *const []){ "getdelays", __VA_ARGS__, NULL })

static char *num(char *buf, long v)
{
	sprintf(buf, "%ld", v);
	return buf;
}

/* Each line of @s is a valid JSON object; returns how many, -1 if one is not. */
static int json_lines(const char *s)
{
	int n = 0;

	while (*s) {
		const char *end = strchr(s, '\n');

		if (!end || *s != '{' || !json_valid(s, end - s))
			return -1;
		n++;
		s = end + 1;
	}
	return n;
}

static bool has_pmu(struct rnl *nl)
{
	struct rnl_reply r;

	return !rnl_get_info(nl, &r) && (r.rec.metrics & RECOUNT_METRIC_CYCLES);
}

static struct run *new_run(void)
{
	return calloc(1, sizeof(struct run));
}

/* A thread's query, as text and as JSON that agrees with the kernel. */
TEST_F(recount, query_thread)
{
	struct run *r = new_run();
	struct rnl_record rec;
	struct worker w;
	unsigned long long v;
	char id[16], title[64];

	ASSERT_EQ(0, worker_start(&w, work_spin_user, 30 * NSEC_PER_MSEC, -1));
	ASSERT_EQ(0, worker_run(&w));
	ASSERT_EQ(0, wait_at_rest(&self->nl, w.tid, &rec));

	ASSERT_EQ(0, GETDELAYS(r, "-p", num(id, w.tid))) TH_LOG("%s", r->err);
	snprintf(title, sizeof(title), "thread %d (", w.tid);
	EXPECT_NE(NULL, strstr(r->out, title)) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(r->out, "\n  time "));
	EXPECT_NE(NULL, strstr(r->out, "waited for"));
	EXPECT_EQ(has_pmu(&self->nl), !!strstr(r->out, "\n  CPI "));

	ASSERT_EQ(0, GETDELAYS(r, "--json", "-p", id)) TH_LOG("%s", r->err);
	ASSERT_EQ(1, json_lines(r->out)) TH_LOG("%s", r->out);
	ASSERT_TRUE(json_member_u64(r->out, "pid", &v));
	EXPECT_EQ(w.tid, v);
	/* At rest, the thread's figures are exactly the kernel's. */
	ASSERT_TRUE(json_member_u64(r->out, "user_time_ns", &v));
	EXPECT_EQ(rec.usage.user, v);
	ASSERT_TRUE(json_member_u64(r->out, "kernel_time_ns", &v));
	EXPECT_EQ(rec.usage.kernel, v);
	if (has_pmu(&self->nl)) {
		EXPECT_TRUE(json_member_u64(r->out, "cycles", &v) && v > 0);
	} else {
		EXPECT_TRUE(json_member_null(r->out, "cycles"));
		EXPECT_TRUE(json_member_null(r->out, "cpi"));
	}
	worker_stop(&w);
	free(r);
}

/* A process's and a CPU's queries. */
TEST_F(recount, query_process_and_cpu)
{
	struct run *r = new_run();
	unsigned long long v;
	char id[16];
	size_t len;

	ASSERT_EQ(0, GETDELAYS(r, "--json", "-t", num(id, getpid()))) TH_LOG("%s", r->err);
	ASSERT_EQ(1, json_lines(r->out)) TH_LOG("%s", r->out);
	EXPECT_TRUE(json_member_u64(r->out, "tgid", &v) && v == (unsigned long long)getpid());
	EXPECT_NE(NULL, json_member(r->out, "exited", &len));
	EXPECT_NE(NULL, strstr(r->out, "\"type\":\"process\""));

	ASSERT_EQ(0, GETDELAYS(r, "--json", "-P", "0")) TH_LOG("%s", r->err);
	ASSERT_EQ(1, json_lines(r->out)) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(r->out, "\"type\":\"cpu\""));
	EXPECT_TRUE(json_member_u64(r->out, "idle_time_ns", &v) && v > 0);

	ASSERT_EQ(0, GETDELAYS(r, "-P", "0")) TH_LOG("%s", r->err);
	EXPECT_NE(NULL, strstr(r->out, "cpu 0 (")) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(r->out, "\n  idle "));

	ASSERT_EQ(0, GETDELAYS(r, "--json", "-I")) TH_LOG("%s", r->err);
	EXPECT_EQ(1, json_lines(r->out)) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(r->out, "\"type\":\"info\""));
	free(r);
}

/*
 * Command mode: the command's process totals, what the children it reaped
 * consumed (a shell's loop in a child shell), and its exit status.
 */
TEST_F(recount, command_mode)
{
	struct run *r = new_run();
	unsigned long long v = 0, own = 0;
	const char *children;
	char *copy;
	size_t len;

	EXPECT_EQ(3, GETDELAYS(r, "--json", "-c", "sh", "-c",
			       "sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'; exit 3"));
	ASSERT_EQ(1, json_lines(r->out)) TH_LOG("%s %s", r->out, r->err);
	EXPECT_NE(NULL, strstr(r->out, "\"type\":\"process\""));
	EXPECT_NE(NULL, strstr(r->out, "\"comm\":\"sh\""));
	EXPECT_TRUE(json_member_u64(r->out, "time_ns", &v) && v > 0);
	EXPECT_TRUE(json_member_u64(r->out, "parent_tgid", &v) && v > 0);
	children = json_member(r->out, "children", &len);
	ASSERT_NE(NULL, children) TH_LOG("%s", r->out);
	copy = strndup(children, len);
	/* The loop ran in the child: more than the command's shell itself. */
	EXPECT_TRUE(json_member_u64(copy, "user_time_ns", &v)) TH_LOG("%s", copy);
	EXPECT_TRUE(json_member_u64(r->out, "user_time_ns", &own));
	EXPECT_GT(v, own) TH_LOG("%s", r->out);
	free(copy);
	EXPECT_NE(NULL, json_member(r->out, "children_runtime", &len));

	/*
	 * As time(1): the command and what its children consumed. The shell
	 * runs a as a child, and execs b, its last command: one loop is the
	 * children's, the other the process's own.
	 */
	EXPECT_EQ(0, GETDELAYS(r, "--json", "-c", "sh", "-c",
			       "sh -c 'i=0; while [ $i -lt 9000 ]; do i=$((i+1)); done'; "
			       "sh -c 'i=0; while [ $i -lt 9000 ]; do i=$((i+1)); done'"));
	children = json_member(r->out, "children", &len);
	ASSERT_NE(NULL, children) TH_LOG("%s", r->out);
	copy = strndup(children, len);
	EXPECT_TRUE(json_member_u64(copy, "time_ns", &v)) TH_LOG("%s", copy);
	EXPECT_TRUE(json_member_u64(r->out, "time_ns", &own));
	EXPECT_GT(v, own / 4) TH_LOG("%s", r->out);
	EXPECT_GT(own, v / 4) TH_LOG("%s", r->out);
	free(copy);

	EXPECT_EQ(0, GETDELAYS(r, "-c", "sh", "-c", "sh -c true; true"));
	EXPECT_NE(NULL, strstr(r->out, " reaped children")) TH_LOG("%s", r->out);

	EXPECT_EQ(0, GETDELAYS(r, "-c", "true"));
	EXPECT_NE(NULL, strstr(r->out, "process ")) TH_LOG("%s", r->out);
	EXPECT_EQ(127, GETDELAYS(r, "-c", "/nonexistent"));
	free(r);
}

/* The PID column of the rows of a table, in order. */
static int table_pids(const char *out, pid_t *pids, int max)
{
	const char *line = strchr(out, '\n');
	int n = 0;

	while (line && line[1] && n < max) {
		pids[n++] = atoi(line + 1);
		line = strchr(line + 1, '\n');
	}
	return n;
}

/*
 * A dump of this process's threads, sorted by time, and its top rows. The
 * workers spin for 10, 120 and 40 ms, but a thread's start costs it time
 * too (37 ms in one run on a debug kernel under TCG): their order is that
 * of the times recount gives them once they are at rest.
 */
TEST_F(recount, dump_sorted)
{
	static const unsigned long long ms[] = { 10, 120, 40 };
	struct run *r = new_run();
	unsigned long long t[3];
	struct rnl_record rec;
	struct worker w[3];
	pid_t pids[64];
	int n, i, j, at[3];
	char id[16];

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, worker_start(&w[i], work_spin_user, ms[i] * NSEC_PER_MSEC, -1));
		ASSERT_EQ(0, worker_run(&w[i]));
	}
	for (i = 0; i < 3; i++) {
		AT_REST(w[i].tid, &rec);
		t[i] = rec.usage.user + rec.usage.kernel;
		TH_LOG("worker %d: %llu ms of spin, %llu us of time", w[i].tid, ms[i], t[i] / 1000);
	}
	/* The longest spin, 80 ms longer than the next, has the most time. */
	EXPECT_GT(t[1], t[0]);
	EXPECT_GT(t[1], t[2]);
	ASSERT_EQ(0, GETDELAYS(r, "-D", "threads", "-t", num(id, getpid()), "-s", "time"))
		TH_LOG("%s", r->err);
	EXPECT_EQ(0, strncmp(r->out, "    PID    TGID COMM", 20)) TH_LOG("%s", r->out);
	n = table_pids(r->out, pids, 64);
	for (i = 0; i < 3; i++) {
		for (at[i] = 0; at[i] < n && pids[at[i]] != w[i].tid; at[i]++)
			;
		EXPECT_LT(at[i], n) TH_LOG("worker %d not in\n%s", w[i].tid, r->out);
	}
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++)
			if (t[i] > t[j])
				EXPECT_LT(at[i], at[j]) TH_LOG("%s", r->out);

	ASSERT_EQ(0, GETDELAYS(r, "-D", "threads", "-t", id, "-s", "pid", "-n", "2"));
	EXPECT_EQ(2, table_pids(r->out, pids, 64)) TH_LOG("%s", r->out);
	EXPECT_EQ(getpid(), pids[0]);

	ASSERT_EQ(0, GETDELAYS(r, "--json", "-D", "threads", "-t", id));
	EXPECT_EQ(4, json_lines(r->out)) TH_LOG("%s", r->out);
	for (i = 0; i < 3; i++)
		worker_stop(&w[i]);
	free(r);
}

/* Dumps of processes and CPUs, as JSON. */
TEST_F(recount, dump_json)
{
	struct run *r = new_run();
	char want[64];

	ASSERT_EQ(0, GETDELAYS(r, "--json", "-D", "processes")) TH_LOG("%s", r->err);
	EXPECT_GT(json_lines(r->out), 1) TH_LOG("%s", r->out);
	snprintf(want, sizeof(want), "\"type\":\"process\",\"tgid\":%d,", getpid());
	EXPECT_NE(NULL, strstr(r->out, want));

	ASSERT_EQ(0, GETDELAYS(r, "--json", "-D", "cpus")) TH_LOG("%s", r->err);
	EXPECT_EQ(get_nprocs_conf(), json_lines(r->out)) TH_LOG("%s", r->out);

	ASSERT_EQ(0, GETDELAYS(r, "-D", "cpus", "-s", "busy%")) TH_LOG("%s", r->err);
	EXPECT_EQ(0, strncmp(r->out, " CPU KIND", 9)) TH_LOG("%s", r->out);
	free(r);
}

/* Fork a child that exits with @code on @cpu; returns its pid once reaped. */
static pid_t exit_on(int cpu, int code)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (pin_self(cpu))
			_exit(100);
		_exit(code);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return pid;
}

/*
 * Listener mode with a cpumask: the exits on CPU 1 are printed, those on
 * CPU 0 not; without -l, getdelays stops when a process is over.
 */
TEST_F(recount, listener_cpumask)
{
	struct run *r = new_run();
	char *const argv[] = { "getdelays", "--json", "-l", "-m", "1", NULL };
	unsigned long long v;
	char want[64], unwanted[64];
	pid_t on0, on1;

	if (get_nprocs() < 2)
		SKIP(free(r); return, "needs two CPUs");
	ASSERT_EQ(0, start(r, argv));
	ASSERT_TRUE(wait_for(r, "listening for exits on CPUs 1")) TH_LOG("%s", r->err);
	on0 = exit_on(0, 4);
	on1 = exit_on(1, 5);
	snprintf(want, sizeof(want), "\"type\":\"process\",\"tgid\":%d,", on1);
	snprintf(unwanted, sizeof(unwanted), "\"tgid\":%d,", on0);
	/* Exits on CPU 1 only: on0's came first, on1's last. */
	ASSERT_EQ(0, stop_listener(r, want)) TH_LOG("%s\n%s", r->out, r->err);
	ASSERT_GE(json_lines(r->out), 2) TH_LOG("%s", r->out);
	EXPECT_EQ(NULL, strstr(r->out, unwanted)) TH_LOG("%s", r->out);
	/* The last record is the process's, with the exit code. */
	v = 0;
	EXPECT_NE(NULL, strstr(strstr(r->out, want), "\"exit\":{\"code\":1280,"));
	EXPECT_TRUE(json_member_u64(strstr(r->out, want) - 1, "start_time_ns", &v) && v > 0);
	free(r);
}

/* Listener mode: a table by default, -w writes JSON lines to a file. */
TEST_F(recount, listener_table_and_file)
{
	struct run *r = new_run();
	char file[] = "/tmp/getdelays-XXXXXX", cpus[16], want[32], *text;
	char *const argv[] = { "getdelays", "-m", cpus, "-l", "-w", file, "-r", "256K", "-v",
			       NULL };
	int fd, lines;
	pid_t pid;
	FILE *f;

	fd = mkstemp(file);
	ASSERT_GE(fd, 0);
	close(fd);
	snprintf(cpus, sizeof(cpus), "0-%d", get_nprocs_conf() - 1);
	ASSERT_EQ(0, start(r, argv));
	/* The kernel doubles the size asked, for its bookkeeping. */
	ASSERT_TRUE(wait_for(r, "(receive buffer 524288 bytes)")) TH_LOG("%s", r->err);
	pid = exit_on(0, 0);
	/* -v prints whole records; the file has them as JSON. */
	snprintf(want, sizeof(want), "exit of process %d (", pid);
	ASSERT_EQ(0, stop_listener(r, want)) TH_LOG("%s\n%s", r->out, r->err);
	text = calloc(1, 1 << 16);
	f = fopen(file, "r");
	ASSERT_NE(NULL, f);
	EXPECT_GT(fread(text, 1, (1 << 16) - 1, f), 0);
	fclose(f);
	unlink(file);
	lines = json_lines(text);
	EXPECT_GE(lines, 2) TH_LOG("%s", text);
	snprintf(want, sizeof(want), "\"tgid\":%d,", pid);
	EXPECT_NE(NULL, strstr(text, want));
	free(text);

	/* Without -v, a row per record under a header. */
	cpus[0] = '0';
	cpus[1] = '\0';
	{
		char *const argv2[] = { "getdelays", "-m", "0", "-l", NULL };

		ASSERT_EQ(0, start(r, argv2));
		ASSERT_TRUE(wait_for(r, "listening"));
		pid = exit_on(0, 2);
		/* A process record has no thread id: "-" stands in the PID column. */
		snprintf(want, sizeof(want), "process       - %7d ", pid);
		ASSERT_EQ(0, stop_listener(r, want)) TH_LOG("%s", r->out);
		EXPECT_EQ(0, strncmp(r->out, "EXIT        PID", 15)) TH_LOG("%s", r->out);
	}
	free(r);
}

/*
 * A listener that cannot keep up is told how many records it missed: stop
 * it, let exits overflow its tiny buffer, let it go on.
 */
TEST_F(recount, listener_reports_missed)
{
	struct run *r = new_run();
	unsigned long long missed = 0, v;
	char cpus[16], *line;
	char *const argv[] = { "getdelays", "--json", "-l", "-r", "1", "-m", cpus, NULL };
	int i;

	snprintf(cpus, sizeof(cpus), "0-%d", get_nprocs_conf() - 1);
	ASSERT_EQ(0, start(r, argv));
	ASSERT_TRUE(wait_for(r, "listening"));
	kill(r->pid, SIGSTOP);
	for (i = 0; i < 50; i++)
		exit_on(i % get_nprocs(), 0);
	kill(r->pid, SIGCONT);
	for (i = 0; i < 50; i++)
		pump(r, 10);
	/* The next record after the overflow carries the count. */
	exit_on(0, 0);
	EXPECT_TRUE(wait_for(r, "missed")) TH_LOG("%s", r->err);
	kill(r->pid, SIGTERM);
	ASSERT_EQ(0, finish(r)) TH_LOG("%s", r->err);
	ASSERT_GT(json_lines(r->out), 0) TH_LOG("%s", r->out);
	for (line = r->out; line && *line; line = strchr(line, '\n') + 1) {
		const char *exit = strstr(line, "\"exit\":");

		if (exit && json_member_u64(exit + 7, "missed", &v))
			missed += v;
		if (!strchr(line, '\n'))
			break;
	}
	EXPECT_GT(missed, 0) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(r->err, "missed")) TH_LOG("%s", r->err);
	free(r);
}

/*
 * Ctrl-C stops a listener whatever it is doing: here, working through a
 * backlog of records. It stops before the next record, not once through all
 * of them; and a signal that comes between two waits is not lost (it once
 * was, until the next record came). The signal must come while the backlog
 * lasts: where this test was too slow to send it in time (a TCG guest's CPU
 * stopped a while), it tries again, three times in all.
 */
TEST_F(recount, listener_stops_on_signal_while_busy)
{
	char *const argv[] = { "getdelays", "--json", "-i", "-l", "-r", "4M", "-m", "0", NULL };
	bool busy = false;
	int i, open, tries;
	struct run *r;
	char last[64];
	pid_t pid;

	for (tries = 0; tries < 3 && !busy; tries++) {
		r = new_run();
		ASSERT_EQ(0, start(r, argv));
		ASSERT_TRUE(wait_for(r, "listening"));
		kill(r->pid, SIGSTOP);
		for (i = 0; i < 300; i++)
			pid = exit_on(0, 0);
		snprintf(last, sizeof(last), "\"type\":\"process\",\"tgid\":%d,", pid);
		kill(r->pid, SIGCONT);
		ASSERT_TRUE(wait_out(r, "\"type\":\"process\"")) TH_LOG("%s", r->err);
		kill(r->pid, SIGINT);
		busy = !strstr(r->out, last);
		for (i = 0, open = 1; i < 50 && open; i++)
			open = pump(r, 100);
		if (open)
			kill(r->pid, SIGKILL);
		EXPECT_EQ(0, open) TH_LOG("getdelays went on after SIGINT");
		EXPECT_EQ(0, finish(r)) TH_LOG("%s", r->err);
		if (busy)
			EXPECT_EQ(NULL, strstr(r->out, last))
				TH_LOG("getdelays went through its backlog");
		free(r);
	}
	/* Else the test tested nothing: the signal came after the backlog. */
	EXPECT_TRUE(busy) TH_LOG("the signal came after the backlog, %d times", tries);
}

/* Write @value to the sysctl @path, returning its old value. */
static int sysctl_swap(const char *path, int value)
{
	FILE *f = fopen(path, "r+");
	int old = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &old) != 1)
		old = -1;
	rewind(f);
	fprintf(f, "%d\n", value);
	fclose(f);
	return old;
}

/* -d, -i, -q: taskstats' figures next to recount's, in each mode. */
TEST_F(recount, taskstats_figures)
{
	struct run *r = new_run();
	unsigned long long v;
	const char *ts;
	struct worker w;
	char id[16];
	size_t len;
	int old;

	old = sysctl_swap("/proc/sys/kernel/task_delayacct", 1);
	if (old < 0)
		SKIP(free(r); return, "no delay accounting (CONFIG_TASK_DELAY_ACCT=n)");
	ASSERT_EQ(0, worker_start(&w, work_spin_kernel, 20 * NSEC_PER_MSEC, -1));
	ASSERT_EQ(0, worker_run(&w));
	ASSERT_EQ(0, GETDELAYS(r, "--json", "-d", "-i", "-q", "-p", num(id, w.tid)))
		TH_LOG("%s", r->err);
	ASSERT_EQ(1, json_lines(r->out)) TH_LOG("%s", r->out);
	ts = json_member(r->out, "taskstats", &len);
	ASSERT_NE(NULL, ts) TH_LOG("%s", r->out);
	EXPECT_TRUE(json_member_u64(ts, "version", &v) && v >= 14) TH_LOG("%.*s", (int)len, ts);
	EXPECT_NE(NULL, strstr(ts, "\"delays\":{\"cpu\":{\"count\":"));
	/* The worker read zeroes in syscalls. */
	EXPECT_TRUE(json_member_u64(json_member(ts, "io", &len), "read_char", &v) && v > 0);
	EXPECT_NE(NULL, strstr(ts, "\"voluntary\":"));

	ASSERT_EQ(0, GETDELAYS(r, "-d", "-p", id));
	EXPECT_NE(NULL, strstr(r->out, "\n  delays ")) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(r->out, "waiting for a CPU"));

	EXPECT_EQ(0, GETDELAYS(r, "--json", "-q", "-c", "true"));
	EXPECT_NE(NULL, strstr(r->out, "\"context_switches\":")) TH_LOG("%s", r->out);

	/* An unprivileged user reads recount, and is told why not taskstats. */
	r->uid = 65534;
	EXPECT_EQ(0, GETDELAYS(r, "--json", "-d", "-c", "true"));
	r->uid = 0;
	EXPECT_NE(NULL, strstr(r->out, "\"taskstats\":{\"error\":\"permission denied: taskstats"))
		TH_LOG("%s %s", r->out, r->err);
	EXPECT_NE(NULL, strstr(r->out, " requests need CAP_NET_ADMIN\"}"))
		TH_LOG("%s %s", r->out, r->err);
	worker_stop(&w);
	sysctl_swap("/proc/sys/kernel/task_delayacct", old);
	free(r);
}

/* In listener mode too, paired with taskstats' exit records. */
TEST_F(recount, taskstats_in_listener_mode)
{
	struct run *r = new_run();
	char *const argv[] = { "getdelays", "--json", "-i", "-l", "-m", "0", NULL };
	char want[64];
	pid_t pid;

	ASSERT_EQ(0, start(r, argv));
	ASSERT_TRUE(wait_for(r, "listening"));
	pid = exit_on(0, 0);
	snprintf(want, sizeof(want), "\"type\":\"process\",\"tgid\":%d,", pid);
	ASSERT_EQ(0, stop_listener(r, want)) TH_LOG("%s\n%s", r->out, r->err);
	snprintf(want, sizeof(want), "\"type\":\"thread\",\"pid\":%d,", pid);
	ASSERT_NE(NULL, strstr(r->out, want)) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(strstr(r->out, want), "\"io\":{\"read_char\":"))
		TH_LOG("%s", r->out);
	free(r);
}

/* Errors a person understands, and the documented exit codes. */
TEST_F(recount, errors)
{
	struct run *r = new_run();
	char beyond[16];

	EXPECT_EQ(3, GETDELAYS(r, "-p", "4194304"));
	EXPECT_NE(NULL, strstr(r->err, "thread 4194304: no such thread")) TH_LOG("%s", r->err);
	EXPECT_EQ(3, GETDELAYS(r, "-P", "99999"));
	EXPECT_NE(NULL, strstr(r->err, "cpu 99999")) TH_LOG("%s", r->err);
	/* Each error is one line. */
	EXPECT_EQ(3, GETDELAYS(r, "--interval", "0.1", "-p", "4194304"));
	EXPECT_STREQ("getdelays: thread 4194304: no such thread\n", r->err);
	EXPECT_EQ(1, GETDELAYS(r, "--interval", "0", "-p", "1"));
	EXPECT_STREQ("getdelays: --interval: '0' is not a number of seconds from 0.01 to 86400\n",
		     r->err);
	EXPECT_EQ(1, GETDELAYS(r, "--frobnicate"));
	EXPECT_STREQ("getdelays: unknown option --frobnicate\n", r->err);
	EXPECT_EQ(3, GETDELAYS(r, "-C", "/nonexistent/cgroup"));
	EXPECT_STREQ("getdelays: cgroup /nonexistent/cgroup: No such file or directory\n", r->err);
	EXPECT_EQ(1, GETDELAYS(r, "-m", "1-"));
	EXPECT_NE(NULL, strstr(r->err, "not a CPU list")) TH_LOG("%s", r->err);
	snprintf(beyond, sizeof(beyond), "%d", get_nprocs_conf() + 100);
	/* The kernel's reason: beyond the CPUs there can be, or not possible. */
	EXPECT_EQ(1, GETDELAYS(r, "-m", beyond));
	EXPECT_NE(NULL, strstr(r->err, "cannot listen to CPUs")) TH_LOG("%s", r->err);
	EXPECT_TRUE(strstr(r->err, "beyond the CPUs there can be") ||
		    strstr(r->err, "are not possible")) TH_LOG("%s", r->err);
	EXPECT_EQ(1, GETDELAYS(r, "-x"));
	EXPECT_NE(NULL, strstr(r->err, "unknown option")) TH_LOG("%s", r->err);

	r->uid = 65534;
	EXPECT_EQ(4, GETDELAYS(r, "-p", "1"));
	r->uid = 0;
	EXPECT_NE(NULL, strstr(r->err, "permission denied")) TH_LOG("%s", r->err);

	EXPECT_EQ(0, GETDELAYS(r, "--help"));
	EXPECT_NE(NULL, strstr(r->out, "Exit status:"));

	/* What cannot be written fails the run: a log, the output. */
	EXPECT_EQ(5, GETDELAYS(r, "-D", "cpus", "-w", "/dev/full"));
	EXPECT_NE(NULL, strstr(r->err, "getdelays: cannot write /dev/full: No space left"))
		TH_LOG("%s", r->err);
	EXPECT_EQ(5, run_into("/dev/full", (char *const []){ "getdelays", "-D", "cpus", NULL }));
	EXPECT_EQ(5, run_into("/dev/full", (char *const []){ "getdelays", "--help", NULL }));
	free(r);
}

/*
 * -e chooses events, which records then show per level: instructions in
 * user mode, chosen as an event, count what recount's own user-mode
 * instructions do. Without a PMU, choosing fails with the kernel's reason.
 */
TEST_F(recount, events)
{
	struct run *r = new_run();
	unsigned long long v = 0, ev = 0;
	const char *events, *want, *held;
	unsigned long held_n;
	size_t len;

	EXPECT_EQ(1, GETDELAYS(r, "-e", "cache-misses:sometimes"));
	EXPECT_STREQ("getdelays: -e: 'sometimes' is not a mode (user, kernel or all)\n", r->err);
	r->uid = 65534;
	EXPECT_EQ(4, GETDELAYS(r, "-e", "instructions:user"));
	r->uid = 0;
	EXPECT_NE(NULL, strstr(r->err, "CAP_PERFMON")) TH_LOG("%s", r->err);
	if (!has_pmu(&self->nl)) {
		EXPECT_EQ(5, GETDELAYS(r, "-e", "cache-misses"));
		EXPECT_NE(NULL, strstr(r->err, "cannot choose the events")) TH_LOG("%s", r->err);
		free(r);
		SKIP(return, "no PMU counters: events are unsupported here");
	}
	/*
	 * Two events in both modes need four counters per CPU besides
	 * recount's own: where the PMU has fewer free, the kernel's warning
	 * is printed, and where it has them, nothing.
	 */
	ASSERT_EQ(0, GETDELAYS(r, "-e", "instructions,cycles"));
	held = strstr(r->out, " at most; ");
	ASSERT_NE(NULL, held) TH_LOG("%s", r->out);
	held_n = strtoul(held + strlen(" at most; "), NULL, 10);
	TH_LOG("%lu counters held, of %d", held_n, 8 * get_nprocs());
	if (held_n < 8UL * get_nprocs()) {
		EXPECT_NE(NULL, strstr(r->err, "getdelays: warning: PMUs gave recount "))
			TH_LOG("%s", r->err);
	} else {
		EXPECT_STREQ("", r->err);
	}
	/* More than the kernel counts: a usage error, with its reason. */
	EXPECT_EQ(1, GETDELAYS(r, "-e", "instructions,cycles,branches"));
	EXPECT_NE(NULL, strstr(r->err, "at most 2 events may be chosen")) TH_LOG("%s", r->err);
	ASSERT_EQ(0, GETDELAYS(r, "-e", "instructions:user"));
	EXPECT_NE(NULL, strstr(r->out, "  events: instructions:user (generation "))
		TH_LOG("%s", r->out);
	EXPECT_STREQ("", r->err);
	EXPECT_EQ(0, GETDELAYS(r, "--json", "-c", "sh", "-c",
			       "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"));
	events = json_member(r->out, "events", &len);
	ASSERT_NE(NULL, events) TH_LOG("%s", r->out);
	want = "[{\"name\":\"instructions\",\"mode\":\"user\",";
	EXPECT_EQ(0, strncmp(events, want, strlen(want))) TH_LOG("%.*s", (int)len, events);
	EXPECT_TRUE(json_member_u64(events + 1, "user", &ev)) TH_LOG("%.*s", (int)len, events);
	EXPECT_TRUE(json_member_u64(r->out, "user_instructions", &v));
	EXPECT_EQ(v, ev);
	EXPECT_GT(ev, 1000000);
	EXPECT_EQ(0, GETDELAYS(r, "-c", "true"));
	want = "\n  events                    user           kernel            total\n"
	       "  instructions ";
	EXPECT_NE(NULL, strstr(r->out, want)) TH_LOG("%s", r->out);
	EXPECT_EQ(0, GETDELAYS(r, "-e", "none"));
	EXPECT_NE(NULL, strstr(r->out, "  events: none (generation ")) TH_LOG("%s", r->out);
	free(r);
}

/*
 * Events chosen anew while getdelays listens are named anew: the exit
 * record of the new generation names the events chosen last, not those
 * get-info named when getdelays started.
 */
TEST_F(recount, listener_names_events_chosen_anew)
{
	struct run *r = new_run(), *choose = new_run();
	char cpus[16], want[64];
	char *const argv[] = { "getdelays", "--json", "-l", "-m", cpus, NULL };
	const char *rec, *events, *first = "[{\"name\":\"cycles\",\"mode\":\"kernel\",";
	size_t len = 0;
	pid_t pid;

	if (!has_pmu(&self->nl)) {
		free(r);
		free(choose);
		SKIP(return, "no PMU counters: events are unsupported here");
	}
	ASSERT_EQ(0, GETDELAYS(choose, "-e", "instructions:user")) TH_LOG("%s", choose->err);
	snprintf(cpus, sizeof(cpus), "0-%d", get_nprocs_conf() - 1);
	ASSERT_EQ(0, start(r, argv));
	ASSERT_TRUE(wait_for(r, "listening for exits")) TH_LOG("%s", r->err);
	ASSERT_EQ(0, GETDELAYS(choose, "-e", "cycles:kernel")) TH_LOG("%s", choose->err);
	pid = exit_on(0, 3);
	snprintf(want, sizeof(want), "\"type\":\"process\",\"tgid\":%d,", pid);
	ASSERT_EQ(0, stop_listener(r, want)) TH_LOG("%s\n%s", r->out, r->err);
	rec = strstr(r->out, want);
	ASSERT_NE(NULL, rec);
	events = json_member(rec - 1, "events", &len);
	ASSERT_NE(NULL, events) TH_LOG("%s", rec);
	EXPECT_EQ(0, strncmp(events, first, strlen(first))) TH_LOG("%.*s", (int)len, events);
	EXPECT_EQ(0, GETDELAYS(choose, "-e", "none"));
	free(r);
	free(choose);
}

/* A thread busy half of every 20 ms, until told to stop. */
static atomic_bool half_stop;

static void *half_busy(void *arg)
{
	struct timespec next, now;

	__atomic_store_n((pid_t *)arg, gettid(), __ATOMIC_RELEASE);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load(&half_stop)) {
		long long busy_until;

		/*
		 * 10 ms of its own CPU time, then asleep to the next mark of a
		 * 20 ms grid: a late wake-up shortens the sleep, not the work.
		 */
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
		busy_until = now.tv_sec * 1000000000LL + now.tv_nsec + 10000000;
		do
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
		while (now.tv_sec * 1000000000LL + now.tv_nsec < busy_until);
		next.tv_nsec += 20000000;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return NULL;
}

/* The @col-th comma-separated field of a CSV line, as a number. */
static double csv_field(const char *line, int col)
{
	while (col-- && line)
		line = strchr(line, ',') ? strchr(line, ',') + 1 : NULL;
	return line ? atof(line) : -1;
}

/*
 * Intervals: a thread busy half the time shows about 50% CPU in each
 * interval; CSV has a header and a line per interval. The intervals are long
 * next to the thread's 20 ms period: a thread kept from its CPU catches up
 * after, and a delay of D moves up to D / 2 of its time from one interval to
 * the next (on a slow kernel D reaches tens of ms; a host that stops the
 * guest's CPU a while, more): 40% to 60% on average, 30% to 70% in each.
 */
TEST_F(recount, interval_of_a_half_busy_thread)
{
	struct run *r = new_run();
	const char *line;
	double sum = 0;
	pid_t tid = 0;
	pthread_t t;
	char id[16];
	int n = 0;

	atomic_store(&half_stop, false);
	ASSERT_EQ(0, pthread_create(&t, NULL, half_busy, &tid));
	while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(100000);
	EXPECT_EQ(0, GETDELAYS(r, "--interval", "0.5", "--count", "4", "--csv", "-p",
			       num(id, tid))) TH_LOG("%s", r->err);
	atomic_store(&half_stop, true);
	pthread_join(t, NULL);
	ASSERT_EQ(0, strncmp(r->out, "clock,pid,tgid,comm,cpu%,user%,", 31)) TH_LOG("%s", r->out);
	for (line = strchr(r->out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		double cpu = csv_field(line + 1, 4);

		n++;
		sum += cpu;
		EXPECT_EQ(tid, (pid_t)csv_field(line + 1, 1));
		EXPECT_TRUE(cpu >= 30 && cpu <= 70)
			TH_LOG("interval %d: %.1f%% CPU\n%s", n, cpu, r->out);
	}
	EXPECT_EQ(4, n) TH_LOG("%s", r->out);
	EXPECT_TRUE(n && sum / n >= 40 && sum / n <= 60)
		TH_LOG("%.1f%% CPU on average\n%s", n ? sum / n : 0, r->out);

	/* The same as a table. */
	EXPECT_EQ(0, GETDELAYS(r, "--interval", "0.1", "--count", "2", "-p", num(id, getpid())))
		TH_LOG("%s", r->err);
	EXPECT_EQ(0, strncmp(r->out, "   CLOCK     PID    TGID COMM               CPU%", 47))
		TH_LOG("%s", r->out);
	free(r);
}

/* A thread that exits when its pipe is written to. */
struct exiter {
	pid_t tid;
	int pipe[2];
};

static void *exit_when_told(void *arg)
{
	struct exiter *e = arg;
	char c;

	__atomic_store_n(&e->tid, gettid(), __ATOMIC_RELEASE);
	if (read(e->pipe[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

/*
 * A thread that exits while it is watched: its last interval comes from its
 * exit record, marked exited, and getdelays says it is gone.
 */
TEST_F(recount, interval_ends_with_the_exit)
{
	struct run *r = new_run();
	struct exiter e = {};
	char id[16], want[64];
	char *const argv[] = { "getdelays", "--json", "--interval", "0.2", "--count", "100",
			       "-p", id, NULL };
	pthread_t t;

	ASSERT_EQ(0, pipe(e.pipe));
	ASSERT_EQ(0, pthread_create(&t, NULL, exit_when_told, &e));
	while (!__atomic_load_n(&e.tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	num(id, e.tid);
	ASSERT_EQ(0, start(r, argv));
	/* Its first interval is out: it is watching, and listening. */
	EXPECT_TRUE(wait_out(r, "\"interval\"")) TH_LOG("%s", r->err);
	ASSERT_EQ(1, write(e.pipe[1], "x", 1));
	pthread_join(t, NULL);
	EXPECT_EQ(0, finish(r)) TH_LOG("%s", r->err);
	close(e.pipe[0]);
	close(e.pipe[1]);
	snprintf(want, sizeof(want), "getdelays: thread %d exited\n", e.tid);
	EXPECT_STREQ(want, r->err);
	EXPECT_GE(json_lines(r->out), 1) TH_LOG("%s", r->out);
	/* The last line: exited, with its figures, from the exit record. */
	EXPECT_NE(NULL, strstr(r->out, "\"exited\":true,")) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(r->out, "\"exit\":{\"code\":")) TH_LOG("%s", r->out);
	free(r);
}

/* Pin the caller to @cpu, keeping its mask in @old if not NULL. */
static int pin_to(int cpu, cpu_set_t *old)
{
	if (old && sched_getaffinity(0, sizeof(*old), old))
		return -1;
	return pin_self(cpu);
}

static void *spin(void *arg)
{
	if (pin_to((long)arg, NULL))
		return NULL;
	for (;;)
		;
	return NULL;
}

/*
 * The top view in batch mode: a spinning process comes first. Its two
 * threads spin on CPUs 1 and 2, so that getdelays' own work (on CPU 0)
 * never shares them (under arm64 icount a dump and its table are not
 * cheap), and at 200% no other process (a debug kernel's kmemleak scan)
 * can tie with it. Not on the last CPU: the harness boots it nohz_full,
 * and under arm64 icount a thread spinning there without a tick starves
 * the other CPUs.
 */
TEST_F(recount, top_lists_a_spinner_first)
{
	struct run *r = new_run();
	const char *last, *row;
	cpu_set_t mask;
	pid_t spinner;

	if (get_nprocs() < 4)
		SKIP(free(r); return, "needs four CPUs");
	spinner = fork();
	ASSERT_GE(spinner, 0);
	if (!spinner) {
		pthread_t t;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pthread_create(&t, NULL, spin, (void *)1L);
		spin((void *)2L);
		_exit(1);
	}
	ASSERT_EQ(0, pin_to(0, &mask));
	EXPECT_EQ(0, GETDELAYS(r, "--top", "--interval", "0.3", "--count", "2", "-n", "5"))
		TH_LOG("%s", r->err);
	sched_setaffinity(0, sizeof(mask), &mask);
	kill(spinner, SIGKILL);
	waitpid(spinner, NULL, 0);
	/* Two tables, each under its title; the last one's first row. */
	last = strstr(r->out, "getdelays --top - ");
	ASSERT_NE(NULL, last) TH_LOG("%s", r->out);
	last = strstr(last + 1, "getdelays --top - ");
	ASSERT_NE(NULL, last) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(last, " processes, ")) TH_LOG("%s", r->out);
	row = strchr(strchr(last, '\n') + 1, '\n');
	ASSERT_NE(NULL, row) TH_LOG("%s", r->out);
	EXPECT_EQ(spinner, (pid_t)strtol(row + 10, NULL, 10)) TH_LOG("%s", r->out);
	free(r);
}

/* CSV and OpenMetrics of totals. */
TEST_F(recount, csv_and_openmetrics)
{
	struct run *r = new_run();
	char id[16], want[64];

	ASSERT_EQ(0, GETDELAYS(r, "--csv", "-D", "threads", "-t", num(id, getpid())))
		TH_LOG("%s", r->err);
	EXPECT_EQ(0, strncmp(r->out, "pid,tgid,comm,time,user,kernel,cpi,", 35))
		TH_LOG("%s", r->out);
	snprintf(want, sizeof(want), "\n%d,%d,getdelays_test,", getpid(), getpid());
	EXPECT_NE(NULL, strstr(r->out, want)) TH_LOG("%s", r->out);

	ASSERT_EQ(0, GETDELAYS(r, "--openmetrics", "-t", id)) TH_LOG("%s", r->err);
	EXPECT_EQ(0, strncmp(r->out, "# TYPE recount_process_cpu_seconds counter\n", 43))
		TH_LOG("%s", r->out);
	snprintf(want, sizeof(want), "\nrecount_process_cpu_seconds_total{pid=\"%d\",", getpid());
	EXPECT_NE(NULL, strstr(r->out, want)) TH_LOG("%s", r->out);
	EXPECT_EQ(0, strcmp(r->out + strlen(r->out) - 6, "# EOF\n")) TH_LOG("%s", r->out);
	free(r);
}

static int file_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* Wait until @path has a line; false after 10 s. */
static bool wait_lines(const char *path)
{
	int i;

	for (i = 0; i < 1000 && file_lines(path) <= 0; i++)
		usleep(10000);
	return file_lines(path) > 0;
}

/* -w appends with -a, and opens its file again on SIGHUP (logrotate). */
TEST_F(recount, log_appends_and_reopens_on_sighup)
{
	struct run *r = new_run();
	char file[] = "/tmp/getdelays-log-XXXXXX", rotated[64];
	char *const argv[] = { "getdelays", "-m", "0", "-l", "-w", file, "-a", NULL };
	FILE *f;
	int fd;

	fd = mkstemp(file);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(6, write(fd, "first\n", 6));
	close(fd);
	snprintf(rotated, sizeof(rotated), "%s.1", file);
	ASSERT_EQ(0, start(r, argv));
	ASSERT_TRUE(wait_for(r, "listening"));
	exit_on(0, 0);
	/* -a kept the line that was there. */
	for (fd = 0; fd < 1000 && file_lines(file) < 2; fd++)
		usleep(10000);
	EXPECT_GE(file_lines(file), 2);
	f = fopen(file, "r");
	ASSERT_NE(NULL, f);
	EXPECT_EQ('f', fgetc(f));
	fclose(f);
	/* logrotate: move the file away, then SIGHUP; exits until a new one. */
	ASSERT_EQ(0, rename(file, rotated));
	kill(r->pid, SIGHUP);
	for (fd = 0; fd < 100 && file_lines(file) <= 0; fd++) {
		exit_on(0, 0);
		usleep(100000);
	}
	EXPECT_TRUE(wait_lines(file)) TH_LOG("%s", r->err);
	kill(r->pid, SIGINT);
	EXPECT_EQ(0, finish(r)) TH_LOG("%s", r->err);
	unlink(file);
	unlink(rotated);
	free(r);
}

/*
 * -C: a cgroup's tasks by state, from taskstats' cgroupstats, on a v1
 * hierarchy of no controller; a directory of no cgroup is refused.
 */
TEST_F(recount, cgroup_path)
{
	struct run *r = new_run();
	char dir[] = "/tmp/getdelays-cg-XXXXXX", group[64], procs[80], pid[16], opts[64];
	pid_t sleeper;
	int fd;

	EXPECT_EQ(3, GETDELAYS(r, "-C", "/tmp"));
	EXPECT_STREQ("getdelays: cgroup /tmp: not in a cgroup v1 hierarchy\n", r->err);
	/*
	 * Mounted in a /tmp of the test's own, which a failure does not leave
	 * mounted. A hierarchy with a group in it outlives its mount: each
	 * run names its own.
	 */
	ASSERT_EQ(0, private_tmp()) TH_LOG("%s", strerror(errno));
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(opts, sizeof(opts), "none,name=getdelays_test_%d", getpid());
	if (mount("cgroup", dir, "cgroup", 0, opts)) {
		ASSERT_TRUE(errno == ENODEV || errno == ENOENT) TH_LOG("%s", strerror(errno));
		free(r);
		SKIP(return, "no cgroup v1 hierarchy (CONFIG_CGROUPS=n, or cgroup_no_v1=named)");
	}
	snprintf(group, sizeof(group), "%s/a", dir);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", group);
	ASSERT_EQ(0, mkdir(group, 0755));
	fd = getpid();
	sleeper = fork();
	ASSERT_GE(sleeper, 0);
	if (!sleeper) {
		if (!die_with(fd))
			pause();
		_exit(0);
	}
	fd = open(procs, O_WRONLY);
	ASSERT_GE(fd, 0);
	num(pid, sleeper);
	EXPECT_EQ((ssize_t)strlen(pid), write(fd, pid, strlen(pid)));
	close(fd);
	/* Until it sleeps in pause(). */
	for (fd = 0; fd < 1000 && thread_state(sleeper) != 'S'; fd++)
		usleep(10000);
	EXPECT_EQ(0, GETDELAYS(r, "-C", group)) TH_LOG("%s", r->err);
	EXPECT_STREQ("sleeping 1, blocked 0, running 0, stopped 0, uninterruptible 0\n", r->out);
	EXPECT_EQ(0, GETDELAYS(r, "--json", "-C", group)) TH_LOG("%s", r->err);
	EXPECT_EQ(1, json_lines(r->out)) TH_LOG("%s", r->out);
	kill(sleeper, SIGKILL);
	waitpid(sleeper, NULL, 0);
	rmdir(group);
	umount(dir);
	rmdir(dir);
	free(r);
}

/* Switched off by sysctl, recount's figures are frozen, and getdelays says so. */
TEST_F(recount, says_when_recount_is_off)
{
	struct run *r = new_run();
	char id[16];

	ASSERT_EQ(0, recount_sysctl_set(0));
	GETDELAYS(r, "--json", "-t", num(id, getpid()));
	ASSERT_EQ(0, recount_sysctl_set(1));
	EXPECT_EQ(0, r->status) TH_LOG("%s", r->err);
	EXPECT_NE(NULL, strstr(r->out, "\"disabled\":true")) TH_LOG("%s", r->out);
	EXPECT_NE(NULL, strstr(r->err, "recount is off")) TH_LOG("%s", r->err);
	free(r);
}

TEST_HARNESS_MAIN
