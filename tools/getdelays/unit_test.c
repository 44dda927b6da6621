// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of getdelays, run on the build machine (make check): parsing of
 * the command line, CPU lists and sizes; decoding of records from crafted
 * netlink messages, including attributes of a newer kernel; tables and JSON.
 * TAP output; the exit status is the number of failures (at most 255).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <linux/perf_event.h>

#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "interval.h"
#include "json_check.h"
#include "options.h"
#include "output.h"
#include "recount_client.h"

static int tests, failures;

/*
 * One TAP test point: the first line of the message describes it, the rest
 * (what was got) is a diagnostic shown only when it fails.
 */
static void check(bool ok, const char *fmt, ...)
{
	char msg[4096], *line, *next;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	next = strchr(msg, '\n');
	if (next)
		*next++ = '\0';
	printf("%sok %d - %s\n", ok ? "" : "not ", ++tests, msg);
	failures += !ok;
	for (line = next; !ok && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		printf("#   %s\n", line);
	}
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The pieces up to a NULL, joined: expected lines longer than a line of
 * code, without splitting string literals.
 */
static const char *joined(const char *first, ...)
{
	static char buf[4096];
	const char *p;
	size_t len = 0;
	va_list ap;

	buf[0] = '\0';
	va_start(ap, first);
	for (p = first; p && len < sizeof(buf); p = va_arg(ap, const char *))
		len += snprintf(buf + len, sizeof(buf) - len, "%s", p);
	va_end(ap);
	return buf;
}

static void test_parse_u32(void)
{
	static const struct {
		const char *s;
		int ret;
		uint32_t v;
	} cases[] = {
		{ "0", 0, 0 }, { "42", 0, 42 }, { "4294967295", 0, 4294967295u },
		{ "", -1, 0 }, { "-1", -1, 0 }, { "+1", -1, 0 }, { "4294967296", -1, 0 },
		{ "12a", -1, 0 }, { " 1", -1, 0 }, { "0x10", -1, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint32_t v = 0;
		int ret = parse_u32(cases[i].s, &v);

		check(ret == cases[i].ret && (ret || v == cases[i].v), "parse_u32(\"%s\")",
		      cases[i].s);
	}
}

static void test_parse_cpulist(void)
{
	static const char *const good[] = { "0", "0-3", "1-3,5", "0,2,4-7", "3-3", "8191" };
	static const char *const bad[] = { "", "1-", "-1", "3-1", "a", "1,,2", "1-2-3", ",1",
					   "1 ", "1,", "0x3" };
	char err[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		check(!parse_cpulist(good[i], err, sizeof(err)), "cpulist \"%s\" is good", good[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		check(parse_cpulist(bad[i], err, sizeof(err)) && err[0],
		      "cpulist \"%s\" is bad: %s", bad[i], err);
	}
	parse_cpulist("3-1", err, sizeof(err));
	check(strstr(err, "backwards"), "a backwards range says so: %s", err);
}

static void test_parse_size(void)
{
	static const struct {
		const char *s;
		int ret, bytes;
	} cases[] = {
		{ "65536", 0, 65536 }, { "256K", 0, 262144 }, { "256k", 0, 262144 },
		{ "4M", 0, 4 << 20 }, { "1G", 0, 1 << 30 }, { "0", -1, 0 }, { "", -1, 0 },
		{ "1T", -1, 0 }, { "-1", -1, 0 }, { "2G", -1, 0 }, { "4MB", -1, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int bytes = 0, ret = parse_size(cases[i].s, &bytes);

		check(ret == cases[i].ret && (ret || bytes == cases[i].bytes),
		      "parse_size(\"%s\")", cases[i].s);
	}
	check(parse_scope("threads") == RECOUNT_SCOPE_THREADS && parse_scope("p") ==
	      RECOUNT_SCOPE_PROCESSES && parse_scope("cpus") == RECOUNT_SCOPE_CPUS &&
	      parse_scope("x") < 0 && parse_scope("") < 0, "parse_scope");
}

/* Parse a command line given as one string of space-separated words. */
static int parse(const char *line, struct opts *o, char *err, size_t errlen)
{
	static char buf[512];
	static char *argv[64];
	int argc = 0;
	char *w;

	snprintf(buf, sizeof(buf), "getdelays %s", line);
	for (w = strtok(buf, " "); w && argc < 63; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	return parse_args(argc, argv, o, err, errlen);
}

static void test_parse_args(void)
{
	static const struct {
		const char *line, *error;	/* NULL: parses */
	} bad[] = {
		{ "", "say what to read" },
		{ "-p 1 -t 2", "only one of" },
		{ "-p abc", "not a number" },
		{ "-p", "-p needs an argument" },
		{ "-x", "unknown option -x" },
		{ "--frobnicate", "unknown option --frobnicate" },
		{ "-c", "-c needs a command" },
		{ "-p 1 extra", "unexpected argument 'extra'" },
		{ "-D processes -t 7", "threads only" },
		{ "-D everything", "dump threads, processes or cpus" },
		{ "-D threads -s busy%", "no column 'busy%'" },
		{ "-D cpus -s faults", "no column 'faults'" },
		{ "-p 1 -s time", "go with -D" },
		{ "-D threads -n 0", "not a number of rows" },
		{ "-m 3-1", "backwards" },
		{ "-m 1,,2", "not a CPU list" },
		{ "-m", "-m needs an argument" },
		{ "-p 1 -l", "-l goes with -m" },
		{ "-P 0 -d", "go with -p, -t, -c or -m (no CPUs" },
		{ "-D threads -q", "go with -p, -t, -c or -m (no CPUs or dumps)" },
		{ "-p 1 -R 0", "not a version" },
		{ "-P 0 -R 2", "CPUs have no runtime" },
		{ "-P x", "-P: 'x' is not a number" },
		{ "-C", "-C needs an argument" },
		{ "-C /a -p 1", "only one of" },
		{ "--interval 0 -p 1", "not a number of seconds" },
		{ "--interval 0.001 -p 1", "not a number of seconds" },
		{ "--interval -1 -p 1", "not a number of seconds" },
		{ "--interval 1e3 -p 1", "not a number of seconds" },
		{ "--interval abc -p 1", "not a number of seconds" },
		{ "--interval 86401 -p 1", "not a number of seconds" },
		{ "-p 1 --interval", "--interval needs an argument" },
		{ "--count 0 --interval 1 -p 1", "not a number of intervals" },
		{ "-p 1 --count 3", "--count goes with --interval" },
		{ "--interval 1 -c ls", "--interval goes with" },
		{ "--interval 1 -m 0", "--interval goes with" },
		{ "--interval 1 -I", "--interval goes with" },
		{ "--top -p 1", "--top shows" },
		{ "--top -m 0", "--top shows" },
		{ "--top --json", "--top prints tables" },
		{ "--top -D threads -s busy%", "no column 'busy%'" },
		{ "--interval 1 -D threads -s time%", "no column 'time%'" },
		{ "--json --csv -p 1", "only one of --json, --csv" },
		{ "--openmetrics --prometheus -p 1", "only one of" },
		{ "--prometheus -m 0", "--prometheus goes with" },
		{ "--top=5", "--top takes no argument" },
		{ "-C /a -w f", "-C prints one line" },
		{ "-C /a -R 1", "not with -C" },
		{ "--openmetrics --interval 1 -p 1", "the collector computes their rates" },
		{ "--openmetrics -m 0", "--openmetrics goes with" },
		{ "--csv -I", "--csv goes with" },
		{ "-a -p 1", "-a goes with -w" },
		{ "--interval 1 -p 1 -d", "print totals" },
		{ "--interval 1 -p 1 -R 2", "not in intervals" },
		{ "-D cpus -R 1", "CPUs have no runtime" },
		{ "-m 0 -R 1", "exit records" },
		{ "-p 1 -r 0", "not a size" },
		{ "-I -p 1", "only one of" },
	};
	char err[512];
	struct opts o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = parse(bad[i].line, &o, err, sizeof(err));

		check(ret && strstr(err, bad[i].error), "\"%s\" fails: %s", bad[i].line, err);
	}

	check(!parse("-p 42", &o, err, sizeof(err)) && o.mode == MODE_PID && o.id == 42,
	      "-p 42");
	check(!parse("-t 7 -D threads", &o, err, sizeof(err)) && o.mode == MODE_DUMP &&
	      o.id == 7 && o.scope == RECOUNT_SCOPE_THREADS, "-t 7 -D threads");
	check(!parse("-D t -t 7 -s cpi -n 5 --json", &o, err, sizeof(err)) && o.mode == MODE_DUMP &&
	      o.id == 7 && !strcmp(o.sort, "cpi") && o.limit == 5 && o.json,
	      "-D t -t 7 -s cpi -n 5 --json");
	check(!parse("-D cpus -s busy%", &o, err, sizeof(err)) && o.scope == RECOUNT_SCOPE_CPUS,
	      "-D cpus -s busy%%");
	check(!parse("-v -c ls -l -p 3", &o, err, sizeof(err)) && o.mode == MODE_COMMAND &&
	      !strcmp(o.command[0], "ls") && !strcmp(o.command[1], "-l") &&
	      !strcmp(o.command[2], "-p") && !o.command[4] && o.verbose == 1,
	      "-c takes everything after it as the command");
	check(!parse("-m 1-3,5 -l -w out.json -r 4M -d -i -q", &o, err, sizeof(err)) &&
	      o.mode == MODE_LISTEN && !strcmp(o.cpumask, "1-3,5") && o.loop &&
	      !strcmp(o.logfile, "out.json") && o.rcvbuf == 4 << 20 &&
	      o.taskstats == (TS_DELAYS | TS_IO | TS_CSW_MEM),
	      "-m 1-3,5 -l -w out.json -r 4M -diq");
	check(!parse("-t 9 -R 2 -d", &o, err, sizeof(err)) && o.mode == MODE_TGID &&
	      o.runtime_version == 2 && o.taskstats == TS_DELAYS, "-t 9 -R 2 -d");
	check(!parse("--json -I", &o, err, sizeof(err)) && o.mode == MODE_INFO && o.json,
	      "--json -I");
	check(!parse("-p 1 --help", &o, err, sizeof(err)) && o.mode == MODE_HELP, "--help");
	check(!parse("--pid=5 --verbose --verbose", &o, err, sizeof(err)) && o.id == 5 &&
	      o.verbose == 2, "long options");

	/* A kernel without recount: one line, its own exit status. */
	check(open_error(-ENOENT, err, sizeof(err)) == EXIT_NO_RECOUNT &&
	      !strcmp(err, "no recount in this kernel (no netlink family 'recount')"),
	      "a kernel without recount: exit 2, %s", err);
	check(open_error(-EPERM, err, sizeof(err)) == EXIT_ERROR && strstr(err, "socket"),
	      "no socket: exit 5, %s", err);

	/* The classic getdelays' flags, with their classic meaning. */
	check(!parse("-C /sys/fs/cgroup/cpu/a", &o, err, sizeof(err)) && o.mode == MODE_CGROUP &&
	      !strcmp(o.cgroup, "/sys/fs/cgroup/cpu/a"), "-C is a cgroup path");
	check(!parse("-P 3", &o, err, sizeof(err)) && o.mode == MODE_CPU && o.id == 3 &&
	      opts_table(&o) == TABLE_CPUS, "-P 3: a CPU");
	check(!parse("-d -i -q -v -p 12", &o, err, sizeof(err)) && o.mode == MODE_PID &&
	      o.taskstats == (TS_DELAYS | TS_IO | TS_CSW_MEM) && o.verbose == 1,
	      "-d -i -q -v -p: delays, I/O, context switches, verbose, a thread");
	check(!parse("-t 12 -d", &o, err, sizeof(err)) && o.mode == MODE_TGID &&
	      opts_table(&o) == TABLE_PROCESSES, "-t: a process");
	check(!parse("-m 0-1 -l -w log -a -r 64K", &o, err, sizeof(err)) &&
	      o.mode == MODE_LISTEN && o.loop && o.append && o.rcvbuf == 65536 &&
	      opts_table(&o) == TABLE_EXITS, "-m -l -w -a -r: a listener and its log");
	check(!parse("-d -c sleep 1", &o, err, sizeof(err)) && o.mode == MODE_COMMAND &&
	      o.taskstats == TS_DELAYS, "-c: a command");

	/* Intervals and the top view. */
	check(!parse("--interval 0.2 --count 5 -p 9", &o, err, sizeof(err)) &&
	      o.interval == 0.2 && o.count == 5 && opts_table(&o) == TABLE_THREADS_IV,
	      "--interval 0.2 --count 5 -p 9");
	check(!parse("--interval=2 -D cpus -s idle% --csv", &o, err, sizeof(err)) &&
	      o.interval == 2 && o.csv && opts_table(&o) == TABLE_CPUS_IV,
	      "--interval=2 -D cpus -s idle%% --csv");
	check(!parse("--top", &o, err, sizeof(err)) && o.top && o.mode == MODE_DUMP &&
	      o.scope == RECOUNT_SCOPE_PROCESSES && o.interval == 1 && !o.count &&
	      opts_table(&o) == TABLE_PROCESSES_IV, "--top: processes every second");
	check(!parse("--top -t 7 -s lock% -n 3 --count 2 --interval 0.5", &o, err, sizeof(err)) &&
	      o.mode == MODE_DUMP && o.scope == RECOUNT_SCOPE_THREADS && o.id == 7 &&
	      o.limit == 3 && o.count == 2 && o.interval == 0.5 && !strcmp(o.sort, "lock%"),
	      "--top -t 7: the threads of a process");
	check(!parse("--top -D cpus", &o, err, sizeof(err)) && o.scope == RECOUNT_SCOPE_CPUS,
	      "--top -D cpus");
	check(!parse("--openmetrics -D processes", &o, err, sizeof(err)) && o.openmetrics,
	      "--openmetrics -D processes");
	check(!parse("--prometheus -c true", &o, err, sizeof(err)) && o.prometheus,
	      "--prometheus -c true");
	check(!parse("--csv -D threads --rows 4", &o, err, sizeof(err)) && o.csv && o.limit == 4,
	      "--csv -D threads --rows 4");
}

static struct rc_record sample(uint32_t pid, const char *comm, uint64_t user, bool cycles);

#define SEC 1000000000ULL

/* A thread that started at @start and ran @user ns in user mode so far. */
static struct rc_record task(uint32_t pid, uint64_t start, uint64_t user)
{
	struct rc_record r = sample(pid, "t", user, true);

	r.start_time.v = start;
	r.runtime.has_waits = true;
	return r;
}

static void snap(struct snapshot *s, uint64_t at, const struct rc_record *recs, int n)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->at = at;
	s->begin = at;
	for (i = 0; i < n; i++)
		snapshot_add(s, &recs[i]);
	snapshot_sort(s);
}

static const struct rc_record *row_of(const struct snapshot *rows, uint32_t pid, uint64_t start)
{
	int i;

	for (i = 0; i < rows->n; i++)
		if (rows->recs[i].pid == pid && rows->recs[i].start_time.v == start)
			return &rows->recs[i];
	return NULL;
}

static void test_interval(void)
{
	struct snapshot prev, cur, exits = {}, rows = {};
	struct rc_record p[4], c[4], e, d;
	const struct rc_record *r;
	double x;
	int ret;

	/* 101 ran 0.5 s of 1 s; 102 did not move; 103 exits; 104 reused 105's pid. */
	p[0] = task(101, 1 * SEC, 2 * SEC);
	p[1] = task(102, 1 * SEC, 1 * SEC);
	p[2] = task(103, 1 * SEC, 1 * SEC);
	p[3] = task(105, 1 * SEC, 1 * SEC);
	c[0] = task(101, 1 * SEC, 2 * SEC + SEC / 2);
	c[0].usage.user_cycles.v = p[0].usage.user_cycles.v + 1000;
	c[0].usage.user_instructions.v = p[0].usage.user_instructions.v + 1500;
	c[0].runtime.queue_ns += SEC / 10;
	c[0].runtime.wait[RC_WAIT_QUEUE] = (struct rc_wait_stats){ 3, SEC / 20, 10 * SEC + 5 };
	c[1] = p[1];
	c[2] = task(105, 10 * SEC + SEC / 2, SEC / 4);	/* the pid, another task */
	snap(&prev, 10 * SEC, p, 4);
	snap(&cur, 11 * SEC, c, 3);
	e = task(103, 1 * SEC, 1 * SEC + SEC / 10);
	e.is_exit = true;
	e.exit_time = 10 * SEC + SEC / 5;
	snapshot_add(&exits, &e);
	ret = iv_build(&prev, &cur, &exits, &rows, 0);
	check(!ret && rows.n == 5,
	      "an interval's rows: 101, 102, 103 exited, 105 gone, 105 began (%d)", rows.n);

	r = row_of(&rows, 101, 1 * SEC);
	check(r && r->usage.user_ns.has && r->usage.user_ns.v == SEC / 2 &&
	      r->usage.kernel_ns.v == 0 && r->iv.span_ns == SEC && !r->iv.state,
	      "a thread's interval: its user time less the first read's");
	check(r && table_column(TABLE_THREADS_IV, "cpu%") >= 0, "cpu%% is a column");
	check(r && rc_cpi(&r->usage.user_instructions, &r->usage.user_cycles, &x) && x == 1.5,
	      "IPC of the interval: 1500 instructions in 1000 cycles");
	check(r && r->runtime.queue_ns == SEC / 10 && r->runtime.wait[RC_WAIT_QUEUE].count == 3 &&
	      (r->iv.max_in & 1 << RC_WAIT_QUEUE) && !(r->iv.max_in & 1 << RC_WAIT_FAULT),
	      "waits: the queue's new longest ended in it, the faults' did not");

	r = row_of(&rows, 102, 1 * SEC);
	check(r && r->usage.user_ns.v == 0 && r->usage.user_ns.has && !iv_active(r),
	      "counters that did not move: 0, and not active");

	r = row_of(&rows, 103, 1 * SEC);
	check(r && r->iv.state == RC_IV_EXITED && r->usage.user_ns.v == SEC / 10 &&
	      r->iv.span_ns == SEC / 5,
	      "an exit in the interval: its exit record less the first read, up to its exit");

	r = row_of(&rows, 105, 1 * SEC);
	check(r && r->iv.state == RC_IV_EXITED && !r->usage.user_ns.has && !r->runtime.has,
	      "pid reuse: the first 105 exited, without an exit record: no figures");
	r = row_of(&rows, 105, 10 * SEC + SEC / 2);
	check(r && r->iv.state == RC_IV_BEGAN && r->usage.user_ns.v == SEC / 4 &&
	      r->iv.span_ns == SEC / 2,
	      "pid reuse: the second 105 began in it and is never subtracted from the first");
	check(!exits.n, "exit records are used up");

	/* A task that began and exited in the interval; a zombie's exit waits. */
	e = task(106, 10 * SEC + SEC / 4, SEC / 8);
	e.is_exit = true;
	e.exit_time = 10 * SEC + SEC / 2;
	snapshot_add(&exits, &e);
	e = c[1];
	e.is_exit = true;
	e.exit_time = 10 * SEC + SEC / 2;
	snapshot_add(&exits, &e);
	iv_build(&prev, &cur, &exits, &rows, 0);
	r = row_of(&rows, 106, 10 * SEC + SEC / 4);
	check(r && r->iv.state == (RC_IV_BEGAN | RC_IV_EXITED) && r->usage.user_ns.v == SEC / 8 &&
	      r->iv.span_ns == SEC / 4, "began and exited in the interval: its whole exit record");
	check(exits.n == 1 && exits.recs[0].pid == 102,
	      "the exit record of a task still listed is kept for the next interval");
	snapshot_free(&exits);

	/* Not seen at the first read, but older: nothing can be said. */
	check(iv_delta(NULL, &c[0], 10 * SEC, 11 * SEC, &d) == -1,
	      "a task the first read missed is not shown");

	/* Counters that went backwards, and kinds of CPUs. */
	c[3] = task(107, 1 * SEC, SEC);
	p[3] = c[3];
	p[3].usage.user_ns.v = 2 * SEC;
	p[3].nr_kinds = 1;
	p[3].per_kind[0] = (struct rc_usage){ .user_ns = { true, SEC }, .kernel_ns = { true, 0 },
					      .has_kind = true, .kind = RECOUNT_KIND_PERFORMANCE };
	c[3].nr_kinds = 2;
	c[3].per_kind[0] = (struct rc_usage){ .user_ns = { true, SEC / 2 },
					      .kernel_ns = { true, 0 },
					      .has_kind = true, .kind = RECOUNT_KIND_EFFICIENCY };
	c[3].per_kind[1] = (struct rc_usage){ .user_ns = { true, 3 * SEC },
					      .kernel_ns = { true, 0 },
					      .has_kind = true, .kind = RECOUNT_KIND_PERFORMANCE };
	iv_delta(&p[3], &c[3], 10 * SEC, 11 * SEC, &d);
	check(!d.usage.user_ns.has, "a counter that went backwards is absent, not huge");
	check(d.per_kind[1].user_ns.v == 2 * SEC && d.per_kind[0].user_ns.v == SEC / 2,
	      "kinds are matched by kind; a new kind's figures are all the interval's");
	/* A lean read gives no kinds on a machine of one; an exit record does. */
	p[3].nr_kinds = 0;
	iv_delta(&p[3], &c[3], 10 * SEC, 11 * SEC, &d);
	check(!d.nr_kinds,
	      "after a read without kinds, a record's per-kind totals are not the interval's: %d",
	      d.nr_kinds);

	/* A CPU: idle share. */
	{
		struct rc_record cp = { .type = RC_CPU, .has_cpu = true, .cpu = 1,
			.usage = { .user_ns = { true, SEC }, .kernel_ns = { true, SEC },
				   .idle_ns = { true, 5 * SEC } } }, cn = cp;

		cn.usage.user_ns.v += SEC / 4;
		cn.usage.idle_ns.v += 3 * SEC / 4;
		check(!iv_delta(&cp, &cn, 10 * SEC, 11 * SEC, &d) && d.iv.span_ns == SEC &&
		      d.usage.idle_ns.v == 3 * SEC / 4 && iv_active(&d),
		      "a CPU's interval: busy a quarter, idle three quarters");
		check(!iv_delta(&cp, &cp, 10 * SEC, 11 * SEC, &d) && iv_active(&d),
		      "an idle CPU's row is shown: it says how idle it was");
	}
	/* An exit record a little behind the read before: nothing more, 0. */
	{
		struct rc_record before = task(108, 1 * SEC, SEC), ex = before;

		ex.usage.kernel_ns.v -= 1000;
		ex.is_exit = true;
		ex.exit_time = 10 * SEC + 1;
		check(!iv_delta(&before, &ex, 10 * SEC, 11 * SEC, &d) &&
		      d.usage.kernel_ns.has && d.usage.kernel_ns.v == 0 &&
		      d.usage.user_ns.has && d.usage.user_ns.v == 0 && d.runtime.has,
		      "an exit record behind the last read: 0, not absent");
	}
	snapshot_free(&prev);
	snapshot_free(&cur);
	snapshot_free(&rows);
}

/* A genetlink message of RECOUNT, being built. */
static struct nl_msg *new_msg(uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 30, 0, 0, cmd, RECOUNT_FAMILY_VERSION);
	return msg;
}

static struct nlattr *attrs_of(struct nl_msg *msg, int *len)
{
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));

	*len = genlmsg_attrlen(gh, 0);
	return genlmsg_attrdata(gh, 0);
}

static int decode(struct nl_msg *msg, struct rc_record *rec)
{
	int len;
	struct nlattr *attrs = attrs_of(msg, &len);

	return rc_decode_record(attrs, len, rec);
}

static int ts_decode_msg(struct nl_msg *msg, struct ts_record *rec)
{
	int len;
	struct nlattr *attrs = attrs_of(msg, &len);

	return ts_decode(attrs, len, rec);
}

static void put_usage(struct nl_msg *msg, int type, uint64_t user, uint64_t kernel, int kind)
{
	struct nlattr *nest = nla_nest_start(msg, type);

	nla_put_u64(msg, RECOUNT_A_USAGE_USER_TIME, user);
	nla_put_u64(msg, RECOUNT_A_USAGE_KERNEL_TIME, kernel);
	if (kind >= 0)
		nla_put_u32(msg, RECOUNT_A_USAGE_KIND, kind);
	/* A metric of a newer kernel. */
	nla_put_u64(msg, RECOUNT_A_USAGE_MAX + 7, 12345);
	nla_nest_end(msg, nest);
}

static void test_decode(void)
{
	struct nl_msg *msg = new_msg(RECOUNT_CMD_EXIT);
	struct rc_record rec;
	struct nlattr *nest;
	int err;

	nla_put_u32(msg, RECOUNT_A_PID, 101);
	nla_put_u32(msg, RECOUNT_A_TGID, 100);
	nla_put_string(msg, RECOUNT_A_COMM, "worker");
	nla_put_u32(msg, RECOUNT_A_FLAGS, 0);
	nla_put_u32(msg, RECOUNT_A_METRICS, RECOUNT_METRIC_TIME | RECOUNT_METRIC_ENERGY);
	nla_put_u32(msg, RECOUNT_A_ENERGY_SOURCE, RECOUNT_ENERGY_SOURCE_ESTIMATED);
	/* An attribute of a newer kernel, before and after the known ones. */
	nla_put_u64(msg, RECOUNT_A_MAX + 3, 777);
	nest = nla_nest_start(msg, RECOUNT_A_USAGE);
	nla_put_u64(msg, RECOUNT_A_USAGE_USER_TIME, 3000000);
	nla_put_u64(msg, RECOUNT_A_USAGE_KERNEL_TIME, 1000000);
	nla_put_u64(msg, RECOUNT_A_USAGE_ENERGY, 2000000);
	nla_put_u32(msg, RECOUNT_A_USAGE_INEXACT, RECOUNT_INEXACT_CYCLES);
	nla_nest_end(msg, nest);
	put_usage(msg, RECOUNT_A_PER_KIND, 3000000, 1000000, RECOUNT_KIND_PERFORMANCE);
	put_usage(msg, RECOUNT_A_PER_KIND, 0, 0, RECOUNT_KIND_EFFICIENCY);
	nest = nla_nest_start(msg, RECOUNT_A_RUNTIME);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_CPU_TIME, 4000000);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_QUEUE_TIME, 500);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_PAGE_FAULT_TIME, 600);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_LOCK_CONTENTION_TIME, 700);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_QUEUE_COUNT, 9);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_QUEUE_MAX, 200);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_QUEUE_MAX_TIME, 1500000000ULL);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_PAGE_FAULT_COUNT, 2);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_PAGE_FAULT_MAX, 550);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_PAGE_FAULT_MAX_TIME, 2000000000ULL);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_LOCK_CONTENTION_COUNT, 1);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_LOCK_CONTENTION_MAX, 700);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_LOCK_CONTENTION_MAX_TIME, 2500000000ULL);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_MAX + 1, 800);
	nla_nest_end(msg, nest);
	nla_put_u32(msg, RECOUNT_A_EXIT_CODE, 3 << 8);
	nla_put_u64(msg, RECOUNT_A_EXIT_TIME, 9000000000ULL);
	nla_put_u64(msg, RECOUNT_A_MISSED, 4);
	nla_put_u64(msg, RECOUNT_A_START_TIME, 1000000000ULL);
	nla_put_u32(msg, RECOUNT_A_WITHHELD, RECOUNT_WITHHELD_KERNEL_PMU);
	nla_put_string(msg, RECOUNT_A_MAX + 9, "from the future");

	err = decode(msg, &rec);
	check(!err, "a record with unknown attributes decodes");
	check(rec.type == RC_THREAD && rec.has_pid && rec.pid == 101 && rec.tgid == 100 &&
	      !strcmp(rec.comm, "worker"), "ids and comm");
	check(rec.usage.user_ns.has && rec.usage.user_ns.v == 3000000 &&
	      rec.usage.kernel_ns.v == 1000000 && !rec.usage.user_cycles.has &&
	      !rec.usage.user_instructions.has, "usage: times present, cycles absent");
	check(rec.usage.energy_nj.has && rec.usage.energy_nj.v == 2000000 &&
	      rec.usage.inexact == RECOUNT_INEXACT_CYCLES &&
	      rec.energy_source == RECOUNT_ENERGY_SOURCE_ESTIMATED, "energy and its source");
	check(rec.nr_kinds == 2 && rec.per_kind[0].kind == RECOUNT_KIND_PERFORMANCE &&
	      rec.per_kind[0].user_ns.v == 3000000 &&
	      rec.per_kind[1].kind == RECOUNT_KIND_EFFICIENCY, "one usage per kind");
	check(rec.runtime.has && rec.runtime.queue_ns == 500 && rec.runtime.fault_ns == 600 &&
	      rec.runtime.lock_ns == 700, "runtime");
	check(rec.runtime.has_waits && rec.runtime.wait[RC_WAIT_QUEUE].count == 9 &&
	      rec.runtime.wait[RC_WAIT_QUEUE].max_ns == 200 &&
	      rec.runtime.wait[RC_WAIT_QUEUE].max_at_ns == 1500000000ULL &&
	      rec.runtime.wait[RC_WAIT_FAULT].count == 2 &&
	      rec.runtime.wait[RC_WAIT_FAULT].max_ns == 550 &&
	      rec.runtime.wait[RC_WAIT_LOCK].max_at_ns == 2500000000ULL,
	      "each wait's count, longest and its end");
	check(!rec.has_children && !rec.has_parent_tgid, "a thread has no children");
	check(rec.is_exit && rec.exit_code == 3 << 8 && rec.exit_time == 9000000000ULL &&
	      rec.missed == 4 && rec.start_time.has && rec.start_time.v == 1000000000ULL,
	      "exit details and start time");
	check(rec.withheld == RECOUNT_WITHHELD_KERNEL_PMU, "what was withheld");
	nlmsg_free(msg);

	/* A CPU record, and a process record. */
	msg = new_msg(RECOUNT_CMD_GET);
	nla_put_u32(msg, RECOUNT_A_CPU, 3);
	decode(msg, &rec);
	check(rec.type == RC_CPU && rec.cpu == 3 && !rec.is_exit && !rec.start_time.has,
	      "a CPU record");
	nlmsg_free(msg);
	msg = new_msg(RECOUNT_CMD_GET);
	nla_put_u32(msg, RECOUNT_A_TGID, 100);
	nla_put_u32(msg, RECOUNT_A_PARENT_TGID, 1);
	put_usage(msg, RECOUNT_A_CHILDREN, 7000000, 2000000, -1);
	nest = nla_nest_start(msg, RECOUNT_A_CHILDREN_RUNTIME);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_CPU_TIME, 9000000);
	nla_put_u64(msg, RECOUNT_A_RUNTIME_PAGE_FAULT_COUNT, 40);
	nla_nest_end(msg, nest);
	put_usage(msg, RECOUNT_A_EXITED, 5, 6, -1);
	decode(msg, &rec);
	check(rec.type == RC_PROCESS && rec.has_exited && rec.exited.user_ns.v == 5,
	      "a process record");
	check(rec.has_parent_tgid && rec.parent_tgid == 1 && rec.has_children &&
	      rec.children.user_ns.v == 7000000 && rec.children.kernel_ns.v == 2000000 &&
	      rec.children_runtime.has && rec.children_runtime.cpu_ns == 9000000 &&
	      rec.children_runtime.wait[RC_WAIT_FAULT].count == 40,
	      "a process's parent, and its reaped children");
	check(!rec.runtime.has, "no runtime nest, no runtime");
	nlmsg_free(msg);

	/* A known attribute of the wrong size is an error, not garbage. */
	msg = new_msg(RECOUNT_CMD_GET);
	nla_put(msg, RECOUNT_A_PID, 2, "\1\2");
	check(decode(msg, &rec) < 0, "a short u32 is rejected");
	nlmsg_free(msg);
	msg = new_msg(RECOUNT_CMD_GET);
	nla_put_u32(msg, RECOUNT_A_PID, 1);
	nest = nla_nest_start(msg, RECOUNT_A_USAGE);
	nla_put(msg, RECOUNT_A_USAGE_USER_TIME, 4, "\1\2\3\4");
	nla_nest_end(msg, nest);
	check(decode(msg, &rec) < 0, "a short u64 is rejected");
	nlmsg_free(msg);
}

