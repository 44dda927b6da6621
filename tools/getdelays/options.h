/* SPDX-License-Identifier: GPL-2.0 */
/*
 * getdelays' command line: what to do, parsed and checked, testable without
 * a kernel.
 */
#ifndef _GETDELAYS_OPTIONS_H
#define _GETDELAYS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recount_client.h"

enum mode {
	MODE_NONE,
	MODE_PID,	/* -p */
	MODE_TGID,	/* -t */
	MODE_CPU,	/* -P */
	MODE_CGROUP,	/* -C */
	MODE_COMMAND,	/* -c */
	MODE_DUMP,	/* -D */
	MODE_LISTEN,	/* -m */
	MODE_INFO,	/* -I */
	MODE_HELP,	/* -h */
};

struct opts {
	enum mode mode;
	uint32_t id;			/* -p, -t, -P; with -D, -t's tgid */
	const char *cgroup;		/* -C */
	char **command;			/* -c */
	int scope;			/* -D: enum recount_scope */
	const char *sort;		/* -s */
	int limit;			/* -n, 0: all */
	double interval;		/* --interval, seconds; 0: totals once */
	uint32_t count;			/* --count, 0: until interrupted */
	bool top;			/* --top */
	const char *cpumask;		/* -m */
	bool loop;			/* -l */
	const char *logfile;		/* -w */
	bool append;			/* -a */
	int rcvbuf;			/* -r, bytes; 0: the default */
	unsigned int taskstats;		/* -d, -i, -q: TS_* */
	bool json;			/* --json */
	bool csv;			/* --csv */
	bool openmetrics;		/* --openmetrics */
	bool prometheus;		/* --prometheus */
	int verbose;			/* -v */
	uint32_t runtime_version;	/* -R */
	bool events_given;		/* -e: choose @events */
	int nr_events;
	struct rc_event events[RC_MAX_EVENTS];
};

/* Exit codes, documented in --help and in Documentation. */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,
	EXIT_NO_RECOUNT = 2,
	EXIT_NOT_FOUND = 3,
	EXIT_DENIED = 4,
	EXIT_ERROR = 5,
};

extern const char usage_text[];

/*
 * Parse the command line into @o. Returns 0, or -1 with a message for the
 * user in @err.
 */
int parse_args(int argc, char **argv, struct opts *o, char *err, size_t errlen);

/* A decimal u32, nothing else. Returns 0 or -1. */
int parse_u32(const char *s, uint32_t *v);
/* A CPU list, as "0-3,8,10-11": the syntax only. Returns 0 or -1 with why. */
int parse_cpulist(const char *s, char *err, size_t errlen);
/* A size in bytes, with an optional K, M or G (powers of 1024). */
int parse_size(const char *s, int *bytes);
/* Seconds, as "1", "0.2" or "2.5": at least 0.01, at most a day. */
int parse_interval(const char *s, double *seconds);
/*
 * Why the RECOUNT family could not be opened (rc_open()'s @err), in @msg;
 * the exit status: EXIT_NO_RECOUNT for a kernel without it.
 */
int open_error(int err, char *msg, size_t len);
/*
 * -e's list: EVENT[:MODE],... where EVENT is a generic event's name as perf
 * names it (cache-misses) or rHEX, a raw code, and MODE user, kernel or all
 * (u, k; the default all); "none" chooses none. Returns 0 or -1 with why.
 */
int parse_events(const char *s, struct rc_event *ev, int *nr, char *err, size_t errlen);
/* An event's name as -e takes it, without its mode: "cache-misses", "r11". */
const char *event_name(char *buf, size_t size, const struct rc_event *ev);
/* user, kernel, all. */
const char *event_mode_name(uint32_t mode);

/* threads, processes, cpus (or their start). Returns the scope or -1. */
int parse_scope(const char *s);
/* The table of a dump of @scope: enum table_kind. */
int dump_table(int scope);
/* The table of what @o reads (a dump, a query, exits), in intervals or not. */
int opts_table(const struct opts *o);

#endif /* _GETDELAYS_OPTIONS_H */
