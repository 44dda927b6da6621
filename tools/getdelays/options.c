// SPDX-License-Identifier: GPL-2.0
/*
 * getdelays' command line.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>
#include <linux/recount.h>

#include "options.h"
#include "output.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char usage_text[] =
"Usage: getdelays [options] -p PID | -t TGID | -P CPU | -c COMMAND [ARG...]\n"
"       getdelays [options] -D SCOPE [-t TGID] [-s COLUMN] [-n N]\n"
"       getdelays [options] --interval SEC [--count N] -p PID | -t TGID | -P CPU\n"
"                 | -D SCOPE\n"
"       getdelays [options] --top [-D SCOPE] [-s COLUMN] [-n N]\n"
"       getdelays [options] -m CPUMASK [-l] [-w FILE [-a]] [-r SIZE]\n"
"       getdelays -C CGROUP_PATH | -I\n"
"       getdelays -e EVENT[:MODE],... [options] [what to read]\n"
"\n"
"What recount accounted, per level (user, kernel) and per kind of CPU: time,\n"
"and where the kernel counts them cycles, instructions and their ratio (CPI),\n"
"energy with its source and the power it means; for threads and processes,\n"
"what they waited for (a CPU, page faults, contended locks): how long, how\n"
"often, the longest wait and when it ended, and which share of their life\n"
"that was; for processes, also what the children they reaped consumed.\n"
"With --interval, what happened in each interval instead of the totals.\n"
"\n"
"What to read:\n"
"  -p, --pid PID      one thread\n"
"  -t, --tgid TGID    one process: all its threads, live and exited\n"
"  -P, --cpu CPU      one CPU, with its idle time and the time it handled\n"
"                     interrupts while idle\n"
"  -c COMMAND [ARG...] run COMMAND, then print the totals of its process and,\n"
"                     apart, of the children it reaped (time(1) adds the\n"
"                     two); exits with COMMAND's exit status\n"
"  -D, --dump SCOPE   every thread, process or CPU (SCOPE: threads, processes,\n"
"                     cpus) in a table; with -t, the threads of one process\n"
"  -m, --cpumask CPUMASK\n"
"                     listen for the exits on CPUs CPUMASK (such as 1-3,5) and\n"
"                     print each thread's and process's final record as it\n"
"                     comes, until a process has exited\n"
"  -C, --cgroup PATH  the tasks of a cgroup (v1) by state: taskstats'\n"
"                     cgroupstats, as classic getdelays printed them\n"
"  -I, --info         what this kernel counts, and the CPUs of each kind\n"
"\n"
"When:\n"
"      --interval SEC what happened in each interval of SEC seconds (such as\n"
"                     1 or 0.5), with -p, -t, -P or -D: CPU %, user and\n"
"                     kernel %, instructions per cycle per level, the share of\n"
"                     the interval spent waiting per kind, the longest wait\n"
"                     if it ended in the interval, idle % of CPUs. Tasks are\n"
"                     told apart by pid and start time; those that began or\n"
"                     exited in an interval are marked so (exits are received\n"
"                     as exit records, so that what an exited task did in its\n"
"                     last interval is counted)\n"
"      --count N      stop after N intervals (default: until interrupted)\n"
"      --top          a table of the busiest processes (threads with -D\n"
"                     threads; every CPU, in CPU order, with -D cpus),\n"
"                     refreshed every interval (default 1 s); on a\n"
"                     terminal it fills the screen, else it prints one table\n"
"                     after another, as top -b does\n"
"\n"
"How:\n"
"  -s, --sort COLUMN  sort a dump by COLUMN (default: time, or cpu% in\n"
"                     intervals; for CPUs, cpu): a column's name as in\n"
"                     the table's header, in lower case (-s with a name that\n"
"                     is none lists them).\n"
"                     Figures sort largest first, ids and names in ascending\n"
"                     order.\n"
"  -n, --rows N       print only the first N rows of a dump\n"
"  -l, --loop         with -m, listen until interrupted\n"
"  -w, --write FILE   also write every record printed to FILE, as JSON\n"
"                     lines (see --json); SIGHUP reopens FILE (logrotate)\n"
"  -a, --append       with -w, append to FILE rather than truncate it\n"
"  -r, --rcvbuf SIZE  the socket's receive buffer (such as 4M): listeners\n"
"                     that miss records need a larger one\n"
"  -d, --delays       also taskstats' delay accounting: time waiting for a\n"
"                     CPU, block I/O, swap-in, reclaim, thrashing, compaction,\n"
"                     copy on write, IRQs (with -p, -t, -c, -m)\n"
"  -i, --io           also taskstats' I/O accounting\n"
"  -q, --switches     also taskstats' context switch counts and memory\n"
"                     high-water marks\n"
"  -R, --runtime-version N\n"
"                     also ask for struct recount_task_runtime of version N\n"
"                     (1: cpu and queue time; 2: and page fault and lock\n"
"                     contention time; 3: and each wait's count, longest\n"
"                     and when it ended) and print it\n"
"  -e, --events EVENT[:MODE],...\n"
"                     choose the PMU events recount counts beyond cycles and\n"
"                     instructions, for every thread, process and CPU, as\n"
"                     cpc does (such as cache-misses:user,branch-misses):\n"
"                     generic events as perf names them, or rHEX, a raw\n"
"                     code; MODE user, kernel or all (the default), each\n"
"                     level apart; none chooses none. Needs CAP_PERFMON;\n"
"                     alone, prints -I\n"
"  -j, --json         one JSON object per record and line: durations in\n"
"                     integer ns, energy in integer nJ, counts as integers,\n"
"                     what the kernel does not count as null\n"
"      --csv          a header line, then one line per record: every column\n"
"                     of the table, in ns, nJ, counts and ratios; what the\n"
"                     kernel does not count is empty\n"
"      --openmetrics  totals in the OpenMetrics text format, Prometheus's\n"
"                     names and base units (seconds, joules): with -p, -t,\n"
"                     -P, -c or -D\n"
"      --prometheus   the same in Prometheus's text format 0.0.4, which\n"
"                     node_exporter's textfile collector reads\n"
"  -v, --verbose      say more: which metrics the kernel does not count,\n"
"                     whole records in listener mode\n"
"  -h, --help         this text\n"
"\n"
"taskstats requests (-d, -i, -q) need CAP_NET_ADMIN; recount's need only\n"
"the right to ptrace-read the task (any CPU may be read).\n"
"\n"
"Examples:\n"
"  getdelays -c make -j4          what a build cost\n"
"  getdelays --interval 1 -p 1234 what thread 1234 does, second by second\n"
"  getdelays --top -D threads     the busiest threads, as top shows them\n"
"  getdelays -D threads -t 1234 -s cpi -n 10\n"
"                                 the ten threads of process 1234 with the\n"
"                                 highest CPI\n"
"  getdelays --prometheus -D processes > recount.prom\n"
"                                 for node_exporter's textfile collector\n"
"  getdelays -m 0-3 -l -w exits.json -a\n"
"                                 every exit on CPUs 0-3, also kept as JSON\n"
"\n"
"  $ getdelays -D cpus\n"
"   CPU KIND               USER      KERNEL        IDLE    IDLE-IRQ  BUSY%    CPI      ENERGY IDLE-ENERGY    POWER\n"
"     0 performance  561.488 us    5.552 ms  826.839 ms    1.203 ms    0.7   1.00    6.113 mJ   41.342 mJ  1.000 W\n"
"     2 efficiency   599.799 ms    5.688 ms  226.864 ms  102.407 us   72.7   1.00  181.645 mJ    2.269 mJ  0.300 W\n"
"\n"
"A value the kernel does not count prints as '-' (null in JSON). The fields,\n"
"their units and more examples: getdelays(8), and\n"
"Documentation/accounting/recount.rst.\n"
"\n"
"Exit status: 0 success, 1 usage error (or a CPU list the kernel rejects,\n"
"or more events than it counts), 2 the kernel has no recount, 3 no such\n"
"thread, process, CPU or cgroup, 4 permission denied, 5 other error (output\n"
"that could not be written among them). With -c, COMMAND's exit status\n"
"(5 if that is 0 and output could not be written).\n";

/* A decimal number up to @max at the start of @s, without sign or blanks. */
static int parse_decimal(const char *s, char **end, unsigned long long max,
			 unsigned long long *n)
{
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*n = strtoull(s, end, 10);
	return errno || *n > max ? -1 : 0;
}

