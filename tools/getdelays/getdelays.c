// SPDX-License-Identifier: GPL-2.0
/*
 * getdelays: print what recount accounted for a thread, a process or a CPU.
 *
 * The successor of tools/accounting/getdelays for the RECOUNT generic netlink
 * family (Documentation/accounting/recount.rst). Run with --help for usage.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recount_client.h"

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
"Usage: getdelays [-v] -p PID | -t TGID | -C CPU | -c COMMAND [ARG...]\n"
"\n"
"Print the CPU time recount accounted, per level (user, kernel).\n"
"\n"
"  -p, --pid PID      one thread\n"
"  -t, --tgid TGID    one process: all its threads, live and exited\n"
"  -C, --cpu CPU      one CPU, with its idle time\n"
"  -c COMMAND [ARG...] run COMMAND, then print the totals of its process;\n"
"                     exits with COMMAND's exit status\n"
"  -v, --verbose      also print protocol details\n"
"  -h, --help         this text\n"
"\n"
"Exit status: 0 success, 1 usage error, 2 the kernel has no recount,\n"
"3 no such thread, process or CPU, 4 permission denied, 5 other error.\n";

static void print_time(const char *label, uint64_t ns)
{
	printf("  %-8s %10llu.%09llu s\n", label,
	       (unsigned long long)ns / 1000000000, (unsigned long long)ns % 1000000000);
}

static void print_usage(const struct rc_usage *u)
{
	if (u->has_user)
		print_time("user", u->user_ns);
	if (u->has_kernel)
		print_time("kernel", u->kernel_ns);
	if (u->has_user && u->has_kernel)
		print_time("total", u->user_ns + u->kernel_ns);
	if (u->has_idle)
		print_time("idle", u->idle_ns);
}

static void print_record(enum rc_selector sel, const struct rc_record *r)
{
	switch (sel) {
	case RC_SEL_PID:
		printf("thread %u (%s) of process %u\n", r->pid, r->comm, r->tgid);
		break;
	case RC_SEL_TGID:
		printf("process %u (%s), all threads\n", r->tgid, r->comm);
		break;
	case RC_SEL_CPU:
		printf("cpu %u\n", r->cpu);
		break;
	}
	if (r->has_usage)
		print_usage(&r->usage);
	if (r->has_exited) {
		printf(" of which exited threads\n");
		print_usage(&r->exited);
	}
	if (r->has_flags && (r->flags & RECOUNT_FLAGS_DISABLED))
		printf("  (recount is disabled, sysctl kernel.recount=0: values are frozen)\n");
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
	print_record(sel, &rec);
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
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct rc_client c = {};
	enum rc_selector sel = 0;
	char **command = NULL;
	uint32_t id = 0;
	int opt, err, ret;

	/* '+': stop at the first non-option, the start of -c's command. */
	while ((opt = getopt_long(argc, argv, "+p:t:C:cvh", longopts, NULL)) != -1) {
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
	if (!sel && !command) {
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

	ret = command ? run_command(&c, command) : query(&c, sel, id);
	rc_close(&c);
	return ret;
}
