// SPDX-License-Identifier: GPL-2.0
/*
 * recount: energy
 *
 * Energy is accumulated in nanojoules per thread (per CPU kind), per process
 * and per CPU, not per level. Its source is reported with every record:
 *
 *   estimated	a power model: for each kind of CPU, the power it draws busy
 *		and idle, in milliwatts. A thread running for t ns on a CPU
 *		of kind k gains busy(k) * t; a CPU idle for t ns gains
 *		idle(k) * t. The model comes from the boot parameter
 *		recount_power_mw=, the sysctl kernel.recount_power_mw, or
 *		else the Energy Model of the CPUs (the power of their highest
 *		performance state, when it is in microwatts; idle power 0).
 *   none	no model: energy is unsupported, never reported as 0.
 *
 * The power model is four numbers, as in the sysctl: performance busy,
 * performance idle, efficiency busy, efficiency idle. A write to the sysctl
 * that changes it switches recount off and on again (recount_reconfigure()):
 * the intervals in progress are folded with the model readers estimated them
 * with, so that no energy read goes back.
 *
 * Arithmetic: a power of P mW is kept as P / 1000 nJ/ns in 32.32 fixed
 * point, and an interval's energy is its length times that, with a 128-bit
 * intermediate (mul_u64_u64_shr()): no overflow for any interval, and a
 * track of one CPU drawing 1 kW takes 213 days to reach 2^64 nJ; at 10 W,
 * 58 years.
 */

#include <kunit/visibility.h>
#include <linux/capability.h>
#include <linux/energy_model.h>
#include <linux/init.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/sysctl.h>

#include "internal.h"

DEFINE_STATIC_KEY_FALSE(recount_energy_estimated_key);

/*
 * The power model in mW: [kind * 2] busy, [kind * 2 + 1] idle. int, for
 * proc_dointvec_minmax(), which reads and writes arrays.
 */
static int recount_power_mw[RECOUNT_NR_KINDS * 2];
/* The same in nJ/ns, 32.32 fixed point: [kind][idle]. */
u64 recount_power_factor[RECOUNT_NR_KINDS][2] __read_mostly;

static DEFINE_MUTEX(recount_power_mutex);
static bool recount_power_from_boot __initdata;

/* The highest power the model accepts, per CPU: 1 kW. */
#define RECOUNT_POWER_MAX_MW	1000000

/**
 * recount_energy_factor() - a power in the form recount_energy_scale() takes
 * @milliwatts: the power, at most RECOUNT_POWER_MAX_MW
 *
 * Return: @milliwatts / 1000, in nanojoules per nanosecond, as 32.32 fixed
 * point.
 */
u64 recount_energy_factor(u32 milliwatts)
{
	return div_u64((u64)milliwatts << 32, 1000);
}
EXPORT_SYMBOL_IF_KUNIT(recount_energy_factor);

/* Install recount_power_mw[] as the model; under recount_power_mutex. */
static void recount_power_apply(void)
{
	bool any = false;
	int k, idle;

	for (k = 0; k < RECOUNT_NR_KINDS; k++) {
		for (idle = 0; idle < 2; idle++) {
			u32 mw = recount_power_mw[k * 2 + idle];

			WRITE_ONCE(recount_power_factor[k][idle], recount_energy_factor(mw));
			any |= mw != 0;
		}
	}
	if (any)
		static_branch_enable(&recount_energy_estimated_key);
	else
		static_branch_disable(&recount_energy_estimated_key);
}

/**
 * recount_energy_source() - where energy values come from
 *
 * Return: RECOUNT_ENERGY_SOURCE_ESTIMATED or RECOUNT_ENERGY_SOURCE_NONE.
 */
u32 recount_energy_source(void)
{
	if (static_branch_unlikely(&recount_energy_estimated_key))
		return RECOUNT_ENERGY_SOURCE_ESTIMATED;
	return RECOUNT_ENERGY_SOURCE_NONE;
}

static int __init recount_power_setup(char *str)
{
	int mw[RECOUNT_NR_KINDS * 2] = {};
	int i = 0;
	char *s;

	while ((s = strsep(&str, ",")) && i < ARRAY_SIZE(mw)) {
		if (kstrtoint(s, 0, &mw[i]) || mw[i] < 0 || mw[i] > RECOUNT_POWER_MAX_MW)
			goto bad;
		i++;
	}
	if (s || !i)
		goto bad;
	memcpy(recount_power_mw, mw, sizeof(mw));
	recount_power_from_boot = true;
	return 1;
bad:
	pr_warn("recount: ignoring recount_power_mw=, expected up to four powers in mW: performance busy,idle, efficiency busy,idle\n");
	return 1;
}
__setup("recount_power_mw=", recount_power_setup);

/* Without a model from the command line, take the CPUs' Energy Model. */
static void __init recount_power_from_em(void)
{
#ifdef CONFIG_ENERGY_MODEL
	int cpu;

	for_each_possible_cpu(cpu) {
		struct em_perf_domain *pd = em_cpu_get(cpu);
		unsigned int kind = per_cpu(recount_cpus, cpu).kind;
		struct em_perf_state *table;
		unsigned long uw;

		if (!pd || !(pd->flags & EM_PERF_DOMAIN_MICROWATTS) || em_is_artificial(pd))
			continue;
		rcu_read_lock();
		table = em_perf_state_from_pd(pd);
		uw = table[pd->nr_perf_states - 1].power;
		rcu_read_unlock();
		uw = min(uw / 1000, RECOUNT_POWER_MAX_MW);
		recount_power_mw[kind * 2] = max_t(int, recount_power_mw[kind * 2], uw);
	}
#endif
}

#ifdef CONFIG_SYSCTL
static int recount_power_max = RECOUNT_POWER_MAX_MW;

static int recount_sysctl_power(const struct ctl_table *table, int write,
				void *buffer, size_t *lenp, loff_t *ppos)
{
	int mw[RECOUNT_NR_KINDS * 2];
	struct ctl_table t;
	int err;

	if (write && !capable(CAP_SYS_ADMIN))
		return -EPERM;

	guard(mutex)(&recount_power_mutex);
	memcpy(mw, recount_power_mw, sizeof(mw));
	t = *table;
	t.data = mw;
	err = proc_dointvec_minmax(&t, write, buffer, lenp, ppos);
	if (err || !write || !memcmp(mw, recount_power_mw, sizeof(mw)))
		return err;
	memcpy(recount_power_mw, mw, sizeof(mw));
	return recount_reconfigure(recount_power_apply);
}

static struct ctl_table recount_energy_sysctls[] = {
	{
		.procname	= "recount_power_mw",
		.maxlen		= sizeof(recount_power_mw),
		.mode		= 0644,
		.proc_handler	= recount_sysctl_power,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &recount_power_max,
	},
};
#endif

/**
 * recount_energy_init() - settle the energy source
 *
 * Called once, after the CPU kinds are known and before recount accounts
 * anything.
 */
void __init recount_energy_init(void)
{
	if (!recount_power_from_boot)
		recount_power_from_em();
	mutex_lock(&recount_power_mutex);
	recount_power_apply();
	mutex_unlock(&recount_power_mutex);
#ifdef CONFIG_SYSCTL
	register_sysctl_init("kernel", recount_energy_sysctls);
#endif
}
