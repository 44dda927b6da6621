// SPDX-License-Identifier: GPL-2.0
/*
 * getdelays --openmetrics: records in the OpenMetrics text format
 * (https://prometheus.io/docs/specs/om/open_metrics_spec/), with
 * Prometheus's naming: base units (seconds, joules), counters' samples end
 * in _total, one family per metric and type of record, its samples together.
 *
 * getdelays --prometheus: the same samples in Prometheus's text format
 * 0.0.4, which node_exporter's textfile collector reads: there a family is
 * named as its samples (a counter's with _total), with no UNIT and no EOF.
 * In it, OpenMetrics' counters would be read as untyped.
 *
 * The family names are an interface, listed in getdelays(8) and
 * Documentation/accounting/recount.rst: add families, never rename one.
 */
#define _GNU_SOURCE		/* open_memstream() */
#include <stdlib.h>
#include <string.h>

#include "output.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* One family: what it is, and the function that writes a record's samples. */
struct family {
	const char *name;	/* after recount_thread_, _process_ or _cpu_ */
	const char *type;	/* counter or gauge */
	const char *unit;	/* seconds, joules, or NULL */
	const char *help;
	unsigned int of;	/* BIT(enum rc_type) */
	void (*samples)(FILE *f, const char *name, const struct rc_record *r,
			const char *labels, int64_t realtime_off);
};

/*
 * A label value, escaped as the format says: backslash, quote, newline. The
 * format is UTF-8, a command name any bytes: its characters beyond ASCII
 * stay, a byte that is no character, or a control, becomes '?', so that no
 * name can make the whole text unreadable.
 */
