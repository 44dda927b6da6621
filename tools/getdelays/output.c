// SPDX-License-Identifier: GPL-2.0
/*
 * getdelays' output: derived figures, human tables and JSON.
 *
 * The JSON keys are an interface: Documentation/accounting/recount.rst lists
 * them. Add keys, never rename or drop one.
 */
#define _GNU_SOURCE		/* wcwidth() */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "options.h"
#include "output.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_SEC ((uint64_t)1000000000)

struct rc_value rc_sum(const struct rc_value *a, const struct rc_value *b)
{
	struct rc_value v = { .has = a->has && b->has, .v = a->v + b->v };

	return v;
}

bool rc_cpi(const struct rc_value *cycles, const struct rc_value *instructions, double *cpi)
{
	if (!cycles->has || !instructions->has || !instructions->v)
		return false;
	*cpi = (double)cycles->v / instructions->v;
	return true;
}

bool rc_power(const struct rc_usage *u, double *watts)
{
	struct rc_value t = rc_sum(&u->user_ns, &u->kernel_ns);

	if (!u->energy_nj.has || !t.has || !t.v)
		return false;
	/* nJ / ns = W */
	*watts = (double)u->energy_nj.v / t.v;
	return true;
}

bool rc_share(const struct rc_record *r, uint64_t now, uint64_t ns, double *share)
{
	uint64_t end = r->is_exit ? r->exit_time : now;

	if (!r->start_time.has || end <= r->start_time.v)
		return false;
	*share = (double)ns / (end - r->start_time.v);
	return true;
}

const char *fmt_duration(char *buf, size_t size, const struct rc_value *v)
{
	if (!v->has)
		snprintf(buf, size, "-");
	else if (v->v >= NSEC_PER_SEC)
		snprintf(buf, size, "%.3f s", v->v / 1e9);
	else if (v->v >= 1000000)
		snprintf(buf, size, "%.3f ms", v->v / 1e6);
	else if (v->v >= 1000)
		snprintf(buf, size, "%.3f us", v->v / 1e3);
	else
		snprintf(buf, size, "%llu ns", (unsigned long long)v->v);
	return buf;
}

const char *fmt_count(char *buf, size_t size, const struct rc_value *v)
{
	static const char units[] = "kMGTPE";
	double x;
	int i;

	if (!v->has) {
		snprintf(buf, size, "-");
		return buf;
	}
	if (v->v < 10000) {
		snprintf(buf, size, "%llu", (unsigned long long)v->v);
		return buf;
	}
	x = v->v / 1000.0;
	for (i = 0; x >= 1000 && units[i + 1]; i++)
		x /= 1000;
	snprintf(buf, size, "%.1f%c", x, units[i]);
	return buf;
}

const char *fmt_energy(char *buf, size_t size, const struct rc_value *v)
{
	if (!v->has)
		snprintf(buf, size, "-");
	else if (v->v >= NSEC_PER_SEC)
		snprintf(buf, size, "%.3f J", v->v / 1e9);
	else if (v->v >= 1000000)
		snprintf(buf, size, "%.3f mJ", v->v / 1e6);
	else if (v->v >= 1000)
		snprintf(buf, size, "%.3f uJ", v->v / 1e3);
	else
		snprintf(buf, size, "%llu nJ", (unsigned long long)v->v);
	return buf;
}

/* Exact seconds, for the rows of one record: "0.950411200 s". */
static const char *fmt_seconds(char *buf, size_t size, const struct rc_value *v)
{
	if (!v->has)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%llu.%09llu s", (unsigned long long)(v->v / NSEC_PER_SEC),
			 (unsigned long long)(v->v % NSEC_PER_SEC));
	return buf;
}

static const char *fmt_raw(char *buf, size_t size, const struct rc_value *v)
{
	if (!v->has)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%llu", (unsigned long long)v->v);
	return buf;
}

static const char *fmt_ratio(char *buf, size_t size, bool has, double x, const char *fmt)
{
	if (!has)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, fmt, x);
	return buf;
}

static const char *fmt_cpi(char *buf, size_t size, const struct rc_value *cycles,
			   const struct rc_value *instructions)
{
	double cpi = 0;
	bool has = rc_cpi(cycles, instructions, &cpi);

	return fmt_ratio(buf, size, has, cpi, "%.3f");
}

static const char *fmt_share(char *buf, size_t size, const struct rc_record *r,
			     const struct out_opts *o, uint64_t ns)
{
	double share = 0;
	bool has = rc_share(r, o->now, ns, &share);

	return fmt_ratio(buf, size, has, share * 100, "%.1f%%");
}

/*
 * When a longest wait ended: seconds after the thread or process started,
 * "+1.250000000 s", or since boot without a start time, "boot+12.5 s";
 * "-" with no wait.
 */
static const char *fmt_when(char *buf, size_t size, const struct rc_record *r, uint64_t at)
{
	bool since_start = r->start_time.has && at >= r->start_time.v;
	struct rc_value v = { at != 0, since_start ? at - r->start_time.v : at };
	const char *prefix = since_start ? "+" : "boot+";
	size_t n = strlen(prefix);

	if (!at || size <= n)
		return fmt_seconds(buf, size, &v);
	memcpy(buf, prefix, n);
	fmt_seconds(buf + n, size - n, &v);
	return buf;
}

static const char *inexact_note(uint32_t inexact, uint32_t bit)
{
	return inexact & bit ? "  (inexact)" : "";
}

static const char *type_name(enum rc_type type)
{
	static const char *const names[] = {
		[RC_THREAD] = "thread", [RC_PROCESS] = "process", [RC_CPU] = "cpu",
	};

	return names[type];
}

/* The chosen events, as out_set_events() was told them, and their generation. */
static struct {
	int nr;
	uint32_t gen;
	struct rc_event ev[RC_MAX_EVENTS];
	char name[RC_MAX_EVENTS][32];
} events;

void out_set_events(const struct rc_info *info)
{
	char buf[sizeof(events.name[0])];
	int e;

	events.nr = info->nr_events;
	events.gen = info->event_gen;
	for (e = 0; e < events.nr; e++) {
		events.ev[e] = info->events[e];
		/* event_name() returns a table's name, or formats one in @buf. */
		snprintf(events.name[e], sizeof(events.name[e]), "%s",
			 event_name(buf, sizeof(buf), &info->events[e]));
	}
}

const char *out_event_name(int e)
{
	return e < events.nr ? events.name[e] : NULL;
}

uint32_t out_events_gen(void)
{
	return events.gen;
}

bool out_events_named(const struct rc_record *r)
{
	return !r->has_event_gen || r->event_gen == events.gen;
}

struct rc_value rc_event_total(const struct rc_usage *u, int e)
{
	const struct rc_value *a = &u->event_user[e], *b = &u->event_kernel[e];

	if (a->has && b->has)
		return rc_sum(a, b);
	return a->has ? *a : *b;
}

/* --- one record, as text --- */

/* One usage as rows of metrics by column user, kernel, total. */
static void text_usage(FILE *f, const struct rc_usage *u, uint32_t energy_source)
{
	struct rc_value cycles = rc_sum(&u->user_cycles, &u->kernel_cycles);
	struct rc_value instructions = rc_sum(&u->user_instructions, &u->kernel_instructions);
	struct rc_value total = rc_sum(&u->user_ns, &u->kernel_ns);
	char a[32], b[32], c[32];
	double watts = 0;
	bool head;
	int e;

	fprintf(f, "  %-13s %16s %16s %16s\n", "", "user", "kernel", "total");
	fprintf(f, "  %-13s %16s %16s %16s\n", "time", fmt_seconds(a, sizeof(a), &u->user_ns),
		fmt_seconds(b, sizeof(b), &u->kernel_ns), fmt_seconds(c, sizeof(c), &total));
	if (u->user_cycles.has)
		fprintf(f, "  %-13s %16s %16s %16s%s\n", "cycles",
			fmt_raw(a, sizeof(a), &u->user_cycles),
			fmt_raw(b, sizeof(b), &u->kernel_cycles),
			fmt_raw(c, sizeof(c), &cycles),
			inexact_note(u->inexact, RECOUNT_INEXACT_CYCLES));
	if (u->user_instructions.has)
		fprintf(f, "  %-13s %16s %16s %16s%s\n", "instructions",
			fmt_raw(a, sizeof(a), &u->user_instructions),
			fmt_raw(b, sizeof(b), &u->kernel_instructions),
			fmt_raw(c, sizeof(c), &instructions),
			inexact_note(u->inexact, RECOUNT_INEXACT_INSTRUCTIONS));
	if (u->user_cycles.has && u->user_instructions.has)
		fprintf(f, "  %-13s %16s %16s %16s\n", "CPI",
			fmt_cpi(a, sizeof(a), &u->user_cycles, &u->user_instructions),
			fmt_cpi(b, sizeof(b), &u->kernel_cycles, &u->kernel_instructions),
			fmt_cpi(c, sizeof(c), &cycles, &instructions));
	if (u->energy_nj.has) {
		snprintf(a, sizeof(a), "%llu.%06llu J",
			 (unsigned long long)(u->energy_nj.v / NSEC_PER_SEC),
			 (unsigned long long)(u->energy_nj.v % NSEC_PER_SEC / 1000));
		fprintf(f, "  %-13s %16s %16s %16s  (%s)\n", "energy", "", "", a,
			rc_energy_source_name(energy_source));
		if (rc_power(u, &watts))
			fprintf(f, "  %-13s %16s %16s %14.3f W  (energy / time)\n", "power", "", "",
				watts);
	}
	if (u->idle_ns.has)
		fprintf(f, "  %-13s %16s %16s %16s\n", "idle", "", "",
			fmt_seconds(a, sizeof(a), &u->idle_ns));
	if (u->idle_irq_ns.has)
		fprintf(f, "  %-13s %16s %16s %16s  (of kernel)\n", "idle irq", "", "",
			fmt_seconds(a, sizeof(a), &u->idle_irq_ns));
	if (u->idle_energy_nj.has)
		fprintf(f, "  %-13s %16s %16s %16s\n", "idle energy", "", "",
			fmt_energy(a, sizeof(a), &u->idle_energy_nj));
	/* The chosen events, under a header of their own, named as -e takes them. */
	for (e = 0, head = true; e < events.nr; e++) {
		struct rc_value t = rc_event_total(u, e);

		if (!t.has)
			continue;
		if (head)
			fprintf(f, "  %-13s %16s %16s %16s\n", "events", "user", "kernel", "total");
		head = false;
		fprintf(f, "  %-13s %16s %16s %16s%s\n", events.name[e],
			fmt_raw(a, sizeof(a), &u->event_user[e]),
			fmt_raw(b, sizeof(b), &u->event_kernel[e]), fmt_raw(c, sizeof(c), &t),
			inexact_note(u->inexact, RECOUNT_INEXACT_EVENT_0 << e));
	}
}

