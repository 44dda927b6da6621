// SPDX-License-Identifier: GPL-2.0
/*
 * recount: CPU kinds
 *
 * Every CPU is of one kind, performance or efficiency; threads keep a track
 * per kind, and processes and CPUs can be read per kind. The kinds are
 * settled once, before accounting starts:
 *
 *   - from the boot parameter recount_efficiency_cpus=<cpulist>, if given:
 *     those CPUs are efficiency CPUs, all others performance CPUs;
 *   - otherwise from the CPUs' capacity (arch_scale_cpu_capacity()): CPUs
 *     of the highest capacity are performance CPUs, all others efficiency
 *     CPUs (on a machine with three tiers, the middle one is efficiency);
 *   - otherwise, on x86, from the hybrid core type (CPUID leaf 0x1a): Atom
 *     cores are efficiency CPUs.
 *
 * A homogeneous machine has only performance CPUs.
 */

#include <kunit/visibility.h>
#include <linux/cache.h>
#include <linux/cpumask.h>
#include <linux/init.h>
#include <linux/percpu.h>
#include <linux/sched/topology.h>
#include <linux/smp.h>

#include "internal.h"

#ifdef CONFIG_X86
#include <asm/cpu.h>

/* The core type of an Atom (efficiency) core, CPUID.1AH:EAX[31:24]. */
#define RECOUNT_X86_HYBRID_ATOM	0x20
#endif

/* The CPUs of each kind, settled before accounting starts. */
struct cpumask recount_kind_cpus[RECOUNT_NR_KINDS] __ro_after_init;

/* The machine has CPUs of more than one kind. */
bool recount_kinds_mixed __ro_after_init;

/*
 * The kinds some possible CPU is of, a bit each: a track's usage of any
 * other kind stays 0, and its reads skip it.
 */
unsigned int recount_kinds_used __ro_after_init = BIT(RECOUNT_NR_KINDS) - 1;

static struct cpumask recount_boot_efficiency __initdata;
static bool recount_boot_kinds __initdata;

static int __init recount_efficiency_setup(char *str)
{
	if (cpulist_parse(str, &recount_boot_efficiency))
		pr_warn("recount: ignoring recount_efficiency_cpus=%s, not a CPU list\n", str);
	else
		recount_boot_kinds = true;
	return 1;
}
__setup("recount_efficiency_cpus=", recount_efficiency_setup);

/**
 * recount_kind_of_capacity() - the kind of a CPU of a given capacity
 * @capacity: the CPU's capacity
 * @max_capacity: the highest capacity of all CPUs
 *
 * Return: RECOUNT_KIND_PERFORMANCE for the CPUs of the highest capacity,
 * RECOUNT_KIND_EFFICIENCY for all others.
 */
enum recount_kind recount_kind_of_capacity(unsigned long capacity,
					   unsigned long max_capacity)
{
	return capacity < max_capacity ? RECOUNT_KIND_EFFICIENCY : RECOUNT_KIND_PERFORMANCE;
}
EXPORT_SYMBOL_IF_KUNIT(recount_kind_of_capacity);

#ifdef CONFIG_X86
static void recount_kind_x86_hybrid(void *efficiency)
{
	if (get_this_hybrid_cpu_type() == RECOUNT_X86_HYBRID_ATOM)
		cpumask_set_cpu(smp_processor_id(), efficiency);
}
#endif

/* Fill @efficiency with the efficiency CPUs, as the hardware tells. */
static void __init recount_kind_detect(struct cpumask *efficiency)
{
	unsigned long max_capacity = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		max_capacity = max(max_capacity, arch_scale_cpu_capacity(cpu));
	for_each_possible_cpu(cpu) {
		if (recount_kind_of_capacity(arch_scale_cpu_capacity(cpu), max_capacity) ==
		    RECOUNT_KIND_EFFICIENCY)
			cpumask_set_cpu(cpu, efficiency);
	}
#ifdef CONFIG_X86
	if (cpumask_empty(efficiency)) {
		cpus_read_lock();
		for_each_online_cpu(cpu)
			smp_call_function_single(cpu, recount_kind_x86_hybrid, efficiency, 1);
		cpus_read_unlock();
	}
#endif
}

/**
 * recount_kind_init() - settle the kind of every CPU
 *
 * Called once, before recount accounts anything.
 */
void __init recount_kind_init(void)
{
	struct cpumask *efficiency = &recount_kind_cpus[RECOUNT_KIND_EFFICIENCY];
	int cpu, k;

	if (recount_boot_kinds)
		cpumask_and(efficiency, &recount_boot_efficiency, cpu_possible_mask);
	else
		recount_kind_detect(efficiency);
	cpumask_andnot(&recount_kind_cpus[RECOUNT_KIND_PERFORMANCE], cpu_possible_mask,
		       efficiency);
	recount_kinds_mixed = !cpumask_empty(efficiency) &&
			      !cpumask_empty(&recount_kind_cpus[RECOUNT_KIND_PERFORMANCE]);
	recount_kinds_used = 0;
	for (k = 0; k < RECOUNT_NR_KINDS; k++)
		if (!cpumask_empty(&recount_kind_cpus[k]))
			recount_kinds_used |= BIT(k);

	for_each_possible_cpu(cpu)
		per_cpu(recount_cpus, cpu).kind = cpumask_test_cpu(cpu, efficiency) ?
			RECOUNT_KIND_EFFICIENCY : RECOUNT_KIND_PERFORMANCE;
	pr_info("recount: performance CPUs %*pbl, efficiency CPUs %*pbl\n",
		cpumask_pr_args(&recount_kind_cpus[RECOUNT_KIND_PERFORMANCE]),
		cpumask_pr_args(efficiency));
}
