// SPDX-License-Identifier: GPL-2.0
/*
 * getdelays: print what recount accounted for a thread, a process or a CPU.
 *
 * The successor of tools/accounting/getdelays for the RECOUNT generic netlink
 * family (Documentation/accounting/recount.rst). Run with --help for usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recount_client.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Exit codes, documented in --help and in Documentation. */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,
	EXIT_NO_RECOUNT = 2,
	EXIT_NOT_FOUND = 3,
	EXIT_DENIED = 4,
	EXIT_ERROR = 5,
};

static const char usage_text[] =
"Usage: getdelays [-v] [-R N] -p PID | -t TGID | -C CPU | -c COMMAND [ARG...] | -I\n"
"\n"
"Print what recount accounted, per level (user, kernel): time, and where the\n"
"kernel counts them cycles, instructions and their ratio (CPI), and energy\n"
"with its source; for threads and processes, also per kind of CPU, and what\n"
"they waited for: a CPU (queue), page faults, contended locks.\n"
"\n"
"  -p, --pid PID      one thread\n"
"  -t, --tgid TGID    one process: all its threads, live and exited\n"
"  -C, --cpu CPU      one CPU, with its idle time\n"
"  -c COMMAND [ARG...] run COMMAND, then print the totals of its process;\n"
"                     exits with COMMAND's exit status\n"
"  -I, --info         what this kernel counts, and the CPUs of each kind\n"
"  -R, --runtime-version N\n"
"                     also ask for struct recount_task_runtime of version N\n"
"                     (1: cpu and queue time; 2: and page fault and lock\n"
"                     contention time) and print it\n"
"  -v, --verbose      also say which metrics the kernel does not count\n"
"  -h, --help         this text\n"
"\n"
"Exit status: 0 success, 1 usage error, 2 the kernel has no recount,\n"
"3 no such thread, process or CPU, 4 permission denied, 5 other error.\n";

static const char *fmt_time(char *buf, size_t size, const struct rc_value *v)
{
	if (!v->has)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%llu.%09llu s", (unsigned long long)v->v / 1000000000,
			 (unsigned long long)v->v % 1000000000);
	return buf;
}

static const char *fmt_count(char *buf, size_t size, const struct rc_value *v)
{
	if (!v->has)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%llu", (unsigned long long)v->v);
	return buf;
}

static const char *fmt_energy(char *buf, size_t size, const struct rc_value *v)
{
	if (!v->has)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%llu.%06llu J", (unsigned long long)v->v / 1000000000,
			 (unsigned long long)v->v % 1000000000 / 1000);
	return buf;
}

/* Cycles per instruction, or "-" when there is nothing to divide. */
static const char *fmt_cpi(char *buf, size_t size, const struct rc_value *cycles,
			   const struct rc_value *instructions)
{
	if (!cycles->has || !instructions->has || !instructions->v)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3f", (double)cycles->v / instructions->v);
	return buf;
}

static struct rc_value sum(const struct rc_value *a, const struct rc_value *b)
{
	struct rc_value v = { .has = a->has && b->has, .v = a->v + b->v };

	return v;
}

static const char *inexact_note(uint32_t inexact, uint32_t bit)
{
	return inexact & bit ? "  (inexact)" : "";
}

/* One usage as rows of metrics by column user, kernel, total. */
static void print_usage(const struct rc_usage *u, uint32_t energy_source)
{
	struct rc_value cycles = sum(&u->user_cycles, &u->kernel_cycles);
	struct rc_value instructions = sum(&u->user_instructions, &u->kernel_instructions);
	struct rc_value total = sum(&u->user_ns, &u->kernel_ns);
	char a[32], b[32], c[32];

	printf("  %-13s %16s %16s %16s\n", "", "user", "kernel", "total");
	printf("  %-13s %16s %16s %16s\n", "time", fmt_time(a, sizeof(a), &u->user_ns),
	       fmt_time(b, sizeof(b), &u->kernel_ns), fmt_time(c, sizeof(c), &total));
	if (u->user_cycles.has)
		printf("  %-13s %16s %16s %16s%s\n", "cycles",
		       fmt_count(a, sizeof(a), &u->user_cycles),
		       fmt_count(b, sizeof(b), &u->kernel_cycles),
		       fmt_count(c, sizeof(c), &cycles),
		       inexact_note(u->inexact, RECOUNT_INEXACT_CYCLES));
	if (u->user_instructions.has)
		printf("  %-13s %16s %16s %16s%s\n", "instructions",
		       fmt_count(a, sizeof(a), &u->user_instructions),
		       fmt_count(b, sizeof(b), &u->kernel_instructions),
		       fmt_count(c, sizeof(c), &instructions),
		       inexact_note(u->inexact, RECOUNT_INEXACT_INSTRUCTIONS));
	if (u->user_cycles.has && u->user_instructions.has)
		printf("  %-13s %16s %16s %16s\n", "CPI",
		       fmt_cpi(a, sizeof(a), &u->user_cycles, &u->user_instructions),
		       fmt_cpi(b, sizeof(b), &u->kernel_cycles, &u->kernel_instructions),
		       fmt_cpi(c, sizeof(c), &cycles, &instructions));
	if (u->energy_nj.has)
		printf("  %-13s %16s %16s %16s  (%s)%s\n", "energy", "", "",
		       fmt_energy(a, sizeof(a), &u->energy_nj),
		       rc_energy_source_name(energy_source),
		       inexact_note(u->inexact, RECOUNT_INEXACT_ENERGY));
	if (u->idle_ns.has)
		printf("  %-13s %16s %16s %16s\n", "idle", "", "",
		       fmt_time(a, sizeof(a), &u->idle_ns));
	if (u->idle_energy_nj.has)
		printf("  %-13s %16s %16s %16s\n", "idle energy", "", "",
		       fmt_energy(a, sizeof(a), &u->idle_energy_nj));
}