/* The usage of each kind of CPU, a row each. */
static void text_per_kind(FILE *f, const struct rc_record *r)
{
	char a[32], b[32], c[32], d[32];
	int i;

	fprintf(f, "  %-13s %16s %16s %16s %16s\n", "per CPU kind", "time", "cycles",
		"instructions", "energy");
	for (i = 0; i < r->nr_kinds; i++) {
		const struct rc_usage *u = &r->per_kind[i];
		struct rc_value time = rc_sum(&u->user_ns, &u->kernel_ns);
		struct rc_value cycles = rc_sum(&u->user_cycles, &u->kernel_cycles);
		struct rc_value instructions = rc_sum(&u->user_instructions,
						      &u->kernel_instructions);

		fprintf(f, "    %-11s %16s %16s %16s %16s\n", rc_kind_name(u->kind),
			fmt_seconds(a, sizeof(a), &time), fmt_raw(b, sizeof(b), &cycles),
			fmt_raw(c, sizeof(c), &instructions),
			fmt_energy(d, sizeof(d), &u->energy_nj));
	}
}

static void text_runtime(FILE *f, const char *label, const struct rc_record *r,
			 const struct rc_runtime *rt, const struct out_opts *o, bool shares)
{
	struct rc_value queue = { true, rt->queue_ns }, fault = { true, rt->fault_ns };
	struct rc_value lock = { true, rt->lock_ns };
	char a[32], b[32], c[32];

	const struct rc_wait_stats *w = rt->wait;

	fprintf(f, "  %-13s %16s %16s %16s\n", label, "queue", "page faults", "locks");
	fprintf(f, "  %-13s %16s %16s %16s\n", "", fmt_seconds(a, sizeof(a), &queue),
		fmt_seconds(b, sizeof(b), &fault), fmt_seconds(c, sizeof(c), &lock));
	if (rt->has_waits) {
		struct rc_value max[RC_NR_WAITS];
		int i;

		for (i = 0; i < RC_NR_WAITS; i++)
			max[i] = (struct rc_value){ true, w[i].max_ns };
		fprintf(f, "  %-13s %16llu %16llu %16llu\n", "waits",
			(unsigned long long)w[RC_WAIT_QUEUE].count,
			(unsigned long long)w[RC_WAIT_FAULT].count,
			(unsigned long long)w[RC_WAIT_LOCK].count);
		fprintf(f, "  %-13s %16s %16s %16s\n", "longest",
			fmt_seconds(a, sizeof(a), &max[RC_WAIT_QUEUE]),
			fmt_seconds(b, sizeof(b), &max[RC_WAIT_FAULT]),
			fmt_seconds(c, sizeof(c), &max[RC_WAIT_LOCK]));
		fprintf(f, "  %-13s %16s %16s %16s\n", "  ended at",
			fmt_when(a, sizeof(a), r, w[RC_WAIT_QUEUE].max_at_ns),
			fmt_when(b, sizeof(b), r, w[RC_WAIT_FAULT].max_at_ns),
			fmt_when(c, sizeof(c), r, w[RC_WAIT_LOCK].max_at_ns));
	}
	if (shares && r->start_time.has)
		fprintf(f, "  %-13s %16s %16s %16s\n", "share of life",
			fmt_share(a, sizeof(a), r, o, rt->queue_ns),
			fmt_share(b, sizeof(b), r, o, rt->fault_ns),
			fmt_share(c, sizeof(c), r, o, rt->lock_ns));
}

static const char *const runtime_fields[] = {
	"cpu_time", "queue_time", "page_fault_time", "lock_contention_time",
	"queue_count", "queue_max", "queue_max_time",
	"page_fault_count", "page_fault_max", "page_fault_max_time",
	"lock_contention_count", "lock_contention_max", "lock_contention_max_time",
};

/* Counts are counts; every other field of the struct is in nanoseconds. */
static bool runtime_field_is_count(const char *name)
{
	return strstr(name, "_count");
}

/* The struct recount_task_runtime the kernel sent, field by field. */
static void text_runtime_struct(FILE *f, const struct rc_record *r, uint32_t version)
{
	int i, n = r->runtime_struct_len / sizeof(uint64_t);

	fprintf(f, "  struct recount_task_runtime, version %u, %d bytes:\n", version,
		r->runtime_struct_len);
	for (i = 0; i < n && i < (int)ARRAY_SIZE(runtime_fields); i++) {
		uint64_t v;

		memcpy(&v, r->runtime_struct + i * sizeof(v), sizeof(v));
		fprintf(f, "    %-24s %llu%s\n", runtime_fields[i], (unsigned long long)v,
			runtime_field_is_count(runtime_fields[i]) ? "" : " ns");
	}
}

static void text_unsupported(FILE *f, uint32_t metrics)
{
	if (!(metrics & RECOUNT_METRIC_CYCLES))
		fprintf(f, "  (cycles and instructions: not counted, no PMU counters)\n");
	if (!(metrics & RECOUNT_METRIC_ENERGY))
		fprintf(f, "  (energy: not counted, no energy source)\n");
}

/* Counts perf_event_paranoid kept from us: say so, they are not missing. */
static void text_withheld(FILE *f, uint32_t withheld)
{
	if (withheld & RECOUNT_WITHHELD_USER_PMU)
		fprintf(f,
			"  (cycles and instructions: withheld, as perf would not count them for you: kernel.perf_event_paranoid)\n");
	else if (withheld & RECOUNT_WITHHELD_KERNEL_PMU)
		fprintf(f,
			"  (kernel cycles and instructions: withheld, as perf would not count the kernel for you: kernel.perf_event_paranoid)\n");
}

/*
 * The length of the UTF-8 sequence at @s, its code point in *@cp; 0 if it
 * is not well-formed: bad, overlong, a surrogate, or cut short by the end
 * of @s.
 */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
	size_t n, i;

	if (s[0] < 0x80)
		n = 1, *cp = s[0];
	else if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, *cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, *cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, *cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && *cp < 0x800) || (*cp >= 0xd800 && *cp <= 0xdfff) ||
	    (n == 4 && (*cp < 0x10000 || *cp > 0x10ffff)))
		return 0;
	return n;
}

/*
 * The length of the UTF-8 sequence at @s if it encodes a character beyond
 * ASCII that is not a C1 control (U+0080 to U+009F, which terminals may take
 * for escape sequences), or 0 if it does not.
 */
size_t utf8_printable(const unsigned char *s)
{
	uint32_t cp;
	size_t n = utf8_decode(s, &cp);

	return n && cp > 0x9f ? n : 0;
}

/*
 * The columns @s takes on a terminal: its bytes, or where @utf8, the widths
 * of its characters (wcwidth(3): two for most of East Asia's).
 */
static int text_columns(const char *s, bool utf8)
{
	const unsigned char *p = (const unsigned char *)s;
	int cols = 0, w;
	uint32_t cp;
	size_t n;

	if (!utf8)
		return strlen(s);
	for (; *p; p += n) {
		n = utf8_decode(p, &cp);
		w = n ? wcwidth(cp) : 1;
		cols += w < 0 ? 1 : w;
		if (!n)
			n = 1;
	}
	return cols;
}

