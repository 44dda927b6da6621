// SPDX-License-Identifier: GPL-2.0
/*
 * getdelays: print what recount accounted for threads, processes and CPUs.
 *
 * The successor of tools/accounting/getdelays for the RECOUNT generic netlink
 * family (Documentation/accounting/recount.rst): its options, recount's
 * metrics, dumps, listener mode and JSON. Run with --help for usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "options.h"
#include "output.h"
#include "recount_client.h"

struct ctx {
	struct opts o;
	struct out_opts out;
	struct rc_client c;
	struct ts_client ts;
	bool ts_open;
	const char *ts_why;	/* why there are no taskstats, if so */
	FILE *log;
	bool warned_disabled;
};

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

/* Print one record with its taskstats (or why there are none). */
static void emit(struct ctx *x, const struct rc_record *r, const struct ts_record *tsr,
		 const char *ts_why)
{
	struct ts_shown ts = {
		.what = x->o.taskstats, .rec = tsr, .why = ts_why,
		.delayacct_off = (x->o.taskstats & TS_DELAYS) && delayacct_off(),
	};

	check_disabled(x, r);
	x->out.now = boottime_ns();
	if (x->o.json)
		out_json_record(stdout, r, &ts, &x->out);
	else
		out_text_record(stdout, r, &ts, &x->out);
	if (x->log) {
		out_json_record(x->log, r, &ts, &x->out);
		fflush(x->log);
	}
	fflush(stdout);
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

/* The records of a dump, to sort before printing. */
struct rows {
	struct rc_record *recs;
	int n, size;
};

static int collect(const struct rc_record *rec, void *arg)
{
	struct rows *rows = arg;

	if (rows->n == rows->size) {
		int size = rows->size ? rows->size * 2 : 256;
		struct rc_record *recs = realloc(rows->recs, size * sizeof(*recs));

		if (!recs)
			return -1;
		rows->recs = recs;
		rows->size = size;
	}
	rows->recs[rows->n++] = *rec;
	return 0;
}

static int dump(struct ctx *x)
{
	int kind = dump_table(x->o.scope), col, i, n, err;
	struct rows rows = {};
	bool interrupted;

	err = rc_dump(&x->c, x->o.scope, x->o.id, collect, &rows, &interrupted);
	if (err) {
		free(rows.recs);
		if (x->o.id && err == -ESRCH)
			return report_error(&x->c, err, "process", x->o.id);
		fprintf(stderr, "getdelays: cannot list the %s: %s\n",
			kind == TABLE_CPUS ? "CPUs" :
			kind == TABLE_PROCESSES ? "processes" : "threads",
			x->c.extack[0] ? x->c.extack : strerror(-err));
		return err == -EINVAL || err == -ERANGE ? EXIT_USAGE : EXIT_ERROR;
	}
	x->out.now = boottime_ns();
	col = x->o.sort ? table_column(kind, x->o.sort) : table_default_sort(kind);
	table_sort(kind, rows.recs, rows.n, col, &x->out);
	n = x->o.limit && x->o.limit < rows.n ? x->o.limit : rows.n;
	if (n)
		check_disabled(x, &rows.recs[0]);
	if (!x->o.json)
		table_header(stdout, kind);
	for (i = 0; i < n; i++) {
		if (x->o.json)
			out_json_record(stdout, &rows.recs[i], NULL, &x->out);
		else
			table_row(stdout, kind, &rows.recs[i], &x->out);
		if (x->log)
			out_json_record(x->log, &rows.recs[i], NULL, &x->out);
	}
	if (interrupted && x->o.verbose)
		fputs("getdelays: tasks came and went while they were listed: each one\n"
		      "getdelays: that lived through it is listed once, but it is no snapshot\n",
		      stderr);
	free(rows.recs);
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

/* Set by the signal handler; a lock-free atomic, safe to share with it. */
static atomic_bool stop;

static void on_signal(int sig)
{
	atomic_store_explicit(&stop, true, memory_order_relaxed);
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

	if (stop_pending())
		return 1;
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
	if (x->o.json || x->o.verbose || x->o.taskstats) {
		emit(x, r, tsr, why);
	} else {
		check_disabled(x, r);
		if (!l->header) {
			table_header(stdout, TABLE_EXITS);
			l->header = true;
		}
		x->out.now = boottime_ns();
		table_row(stdout, TABLE_EXITS, r, &x->out);
		if (x->log) {
			out_json_record(x->log, r, NULL, &x->out);
			fflush(x->log);
		}
		fflush(stdout);
	}
	/* Without -l, stop when a process is over. */
	return !x->o.loop && r->type == RC_PROCESS;
}

static int listen_exits(struct ctx *x)
{
	struct listener l = { .x = x };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t stop_signals, old_mask, wait_mask;
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
	/*
	 * SIGINT and SIGTERM stop the listener, and getdelays says goodbye.
	 * They are let in only while it waits (no SA_RESTART: they end the
	 * wait), so that none is lost between a check and the wait; one that
	 * comes while records are handled stops it before the next record.
	 */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop_signals, &old_mask);
	wait_mask = old_mask;
	sigdelset(&wait_mask, SIGINT);
	sigdelset(&wait_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "getdelays: listening for exits on CPUs %s (receive buffer %d bytes)\n",
		x->o.cpumask, rc_get_rcvbuf(&x->c));
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		err = rc_receive(&x->c, -1, &wait_mask, on_exit_record, &l);
		if (err == 1)
			break;
		if (err == -EINTR)
			continue;
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
		return EXIT_OK;
	}
	x.out.json = x.o.json;
	x.out.verbose = x.o.verbose;
	x.out.runtime_version = x.o.runtime_version;
	x.c.verbose = x.o.verbose;
	x.c.runtime_version = x.o.runtime_version;

	if (x.o.logfile) {
		x.log = fopen(x.o.logfile, "w");
		if (!x.log) {
			fprintf(stderr, "getdelays: %s: %s\n", x.o.logfile, strerror(errno));
			return EXIT_ERROR;
		}
	}
	err = rc_open(&x.c);
	if (err == -ENOENT) {
		fprintf(stderr, "getdelays: no recount in this kernel (no netlink family '%s')\n",
			RECOUNT_FAMILY_NAME);
		return EXIT_NO_RECOUNT;
	}
	if (err) {
		fprintf(stderr, "getdelays: cannot open a generic netlink socket: %s\n",
			strerror(-err));
		return EXIT_ERROR;
	}
	if (x.o.rcvbuf && rc_set_rcvbuf(&x.c, x.o.rcvbuf))
		fprintf(stderr, "getdelays: cannot set the receive buffer to %d bytes\n",
			x.o.rcvbuf);
	open_taskstats(&x);

	switch (x.o.mode) {
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
	if (x.log)
		fclose(x.log);
	return ret;
}