/*
 * A lean dump: the state in its first record only, no per-kind usage on a
 * machine of one kind, the runtime only as the struct asked for.
 */
static void test_decode_lean(void)
{
	struct recount_task_runtime rt = { .cpu_time = 40, .queue_time = 5,
					   .page_fault_time = 6, .lock_contention_time = 7,
					   .queue_count = 3, .queue_max = 4,
					   .queue_max_time = 1100, .page_fault_count = 1,
					   .page_fault_max = 6, .page_fault_max_time = 1200,
					   .lock_contention_count = 2,
					   .lock_contention_max = 5,
					   .lock_contention_max_time = 1300 };
	struct rc_record first, rec;
	struct nl_msg *msg;

	msg = new_msg(RECOUNT_CMD_GET);
	nla_put_u32(msg, RECOUNT_A_PID, 7);
	nla_put_u32(msg, RECOUNT_A_FLAGS, RECOUNT_FLAGS_DISABLED);
	nla_put_u32(msg, RECOUNT_A_METRICS, RECOUNT_METRIC_TIME | RECOUNT_METRIC_CYCLES);
	nla_put_u32(msg, RECOUNT_A_ENERGY_SOURCE, RECOUNT_ENERGY_SOURCE_NONE);
	nla_put_u32(msg, RECOUNT_A_WITHHELD, RECOUNT_WITHHELD_KERNEL_PMU);
	put_usage(msg, RECOUNT_A_USAGE, 30, 10, -1);
	nla_put(msg, RECOUNT_A_RUNTIME_STRUCT, sizeof(rt), &rt);
	check(!decode(msg, &first), "a lean dump's first record decodes");
	rc_record_inherit(&first, &first);
	check(first.has_flags && first.flags == RECOUNT_FLAGS_DISABLED &&
	      first.metrics == (RECOUNT_METRIC_TIME | RECOUNT_METRIC_CYCLES) &&
	      first.withheld == RECOUNT_WITHHELD_KERNEL_PMU && first.nr_kinds == 0,
	      "the first record carries the state");
	check(first.runtime.has && first.runtime.cpu_ns == 40 && first.runtime.queue_ns == 5 &&
	      first.runtime.fault_ns == 6 && first.runtime.lock_ns == 7,
	      "a lean runtime comes from the struct");
	check(first.runtime.has_waits && first.runtime.wait[RC_WAIT_QUEUE].count == 3 &&
	      first.runtime.wait[RC_WAIT_QUEUE].max_at_ns == 1100 &&
	      first.runtime.wait[RC_WAIT_FAULT].max_ns == 6 &&
	      first.runtime.wait[RC_WAIT_LOCK].count == 2 &&
	      first.runtime.wait[RC_WAIT_LOCK].max_at_ns == 1300,
	      "and its waits, from version 3");
	nlmsg_free(msg);

	/* A kernel that knows no version 3 sends a lean version 2 alone. */
	msg = new_msg(RECOUNT_CMD_GET);
	nla_put_u32(msg, RECOUNT_A_PID, 7);
	nla_put(msg, RECOUNT_A_RUNTIME_STRUCT, sizeof(struct recount_task_runtime_v2), &rt);
	check(!decode(msg, &rec) && rec.runtime.has && !rec.runtime.has_waits &&
	      rec.runtime.fault_ns == 6 && rec.runtime.lock_ns == 7,
	      "a lean version 2 struct is the runtime, without the waits");
	nlmsg_free(msg);

	/* A later version, longer: what this client knows of it is kept. */
	msg = new_msg(RECOUNT_CMD_GET);
	nla_put_u32(msg, RECOUNT_A_PID, 7);
	{
		unsigned char later[sizeof(rt) + 200] = {};

		memcpy(later, &rt, sizeof(rt));
		nla_put(msg, RECOUNT_A_RUNTIME_STRUCT, sizeof(later), later);
	}
	check(!decode(msg, &rec) && rec.runtime.has_waits &&
	      rec.runtime.wait[RC_WAIT_LOCK].max_at_ns == 1300,
	      "a later, longer struct decodes as version 3");
	nlmsg_free(msg);

	msg = new_msg(RECOUNT_CMD_GET);
	nla_put_u32(msg, RECOUNT_A_PID, 8);
	put_usage(msg, RECOUNT_A_USAGE, 3, 1, -1);
	nla_put(msg, RECOUNT_A_RUNTIME_STRUCT, sizeof(struct recount_task_runtime_v1), &rt);
	check(!decode(msg, &rec), "a lean record without the state decodes");
	check(!rec.has_flags && !rec.metrics, "the state is not in a later record");
	rc_record_inherit(&rec, &first);
	check(rec.has_flags && rec.flags == RECOUNT_FLAGS_DISABLED &&
	      rec.metrics == first.metrics && rec.withheld == first.withheld &&
	      rec.energy_source == RECOUNT_ENERGY_SOURCE_NONE && rec.pid == 8,
	      "a later record takes the first record's state");
	check(!rec.runtime.has, "a version 1 struct, without the runtime nest, is no runtime");
	nlmsg_free(msg);

	/* A record's own state wins over the first's. */
	msg = new_msg(RECOUNT_CMD_GET);
	nla_put_u32(msg, RECOUNT_A_PID, 9);
	nla_put_u32(msg, RECOUNT_A_FLAGS, 0);
	nla_put_u32(msg, RECOUNT_A_METRICS, RECOUNT_METRIC_TIME);
	decode(msg, &rec);
	rc_record_inherit(&rec, &first);
	check(rec.flags == 0 && rec.metrics == RECOUNT_METRIC_TIME, "a record's own state is kept");
	nlmsg_free(msg);
}