/*
 * @s, at most @size - 1 bytes of it, for a terminal: as ps(1) shows a
 * command name, a control byte becomes '?'. Any thread can name itself
 * what it likes (PR_SET_NAME), escape sequences and newlines included, and
 * C1 controls too, which an 8-bit terminal obeys raw and some UTF-8 ones
 * encoded: a byte above ASCII stays only in a character of a UTF-8 output
 * (@utf8) that is not one, else it becomes '?' too.
 */
static char *printable(char *buf, size_t size, const char *s, bool utf8)
{
	unsigned char *p;
	size_t n;

	snprintf(buf, size, "%s", s);
	for (p = (unsigned char *)buf; *p; p += n) {
		n = utf8 && *p >= 0x80 ? utf8_printable(p) : 0;
		if (!n) {
			if (*p < 0x20 || *p >= 0x7f)
				*p = '?';
			n = 1;
		}
	}
	return buf;
}

static void text_title(FILE *f, const struct rc_record *r, const struct out_opts *o)
{
	char comm[sizeof(r->comm)];

	printable(comm, sizeof(comm), r->comm, o->utf8);
	if (r->is_exit)
		fprintf(f, "exit of ");
	switch (r->type) {
	case RC_THREAD:
		fprintf(f, "thread %u (%s) of process %u", r->pid, comm, r->tgid);
		if (r->has_parent_tgid)
			fprintf(f, ", parent %u", r->parent_tgid);
		break;
	case RC_PROCESS:
		fprintf(f, "process %u (%s), all threads", r->tgid, comm);
		if (r->has_parent_tgid)
			fprintf(f, ", parent %u", r->parent_tgid);
		break;
	case RC_CPU:
		fprintf(f, "cpu %u (%s)", r->cpu,
			r->usage.has_kind ? rc_kind_name(r->usage.kind) : "unknown kind");
		break;
	}
	if (r->is_exit)
		fprintf(f, ": exit code %#x", r->exit_code);
	fputc('\n', f);
}

void out_text_record(FILE *f, const struct rc_record *r, const struct ts_shown *ts,
		     const struct out_opts *o)
{
	text_title(f, r, o);
	if (r->has_usage)
		text_usage(f, &r->usage, r->energy_source);
	if (r->has_exited) {
		fprintf(f, " of which exited threads:\n");
		text_usage(f, &r->exited, r->energy_source);
	}
	if (r->nr_kinds)
		text_per_kind(f, r);
	if (r->runtime.has)
		text_runtime(f, "waited for", r, &r->runtime, o, true);
	if (r->exited_runtime.has)
		text_runtime(f, " exited", r, &r->exited_runtime, o, false);
	if (r->has_children) {
		struct rc_value user = rc_sum(&r->usage.user_ns, &r->children.user_ns);
		struct rc_value kernel = rc_sum(&r->usage.kernel_ns, &r->children.kernel_ns);
		struct rc_value total = rc_sum(&user, &kernel);
		char a[32], b[32], c[32];

		fprintf(f, " reaped children, and theirs (not in the above):\n");
		text_usage(f, &r->children, r->energy_source);
		/* What time(1) says of a command: itself and its children. */
		if (r->has_usage)
			fprintf(f, "  %-13s %16s %16s %16s\n", "with them",
				fmt_seconds(a, sizeof(a), &user),
				fmt_seconds(b, sizeof(b), &kernel),
				fmt_seconds(c, sizeof(c), &total));
	}
	if (r->children_runtime.has)
		text_runtime(f, " children", r, &r->children_runtime, o, false);
	if (r->runtime_struct_len)
		text_runtime_struct(f, r, o->runtime_version);
	if (ts && ts->what)
		out_text_taskstats(f, ts);
	text_withheld(f, r->withheld);
	if (o->verbose)
		text_unsupported(f, r->metrics);
	if (r->has_flags && (r->flags & RECOUNT_FLAGS_DISABLED))
		fprintf(f, "  (recount is off, sysctl kernel.recount=0: values are frozen)\n");
}

/* --- taskstats --- */

struct ts_delay {
	const char *name, *what;
	size_t count, total;
};

#define TS_DELAY(n, w, c, t) { n, w, offsetof(struct taskstats, c), offsetof(struct taskstats, t) }

static const struct ts_delay ts_delays[] = {
	TS_DELAY("cpu", "waiting for a CPU", cpu_count, cpu_delay_total),
	TS_DELAY("blkio", "block I/O", blkio_count, blkio_delay_total),
	TS_DELAY("swapin", "swapping in", swapin_count, swapin_delay_total),
	TS_DELAY("freepages", "reclaiming memory", freepages_count, freepages_delay_total),
	TS_DELAY("thrashing", "thrashing", thrashing_count, thrashing_delay_total),
	TS_DELAY("compact", "compacting memory", compact_count, compact_delay_total),
	TS_DELAY("wpcopy", "copying on write", wpcopy_count, wpcopy_delay_total),
	TS_DELAY("irq", "in IRQ/softirq", irq_count, irq_delay_total),
};

static uint64_t ts_field(const struct taskstats *s, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)s + off, sizeof(v));
	return v;
}

void out_text_taskstats(FILE *f, const struct ts_shown *ts)
{
	const struct taskstats *s;
	size_t i;

	if (!ts->rec) {
		fprintf(f, "  taskstats: %s\n", ts->why);
		return;
	}
	s = &ts->rec->stats;
	if (ts->what & TS_DELAYS) {
		fprintf(f, "  %-13s %16s %16s %16s%s\n", "delays", "count", "total", "average",
			ts->delayacct_off ? "  (delay accounting is off: kernel.task_delayacct=0)"
					  : "");
		for (i = 0; i < ARRAY_SIZE(ts_delays); i++) {
			uint64_t n = ts_field(s, ts_delays[i].count);
			struct rc_value total = { true, ts_field(s, ts_delays[i].total) };
			struct rc_value avg = { n > 0, n ? total.v / n : 0 };
			char a[32], b[32];

			fmt_duration(a, sizeof(a), &total);
			fmt_duration(b, sizeof(b), &avg);
			fprintf(f, "    %-11s %16llu %16s %16s  %s\n", ts_delays[i].name,
				(unsigned long long)n, a, b, ts_delays[i].what);
		}
	}
	if (ts->what & TS_IO) {
		fprintf(f, "  %-13s %16s %16s\n", "I/O", "read", "written");
		fprintf(f, "    %-11s %16llu %16llu\n", "bytes", (unsigned long long)s->read_char,
			(unsigned long long)s->write_char);
		fprintf(f, "    %-11s %16llu %16llu\n", "syscalls",
			(unsigned long long)s->read_syscalls,
			(unsigned long long)s->write_syscalls);
		fprintf(f, "    %-11s %16llu %16llu  (cancelled %llu)\n", "storage",
			(unsigned long long)s->read_bytes, (unsigned long long)s->write_bytes,
			(unsigned long long)s->cancelled_write_bytes);
	}
	if (ts->what & TS_CSW_MEM) {
		fprintf(f, "  %-13s %16s %16s\n", "switches", "voluntary", "involuntary");
		fprintf(f, "  %-13s %16llu %16llu\n", "", (unsigned long long)s->nvcsw,
			(unsigned long long)s->nivcsw);
		fprintf(f, "  %-13s %16s %16s %16s %16s\n", "memory", "peak RSS", "peak VM",
			"RSS MB-us", "VM MB-us");
		fprintf(f, "  %-13s %13llu KiB %13llu KiB %16llu %16llu\n", "",
			(unsigned long long)s->hiwater_rss, (unsigned long long)s->hiwater_vm,
			(unsigned long long)s->coremem, (unsigned long long)s->virtmem);
	}
}

/* --- JSON --- */

/* A JSON writer: commas and nesting. */
struct json {
	FILE *f;
	int depth;
	bool more[16];
};

static void json_key(struct json *j, const char *key)
{
	if (j->more[j->depth])
		fputc(',', j->f);
	j->more[j->depth] = true;
	if (key)
		fprintf(j->f, "\"%s\":", key);
}

static void json_open(struct json *j, const char *key, char c)
{
	json_key(j, key);
	fputc(c, j->f);
	j->more[++j->depth] = false;
}

static void json_close(struct json *j, char c)
{
	fputc(c, j->f);
	j->depth--;
}

static void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

static void json_null(struct json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->f);
}

static void json_value(struct json *j, const char *key, const struct rc_value *v)
{
	if (v->has)
		json_u64(j, key, v->v);
	else
		json_null(j, key);
}

static void json_double(struct json *j, const char *key, bool has, double v)
{
	if (!has) {
		json_null(j, key);
		return;
	}
	json_key(j, key);
	fprintf(j->f, "%.6g", v);
}

static void json_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

/*
 * A JSON string is UTF-8, a command name any bytes: its characters stay,
 * controls (C0, DEL, C1) are escaped, and a byte that is no character
 * becomes U+FFFD, the replacement character.
 */
