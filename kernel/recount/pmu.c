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
 *
 * A privileged user may choose up to RECOUNT_NR_EVENTS more events
 * (recount_events_choose()), as cpc(3CPC) and perf do: each a generic
 * hardware or cache event or a raw code, counted in user mode, kernel mode
 * or both, by a counter per level on every CPU, read and added exactly as
 * cycles and instructions are. Those counters are flexible, not pinned:
 * perf schedules every pinned event first, CPU-wide or of a task (a KVM
 * guest's PMU counters, perf stat -e ...:D), so a chosen event never takes
 * a counter from one. Like any CPU-wide flexible event, it is scheduled
 * before the flexible events of tasks, and rotated with the other CPU-wide
 * ones when they do not fit; an interval in which it was out marks it
 * inexact. Two, because counters are few and shared:
 * an Arm PMUv3 core has six besides its cycle counter, recount's cycles and
 * instructions take three of them and the cycle counter, and two events in
 * both modes take the other three and one more; perf's own users need
 * some. Every choice is a generation: a usage's event counts belong to one
 * (struct recount_usage's @event_gen), and counts of two are never added
 * together: a track of an older generation starts again from zero the next
 * time it is charged, and reads until then show it counted nothing.
 */

#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <net/netlink.h>

#include "internal.h"

DEFINE_STATIC_KEY_FALSE(recount_pmu_key);

/* Accounting points read the chosen events: some are, and counters run. */
DEFINE_STATIC_KEY_FALSE(recount_events_key);

/* None chosen since boot: generation 0. */
static struct recount_event_set recount_no_events;

/* Changed while recount is off, under cpus_read_lock(); read under RCU. */
struct recount_event_set __rcu *recount_events = RCU_INITIALIZER(&recount_no_events);

DEFINE_PER_CPU(struct recount_pmu, recount_pmus);

/* Counters wanted on online CPUs; changed under cpus_read_lock(). */
static bool recount_pmu_wanted;

/* Some CPU had all its counters when recount last started. */
static bool recount_pmu_found;

/* The perf_event_attr type of an enum recount_event_type. */
static const u32 recount_perf_type[] = {
	[RECOUNT_EVENT_TYPE_HARDWARE]	= PERF_TYPE_HARDWARE,
	[RECOUNT_EVENT_TYPE_HW_CACHE]	= PERF_TYPE_HW_CACHE,
	[RECOUNT_EVENT_TYPE_RAW]	= PERF_TYPE_RAW,
};

static void recount_pmu_attr(struct perf_event_attr *attr, u32 type, u64 config,
			     enum recount_level level, bool pinned)
{
	*attr = (struct perf_event_attr){
		.type		= type,
		.size		= sizeof(*attr),
		.config		= config,
		.pinned		= pinned,
		.exclude_user	= level == RECOUNT_LEVEL_KERNEL,
		.exclude_kernel	= level == RECOUNT_LEVEL_USER,
		.exclude_hv	= 1,
	};
}

/**
 * recount_pmu_perf_create() - perf_event_create_kernel_counter() of @attr
 *	on @cpu, without an overflow handler
 * @attr: the counter
 * @cpu: the CPU
 *
 * KUnit tests stand in for it: perf cannot be made to refuse a counter on
 * purpose.
 *
 * Return: the counter, or an ERR_PTR.
 */
VISIBLE_IF_KUNIT struct perf_event *recount_pmu_perf_create(struct perf_event_attr *attr,
							    unsigned int cpu)
{
	KUNIT_STATIC_STUB_REDIRECT(recount_pmu_perf_create, attr, cpu);
	return perf_event_create_kernel_counter(attr, cpu, NULL, NULL, NULL);
}
EXPORT_SYMBOL_IF_KUNIT(recount_pmu_perf_create);

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * recount_pmu_of() - a CPU's counters, for KUnit tests
 * @cpu: the CPU
 *
 * Return: its struct recount_pmu.
 */
const struct recount_pmu *recount_pmu_of(unsigned int cpu)
{
	return per_cpu_ptr(&recount_pmus, cpu);
}
EXPORT_SYMBOL_IF_KUNIT(recount_pmu_of);
#endif

static struct perf_event *recount_pmu_create(unsigned int cpu, u32 type, u64 config,
					     enum recount_level level, bool pinned)
{
	struct recount_pmu *pmu = per_cpu_ptr(&recount_pmus, cpu);
	struct perf_event_attr attr;
	struct perf_event *event;

	recount_pmu_attr(&attr, type, config, level, pinned);
	event = recount_pmu_perf_create(&attr, cpu);
	if (IS_ERR(event))
		return NULL;
	/* A flexible counter is scheduled, or waits its turn, as perf sees fit. */
	if (!pinned)
		return event;
	if (event->state == PERF_EVENT_STATE_ACTIVE)
		WRITE_ONCE(pmu->held, pmu->held + 1);
	else
		pr_warn_once("recount: CPU %u: a pinned counter could not be scheduled; its counts are marked inexact\n",
			     cpu);
	return event;
}

/* The chosen events, where they cannot change: CPU hotplug is held off. */
static struct recount_event_set *recount_events_held(void)
{
	return rcu_dereference_protected(recount_events, lockdep_is_cpus_held());
}

/*
 * Give @cpu counters of the chosen events. One that could not be created
 * fails every read of its event, which is marked inexact.
 */
static void recount_pmu_install_events(unsigned int cpu)
{
	struct recount_pmu *pmu = per_cpu_ptr(&recount_pmus, cpu);
	struct recount_event_set *set = recount_events_held();
	const struct recount_event_spec *spec;
	int e, l;

	for (e = 0; e < set->nr; e++) {
		spec = &set->event[e];
		for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
			if (!(spec->mode & BIT(l)) || pmu->event[e][l])
				continue;
			/* Made whole before recount_pmu_held() may see it. */
			smp_store_release(&pmu->event[e][l],
					  recount_pmu_create(cpu, recount_perf_type[spec->type],
							     spec->config, l, false));
		}
		pmu->event_levels[e] = spec->mode;
	}
	pmu->nr_events = set->nr;
	pmu->event_gen = set->gen;
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
	bool all = true;
	int l;

	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		if (!pmu->cycles[l])
			pmu->cycles[l] = recount_pmu_create(cpu, PERF_TYPE_HARDWARE,
							    PERF_COUNT_HW_CPU_CYCLES, l, true);
		if (!pmu->instructions[l])
			pmu->instructions[l] =
				recount_pmu_create(cpu, PERF_TYPE_HARDWARE,
						   PERF_COUNT_HW_INSTRUCTIONS, l, true);
		all &= pmu->cycles[l] && pmu->instructions[l];
	}
	/*
	 * A CPU that could not have a counter (a PMU that does not cover it)
	 * fails its reads: what runs there has inexact counts, not none.
	 */
	recount_pmu_install_events(cpu);
	/* @cpu's accounting points see the pointers first. */
	barrier();
	WRITE_ONCE(pmu->ready, all ? RECOUNT_PMU_ALL : RECOUNT_PMU_SOME);
	return all;
}

