// SPDX-License-Identifier: GPL-2.0
/*
 * recount: cycles and instructions, from per-CPU perf counters
 *
 * While recount is on, every online CPU has four pinned kernel perf counters:
 * cycles and instructions, each counting user mode only (exclude_kernel) or
 * kernel mode only (exclude_user). The PMU splits the counts per level
 * itself, exactly, wherever the entry code switches modes; so recount reads
 * the counters (recount_pmu_read()) only where the running thread changes,
 * at the tick and when a thread reads itself, and user/kernel transitions
 * pay nothing for them. No per-task perf event is involved.
 *
 * The counters are created when recount is switched on and on every CPU that
 * comes online meanwhile, and released when it is switched off or the CPU
 * goes offline: recount holds four counters per CPU only while it runs.
 *
 * Counters are a shared resource. Pinned CPU events are scheduled before any
 * other event and never rotated; if the PMU cannot give recount its counters
 * (other pinned users, such as the NMI watchdog, hold them), the event is in
 * error, never active, and its reads fail. An interval whose counts could
 * not be read at both ends adds no cycles or instructions and marks them
 * inexact in every track it is charged to. recount never takes counters
 * from another user. Without a PMU, cycles and instructions are
 * unsupported: the netlink family leaves them out and says so.
 */

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>

#include "internal.h"

DEFINE_STATIC_KEY_FALSE(recount_pmu_key);

DEFINE_PER_CPU(struct recount_pmu, recount_pmus);

/* Counters wanted on online CPUs; changed under cpus_read_lock(). */
static bool recount_pmu_wanted;

/* Some CPU had counters when recount last started. */
static bool recount_pmu_found;

static struct perf_event *recount_pmu_create(unsigned int cpu, u64 config,
					     enum recount_level level)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_HARDWARE,
		.size		= sizeof(attr),
		.config		= config,
		.pinned		= 1,
		.exclude_user	= level == RECOUNT_LEVEL_KERNEL,
		.exclude_kernel	= level == RECOUNT_LEVEL_USER,
		.exclude_hv	= 1,
	};
	struct perf_event *event;

	event = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
	if (IS_ERR(event))
		return NULL;
	if (event->state != PERF_EVENT_STATE_ACTIVE)
		pr_warn_once("recount: CPU %u: a pinned counter could not be scheduled; its counts are marked inexact\n",
			     cpu);
	return event;
}

/*
 * Give @cpu its counters, and let its accounting points read them: on @cpu
 * itself, or while recount is off. A counter that could not be created
 * fails every read, and marks the counts inexact. Returns true if @cpu has
 * every counter.
 */
static bool recount_pmu_install(unsigned int cpu)
{
	struct recount_pmu *pmu = per_cpu_ptr(&recount_pmus, cpu);
	bool all = true, any = false;
	int l;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		if (!pmu->cycles[l])
			pmu->cycles[l] = recount_pmu_create(cpu, PERF_COUNT_HW_CPU_CYCLES, l);
		if (!pmu->instructions[l])
			pmu->instructions[l] = recount_pmu_create(cpu, PERF_COUNT_HW_INSTRUCTIONS,
								  l);
		all &= pmu->cycles[l] && pmu->instructions[l];
		any |= pmu->cycles[l] || pmu->instructions[l];
	}
	/* @cpu's accounting points see the pointers first. */
	barrier();
	WRITE_ONCE(pmu->ready, all ? RECOUNT_PMU_ALL : any ? RECOUNT_PMU_SOME : RECOUNT_PMU_NONE);
	return all;
}

static void recount_pmu_release(struct perf_event **slot)
{
	struct perf_event *event = *slot;

	*slot = NULL;
	if (event)
		perf_event_release_kernel(event);
}

/*
 * Release @cpu's counters. Accounting points on @cpu read them with
 * interrupts disabled: called on @cpu itself, or while recount is off, none
 * is still reading them once @ready is clear.
 */
static void recount_pmu_uninstall(unsigned int cpu)
{
	struct recount_pmu *pmu = per_cpu_ptr(&recount_pmus, cpu);
	int l;

	WRITE_ONCE(pmu->ready, RECOUNT_PMU_NONE);
	barrier();
	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		recount_pmu_release(&pmu->cycles[l]);
		recount_pmu_release(&pmu->instructions[l]);
	}
}

/**
 * recount_pmu_cpu_online() - give a CPU coming online its counters
 * @cpu: the CPU, which runs this
 *
 * Return: 0.
 */
int recount_pmu_cpu_online(unsigned int cpu)
{
	if (READ_ONCE(recount_pmu_wanted))
		recount_pmu_install(cpu);
	return 0;
}

/**
 * recount_pmu_cpu_offline() - release the counters of a CPU going offline
 * @cpu: the CPU, which runs this
 *
 * Return: 0.
 */
int recount_pmu_cpu_offline(unsigned int cpu)
{
	recount_pmu_uninstall(cpu);
	return 0;
}

/**
 * recount_pmu_start() - create the counters of every online CPU
 *
 * Called while recount is off, before it is switched on, with the CPU
 * hotplug lock held.
 *
 * Return: 0, or -ENODEV if no CPU has counters: cycles and instructions are
 * then unsupported.
 */
int recount_pmu_start(void)
{
	bool any = false;
	unsigned int cpu;

	lockdep_assert_cpus_held();
	WRITE_ONCE(recount_pmu_wanted, true);
	for_each_online_cpu(cpu)
		any |= recount_pmu_install(cpu);
	if (any)
		static_branch_enable_cpuslocked(&recount_pmu_key);
	WRITE_ONCE(recount_pmu_found, any);
	return any ? 0 : -ENODEV;
}

/**
 * recount_pmu_stop() - release every CPU's counters
 *
 * Called once recount is off and no accounting point runs any more, with
 * the CPU hotplug lock held.
 */
void recount_pmu_stop(void)
{
	unsigned int cpu;

	lockdep_assert_cpus_held();
	WRITE_ONCE(recount_pmu_wanted, false);
	static_branch_disable_cpuslocked(&recount_pmu_key);
	for_each_online_cpu(cpu)
		recount_pmu_uninstall(cpu);
}

/**
 * recount_pmu_forget() - recount starts without counters
 *
 * Cycles and instructions become unsupported (sysctl kernel.recount_pmu=0).
 */
void recount_pmu_forget(void)
{
	WRITE_ONCE(recount_pmu_found, false);
}

/**
 * recount_pmu_supported() - are cycles and instructions counted?
 *
 * Return: true if some CPU had counters when recount last started: its
 * cycles and instructions are counted, or were until recount stopped.
 */
bool recount_pmu_supported(void)
{
	return READ_ONCE(recount_pmu_found);
}