static void json_str(struct json *j, const char *key, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	size_t n;

	json_key(j, key);
	fputc('"', j->f);
	for (; *p; p += n) {
		n = utf8_decode(p, &cp);
		if (!n) {
			fputs("\\ufffd", j->f);
			n = 1;
		} else if (cp == '"' || cp == '\\') {
			fprintf(j->f, "\\%c", (int)cp);
		} else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
			fprintf(j->f, "\\u%04x", (unsigned int)cp);
		} else {
			fwrite(p, 1, n, j->f);
		}
	}
	fputc('"', j->f);
}

static void json_cpi(struct json *j, const char *key, const struct rc_value *cycles,
		     const struct rc_value *instructions)
{
	double cpi = 0;
	bool has = rc_cpi(cycles, instructions, &cpi);

	json_double(j, key, has, cpi);
}

static void json_usage(struct json *j, const struct rc_usage *u, bool cpu)
{
	struct rc_value cycles = rc_sum(&u->user_cycles, &u->kernel_cycles);
	struct rc_value instructions = rc_sum(&u->user_instructions, &u->kernel_instructions);
	struct rc_value total = rc_sum(&u->user_ns, &u->kernel_ns);
	static const struct {
		uint32_t bit;
		const char *name;
	} inexact[] = {
		{ RECOUNT_INEXACT_CYCLES, "cycles" },
		{ RECOUNT_INEXACT_INSTRUCTIONS, "instructions" },
	};
	double watts = 0;
	bool has_power = rc_power(u, &watts);
	size_t i;
	int e;

	json_value(j, "user_time_ns", &u->user_ns);
	json_value(j, "kernel_time_ns", &u->kernel_ns);
	json_value(j, "time_ns", &total);
	json_value(j, "user_cycles", &u->user_cycles);
	json_value(j, "kernel_cycles", &u->kernel_cycles);
	json_value(j, "cycles", &cycles);
	json_value(j, "user_instructions", &u->user_instructions);
	json_value(j, "kernel_instructions", &u->kernel_instructions);
	json_value(j, "instructions", &instructions);
	json_cpi(j, "user_cpi", &u->user_cycles, &u->user_instructions);
	json_cpi(j, "kernel_cpi", &u->kernel_cycles, &u->kernel_instructions);
	json_cpi(j, "cpi", &cycles, &instructions);
	json_value(j, "energy_nj", &u->energy_nj);
	json_double(j, "power_w", has_power, watts);
	if (cpu) {
		json_value(j, "idle_time_ns", &u->idle_ns);
		json_value(j, "idle_energy_nj", &u->idle_energy_nj);
		json_value(j, "idle_irq_time_ns", &u->idle_irq_ns);
	}
	if (events.nr) {
		json_open(j, "events", '[');
		for (e = 0; e < events.nr; e++) {
			struct rc_value t = rc_event_total(u, e);

			json_open(j, NULL, '{');
			json_str(j, "name", events.name[e]);
			json_str(j, "mode", event_mode_name(events.ev[e].mode));
			json_value(j, "user", &u->event_user[e]);
			json_value(j, "kernel", &u->event_kernel[e]);
			json_value(j, "total", &t);
			json_bool(j, "inexact", u->inexact & (RECOUNT_INEXACT_EVENT_0 << e));
			json_close(j, '}');
		}
		json_close(j, ']');
	}
	json_open(j, "inexact", '[');
	for (i = 0; i < ARRAY_SIZE(inexact); i++)
		if (u->inexact & inexact[i].bit)
			json_str(j, NULL, inexact[i].name);
	for (e = 0; e < events.nr; e++)
		if (u->inexact & (RECOUNT_INEXACT_EVENT_0 << e))
			json_str(j, NULL, events.name[e]);
	json_close(j, ']');
}

/*
 * A runtime; its longest waits only where @max_known has their bit: an
 * interval knows its longest wait only when the task's longest ended in it.
 */
static void json_runtime(struct json *j, const char *key, const struct rc_runtime *rt,
			 unsigned int max_known)
{
	static const char *const waits[] = {
		[RC_WAIT_QUEUE] = "queue", [RC_WAIT_FAULT] = "page_fault",
		[RC_WAIT_LOCK] = "lock_contention",
	};
	int i;

	if (!rt->has) {
		json_null(j, key);
		return;
	}
	json_open(j, key, '{');
	json_u64(j, "cpu_time_ns", rt->cpu_ns);
	json_u64(j, "queue_time_ns", rt->queue_ns);
	json_u64(j, "page_fault_time_ns", rt->fault_ns);
	json_u64(j, "lock_contention_time_ns", rt->lock_ns);
	for (i = 0; i < RC_NR_WAITS; i++) {
		const struct rc_wait_stats *w = &rt->wait[i];
		struct rc_value v[] = {
			{ rt->has_waits, w->count },
			{ rt->has_waits && (max_known & 1u << i), w->max_ns },
			{ rt->has_waits && (max_known & 1u << i), w->max_at_ns },
		};
		static const char *const suffix[] = { "count", "max_ns", "max_time_ns" };
		char key[40];
		size_t k;

		for (k = 0; k < ARRAY_SIZE(v); k++) {
			snprintf(key, sizeof(key), "%s_%s", waits[i], suffix[k]);
			json_value(j, key, &v[k]);
		}
	}
	json_close(j, '}');
}

static void json_shares(struct json *j, const struct rc_record *r, const struct out_opts *o)
{
	static const char *const keys[] = { "cpu", "queue", "page_fault", "lock_contention" };
	const uint64_t ns[] = { r->runtime.cpu_ns, r->runtime.queue_ns, r->runtime.fault_ns,
				r->runtime.lock_ns };
	double share;
	size_t i;

	if (!r->runtime.has || !rc_share(r, o->now, 0, &share)) {
		json_null(j, "shares");
		return;
	}
	json_open(j, "shares", '{');
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		rc_share(r, o->now, ns[i], &share);
		json_double(j, keys[i], true, share);
	}
	json_close(j, '}');
}

static void json_taskstats(struct json *j, const struct ts_shown *ts)
{
	const struct taskstats *s;
	size_t i;

	json_open(j, "taskstats", '{');
	if (!ts->rec) {
		json_str(j, "error", ts->why);
		json_close(j, '}');
		return;
	}
	s = &ts->rec->stats;
	json_u64(j, "version", ts->rec->version);
	if (ts->what & TS_DELAYS) {
		json_bool(j, "delay_accounting", !ts->delayacct_off);
		json_open(j, "delays", '{');
		for (i = 0; i < ARRAY_SIZE(ts_delays); i++) {
			json_open(j, ts_delays[i].name, '{');
			json_u64(j, "count", ts_field(s, ts_delays[i].count));
			json_u64(j, "total_ns", ts_field(s, ts_delays[i].total));
			json_close(j, '}');
		}
		json_close(j, '}');
	}
	if (ts->what & TS_IO) {
		json_open(j, "io", '{');
		json_u64(j, "read_char", s->read_char);
		json_u64(j, "write_char", s->write_char);
		json_u64(j, "read_syscalls", s->read_syscalls);
		json_u64(j, "write_syscalls", s->write_syscalls);
		json_u64(j, "read_bytes", s->read_bytes);
		json_u64(j, "write_bytes", s->write_bytes);
		json_u64(j, "cancelled_write_bytes", s->cancelled_write_bytes);
		json_close(j, '}');
	}
	if (ts->what & TS_CSW_MEM) {
		json_open(j, "context_switches", '{');
		json_u64(j, "voluntary", s->nvcsw);
		json_u64(j, "involuntary", s->nivcsw);
		json_close(j, '}');
		json_open(j, "memory", '{');
		json_u64(j, "hiwater_rss_kib", s->hiwater_rss);
		json_u64(j, "hiwater_vm_kib", s->hiwater_vm);
		json_u64(j, "coremem_mb_us", s->coremem);
		json_u64(j, "virtmem_mb_us", s->virtmem);
		json_close(j, '}');
	}
	json_close(j, '}');
}

static void json_interval(struct json *j, const struct rc_record *r, const struct out_opts *o);