static size_t label_value(char *buf, size_t size, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0, len;

	for (; *p; p += len) {
		len = *p >= 0x80 ? utf8_printable(p) : 0;
		if (n + (len ? len : 2) >= size)
			break;
		if (len) {
			memcpy(buf + n, p, len);
			n += len;
			continue;
		}
		len = 1;
		if (*p == '\\' || *p == '"') {
			buf[n++] = '\\';
			buf[n++] = *p;
		} else if (*p == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else {
			buf[n++] = *p < 0x20 || *p >= 0x7f ? '?' : *p;
		}
	}
	buf[n] = '\0';
	return n;
}

/*
 * The labels that say whose a sample is, as user space names them: a
 * thread's tid and its process's pid (the kernel's pid and tgid).
 */
static void labels_of(char *buf, size_t size, const struct rc_record *r)
{
	char comm[2 * sizeof(r->comm) + 1];

	label_value(comm, sizeof(comm), r->comm);
	switch (r->type) {
	case RC_THREAD:
		snprintf(buf, size, "tid=\"%u\",pid=\"%u\",comm=\"%s\"", r->pid, r->tgid, comm);
		break;
	case RC_PROCESS:
		snprintf(buf, size, "pid=\"%u\",comm=\"%s\"", r->tgid, comm);
		break;
	case RC_CPU:
		snprintf(buf, size, "cpu=\"%u\",kind=\"%s\"", r->cpu,
			 r->usage.has_kind ? rc_kind_name(r->usage.kind) : "unknown");
		break;
	}
}

/* Nanoseconds or nanojoules as seconds or joules, exactly. */
static void sample_nano(FILE *f, const char *name, const char *suffix, const char *labels,
			const char *extra, const struct rc_value *v)
{
	if (!v->has)
		return;
	fprintf(f, "%s%s{%s%s} %llu.%09llu\n", name, suffix, labels, extra,
		(unsigned long long)(v->v / 1000000000), (unsigned long long)(v->v % 1000000000));
}

static void sample_count(FILE *f, const char *name, const char *labels, const char *extra,
			 const struct rc_value *v)
{
	if (v->has)
		fprintf(f, "%s_total{%s%s} %llu\n", name, labels, extra, (unsigned long long)v->v);
}

static void cpu_seconds(FILE *f, const char *name, const struct rc_record *r,
			const char *labels, int64_t off)
{
	sample_nano(f, name, "_total", labels, ",mode=\"user\"", &r->usage.user_ns);
	sample_nano(f, name, "_total", labels, ",mode=\"kernel\"", &r->usage.kernel_ns);
	if (r->type == RC_CPU)
		sample_nano(f, name, "_total", labels, ",mode=\"idle\"", &r->usage.idle_ns);
}

static void idle_irq_seconds(FILE *f, const char *name, const struct rc_record *r,
			     const char *labels, int64_t off)
{
	sample_nano(f, name, "_total", labels, "", &r->usage.idle_irq_ns);
}

static void cycles(FILE *f, const char *name, const struct rc_record *r, const char *labels,
		   int64_t off)
{
	sample_count(f, name, labels, ",mode=\"user\"", &r->usage.user_cycles);
	sample_count(f, name, labels, ",mode=\"kernel\"", &r->usage.kernel_cycles);
}

static void instructions(FILE *f, const char *name, const struct rc_record *r,
			 const char *labels, int64_t off)
{
	sample_count(f, name, labels, ",mode=\"user\"", &r->usage.user_instructions);
	sample_count(f, name, labels, ",mode=\"kernel\"", &r->usage.kernel_instructions);
}

static void event_counts(FILE *f, const char *name, const struct rc_record *r,
			 const char *labels, int64_t off)
{
	char extra[96];
	int e;

	for (e = 0; out_event_name(e); e++) {
		snprintf(extra, sizeof(extra), ",event=\"%s\",mode=\"user\"", out_event_name(e));
		sample_count(f, name, labels, extra, &r->usage.event_user[e]);
		snprintf(extra, sizeof(extra), ",event=\"%s\",mode=\"kernel\"", out_event_name(e));
		sample_count(f, name, labels, extra, &r->usage.event_kernel[e]);
	}
}

static void energy(FILE *f, const char *name, const struct rc_record *r, const char *labels,
		   int64_t off)
{
	if (r->type != RC_CPU) {
		sample_nano(f, name, "_total", labels, "", &r->usage.energy_nj);
		return;
	}
	sample_nano(f, name, "_total", labels, ",state=\"busy\"", &r->usage.energy_nj);
	sample_nano(f, name, "_total", labels, ",state=\"idle\"", &r->usage.idle_energy_nj);
}

static const char *const wait_label[RC_NR_WAITS] = {
	[RC_WAIT_QUEUE] = ",wait=\"queue\"",
	[RC_WAIT_FAULT] = ",wait=\"page_fault\"",
	[RC_WAIT_LOCK] = ",wait=\"lock\"",
};

static void wait_seconds(FILE *f, const char *name, const struct rc_record *r,
			 const char *labels, int64_t off)
{
	const uint64_t ns[RC_NR_WAITS] = {
		r->runtime.queue_ns, r->runtime.fault_ns, r->runtime.lock_ns,
	};
	int w;

	for (w = 0; w < RC_NR_WAITS; w++)
		sample_nano(f, name, "_total", labels, wait_label[w],
			    &(struct rc_value){ r->runtime.has, ns[w] });
}

static void waits(FILE *f, const char *name, const struct rc_record *r, const char *labels,
		  int64_t off)
{
	bool has = r->runtime.has && r->runtime.has_waits;
	int w;

	for (w = 0; w < RC_NR_WAITS; w++)
		sample_count(f, name, labels, wait_label[w],
			     &(struct rc_value){ has, r->runtime.wait[w].count });
}

static void wait_longest(FILE *f, const char *name, const struct rc_record *r,
			 const char *labels, int64_t off)
{
	bool has = r->runtime.has && r->runtime.has_waits;
	int w;

	for (w = 0; w < RC_NR_WAITS; w++)
		sample_nano(f, name, "", labels, wait_label[w],
			    &(struct rc_value){ has, r->runtime.wait[w].max_ns });
}

static void children_cpu_seconds(FILE *f, const char *name, const struct rc_record *r,
				 const char *labels, int64_t off)
{
	if (!r->has_children)
		return;
	sample_nano(f, name, "_total", labels, ",mode=\"user\"", &r->children.user_ns);
	sample_nano(f, name, "_total", labels, ",mode=\"kernel\"", &r->children.kernel_ns);
}

/* When it started, as Unix time: boot time plus CLOCK_REALTIME's offset. */
static void start_time(FILE *f, const char *name, const struct rc_record *r,
		       const char *labels, int64_t off)
{
	int64_t t = (int64_t)r->start_time.v + off;

	if (r->start_time.has && t >= 0)
		sample_nano(f, name, "", labels, "", &(struct rc_value){ true, t });
}

#define TASKS	((1u << RC_THREAD) | (1u << RC_PROCESS))
#define ALL	(TASKS | (1u << RC_CPU))

static const struct family families[] = {
	{ "cpu_seconds", "counter", "seconds",
	  "Time on a CPU, by mode (a CPU's: busy in user or kernel mode, or idle).",
	  ALL, cpu_seconds },
	{ "idle_irq_seconds", "counter", "seconds",
	  "Time a CPU handled interrupts while idle (part of its kernel time).",
	  1u << RC_CPU, idle_irq_seconds },
	{ "cycles", "counter", NULL, "CPU cycles, by mode.", ALL, cycles },
	{ "instructions", "counter", NULL, "Instructions retired, by mode.", ALL, instructions },
	{ "events", "counter", NULL, "The PMU events chosen with getdelays -e, by mode.", ALL,
	  event_counts },
	{ "energy_joules", "counter", "joules",
	  "Energy, as the kernel's energy source estimates it (a CPU's: busy and idle).",
	  ALL, energy },
	{ "wait_seconds", "counter", "seconds",
	  "Time waiting: for a CPU (queue), page faults, contended locks.", TASKS,
	  wait_seconds },
	{ "waits", "counter", NULL, "Waits, by kind.", TASKS, waits },
	{ "wait_longest_seconds", "gauge", "seconds", "The longest wait of its life, by kind.",
	  TASKS, wait_longest },
	{ "children_cpu_seconds", "counter", "seconds",
	  "Time on a CPU of the children a process reaped, by mode.", 1u << RC_PROCESS,
	  children_cpu_seconds },
	{ "start_time_seconds", "gauge", "seconds", "When it started, in Unix time.", TASKS,
	  start_time },
};

static const char *const type_prefix[] = {
	[RC_THREAD] = "recount_thread_",
	[RC_PROCESS] = "recount_process_",
	[RC_CPU] = "recount_cpu_",
};

void out_openmetrics(FILE *f, const struct rc_record *recs, int n, int64_t realtime_off,
		     bool prometheus)
{
	size_t i;
	int type, k;

	for (type = RC_THREAD; type <= RC_CPU; type++) {
		for (i = 0; i < ARRAY_SIZE(families); i++) {
			const struct family *fam = &families[i];
			char name[64], *samples = NULL;
			size_t size = 0;
			FILE *sf;

			if (!(fam->of & (1u << type)))
				continue;
			snprintf(name, sizeof(name), "%s%s", type_prefix[type], fam->name);
			sf = open_memstream(&samples, &size);
			if (!sf)
				continue;
			for (k = 0; k < n; k++) {
				char labels[256];

				if (recs[k].type != (enum rc_type)type)
					continue;
				labels_of(labels, sizeof(labels), &recs[k]);
				fam->samples(sf, name, &recs[k], labels, realtime_off);
			}
			fclose(sf);
			/* A metric the kernel does not count: no family at all. */
			if (size && prometheus) {
				/* Its families are named as their samples; no units. */
				const char *total = strcmp(fam->type, "counter") ? "" : "_total";

				fprintf(f, "# HELP %s%s %s\n# TYPE %s%s %s\n%s", name, total,
					fam->help, name, total, fam->type, samples);
			} else if (size) {
				fprintf(f, "# TYPE %s %s\n", name, fam->type);
				if (fam->unit)
					fprintf(f, "# UNIT %s %s\n", name, fam->unit);
				fprintf(f, "# HELP %s %s\n%s", name, fam->help, samples);
			}
			free(samples);
		}
	}
	if (!prometheus)
		fputs("# EOF\n", f);
}