static void put_ts(struct nl_msg *msg, int aggr, int idtype, uint32_t id,
		   const struct taskstats *s, int size)
{
	struct nlattr *nest = nla_nest_start(msg, aggr);

	nla_put_u32(msg, idtype, id);
	nla_put(msg, TASKSTATS_TYPE_STATS, size, s);
	nla_nest_end(msg, nest);
}

static void test_decode_taskstats(void)
{
	unsigned char big[sizeof(struct taskstats) + 64];
	struct taskstats s = { .version = TASKSTATS_VERSION, .cpu_count = 3,
			       .cpu_delay_total = 1500, .nvcsw = 7, .irq_count = 2 };
	struct ts_record rec;
	struct nl_msg *msg;

	msg = new_msg(TASKSTATS_CMD_NEW);
	put_ts(msg, TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 55, &s, sizeof(s));
	check(!ts_decode_msg(msg, &rec) && rec.has_pid && rec.id == 55 &&
	      rec.stats.cpu_count == 3 && rec.stats.nvcsw == 7 && rec.stats.irq_count == 2,
	      "taskstats: a thread's");
	nlmsg_free(msg);

	/* An older kernel's shorter struct: what it lacks is 0. */
	msg = new_msg(TASKSTATS_CMD_NEW);
	put_ts(msg, TASKSTATS_TYPE_AGGR_TGID, TASKSTATS_TYPE_TGID, 56, &s,
	       offsetof(struct taskstats, irq_count));
	check(!ts_decode_msg(msg, &rec) && !rec.has_pid && rec.id == 56 &&
	      rec.stats.cpu_count == 3 && rec.stats.irq_count == 0,
	      "taskstats: an older kernel's shorter struct");
	nlmsg_free(msg);

	/* A newer kernel's longer one: what this client knows is kept. */
	memset(big, 0xff, sizeof(big));
	memcpy(big, &s, sizeof(s));
	msg = new_msg(TASKSTATS_CMD_NEW);
	put_ts(msg, TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 57, (void *)big, sizeof(big));
	check(!ts_decode_msg(msg, &rec) && rec.id == 57 &&
	      rec.stats.irq_count == 2, "taskstats: a newer kernel's longer struct");
	nlmsg_free(msg);
}

