// SPDX-License-Identifier: GPL-2.0
/*
 * getdelays: print what recount accounted for threads, processes and CPUs.
 *
 * The successor of tools/accounting/getdelays for the RECOUNT generic netlink
 * family (Documentation/accounting/recount.rst): its options, recount's
 * metrics, dumps, intervals, a top view, listener mode, JSON, CSV and
 * OpenMetrics. Run with --help for usage, or see getdelays(8).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysinfo.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "interval.h"
#include "options.h"
#include "output.h"
#include "recount_client.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct ctx {
	struct opts o;
	struct out_opts out;
	struct rc_client c;
	struct ts_client ts;
	bool ts_open;
	const char *ts_why;	/* why there are no taskstats, if so */
	FILE *log;
	int out_err, log_err;	/* why a flush of stdout, of the log first failed */
	bool lost;		/* some output or log could not be written */
	bool warned_disabled;
	bool warned_events;	/* that some events could not be named */
	uint32_t events_tried;	/* the last generation it asked the names of */
	bool csv_header;	/* the CSV header is out */
	uint32_t csv_gen;	/* the generation of the events it names */
};

/* Set by the signal handlers; lock-free atomics, safe to share with them. */
static atomic_bool stop, reopen;

static void on_signal(int sig)
{
	atomic_store_explicit(sig == SIGHUP ? &reopen : &stop, true, memory_order_relaxed);
}

/*
 * Flush @f, stdout or the log, noting why it first failed: stdio drops what
 * it could not write, and a later close no longer fails.
 */
static void flush_output(struct ctx *x, FILE *f)
{
	int *err = f == stdout ? &x->out_err : &x->log_err;

	if (fflush(f) == EOF && !*err)
		*err = errno;
}

/*
 * Close @f, which got what getdelays printed to @name, whose first failed
 * flush failed with @err (or 0); false, and said so, if some of it could not
 * be written (a full disk, a closed pipe).
 */
static bool close_output(FILE *f, const char *name, int err)
{
	bool failed = err || ferror(f);

	if (fclose(f) == EOF) {
		failed = true;
		if (!err)
			err = errno;
	}
	if (failed && err)
		fprintf(stderr, "getdelays: cannot write %s: %s\n", name, strerror(err));
	else if (failed)
		fprintf(stderr, "getdelays: cannot write %s\n", name);
	return !failed;
}

/*
 * Close the log and stdout. The exit status: @ret, or EXIT_ERROR if @ret is
 * EXIT_OK and something could not be written.
 */
static int close_outputs(struct ctx *x, int ret)
{
	if (x->log && !close_output(x->log, x->o.logfile, x->log_err))
		x->lost = true;
	if (!close_output(stdout, "the output", x->out_err))
		x->lost = true;
	return x->lost && ret == EXIT_OK ? EXIT_ERROR : ret;
}

/*
 * -w's file: opened at the start (appended to with -a), and opened again,
 * appended to, after a SIGHUP, as logrotate expects of a daemon's log.
 */
static int open_log(struct ctx *x, bool append)
{
	FILE *f = fopen(x->o.logfile, append ? "a" : "w");

	if (!f) {
		fprintf(stderr, "getdelays: %s: %s\n", x->o.logfile, strerror(errno));
		return -1;
	}
	if (x->log && !close_output(x->log, x->o.logfile, x->log_err))
		x->lost = true;
	x->log = f;
	x->log_err = 0;
	return 0;
}

/* After a SIGHUP: open the log again. On failure, keep writing the old one. */
static void reopen_log(struct ctx *x)
{
	if (x->log && atomic_exchange_explicit(&reopen, false, memory_order_relaxed))
		open_log(x, true);
}

