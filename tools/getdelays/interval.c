// SPDX-License-Identifier: GPL-2.0
/*
 * getdelays' intervals: a record's figures less those of the same task or
 * CPU at the read before.
 */
#include <stdlib.h>
#include <string.h>

#include "interval.h"

int snapshot_add(struct snapshot *s, const struct rc_record *rec)
{
	if (s->n == s->size) {
		int size = s->size ? s->size * 2 : 256;
		struct rc_record *recs = realloc(s->recs, size * sizeof(*recs));

		if (!recs)
			return -1;
		s->recs = recs;
		s->size = size;
	}
	s->recs[s->n++] = *rec;
	return 0;
}

static int compare(const void *a, const void *b)
{
	return iv_compare(a, b);
}

void snapshot_sort(struct snapshot *s)
{
	qsort(s->recs, s->n, sizeof(*s->recs), compare);
}

void snapshot_free(struct snapshot *s)
{
	free(s->recs);
	memset(s, 0, sizeof(*s));
}

static uint32_t id_of(const struct rc_record *r)
{
	return r->type == RC_THREAD ? r->pid : r->type == RC_PROCESS ? r->tgid : r->cpu;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

int iv_compare(const struct rc_record *a, const struct rc_record *b)
{
	if (a->type != b->type)
		return cmp_u64(a->type, b->type);
	if (id_of(a) != id_of(b))
		return cmp_u64(id_of(a), id_of(b));
	return cmp_u64(a->start_time.has ? a->start_time.v : 0,
		       b->start_time.has ? b->start_time.v : 0);
}

const struct rc_record *iv_find(const struct snapshot *s, const struct rc_record *rec)
{
	return s->n ? bsearch(rec, s->recs, s->n, sizeof(*s->recs), compare) : NULL;
}

/*
 * @now less @prev: absent if either is, or if it went backwards. An exit
 * record can be a little behind a read that caught its task exiting (in
 * the kernel after it was taken): there, nothing more happened, 0.
 */
static void sub_value(struct rc_value *d, const struct rc_value *prev, bool clamp)
{
	bool back = d->v < prev->v;

	d->has = d->has && prev->has && (!back || clamp);
	d->v = d->has && !back ? d->v - prev->v : 0;
}

/*
 * Chosen events of two generations are different events: an interval over a
 * new choice has no figure of them (@events false).
 */
static void sub_usage(struct rc_usage *d, const struct rc_usage *prev, bool clamp, bool events)
{
	int e;

	for (e = 0; e < RC_MAX_EVENTS; e++) {
		if (!events) {
			d->event_user[e].has = false;
			d->event_kernel[e].has = false;
			continue;
		}
		sub_value(&d->event_user[e], &prev->event_user[e], clamp);
		sub_value(&d->event_kernel[e], &prev->event_kernel[e], clamp);
	}
	sub_value(&d->user_ns, &prev->user_ns, clamp);
	sub_value(&d->kernel_ns, &prev->kernel_ns, clamp);
	sub_value(&d->idle_ns, &prev->idle_ns, clamp);
	sub_value(&d->user_cycles, &prev->user_cycles, clamp);
	sub_value(&d->kernel_cycles, &prev->kernel_cycles, clamp);
	sub_value(&d->user_instructions, &prev->user_instructions, clamp);
	sub_value(&d->kernel_instructions, &prev->kernel_instructions, clamp);
	sub_value(&d->energy_nj, &prev->energy_nj, clamp);
	sub_value(&d->idle_energy_nj, &prev->idle_energy_nj, clamp);
	sub_value(&d->idle_irq_ns, &prev->idle_irq_ns, clamp);
	/*
	 * A figure of the interval is inexact if it was so at either read; an
	 * event's, only of its generation.
	 */
	d->inexact |= prev->inexact;
	if (!events)
		d->inexact &= ~(RECOUNT_INEXACT_EVENT_0 | RECOUNT_INEXACT_EVENT_1);
}

/*
 * The kinds of CPUs are matched by kind. A kind missing from the first
 * read's record, which has others, had nothing: the interval's figures of
 * that kind are the second read's. A first read with none was a lean one
 * on a machine of one kind, which gives none; then the second read's (an
 * exit record's, which gives them) are totals, not the interval's: they
 * go, and the usage says it all.
 */
static void sub_kinds(struct rc_record *d, const struct rc_record *prev, bool clamp, bool events)
{
	int i, j;

	if (!prev->nr_kinds)
		d->nr_kinds = 0;
	for (i = 0; i < d->nr_kinds; i++)
		for (j = 0; j < prev->nr_kinds; j++)
			if (prev->per_kind[j].kind == d->per_kind[i].kind)
				sub_usage(&d->per_kind[i], &prev->per_kind[j], clamp, events);
}

static void sub_u64(uint64_t *d, uint64_t prev, bool clamp, bool *ok)
{
	if (*d < prev && !clamp)
		*ok = false;
	*d = *d < prev ? 0 : *d - prev;
}

static uint8_t sub_runtime(struct rc_runtime *d, const struct rc_runtime *prev, bool clamp)
{
	uint8_t max_in = 0;
	bool ok = true;
	int w;

	if (!prev->has) {
		d->has = false;
		return 0;
	}
	sub_u64(&d->cpu_ns, prev->cpu_ns, clamp, &ok);
	sub_u64(&d->queue_ns, prev->queue_ns, clamp, &ok);
	sub_u64(&d->fault_ns, prev->fault_ns, clamp, &ok);
	sub_u64(&d->lock_ns, prev->lock_ns, clamp, &ok);
	d->has_waits = d->has_waits && prev->has_waits;
	for (w = 0; w < RC_NR_WAITS; w++) {
		/* A new longest wait ended after the first read. */
		if (d->has_waits && d->wait[w].max_at_ns != prev->wait[w].max_at_ns)
			max_in |= 1 << w;
		else
			d->wait[w] = (struct rc_wait_stats){ .count = d->wait[w].count };
		if (d->has_waits)
			sub_u64(&d->wait[w].count, prev->wait[w].count, clamp, &ok);
	}
	d->has = d->has && ok;
	return d->has ? max_in : 0;
}

/* A runtime that began in the interval: its longest waits all ended in it. */
static uint8_t whole_runtime(const struct rc_runtime *rt)
{
	uint8_t max_in = 0;
	int w;

	for (w = 0; rt->has && rt->has_waits && w < RC_NR_WAITS; w++)
		if (rt->wait[w].count)
			max_in |= 1 << w;
	return max_in;
}

int iv_delta(const struct rc_record *prev, const struct rc_record *now, uint64_t t0,
	     uint64_t t1, struct rc_record *d)
{
	uint64_t begin = t0, end = now->is_exit ? now->exit_time : t1;
	/* An exit record behind the read before: nothing more happened. */
	bool clamp = now->is_exit;

	*d = *now;
	d->iv = (struct rc_interval){ .is = true, .t0 = t0, .t1 = t1 };
	/* Not in the first read: it must have begun since. */
	if (!prev) {
		if (now->type == RC_CPU || !now->start_time.has || now->start_time.v < t0)
			return -1;
		begin = now->start_time.v;
		d->iv.state |= RC_IV_BEGAN;
		d->iv.max_in = whole_runtime(&d->runtime);
	} else {
		bool events = now->event_gen == prev->event_gen;

		sub_usage(&d->usage, &prev->usage, clamp, events);
		sub_usage(&d->exited, &prev->exited, clamp, events);
		sub_usage(&d->children, &prev->children, clamp, events);
		sub_kinds(d, prev, clamp, events);
		d->iv.max_in = sub_runtime(&d->runtime, &prev->runtime, clamp);
		sub_runtime(&d->exited_runtime, &prev->exited_runtime, clamp);
		sub_runtime(&d->children_runtime, &prev->children_runtime, clamp);
		d->has_children = d->has_children && prev->has_children;
	}
	if (now->is_exit)
		d->iv.state |= RC_IV_EXITED;
	d->iv.span_ns = end > begin ? end - begin : 0;
	/* The runtime struct is a total: it has no interval's meaning. */
	d->runtime_struct_len = 0;
	return 0;
}

void iv_gone(const struct rc_record *prev, uint64_t t0, uint64_t t1, struct rc_record *d)
{
	*d = *prev;
	memset(&d->usage, 0, sizeof(d->usage));
	memset(&d->exited, 0, sizeof(d->exited));
	memset(&d->runtime, 0, sizeof(d->runtime));
	memset(&d->exited_runtime, 0, sizeof(d->exited_runtime));
	memset(&d->children, 0, sizeof(d->children));
	memset(&d->children_runtime, 0, sizeof(d->children_runtime));
	d->has_children = false;
	d->nr_kinds = 0;
	d->runtime_struct_len = 0;
	d->iv = (struct rc_interval){
		.is = true, .state = RC_IV_EXITED, .t0 = t0, .t1 = t1,
	};
}

bool iv_active(const struct rc_record *d)
{
	const struct rc_usage *u = &d->usage;
	const struct rc_runtime *rt = &d->runtime;

	/* A CPU's row says how idle it was, too. */
	return d->type == RC_CPU || d->iv.state || (u->user_ns.has && u->user_ns.v) ||
	       (u->kernel_ns.has && u->kernel_ns.v) ||
	       (rt->has && (rt->queue_ns || rt->fault_ns || rt->lock_ns));
}

int iv_build(const struct snapshot *prev, const struct snapshot *cur, struct snapshot *exits,
	     struct snapshot *rows, int64_t wall_ns)
{
	uint64_t t0 = prev->at, t1 = cur->at;
	struct snapshot kept = {};
	struct rc_record d;
	int i, err = 0;

	rows->n = 0;
	for (i = 0; i < cur->n; i++) {
		const struct rc_record *p = iv_find(prev, &cur->recs[i]);

		/* What began since the first read began: a dump takes a while. */
		if (!iv_delta(p, &cur->recs[i], p ? t0 : prev->begin, t1, &d))
			err |= snapshot_add(rows, &d);
	}
	snapshot_sort(exits);
	for (i = 0; i < prev->n; i++) {
		const struct rc_record *p = &prev->recs[i], *e;

		if (iv_find(cur, p))
			continue;
		e = iv_find(exits, p);
		if (e)
			iv_delta(p, e, t0, t1, &d);
		else
			iv_gone(p, t0, t1, &d);
		err |= snapshot_add(rows, &d);
	}
	for (i = 0; i < exits->n; i++) {
		const struct rc_record *e = &exits->recs[i];

		/* Still listed (a zombie): its exit is the next interval's. */
		if (iv_find(cur, e)) {
			err |= snapshot_add(&kept, e);
			continue;
		}
		/* It began and exited in the interval. */
		if (!iv_find(prev, e) && !iv_delta(NULL, e, prev->begin, t1, &d))
			err |= snapshot_add(rows, &d);
	}
	snapshot_free(exits);
	*exits = kept;
	for (i = 0; i < rows->n; i++)
		rows->recs[i].iv.wall_ns = wall_ns;
	return err ? -1 : 0;
}