/* Run @fn into a string. */
static char *capture(void (*fn)(FILE *f, void *arg), void *arg)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	fn(f, arg);
	fclose(f);
	return buf;
}

static void test_formats(void)
{
	static const struct {
		uint64_t v;
		const char *duration, *count, *energy;
	} cases[] = {
		{ 0, "0 ns", "0", "0 nJ" },
		{ 999, "999 ns", "999", "999 nJ" },
		{ 1500, "1.500 us", "1500", "1.500 uJ" },
		{ 9999, "9.999 us", "9999", "9.999 uJ" },
		{ 10000, "10.000 us", "10.0k", "10.000 uJ" },
		{ 2500000, "2.500 ms", "2.5M", "2.500 mJ" },
		{ 950411216, "950.411 ms", "950.4M", "950.411 mJ" },
		{ 3000000000ULL, "3.000 s", "3.0G", "3.000 J" },
	};
	struct rc_value absent = {};
	char buf[64];
	double x;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct rc_value v = { true, cases[i].v };

		check(!strcmp(fmt_duration(buf, sizeof(buf), &v), cases[i].duration),
		      "duration %llu: %s", (unsigned long long)cases[i].v, buf);
		check(!strcmp(fmt_count(buf, sizeof(buf), &v), cases[i].count),
		      "count %llu: %s", (unsigned long long)cases[i].v, buf);
		check(!strcmp(fmt_energy(buf, sizeof(buf), &v), cases[i].energy),
		      "energy %llu: %s", (unsigned long long)cases[i].v, buf);
	}
	check(!strcmp(fmt_duration(buf, sizeof(buf), &absent), "-") &&
	      !strcmp(fmt_count(buf, sizeof(buf), &absent), "-"), "absent values print as -");

	{
		struct rc_value c = { true, 300 }, n = { true, 200 }, zero = { true, 0 };

		check(rc_cpi(&c, &n, &x) && x == 1.5, "CPI 300/200");
		check(!rc_cpi(&c, &zero, &x) && !rc_cpi(&absent, &n, &x),
		      "no CPI without instructions");
	}
	{
		struct rc_usage u = {
			.user_ns = { true, 1500000000 }, .kernel_ns = { true, 500000000 },
			.energy_nj = { true, 3000000000ULL },
		};

		check(rc_power(&u, &x) && x == 1.5, "power: 3 J over 2 s is 1.5 W");
		u.energy_nj.has = false;
		check(!rc_power(&u, &x), "no power without energy");
	}
	{
		struct rc_record r = { .start_time = { true, 1000 } };

		check(rc_share(&r, 3000, 500, &x) && x == 0.25, "share of a live task's life");
		r.is_exit = true;
		r.exit_time = 2000;
		check(rc_share(&r, 999999, 500, &x) && x == 0.5, "share of an exited task's life");
		r.start_time.has = false;
		check(!rc_share(&r, 3000, 500, &x), "no share without a start time");
	}
}

static struct rc_record sample(uint32_t pid, const char *comm, uint64_t user, bool cycles)
{
	struct rc_record r = {
		.type = RC_THREAD, .has_pid = true, .has_tgid = true, .pid = pid, .tgid = 100,
		.has_usage = true, .has_flags = true, .start_time = { true, 1000000000 },
		.usage = { .user_ns = { true, user }, .kernel_ns = { true, 1000000 } },
		.runtime = { .has = true, .cpu_ns = user + 1000000, .queue_ns = 2000000,
			     .fault_ns = 100000000 },
	};

	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	if (cycles) {
		r.usage.user_cycles = (struct rc_value){ true, 2 * user };
		r.usage.kernel_cycles = (struct rc_value){ true, 2000000 };
		r.usage.user_instructions = (struct rc_value){ true, user };
		r.usage.kernel_instructions = (struct rc_value){ true, 1000000 };
	}
	return r;
}

static const struct out_opts text_opts = { .now = 3000000000ULL };
static const struct out_opts json_opts = { .json = true, .now = 3000000000ULL };

static void print_table(FILE *f, void *arg)
{
	struct rc_record *recs = arg;
	int i;

	table_header(f, TABLE_THREADS);
	for (i = 0; i < 3; i++)
		table_row(f, TABLE_THREADS, &recs[i], &text_opts);
}

/*
 * A kernel played by the test: what a client sends is dropped, and each
 * receive gets the next of the datagrams queued here, as the kernel would
 * queue them on the socket.
 */
static struct {
	unsigned char data[8][4096];
	int len[8];
	int n, next;
} fake;

/* Queue @msg (freed) in a datagram of its own, or with @join in the last. */
static void fake_queue(struct nl_msg *msg, bool join)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	int i = join ? fake.n - 1 : fake.n++;

	memcpy(fake.data[i] + fake.len[i], nlh, nlh->nlmsg_len);
	fake.len[i] += NLMSG_ALIGN(nlh->nlmsg_len);
	nlmsg_free(msg);
}

static int fake_send(struct nl_sock *sk, struct nl_msg *msg)
{
	return nlmsg_hdr(msg)->nlmsg_len;
}

static int fake_recv(struct nl_sock *sk, struct sockaddr_nl *nla, unsigned char **buf,
		     struct ucred **creds)
{
	int len;

	/* Nothing more: a test that waits for more fails, rather than hangs. */
	if (fake.next == fake.n)
		return -NLE_AGAIN;
	len = fake.len[fake.next];
	/* The kernel dropped what the socket had no room for (ENOBUFS). */
	if (len < 0) {
		fake.next++;
		errno = ENOBUFS;
		return -NLE_NOMEM;
	}
	*buf = malloc(len);
	memcpy(*buf, fake.data[fake.next++], len);
	memset(nla, 0, sizeof(*nla));
	nla->nl_family = AF_NETLINK;
	return len;
}

static struct nl_sock *fake_socket(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_cb *cb = nl_socket_get_cb(sk);

	nl_cb_overwrite_send(cb, fake_send);
	nl_cb_overwrite_recv(cb, fake_recv);
	nl_cb_put(cb);
	nl_socket_disable_auto_ack(sk);
	memset(&fake, 0, sizeof(fake));
	return sk;
}