void out_json_record(FILE *f, const struct rc_record *r, const struct ts_shown *ts,
		     const struct out_opts *o)
{
	struct json j = { .f = f };
	int i, n;

	json_open(&j, NULL, '{');
	json_str(&j, "type", type_name(r->type));
	if (r->type == RC_CPU) {
		json_u64(&j, "cpu", r->cpu);
		json_str(&j, "kind", r->usage.has_kind ? rc_kind_name(r->usage.kind) : "unknown");
	} else {
		if (r->type == RC_THREAD)
			json_u64(&j, "pid", r->pid);
		json_u64(&j, "tgid", r->tgid);
		json_str(&j, "comm", r->comm);
		json_value(&j, "start_time_ns", &r->start_time);
		json_value(&j, "parent_tgid",
			   &(struct rc_value){ r->has_parent_tgid, r->parent_tgid });
	}
	json_bool(&j, "disabled", r->has_flags && (r->flags & RECOUNT_FLAGS_DISABLED));
	if (r->is_exit) {
		json_open(&j, "exit", '{');
		json_u64(&j, "code", r->exit_code);
		json_u64(&j, "time_ns", r->exit_time);
		json_u64(&j, "missed", r->missed);
		json_close(&j, '}');
	}
	json_str(&j, "energy_source", rc_energy_source_name(r->energy_source));
	json_open(&j, "withheld", '[');
	if (r->withheld & RECOUNT_WITHHELD_USER_PMU)
		json_str(&j, NULL, "user_pmu");
	if (r->withheld & RECOUNT_WITHHELD_KERNEL_PMU)
		json_str(&j, NULL, "kernel_pmu");
	json_close(&j, ']');
	json_usage(&j, &r->usage, r->type == RC_CPU);
	if (r->type != RC_CPU) {
		json_open(&j, "per_kind", '[');
		for (i = 0; i < r->nr_kinds; i++) {
			const struct rc_usage *u = &r->per_kind[i];

			json_open(&j, NULL, '{');
			json_str(&j, "kind", rc_kind_name(u->kind));
			json_usage(&j, u, false);
			json_close(&j, '}');
		}
		json_close(&j, ']');
		json_runtime(&j, "runtime", &r->runtime, r->iv.is ? r->iv.max_in : ~0u);
		/* Shares of its life; an interval's are in "interval". */
		if (!r->iv.is)
			json_shares(&j, r, o);
	}
	if (r->type == RC_PROCESS) {
		json_open(&j, "exited", '{');
		json_usage(&j, &r->exited, false);
		json_close(&j, '}');
		json_runtime(&j, "exited_runtime", &r->exited_runtime, r->iv.is ? 0 : ~0u);
		if (r->has_children) {
			json_open(&j, "children", '{');
			json_usage(&j, &r->children, false);
			json_close(&j, '}');
		} else {
			json_null(&j, "children");
		}
		json_runtime(&j, "children_runtime", &r->children_runtime, r->iv.is ? 0 : ~0u);
	}
	if (r->runtime_struct_len) {
		json_open(&j, "runtime_struct", '{');
		json_u64(&j, "version", o->runtime_version);
		json_u64(&j, "bytes", r->runtime_struct_len);
		n = r->runtime_struct_len / sizeof(uint64_t);
		for (i = 0; i < n && i < (int)ARRAY_SIZE(runtime_fields); i++) {
			char key[40];
			uint64_t v;

			memcpy(&v, r->runtime_struct + i * sizeof(v), sizeof(v));
			snprintf(key, sizeof(key), "%s%s", runtime_fields[i],
				 runtime_field_is_count(runtime_fields[i]) ? "" : "_ns");
			json_u64(&j, key, v);
		}
		json_close(&j, '}');
	}
	if (ts && ts->what)
		json_taskstats(&j, ts);
	if (r->iv.is)
		json_interval(&j, r, o);
	json_close(&j, '}');
	fputc('\n', f);
}

void out_info(FILE *f, const struct rc_info *info, const struct out_opts *o)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} metrics[] = {
		{ RECOUNT_METRIC_TIME, "time" },
		{ RECOUNT_METRIC_CYCLES, "cycles" },
		{ RECOUNT_METRIC_INSTRUCTIONS, "instructions" },
		{ RECOUNT_METRIC_ENERGY, "energy" },
		{ RECOUNT_METRIC_EVENTS, "events" },
	};
	struct json j = { .f = f };
	const char *sep = "";
	char name[32];
	size_t i;
	int k;

	if (!o->json) {
		fprintf(f, "recount is %s\n", info->flags & RECOUNT_FLAGS_DISABLED ? "off" : "on");
		fprintf(f, "  metrics:");
		for (i = 0; i < ARRAY_SIZE(metrics); i++, sep = ",")
			if (info->metrics & metrics[i].bit)
				fprintf(f, "%s %s", sep, metrics[i].name);
		fprintf(f, "\n  energy source: %s\n", rc_energy_source_name(info->energy_source));
		for (k = 0; k < info->nr_kinds; k++)
			fprintf(f, "  %s CPUs: %s\n", rc_kind_name(info->kind_cpus[k].kind),
				info->kind_cpus[k].cpus[0] ? info->kind_cpus[k].cpus : "none");
		fprintf(f, "  listeners: %u\n", info->listeners);
		fprintf(f, "  events:");
		for (k = 0, sep = ""; k < info->nr_events; k++, sep = ",")
			fprintf(f, "%s %s:%s", sep,
				event_name(name, sizeof(name), &info->events[k]),
				event_mode_name(info->events[k].mode));
		fprintf(f, "%s (generation %u, %u at most; %u PMU counters held)\n",
			info->nr_events ? "" : " none", info->event_gen, info->max_events,
			info->pmu_counters);
		return;
	}
	json_open(&j, NULL, '{');
	json_str(&j, "type", "info");
	json_bool(&j, "disabled", info->flags & RECOUNT_FLAGS_DISABLED);
	json_open(&j, "metrics", '[');
	for (i = 0; i < ARRAY_SIZE(metrics); i++)
		if (info->metrics & metrics[i].bit)
			json_str(&j, NULL, metrics[i].name);
	json_close(&j, ']');
	json_str(&j, "energy_source", rc_energy_source_name(info->energy_source));
	json_open(&j, "kinds", '{');
	for (k = 0; k < info->nr_kinds; k++)
		json_str(&j, rc_kind_name(info->kind_cpus[k].kind), info->kind_cpus[k].cpus);
	json_close(&j, '}');
	json_u64(&j, "listeners", info->listeners);
	json_open(&j, "events", '[');
	for (k = 0; k < info->nr_events; k++) {
		json_open(&j, NULL, '{');
		json_str(&j, "name", event_name(name, sizeof(name), &info->events[k]));
		json_u64(&j, "type", info->events[k].type);
		json_u64(&j, "config", info->events[k].config);
		json_str(&j, "mode", event_mode_name(info->events[k].mode));
		json_close(&j, '}');
	}
	json_close(&j, ']');
	json_u64(&j, "event_gen", info->event_gen);
	json_u64(&j, "max_events", info->max_events);
	json_u64(&j, "pmu_counters", info->pmu_counters);
	json_close(&j, '}');
	fputc('\n', f);
}

/* --- tables --- */

/*
 * What a column holds: how it prints, sorts and goes into CSV. A RATIO is a
 * share, printed in percent; a FACTOR a ratio of counts (CPI, IPC); a CLOCK
 * the wall-clock time at the end of an interval.
 */
enum col_type {
	COL_ID, COL_TEXT, COL_NS, COL_COUNT, COL_RATIO, COL_FACTOR, COL_ENERGY, COL_WATTS,
	COL_CLOCK,
};

struct column {
	const char *name;	/* for -s */
	const char *header;
	int width;
	enum col_type type;
	/* The value: an integer in *u, or a ratio in *d; false if absent. */
	bool (*get)(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d);
	const char *(*text)(const struct rc_record *r);
	unsigned int tables;	/* the tables it is in: BIT(enum table_kind) */
	/* A chosen event's count: 1 + 2 * its index + its level (0 user, 1 kernel). */
	int event;
};

static bool get_pid(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	*u = r->pid;
	return r->has_pid;
}

static bool get_tgid(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	*u = r->tgid;
	return r->has_tgid;
}

static bool get_cpu(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	*u = r->cpu;
	return r->has_cpu;
}

static bool get_code(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	*u = r->exit_code;
	return r->is_exit;
}

static bool get_value(const struct rc_value *v, uint64_t *u)
{
	*u = v->v;
	return v->has;
}

static bool get_time(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	struct rc_value t = rc_sum(&r->usage.user_ns, &r->usage.kernel_ns);

	return get_value(&t, u);
}

static bool get_user(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	return get_value(&r->usage.user_ns, u);
}

static bool get_kernel(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
		       double *d)
{
	return get_value(&r->usage.kernel_ns, u);
}

static bool get_idle(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	return get_value(&r->usage.idle_ns, u);
}

static bool get_idle_irq(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			 double *d)
{
	return get_value(&r->usage.idle_irq_ns, u);
}

static bool get_busy(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	struct rc_value t = rc_sum(&r->usage.user_ns, &r->usage.kernel_ns);
	struct rc_value all = rc_sum(&t, &r->usage.idle_ns);

	if (!all.has || !all.v)
		return false;
	*d = (double)t.v / all.v;
	return true;
}

static bool get_cycles(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
		       double *d)
{
	struct rc_value v = rc_sum(&r->usage.user_cycles, &r->usage.kernel_cycles);

	return get_value(&v, u);
}

static bool get_instructions(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			     double *d)
{
	struct rc_value v = rc_sum(&r->usage.user_instructions, &r->usage.kernel_instructions);

	return get_value(&v, u);
}

static bool get_cpi(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	struct rc_value c = rc_sum(&r->usage.user_cycles, &r->usage.kernel_cycles);
	struct rc_value i = rc_sum(&r->usage.user_instructions, &r->usage.kernel_instructions);

	return rc_cpi(&c, &i, d);
}

static bool get_queue(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	*u = r->runtime.queue_ns;
	return r->runtime.has;
}