static void log_record(struct ctx *x, const struct rc_record *r, const struct ts_shown *ts)
{
	if (!x->log)
		return;
	reopen_log(x);
	out_json_record(x->log, r, ts, &x->out);
	flush_output(x, x->log);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* CLOCK_REALTIME less CLOCK_BOOTTIME, read back to back. */
static int64_t realtime_offset(void)
{
	uint64_t boot = clock_ns(CLOCK_BOOTTIME);

	return (int64_t)(clock_ns(CLOCK_REALTIME) - boot);
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Say, once, that the figures are frozen. */
static void check_disabled(struct ctx *x, const struct rc_record *r)
{
	if (x->warned_disabled || !r->has_flags || !(r->flags & RECOUNT_FLAGS_DISABLED))
		return;
	x->warned_disabled = true;
	fputs("getdelays: recount is off (kernel.recount=0): the values are frozen\n", stderr);
}

static int report_error(const struct rc_client *c, int err, const char *what, uint32_t id)
{
	const char *why = c->extack[0] ? c->extack : strerror(-err);

	/* A CPU that is not possible is no such CPU, for the user. */
	if (err == -EINVAL && !strcmp(what, "cpu"))
		err = -ENODEV;
	switch (err) {
	case -ESRCH:
	case -ENODEV:
		fprintf(stderr, "getdelays: %s %u: %s\n", what, id, why);
		return EXIT_NOT_FOUND;
	case -EACCES:
	case -EPERM:
		fprintf(stderr, "getdelays: %s %u: permission denied: %s\n", what, id, why);
		return EXIT_DENIED;
	default:
		fprintf(stderr, "getdelays: %s %u: %s\n", what, id, why);
		return EXIT_ERROR;
	}
}

/* taskstats, for -d, -i, -q: open it, or say why not. */
static void open_taskstats(struct ctx *x)
{
	int err;

	if (!x->o.taskstats)
		return;
	err = ts_open(&x->ts);
	if (err == -ENOENT)
		x->ts_why = "not in this kernel (CONFIG_TASKSTATS=n)";
	else if (err)
		x->ts_why = "cannot open a generic netlink socket";
	else
		x->ts_open = true;
}

static bool delayacct_off(void)
{
	FILE *f = fopen("/proc/sys/kernel/task_delayacct", "r");
	int on = 1;

	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = 1;
		fclose(f);
	}
	return !on;
}

static const char *ts_error(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return "permission denied: taskstats requests need CAP_NET_ADMIN";
	case -ESRCH:
		return "no such task";
	default:
		return "the request failed";
	}
}