/* An ACK, with error 0. */
static void fake_ack(void)
{
	struct nl_msg *msg = nlmsg_alloc_simple(NLMSG_ERROR, 0);
	struct nlmsgerr *e = nlmsg_reserve(msg, sizeof(*e), NLMSG_ALIGNTO);

	memset(e, 0, sizeof(*e));
	fake_queue(msg, false);
}

/* A dump's end, in the datagram of its last records. */
static void fake_done(void)
{
	struct nl_msg *msg = nlmsg_alloc_simple(NLMSG_DONE, NLM_F_MULTI);

	memset(nlmsg_reserve(msg, sizeof(int), NLMSG_ALIGNTO), 0, sizeof(int));
	fake_queue(msg, true);
}

static struct nl_msg *fake_record(uint8_t cmd, uint32_t pid, uint64_t missed)
{
	struct nl_msg *msg = new_msg(cmd);

	nla_put_u32(msg, RECOUNT_A_PID, pid);
	nla_put_u32(msg, RECOUNT_A_TGID, pid);
	nla_put_u32(msg, RECOUNT_A_FLAGS, 0);
	if (missed)
		nla_put_u64(msg, RECOUNT_A_MISSED, missed);
	return msg;
}

static void fake_exit(uint32_t pid, uint64_t missed)
{
	fake_queue(fake_record(RECOUNT_CMD_EXIT, pid, missed), false);
}

static int count_exits(const struct rc_record *rec, void *arg)
{
	uint64_t *got = arg;

	got[0]++;
	got[1] += rec->missed;
	got[2] = rec->pid;
	return 0;
}

static void count_ts(const struct ts_record *rec, void *arg)
{
	uint32_t *got = arg;

	got[0]++;
	got[1] = rec->id;
}

/*
 * The kernel sends exit records from the moment a listener is in place,
 * before the ACK of its registration: they are kept for rc_receive(), with
 * what was missed, and the registration still waits for its ACK (a client
 * that took them for the reply crashed).
 */
static void test_exits_while_registering(void)
{
	struct taskstats s = { .version = TASKSTATS_VERSION, .cpu_count = 1 };
	struct rc_client c = { .family = 30 };
	struct ts_client t = { .family = 30 };
	uint64_t got[3] = {};
	uint32_t ts_got[2] = {};
	struct nl_msg *msg;
	int err;

	c.sk = fake_socket();
	fake_exit(700, 2);
	msg = new_msg(RECOUNT_CMD_EXIT);
	nla_put(msg, RECOUNT_A_PID, 2, "xx");	/* too short: not a record */
	fake_queue(msg, false);
	fake_exit(702, 0);
	fake_ack();
	err = rc_listen(&c, "0", true);
	check(!err && fake.next == fake.n,
	      "exit records before the REGISTER ACK: it waits for it (%d, %d of %d read)",
	      err, fake.next, fake.n);
	check(c.nr_queued == 2, "they are kept for rc_receive(): %u", c.nr_queued);
	err = rc_receive(&c, 0, NULL, count_exits, got);
	check(err == 0 && got[0] == 2 && got[2] == 702 && !c.nr_queued,
	      "rc_receive() gives them first: %d, %llu records, last %llu", err,
	      (unsigned long long)got[0], (unsigned long long)got[2]);
	check(got[1] == 3, "with what was missed, the unreadable one too: %llu",
	      (unsigned long long)got[1]);

	/* Records filled the socket, and the kernel dropped the ACK. */
	memset(&fake, 0, sizeof(fake));
	fake_exit(704, 0);
	fake.len[fake.n++] = -1;
	err = rc_listen(&c, "0", true);
	check(!err && c.nr_queued == 1,
	      "an ACK a full socket lost: the listener is in place (%d, %u kept)", err,
	      c.nr_queued);
	rc_close(&c);

	t.sk = fake_socket();
	msg = new_msg(TASKSTATS_CMD_NEW);
	put_ts(msg, TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 800, &s, sizeof(s));
	fake_queue(msg, false);
	fake_ack();
	err = ts_listen(&t, "0");
	check(!err && fake.next == fake.n && t.nr_queued == 1,
	      "taskstats: an exit before the ACK is kept (%d, %u kept)", err, t.nr_queued);
	err = ts_drain(&t, count_ts, ts_got);
	check(!err && ts_got[0] == 1 && ts_got[1] == 800, "ts_drain() gives it: %u, id %u",
	      ts_got[0], ts_got[1]);
	ts_close(&t);
}

static int count_records(const struct rc_record *rec, void *arg)
{
	return ++*(int *)arg == 2;
}

/*
 * A dump the kernel marks interrupted is read whole and said so; one its
 * callback stops is read to its end (the NLMSG_DONE in the same datagram
 * as the records), and fails.
 */
static void test_dump_ends(void)
{
	struct rc_client c = { .family = 30 };
	bool interrupted = false;
	struct nl_msg *msg;
	int n = 0, err, i;

	c.sk = fake_socket();
	msg = fake_record(RECOUNT_CMD_GET, 700, 0);
	nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_MULTI | NLM_F_DUMP_INTR;
	fake_queue(msg, false);
	fake_done();
	err = rc_dump(&c, RECOUNT_SCOPE_THREADS, 0, count_records, &n, &interrupted);
	check(!err && n == 1 && interrupted,
	      "an interrupted dump is read whole, and said so: %d, %d records", err, n);

	memset(&fake, 0, sizeof(fake));
	n = 0;
	for (i = 0; i < 3; i++) {
		msg = fake_record(RECOUNT_CMD_GET, 700 + i, 0);
		nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_MULTI;
		fake_queue(msg, i > 0);
	}
	fake_done();
	err = rc_dump(&c, RECOUNT_SCOPE_THREADS, 0, count_records, &n, &interrupted);
	check(err == -ECANCELED && n == 2 && fake.next == fake.n,
	      "a dump its callback stops is read to its end, and fails: %d, %d records, %d of %d read",
	      err, n, fake.next, fake.n);
	rc_close(&c);
}

/* What a thread names itself reaches a terminal without its control bytes. */
static void print_named(FILE *f, void *arg)
{
	struct rc_record *r = arg;

	table_row(f, TABLE_THREADS, r, &text_opts);
	out_text_record(f, r, NULL, &text_opts);
	csv_row(f, TABLE_THREADS, r, &text_opts);
}

static void test_control_bytes(void)
{
	struct rc_record r = sample(101, "\033[2J\n1 1 init\177", 1000000, true);
	char *out = capture(print_named, &r), *p;
	int bad = 0;

	for (p = out; *p; p++)
		bad += (unsigned char)*p < 0x20 && *p != '\n' && *p != ' ';
	bad += !!strchr(out, '\177');
	check(!bad && strstr(out, "?[2J?1 1 init?"),
	      "a command name's control bytes are '?' in tables, text and CSV\n%s", out);
	free(out);
}

static void print_csv_to_file(FILE *f, void *arg)
{
	static const struct out_opts csv_opts = { .csv_utf8 = true };

	csv_row(f, TABLE_THREADS, arg, &csv_opts);
}

static void print_named_utf8(FILE *f, void *arg)
{
	static const struct out_opts utf8_opts = {
		.now = 3000000000ULL, .utf8 = true, .csv_utf8 = true,
	};
	struct rc_record *r = arg;

	table_row(f, TABLE_THREADS, r, &utf8_opts);
	out_text_record(f, r, NULL, &utf8_opts);
	csv_row(f, TABLE_THREADS, r, &utf8_opts);
}

/*
 * C1 controls, raw or UTF-8 encoded, are '?' too; where the output is
 * UTF-8, its characters beyond ASCII stay, else they are '?'.
 */
static void test_c1_controls(void)
{
	static const struct {
		const char *s;
		size_t n;
	} seqs[] = {
		{ "\xc3\xa9", 2 }, { "\xe2\x82\xac", 3 }, { "\xf0\x9f\x98\x80", 4 },
		{ "\xc2\xa0", 2 }, { "\xdf\xbf", 2 }, { "\xe0\xa0\x80", 3 },	/* U+07FF, U+0800 */
		{ "\xed\x9f\xbf", 3 }, { "\xee\x80\x80", 3 },	/* around the surrogates */
		{ "\xef\xbf\xbf", 3 }, { "\xf0\x90\x80\x80", 4 }, { "\xf4\x8f\xbf\xbf", 4 },
		{ "\xc1\xbf", 0 }, { "\xf0\x8f\xbf\xbf", 0 },	/* overlong */
		{ "\xf5\x80\x80\x80", 0 }, { "\xfe", 0 }, { "\xff", 0 }, { "\xbf", 0 },
		{ "\xc2\x9b", 0 }, { "\xc2\x80", 0 },	/* C1 */
		{ "\x9b", 0 }, { "\xc0\x80", 0 }, { "\xe0\x80\x80", 0 },	/* overlong */
		{ "\xed\xa0\x80", 0 }, { "\xf4\x90\x80\x80", 0 },	/* surrogate, too big */
		{ "\xe2\x82", 0 }, { "\xe2\x82x", 0 },	/* cut short */
		{ NULL, 0 }
	};
	struct rc_record r = sample(101, "caf\303\251\302\2331m\2332J", 1000000, true);
	char *out;
	size_t i;

	for (i = 0; seqs[i].s; i++)
		check(utf8_printable((const unsigned char *)seqs[i].s) == seqs[i].n,
		      "UTF-8 sequence %zu: %zu bytes", i, seqs[i].n);
	out = capture(print_named_utf8, &r);
	check(!strchr(out, '\x9b') && !strstr(out, "\xc2\x9b") &&
	      strstr(out, "(caf\xc3\xa9??1m?2J)") && strstr(out, ",caf\xc3\xa9??1m?2J,"),
	      "UTF-8 output: a name's characters stay, its C1 controls are '?'\n%s", out);
	free(out);
	out = capture(print_named, &r);
	check(!strchr(out, '\x9b') && !strchr(out, '\xc3') &&
	      strstr(out, "(caf????1m?2J)") && strstr(out, ",caf????1m?2J,"),
	      "other output: a name's bytes beyond ASCII are '?'\n%s", out);
	free(out);
	out = capture(print_csv_to_file, &r);
	check(!strchr(out, '\x9b') && strstr(out, ",caf\xc3\xa9??1m?2J,"),
	      "CSV to a file keeps UTF-8 whatever the locale:\n%s", out);
	free(out);
}

static void print_row(FILE *f, void *arg)
{
	static const struct out_opts utf8_opts = { .utf8 = true };

	table_row(f, TABLE_THREADS, arg, &utf8_opts);
}

/* The width of a table row's line, in columns of a UTF-8 terminal. */
static int row_columns(const char *comm)
{
	struct rc_record r = sample(101, comm, 1000000, true);
	char *out = capture(print_row, &r);
	int cols = 0;
	wchar_t wc;
	size_t n;
	char *p;

	for (p = out; *p && *p != '\n'; p += n) {
		n = mbrtowc(&wc, p, MB_CUR_MAX, NULL);
		if (n == (size_t)-1 || n == (size_t)-2 || !n)
			break;
		cols += wcwidth(wc) > 0 ? wcwidth(wc) : 1;
	}
	free(out);
	return cols;
}