static bool get_faults(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
		       double *d)
{
	*u = r->runtime.fault_ns;
	return r->runtime.has;
}

static bool get_locks(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	*u = r->runtime.lock_ns;
	return r->runtime.has;
}

/* The longest wait and the count of waits: absent from a kernel without them. */
static bool get_wait_max(const struct rc_record *r, enum rc_wait w, uint64_t *u)
{
	*u = r->runtime.wait[w].max_ns;
	return r->runtime.has && r->runtime.has_waits;
}

static bool get_wait_count(const struct rc_record *r, enum rc_wait w, uint64_t *u)
{
	*u = r->runtime.wait[w].count;
	return r->runtime.has && r->runtime.has_waits;
}

static bool get_queue_max(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			  double *d)
{
	return get_wait_max(r, RC_WAIT_QUEUE, u);
}

static bool get_fault_max(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			  double *d)
{
	return get_wait_max(r, RC_WAIT_FAULT, u);
}

static bool get_lock_max(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			 double *d)
{
	return get_wait_max(r, RC_WAIT_LOCK, u);
}

static bool get_queue_count(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			    double *d)
{
	return get_wait_count(r, RC_WAIT_QUEUE, u);
}

static bool get_fault_count(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			    double *d)
{
	return get_wait_count(r, RC_WAIT_FAULT, u);
}

static bool get_lock_count(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			   double *d)
{
	return get_wait_count(r, RC_WAIT_LOCK, u);
}

/* The CPU time of a process's reaped children. */
static bool get_children(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			 double *d)
{
	struct rc_value v = rc_sum(&r->children.user_ns, &r->children.kernel_ns);

	return r->has_children && get_value(&v, u);
}

static bool get_fault_share(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			    double *d)
{
	return r->runtime.has && rc_share(r, o->now, r->runtime.fault_ns, d);
}

static bool get_lock_share(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			   double *d)
{
	return r->runtime.has && rc_share(r, o->now, r->runtime.lock_ns, d);
}

static bool get_energy(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
		       double *d)
{
	return get_value(&r->usage.energy_nj, u);
}

static bool get_idle_energy(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			    double *d)
{
	return get_value(&r->usage.idle_energy_nj, u);
}

static bool get_power(const struct rc_record *r, const struct out_opts *o, uint64_t *u, double *d)
{
	return rc_power(&r->usage, d);
}

/* The count of chosen event @e at @level (0 user, 1 kernel), if it came. */
static bool get_event(const struct rc_record *r, int e, int level, uint64_t *u)
{
	const struct rc_value *v = level ? &r->usage.event_kernel[e] : &r->usage.event_user[e];

	*u = v->v;
	return v->has;
}

#define GET_EVENT(e, l)								\
static bool get_event##e##_##l(const struct rc_record *r, const struct out_opts *o,	\
			       uint64_t *u, double *d)				\
{										\
	return get_event(r, e, l, u);						\
}

GET_EVENT(0, 0)
GET_EVENT(0, 1)
GET_EVENT(1, 0)
GET_EVENT(1, 1)

static const char *text_comm(const struct rc_record *r)
{
	return r->comm;
}

static const char *text_kind(const struct rc_record *r)
{
	return r->usage.has_kind ? rc_kind_name(r->usage.kind) : "-";
}

static const char *text_type(const struct rc_record *r)
{
	return type_name(r->type);
}