static void recount_pmu_release(struct perf_event **slot)
{
	struct perf_event *event = *slot;

	/*
	 * recount_pmu_held() may still look at it, under rcu_read_lock():
	 * perf frees an event after an RCU grace period (_free_event()).
	 */
	WRITE_ONCE(*slot, NULL);
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
	int l, e;

	WRITE_ONCE(pmu->ready, RECOUNT_PMU_NONE);
	barrier();
	for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
		recount_pmu_release(&pmu->cycles[l]);
		recount_pmu_release(&pmu->instructions[l]);
		for (e = 0; e < RECOUNT_NR_EVENTS; e++)
			recount_pmu_release(&pmu->event[e][l]);
	}
	pmu->nr_events = 0;
	WRITE_ONCE(pmu->held, 0);
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
 * Return: 0, or -ENODEV if no CPU has all its counters: cycles and
 * instructions are then unsupported, and no counter is held.
 */
int recount_pmu_start(void)
{
	bool any = false;
	unsigned int cpu;

	lockdep_assert_cpus_held();
	WRITE_ONCE(recount_pmu_wanted, true);
	for_each_online_cpu(cpu)
		any |= recount_pmu_install(cpu);
	if (!any) {
		/* Cycles and instructions are unsupported: hold no counter. */
		WRITE_ONCE(recount_pmu_wanted, false);
		for_each_online_cpu(cpu)
			recount_pmu_uninstall(cpu);
	}
	if (any)
		static_branch_enable_cpuslocked(&recount_pmu_key);
	if (any && recount_events_held()->nr)
		static_branch_enable_cpuslocked(&recount_events_key);
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
	static_branch_disable_cpuslocked(&recount_events_key);
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
 * Return: true if some CPU had all its counters when recount last started: its
 * cycles and instructions are counted, or were until recount stopped.
 */
bool recount_pmu_supported(void)
{
	return READ_ONCE(recount_pmu_found);
}
EXPORT_SYMBOL_IF_KUNIT(recount_pmu_supported);

/**
 * recount_pmu_held() - how many PMU counters recount holds
 *
 * Return: the counters the PMUs give recount now, all CPUs together: the
 * pinned ones of cycles and instructions they scheduled, and those of the
 * chosen events that are counting (not rotated out) at this moment.
 */
unsigned int recount_pmu_held(void)
{
	struct perf_event *event;
	struct recount_pmu *pmu;
	unsigned int cpu, held = 0;
	int e, l;

	guard(rcu)();
	for_each_possible_cpu(cpu) {
		pmu = per_cpu_ptr(&recount_pmus, cpu);
		held += READ_ONCE(pmu->held);
		for (e = 0; e < RECOUNT_NR_EVENTS; e++) {
			for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
				/* Ordered after its making by the dependency. */
				event = READ_ONCE(pmu->event[e][l]);
				held += event && READ_ONCE(event->oncpu) >= 0;
			}
		}
	}
	return held;
}

