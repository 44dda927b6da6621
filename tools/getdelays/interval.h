/* SPDX-License-Identifier: GPL-2.0 */
/*
 * getdelays' intervals: what a thread, process or CPU did between two reads,
 * from its two records. Pure functions of records, testable without a kernel.
 */
#ifndef _GETDELAYS_INTERVAL_H
#define _GETDELAYS_INTERVAL_H

#include "recount_client.h"

/* The records of one read: a dump, or a query's one record. */
struct snapshot {
	struct rc_record *recs;
	int n, size;
	uint64_t at;		/* when it was read: CLOCK_BOOTTIME, ns */
	uint64_t begin;		/* when the read began (a dump takes a while) */
};

/* Add a copy of @rec. Returns 0 or -1 out of memory. */
int snapshot_add(struct snapshot *s, const struct rc_record *rec);
/* Sort by identity (see iv_compare()), so that iv_find() can search it. */
void snapshot_sort(struct snapshot *s);
void snapshot_free(struct snapshot *s);

/*
 * Order of identity: type, then id (pid of a thread, tgid of a process, CPU
 * number), then start time. A pid that was reused is another task: its
 * start time differs.
 */
int iv_compare(const struct rc_record *a, const struct rc_record *b);
/* The record of @s with @rec's identity, or NULL. @s is sorted. */
const struct rc_record *iv_find(const struct snapshot *s, const struct rc_record *rec);

/*
 * iv_delta() - a record of what happened between two reads
 * @prev: the task's or CPU's record at the first read, or NULL if it was not
 *        there (it began since, or the read missed it)
 * @now: its record at the second read, or its exit record
 * @t0, @t1: the times of the two reads (CLOCK_BOOTTIME)
 * @d: the interval's record: @now's identity, its figures less @prev's
 *
 * The figures are @now's less @prev's; one that went backwards or that
 * either lacks is absent. The longest waits are kept only where the longest
 * of the task's life ended in the interval (RC_IV_MAX_IN): recount keeps one
 * longest wait per kind, not one per interval. d->iv.span_ns is the part of
 * the interval the task or CPU lived: from its start if it began in it, to
 * its exit if it exited in it.
 *
 * Return: 0, or -1 if @prev is NULL and @now began before @t0: what it did
 * in the interval cannot be told from its totals.
 */
int iv_delta(const struct rc_record *prev, const struct rc_record *now, uint64_t t0,
	     uint64_t t1, struct rc_record *d);

/*
 * iv_gone() - the interval's record of a task that was read at @t0 and not
 * at @t1, and whose exit record was not received: it exited, what it did
 * since @t0 is unknown (every figure absent).
 */
void iv_gone(const struct rc_record *prev, uint64_t t0, uint64_t t1, struct rc_record *d);

/*
 * iv_build() - the records of an interval, in @rows
 * @prev, @cur: the reads at its start and end, sorted
 * @exits: the exit records received meanwhile, of what is shown; those of
 *         tasks still in @cur (zombies) are kept in it for the next interval
 * @wall_ns: the end as CLOCK_REALTIME
 *
 * Rows are what is in both reads; what began since @prev (in @cur, or only
 * in @exits); and what was in @prev only: from its exit record if it came,
 * else marked exited, without figures.
 *
 * Return: 0, or -1 out of memory.
 */
int iv_build(const struct snapshot *prev, const struct snapshot *cur, struct snapshot *exits,
	     struct snapshot *rows, int64_t wall_ns);

/*
 * iv_active() - whether an interval's row is worth printing when only active
 * ones are: it ran, waited, began or exited.
 */
bool iv_active(const struct rc_record *d);

#endif /* _GETDELAYS_INTERVAL_H */