/* The usage of each kind of CPU, a row each. */
static void print_per_kind(const struct rc_record *r)
{
	char a[32], b[32], c[32], d[32];
	int i;

	printf("  %-13s %16s %16s %16s %16s\n", "per CPU kind", "time", "cycles",
	       "instructions", "energy");
	for (i = 0; i < r->nr_kinds; i++) {
		const struct rc_usage *u = &r->per_kind[i];
		struct rc_value time = sum(&u->user_ns, &u->kernel_ns);
		struct rc_value cycles = sum(&u->user_cycles, &u->kernel_cycles);
		struct rc_value instructions = sum(&u->user_instructions, &u->kernel_instructions);

		printf("    %-11s %16s %16s %16s %16s\n", rc_kind_name(u->kind),
		       fmt_time(a, sizeof(a), &time), fmt_count(b, sizeof(b), &cycles),
		       fmt_count(c, sizeof(c), &instructions),
		       fmt_energy(d, sizeof(d), &u->energy_nj));
	}
}

static void print_runtime(const char *label, const struct rc_runtime *rt)
{
	struct rc_value queue = { true, rt->queue_ns }, fault = { true, rt->fault_ns };
	struct rc_value lock = { true, rt->lock_ns };
	char a[32], b[32], c[32];

	printf("  %-13s %16s %16s %16s\n", label, "queue", "page faults", "locks");
	printf("  %-13s %16s %16s %16s\n", "", fmt_time(a, sizeof(a), &queue),
	       fmt_time(b, sizeof(b), &fault), fmt_time(c, sizeof(c), &lock));
}

/* The struct recount_task_runtime the kernel sent, field by field. */
static void print_runtime_struct(const struct rc_record *r, uint32_t version)
{
	static const char *const fields[] = {
		"cpu_time", "queue_time", "page_fault_time", "lock_contention_time",
	};
	int i, n = r->runtime_struct_len / sizeof(uint64_t);

	printf("  struct recount_task_runtime, version %u, %d bytes:\n", version,
	       r->runtime_struct_len);
	for (i = 0; i < n && i < (int)ARRAY_SIZE(fields); i++) {
		uint64_t v;

		memcpy(&v, r->runtime_struct + i * sizeof(v), sizeof(v));
		printf("    %-22s %llu ns\n", fields[i], (unsigned long long)v);
	}
}

static void print_unsupported(uint32_t metrics)
{
	if (!(metrics & RECOUNT_METRIC_CYCLES))
		printf("  (cycles and instructions: not counted, no PMU counters)\n");
	if (!(metrics & RECOUNT_METRIC_ENERGY))
		printf("  (energy: not counted, no energy source)\n");
}

static void print_record(enum rc_selector sel, const struct rc_record *r,
			 const struct rc_client *c)
{
	switch (sel) {
	case RC_SEL_PID:
		printf("thread %u (%s) of process %u\n", r->pid, r->comm, r->tgid);
		break;
	case RC_SEL_TGID:
		printf("process %u (%s), all threads\n", r->tgid, r->comm);
		break;
	case RC_SEL_CPU:
		printf("cpu %u (%s)\n", r->cpu,
		       r->usage.has_kind ? rc_kind_name(r->usage.kind) : "unknown kind");
		break;
	}
	if (r->has_usage)
		print_usage(&r->usage, r->energy_source);
	if (r->has_exited) {
		printf(" of which exited threads:\n");
		print_usage(&r->exited, r->energy_source);
	}
	if (r->nr_kinds)
		print_per_kind(r);
	if (r->runtime.has)
		print_runtime("waited for", &r->runtime);
	if (r->exited_runtime.has)
		print_runtime(" exited", &r->exited_runtime);
	if (r->runtime_struct_len)
		print_runtime_struct(r, c->runtime_version);
	if (c->verbose)
		print_unsupported(r->metrics);
	if (r->has_flags && (r->flags & RECOUNT_FLAGS_DISABLED))
		printf("  (recount is disabled, sysctl kernel.recount=0: values are frozen)\n");
}