/* Names of characters beyond ASCII take their columns, no more, no less. */
static void test_table_width(void)
{
	int ascii;

	if (!setlocale(LC_CTYPE, "C.UTF-8")) {
		check(false, "the C.UTF-8 locale, for wcwidth()");
		return;
	}
	ascii = row_columns("cafe");
	check(row_columns("caf\xc3\xa9") == ascii,
	      "a name of two-byte characters: %d columns, as ASCII's %d",
	      row_columns("caf\xc3\xa9"), ascii);
	check(row_columns("\xe6\x97\xa5\xe6\x9c\xac") == ascii,
	      "a name of wide characters: %d columns, as ASCII's %d",
	      row_columns("\xe6\x97\xa5\xe6\x9c\xac"), ascii);
	setlocale(LC_CTYPE, "C");
}

static void test_table(void)
{
	struct rc_record recs[3] = {
		sample(101, "small", 1000000, true),
		sample(102, "large", 900000000, true),
		sample(103, "unknown-cpi", 50000000, false),
	};
	const char *want;
	char *out, *line2;

	table_sort(TABLE_THREADS, recs, 3, table_column(TABLE_THREADS, "time"), &text_opts);
	check(recs[0].pid == 102 && recs[1].pid == 103 && recs[2].pid == 101,
	      "sort by time: largest first");
	table_sort(TABLE_THREADS, recs, 3, table_column(TABLE_THREADS, "pid"), &text_opts);
	check(recs[0].pid == 101 && recs[2].pid == 103, "sort by pid: ascending");
	table_sort(TABLE_THREADS, recs, 3, table_column(TABLE_THREADS, "comm"), &text_opts);
	check(recs[0].pid == 102 && recs[1].pid == 101, "sort by comm: alphabetical");
	table_sort(TABLE_THREADS, recs, 3, table_column(TABLE_THREADS, "cpi"), &text_opts);
	check(recs[2].pid == 103, "sort by cpi: rows without one last");
	table_sort(TABLE_THREADS, recs, 3, table_column(TABLE_THREADS, "time"), &text_opts);

	out = capture(print_table, recs);
	line2 = strchr(out, '\n') + 1;
	want = joined("    PID    TGID COMM                    TIME        USER      KERNEL",
		      "    CPI       QUEUE   QUEUE-MAX      FAULTS   FAULT-MAX FAULT%",
		      "       LOCKS    LOCK-MAX  LOCK%      ENERGY    POWER\n", NULL);
	check(!strncmp(out, want, line2 - out), "table header:\n%.*s", (int)(line2 - out), out);
	want = joined("    102     100 large             901.000 ms  900.000 ms",
		      "    1.000 ms   2.00    2.000 ms           -  100.000 ms           -",
		      "    5.0        0 ns           -    0.0           -        -\n", NULL);
	check(!strncmp(line2, want, strchr(line2, '\n') + 1 - line2),
	      "table row, aligned, with units:\n%s", line2);
	check(strstr(out, "unknown-cpi") && strstr(out, "     -  "),
	      "a CPI the kernel cannot give is -");
	free(out);
}

static void print_json(FILE *f, void *arg)
{
	out_json_record(f, arg, NULL, &json_opts);
}

static void print_text(FILE *f, void *arg)
{
	static const struct out_opts text_opts;

	out_text_record(f, arg, NULL, &text_opts);
}

static void print_cpu_json(FILE *f, void *arg)
{
	struct rc_record r = {
		.type = RC_CPU, .has_cpu = true, .cpu = 2, .has_usage = true,
		.energy_source = RECOUNT_ENERGY_SOURCE_NONE,
		.usage = {
			.user_ns = { true, 10 }, .kernel_ns = { true, 20 }, .idle_ns = { true, 70 },
			.idle_irq_ns = { true, 5 },
			.has_kind = true, .kind = RECOUNT_KIND_EFFICIENCY,
		},
	};

	out_json_record(f, &r, NULL, &json_opts);
}

static void print_taskstats_json(FILE *f, void *arg)
{
	struct ts_record tsr = { .has_pid = true, .id = 101, .version = 14,
				 .stats = { .cpu_count = 4, .cpu_delay_total = 800,
					    .read_char = 10, .nvcsw = 5, .hiwater_rss = 64 } };
	struct ts_shown ts = { .what = TS_DELAYS | TS_IO | TS_CSW_MEM, .rec = &tsr };
	struct ts_shown denied = { .what = TS_DELAYS, .why = "permission \"denied\"" };
	struct rc_record r = sample(101, "a\"b\\c\td", 1000, false);

	out_json_record(f, &r, &ts, &json_opts);
	out_json_record(f, &r, &denied, &json_opts);
}

static void test_json(void)
{
	struct rc_record r = sample(101, "worker", 3000000, true);
	unsigned long long v;
	char *out, *second;
	const char *want;
	size_t len;

	out = capture(print_json, &r);
	check(json_valid(out, strlen(out)), "a thread record is valid JSON:\n%s", out);
	free(out);
	r = sample(101, "caf\xc3\xa9\xc2\x9b\x80\"\x7f", 3000000, true);
	out = capture(print_json, &r);
	check(json_valid(out, strlen(out)) &&
	      strstr(out, "\"comm\":\"caf\xc3\xa9\\u009b\\ufffd\\\"\\u007f\""),
	      "a name's characters stay, controls escaped, bytes that are none U+FFFD:\n%s", out);
	free(out);
	r = sample(101, "worker", 3000000, true);
	out = capture(print_json, &r);
	check(out[strlen(out) - 1] == '\n' && !strchr(out, '\n')[1], "one object on one line");
	check(json_member_u64(out, "pid", &v) && v == 101 && json_member_u64(out, "tgid", &v) &&
	      v == 100, "pid and tgid");
	check(json_member_u64(out, "user_time_ns", &v) && v == 3000000 &&
	      json_member_u64(out, "time_ns", &v) && v == 4000000, "durations in integer ns");
	check(json_member_u64(out, "cycles", &v) && v == 8000000, "counts as integers");
	check(json_member_null(out, "energy_nj") && json_member_null(out, "power_w"),
	      "unsupported energy is null");
	check(json_member(out, "cpi", &len) && !strncmp(json_member(out, "cpi", &len), "2,", 2),
	      "CPI as a number");
	check(json_member(out, "runtime", &len) && json_member(out, "shares", &len) &&
	      json_member(out, "per_kind", &len) && !json_member(out, "exited", &len) &&
	      !json_member(out, "exit", &len), "a thread's members");
	check(strstr(out, joined("\"shares\":{\"cpu\":0.002,\"queue\":0.001,",
				 "\"page_fault\":0.05,\"lock_contention\":0}", NULL)),
	      "shares of life");
	free(out);

	r = sample(102, "nocycles", 3000000, false);
	r.is_exit = true;
	r.exit_code = 256;
	r.exit_time = 5000000000ULL;
	r.missed = 2;
	out = capture(print_json, &r);
	check(json_valid(out, strlen(out)) && json_member_null(out, "cycles") &&
	      json_member_null(out, "instructions") && json_member_null(out, "cpi"),
	      "cycles the kernel cannot count are null");
	check(strstr(out, "\"exit\":{\"code\":256,\"time_ns\":5000000000,\"missed\":2}"),
	      "exit details");
	free(out);

	r.withheld = RECOUNT_WITHHELD_KERNEL_PMU;
	out = capture(print_json, &r);
	check(strstr(out, "\"withheld\":[\"kernel_pmu\"]"), "kernel counts withheld, in JSON");
	free(out);
	out = capture(print_text, &r);
	check(strstr(out, "(kernel cycles and instructions: withheld,"),
	      "kernel counts withheld, in text:\n%s", out);
	free(out);
	r.withheld |= RECOUNT_WITHHELD_USER_PMU;
	out = capture(print_json, &r);
	check(strstr(out, "\"withheld\":[\"user_pmu\",\"kernel_pmu\"]"),
	      "all counts withheld, in JSON");
	free(out);
	out = capture(print_text, &r);
	check(strstr(out, "(cycles and instructions: withheld,"),
	      "all counts withheld, in text:\n%s", out);
	free(out);

	out = capture(print_cpu_json, NULL);
	want = joined("{\"type\":\"cpu\",\"cpu\":2,\"kind\":\"efficiency\",\"disabled\":false,",
		      "\"energy_source\":\"none\",\"withheld\":[],\"user_time_ns\":10,",
		      "\"kernel_time_ns\":20,",
		      "\"time_ns\":30,\"user_cycles\":null,\"kernel_cycles\":null,\"cycles\":null,",
		      "\"user_instructions\":null,\"kernel_instructions\":null,",
		      "\"instructions\":null,\"user_cpi\":null,\"kernel_cpi\":null,\"cpi\":null,",
		      "\"energy_nj\":null,\"power_w\":null,\"idle_time_ns\":70,",
		      "\"idle_energy_nj\":null,\"idle_irq_time_ns\":5,\"inexact\":[]}\n",
		      NULL);
	check(!strcmp(out, want), "a CPU record, key for key:\n%s", out);
	free(out);

	out = capture(print_taskstats_json, NULL);
	second = strchr(out, '\n') + 1;
	check(json_valid(out, second - out) && json_valid(second, strlen(second)),
	      "records with taskstats are valid JSON, with a comm to escape:\n%s", out);
	check(strstr(out, "\"comm\":\"a\\\"b\\\\c\\u0009d\""), "comm escaped");
	check(strstr(out, "\"cpu\":{\"count\":4,\"total_ns\":800}") &&
	      strstr(out, "\"read_char\":10") && strstr(out, "\"voluntary\":5") &&
	      strstr(out, "\"hiwater_rss_kib\":64"), "taskstats figures");
	check(strstr(second, "\"taskstats\":{\"error\":\"permission \\\"denied\\\"\"}"),
	      "why there are no taskstats");
	free(out);
}

/*
 * The count, longest and end of each wait, and a process's parent and reaped
 * children, in text and JSON; a kernel without the waits gives nulls.
 */
static void test_waits_and_children(void)
{
	struct rc_record r = sample(0, "make", 3000000, false);
	unsigned long long v;
	const char *child;
	char *out, *copy;
	char want[128];
	size_t len;

	r.type = RC_PROCESS;
	r.has_pid = false;
	r.has_parent_tgid = true;
	r.parent_tgid = 1;
	r.runtime.has_waits = true;
	r.runtime.wait[RC_WAIT_FAULT] = (struct rc_wait_stats){ 12, 30000000, 1250000000ULL };
	r.has_children = true;
	r.children.user_ns = (struct rc_value){ true, 5000000000ULL };
	r.children.kernel_ns = (struct rc_value){ true, 1000000000ULL };
	r.children_runtime = (struct rc_runtime){ .has = true, .has_waits = true,
						  .cpu_ns = 6000000000ULL };

	out = capture(print_text, &r);
	check(strstr(out, "all threads, parent 1\n"), "the parent, in the title:\n%s", out);
	snprintf(want, sizeof(want), "\n  %-13s %16d %16d %16d\n", "waits", 0, 12, 0);
	check(strstr(out, want) &&
	      strstr(out, "0.030000000 s") && strstr(out, "+0.250000000 s"),
	      "the waits, the longest and when it ended after the start:\n%s", out);
	check(strstr(out, " reaped children") && strstr(out, "5.000000000 s"),
	      "the reaped children:\n%s", out);
	snprintf(want, sizeof(want), "\n  %-13s %16s %16s %16s\n", "with them",
		 "5.003000000 s", "1.001000000 s", "6.004000000 s");
	check(strstr(out, want), "the process and its children together, as time(1):\n%s", out);
	free(out);

	out = capture(print_json, &r);
	check(json_valid(out, strlen(out)), "valid JSON:\n%s", out);
	check(json_member_u64(out, "parent_tgid", &v) && v == 1, "parent_tgid");
	check(strstr(out, joined("\"page_fault_count\":12,\"page_fault_max_ns\":30000000,",
				 "\"page_fault_max_time_ns\":1250000000", NULL)),
	      "a wait's count, longest and its end, in JSON:\n%s", out);
	child = json_member(out, "children", &len);
	copy = child ? strndup(child, len) : NULL;
	check(copy && json_member_u64(copy, "time_ns", &v) && v == 6000000000ULL,
	      "the children's usage");
	free(copy);
	check(json_member(out, "children_runtime", &len), "the children's runtime");
	free(out);

	r.runtime.has_waits = false;
	r.has_children = false;
	r.children_runtime.has = false;
	out = capture(print_json, &r);
	check(json_member_null(out, "children") && json_member_null(out, "children_runtime") &&
	      strstr(out, "\"queue_count\":null"), "what an older kernel does not send is null");
	free(out);
}