/* The events recount_events_apply() makes the chosen ones. */
static struct recount_event_set *recount_events_next;
static DEFINE_MUTEX(recount_events_mutex);

/*
 * recount_reconfigure()'s change, while recount is off: the next set gets
 * the next generation (0 is that of tracks never charged with one).
 */
static void recount_events_apply(void)
{
	struct recount_event_set *old;

	cpus_read_lock();
	old = recount_events_held();
	recount_events_next->gen = old->gen + 1 ? old->gen + 1 : 1;
	rcu_assign_pointer(recount_events, recount_events_next);
	cpus_read_unlock();
	recount_events_next = NULL;
	if (old != &recount_no_events)
		kfree_rcu(old, rcu);
}

#ifdef CONFIG_ARM_PMUV3
#include <linux/perf/arm_pmu.h>
#include <linux/perf/arm_pmuv3.h>

/*
 * Does the PMU of @event count it? An Arm PMUv3 takes any raw event number
 * (only generic events are checked against what the core implements), and
 * counts nothing for one it does not implement; it lists the common events
 * it counts in PMCEID0/1, which perf keeps, and shows as the PMU's events
 * in sysfs. Implementation-defined events are not listed there: they are
 * taken as they are. Only an arm_pmu has PERF_PMU_CAP_EXTENDED_HW_TYPE on
 * arm64 (x86's hybrid PMUs have it elsewhere).
 */