static int print_info(struct rc_client *c)
{
	struct rc_info info;
	int err, i;

	err = rc_get_info(c, &info);
	if (err) {
		fprintf(stderr, "getdelays: %s\n", c->extack[0] ? c->extack : strerror(-err));
		return EXIT_ERROR;
	}
	printf("recount is %s\n", info.flags & RECOUNT_FLAGS_DISABLED ? "off" : "on");
	printf("  metrics: time%s%s%s\n",
	       info.metrics & RECOUNT_METRIC_CYCLES ? ", cycles" : "",
	       info.metrics & RECOUNT_METRIC_INSTRUCTIONS ? ", instructions" : "",
	       info.metrics & RECOUNT_METRIC_ENERGY ? ", energy" : "");
	printf("  energy source: %s\n", rc_energy_source_name(info.energy_source));
	for (i = 0; i < info.nr_kinds; i++)
		printf("  %s CPUs: %s\n", rc_kind_name(info.kind_cpus[i].kind),
		       info.kind_cpus[i].cpus[0] ? info.kind_cpus[i].cpus : "none");
	return EXIT_OK;
}

static int report_error(const struct rc_client *c, int err, const char *what, uint32_t id)
{
	const char *why = c->extack[0] ? c->extack : strerror(-err);

	switch (err) {
	case -ESRCH:
		fprintf(stderr, "getdelays: %s %u: %s\n", what, id, why);
		return EXIT_NOT_FOUND;
	case -EINVAL:
	case -ENODEV:
		fprintf(stderr, "getdelays: %s %u: %s\n", what, id, why);
		return err == -ENODEV ? EXIT_NOT_FOUND : EXIT_ERROR;
	case -EACCES:
	case -EPERM:
		fprintf(stderr, "getdelays: %s %u: permission denied: %s\n", what, id, why);
		return EXIT_DENIED;
	default:
		fprintf(stderr, "getdelays: %s %u: %s\n", what, id, why);
		return EXIT_ERROR;
	}
}

static int query(struct rc_client *c, enum rc_selector sel, uint32_t id)
{
	static const char *const what[] = {
		[RC_SEL_PID] = "thread", [RC_SEL_TGID] = "process", [RC_SEL_CPU] = "cpu",
	};
	struct rc_record rec;
	int err;

	err = rc_get(c, sel, id, &rec);
	if (err)
		return report_error(c, err, what[sel], id);
	print_record(sel, &rec, c);
	return EXIT_OK;
}

/*
 * Run a command and print its process's totals. The process is read as a
 * zombie (waitid(WNOWAIT)): all its threads have exited, its totals are final.
 */
static int run_command(struct rc_client *c, char **argv)
{
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
	ret = query(c, RC_SEL_TGID, pid);
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

static int parse_u32(const char *s, uint32_t *v)
{
	unsigned long long n;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end || n > UINT32_MAX)
		return -1;
	*v = n;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tgid", required_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "info", no_argument, NULL, 'I' },
		{ "runtime-version", required_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct rc_client c = {};
	enum rc_selector sel = 0;
	char **command = NULL;
	bool info = false;
	uint32_t id = 0;
	int opt, err, ret;

	/* '+': stop at the first non-option, the start of -c's command. */
	while ((opt = getopt_long(argc, argv, "+p:t:C:cIR:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
		case 't':
		case 'C':
			if (sel || command) {
				fprintf(stderr, "getdelays: give only one of -p, -t, -C, -c\n");
				return EXIT_USAGE;
			}
			sel = opt == 'p' ? RC_SEL_PID : opt == 't' ? RC_SEL_TGID : RC_SEL_CPU;
			if (parse_u32(optarg, &id)) {
				fprintf(stderr, "getdelays: -%c: '%s' is not a number\n",
					opt, optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c':
			if (sel) {
				fprintf(stderr, "getdelays: give only one of -p, -t, -C, -c\n");
				return EXIT_USAGE;
			}
			command = argv + optind;
			break;
		case 'I':
			info = true;
			break;
		case 'R':
			if (parse_u32(optarg, &c.runtime_version) || !c.runtime_version) {
				fprintf(stderr, "getdelays: -R: '%s' is not a version\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'v':
			c.verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		}
		if (command)
			break;
	}
	if (command && !*command) {
		fprintf(stderr, "getdelays: -c needs a command\n");
		return EXIT_USAGE;
	}
	if (info && (sel || command)) {
		fprintf(stderr, "getdelays: -I goes alone\n");
		return EXIT_USAGE;
	}
	if (!sel && !command && !info) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	if (!command && optind < argc) {
		fprintf(stderr, "getdelays: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}

	err = rc_open(&c);
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

	if (info)
		ret = print_info(&c);
	else if (command)
		ret = run_command(&c, command);
	else
		ret = query(&c, sel, id);
	rc_close(&c);
	return ret;
}