static void print_info(FILE *f, void *arg)
{
	struct rc_info info = {
		.metrics = RECOUNT_METRIC_TIME | RECOUNT_METRIC_ENERGY,
		.energy_source = RECOUNT_ENERGY_SOURCE_ESTIMATED, .listeners = 2, .nr_kinds = 2,
		.max_events = 2,
		.kind_cpus = {
			{ RECOUNT_KIND_PERFORMANCE, "0-1" }, { RECOUNT_KIND_EFFICIENCY, "2-3" },
		},
	};

	out_info(f, &info, arg);
}

static void test_info(void)
{
	struct out_opts text = {}, json = { .json = true };
	const char *want;
	char *out;

	out = capture(print_info, &text);
	check(!strcmp(out, "recount is on\n  metrics: time, energy\n  energy source: estimated\n"
		      "  performance CPUs: 0-1\n  efficiency CPUs: 2-3\n  listeners: 2\n"
		      "  events: none (generation 0, 2 at most; 0 PMU counters held)\n"),
	      "info as text:\n%s", out);
	free(out);
	out = capture(print_info, &json);
	want = joined("{\"type\":\"info\",\"disabled\":false,\"metrics\":[\"time\",\"energy\"],",
		      "\"energy_source\":\"estimated\",\"kinds\":{\"performance\":\"0-1\",",
		      "\"efficiency\":\"2-3\"},\"listeners\":2,\"events\":[],\"event_gen\":0,",
		      "\"max_events\":2,\"pmu_counters\":0}\n", NULL);
	check(!strcmp(out, want), "info as JSON:\n%s", out);
	free(out);
}

