/* SPDX-License-Identifier: GPL-2.0 */
/*
 * getdelays' output: derived figures, human tables and JSON. Pure functions
 * of records, testable without a kernel.
 */
#ifndef _GETDELAYS_OUTPUT_H
#define _GETDELAYS_OUTPUT_H

#include <stdio.h>

#include "recount_client.h"

/* Which taskstats figures to show (-d, -i, -q). */
enum {
	TS_DELAYS = 1 << 0,
	TS_IO = 1 << 1,
	TS_CSW_MEM = 1 << 2,
};

/* The taskstats of a record, or why there are none. */
struct ts_shown {
	unsigned int what;		/* TS_*, 0: none asked */
	const struct ts_record *rec;	/* NULL: see why */
	const char *why;
	bool delayacct_off;		/* kernel.task_delayacct is 0 */
};

struct out_opts {
	bool json;
	int verbose;
	uint32_t runtime_version;	/* the struct version asked, or 0 */
	uint64_t now;			/* CLOCK_BOOTTIME, for shares of live tasks */
	bool utf8;			/* the locale's charset is UTF-8 */
	bool csv_utf8;			/* CSV keeps UTF-8: utf8, or no terminal */
};

/*
 * The length of the UTF-8 character beyond ASCII at @s, or 0 if bad or a C1
 * control.
 */
size_t utf8_printable(const unsigned char *s);

/* a + b; absent if either is. */
struct rc_value rc_sum(const struct rc_value *a, const struct rc_value *b);
/* cycles / instructions; false if either is absent or there are none. */
bool rc_cpi(const struct rc_value *cycles, const struct rc_value *instructions, double *cpi);
/* Average power on CPU, energy / CPU time, in watts; false if unknown. */
bool rc_power(const struct rc_usage *u, double *watts);
/* @ns as a share of the task's life so far (or until it exited). */
bool rc_share(const struct rc_record *r, uint64_t now, uint64_t ns, double *share);

/* Human units: "1.234 s", "12.300 ms"; "950.4M"; "1.20 J"; "-" when absent. */
const char *fmt_duration(char *buf, size_t size, const struct rc_value *v);
const char *fmt_count(char *buf, size_t size, const struct rc_value *v);
const char *fmt_energy(char *buf, size_t size, const struct rc_value *v);

/*
 * The chosen events, from get-info: what the records' event counts are
 * named in every output. Without, they are not shown.
 */
void out_set_events(const struct rc_info *info);
/* The generation of the events out_set_events() named. */
uint32_t out_events_gen(void);
/* Whether @r's counts of chosen events are of the events named. */
bool out_events_named(const struct rc_record *r);
/* The name of chosen event @e ("cache-misses", "r11"), or NULL. */
const char *out_event_name(int e);
/* Its count over both levels it is counted at; absent if neither came. */
struct rc_value rc_event_total(const struct rc_usage *u, int e);

/* A record as a block of rows, for one query. */
void out_text_record(FILE *f, const struct rc_record *r, const struct ts_shown *ts,
		     const struct out_opts *o);
/* A record as one JSON object on a line. */
void out_json_record(FILE *f, const struct rc_record *r, const struct ts_shown *ts,
		     const struct out_opts *o);
/* RECOUNT_CMD_GET_INFO, as text or JSON. */
void out_info(FILE *f, const struct rc_info *info, const struct out_opts *o);

/* Tables: a dump's rows, and exit records as they come. */
enum table_kind {
	TABLE_THREADS,
	TABLE_PROCESSES,
	TABLE_CPUS,
	TABLE_EXITS,
	/* What happened in an interval (interval.h): shares of it. */
	TABLE_THREADS_IV,
	TABLE_PROCESSES_IV,
	TABLE_CPUS_IV,
};

/* The interval table of the same things as @kind's. */
int table_interval(enum table_kind kind);
/* Whether the table is of an interval's records. */
bool table_is_interval(enum table_kind kind);

/* The index of column @name in tables of @kind, or -1. */
int table_column(enum table_kind kind, const char *name);
/* The names of the columns of @kind, comma-separated, for messages. */
const char *table_column_names(enum table_kind kind, char *buf, size_t size);
/* The name of column @col of @kind's table. */
const char *table_column_name(enum table_kind kind, int col);
/* The default sort column: CPU time for tasks, the CPU number for CPUs. */
int table_default_sort(enum table_kind kind);
/* Sort @recs by column @col: numbers largest first, pids and names ascending. */
void table_sort(enum table_kind kind, struct rc_record *recs, int n, int col,
		const struct out_opts *o);
void table_header(FILE *f, enum table_kind kind);
void table_row(FILE *f, enum table_kind kind, const struct rc_record *r,
	       const struct out_opts *o);

/*
 * CSV: a header of the names of every column of @kind (those -s takes), and
 * a line per record: ids and figures in raw units (ns, nJ, counts), shares
 * in percent, the clock of an interval in seconds since the epoch; a field
 * the kernel does not count is empty. Fields are quoted as RFC 4180 says.
 */
void csv_header(FILE *f, enum table_kind kind);
void csv_row(FILE *f, enum table_kind kind, const struct rc_record *r,
	     const struct out_opts *o);

/*
 * The records of a read as OpenMetrics text: one family per metric and type
 * of record, in base units, with pid, tgid, comm, cpu, kind, mode and wait
 * labels; "# EOF" at the end. @realtime_off is CLOCK_REALTIME less
 * CLOCK_BOOTTIME, in ns, to give start times as Unix time. With
 * @prometheus, Prometheus's text format 0.0.4 instead.
 */
void out_openmetrics(FILE *f, const struct rc_record *recs, int n, int64_t realtime_off,
		     bool prometheus);

/* The taskstats figures of a record, as indented rows. */
void out_text_taskstats(FILE *f, const struct ts_shown *ts);

#endif /* _GETDELAYS_OUTPUT_H */