#define BIT(n)		(1u << (n))
#define T_THREADS	BIT(TABLE_THREADS)
#define T_PROCESSES	BIT(TABLE_PROCESSES)
#define T_EXITS		BIT(TABLE_EXITS)
#define T_TASKS		(T_THREADS | T_PROCESSES | T_EXITS)
#define T_CPUS		BIT(TABLE_CPUS)
#define COL(n, h, w, t, g, in) { n, h, w, t, g, NULL, in, 0 }
#define TEXT(n, h, w, f, in) { n, h, w, COL_TEXT, NULL, f, in, 0 }
/* Shown where the event is chosen at that level, headed by its name. */
#define EVENT(e, l, level, in)							\
	{ "event" #e "-" level, "", 14, COL_COUNT, get_event##e##_##l, NULL, in, 1 + 2 * (e) + (l) }

/*
 * The columns of the task tables, in order; each is in the tables of its
 * mask. Those without a header sort but are not shown.
 */
static const struct column task_columns[] = {
	TEXT("type", "EXIT", -7, text_type, T_EXITS),
	COL("pid", "PID", 7, COL_ID, get_pid, T_THREADS | T_EXITS),
	COL("tgid", "TGID", 7, COL_ID, get_tgid, T_TASKS),
	TEXT("comm", "COMM", -16, text_comm, T_TASKS),
	COL("code", "CODE", 6, COL_ID, get_code, T_EXITS),
	COL("time", "TIME", 11, COL_NS, get_time, T_TASKS),
	COL("user", "USER", 11, COL_NS, get_user, T_TASKS),
	COL("kernel", "KERNEL", 11, COL_NS, get_kernel, T_TASKS),
	COL("cpi", "CPI", 6, COL_FACTOR, get_cpi, T_TASKS),
	COL("queue", "QUEUE", 11, COL_NS, get_queue, T_TASKS),
	COL("queue-max", "QUEUE-MAX", 11, COL_NS, get_queue_max, T_TASKS),
	COL("faults", "FAULTS", 11, COL_NS, get_faults, T_TASKS),
	COL("fault-max", "FAULT-MAX", 11, COL_NS, get_fault_max, T_TASKS),
	COL("fault%", "FAULT%", 6, COL_RATIO, get_fault_share, T_TASKS),
	COL("locks", "LOCKS", 11, COL_NS, get_locks, T_TASKS),
	COL("lock-max", "LOCK-MAX", 11, COL_NS, get_lock_max, T_TASKS),
	COL("lock%", "LOCK%", 6, COL_RATIO, get_lock_share, T_TASKS),
	COL("energy", "ENERGY", 11, COL_ENERGY, get_energy, T_TASKS),
	COL("power", "POWER", 8, COL_WATTS, get_power, T_TASKS),
	COL("children", "CHILDREN", 11, COL_NS, get_children, T_PROCESSES),
	EVENT(0, 0, "user", T_TASKS),
	EVENT(0, 1, "kernel", T_TASKS),
	EVENT(1, 0, "user", T_TASKS),
	EVENT(1, 1, "kernel", T_TASKS),
	COL("cycles", NULL, 0, COL_COUNT, get_cycles, T_TASKS),
	COL("instructions", NULL, 0, COL_COUNT, get_instructions, T_TASKS),
	COL("queue-count", NULL, 0, COL_COUNT, get_queue_count, T_TASKS),
	COL("fault-count", NULL, 0, COL_COUNT, get_fault_count, T_TASKS),
	COL("lock-count", NULL, 0, COL_COUNT, get_lock_count, T_TASKS),
	{}
};

static const struct column cpu_columns[] = {
	COL("cpu", "CPU", 4, COL_ID, get_cpu, T_CPUS),
	TEXT("kind", "KIND", -11, text_kind, T_CPUS),
	COL("user", "USER", 11, COL_NS, get_user, T_CPUS),
	COL("kernel", "KERNEL", 11, COL_NS, get_kernel, T_CPUS),
	COL("idle", "IDLE", 11, COL_NS, get_idle, T_CPUS),
	COL("idle-irq", "IDLE-IRQ", 11, COL_NS, get_idle_irq, T_CPUS),
	COL("busy%", "BUSY%", 6, COL_RATIO, get_busy, T_CPUS),
	COL("cpi", "CPI", 6, COL_FACTOR, get_cpi, T_CPUS),
	COL("energy", "ENERGY", 11, COL_ENERGY, get_energy, T_CPUS),
	COL("idle-energy", "IDLE-ENERGY", 11, COL_ENERGY, get_idle_energy, T_CPUS),
	COL("power", "POWER", 8, COL_WATTS, get_power, T_CPUS),
	EVENT(0, 0, "user", T_CPUS),
	EVENT(0, 1, "kernel", T_CPUS),
	EVENT(1, 0, "user", T_CPUS),
	EVENT(1, 1, "kernel", T_CPUS),
	COL("cycles", NULL, 0, COL_COUNT, get_cycles, T_CPUS),
	COL("instructions", NULL, 0, COL_COUNT, get_instructions, T_CPUS),
	{}
};

/* --- the columns of intervals: shares of the part of it the task lived --- */

static bool iv_share(const struct rc_record *r, const struct rc_value *v, double *d)
{
	if (!v->has || !r->iv.span_ns)
		return false;
	*d = (double)v->v / r->iv.span_ns;
	return true;
}

static bool get_clock(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
		      double *d)
{
	*u = r->iv.wall_ns;
	return r->iv.is;
}

static bool get_cpu_share(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			  double *d)
{
	struct rc_value t = rc_sum(&r->usage.user_ns, &r->usage.kernel_ns);

	return iv_share(r, &t, d);
}

static bool get_user_share(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			   double *d)
{
	return iv_share(r, &r->usage.user_ns, d);
}

static bool get_kernel_share(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			     double *d)
{
	return iv_share(r, &r->usage.kernel_ns, d);
}

static bool get_idle_share(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			   double *d)
{
	return iv_share(r, &r->usage.idle_ns, d);
}

/* Instructions per cycle, as perf stat prints them. */
static bool get_ipc_user(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			 double *d)
{
	return rc_cpi(&r->usage.user_instructions, &r->usage.user_cycles, d);
}

static bool get_ipc_kernel(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			   double *d)
{
	return rc_cpi(&r->usage.kernel_instructions, &r->usage.kernel_cycles, d);
}

static bool get_wait_share(const struct rc_record *r, uint64_t ns, double *d)
{
	struct rc_value v = { r->runtime.has, ns };

	return iv_share(r, &v, d);
}

static bool get_queue_share(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			    double *d)
{
	return get_wait_share(r, r->runtime.queue_ns, d);
}

static bool get_iv_fault_share(const struct rc_record *r, const struct out_opts *o,
			       uint64_t *u, double *d)
{
	return get_wait_share(r, r->runtime.fault_ns, d);
}

static bool get_iv_lock_share(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			      double *d)
{
	return get_wait_share(r, r->runtime.lock_ns, d);
}

/* The longest wait that ended in the interval, of any kind, if one did. */
static bool get_longest(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			double *d)
{
	int w;

	*u = 0;
	for (w = 0; w < RC_NR_WAITS; w++)
		if ((r->iv.max_in & (1 << w)) && r->runtime.wait[w].max_ns > *u)
			*u = r->runtime.wait[w].max_ns;
	return r->runtime.has && r->runtime.has_waits && r->iv.max_in;
}

static bool get_iv_max(const struct rc_record *r, enum rc_wait w, uint64_t *u)
{
	*u = r->runtime.wait[w].max_ns;
	return r->runtime.has && (r->iv.max_in & (1 << w));
}

static bool get_iv_queue_max(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			     double *d)
{
	return get_iv_max(r, RC_WAIT_QUEUE, u);
}

static bool get_iv_fault_max(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			     double *d)
{
	return get_iv_max(r, RC_WAIT_FAULT, u);
}

static bool get_iv_lock_max(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			    double *d)
{
	return get_iv_max(r, RC_WAIT_LOCK, u);
}

/* A CPU's power over the interval: busy and idle energy over its length. */
static bool get_iv_power(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
			 double *d)
{
	struct rc_value e = rc_sum(&r->usage.energy_nj, &r->usage.idle_energy_nj);

	return iv_share(r, &e, d);
}

static bool get_span(const struct rc_record *r, const struct out_opts *o, uint64_t *u,
		     double *d)
{
	*u = r->iv.span_ns;
	return r->iv.is;
}

static const char *text_state(const struct rc_record *r)
{
	switch (r->iv.state & (RC_IV_BEGAN | RC_IV_EXITED)) {
	case RC_IV_BEGAN:
		return "began";
	case RC_IV_EXITED:
		return "exited";
	case RC_IV_BEGAN | RC_IV_EXITED:
		return "began,exited";
	default:
		return "";
	}
}

#define T_THREADS_IV	BIT(TABLE_THREADS_IV)
#define T_TASKS_IV	(T_THREADS_IV | BIT(TABLE_PROCESSES_IV))
#define T_CPUS_IV	BIT(TABLE_CPUS_IV)
#define T_IV		(T_TASKS_IV | T_CPUS_IV)

/*
 * The columns of interval tables. Shares are of the part of the interval the
 * task lived (a process's CPU share is the sum of its threads': above 100%
 * on several CPUs, as pidstat prints it).
 */
static const struct column iv_columns[] = {
	COL("clock", "CLOCK", 8, COL_CLOCK, get_clock, T_IV),
	COL("pid", "PID", 7, COL_ID, get_pid, T_THREADS_IV),
	COL("tgid", "TGID", 7, COL_ID, get_tgid, T_TASKS_IV),
	TEXT("comm", "COMM", -16, text_comm, T_TASKS_IV),
	COL("cpu", "CPU", 4, COL_ID, get_cpu, T_CPUS_IV),
	TEXT("kind", "KIND", -11, text_kind, T_CPUS_IV),
	COL("cpu%", "CPU%", 6, COL_RATIO, get_cpu_share, T_TASKS_IV),
	COL("user%", "USER%", 6, COL_RATIO, get_user_share, T_IV),
	COL("kernel%", "KERNEL%", 7, COL_RATIO, get_kernel_share, T_IV),
	COL("idle%", "IDLE%", 6, COL_RATIO, get_idle_share, T_CPUS_IV),
	COL("ipc-user", "IPC-U", 6, COL_FACTOR, get_ipc_user, T_IV),
	COL("ipc-kernel", "IPC-K", 6, COL_FACTOR, get_ipc_kernel, T_IV),
	COL("queue%", "QUEUE%", 6, COL_RATIO, get_queue_share, T_TASKS_IV),
	COL("fault%", "FAULT%", 6, COL_RATIO, get_iv_fault_share, T_TASKS_IV),
	COL("lock%", "LOCK%", 6, COL_RATIO, get_iv_lock_share, T_TASKS_IV),
	COL("longest", "LONGEST", 11, COL_NS, get_longest, T_TASKS_IV),
	COL("power", "POWER", 8, COL_WATTS, get_iv_power, T_CPUS_IV),
	TEXT("state", "STATE", -12, text_state, T_TASKS_IV),
	COL("time", NULL, 0, COL_NS, get_time, T_IV),
	COL("user", NULL, 0, COL_NS, get_user, T_IV),
	COL("kernel", NULL, 0, COL_NS, get_kernel, T_IV),
	COL("idle", NULL, 0, COL_NS, get_idle, T_CPUS_IV),
	COL("idle-irq", NULL, 0, COL_NS, get_idle_irq, T_CPUS_IV),
	COL("cycles", NULL, 0, COL_COUNT, get_cycles, T_IV),
	COL("instructions", NULL, 0, COL_COUNT, get_instructions, T_IV),
	COL("energy", NULL, 0, COL_ENERGY, get_energy, T_IV),
	COL("idle-energy", NULL, 0, COL_ENERGY, get_idle_energy, T_CPUS_IV),
	COL("queue", NULL, 0, COL_NS, get_queue, T_TASKS_IV),
	COL("faults", NULL, 0, COL_NS, get_faults, T_TASKS_IV),
	COL("locks", NULL, 0, COL_NS, get_locks, T_TASKS_IV),
	COL("queue-count", NULL, 0, COL_COUNT, get_queue_count, T_TASKS_IV),
	COL("fault-count", NULL, 0, COL_COUNT, get_fault_count, T_TASKS_IV),
	COL("lock-count", NULL, 0, COL_COUNT, get_lock_count, T_TASKS_IV),
	COL("queue-max", NULL, 0, COL_NS, get_iv_queue_max, T_TASKS_IV),
	COL("fault-max", NULL, 0, COL_NS, get_iv_fault_max, T_TASKS_IV),
	COL("lock-max", NULL, 0, COL_NS, get_iv_lock_max, T_TASKS_IV),
	COL("span", NULL, 0, COL_NS, get_span, T_IV),
	{}
};

int table_interval(enum table_kind kind)
{
	return kind == TABLE_CPUS ? TABLE_CPUS_IV :
	       kind == TABLE_THREADS ? TABLE_THREADS_IV : TABLE_PROCESSES_IV;
}

bool table_is_interval(enum table_kind kind)
{
	return kind >= TABLE_THREADS_IV;
}

static const struct column *columns_of(enum table_kind kind)
{
	if (table_is_interval(kind))
		return iv_columns;
	return kind == TABLE_CPUS ? cpu_columns : task_columns;
}

/* Whether column @c is in the table of @kind. */
static bool in_table(const struct column *c, enum table_kind kind)
{
	return c->tables & BIT(kind);
}

int table_column(enum table_kind kind, const char *name)
{
	const struct column *c = columns_of(kind);
	int i;

	for (i = 0; c[i].name; i++)
		if (in_table(&c[i], kind) && !strcmp(c[i].name, name))
			return i;
	return -1;
}

const char *table_column_names(enum table_kind kind, char *buf, size_t size)
{
	const struct column *c = columns_of(kind);
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; c[i].name && len < size; i++)
		if (in_table(&c[i], kind))
			len += snprintf(buf + len, size - len, "%s%s", len ? ", " : "", c[i].name);
	return buf;
}

const char *table_column_name(enum table_kind kind, int col)
{
	return columns_of(kind)[col].name;
}

int table_default_sort(enum table_kind kind)
{
	if (kind == TABLE_CPUS || kind == TABLE_CPUS_IV)
		return table_column(kind, "cpu");
	return table_column(kind, table_is_interval(kind) ? "cpu%" : "time");
}

/* qsort() has no context argument: the sort's, for the comparison. */
static struct {
	const struct column *col;
	const struct out_opts *o;
} sort_ctx;