static void test_json_check(void)
{
	static const char *const good[] = {
		"{}", "[]", "0", "-1.5e3", "\"a\\u00e9\"", "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"",
		"{\"a\":[1,{\"b\":null}],\"c\":true}",
		" [ 1 , 2 ]\t\n",
	};
	static const char *const bad[] = {
		"", "{", "{\"a\":}", "[1,]", "01", "1.", "\"\t\"", "{'a':1}", "[1] x", "nul",
		"{\"a\" 1}", "\"\\x\"", "\"\x80\"", "\"\xc3\"", "\"\xc0\x80\"", "\"\xed\xa0\x80\"",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		check(json_valid(good[i], strlen(good[i])), "json_check accepts %s", good[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		check(!json_valid(bad[i], strlen(bad[i])), "json_check rejects %s", bad[i]);
	check(!json_valid("\"\\\0\"", 4), "json_check rejects a backslash before a NUL");
}

static struct rc_record iv_sample(void)
{
	struct rc_record prev = task(101, 1 * SEC, 2 * SEC), now = prev, d;

	snprintf(now.comm, sizeof(now.comm), "a,\"b\"");
	now.usage.user_ns.v += SEC / 4;
	now.usage.kernel_ns.v += SEC / 4;
	now.usage.user_cycles.v += 1000;
	now.usage.user_instructions.v += 2000;
	now.runtime.fault_ns += SEC / 10;
	now.runtime.wait[RC_WAIT_FAULT] = (struct rc_wait_stats){ 4, SEC / 20, 10 * SEC + 1 };
	iv_delta(&prev, &now, 10 * SEC, 11 * SEC, &d);
	d.iv.wall_ns = 1700000000 * SEC + 250000000;
	return d;
}

static void print_iv(FILE *f, void *arg)
{
	const struct rc_record *r = arg;

	table_header(f, TABLE_THREADS_IV);
	table_row(f, TABLE_THREADS_IV, r, &text_opts);
	csv_header(f, TABLE_THREADS_IV);
	csv_row(f, TABLE_THREADS_IV, r, &text_opts);
	out_json_record(f, r, NULL, &json_opts);
}

static void test_interval_output(void)
{
	struct rc_record r = iv_sample();
	char *out = capture(print_iv, &r), *json;
	unsigned long long v;
	size_t len;

	check(strstr(out, "   CPU%  USER% KERNEL%  IPC-U  IPC-K QUEUE% FAULT%  LOCK%"),
	      "interval table header:\n%s", out);
	check(strstr(out, joined("     101     100 a,\"b\"              50.0   25.0    25.0",
				 "   2.00      -    0.0", NULL)),
	      "interval row: CPU%% 50, user 25, kernel 25, IPC 2:\n%s", out);
	check(strstr(out, "   10.0    0.0   50.000 ms\n"),
	      "fault%% 10 and the longest wait, which ended in the interval:\n%s", out);
	check(strstr(out, joined("\nclock,pid,tgid,comm,cpu%,user%,kernel%,ipc-user,ipc-kernel,",
				 "queue%,fault%,lock%,longest,state,time,", NULL)),
	      "CSV header: every column's name:\n%s", out);
	check(strstr(out, joined("\n1700000000.250,101,100,\"a,\"\"b\"\"\",50.000,25.000,",
				 "25.000,2,,0.000,10.000,0.000,50000000,,500000000,", NULL)),
	      "CSV row: raw units, a quoted name, empty when absent:\n%s", out);
	check(strstr(out, "\"queue_max_ns\":null,\"queue_max_time_ns\":null,") &&
	      strstr(out, "\"page_fault_max_ns\":50000000,"),
	      "interval JSON: a longest wait that did not end in it is null, not 0:\n%s", out);
	json = strchr(strstr(out, "\n{"), '{');
	check(json && json_valid(json, strlen(json) - 1), "interval JSON is valid:\n%s", json);
	json = json ? (char *)json_member(json, "interval", &len) : NULL;
	json = json ? strndup(json, len) : NULL;
	check(json && json_member_u64(json, "span_ns", &v) && v == SEC &&
	      strstr(json, "\"cpu_percent\":50,") && strstr(json, "\"ipc_user\":2,") &&
	      json_member_null(json, "ipc_kernel") && strstr(json, "\"began\":false") &&
	      !strstr(out, "\"shares\""),
	      "interval JSON: its bounds and shares:\n%s", json);
	free(json);
	free(out);
}

static void print_openmetrics(FILE *f, void *arg)
{
	struct rc_record recs[3] = {
		sample(101, "a\"b\\c\nd", 3000000, true),
		sample(102, "w\xc3\x28rk\xc3\xa9r", 5000, false),
		{
			.type = RC_CPU, .has_cpu = true, .cpu = 2, .has_usage = true,
			.usage = {
				.user_ns = { true, 10 }, .kernel_ns = { true, 20 },
				.idle_ns = { true, 1500000000 }, .idle_irq_ns = { true, 5 },
				.energy_nj = { true, 7 }, .idle_energy_nj = { true, 9 },
				.has_kind = true, .kind = RECOUNT_KIND_EFFICIENCY,
			},
		},
	};

	recs[0].runtime.has_waits = true;
	recs[0].runtime.wait[RC_WAIT_LOCK] = (struct rc_wait_stats){ 2, 1500, 1 };
	out_openmetrics(f, recs, 3, 1700000000 * SEC, arg);
}

static void test_openmetrics(void)
{
	char *out = capture(print_openmetrics, NULL);
	const char *path = getenv("OPENMETRICS_OUT");
	/* Escaped as the format says: quote, backslash, newline. */
	const char *labels = "tid=\"101\",pid=\"100\",comm=\"a\\\"b\\\\c\\nd\"";
	const char *p;
	FILE *f;

	check(strstr(out, "# TYPE recount_thread_cpu_seconds counter\n"
			  "# UNIT recount_thread_cpu_seconds seconds\n"
			  "# HELP recount_thread_cpu_seconds "),
	      "a family's metadata: type, unit, help:\n%s", out);
	check(strstr(out, joined("\nrecount_thread_cpu_seconds_total{", labels,
				 ",mode=\"user\"} 0.003000000\n", NULL)),
	      "a counter in seconds, exact, with escaped labels:\n%s", out);
	check(strstr(out, joined("\nrecount_thread_cycles_total{", labels,
				 ",mode=\"kernel\"} 2000000\n", NULL)) &&
	      !strstr(out, "cycles_total{tid=\"102\""),
	      "cycles where counted, absent where not:\n%s", out);
	check(strstr(out, joined("\nrecount_thread_wait_longest_seconds{", labels,
				 ",wait=\"lock\"} 0.000001500\n", NULL)),
	      "the longest wait: a gauge in seconds:\n%s", out);
	check(strstr(out, joined("\nrecount_thread_start_time_seconds{tid=\"102\",pid=\"100\",",
				 "comm=\"w?(rk\xc3\xa9r\"} 1700000001.000000000\n", NULL)),
	      "start time as Unix time; a name's characters kept, bytes that are none as ?:\n%s",
	      out);
	check(strstr(out, joined("\nrecount_cpu_cpu_seconds_total{cpu=\"2\",kind=\"efficiency\",",
				 "mode=\"idle\"} 1.500000000\n", NULL)) &&
	      strstr(out, joined("\nrecount_cpu_energy_joules_total{cpu=\"2\",kind=\"efficiency\",",
				 "state=\"idle\"} 0.000000009\n", NULL)),
	      "a CPU's idle time and energy:\n%s", out);
	p = strstr(out, "# TYPE recount_thread_cpu_seconds ");
	check(p && !strstr(p + 1, "# TYPE recount_thread_cpu_seconds "),
	      "each family once, its samples together");
	check(!strstr(out, "recount_cpu_cycles"),
	      "no family where the kernel counts nothing (a CPU without cycles)");
	check(strlen(out) > 6 && !strcmp(out + strlen(out) - 6, "# EOF\n"), "ends with # EOF");
	/* For the host's check with a real parser (harness/tests/getdelays.sh). */
	if (path) {
		f = fopen(path, "w");
		check(f && fputs(out, f) >= 0 && !fclose(f), "wrote %s", path);
	}
	free(out);

	out = capture(print_openmetrics, "prometheus");
	check(strstr(out, "# HELP recount_thread_cpu_seconds_total Time on a CPU") &&
	      strstr(out, "\n# TYPE recount_thread_cpu_seconds_total counter\n") &&
	      strstr(out, "\n# TYPE recount_thread_wait_longest_seconds gauge\n") &&
	      !strstr(out, "# UNIT") && !strstr(out, "# EOF"),
	      "--prometheus: families named as their samples, no UNIT, no EOF:\n%s", out);
	path = getenv("PROMETHEUS_OUT");
	if (path) {
		f = fopen(path, "w");
		check(f && fputs(out, f) >= 0 && !fclose(f), "wrote %s", path);
	}
	free(out);
}

static void print_events_info(FILE *f, void *arg)
{
	struct rc_info info = {
		.metrics = RECOUNT_METRIC_TIME | RECOUNT_METRIC_EVENTS, .nr_events = 2,
		.events = {
			{ RECOUNT_EVENT_TYPE_HARDWARE, RECOUNT_EVENT_MODE_USER,
			  PERF_COUNT_HW_CACHE_MISSES },
			{ RECOUNT_EVENT_TYPE_RAW, RECOUNT_EVENT_MODE_ALL, 0x11 },
		},
		.event_gen = 3, .max_events = 2, .pmu_counters = 12,
	};

	out_info(f, &info, arg);
}

static void print_events_openmetrics(FILE *f, void *arg)
{
	out_openmetrics(f, arg, 1, 0, false);
}

static void print_events_table(FILE *f, void *arg)
{
	static const struct out_opts text_opts;

	table_header(f, TABLE_THREADS);
	table_row(f, TABLE_THREADS, arg, &text_opts);
}

static void print_events_csv(FILE *f, void *arg)
{
	static const struct out_opts text_opts;

	csv_header(f, TABLE_THREADS);
	csv_row(f, TABLE_THREADS, arg, &text_opts);
}

static void print_events_text(FILE *f, void *arg)
{
	static const struct out_opts text_opts;

	out_text_record(f, arg, NULL, &text_opts);
}

/* -e, the event nests of a record, and their place in every output. */
static void test_events(void)
{
	struct out_opts text = {}, json = { .json = true };
	struct nl_msg *msg = new_msg(RECOUNT_CMD_GET);
	struct rc_event ev[RC_MAX_EVENTS];
	struct rc_info info = {
		.nr_events = 2,
		.event_gen = 3,
		.events = {
			{ RECOUNT_EVENT_TYPE_HARDWARE, RECOUNT_EVENT_MODE_USER,
			  PERF_COUNT_HW_CACHE_MISSES },
			{ RECOUNT_EVENT_TYPE_RAW, RECOUNT_EVENT_MODE_ALL, 0x11 },
		},
	};
	const char *r11_row =
		"  r11                       1000                7             1007  (inexact)\n";
	struct rc_record rec;
	struct nlattr *nest, *e;
	char err[256], buf[32], *out;
	int nr;

	check(!parse_events("cache-misses:user,r11,branch-misses:k", ev, &nr, err, sizeof(err)) &&
	      nr == 3 && ev[0].type == RECOUNT_EVENT_TYPE_HARDWARE &&
	      ev[0].config == PERF_COUNT_HW_CACHE_MISSES && ev[0].mode == RECOUNT_EVENT_MODE_USER &&
	      ev[1].type == RECOUNT_EVENT_TYPE_RAW && ev[1].config == 0x11 &&
	      ev[1].mode == RECOUNT_EVENT_MODE_ALL && ev[2].mode == RECOUNT_EVENT_MODE_KERNEL,
	      "-e: generic events, raw codes, modes");
	check(!parse_events("L1-dcache-load-misses", ev, &nr, err, sizeof(err)) && nr == 1 &&
	      ev[0].type == RECOUNT_EVENT_TYPE_HW_CACHE && ev[0].config == 0x10000,
	      "-e: a generic cache event");
	check(!parse_events("none", ev, &nr, err, sizeof(err)) && nr == 0, "-e none: no event");
	check(parse_events("cache-misses:both", ev, &nr, err, sizeof(err)) &&
	      strstr(err, "'both' is not a mode"), "-e: an unknown mode is refused");
	check(parse_events("dcache", ev, &nr, err, sizeof(err)) &&
	      strstr(err, "unknown event 'dcache'"), "-e: an unknown event is refused");
	check(parse_events("rxyz", ev, &nr, err, sizeof(err)) &&
	      parse_events("r", ev, &nr, err, sizeof(err)) &&
	      parse_events("cycles,", ev, &nr, err, sizeof(err)), "-e: bad raw codes, empty names");
	check(parse_events("r1,r2,r3,r4,r5", ev, &nr, err, sizeof(err)) &&
	      strstr(err, "at most 4"), "-e: too many");
	check(!strcmp(event_name(buf, sizeof(buf), &info.events[0]), "cache-misses") &&
	      !strcmp(event_name(buf, sizeof(buf), &info.events[1]), "r11") &&
	      !strcmp(event_name(buf, sizeof(buf), &(struct rc_event){
			RECOUNT_EVENT_TYPE_HARDWARE, 0, 77 }), "hardware:0x4d"),
	      "events are named as -e takes them");

	nla_put_u32(msg, RECOUNT_A_PID, 101);
	nla_put_u32(msg, RECOUNT_A_EVENT_GEN, 3);
	nest = nla_nest_start(msg, RECOUNT_A_USAGE);
	nla_put_u64(msg, RECOUNT_A_USAGE_USER_TIME, 3000000);
	nla_put_u64(msg, RECOUNT_A_USAGE_KERNEL_TIME, 1000000);
	nla_put_u32(msg, RECOUNT_A_USAGE_INEXACT, RECOUNT_INEXACT_EVENT_1);
	e = nla_nest_start(msg, RECOUNT_A_USAGE_EVENT);
	nla_put_u32(msg, RECOUNT_A_EVENT_INDEX, 0);
	nla_put_u64(msg, RECOUNT_A_EVENT_USER, 42);
	nla_nest_end(msg, e);
	e = nla_nest_start(msg, RECOUNT_A_USAGE_EVENT);
	nla_put_u32(msg, RECOUNT_A_EVENT_INDEX, 1);
	nla_put_u64(msg, RECOUNT_A_EVENT_USER, 1000);
	nla_put_u64(msg, RECOUNT_A_EVENT_KERNEL, 7);
	nla_nest_end(msg, e);
	nla_nest_end(msg, nest);
	check(!decode(msg, &rec), "a record with event nests decodes");
	check(rec.has_event_gen && rec.event_gen == 3 && rec.usage.event_user[0].has &&
	      rec.usage.event_user[0].v == 42 && !rec.usage.event_kernel[0].has &&
	      rec.usage.event_user[1].v == 1000 && rec.usage.event_kernel[1].v == 7,
	      "every event nest, by index, its levels as they came");

	out_set_events(&info);
	out = capture(print_events_text, &rec);
	check(strstr(out, "  events                    user           kernel            total\n"
			  "  cache-misses                42                -               42\n") &&
	      strstr(out, r11_row),
	      "events as rows of the text, per level:\n%s", out);
	free(out);
	out = capture(print_json, &rec);
	check(strstr(out, joined("\"events\":[{\"name\":\"cache-misses\",\"mode\":\"user\",",
				 "\"user\":42,\"kernel\":null,\"total\":42,\"inexact\":false},",
				 "{\"name\":\"r11\",\"mode\":\"all\",\"user\":1000,\"kernel\":7,",
				 "\"total\":1007,\"inexact\":true}]", NULL)) &&
	      strstr(out, "\"inexact\":[\"r11\"]"), "events in JSON:\n%s", out);
	free(out);
	out = capture(print_events_openmetrics, &rec);
	check(strstr(out, "# TYPE recount_thread_events counter\n") &&
	      strstr(out, "{tid=\"101\",pid=\"0\",comm=\"\",event=\"r11\",mode=\"kernel\"} 7\n") &&
	      strstr(out, ",event=\"cache-misses\",mode=\"user\"} 42\n") &&
	      !strstr(out, "event=\"cache-misses\",mode=\"kernel\""),
	      "events in OpenMetrics, the levels counted:\n%s", out);
	free(out);
	out = capture(print_events_info, &text);
	check(strstr(out, "\n  events: cache-misses:user, r11:all (generation 3, 2 at most; "
			  "12 PMU counters held)\n"), "the chosen events, as text:\n%s", out);
	free(out);
	out = capture(print_events_info, &json);
	check(strstr(out, joined("\"events\":[{\"name\":\"cache-misses\",\"type\":0,",
				 "\"config\":3,\"mode\":\"user\"},{\"name\":\"r11\",\"type\":2,",
				 "\"config\":17,\"mode\":\"all\"}],\"event_gen\":3", NULL)),
	      "the chosen events, as JSON:\n%s", out);
	free(out);
	out = capture(print_events_table, &rec);
	check(strstr(out, "CACHE-MISSES-U          R11-U          R11-K\n") &&
	      !strstr(out, "CACHE-MISSES-K") &&
	      strstr(out, "            42           1000              7\n"),
	      "a table: a column per chosen event and level it counts:\n%s", out);
	free(out);
	out = capture(print_events_csv, &rec);
	check(strstr(out, ",event0-user,event0-kernel,event1-user,event1-kernel,") &&
	      strstr(out, ",42,,1000,7,"), "CSV: every event column, empty where not counted:\n%s",
	      out);
	free(out);
	/*
	 * A record of another generation than the one named (events chosen
	 * anew while getdelays runs) is not named with the old names; left
	 * without its counts of them, it shows none.
	 */
	{
		struct rc_record other = rec;

		check(out_events_gen() == 3 && out_events_named(&rec),
		      "a record of the generation named is named");
		other.event_gen = 4;
		check(!out_events_named(&other), "a record of another generation is not");
		other.exited = other.usage;
		other.nr_kinds = 1;
		other.per_kind[0] = other.usage;
		rc_forget_events(&other);
		check(out_events_named(&other) && !other.usage.event_user[0].has &&
		      !other.usage.event_user[1].has && !other.usage.event_kernel[1].has &&
		      !other.exited.event_user[0].has && !other.per_kind[0].event_kernel[1].has &&
		      !(other.usage.inexact & (RECOUNT_INEXACT_EVENT_0 << 1)) &&
		      other.usage.user_ns.has == rec.usage.user_ns.has,
		      "rc_forget_events() leaves out every count of an event, and its flags");
		out = capture(print_events_text, &other);
		check(!strstr(out, "cache-misses") && !strstr(out, "r11"),
		      "and it names none:\n%s", out);
		free(out);
	}
	out_set_events(&(struct rc_info){ .nr_events = 0 });
	out = capture(print_events_table, &rec);
	check(!strstr(out, "R11"), "no event columns without chosen events:\n%s", out);
	free(out);
	nlmsg_free(msg);

	/* Intervals: the difference within a generation, nothing across two. */
	{
		struct rc_record p = task(101, 1 * SEC, 2 * SEC), c = p, d;

		p.event_gen = 3;
		c.event_gen = 3;
		p.usage.event_user[0] = (struct rc_value){ true, 100 };
		c.usage.event_user[0] = (struct rc_value){ true, 250 };
		check(!iv_delta(&p, &c, 10 * SEC, 11 * SEC, &d) && d.usage.event_user[0].has &&
		      d.usage.event_user[0].v == 150 && !d.usage.event_kernel[0].has,
		      "an event's interval: its count less the first read's");
		c.event_gen = 4;
		c.usage.event_user[0].v = 400;
		p.usage.inexact = RECOUNT_INEXACT_EVENT_0 | RECOUNT_INEXACT_CYCLES;
		check(!iv_delta(&p, &c, 10 * SEC, 11 * SEC, &d) && !d.usage.event_user[0].has &&
		      d.usage.inexact == RECOUNT_INEXACT_CYCLES,
		      "an interval over a new choice of events has no figure of them, nor their flags");
	}
}

int main(void)
{
	printf("TAP version 13\n");
	test_parse_u32();
	test_parse_cpulist();
	test_parse_size();
	test_parse_args();
	test_interval();
	test_interval_output();
	test_openmetrics();
	test_decode();
	test_decode_lean();
	test_decode_taskstats();
	test_formats();
	test_table();
	test_json();
	test_waits_and_children();
	test_info();
	test_events();
	test_json_check();
	test_exits_while_registering();
	test_dump_ends();
	test_control_bytes();
	test_c1_controls();
	test_table_width();
	printf("1..%d\n# %d passed, %d failed\n", tests, tests - failures, failures);
	return failures > 255 ? 255 : failures;
}