/* Whether event generation @a is newer than @b: they wrap around. */
static bool gen_newer(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/*
 * getdelays names the chosen events get-info gives at its start, but they
 * may be chosen anew while it runs, each choice a new generation. Name
 * those of @gen, newer than the ones named, by get-info on a socket of its
 * own (x->c may be listening), once per generation tried.
 */
static void name_events_anew(struct ctx *x, uint32_t gen)
{
	struct rc_client c = { .verbose = x->c.verbose };
	struct rc_info info;

	if (!gen_newer(gen, out_events_gen()) || !gen_newer(gen, x->events_tried))
		return;
	x->events_tried = gen;
	if (rc_open(&c))
		return;
	if (!rc_get_info(&c, &info))
		out_set_events(&info);
	rc_close(&c);
}

/*
 * Leave out @r's counts of events that cannot be named (of an older
 * generation, or chosen anew once more meanwhile), said once.
 */
static void forget_unnamed_events(struct ctx *x, struct rc_record *r)
{
	if (!x->warned_events)
		fprintf(stderr, "getdelays: events chosen anew: counts of generation %u left out\n",
			r->event_gen);
	x->warned_events = true;
	rc_forget_events(r);
}

/* @r with its chosen events named: @r, or @spare holding @r without them. */
static const struct rc_record *name_events(struct ctx *x, const struct rc_record *r,
					   struct rc_record *spare)
{
	if (out_events_named(r))
		return r;
	name_events_anew(x, r->event_gen);
	if (out_events_named(r))
		return r;
	*spare = *r;
	forget_unnamed_events(x, spare);
	return spare;
}

/*
 * The records of @s with their chosen events named, in place: by the
 * newest generation among them, so that no record of another one is
 * printed under its names.
 */
static void name_events_of(struct ctx *x, struct snapshot *s)
{
	uint32_t newest = out_events_gen();
	int i;

	for (i = 0; i < s->n; i++)
		if (s->recs[i].has_event_gen && gen_newer(s->recs[i].event_gen, newest))
			newest = s->recs[i].event_gen;
	if (newest != out_events_gen())
		name_events_anew(x, newest);
	for (i = 0; i < s->n; i++)
		if (!out_events_named(&s->recs[i]))
			forget_unnamed_events(x, &s->recs[i]);
}

/* Print one record with its taskstats (or why there are none). */
static void emit(struct ctx *x, const struct rc_record *r, const struct ts_record *tsr,
		 const char *ts_why)
{
	struct ts_shown ts = {
		.what = x->o.taskstats, .rec = tsr, .why = ts_why,
		.delayacct_off = (x->o.taskstats & TS_DELAYS) && delayacct_off(),
	};
	struct rc_record spare;

	r = name_events(x, r, &spare);
	check_disabled(x, r);
	x->out.now = boottime_ns();
	if (x->o.json) {
		out_json_record(stdout, r, &ts, &x->out);
	} else if (x->o.csv) {
		/* Again where the events, which have columns, changed. */
		if (!x->csv_header || x->csv_gen != out_events_gen())
			csv_header(stdout, opts_table(&x->o));
		x->csv_header = true;
		x->csv_gen = out_events_gen();
		csv_row(stdout, opts_table(&x->o), r, &x->out);
	} else if (x->o.openmetrics || x->o.prometheus) {
		out_openmetrics(stdout, r, 1, realtime_offset(), x->o.prometheus);
	} else {
		out_text_record(stdout, r, &ts, &x->out);
	}
	log_record(x, r, &ts);
	flush_output(x, stdout);
}

static int query(struct ctx *x, enum rc_selector sel, uint32_t id)
{
	static const char *const what[] = {
		[RC_SEL_PID] = "thread", [RC_SEL_TGID] = "process", [RC_SEL_CPU] = "cpu",
	};
	struct ts_record tsr;
	const char *why = x->ts_why;
	struct rc_record rec;
	int err;

	err = rc_get(&x->c, sel, id, &rec);
	if (err)
		return report_error(&x->c, err, what[sel], id);
	if (x->ts_open) {
		err = ts_get(&x->ts, id, sel == RC_SEL_TGID, &tsr);
		if (err)
			why = ts_error(err);
	}
	emit(x, &rec, x->ts_open && !err ? &tsr : NULL, why);
	return EXIT_OK;
}

/*
 * Run a command and print its process's totals. The process is read as a
 * zombie (waitid(WNOWAIT)): all its threads have exited, its totals are final.
 */
static int run_command(struct ctx *x)
{
	char **argv = x->o.command;
	siginfo_t info;
	pid_t pid;
	int ret, status;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("getdelays: fork");
		return EXIT_ERROR;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "getdelays: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	/* As time(1): ^C and ^\\ are the command's; the report still comes. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	memset(&info, 0, sizeof(info));
	if (waitid(P_PID, pid, &info, WEXITED | WNOWAIT) < 0) {
		perror("getdelays: waitid");
		return EXIT_ERROR;
	}
	ret = query(x, RC_SEL_TGID, pid);
	if (waitpid(pid, &status, 0) < 0) {
		perror("getdelays: waitpid");
		return EXIT_ERROR;
	}
	if (ret != EXIT_OK)
		return ret;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static int add_to_snapshot(const struct rc_record *rec, void *arg)
{
	return snapshot_add(arg, rec) ? -ENOMEM : 0;
}

/* Say why a dump failed; the exit status. */
static int dump_error(struct ctx *x, int err)
{
	fprintf(stderr, "getdelays: cannot list the %s: %s\n",
		x->o.scope == RECOUNT_SCOPE_CPUS ? "CPUs" :
		x->o.scope == RECOUNT_SCOPE_PROCESSES ? "processes" : "threads",
		x->c.extack[0] ? x->c.extack : strerror(-err));
	return err == -EINVAL || err == -ERANGE ? EXIT_USAGE : EXIT_ERROR;
}

static int dump(struct ctx *x)
{
	int kind = dump_table(x->o.scope), col, i, n, err;
	struct snapshot rows = {};
	bool interrupted;

	err = rc_dump(&x->c, x->o.scope, x->o.id, add_to_snapshot, &rows, &interrupted);
	if (err) {
		snapshot_free(&rows);
		if (x->o.id && err == -ESRCH)
			return report_error(&x->c, err, "process", x->o.id);
		return dump_error(x, err);
	}
	name_events_of(x, &rows);
	x->out.now = boottime_ns();
	col = x->o.sort ? table_column(kind, x->o.sort) : table_default_sort(kind);
	table_sort(kind, rows.recs, rows.n, col, &x->out);
	n = x->o.limit && x->o.limit < rows.n ? x->o.limit : rows.n;
	if (n)
		check_disabled(x, &rows.recs[0]);
	if (x->o.openmetrics || x->o.prometheus)
		out_openmetrics(stdout, rows.recs, n, realtime_offset(), x->o.prometheus);
	else if (x->o.csv)
		csv_header(stdout, kind);
	else if (!x->o.json)
		table_header(stdout, kind);
	for (i = 0; i < n; i++) {
		if (x->o.json)
			out_json_record(stdout, &rows.recs[i], NULL, &x->out);
		else if (x->o.csv)
			csv_row(stdout, kind, &rows.recs[i], &x->out);
		else if (!x->o.openmetrics && !x->o.prometheus)
			table_row(stdout, kind, &rows.recs[i], &x->out);
		log_record(x, &rows.recs[i], NULL);
	}
	if (interrupted && x->o.verbose)
		fputs("getdelays: tasks came and went while they were listed: each one\n"
		      "getdelays: that lived through it is listed once, but it is no snapshot\n",
		      stderr);
	snapshot_free(&rows);
	return EXIT_OK;
}

/*
 * Listener mode. taskstats sends its exit record before recount does, from
 * the same do_exit(): keep the last ones it sent, to pair with recount's.
 */
#define TS_KEEP 1024

struct listener {
	struct ctx *x;
	struct ts_record *kept;
	unsigned int next;
	unsigned long received, missed;
	bool header;
	uint32_t header_gen;	/* the generation of the events it names */
};

static void keep_ts(const struct ts_record *rec, void *arg)
{
	struct listener *l = arg;

	l->kept[l->next++ % TS_KEEP] = *rec;
}

static const struct ts_record *find_kept(struct listener *l, bool thread, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < TS_KEEP; i++) {
		const struct ts_record *t = &l->kept[(l->next - 1 - i) % TS_KEEP];

		if (t->version && t->has_pid == thread && t->id == id)
			return t;
	}
	return NULL;
}

/*
 * taskstats sends a process record only for multi-threaded processes; a
 * single-threaded one's is its thread's.
 */
static const struct ts_record *find_ts(struct listener *l, const struct rc_record *r)
{
	const struct ts_record *t;

	if (r->type == RC_THREAD)
		return find_kept(l, true, r->pid);
	t = find_kept(l, false, r->tgid);
	return t ? t : find_kept(l, true, r->tgid);
}

/*
 * SIGINT and SIGTERM stop a listener or the intervals, and getdelays says
 * goodbye. They are blocked but while it waits (with @wait_mask, in
 * ppoll(); no SA_RESTART: they end the wait), so that none is lost between
 * a check and the wait; one that comes while it works stops it after.
 */
static void catch_stop_signals(sigset_t *old_mask, sigset_t *wait_mask)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t stop_signals;

	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop_signals, old_mask);
	*wait_mask = *old_mask;
	sigdelset(wait_mask, SIGINT);
	sigdelset(wait_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/*
 * SIGINT and SIGTERM are blocked while records are handled: one that came
 * meanwhile waits, pending, and stops the listener before the next record.
 */
static bool stop_pending(void)
{
	sigset_t pending;

	return !sigpending(&pending) &&
	       (sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1);
}

static int on_exit_record(const struct rc_record *r, void *arg)
{
	struct listener *l = arg;
	struct ctx *x = l->x;
	const struct ts_record *tsr = NULL;
	const char *why = x->ts_why;
	struct rc_record spare;

	/* Stopped before this record: what it says was missed still counts. */
	if (stop_pending()) {
		l->missed += r->missed;
		return 1;
	}
	l->received++;
	if (r->missed) {
		l->missed += r->missed;
		fprintf(stderr, "getdelays: missed %llu records before this one (%s)\n",
			(unsigned long long)r->missed, "-r enlarges the buffer");
	}
	if (x->ts_open && l->kept) {
		ts_drain(&x->ts, keep_ts, l);
		tsr = find_ts(l, r);
		if (!tsr)
			why = "no taskstats record for this exit (missed)";
	}
	if (x->o.json || ((x->o.verbose || x->o.taskstats) && !x->o.csv)) {
		emit(x, r, tsr, why);
	} else {
		r = name_events(x, r, &spare);
		check_disabled(x, r);
		/* Again where the events, which have columns, changed. */
		if (!l->header || l->header_gen != out_events_gen()) {
			if (x->o.csv)
				csv_header(stdout, TABLE_EXITS);
			else
				table_header(stdout, TABLE_EXITS);
			l->header = true;
			l->header_gen = out_events_gen();
		}
		x->out.now = boottime_ns();
		if (x->o.csv)
			csv_row(stdout, TABLE_EXITS, r, &x->out);
		else
			table_row(stdout, TABLE_EXITS, r, &x->out);
		log_record(x, r, NULL);
		flush_output(x, stdout);
	}
	/* Without -l, stop when a process is over. */
	return !x->o.loop && r->type == RC_PROCESS;
}

static int listen_exits(struct ctx *x)
{
	struct listener l = { .x = x };
	sigset_t old_mask, wait_mask;
	int err, ret = EXIT_OK;

	err = rc_listen(&x->c, x->o.cpumask, true);
	if (err) {
		fprintf(stderr, "getdelays: cannot listen to CPUs %s: %s\n", x->o.cpumask,
			x->c.extack[0] ? x->c.extack : strerror(-err));
		return err == -EINVAL ? EXIT_USAGE : EXIT_ERROR;
	}
	if (x->ts_open) {
		err = ts_listen(&x->ts, x->o.cpumask);
		if (err) {
			x->ts_why = ts_error(err);
			ts_close(&x->ts);
			x->ts_open = false;
		} else {
			l.kept = calloc(TS_KEEP, sizeof(*l.kept));
		}
	}
	catch_stop_signals(&old_mask, &wait_mask);
	fprintf(stderr, "getdelays: listening for exits on CPUs %s (receive buffer %d bytes)\n",
		x->o.cpumask, rc_get_rcvbuf(&x->c));
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		err = rc_receive(&x->c, -1, &wait_mask, on_exit_record, &l);
		if (err == 1)
			break;
		if (err == -EINTR) {
			/* A SIGHUP: let go of the rotated file now. */
			reopen_log(x);
			continue;
		}
		if (err < 0) {
			fprintf(stderr, "getdelays: receiving: %s\n", strerror(-err));
			ret = EXIT_ERROR;
			break;
		}
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if (x->o.verbose || l.missed)
		fprintf(stderr, "getdelays: %lu records received, %lu missed\n", l.received,
			l.missed);
	free(l.kept);
	return ret;
}

/*
 * -C: the tasks of a cgroup by state, as classic getdelays printed them.
 * taskstats answers for cgroup v1 hierarchies only (cgroupstats_build()).
 */
static int read_cgroup(struct ctx *x)
{
	static const char *const names[] = {
		"sleeping", "blocked", "running", "stopped", "uninterruptible",
	};
	unsigned long long counts[ARRAY_SIZE(names)];
	struct cgroupstats cs;
	int fd, err;
	size_t i;

	fd = open(x->o.cgroup, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		err = errno;
		fprintf(stderr, "getdelays: cgroup %s: %s\n", x->o.cgroup, strerror(err));
		return err == ENOENT || err == ENOTDIR ? EXIT_NOT_FOUND :
		       err == EACCES ? EXIT_DENIED : EXIT_ERROR;
	}
	err = ts_open(&x->ts);
	if (err) {
		close(fd);
		fprintf(stderr, "getdelays: cgroup %s: %s\n", x->o.cgroup,
			err == -ENOENT ? "no taskstats in this kernel (CONFIG_TASKSTATS=n)" :
			"cannot open a generic netlink socket");
		return EXIT_ERROR;
	}
	err = ts_cgroup(&x->ts, fd, &cs);
	close(fd);
	ts_close(&x->ts);
	if (err == -EINVAL) {
		fprintf(stderr, "getdelays: cgroup %s: not in a cgroup v1 hierarchy\n",
			x->o.cgroup);
		return EXIT_NOT_FOUND;
	}
	if (err) {
		fprintf(stderr, "getdelays: cgroup %s: %s\n", x->o.cgroup, strerror(-err));
		return EXIT_ERROR;
	}
	counts[0] = cs.nr_sleeping;
	counts[1] = cs.nr_io_wait;
	counts[2] = cs.nr_running;
	counts[3] = cs.nr_stopped;
	counts[4] = cs.nr_uninterruptible;
	/* The classic tool's line, and its words as JSON keys. */
	if (x->o.json)
		fputs("{\"type\":\"cgroup\"", stdout);
	for (i = 0; i < ARRAY_SIZE(counts); i++)
		printf(x->o.json ? "%s\"%s\":%llu" : "%s%s %llu", x->o.json ? "," : i ? ", " : "",
		       names[i], counts[i]);
	puts(x->o.json ? "}" : "");
	return EXIT_OK;
}

/* --- intervals --- */

struct intervals {
	struct ctx *x;
	int kind;			/* the interval table */
	struct snapshot prev, cur;
	struct snapshot exits;		/* exit records not matched yet */
	struct rc_client lc;		/* the listener for exits, if it could be */
	bool listening;
	unsigned long long missed;
	struct snapshot rows;		/* the interval's records */
	uint32_t header_gen;		/* the generation of the events it named */
};

/* Whether an exit record is of what the intervals show. */
static bool exit_in_scope(const struct opts *o, const struct rc_record *r)
{
	switch (o->mode) {
	case MODE_PID:
		return r->type == RC_THREAD && r->pid == o->id;
	case MODE_TGID:
		return r->type == RC_PROCESS && r->tgid == o->id;
	case MODE_DUMP:
		if (o->scope == RECOUNT_SCOPE_THREADS)
			return r->type == RC_THREAD && (!o->id || r->tgid == o->id);
		return o->scope == RECOUNT_SCOPE_PROCESSES && r->type == RC_PROCESS;
	default:
		return false;
	}
}

static int on_interval_exit(const struct rc_record *r, void *arg)
{
	struct intervals *iv = arg;

	iv->missed += r->missed;
	if (exit_in_scope(&iv->x->o, r))
		snapshot_add(&iv->exits, r);
	return 0;
}

/*
 * Read now: the dump, or the one record. Returns 0, or the exit status of an
 * error, said; -ESRCH for a thread or process that is gone.
 */
static int read_now(struct intervals *iv, struct snapshot *s)
{
	static const int what[] = {
		[MODE_PID] = RC_SEL_PID, [MODE_TGID] = RC_SEL_TGID, [MODE_CPU] = RC_SEL_CPU,
	};
	struct ctx *x = iv->x;
	struct rc_record rec;
	bool interrupted;
	uint64_t t;
	int err;

	s->n = 0;
	t = boottime_ns();
	if (x->o.mode == MODE_DUMP) {
		err = rc_dump(&x->c, x->o.scope, x->o.id, add_to_snapshot, s, &interrupted);
	} else {
		err = rc_get(&x->c, what[x->o.mode], x->o.id, &rec);
		if (!err)
			err = snapshot_add(s, &rec) ? -ENOMEM : 0;
	}
	/* The middle of the read: a dump of many tasks takes a while. */
	s->begin = t;
	s->at = t + (boottime_ns() - t) / 2;
	snapshot_sort(s);
	return err;
}

static int terminal_rows(void)
{
	struct winsize ws;

	return !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row ? ws.ws_row : 24;
}

static void print_interval(struct intervals *iv, unsigned int nr)
{
	struct ctx *x = iv->x;
	bool dump = x->o.mode == MODE_DUMP, tty = x->o.top && isatty(STDOUT_FILENO);
	int col, i, n, shown = 0, active = 0;
	char when[16];
	time_t t;

	name_events_of(x, &iv->rows);
	x->out.now = iv->cur.at;
	col = x->o.sort ? table_column(iv->kind, x->o.sort) : table_default_sort(iv->kind);
	table_sort(iv->kind, iv->rows.recs, iv->rows.n, col, &x->out);
	n = iv->rows.n;
	if (x->o.limit && x->o.limit < n)
		n = x->o.limit;
	if (tty && !x->o.limit && n > terminal_rows() - 3)
		n = terminal_rows() - 3 > 0 ? terminal_rows() - 3 : 0;
	for (i = 0; i < iv->rows.n; i++)
		active += iv_active(&iv->rows.recs[i]);
	if (x->o.top) {
		t = time(NULL);
		strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
		printf("%sgetdelays --top - %s: %d %s, %d active; every %.2f s, by %s\n",
		       tty ? "\033[H\033[2J" : nr > 1 ? "\n" : "", when, iv->cur.n,
		       x->o.scope == RECOUNT_SCOPE_CPUS ? "CPUs" :
		       x->o.scope == RECOUNT_SCOPE_THREADS ? "threads" : "processes", active,
		       x->o.interval, table_column_name(iv->kind, col));
	}
	/* Headers again where the events, which have columns, changed. */
	if (x->o.csv && (nr == 1 || iv->header_gen != out_events_gen()))
		csv_header(stdout, iv->kind);
	if (!x->o.json && !x->o.csv &&
	    (x->o.top || (dump && active) || nr == 1 ||
	     (!dump && iv->header_gen != out_events_gen()))) {
		if (dump && !x->o.top && nr > 1)
			putchar('\n');
		table_header(stdout, iv->kind);
	}
	iv->header_gen = out_events_gen();
	for (i = 0; i < iv->rows.n && shown < n; i++) {
		const struct rc_record *r = &iv->rows.recs[i];

		/* A dump shows what was active; top also what stood still. */
		if (dump && !x->o.top && !iv_active(r))
			continue;
		shown++;
		if (x->o.json)
			out_json_record(stdout, r, NULL, &x->out);
		else if (x->o.csv)
			csv_row(stdout, iv->kind, r, &x->out);
		else
			table_row(stdout, iv->kind, r, &x->out);
		log_record(x, r, NULL);
	}
	flush_output(iv->x, stdout);
}

/* Wait until @deadline (CLOCK_MONOTONIC), taking exit records meanwhile. */
static void wait_until(struct intervals *iv, uint64_t deadline, const sigset_t *wait_mask)
{
	uint64_t now;

	while (!atomic_load_explicit(&stop, memory_order_relaxed) &&
	       (now = clock_ns(CLOCK_MONOTONIC)) < deadline) {
		int ms = (deadline - now + 999999) / 1000000;

		if (iv->listening) {
			if (rc_receive(&iv->lc, ms, wait_mask, on_interval_exit, iv) == -EIO) {
				fputs("getdelays: listening for exits failed\n", stderr);
				rc_close(&iv->lc);
				iv->listening = false;
			}
		} else {
			struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

			ppoll(NULL, 0, &ts, wait_mask);
		}
	}
}

/* Listen for the exits on every CPU, if this user may. */
static void listen_for_exits(struct intervals *iv)
{
	char cpus[4096] = "";
	FILE *f;
	int err;

	if (iv->x->o.mode == MODE_CPU || (iv->x->o.mode == MODE_DUMP &&
					  iv->x->o.scope == RECOUNT_SCOPE_CPUS))
		return;
	/* The possible CPUs, those hot-added later included. */
	f = fopen("/sys/devices/system/cpu/possible", "r");
	if (!f || !fgets(cpus, sizeof(cpus), f))
		snprintf(cpus, sizeof(cpus), "0-%d", get_nprocs_conf() - 1);
	if (f)
		fclose(f);
	cpus[strcspn(cpus, "\n")] = '\0';
	iv->lc.verbose = iv->x->o.verbose;
	/* What a task did in the interval it exited in is lost. */
	err = rc_open(&iv->lc);
	if (err) {
		fprintf(stderr, "getdelays: cannot listen for exits: %s: exits have no figures\n",
			strerror(-err));
		return;
	}
	if (iv->x->o.rcvbuf)
		rc_set_rcvbuf(&iv->lc, iv->x->o.rcvbuf);
	err = rc_listen(&iv->lc, cpus, true);
	if (err) {
		fprintf(stderr, "getdelays: cannot listen for exits: %s: exits have no figures\n",
			iv->lc.extack[0] ? iv->lc.extack : strerror(-err));
		rc_close(&iv->lc);
		return;
	}
	iv->listening = true;
}

/* Say why a read failed; the exit status. */
static int read_error(struct ctx *x, int err)
{
	static const char *const what[] = {
		[MODE_PID] = "thread", [MODE_TGID] = "process", [MODE_CPU] = "cpu",
	};

	if (x->o.mode != MODE_DUMP || (x->o.id && err == -ESRCH))
		return report_error(&x->c, err, x->o.mode == MODE_DUMP ? "process" :
				    what[x->o.mode], x->o.id);
	return dump_error(x, err);
}

static int run_intervals(struct ctx *x)
{
	struct intervals iv = { .x = x, .kind = opts_table(&x->o) };
	sigset_t old_mask, wait_mask;
	uint64_t start, now, step = x->o.interval * 1e9;
	int err, ret = EXIT_OK;
	unsigned int nr;

	listen_for_exits(&iv);
	catch_stop_signals(&old_mask, &wait_mask);

	start = clock_ns(CLOCK_MONOTONIC);
	err = read_now(&iv, &iv.prev);
	if (err) {
		ret = read_error(x, err);
		goto out;
	}
	if (iv.prev.n)
		check_disabled(x, &iv.prev.recs[0]);
	for (nr = 1; !x->o.count || nr <= x->o.count; nr++) {
		bool gone;

		/*
		 * After a stop (SIGSTOP) or reads slower than the interval,
		 * skip the ticks that passed rather than print them at once.
		 */
		now = clock_ns(CLOCK_MONOTONIC);
		if (now > start + nr * step)
			start += (now - start - (nr - 1) * step) / step * step;
		wait_until(&iv, start + nr * step, &wait_mask);
		if (atomic_load_explicit(&stop, memory_order_relaxed))
			break;
		err = read_now(&iv, &iv.cur);
		/* A pid that came back is another task: the one watched exited. */
		if (!err && x->o.mode != MODE_DUMP && iv.cur.n == 1 && iv.prev.n == 1 &&
		    iv_compare(&iv.cur.recs[0], &iv.prev.recs[0])) {
			iv.cur.n = 0;
			err = -ESRCH;
		}
		/* The thread or process read, or whose threads are dumped, exited. */
		gone = err == -ESRCH && x->o.mode != MODE_CPU &&
		       (x->o.mode != MODE_DUMP || x->o.id);
		if (err && !gone) {
			ret = read_error(x, err);
			break;
		}
		/*
		 * The exit records of what exited before the read was sent
		 * before it was gone: they are here to take.
		 */
		if (iv.listening)
			rc_receive(&iv.lc, 0, NULL, on_interval_exit, &iv);
		if (iv_build(&iv.prev, &iv.cur, &iv.exits, &iv.rows, clock_ns(CLOCK_REALTIME))) {
			fputs("getdelays: out of memory\n", stderr);
			ret = EXIT_ERROR;
			break;
		}
		print_interval(&iv, nr);
		if (gone) {
			fprintf(stderr, "getdelays: %s %u exited\n",
				x->o.mode == MODE_PID ? "thread" : "process", x->o.id);
			break;
		}
		snapshot_free(&iv.prev);
		iv.prev = iv.cur;
		memset(&iv.cur, 0, sizeof(iv.cur));
	}
	if (iv.missed)
		fprintf(stderr, "getdelays: missed %llu exit records (-r enlarges the buffer)\n",
			iv.missed);
out:
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if (iv.listening)
		rc_close(&iv.lc);
	snapshot_free(&iv.prev);
	snapshot_free(&iv.cur);
	snapshot_free(&iv.exits);
	snapshot_free(&iv.rows);
	return ret;
}

/* Name the chosen events of the records to come, as get-info does. */
static void out_events_of(struct rc_client *c)
{
	struct rc_info info;

	if (!rc_get_info(c, &info))
		out_set_events(&info);
}

static int info(struct ctx *x)
{
	struct rc_info info;
	int err;

	err = rc_get_info(&x->c, &info);
	if (err) {
		fprintf(stderr, "getdelays: %s\n", x->c.extack[0] ? x->c.extack : strerror(-err));
		return EXIT_ERROR;
	}
	out_info(stdout, &info, &x->out);
	if (info.flags & RECOUNT_FLAGS_DISABLED)
		fputs("getdelays: recount is off: kernel.recount=1 switches it on\n", stderr);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	struct ctx x = {};
	char err_msg[512];
	int err, ret;

	if (parse_args(argc, argv, &x.o, err_msg, sizeof(err_msg))) {
		fprintf(stderr, "getdelays: %s\n", err_msg);
		return EXIT_USAGE;
	}
	if (x.o.mode == MODE_HELP) {
		fputs(usage_text, stdout);
		return close_outputs(&x, EXIT_OK);
	}
	x.out.json = x.o.json;
	x.out.verbose = x.o.verbose;
	x.out.runtime_version = x.o.runtime_version;
	/*
	 * Command names keep characters beyond ASCII only where they can be
	 * shown; in CSV also where it goes to a file or a pipe, as ls(1) does.
	 */
	setlocale(LC_CTYPE, "");
	x.out.utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	x.out.csv_utf8 = x.out.utf8 || !isatty(STDOUT_FILENO);
	x.c.verbose = x.o.verbose;
	x.c.runtime_version = x.o.runtime_version;

	if (x.o.mode == MODE_CGROUP)
		return close_outputs(&x, read_cgroup(&x));
	if (x.o.logfile) {
		struct sigaction hup = { .sa_handler = on_signal, .sa_flags = SA_RESTART };

		if (open_log(&x, x.o.append))
			return EXIT_ERROR;
		sigaction(SIGHUP, &hup, NULL);
	}
	err = rc_open(&x.c);
	if (err) {
		ret = open_error(err, err_msg, sizeof(err_msg));
		fprintf(stderr, "getdelays: %s\n", err_msg);
		return ret;
	}
	if (x.o.rcvbuf && rc_set_rcvbuf(&x.c, x.o.rcvbuf))
		fprintf(stderr, "getdelays: cannot set the receive buffer to %d bytes\n",
			x.o.rcvbuf);
	if (x.o.events_given) {
		err = rc_set_events(&x.c, x.o.events, x.o.nr_events);
		if (err) {
			fprintf(stderr, "getdelays: cannot choose the events: %s\n",
				x.c.extack[0] ? x.c.extack : strerror(-err));
			rc_close(&x.c);
			if (err == -E2BIG)
				return EXIT_USAGE;
			return err == -EACCES || err == -EPERM ? EXIT_DENIED : EXIT_ERROR;
		}
		if (x.c.extack[0])
			fprintf(stderr, "getdelays: warning: %s\n", x.c.extack);
	}
	out_events_of(&x.c);
	open_taskstats(&x);

	switch (x.o.interval ? MODE_NONE : x.o.mode) {
	case MODE_NONE:
		ret = run_intervals(&x);
		break;
	case MODE_PID:
		ret = query(&x, RC_SEL_PID, x.o.id);
		break;
	case MODE_TGID:
		ret = query(&x, RC_SEL_TGID, x.o.id);
		break;
	case MODE_CPU:
		ret = query(&x, RC_SEL_CPU, x.o.id);
		break;
	case MODE_COMMAND:
		ret = run_command(&x);
		break;
	case MODE_DUMP:
		ret = dump(&x);
		break;
	case MODE_LISTEN:
		ret = listen_exits(&x);
		break;
	case MODE_INFO:
	default:
		ret = info(&x);
		break;
	}
	if (x.ts_open)
		ts_close(&x.ts);
	rc_close(&x.c);
	return close_outputs(&x, ret);
}
