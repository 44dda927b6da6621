/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The invariants of recount's values, as checks the selftests share: each
 * returns NULL when it holds, else the name of the first metric that breaks
 * it. Threads other than the test's own can call them and report later.
 * Include after kselftest_harness.h.
 */
#ifndef _RECOUNT_CHECK_H
#define _RECOUNT_CHECK_H

#include <stddef.h>
#include <string.h>

#include "recount_nl.h"

/* Every metric of a usage; absent ones (unsupported) are 0 on both sides. */
#define RNL_METRIC(m) { #m, offsetof(struct rnl_usage, m) }
static const struct {
	const char *name;
	size_t offset;
} rnl_metrics[] = {
	RNL_METRIC(user), RNL_METRIC(kernel), RNL_METRIC(idle),
	RNL_METRIC(user_cycles), RNL_METRIC(kernel_cycles),
	RNL_METRIC(user_instructions), RNL_METRIC(kernel_instructions),
	RNL_METRIC(energy), RNL_METRIC(idle_energy), RNL_METRIC(idle_irq),
};

#define RNL_NR_METRICS ARRAY_SIZE(rnl_metrics)

static inline __u64 *rnl_metric(struct rnl_usage *u, size_t i)
{
	return (__u64 *)((char *)u + rnl_metrics[i].offset);
}

static inline __u64 rnl_metric_of(const struct rnl_usage *u, size_t i)
{
	return *rnl_metric((struct rnl_usage *)u, i);
}

/* By how much metric @name (as rnl_metrics[] names it) of @b is less than that of @a, or 0. */
static inline __u64 rnl_usage_drop(const struct rnl_usage *a, const struct rnl_usage *b,
				   const char *name)
{
	size_t i;

	for (i = 0; i < RNL_NR_METRICS; i++)
		if (!strcmp(rnl_metrics[i].name, name) && rnl_metric_of(a, i) > rnl_metric_of(b, i))
			return rnl_metric_of(a, i) - rnl_metric_of(b, i);
	return 0;
}

/* A metric of @a greater than that of @b: @b decreased, if @a came first. */
static inline const char *rnl_usage_exceeds(const struct rnl_usage *a,
					    const struct rnl_usage *b)
{
	size_t i;

	for (i = 0; i < RNL_NR_METRICS; i++)
		if (rnl_metric_of(a, i) > rnl_metric_of(b, i))
			return rnl_metrics[i].name;
	return NULL;
}

static inline const char *rnl_usage_differs(const struct rnl_usage *a,
					    const struct rnl_usage *b)
{
	size_t i;

	for (i = 0; i < RNL_NR_METRICS; i++)
		if (rnl_metric_of(a, i) != rnl_metric_of(b, i))
			return rnl_metrics[i].name;
	return NULL;
}

static inline void rnl_usage_add(struct rnl_usage *sum, const struct rnl_usage *u)
{
	size_t i;

	for (i = 0; i < RNL_NR_METRICS; i++)
		*rnl_metric(sum, i) += rnl_metric_of(u, i);
}

/* Raise every metric of @max to that of @u, if greater. */
static inline void rnl_usage_max(struct rnl_usage *max, const struct rnl_usage *u)
{
	size_t i;

	for (i = 0; i < RNL_NR_METRICS; i++)
		if (rnl_metric_of(u, i) > *rnl_metric(max, i))
			*rnl_metric(max, i) = rnl_metric_of(u, i);
}

/* The per-kind usages of @r add up to its usage exactly, in every metric. */
static inline const char *rnl_kinds_differ(const struct rnl_record *r)
{
	struct rnl_usage sum = {}, total = r->usage;
	int k;

	for (k = 0; k < r->nr_kinds; k++)
		rnl_usage_add(&sum, &r->per_kind[k]);
	/* Idle time is a CPU's alone, not split per kind. */
	sum.idle = total.idle;
	sum.idle_energy = total.idle_energy;
	sum.idle_irq = total.idle_irq;
	return r->nr_kinds ? rnl_usage_differs(&sum, &total) : "no per-kind usage";
}

/* Expect a check to hold, with what broke it. */
#define EXPECT_HOLDS(check) do {						\
	const char *__broken = (check);						\
	EXPECT_EQ(NULL, __broken) TH_LOG("%s: %s", #check, __broken);		\
} while (0)

#endif /* _RECOUNT_CHECK_H */