int parse_u32(const char *s, uint32_t *v)
{
	unsigned long long n;
	char *end;

	if (parse_decimal(s, &end, UINT32_MAX, &n) || *end)
		return -1;
	*v = n;
	return 0;
}

static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* A CPU number at *s; advances *s. */
static int cpu_number(const char **s, unsigned long *n)
{
	char *end;

	if (!isdigit((unsigned char)**s))
		return -1;
	errno = 0;
	*n = strtoul(*s, &end, 10);
	if (errno || *n > INT_MAX)
		return -1;
	*s = end;
	return 0;
}

int parse_cpulist(const char *s, char *err, size_t errlen)
{
	const char *p = s;
	unsigned long a, b;

	if (!*s) {
		say(err, errlen, "an empty CPU list");
		return -1;
	}
	for (;;) {
		if (cpu_number(&p, &a))
			goto bad;
		b = a;
		if (*p == '-') {
			p++;
			if (cpu_number(&p, &b))
				goto bad;
			if (b < a) {
				say(err, errlen, "'%s': a range %lu-%lu goes backwards", s, a, b);
				return -1;
			}
		}
		if (!*p)
			return 0;
		if (*p != ',')
			goto bad;
		p++;
	}
bad:
	say(err, errlen, "'%s' is not a CPU list such as 0-3,5 (at '%s')", s,
	    *p ? p : "the end");
	return -1;
}