static int compare(const void *pa, const void *pb)
{
	const struct rc_record *a = pa, *b = pb;
	const struct column *c = sort_ctx.col;
	uint64_t ua = 0, ub = 0;
	double da = 0, db = 0;
	bool ha, hb;
	int sign;

	if (c->type == COL_TEXT)
		return strcmp(c->text(a), c->text(b));
	ha = c->get(a, sort_ctx.o, &ua, &da);
	hb = c->get(b, sort_ctx.o, &ub, &db);
	/* Rows without the value go last. */
	if (ha != hb)
		return ha ? -1 : 1;
	/* Ids ascending, figures largest first. */
	sign = c->type == COL_ID ? 1 : -1;
	if (c->type == COL_RATIO || c->type == COL_FACTOR || c->type == COL_WATTS)
		return da < db ? -sign : da > db ? sign : 0;
	return ua < ub ? -sign : ua > ub ? sign : 0;
}

void table_sort(enum table_kind kind, struct rc_record *recs, int n, int col,
		const struct out_opts *o)
{
	sort_ctx.col = &columns_of(kind)[col];
	sort_ctx.o = o;
	qsort(recs, n, sizeof(*recs), compare);
}

/* A line of a table, without the padding of a last column aligned left. */
static void table_line(FILE *f, char *line, size_t len)
{
	while (len && line[len - 1] == ' ')
		len--;
	fprintf(f, "%.*s\n", (int)len, line);
}

/* Is @c printed in tables: it has a header, and an event column its event? */
static bool col_shown(const struct column *c, enum table_kind kind)
{
	int e = (c->event - 1) / 2;

	if (!c->header || !in_table(c, kind))
		return false;
	return !c->event || (e < events.nr && (events.ev[e].mode & (1 << (c->event - 1) % 2)));
}

/* An event column's header: the event's name and level, upper case. */
static const char *col_header(char *buf, size_t size, const struct column *c)
{
	int e = (c->event - 1) / 2, i;

	if (!c->event)
		return c->header;
	snprintf(buf, size, "%.*s-%c", c->width - 2, events.name[e],
		 (c->event - 1) % 2 ? 'K' : 'U');
	/* ASCII only: toupper() follows LC_CTYPE, and 'i' is not 'I' in Turkish. */
	for (i = 0; buf[i]; i++)
		if (buf[i] >= 'a' && buf[i] <= 'z')
			buf[i] -= 'a' - 'A';
	return buf;
}

void table_header(FILE *f, enum table_kind kind)
{
	const struct column *c = columns_of(kind);
	char line[512], buf[32];
	size_t len = 0;
	int i;

	for (i = 0; c[i].name; i++) {
		if (!col_shown(&c[i], kind) || len >= sizeof(line))
			continue;
		len += snprintf(line + len, sizeof(line) - len, "%s%*s", len ? " " : "",
				c[i].width, col_header(buf, sizeof(buf), &c[i]));
	}
	table_line(f, line, len < sizeof(line) ? len : sizeof(line) - 1);
}

/* A column's value of @r as the tables print it, "-" when absent. */
static const char *col_text(char *buf, size_t size, const struct column *c,
			    const struct rc_record *r, const struct out_opts *o)
{
	struct rc_value v = {};
	double d = 0;
	time_t t;

	if (c->type == COL_TEXT)
		return printable(buf, size < 17 ? size : 17, c->text(r), o->utf8);
	v.has = c->get(r, o, &v.v, &d);
	switch (c->type) {
	case COL_ID:
		return fmt_raw(buf, size, &v);
	case COL_NS:
		return fmt_duration(buf, size, &v);
	case COL_COUNT:
		return fmt_count(buf, size, &v);
	case COL_ENERGY:
		return fmt_energy(buf, size, &v);
	case COL_RATIO:
		return fmt_ratio(buf, size, v.has, d * 100, "%.1f");
	case COL_FACTOR:
		return fmt_ratio(buf, size, v.has, d, "%.2f");
	case COL_WATTS:
		return fmt_ratio(buf, size, v.has, d, "%.3f W");
	case COL_CLOCK:
		t = v.v / NSEC_PER_SEC;
		if (!v.has || !strftime(buf, size, "%H:%M:%S", localtime(&t)))
			snprintf(buf, size, "-");
		return buf;
	default:
		return "";
	}
}

void table_row(FILE *f, enum table_kind kind, const struct rc_record *r,
	       const struct out_opts *o)
{
	const struct column *c = columns_of(kind);
	char line[512];
	size_t len = 0;
	int i;

	for (i = 0; c[i].name; i++) {
		int width = c[i].width, extra;
		const char *text;
		char buf[40];

		if (!col_shown(&c[i], kind) || len >= sizeof(line))
			continue;
		text = col_text(buf, sizeof(buf), &c[i], r, o);
		/* printf() pads to bytes: a command name's characters may take more. */
		if (c[i].type == COL_TEXT) {
			extra = (int)strlen(text) - text_columns(text, o->utf8);
			width += width < 0 ? -extra : extra;
		}
		len += snprintf(line + len, sizeof(line) - len, "%s%*s", len ? " " : "",
				width, text);
	}
	table_line(f, line, len < sizeof(line) ? len : sizeof(line) - 1);
}

/* --- CSV --- */

static void csv_text(FILE *f, const char *s, bool utf8)
{
	char buf[128];

	s = printable(buf, sizeof(buf), s, utf8);
	if (!s[strcspn(s, ",\"")]) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void csv_header(FILE *f, enum table_kind kind)
{
	const struct column *c = columns_of(kind);
	bool first = true;
	int i;

	for (i = 0; c[i].name; i++) {
		if (!in_table(&c[i], kind))
			continue;
		if (!first)
			fputc(',', f);
		csv_text(f, c[i].name, false);
		first = false;
	}
	fputc('\n', f);
}

void csv_row(FILE *f, enum table_kind kind, const struct rc_record *r,
	     const struct out_opts *o)
{
	const struct column *c = columns_of(kind);
	bool first = true;
	int i;

	for (i = 0; c[i].name; i++) {
		uint64_t u = 0;
		double d = 0;

		if (!in_table(&c[i], kind))
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		if (c[i].type == COL_TEXT) {
			csv_text(f, c[i].text(r), o->csv_utf8);
			continue;
		}
		if (!c[i].get(r, o, &u, &d))
			continue;
		switch (c[i].type) {
		case COL_RATIO:
			fprintf(f, "%.3f", d * 100);
			break;
		case COL_FACTOR:
		case COL_WATTS:
			fprintf(f, "%.6g", d);
			break;
		case COL_CLOCK:
			fprintf(f, "%llu.%03llu", (unsigned long long)(u / NSEC_PER_SEC),
				(unsigned long long)(u % NSEC_PER_SEC / 1000000));
			break;
		default:
			fprintf(f, "%llu", (unsigned long long)u);
			break;
		}
	}
	fputc('\n', f);
}

/*
 * An interval's record in JSON: its figures are the interval's, and the
 * "interval" object has its bounds and every column of its table, "cpu%"
 * as "cpu_percent", "ipc-user" as "ipc_user"; shares in percent.
 */
static void json_interval(struct json *j, const struct rc_record *r, const struct out_opts *o)
{
	enum table_kind kind = r->type == RC_CPU ? TABLE_CPUS_IV :
			       r->type == RC_THREAD ? TABLE_THREADS_IV : TABLE_PROCESSES_IV;
	const struct column *c = iv_columns;
	int i;

	json_open(j, "interval", '{');
	json_u64(j, "start_ns", r->iv.t0);
	json_u64(j, "end_ns", r->iv.t1);
	json_bool(j, "began", r->iv.state & RC_IV_BEGAN);
	json_bool(j, "exited", r->iv.state & RC_IV_EXITED);
	for (i = 0; c[i].name; i++) {
		char key[40];
		uint64_t u = 0;
		double d = 0;
		bool has;
		size_t k, n;

		if (!in_table(&c[i], kind) || c[i].type == COL_TEXT || c[i].type == COL_ID)
			continue;
		for (k = 0, n = 0; c[i].name[k] && n < sizeof(key) - 9; k++)
			if (c[i].name[k] == '%')
				n += sprintf(key + n, "_percent");
			else
				key[n++] = c[i].name[k] == '-' ? '_' : c[i].name[k];
		key[n] = '\0';
		if (c[i].type == COL_NS)
			strcat(key, "_ns");
		else if (c[i].type == COL_ENERGY)
			strcat(key, "_nj");
		else if (c[i].type == COL_WATTS)
			strcat(key, "_w");
		else if (c[i].type == COL_CLOCK)
			snprintf(key, sizeof(key), "clock_ns");
		has = c[i].get(r, o, &u, &d);
		if (c[i].type == COL_RATIO)
			json_double(j, key, has, d * 100);
		else if (c[i].type == COL_FACTOR || c[i].type == COL_WATTS)
			json_double(j, key, has, d);
		else if (has)
			json_u64(j, key, u);
		else
			json_null(j, key);
	}
	json_close(j, '}');
}