static bool recount_pmu_lists(struct perf_event *event)
{
	struct arm_pmu *armpmu;
	u32 id;

	if (!(event->pmu->capabilities & PERF_PMU_CAP_EXTENDED_HW_TYPE))
		return true;
	armpmu = to_arm_pmu(event->pmu);
	id = event->hw.config_base & ARMV8_PMU_EVTYPE_EVENT;
	if (id < ARMV8_PMUV3_MAX_COMMON_EVENTS)
		return test_bit(id, armpmu->pmceid_bitmap);
	id -= ARMV8_PMUV3_EXT_COMMON_EVENT_BASE;
	if (id < ARMV8_PMUV3_MAX_COMMON_EVENTS)
		return test_bit(id, armpmu->pmceid_ext_bitmap);
	return true;
}
#else
static bool recount_pmu_lists(struct perf_event *event)
{
	return true;
}
#endif

/* Can @cpu's PMU count @spec at @level? Sets @extack if not. */
static int recount_events_check_one(unsigned int cpu, unsigned int index,
				    const struct recount_event_spec *spec, enum recount_level level,
				    struct netlink_ext_ack *extack)
{
	struct perf_event_attr attr;
	struct perf_event *event;
	bool counted;

	recount_pmu_attr(&attr, recount_perf_type[spec->type], spec->config, level, false);
	attr.disabled = 1;
	event = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
	if (IS_ERR(event)) {
		/* Within NETLINK_MAX_FMTMSG_LEN, whatever the numbers. */
		NL_SET_ERR_MSG_FMT(extack,
				   "event %u (%#llx): CPU %u's PMU cannot count it in %s mode",
				   index, spec->config, cpu,
				   level == RECOUNT_LEVEL_USER ? "user" : "kernel");
		/* What perf says of an event it does not know; other errors are what they are. */
		switch (PTR_ERR(event)) {
		case -ENOENT:
		case -EINVAL:
		case -EOPNOTSUPP:
			return -EOPNOTSUPP;
		}
		return PTR_ERR(event);
	}
	counted = recount_pmu_lists(event);
	perf_event_release_kernel(event);
	if (!counted) {
		NL_SET_ERR_MSG_FMT(extack, "event %u (%#llx): not in the events CPU %u's PMU lists",
				   index, spec->config, cpu);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Can the PMU count every event of @spec, at its levels? Tried on the first
 * online CPU of each kind, which may have PMUs of their own.
 */
static int recount_events_check(const struct recount_event_spec *spec, unsigned int nr,
				struct netlink_ext_ack *extack)
{
	unsigned int cpu, e, k;
	int l, err;

	guard(cpus_read_lock)();
	for (k = 0; k < RECOUNT_NR_KINDS; k++) {
		cpu = cpumask_first_and(&recount_kind_cpus[k], cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			continue;
		for (e = 0; e < nr; e++) {
			for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
				if (!(spec[e].mode & BIT(l)))
					continue;
				err = recount_events_check_one(cpu, e, &spec[e], l, extack);
				if (err)
					return err;
			}
		}
	}
	return 0;
}

/*
 * Did every CPU's PMU schedule the counters of @set? Those of the chosen
 * events are flexible: if they do not fit beside pinned events, perf rotates
 * them with its flexible events, and the intervals they spend rotated out
 * are marked inexact. Says so as a warning.
 */
static void recount_events_held_check(const struct recount_event_set *set,
				      struct netlink_ext_ack *extack)
{
	unsigned int levels = 0, want, held, e;

	if (!recount_enabled() || !recount_pmu_supported())
		return;
	for (e = 0; e < set->nr; e++)
		levels += hweight32(set->event[e].mode);
	cpus_read_lock();
	want = num_online_cpus() * (2 * RECOUNT_NR_LEVELS + levels);
	held = recount_pmu_held();
	cpus_read_unlock();
	if (held < want)
		NL_SET_ERR_MSG_FMT(extack,
				   "PMUs gave recount %u of %u counters: chosen events rotate, are inexact",
				   held, want);
}

#ifdef CONFIG_PERF_EVENTS
/*
 * May the requester of @skb (sender and socket opener, as netlink_capable()
 * checks them) choose @spec? A choice changes what every CPU counts and
 * restarts recount for everyone (IPIs to every CPU, static keys, counters
 * made again), as the power model and kernel.recount do: it takes
 * CAP_PERFMON (or CAP_SYS_ADMIN) whatever perf_event_paranoid lets users
 * read, and perf's stricter rules on top: CAP_SYS_ADMIN where paranoid is
 * above 2 (kernels that give 3 that meaning refuse perf to anyone else),
 * then what security modules' perf_event_open hooks say of a CPU-wide
 * event, and of the kernel if one counts it.
 */
static int recount_events_allowed(const struct recount_event_spec *spec, unsigned int nr,
				  const struct sk_buff *skb, struct netlink_ext_ack *extack)
{
	bool kernel = false;
	unsigned int e;

	if (!netlink_capable(skb, CAP_PERFMON) && !netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(extack,
			       "choosing events needs CAP_PERFMON: they are counted on every CPU, and a choice restarts recount");
		return -EPERM;
	}
	if (READ_ONCE(sysctl_perf_event_paranoid) > 2 && !netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(extack,
			       "choosing events needs CAP_SYS_ADMIN while perf_event_paranoid is above 2");
		return -EPERM;
	}
	for (e = 0; e < nr; e++)
		kernel |= spec[e].mode & BIT(RECOUNT_LEVEL_KERNEL);
	if (security_perf_event_open(PERF_SECURITY_OPEN) ||
	    security_perf_event_open(PERF_SECURITY_CPU) ||
	    (kernel && security_perf_event_open(PERF_SECURITY_KERNEL))) {
		NL_SET_ERR_MSG(extack, "a security module refuses these perf events");
		return -EACCES;
	}
	return 0;
}
#else
static int recount_events_allowed(const struct recount_event_spec *spec, unsigned int nr,
				  const struct sk_buff *skb, struct netlink_ext_ack *extack)
{
	return 0;
}
#endif

/**
 * recount_events_choose() - choose the PMU events recount counts
 * @spec: the events, their type and mode valid
 * @nr: how many, at most RECOUNT_NR_EVENTS; 0 to count none
 * @skb: the request, whose sender and socket opener must be allowed to
 *	count CPU-wide perf events
 * @extack: where to say why not
 *
 * The events replace those chosen before, in a new generation. If recount
 * is on, it is switched off and on (recount_reconfigure()), as for a new
 * power model: the CPUs' counters are made again.
 *
 * Return: 0 (with a warning in @extack if the PMUs could not schedule every
 * counter); -EPERM or -EACCES if the requester may not; -EOPNOTSUPP if the
 * PMU cannot count an event, or another error of perf's in making it, and
 * then nothing changes; -ENOMEM.
 */
int recount_events_choose(const struct recount_event_spec *spec, unsigned int nr,
			  const struct sk_buff *skb, struct netlink_ext_ack *extack)
{
	struct recount_event_set *set;
	int err;

	if (WARN_ON_ONCE(nr > RECOUNT_NR_EVENTS))
		return -EINVAL;
	err = recount_events_allowed(spec, nr, skb, extack);
	if (err)
		return err;
	if (nr && recount_enabled() && !recount_pmu_supported()) {
		NL_SET_ERR_MSG(extack,
			       "recount counts no PMU event: no CPU has counters, or sysctl kernel.recount_pmu is 0");
		return -EOPNOTSUPP;
	}
	err = recount_events_check(spec, nr, extack);
	if (err)
		return err;
	set = kzalloc(sizeof(*set), GFP_KERNEL_ACCOUNT);
	if (!set)
		return -ENOMEM;
	set->nr = nr;
	memcpy(set->event, spec, nr * sizeof(*spec));

	guard(mutex)(&recount_events_mutex);
	recount_events_next = set;
	err = recount_reconfigure(recount_events_apply);
	if (!err)
		recount_events_held_check(set, extack);
	return err;
}