int parse_size(const char *s, int *bytes)
{
	static const char units[] = "KMG";
	const char *unit;
	unsigned long long n;
	char *end;

	if (parse_decimal(s, &end, INT_MAX, &n))
		return -1;
	unit = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
	if (unit) {
		n <<= 10 * (unit - units + 1);
		end++;
	}
	/* The kernel takes an int, and caps it. */
	if (*end || !n || n > INT_MAX)
		return -1;
	*bytes = n;
	return 0;
}

int parse_interval(const char *s, double *seconds)
{
	char *end;
	double v;

	/* Digits and one point: no sign, exponent, hex, inf or nan. */
	if (!isdigit((unsigned char)*s) || strspn(s, "0123456789.") != strlen(s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v < 0.01 || v > 86400)
		return -1;
	*seconds = v;
	return 0;
}

int open_error(int err, char *msg, size_t len)
{
	if (err == -ENOENT) {
		snprintf(msg, len, "no recount in this kernel (no netlink family '%s')",
			 RECOUNT_FAMILY_NAME);
		return EXIT_NO_RECOUNT;
	}
	snprintf(msg, len, "cannot open a generic netlink socket: %s", strerror(-err));
	return EXIT_ERROR;
}

/* perf's names of the generic events: PERF_TYPE_HARDWARE and HW_CACHE. */
static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} event_names[] = {
	{ "cycles", RECOUNT_EVENT_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", RECOUNT_EVENT_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", RECOUNT_EVENT_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", RECOUNT_EVENT_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", RECOUNT_EVENT_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", RECOUNT_EVENT_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", RECOUNT_EVENT_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", RECOUNT_EVENT_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", RECOUNT_EVENT_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", RECOUNT_EVENT_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", RECOUNT_EVENT_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
#define CACHE(id, op, result) \
	((id) | (PERF_COUNT_HW_CACHE_OP_##op << 8) | (PERF_COUNT_HW_CACHE_RESULT_##result << 16))
	{ "L1-dcache-loads", RECOUNT_EVENT_TYPE_HW_CACHE,
	  CACHE(PERF_COUNT_HW_CACHE_L1D, READ, ACCESS) },
	{ "L1-dcache-load-misses", RECOUNT_EVENT_TYPE_HW_CACHE,
	  CACHE(PERF_COUNT_HW_CACHE_L1D, READ, MISS) },
	{ "L1-icache-load-misses", RECOUNT_EVENT_TYPE_HW_CACHE,
	  CACHE(PERF_COUNT_HW_CACHE_L1I, READ, MISS) },
	{ "LLC-loads", RECOUNT_EVENT_TYPE_HW_CACHE, CACHE(PERF_COUNT_HW_CACHE_LL, READ, ACCESS) },
	{ "LLC-load-misses", RECOUNT_EVENT_TYPE_HW_CACHE,
	  CACHE(PERF_COUNT_HW_CACHE_LL, READ, MISS) },
	{ "dTLB-load-misses", RECOUNT_EVENT_TYPE_HW_CACHE,
	  CACHE(PERF_COUNT_HW_CACHE_DTLB, READ, MISS) },
	{ "iTLB-load-misses", RECOUNT_EVENT_TYPE_HW_CACHE,
	  CACHE(PERF_COUNT_HW_CACHE_ITLB, READ, MISS) },
#undef CACHE
};

const char *event_mode_name(uint32_t mode)
{
	return mode == RECOUNT_EVENT_MODE_USER ? "user" :
	       mode == RECOUNT_EVENT_MODE_KERNEL ? "kernel" : "all";
}

const char *event_name(char *buf, size_t size, const struct rc_event *ev)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(event_names); i++)
		if (event_names[i].type == ev->type && event_names[i].config == ev->config)
			return event_names[i].name;
	if (ev->type == RECOUNT_EVENT_TYPE_RAW)
		snprintf(buf, size, "r%llx", (unsigned long long)ev->config);
	else
		snprintf(buf, size, "%s:%#llx",
			 ev->type == RECOUNT_EVENT_TYPE_HARDWARE ? "hardware" : "cache",
			 (unsigned long long)ev->config);
	return buf;
}

/* One EVENT[:MODE] of -e's list, @len bytes of @s. */
static int parse_event(const char *s, size_t len, struct rc_event *ev, char *err, size_t errlen)
{
	const char *colon = memchr(s, ':', len);
	size_t n = colon ? (size_t)(colon - s) : len;
	char name[64], mode[16] = "all", *end;
	size_t i;

	if (!n || n >= sizeof(name) || (colon && len - n - 1 >= sizeof(mode))) {
		say(err, errlen, "-e: '%.*s' is not an event", (int)len, s);
		return -1;
	}
	memcpy(name, s, n);
	name[n] = '\0';
	if (colon) {
		memcpy(mode, colon + 1, len - n - 1);
		mode[len - n - 1] = '\0';
	}
	if (!strcmp(mode, "user") || !strcmp(mode, "u")) {
		ev->mode = RECOUNT_EVENT_MODE_USER;
	} else if (!strcmp(mode, "kernel") || !strcmp(mode, "k")) {
		ev->mode = RECOUNT_EVENT_MODE_KERNEL;
	} else if (!strcmp(mode, "all") || !strcmp(mode, "uk")) {
		ev->mode = RECOUNT_EVENT_MODE_ALL;
	} else {
		say(err, errlen, "-e: '%s' is not a mode (user, kernel or all)", mode);
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(event_names); i++) {
		if (!strcmp(name, event_names[i].name)) {
			ev->type = event_names[i].type;
			ev->config = event_names[i].config;
			return 0;
		}
	}
	if (name[0] == 'r' && isxdigit((unsigned char)name[1])) {
		errno = 0;
		ev->config = strtoull(name + 1, &end, 16);
		if (!*end && !errno) {
			ev->type = RECOUNT_EVENT_TYPE_RAW;
			return 0;
		}
	}
	say(err, errlen,
	    "-e: unknown event '%s' (a generic event as perf names it, such as cache-misses, or rHEX)",
	    name);
	return -1;
}

int parse_events(const char *s, struct rc_event *ev, int *nr, char *err, size_t errlen)
{
	size_t len;

	*nr = 0;
	if (!strcmp(s, "none"))
		return 0;
	for (;; s += len + 1) {
		len = strcspn(s, ",");
		if (*nr == RC_MAX_EVENTS) {
			say(err, errlen, "-e: at most %d events", RC_MAX_EVENTS);
			return -1;
		}
		if (parse_event(s, len, &ev[*nr], err, errlen))
			return -1;
		(*nr)++;
		if (!s[len])
			return 0;
	}
}

int parse_scope(const char *s)
{
	static const char *const names[] = {
		[RECOUNT_SCOPE_THREADS] = "threads",
		[RECOUNT_SCOPE_PROCESSES] = "processes",
		[RECOUNT_SCOPE_CPUS] = "cpus",
	};
	size_t len = strlen(s);
	int i;

	for (i = 0; i <= RECOUNT_SCOPE_CPUS; i++)
		if (len && !strncmp(s, names[i], len))
			return i;
	return -1;
}

int dump_table(int scope)
{
	return scope == RECOUNT_SCOPE_CPUS ? TABLE_CPUS :
	       scope == RECOUNT_SCOPE_PROCESSES ? TABLE_PROCESSES : TABLE_THREADS;
}

int opts_table(const struct opts *o)
{
	int kind;

	switch (o->mode) {
	case MODE_DUMP:
		kind = dump_table(o->scope);
		break;
	case MODE_PID:
		kind = TABLE_THREADS;
		break;
	case MODE_CPU:
		kind = TABLE_CPUS;
		break;
	case MODE_LISTEN:
		return TABLE_EXITS;
	default:
		kind = TABLE_PROCESSES;
		break;
	}
	return o->interval ? table_interval(kind) : kind;
}

static int set_mode(struct opts *o, enum mode to, char *err, size_t errlen)
{
	/* -t narrows -D to one process's threads. */
	if (to == MODE_TGID && o->mode == MODE_DUMP)
		return 0;
	if (to == MODE_DUMP && o->mode == MODE_TGID) {
		o->mode = MODE_DUMP;
		return 0;
	}
	if (o->mode != MODE_NONE) {
		say(err, errlen, "give only one of -p, -t, -P, -c, -D, -m, -C, -I (or -D with -t)");
		return -1;
	}
	o->mode = to;
	return 0;
}

int parse_args(int argc, char **argv, struct opts *o, char *err, size_t errlen)
{
	enum { OPT_INTERVAL = 256, OPT_COUNT, OPT_TOP, OPT_CSV, OPT_OPENMETRICS, OPT_PROMETHEUS };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tgid", required_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'P' },
		{ "cgroup", required_argument, NULL, 'C' },
		{ "dump", required_argument, NULL, 'D' },
		{ "cpumask", required_argument, NULL, 'm' },
		{ "info", no_argument, NULL, 'I' },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "top", no_argument, NULL, OPT_TOP },
		{ "sort", required_argument, NULL, 's' },
		{ "rows", required_argument, NULL, 'n' },
		{ "loop", no_argument, NULL, 'l' },
		{ "write", required_argument, NULL, 'w' },
		{ "append", no_argument, NULL, 'a' },
		{ "rcvbuf", required_argument, NULL, 'r' },
		{ "delays", no_argument, NULL, 'd' },
		{ "io", no_argument, NULL, 'i' },
		{ "switches", no_argument, NULL, 'q' },
		{ "runtime-version", required_argument, NULL, 'R' },
		{ "events", required_argument, NULL, 'e' },
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "openmetrics", no_argument, NULL, OPT_OPENMETRICS },
		{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *long_name = NULL, *metrics;
	int longindex;
	uint32_t n;
	int opt;

	memset(o, 0, sizeof(*o));
	err[0] = '\0';
	/* Start over, as the unit tests parse many command lines. */
	optind = 0;
	opterr = 0;
	/* '+': stop at the first non-option, the start of -c's command. */
	while ((opt = getopt_long(argc, argv, "+p:t:P:C:cD:m:Is:n:lw:ar:diqR:e:jvh", longopts,
				  &longindex)) != -1) {
		switch (opt) {
		case 'p':
		case 't':
		case 'P':
			if (set_mode(o, opt == 'p' ? MODE_PID : opt == 't' ? MODE_TGID : MODE_CPU,
				     err, errlen))
				return -1;
			if (parse_u32(optarg, &o->id)) {
				say(err, errlen, "-%c: '%s' is not a number", opt, optarg);
				return -1;
			}
			break;
		case 'C':
			if (set_mode(o, MODE_CGROUP, err, errlen))
				return -1;
			o->cgroup = optarg;
			break;
		case OPT_INTERVAL:
			if (parse_interval(optarg, &o->interval)) {
				say(err, errlen,
				    "--interval: '%s' is not a number of seconds from 0.01 to 86400",
				    optarg);
				return -1;
			}
			break;
		case OPT_COUNT:
			if (parse_u32(optarg, &o->count) || !o->count) {
				say(err, errlen, "--count: '%s' is not a number of intervals",
				    optarg);
				return -1;
			}
			break;
		case OPT_TOP:
			o->top = true;
			break;
		case OPT_CSV:
			o->csv = true;
			break;
		case OPT_OPENMETRICS:
			o->openmetrics = true;
			break;
		case OPT_PROMETHEUS:
			o->prometheus = true;
			break;
		case 'a':
			o->append = true;
			break;
		case 'c':
			if (set_mode(o, MODE_COMMAND, err, errlen))
				return -1;
			o->command = argv + optind;
			break;
		case 'D':
			if (set_mode(o, MODE_DUMP, err, errlen))
				return -1;
			o->scope = parse_scope(optarg);
			if (o->scope < 0) {
				say(err, errlen, "-D '%s': dump threads, processes or cpus",
				    optarg);
				return -1;
			}
			break;
		case 'm':
			if (set_mode(o, MODE_LISTEN, err, errlen))
				return -1;
			if (parse_cpulist(optarg, err, errlen))
				return -1;
			o->cpumask = optarg;
			break;
		case 'I':
			if (set_mode(o, MODE_INFO, err, errlen))
				return -1;
			break;
		case 's':
			o->sort = optarg;
			break;
		case 'n':
			if (parse_u32(optarg, &n) || !n || n > INT_MAX) {
				say(err, errlen, "-n: '%s' is not a number of rows", optarg);
				return -1;
			}
			o->limit = n;
			break;
		case 'l':
			o->loop = true;
			break;
		case 'w':
			o->logfile = optarg;
			break;
		case 'r':
			if (parse_size(optarg, &o->rcvbuf)) {
				say(err, errlen, "-r: '%s' is not a size such as 65536, 256K or 4M",
				    optarg);
				return -1;
			}
			break;
		case 'd':
			o->taskstats |= TS_DELAYS;
			break;
		case 'i':
			o->taskstats |= TS_IO;
			break;
		case 'q':
			o->taskstats |= TS_CSW_MEM;
			break;
		case 'R':
			if (parse_u32(optarg, &o->runtime_version) || !o->runtime_version) {
				say(err, errlen, "-R: '%s' is not a version", optarg);
				return -1;
			}
			break;
		case 'e':
			if (parse_events(optarg, o->events, &o->nr_events, err, errlen))
				return -1;
			o->events_given = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			o->mode = MODE_HELP;
			return 0;
		default:
			/* getopt_long() names no long option it rejected. */
			long_name = argv[optind - 1];
			if (optopt >= OPT_INTERVAL && strchr(long_name, '='))
				say(err, errlen, "%.*s takes no argument",
				    (int)strcspn(long_name, "="), long_name);
			else if (optopt >= OPT_INTERVAL)
				say(err, errlen, "%s needs an argument", long_name);
			else if (optopt && strchr("ptPCDmsnwrR", optopt))
				say(err, errlen, "-%c needs an argument", optopt);
			else if (optopt)
				say(err, errlen, "unknown option -%c", optopt);
			else
				say(err, errlen, "unknown option %s", long_name);
			return -1;
		}
		if (o->command)
			break;
	}

	/* --top is a dump of processes unless -D says what. */
	if (o->top && (o->mode == MODE_NONE || o->mode == MODE_TGID)) {
		o->mode = MODE_DUMP;
		o->scope = o->id ? RECOUNT_SCOPE_THREADS : RECOUNT_SCOPE_PROCESSES;
	}
	if (o->top && !o->interval)
		o->interval = 1;
	/* -e alone chooses, then says what is counted. */
	if (o->mode == MODE_NONE && o->events_given && !o->interval)
		o->mode = MODE_INFO;
	if (o->mode == MODE_NONE) {
		say(err, errlen,
		    "say what to read: -p, -t, -P, -c, -D, -m, -C, -I or --top (--help)");
		return -1;
	}
	if (o->mode == MODE_COMMAND && !*o->command) {
		say(err, errlen, "-c needs a command");
		return -1;
	}
	if (o->mode != MODE_COMMAND && optind < argc) {
		say(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (o->mode == MODE_DUMP && o->id && o->scope != RECOUNT_SCOPE_THREADS) {
		say(err, errlen, "-t narrows a dump of threads only");
		return -1;
	}
	if ((o->sort || o->limit) && o->mode != MODE_DUMP) {
		say(err, errlen, "-s and -n go with -D or --top");
		return -1;
	}
	if (o->sort && table_column(opts_table(o), o->sort) < 0) {
		char names[512];

		say(err, errlen, "-s: no column '%s'; sort by %s", o->sort,
		    table_column_names(opts_table(o), names, sizeof(names)));
		return -1;
	}
	if (o->top && o->mode != MODE_DUMP) {
		say(err, errlen,
		    "--top shows processes, threads (-t, -D threads) or CPUs (-D cpus)");
		return -1;
	}
	if (o->interval && o->mode != MODE_PID && o->mode != MODE_TGID &&
	    o->mode != MODE_CPU && o->mode != MODE_DUMP) {
		say(err, errlen, "--interval goes with -p, -t, -P, -D or --top");
		return -1;
	}
	if (o->count && !o->interval) {
		say(err, errlen, "--count goes with --interval or --top");
		return -1;
	}
	metrics = o->prometheus ? "--prometheus" : o->openmetrics ? "--openmetrics" : NULL;
	if (o->json + o->csv + o->openmetrics + o->prometheus > 1) {
		say(err, errlen, "give only one of --json, --csv, --openmetrics, --prometheus");
		return -1;
	}
	if (o->top && (o->json || o->csv || metrics)) {
		say(err, errlen,
		    "--top prints tables; --interval with --json or --csv is for scripts");
		return -1;
	}
	if (metrics && o->interval) {
		say(err, errlen, "%s gives totals, as counters: the collector computes their rates",
		    metrics);
		return -1;
	}
	if (metrics && o->mode != MODE_PID && o->mode != MODE_TGID && o->mode != MODE_CPU &&
	    o->mode != MODE_COMMAND && o->mode != MODE_DUMP) {
		say(err, errlen, "%s goes with -p, -t, -P, -c or -D", metrics);
		return -1;
	}
	if (o->csv && (o->mode == MODE_INFO || o->mode == MODE_CGROUP)) {
		say(err, errlen, "--csv goes with tasks and CPUs");
		return -1;
	}
	if (o->append && !o->logfile) {
		say(err, errlen, "-a goes with -w");
		return -1;
	}
	if (o->mode == MODE_CGROUP && (o->logfile || o->rcvbuf || o->verbose)) {
		say(err, errlen, "-C prints one line, or JSON: no -w, -r or -v");
		return -1;
	}
	if (o->loop && o->mode != MODE_LISTEN) {
		say(err, errlen, "-l goes with -m");
		return -1;
	}
	if (o->taskstats && o->mode != MODE_PID && o->mode != MODE_TGID &&
	    o->mode != MODE_COMMAND && o->mode != MODE_LISTEN) {
		say(err, errlen, "-d, -i and -q go with -p, -t, -c or -m (no CPUs or dumps)");
		return -1;
	}
	if (o->taskstats && (o->interval || o->csv || metrics)) {
		say(err, errlen, "-d, -i and -q print totals, as text or JSON");
		return -1;
	}
	if (o->events_given && o->mode == MODE_CGROUP) {
		say(err, errlen, "-e goes with recount's records, not with -C");
		return -1;
	}
	if (o->runtime_version && o->mode == MODE_CGROUP) {
		say(err, errlen, "-R goes with threads and processes, not with -C");
		return -1;
	}
	if (o->runtime_version && (o->mode == MODE_CPU || o->mode == MODE_INFO ||
				   (o->mode == MODE_DUMP && o->scope == RECOUNT_SCOPE_CPUS))) {
		say(err, errlen, "-R goes with threads and processes: CPUs have no runtime info");
		return -1;
	}
	if (o->runtime_version && o->interval) {
		say(err, errlen, "-R prints the runtime struct's totals: not in intervals");
		return -1;
	}
	if (o->runtime_version && o->mode == MODE_LISTEN) {
		say(err, errlen, "-R does not go with -m: exit records have no runtime struct");
		return -1;
	}
	return 0;
}
