// SPDX-License-Identifier: GPL-2.0
/*
 * recount: the RECOUNT generic netlink family
 *
 * The family, its policies and its ops are generated from
 * Documentation/netlink/specs/recount.yaml into netlink_gen.c; this file holds
 * the handlers. A request runs in the context of the task that sent it, so
 * pids are those of the caller's pid namespace, and the caller's credentials
 * decide what it may read: a thread or process it could ptrace-read
 * (PTRACE_MODE_READ_FSCREDS), and any CPU; of their PMU counts, what perf
 * would let it count (recount_nl_withheld()). A dump goes on in whoever
 * reads its socket: it keeps the requester's namespace and credentials
 * (struct recount_dump_ctx).
 */

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/perf_event.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/unaligned.h>
#include <asm/word-at-a-time.h>
#include <kunit/visibility.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "internal.h"
#include "netlink_gen.h"

/*
 * Records are written in place: a record's room is checked once, against
 * the most it can take (recount_nl_fill_size()), and its
 * attributes are then stores at a cursor, which each writer takes and
 * returns, and which recount_nl_end() adds to the message (with
 * CONFIG_DEBUG_NET, it checks the record's size). nla_put_u64_64bit()
 * and its kin check the room, call skb_put(), memset() the padding and
 * memcpy() the value for each attribute: about 80 instructions an attribute
 * on arm64, 2,000 of the 4,600 a dump spent per thread; a cursor kept in a
 * register makes each a few stores. Each writer below writes no more than
 * its size function counts.
 */
static __always_inline void *recount_nl_begin(struct sk_buff *msg, size_t size)
{
	return skb_tailroom(msg) < size ? NULL : skb_tail_pointer(msg);
}

/* A record of @size at most ends at @pos. */
static __always_inline void recount_nl_end(struct sk_buff *msg, void *pos, size_t size)
{
	DEBUG_NET_WARN_ON_ONCE((unsigned char *)pos - skb_tail_pointer(msg) > size);
	__skb_put(msg, (unsigned char *)pos - skb_tail_pointer(msg));
}

static __always_inline void *recount_nl_attr(void *pos, int type, int len)
{
	struct nlattr *nla = pos;

	nla->nla_len = nla_attr_size(len);
	nla->nla_type = type;
	return nla_data(nla);
}

static __always_inline void *recount_nl_u32(void *pos, int type, u32 value)
{
	*(u32 *)recount_nl_attr(pos, type, sizeof(u32)) = value;
	return pos + nla_total_size(sizeof(u32));
}

/* A u64, aligned where nla_put_u64_64bit() aligns it, after a @pad attribute. */
static __always_inline void *recount_nl_u64(void *pos, int type, u64 value, int pad)
{
	if (!IS_ENABLED(CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS) &&
	    IS_ALIGNED((unsigned long)pos, 8)) {
		recount_nl_attr(pos, pad, 0);
		pos += nla_total_size(0);
	}
	put_unaligned(value, (u64 *)recount_nl_attr(pos, type, sizeof(u64)));
	return pos + nla_total_size(sizeof(u64));
}

static __always_inline void *recount_nl_usage_u64(void *pos, int type, u64 value)
{
	return recount_nl_u64(pos, type, value, RECOUNT_A_USAGE_PAD);
}

/* A nest begins at @nest, @pos is past its last attribute. */
static __always_inline void *recount_nl_nest(void *nest, int type)
{
	recount_nl_attr(nest, type | NLA_F_NESTED, 0);
	return nest + nla_total_size(0);
}

static __always_inline void *recount_nl_nest_end(void *nest, void *pos)
{
	((struct nlattr *)nest)->nla_len = pos - nest;
	return pos;
}

/*
 * The command name of @t, copied without task_lock(), as get_task_comm()
 * copies it since Linux 6.13: __set_task_comm() keeps it NUL-terminated
 * and padded with NULs, so a rename meanwhile gives a mix of the two names
 * at worst, as it may in /proc/PID/stat. Copied a word at a time, and
 * measured as it is copied; what follows the first NUL, the attribute's
 * padding, is zeroed, mixed or not. On arm64, the name cost a record 113
 * instructions when copied under the lock to a buffer, then from it, 45
 * with strscpy(), its call included, 20 this way.
 */
static __always_inline void *recount_nl_comm(void *pos, const struct task_struct *t)
{
	const struct word_at_a_time constants = WORD_AT_A_TIME_CONSTANTS;
	const unsigned long *src = (const unsigned long *)t->comm;
	unsigned long *dst = recount_nl_attr(pos, RECOUNT_A_COMM, 0);
	unsigned long word, bits;
	size_t len = TASK_COMM_LEN - 1;
	int i, n = TASK_COMM_LEN / sizeof(long);

	BUILD_BUG_ON(TASK_COMM_LEN % sizeof(long));
	for (i = 0; i < n; i++) {
		/* Racing with __set_task_comm(), on purpose: see above. */
		word = data_race(get_unaligned(&src[i]));
		if (has_zero(word, &bits, &constants)) {
			bits = create_zero_mask(prep_zero_mask(word, bits, &constants));
			len = i * sizeof(long) + find_zero(bits);
			put_unaligned(word & zero_bytemask(bits), &dst[i]);
			break;
		}
		put_unaligned(word, &dst[i]);
	}
	/* Every name ends at its last byte: a mix may not have. */
	if (i == n)
		((char *)dst)[TASK_COMM_LEN - 1] = '\0';
	while (++i < n)
		put_unaligned(0UL, &dst[i]);
	((struct nlattr *)pos)->nla_len = nla_attr_size(len + 1);
	return pos + nla_total_size(len + 1);
}

/**
 * recount_nl_capable() - netlink_capable(), but not audited
 * @skb: the request
 * @cap: the capability
 *
 * Do the sender of @skb and the socket's opener both have @cap, as
 * netlink_capable() asks? recount asks to decide what a reply carries or
 * what a listener is charged, not because the requester asked for what
 * only @cap allows: a denial is no event to audit, and a poller without
 * @cap would log one every time it reads (CAP_OPT_NOAUDIT, as /proc's
 * PTRACE_MODE_NOAUDIT). The one request for what only @cap allows, adding
 * CPUs to a privileged listener, audits its denial apart.
 *
 * Return: true if both have @cap.
 */
bool recount_nl_capable(const struct sk_buff *skb, int cap)
{
	const struct netlink_skb_parms *nsp = &NETLINK_CB(skb);

	return ((nsp->flags & NETLINK_SKB_DST) ||
		!security_capable(nsp->sk->sk_socket->file->f_cred, &init_user_ns, cap,
				  CAP_OPT_NOAUDIT)) &&
	       ns_capable_noaudit(&init_user_ns, cap);
}

/**
 * recount_nl_opener() - whose credentials a request is judged by, besides
 *	its sender's
 * @skb: the request
 * @cred: the sender's credentials
 *
 * A request is a write() on a socket, which its opener may have handed to
 * a task that may read more: the records go to the socket, so that task's
 * write() would give the opener what it may not read (CVE-2014-0181, why
 * netlink_capable() asks both for a capability). So the opener must be
 * allowed to read a record too, unless the sender addressed the request
 * itself (sendmsg() with an address, which a write() cannot do:
 * NETLINK_SKB_DST) or opened the socket with @cred.
 *
 * Return: the opener's credentials, or NULL if @cred's say it all.
 */
const struct cred *recount_nl_opener(const struct sk_buff *skb, const struct cred *cred)
{
	const struct netlink_skb_parms *nsp = &NETLINK_CB(skb);
	const struct cred *opener;

	if (nsp->flags & NETLINK_SKB_DST)
		return NULL;
	opener = nsp->sk->sk_socket->file->f_cred;
	return opener == cred ? NULL : opener;
}

/**
 * recount_nl_may_read_current() - could @cred ptrace-read current?
 * @cred: the reader's credentials, not current's
 *
 * As ptrace_may_access() decides for PTRACE_MODE_READ_FSCREDS |
 * PTRACE_MODE_NOAUDIT, with @cred as the reader's. ptrace_may_access()
 * itself cannot answer: it lets a task read its own thread group, and here
 * the reader is not current. Its credential and dumpability rules (as
 * __ptrace_may_access() and task_still_dumpable() have them) are repeated
 * here; then security_ptrace_access_check() runs with @cred as the
 * subjective credentials (those the hooks take as the tracer's), current's
 * own as the objective ones (the tracee's): the capability rule (a reader
 * holds every capability current has) and the security modules that judge
 * the tracer by current's subjective credentials (SELinux, AppArmor,
 * Landlock) decide as they decide for /proc. Smack judges the tracer by
 * current's real credentials, so it restricts no such reader.
 *
 * Return: true if @cred may read current.
 */
bool recount_nl_may_read_current(const struct cred *cred)
{
	const struct cred *tcred = current_real_cred(), *old;
	struct mm_struct *mm = current->mm;
	bool ok;

	ok = (uid_eq(cred->fsuid, tcred->euid) && uid_eq(cred->fsuid, tcred->suid) &&
	      uid_eq(cred->fsuid, tcred->uid) && gid_eq(cred->fsgid, tcred->egid) &&
	      gid_eq(cred->fsgid, tcred->sgid) && gid_eq(cred->fsgid, tcred->gid)) ||
	     !security_capable(cred, tcred->user_ns, CAP_SYS_PTRACE, CAP_OPT_NOAUDIT);
	if (ok && (mm ? get_dumpable(mm) != SUID_DUMP_USER : !current->user_dumpable))
		ok = !security_capable(cred, mm ? mm->user_ns : &init_user_ns, CAP_SYS_PTRACE,
				       CAP_OPT_NOAUDIT);
	if (!ok)
		return false;
	old = override_creds(cred);
	ok = !security_ptrace_access_check(current, PTRACE_MODE_READ_FSCREDS | PTRACE_MODE_NOAUDIT);
	revert_creds(old);
	return ok;
}

/*
 * May the opener of the socket a request came on read @t? As
 * ptrace_may_access(@t, PTRACE_MODE_READ_FSCREDS | PTRACE_MODE_NOAUDIT)
 * decides, with @opener (recount_nl_opener()) as the reader's credentials;
 * a thread of current's process is judged as current is. True if there is
 * no @opener to judge. Out of line: a dump's loop keeps only the test.
 */
static noinline bool recount_nl_opener_may_read(struct task_struct *t,
						const struct cred *opener)
{
	const struct cred *old;
	bool ok;

	if (!opener)
		return true;
	if (same_thread_group(t, current))
		return recount_nl_may_read_current(opener);
	old = override_creds(opener);
	ok = ptrace_may_access(t, PTRACE_MODE_READ_FSCREDS | PTRACE_MODE_NOAUDIT);
	revert_creds(old);
	return ok;
}

#ifdef CONFIG_PERF_EVENTS
/* What perf_event_open() would refuse the requester of @skb; see below. */
static u32 recount_nl_perf_refused(const struct sk_buff *skb, bool cpu)
{
	const u32 all = RECOUNT_WITHHELD_USER_PMU | RECOUNT_WITHHELD_KERNEL_PMU;
	u32 refused = cpu ? all : RECOUNT_WITHHELD_KERNEL_PMU;
	int paranoid = READ_ONCE(sysctl_perf_event_paranoid);

	if (paranoid > 2 && !recount_nl_capable(skb, CAP_SYS_ADMIN))
		return all;
	if (security_perf_event_open(PERF_SECURITY_OPEN))
		return all;
	if (paranoid > (cpu ? 0 : 1) &&
	    !recount_nl_capable(skb, CAP_PERFMON) &&
	    !recount_nl_capable(skb, CAP_SYS_ADMIN))
		return refused;
	if (security_perf_event_open(cpu ? PERF_SECURITY_CPU : PERF_SECURITY_KERNEL))
		return refused;
	return 0;
}
#else
static u32 recount_nl_perf_refused(const struct sk_buff *skb, bool cpu)
{
	return 0;	/* nothing is counted with the PMU */
}
#endif

/**
 * recount_nl_withheld() - what of the PMU's counts a requester may not read
 * @skb: the request
 * @cpu: for the records of CPUs, rather than of threads and processes
 *
 * perf_event_open()'s rules for the same counts, with the capabilities of
 * both the sender and the socket's opener (recount_nl_capable()), as
 * perf_allow_kernel() and perf_allow_cpu() apply them to the caller: a
 * task's kernel-mode counts need perf_event_paranoid <= 1 or CAP_PERFMON; a
 * CPU's counts, those of a CPU-wide event, perf_event_paranoid <= 0 or
 * CAP_PERFMON; above 2, Debian's perf_event_open() refuses anyone without
 * CAP_SYS_ADMIN. Security modules' perf_event_open hooks have their say.
 * Decided once per request, dump or listener registration, as perf decides
 * once, when an event is opened: one capability check each, not one per
 * record. Decided whatever the PMU counts at the time, for what it may
 * count later (kernel.recount_pmu, kernel.recount). A record says what it
 * withholds only where it carries the PMU's metrics.
 *
 * Return: RECOUNT_WITHHELD_* flags, 0 if the requester may read them all.
 */
u32 recount_nl_withheld(const struct sk_buff *skb, bool cpu)
{
	return recount_nl_perf_refused(skb, cpu);
}

/*
 * The most a usage nest takes: every metric, idle time, energy and irq time,
 * kind, and a nest per chosen event.
 */
static size_t recount_nl_usage_size(void)
{
	return nla_total_size(0) + 10 * nla_total_size_64bit(sizeof(u64)) +
	       2 * nla_total_size(sizeof(u32)) +
	       RECOUNT_NR_EVENTS * (nla_total_size(0) + nla_total_size(sizeof(u32)) +
				    2 * nla_total_size_64bit(sizeof(u64)));
}

/*
 * The counts of the chosen events of @set, a nest each: those of @usage if
 * they belong to @set's generation, else none (0) was counted in it.
 */
static void *recount_nl_put_events(void *pos, const struct recount_event_set *set,
				   bool upmu, bool kpmu, const struct recount_usage *usage)
{
	bool counted = usage->event_gen == set->gen;
	const struct recount_metrics *m;
	int e, l;
	void *nest;

	for (e = 0; e < set->nr; e++) {
		nest = pos;
		pos = recount_nl_nest(nest, RECOUNT_A_USAGE_EVENT);
		pos = recount_nl_u32(pos, RECOUNT_A_EVENT_INDEX, e);
		for (l = 0; l < RECOUNT_NR_LEVELS; l++) {
			if (!(set->event[e].mode & BIT(l)) ||
			    !(l == RECOUNT_LEVEL_USER ? upmu : kpmu))
				continue;
			m = &usage->level[l];
			pos = recount_nl_u64(pos, l == RECOUNT_LEVEL_USER ? RECOUNT_A_EVENT_USER :
					     RECOUNT_A_EVENT_KERNEL,
					     counted ? m->event[e] : 0, RECOUNT_A_EVENT_PAD);
		}
		pos = recount_nl_nest_end(nest, pos);
	}
	return pos;
}

/* The inexact flags of @usage, those of chosen events only of @set's. */
static u32 recount_nl_inexact(const struct recount_usage *usage,
			      const struct recount_event_set *set)
{
	u32 events = 0;

	if (set && usage->event_gen == set->gen)
		events = RECOUNT_INEXACT_EVENT(set->nr) - RECOUNT_INEXACT_EVENT_0;
	return usage->inexact & (~RECOUNT_INEXACT_EVENTS | events);
}

/*
 * Write @usage in a nest of type @attr: the metrics this kernel counts and no
 * others, less those @withheld, @kind if not negative, and @idle (its time and
 * energy, and the time its CPU handled interrupts while idle) if given; the
 * chosen events of @set if given.
 */
static void *recount_nl_put_usage(void *pos, int attr, u32 metrics, u32 withheld,
				  const struct recount_usage *usage, int kind,
				  const struct recount_cpu_usage *idle,
				  const struct recount_event_set *set)
{
	u32 inexact = recount_nl_inexact(usage, set);
	const struct recount_metrics *user = &usage->level[RECOUNT_LEVEL_USER];
	const struct recount_metrics *kernel = &usage->level[RECOUNT_LEVEL_KERNEL];
	bool upmu = !(withheld & RECOUNT_WITHHELD_USER_PMU);
	bool kpmu = !(withheld & RECOUNT_WITHHELD_KERNEL_PMU);
	void *nest = pos;

	pos = recount_nl_nest(nest, attr);
	pos = recount_nl_usage_u64(pos, RECOUNT_A_USAGE_USER_TIME, user->time);
	pos = recount_nl_usage_u64(pos, RECOUNT_A_USAGE_KERNEL_TIME, kernel->time);
	if (idle) {
		pos = recount_nl_usage_u64(pos, RECOUNT_A_USAGE_IDLE_TIME, idle->idle_time);
		pos = recount_nl_usage_u64(pos, RECOUNT_A_USAGE_IDLE_IRQ_TIME, idle->idle_irq_time);
	}
	if (metrics & RECOUNT_METRIC_CYCLES) {
		if (upmu)
			pos = recount_nl_usage_u64(pos, RECOUNT_A_USAGE_USER_CYCLES, user->cycles);
		if (kpmu)
			pos = recount_nl_usage_u64(pos, RECOUNT_A_USAGE_KERNEL_CYCLES,
						   kernel->cycles);
	}
	if (metrics & RECOUNT_METRIC_INSTRUCTIONS) {
		if (upmu)
			pos = recount_nl_usage_u64(pos, RECOUNT_A_USAGE_USER_INSTRUCTIONS,
						   user->instructions);
		if (kpmu)
			pos = recount_nl_usage_u64(pos, RECOUNT_A_USAGE_KERNEL_INSTRUCTIONS,
						   kernel->instructions);
	}
	if (metrics & RECOUNT_METRIC_ENERGY) {
		pos = recount_nl_usage_u64(pos, RECOUNT_A_USAGE_ENERGY, usage->energy);
		if (idle)
			pos = recount_nl_usage_u64(pos, RECOUNT_A_USAGE_IDLE_ENERGY,
						   idle->idle_energy);
	}
	if (inexact)
		pos = recount_nl_u32(pos, RECOUNT_A_USAGE_INEXACT, inexact);
	if (kind >= 0)
		pos = recount_nl_u32(pos, RECOUNT_A_USAGE_KIND, kind);
	if (set)
		pos = recount_nl_put_events(pos, set, upmu, kpmu, usage);
	return recount_nl_nest_end(nest, pos);
}

/*
 * What recount_nl_put_state() puts but for what the requester may not read,
 * which is decided once per request, as one value: the state a record is
 * written in, and a lean dump gives it again when it changes. Never 0.
 */
static u32 recount_nl_state(void)
{
	BUILD_BUG_ON(RECOUNT_FLAGS_DISABLED > 0xff);
	BUILD_BUG_ON((RECOUNT_METRIC_TIME | RECOUNT_METRIC_CYCLES | RECOUNT_METRIC_INSTRUCTIONS |
		      RECOUNT_METRIC_ENERGY | RECOUNT_METRIC_EVENTS) > 0xff);
	BUILD_BUG_ON(RECOUNT_ENERGY_SOURCE_ESTIMATED > 0x7f);
	/* Bits 24 to 30 are a dump's: recount_nl_dump_task_state(). */
	return BIT(31) | (recount_enabled() ? 0 : RECOUNT_FLAGS_DISABLED) |
	       recount_metrics_supported() << 8 | recount_energy_source() << 16;
}

/* The metrics of a state. */
static u32 recount_nl_state_metrics(u32 state)
{
	return (state >> 8) & 0xff;
}

/*
 * The state of recount, @state: its flags, the metrics it counts, the
 * energy source, and what of them the requester may not read, if @fmt
 * asks for it; the generation of the chosen events of @set, if any.
 */
static __always_inline void *recount_nl_put_state(void *pos, u32 state,
						  const struct recount_nl_format *fmt,
						  const struct recount_event_set *set)
{
	if (set)
		pos = recount_nl_u32(pos, RECOUNT_A_EVENT_GEN, set->gen);
	if (!fmt->state)
		return pos;
	pos = recount_nl_u32(pos, RECOUNT_A_FLAGS, state & RECOUNT_FLAGS_DISABLED);
	pos = recount_nl_u32(pos, RECOUNT_A_METRICS, recount_nl_state_metrics(state));
	pos = recount_nl_u32(pos, RECOUNT_A_ENERGY_SOURCE, (state >> 16) & 0x7f);
	if (fmt->withheld &&
	    (recount_nl_state_metrics(state) &
	     (RECOUNT_METRIC_CYCLES | RECOUNT_METRIC_INSTRUCTIONS)))
		pos = recount_nl_u32(pos, RECOUNT_A_WITHHELD, fmt->withheld);
	return pos;
}

/* With the generation of the chosen events, in every record. */
static __always_inline size_t recount_nl_state_size(const struct recount_nl_format *fmt)
{
	return (fmt->state ? 4 : 0) * nla_total_size(sizeof(u32)) + nla_total_size(sizeof(u32));
}

/*
 * The chosen events a record carries the counts of, if any: read after the
 * tracks, it is of their generation or a later one (a new generation is
 * published before any CPU counts it). Under rcu_read_lock().
 */
static const struct recount_event_set *recount_nl_events(u32 metrics)
{
	return metrics & RECOUNT_METRIC_EVENTS ? rcu_dereference(recount_events) : NULL;
}


/*
 * The total of @per_kind as usage, and each kind as per-kind; in a lean
 * record, only where the machine has CPUs of more than one kind: elsewhere
 * the total is the one kind's usage.
 */
static __always_inline bool recount_nl_per_kind(const struct recount_nl_format *fmt)
{
	return !fmt->lean || recount_kinds_mixed;
}

static __always_inline void *
recount_nl_put_kinds(void *pos, u32 metrics, const struct recount_nl_format *fmt,
		     const struct recount_usage per_kind[RECOUNT_NR_KINDS],
		     const struct recount_event_set *set)
{
	const struct recount_usage *total = &per_kind[__ffs(recount_kinds_used)];
	struct recount_usage sum __uninitialized;
	int k;

	/* Of one kind, the total is that kind's usage. */
	if (recount_kinds_mixed) {
		memset(&sum, 0, sizeof(sum));
		for (k = 0; k < RECOUNT_NR_KINDS; k++)
			recount_usage_sum(&sum, &per_kind[k]);
		total = &sum;
	}
	pos = recount_nl_put_usage(pos, RECOUNT_A_USAGE, metrics, fmt->withheld, total, -1, NULL,
				   set);
	if (!recount_nl_per_kind(fmt))
		return pos;
	for (k = 0; k < RECOUNT_NR_KINDS; k++)
		pos = recount_nl_put_usage(pos, RECOUNT_A_PER_KIND, metrics, fmt->withheld,
					   &per_kind[k], k, NULL, set);
	return pos;
}

static __always_inline size_t recount_nl_kinds_size(const struct recount_nl_format *fmt)
{
	return (1 + (recount_nl_per_kind(fmt) ? RECOUNT_NR_KINDS : 0)) * recount_nl_usage_size();
}

/* The versions of struct recount_task_runtime: each begins with the last. */
static_assert(sizeof(struct recount_task_runtime_v1) == 16);
static_assert(sizeof(struct recount_task_runtime_v2) == 32);
static_assert(sizeof(struct recount_task_runtime) == 104);
static_assert(offsetof(struct recount_task_runtime_v1, queue_time) == 8);
static_assert(offsetof(struct recount_task_runtime_v2, queue_time) == 8);
static_assert(offsetof(struct recount_task_runtime_v2, page_fault_time) == 16);
static_assert(offsetof(struct recount_task_runtime_v2, lock_contention_time) == 24);
static_assert(offsetof(struct recount_task_runtime, queue_time) == 8);
static_assert(offsetof(struct recount_task_runtime, page_fault_time) == 16);
static_assert(offsetof(struct recount_task_runtime, lock_contention_time) == 24);
static_assert(offsetof(struct recount_task_runtime, queue_count) == 32);
static_assert(RECOUNT_RUNTIME_VERSION == RECOUNT_RUNTIME_V3);

static __always_inline size_t recount_runtime_size(u32 version)
{
	switch (version) {
	case RECOUNT_RUNTIME_V1:
		return sizeof(struct recount_task_runtime_v1);
	case RECOUNT_RUNTIME_V2:
		return sizeof(struct recount_task_runtime_v2);
	default:
		return sizeof(struct recount_task_runtime);
	}
}

/*
 * The runtime nest's attributes of a wait: its time, after the queue's, in
 * the order of enum recount_wait; its count, longest and when, in threes.
 * A fourth wait would append its own, apart: this layout holds three.
 */
static_assert(RECOUNT_NR_WAITS == 3);
static_assert(RECOUNT_A_RUNTIME_LOCK_CONTENTION_MAX_TIME == RECOUNT_A_RUNTIME_MAX);
static_assert(RECOUNT_A_RUNTIME_QUEUE_TIME + RECOUNT_WAIT_FAULT ==
	      RECOUNT_A_RUNTIME_PAGE_FAULT_TIME);
static_assert(RECOUNT_A_RUNTIME_QUEUE_TIME + RECOUNT_WAIT_LOCK ==
	      RECOUNT_A_RUNTIME_LOCK_CONTENTION_TIME);
static_assert(RECOUNT_A_RUNTIME_QUEUE_COUNT + 3 * RECOUNT_WAIT_FAULT ==
	      RECOUNT_A_RUNTIME_PAGE_FAULT_COUNT);
static_assert(RECOUNT_A_RUNTIME_QUEUE_COUNT + 3 * RECOUNT_WAIT_LOCK ==
	      RECOUNT_A_RUNTIME_LOCK_CONTENTION_COUNT);
static_assert(RECOUNT_A_RUNTIME_QUEUE_COUNT + 1 == RECOUNT_A_RUNTIME_QUEUE_MAX);
static_assert(RECOUNT_A_RUNTIME_QUEUE_COUNT + 2 == RECOUNT_A_RUNTIME_QUEUE_MAX_TIME);

static void *recount_nl_put_waits(void *pos, const struct recount_runtime *runtime)
{
	int w;

	for (w = 0; w < RECOUNT_NR_WAITS; w++) {
		const struct recount_wait_stats *s = &runtime->wait[w];
		int attr = RECOUNT_A_RUNTIME_QUEUE_COUNT + 3 * w;

		pos = recount_nl_u64(pos, RECOUNT_A_RUNTIME_QUEUE_TIME + w, s->time,
				     RECOUNT_A_RUNTIME_PAD);
		pos = recount_nl_u64(pos, attr, s->count, RECOUNT_A_RUNTIME_PAD);
		pos = recount_nl_u64(pos, attr + 1, s->max, RECOUNT_A_RUNTIME_PAD);
		pos = recount_nl_u64(pos, attr + 2, s->max_at, RECOUNT_A_RUNTIME_PAD);
	}
	return pos;
}

/* The time on CPU of the @n usages of @usage, all levels. */
static u64 recount_cpu_time(const struct recount_usage *usage, int n)
{
	u64 time = 0;
	int k, l;

	for (k = 0; k < n; k++)
		for (l = 0; l < RECOUNT_NR_LEVELS; l++)
			time += usage[k].level[l].time;
	return time;
}

/* A runtime nest: CPU time, and time, count, longest and when per wait. */
static __always_inline size_t recount_nl_runtime_size(void)
{
	return nla_total_size(0) + (1 + 4 * RECOUNT_NR_WAITS) * nla_total_size_64bit(sizeof(u64));
}

/* The runtime struct of @version is written, but not the nest, if it says it all. */
static __always_inline bool recount_nl_runtime_nest(u32 version, bool lean)
{
	return !lean || !version ||
	       recount_runtime_size(version) != sizeof(struct recount_task_runtime);
}

/* Written whole, with no padding to zero. */
static_assert(IS_ALIGNED(sizeof(struct recount_task_runtime_v1), NLA_ALIGNTO));
static_assert(IS_ALIGNED(sizeof(struct recount_task_runtime_v2), NLA_ALIGNTO));
static_assert(IS_ALIGNED(sizeof(struct recount_task_runtime), NLA_ALIGNTO));

/* A field of a struct recount_task_runtime at @rt, which may be unaligned. */
#define recount_nl_rt_put(rt, field, value)						\
	put_unaligned(value, (u64 *)((rt) + offsetof(struct recount_task_runtime, field)))

/*
 * The struct recount_task_runtime of @version, from @runtime and @cpu_time,
 * at @pos: unaligned (NLA_ALIGNTO), and written in place where it is the
 * current version, the one a client mostly asks for (a copy through the
 * stack cost a record 34 more instructions on arm64); an older one is the
 * current one's start.
 */
static void *recount_nl_put_runtime_struct(void *pos, u64 cpu_time,
					   const struct recount_runtime *runtime, u32 version)
{
	const struct recount_wait_stats *q = &runtime->wait[RECOUNT_WAIT_QUEUE];
	const struct recount_wait_stats *f = &runtime->wait[RECOUNT_WAIT_FAULT];
	const struct recount_wait_stats *l = &runtime->wait[RECOUNT_WAIT_LOCK];
	size_t size = recount_runtime_size(version);
	/* Not zeroed first (CONFIG_INIT_STACK_ALL_ZERO): it is set whole, if at all. */
	struct recount_task_runtime copy __uninitialized;
	void *rt = recount_nl_attr(pos, RECOUNT_A_RUNTIME_STRUCT, size);

	if (size != sizeof(copy))
		rt = &copy;
	recount_nl_rt_put(rt, cpu_time, cpu_time);
	recount_nl_rt_put(rt, queue_time, q->time);
	recount_nl_rt_put(rt, page_fault_time, f->time);
	recount_nl_rt_put(rt, lock_contention_time, l->time);
	recount_nl_rt_put(rt, queue_count, q->count);
	recount_nl_rt_put(rt, queue_max, q->max);
	recount_nl_rt_put(rt, queue_max_time, q->max_at);
	recount_nl_rt_put(rt, page_fault_count, f->count);
	recount_nl_rt_put(rt, page_fault_max, f->max);
	recount_nl_rt_put(rt, page_fault_max_time, f->max_at);
	recount_nl_rt_put(rt, lock_contention_count, l->count);
	recount_nl_rt_put(rt, lock_contention_max, l->max);
	recount_nl_rt_put(rt, lock_contention_max_time, l->max_at);
	if (rt == &copy)
		memcpy(nla_data(pos), &copy, size);
	return pos + nla_total_size(size);
}

/*
 * Write @runtime and @cpu_time as a runtime nest of type @attr, and if
 * @version, as the struct recount_task_runtime of that version; with
 * @lean, only as the struct if that version carries every value.
 */
static __always_inline void *recount_nl_put_runtime(void *pos, int attr, u64 cpu_time,
						    const struct recount_runtime *runtime,
						    u32 version, bool lean)
{
	void *nest = pos;

	if (recount_nl_runtime_nest(version, lean)) {
		pos = recount_nl_nest(nest, attr);
		pos = recount_nl_u64(pos, RECOUNT_A_RUNTIME_CPU_TIME, cpu_time,
				     RECOUNT_A_RUNTIME_PAD);
		pos = recount_nl_put_waits(pos, runtime);
		pos = recount_nl_nest_end(nest, pos);
	}
	if (!version)
		return pos;
	return recount_nl_put_runtime_struct(pos, cpu_time, runtime, version);
}

/* What recount_nl_put_runtime() writes at most. */
static __always_inline size_t recount_nl_put_runtime_size(u32 version, bool lean)
{
	return (recount_nl_runtime_nest(version, lean) ? recount_nl_runtime_size() : 0) +
	       (version ? nla_total_size(recount_runtime_size(version)) : 0);
}

static __always_inline size_t recount_nl_thread_size(const struct recount_nl_format *fmt)
{
	return 3 * nla_total_size(sizeof(u32)) + nla_total_size(TASK_COMM_LEN) +
	       nla_total_size_64bit(sizeof(u64)) + recount_nl_state_size(fmt) +
	       recount_nl_kinds_size(fmt) + recount_nl_put_runtime_size(fmt->version, fmt->lean);
}

static size_t recount_nl_process_size(const struct recount_nl_format *fmt)
{
	return 2 * nla_total_size(sizeof(u32)) + nla_total_size(TASK_COMM_LEN) +
	       nla_total_size_64bit(sizeof(u64)) + recount_nl_state_size(fmt) +
	       recount_nl_kinds_size(fmt) + 2 * recount_nl_usage_size() +
	       2 * recount_nl_put_runtime_size(0, false) +
	       recount_nl_put_runtime_size(fmt->version, fmt->lean);
}

static size_t recount_nl_cpu_size(const struct recount_nl_format *fmt)
{
	return nla_total_size(sizeof(u32)) + recount_nl_state_size(fmt) + recount_nl_usage_size();
}

/**
 * recount_nl_fill_size() - the most a record takes
 * @scope: what the record is of, an enum recount_scope
 * @fmt: what it carries
 *
 * recount_nl_fill_thread() and its kin write no record larger, and write
 * none if the message has less room.
 *
 * Return: the size, in bytes.
 */
size_t recount_nl_fill_size(u32 scope, const struct recount_nl_format *fmt)
{
	if (scope == RECOUNT_SCOPE_CPUS)
		return recount_nl_cpu_size(fmt);
	if (scope == RECOUNT_SCOPE_PROCESSES)
		return recount_nl_process_size(fmt);
	return recount_nl_thread_size(fmt);
}
EXPORT_SYMBOL_IF_KUNIT(recount_nl_fill_size);

/* The ids a thread's record gives, in the requester's pid namespace. */
struct recount_nl_ids {
	u32 pid;
	u32 tgid;
	u32 parent_tgid;
};

/*
 * @t's usage and runtime, written from its track rather than from a copy
 * (recount_thread_read()): 110 instructions less a record on arm64. Not
 * where there are chosen events, whose set is read after the track
 * (recount_nl_events()), nor if @t runs: its track lacks the interval in
 * progress. A kind of CPU the machine does not have stays zero in every
 * track, as in a copy. Returns the end, or NULL if @t runs.
 */
static __always_inline void *recount_nl_put_track(void *pos, struct task_struct *t,
						  u32 metrics, const struct recount_nl_format *fmt)
{
	const struct recount_thread *rt = &t->recount;
	struct recount_thread_section s;
	void *end;

	do {
		if (recount_thread_read_begin(t, &s))
			return NULL;
		end = recount_nl_put_kinds(pos, metrics, fmt, rt->kind, NULL);
		end = recount_nl_put_runtime(end, RECOUNT_A_RUNTIME,
					     recount_cpu_time(rt->kind, RECOUNT_NR_KINDS),
					     &rt->runtime, fmt->version, fmt->lean);
	} while (recount_thread_read_retry(t, &s));
	return end;
}

/*
 * The attributes of @t's record, with @ids, in @state (recount_nl_state()),
 * at @pos, which has room for recount_nl_thread_size(@fmt). Returns the end.
 */
static __always_inline void *recount_nl_write_thread(void *pos, struct task_struct *t,
						     const struct recount_nl_ids *ids, u32 state,
						     const struct recount_nl_format *fmt)
{
	u32 metrics = recount_nl_state_metrics(state);
	/* Written whole by recount_thread_read(): not zeroed before. */
	struct recount_usage usage[RECOUNT_NR_KINDS] __uninitialized;
	struct recount_runtime runtime __uninitialized;
	const struct recount_event_set *set;
	void *end;

	pos = recount_nl_u32(pos, RECOUNT_A_PID, ids->pid);
	pos = recount_nl_u32(pos, RECOUNT_A_TGID, ids->tgid);
	pos = recount_nl_u32(pos, RECOUNT_A_PARENT_TGID, ids->parent_tgid);
	pos = recount_nl_comm(pos, t);
	pos = recount_nl_u64(pos, RECOUNT_A_START_TIME, t->start_boottime, RECOUNT_A_PAD);
	if (!(metrics & RECOUNT_METRIC_EVENTS)) {
		end = recount_nl_put_state(pos, state, fmt, NULL);
		end = recount_nl_put_track(end, t, metrics, fmt);
		if (end)
			return end;
	}
	recount_thread_read(t, usage, &runtime);
	rcu_read_lock();
	set = recount_nl_events(metrics);
	pos = recount_nl_put_state(pos, state, fmt, set);
	pos = recount_nl_put_kinds(pos, metrics, fmt, usage, set);
	rcu_read_unlock();
	return recount_nl_put_runtime(pos, RECOUNT_A_RUNTIME,
				      recount_cpu_time(usage, RECOUNT_NR_KINDS), &runtime,
				      fmt->version, fmt->lean);
}

/* The record of @t, with @ids, in @state (recount_nl_state()). */
static int recount_nl_put_thread(struct sk_buff *msg, struct task_struct *t,
				 const struct recount_nl_ids *ids, u32 state,
				 const struct recount_nl_format *fmt)
{
	size_t size = recount_nl_thread_size(fmt);
	void *pos = recount_nl_begin(msg, size);

	if (!pos)
		return -EMSGSIZE;
	pos = recount_nl_write_thread(pos, t, ids, state, fmt);
	recount_nl_end(msg, pos, size);
	return 0;
}

/*
 * @t's parent, or NULL once @t is released, under rcu_read_lock(): as
 * task_ppid_nr_ns() finds it, but with thread_pid read once, as
 * __unhash_process() clears it while a read may be looking.
 */
static struct task_struct *recount_nl_parent(struct task_struct *t)
{
	return READ_ONCE(t->thread_pid) ? rcu_dereference(t->real_parent) : NULL;
}

/*
 * task_ppid_nr_ns(), racing the release of @t: see recount_nl_parent().
 * Returns true with @ppid set (0 for a parent outside @ns), or false if @t
 * has been released (its thread_pid cleared): it has no record then.
 */
static bool recount_nl_ppid(struct task_struct *t, struct pid_namespace *ns, pid_t *ppid)
{
	struct task_struct *parent;

	rcu_read_lock();
	parent = recount_nl_parent(t);
	if (parent)
		*ppid = task_tgid_nr_ns(parent, ns);
	rcu_read_unlock();
	return !!parent;
}

/*
 * The struct pid of @t's process, to compare with: task_tgid(), read once.
 * Reaping a process's leader clears it (__change_pid(), under tasklist_lock,
 * which a read does not take) while a read may be looking.
 */
static struct pid *recount_nl_group(struct task_struct *t)
{
	return READ_ONCE(t->signal->pids[PIDTYPE_TGID]);
}

/*
 * recount_nl_ppid() of the process of @leader. de_thread() releases the
 * old leader of a process that goes on: the parent is then the new
 * leader's. Returns false if the process has gone.
 */
static bool recount_nl_process_ppid(struct task_struct *leader, struct pid_namespace *ns,
				    pid_t *ppid)
{
	struct task_struct *t;
	bool found;

	if (recount_nl_ppid(leader, ns, ppid))
		return true;
	rcu_read_lock();
	t = pid_task(recount_nl_group(leader), PIDTYPE_TGID);
	found = t && recount_nl_ppid(t, ns, ppid);
	rcu_read_unlock();
	return found;
}

/*
 * The ids of @t in @ns; false once @t is released: it has no record then
 * (see recount_nl_fill_thread()).
 */
static bool recount_nl_ids_of(struct recount_nl_ids *ids, struct task_struct *t,
			      struct pid_namespace *ns)
{
	pid_t ppid;

	if (!recount_nl_ppid(t, ns, &ppid))
		return false;
	ids->pid = task_pid_nr_ns(t, ns);
	ids->tgid = task_tgid_nr_ns(t, ns);
	ids->parent_tgid = ppid;
	return ids->pid && ids->tgid;
}

/**
 * recount_nl_fill_thread() - put a thread's record in a message
 * @msg: the message
 * @t: the thread
 * @ns: the pid namespace of the pids in the record
 * @fmt: what the record carries, and what the requester may not read
 *
 * A record names its task by its ids, which are 0 once the task is reaped:
 * a task reaped since it was found has no record.
 *
 * Return: 0, -EMSGSIZE, or -ESRCH if @t was reaped.
 */
int recount_nl_fill_thread(struct sk_buff *msg, struct task_struct *t,
			   struct pid_namespace *ns, const struct recount_nl_format *fmt)
{
	struct recount_nl_ids ids;

	if (!recount_nl_ids_of(&ids, t, ns))
		return -ESRCH;
	return recount_nl_put_thread(msg, t, &ids, recount_nl_state(), fmt);
}
EXPORT_SYMBOL_IF_KUNIT(recount_nl_fill_thread);

/* The record of @leader's process, in @state (recount_nl_state()). */
static int recount_nl_put_process(struct sk_buff *msg, struct task_struct *leader,
				  struct pid_namespace *ns, u32 state,
				  const struct recount_nl_format *fmt)
{
	struct recount_usage total[RECOUNT_NR_KINDS], exited, children;
	struct recount_runtime runtime, exited_runtime, children_runtime;
	u32 metrics = recount_nl_state_metrics(state);
	pid_t tgid = task_tgid_nr_ns(leader, ns);
	pid_t ppid;
	const struct recount_event_set *set;
	size_t size = recount_nl_process_size(fmt);
	void *pos = recount_nl_begin(msg, size);

	if (!tgid || !recount_nl_process_ppid(leader, ns, &ppid))
		return -ESRCH;
	if (!pos)
		return -EMSGSIZE;
	recount_process_read(leader->signal, total, &runtime, &exited, &exited_runtime);
	recount_children_read(leader->signal, &children, &children_runtime);
	pos = recount_nl_u32(pos, RECOUNT_A_TGID, tgid);
	pos = recount_nl_u32(pos, RECOUNT_A_PARENT_TGID, ppid);
	pos = recount_nl_comm(pos, leader);
	pos = recount_nl_u64(pos, RECOUNT_A_START_TIME, leader->start_boottime, RECOUNT_A_PAD);
	rcu_read_lock();
	set = recount_nl_events(metrics);
	pos = recount_nl_put_state(pos, state, fmt, set);
	pos = recount_nl_put_kinds(pos, metrics, fmt, total, set);
	pos = recount_nl_put_usage(pos, RECOUNT_A_EXITED, metrics, fmt->withheld, &exited, -1,
				   NULL, set);
	pos = recount_nl_put_runtime(pos, RECOUNT_A_EXITED_RUNTIME, recount_cpu_time(&exited, 1),
				     &exited_runtime, 0, false);
	pos = recount_nl_put_usage(pos, RECOUNT_A_CHILDREN, metrics, fmt->withheld, &children, -1,
				   NULL, set);
	rcu_read_unlock();
	pos = recount_nl_put_runtime(pos, RECOUNT_A_CHILDREN_RUNTIME,
				     recount_cpu_time(&children, 1), &children_runtime, 0, false);
	pos = recount_nl_put_runtime(pos, RECOUNT_A_RUNTIME,
				     recount_cpu_time(total, RECOUNT_NR_KINDS), &runtime,
				     fmt->version, fmt->lean);
	recount_nl_end(msg, pos, size);
	return 0;
}

/**
 * recount_nl_fill_process() - put a process's record in a message
 * @msg: the message
 * @leader: a thread of the process, its leader for the command name
 * @ns: the pid namespace of the pids in the record
 * @fmt: what the record carries, and what the requester may not read
 *
 * Return: 0, -EMSGSIZE, or -ESRCH if the process has gone (see
 * recount_nl_fill_thread()).
 */
int recount_nl_fill_process(struct sk_buff *msg, struct task_struct *leader,
			    struct pid_namespace *ns, const struct recount_nl_format *fmt)
{
	return recount_nl_put_process(msg, leader, ns, recount_nl_state(), fmt);
}
EXPORT_SYMBOL_IF_KUNIT(recount_nl_fill_process);

/**
 * recount_nl_record_size() - the size of the largest record
 *
 * A thread's, process's or CPU's record with everything it may carry: ids,
 * command name, state, its usage, a usage per kind, its exited threads' and
 * its children's, the three runtimes and the runtime struct, and the
 * attributes of an exit record. Exit records are allocated this size, and
 * a reply the size of its record, rather than a page: taskstats sizes its
 * replies the same way, and netlink_unicast() reallocates a reply that
 * leaves most of its room unused.
 *
 * Return: the size of the payload, in bytes.
 */
size_t recount_nl_record_size(void)
{
	const struct recount_nl_format all = {
		.version = RECOUNT_RUNTIME_VERSION,
		.state = true,
	};

	return max3(recount_nl_thread_size(&all), recount_nl_process_size(&all),
		    recount_nl_cpu_size(&all)) +
	       nla_total_size(sizeof(u32)) +		/* exit code */
	       2 * nla_total_size_64bit(sizeof(u64));	/* exit time, missed */
}
EXPORT_SYMBOL_IF_KUNIT(recount_nl_record_size);

/* The record of @cpu, in @state (recount_nl_state()). */
static int recount_nl_put_cpu(struct sk_buff *msg, unsigned int cpu, u32 state,
			      const struct recount_nl_format *fmt)
{
	u32 metrics = recount_nl_state_metrics(state);
	size_t size = recount_nl_cpu_size(fmt);
	void *pos = recount_nl_begin(msg, size);
	const struct recount_event_set *set;
	struct recount_cpu_usage cu;

	if (!pos)
		return -EMSGSIZE;
	recount_cpu_read(cpu, &cu);
	pos = recount_nl_u32(pos, RECOUNT_A_CPU, cpu);
	rcu_read_lock();
	set = recount_nl_events(metrics);
	pos = recount_nl_put_state(pos, state, fmt, set);
	pos = recount_nl_put_usage(pos, RECOUNT_A_USAGE, metrics, fmt->withheld, &cu.usage,
				   cu.kind, &cu, set);
	rcu_read_unlock();
	recount_nl_end(msg, pos, size);
	return 0;
}

/**
 * recount_nl_fill_cpu() - put a CPU's record in a message
 * @msg: the message
 * @cpu: the CPU
 * @fmt: what the record carries, and what the requester may not read
 *
 * Return: 0, or -EMSGSIZE.
 */
int recount_nl_fill_cpu(struct sk_buff *msg, unsigned int cpu,
			const struct recount_nl_format *fmt)
{
	return recount_nl_put_cpu(msg, cpu, recount_nl_state(), fmt);
}
EXPORT_SYMBOL_IF_KUNIT(recount_nl_fill_cpu);

/*
 * Hold @t's exec_update_lock for reading across a permission check and the
 * record it allows, as /proc/PID/io and perf_event_open() hold it: an exec
 * makes its task another program, with other credentials (set-user-ID),
 * under it. Without it a read may find a task readable before the exec and
 * fill its record after. Called under rcu_read_lock(), which keeps @t from
 * being freed. While an exec holds the lock (or waits for it), waits for
 * it out of the read section, with a reference to @t that
 * recount_nl_exec_unlock() drops: what the read section found before, but
 * @t, must be found again; and @t may no longer be what its id names
 * (recount_nl_exec_lock_task()).
 *
 * Return: 0 with the lock held, 1 with it held after a wait, or -EINTR (a
 * fatal signal came while it waited) without it.
 */
static int recount_nl_exec_lock(struct task_struct *t)
{
	struct rw_semaphore *sem = &t->signal->exec_update_lock;

	if (likely(down_read_trylock(sem)))
		return 0;
	get_task_struct(t);
	rcu_read_unlock();
	if (down_read_killable(sem)) {
		put_task_struct(t);
		rcu_read_lock();
		return -EINTR;
	}
	rcu_read_lock();
	return 1;
}

/* Release what recount_nl_exec_lock() returned @waited (0 or 1) with. */
static void recount_nl_exec_unlock(struct task_struct *t, int waited)
{
	up_read(&t->signal->exec_update_lock);
	if (waited)
		put_task_struct(t);
}

/*
 * recount_nl_exec_lock() of @t, found by @type. A thread that executes
 * takes its process's leader's place (de_thread()) before it takes the
 * lock, and the old leader keeps its credentials: a process (PIDTYPE_TGID)
 * is read by its leader of when the lock is held, found again by the
 * process's struct pid. Returns the task locked, with *@waited, NULL if the
 * process is gone, or ERR_PTR(-EINTR).
 */
static struct task_struct *recount_nl_exec_lock_task(struct task_struct *t, enum pid_type type,
						     int *waited)
{
	struct task_struct *leader;

	for (;;) {
		*waited = recount_nl_exec_lock(t);
		if (*waited < 0)
			return ERR_PTR(*waited);
		if (type != PIDTYPE_TGID || READ_ONCE(t->group_leader) == t)
			return t;
		leader = pid_task(READ_ONCE(t->signal->pids[PIDTYPE_TGID]), PIDTYPE_TGID);
		recount_nl_exec_unlock(t, *waited);
		if (!leader)
			return NULL;
		t = leader;
	}
}

/*
 * Find the thread (PIDTYPE_PID) or process leader (PIDTYPE_TGID) that @attr
 * names in the caller's pid namespace, if the caller may read it. Called
 * under rcu_read_lock(), which keeps it from being freed: no reference is
 * taken, unless an exec was under way (*@waited: see recount_nl_exec_lock(),
 * whose lock it returns with). Returns it, or an ERR_PTR with the reason in
 * extack.
 */
static struct task_struct *recount_nl_find_task(const struct sk_buff *skb, struct genl_info *info,
						int attr, enum pid_type type, int *waited)
{
	struct nlattr *nla = info->attrs[attr];
	struct task_struct *t;

	t = pid_task(find_vpid(nla_get_u32(nla)), type);
	if (!t) {
		if (type == PIDTYPE_PID)
			NL_SET_ERR_MSG_ATTR(info->extack, nla, "no such thread");
		else
			NL_SET_ERR_MSG_ATTR(info->extack, nla, "no such process");
		return ERR_PTR(-ESRCH);
	}
	t = recount_nl_exec_lock_task(t, type, waited);
	if (!t) {
		NL_SET_ERR_MSG_ATTR(info->extack, nla, "no such process");
		return ERR_PTR(-ESRCH);
	}
	if (IS_ERR(t)) {
		NL_SET_ERR_MSG_ATTR(info->extack, nla, "interrupted waiting for the task's exec");
		return t;
	}
	if (!ptrace_may_access(t, PTRACE_MODE_READ_FSCREDS) ||
	    !recount_nl_opener_may_read(t, recount_nl_opener(skb, current_cred()))) {
		recount_nl_exec_unlock(t, *waited);
		NL_SET_ERR_MSG_ATTR(info->extack, nla,
				    "not allowed to read this task (needs ptrace read access)");
		return ERR_PTR(-EACCES);
	}
	return t;
}

/*
 * Fill the record of the thread or process @sel names, under RCU: neither
 * the permission check (task_lock()) nor filling the record blocks but on a
 * spinlock_t, which PREEMPT_RT allows inside RCU, once the task's
 * exec_update_lock is held (recount_nl_exec_lock()). Values of the caller and
 * its process include this moment; others' do not depend on it: they are
 * spared the accounting point, which reads the PMU counters.
 */
static int recount_nl_fill_task(struct sk_buff *msg, const struct sk_buff *skb,
				struct genl_info *info, int sel,
				const struct recount_nl_format *fmt)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	struct recount_nl_format f = *fmt;
	struct task_struct *t;
	int err, waited = 0;

	rcu_read_lock();
	t = recount_nl_find_task(skb, info, sel, sel == RECOUNT_A_PID ? PIDTYPE_PID : PIDTYPE_TGID,
				 &waited);
	/* What perf refuses of a CPU, asked only where it applies. */
	if (!IS_ERR(t) && unlikely(READ_ONCE(t->signal->recount.pmu_private)))
		f.withheld |= recount_nl_withheld(skb, true);
	if (IS_ERR(t)) {
		err = PTR_ERR(t);
	} else if (sel == RECOUNT_A_PID) {
		if (t == current)
			recount_update_current();
		err = recount_nl_fill_thread(msg, t, ns, &f);
		/* Reaped since it was found: as if it had not been found. */
		if (err == -ESRCH)
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[sel], "no such thread");
	} else {
		if (same_thread_group(t, current))
			recount_update_current();
		err = recount_nl_fill_process(msg, t, ns, &f);
		if (err == -ESRCH)
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[sel], "no such process");
	}
	if (!IS_ERR(t))
		recount_nl_exec_unlock(t, waited);
	rcu_read_unlock();
	return err;
}

static int recount_nl_check_cpu(struct genl_info *info, unsigned int cpu)
{
	struct nlattr *nla = info->attrs[RECOUNT_A_CPU];

	if (cpu >= nr_cpu_ids || !cpu_possible(cpu)) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, nla,
					"no CPU %u (/sys/devices/system/cpu/possible lists them)",
					cpu);
		return -EINVAL;
	}
	if (!cpu_present(cpu)) {
		NL_SET_ERR_MSG_ATTR(info->extack, nla, "CPU not present");
		return -ENODEV;
	}
	return 0;
}

/* Exactly one of pid, tgid and cpu selects the record. */
static int recount_nl_selector(struct genl_info *info)
{
	static const int selectors[] = { RECOUNT_A_PID, RECOUNT_A_TGID, RECOUNT_A_CPU };
	int i, found = 0;

	for (i = 0; i < ARRAY_SIZE(selectors); i++) {
		if (!info->attrs[selectors[i]])
			continue;
		if (found) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[selectors[i]],
					    "pid, tgid and cpu are mutually exclusive");
			return -EINVAL;
		}
		found = selectors[i];
	}
	if (!found) {
		NL_SET_ERR_MSG(info->extack, "one of pid, tgid or cpu is required");
		return -EINVAL;
	}
	return found;
}

/**
 * recount_nl_get_doit() - handle RECOUNT_CMD_GET
 * @skb: the request
 * @info: the request's attributes, extack and sender
 *
 * Return: 0 with the record sent as reply, or a negative errno with the reason
 * in extack.
 */
int recount_nl_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *ver = info->attrs[RECOUNT_A_RUNTIME_VERSION];
	struct recount_nl_format fmt = {
		.state = true,
		.lean = nla_get_flag(info->attrs[RECOUNT_A_LEAN]),
	};
	struct sk_buff *msg;
	unsigned int cpu = 0;
	u32 version = 0;
	int sel, err;
	void *hdr;

	sel = recount_nl_selector(info);
	if (sel < 0)
		return sel;

	if (ver) {
		version = nla_get_u32(ver);
		if (sel == RECOUNT_A_CPU) {
			NL_SET_ERR_MSG_ATTR(info->extack, ver,
					    "a CPU has no runtime: runtime-version goes with pid or tgid");
			return -EINVAL;
		}
		if (version > RECOUNT_RUNTIME_VERSION) {
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, ver,
						"unknown runtime version %u: this kernel knows versions 1 to %u",
						version, RECOUNT_RUNTIME_VERSION);
			return -EINVAL;
		}
	}
	if (sel == RECOUNT_A_CPU) {
		cpu = nla_get_u32(info->attrs[RECOUNT_A_CPU]);
		err = recount_nl_check_cpu(info, cpu);
		if (err)
			return err;
	}

	fmt.version = version;
	fmt.withheld = recount_nl_withheld(skb, sel == RECOUNT_A_CPU);
	msg = genlmsg_new(recount_nl_fill_size(sel == RECOUNT_A_CPU ? RECOUNT_SCOPE_CPUS :
					       sel == RECOUNT_A_PID ? RECOUNT_SCOPE_THREADS :
					       RECOUNT_SCOPE_PROCESSES, &fmt),
			  GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr) {
		err = -EMSGSIZE;
		goto out_free;
	}

	if (sel == RECOUNT_A_CPU) {
		if (cpu == raw_smp_processor_id())
			recount_update_current();
		err = recount_nl_fill_cpu(msg, cpu, &fmt);
	} else {
		err = recount_nl_fill_task(msg, skb, info, sel, &fmt);
	}
	if (err)
		goto out_free;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

out_free:
	nlmsg_free(msg);
	return err;
}

/**
 * recount_nl_kind_cpus_size() - the room of get-info's CPU lists of the kinds
 * @kinds: the CPUs of each kind, bitmaps of @nbits bits
 * @nbits: the bitmaps' length
 *
 * A list of scattered CPUs (0,2,4,...) takes up to 5 bytes a CPU: on a large
 * machine, more than a page.
 *
 * Return: the bytes recount_nl_put_kind_cpus() puts.
 */
size_t recount_nl_kind_cpus_size(const unsigned long *const kinds[RECOUNT_NR_KINDS],
				 unsigned int nbits)
{
	size_t size = 0;
	int k;

	for (k = 0; k < RECOUNT_NR_KINDS; k++)
		size += nla_total_size(0) + nla_total_size(sizeof(u32)) +
			nla_total_size(snprintf(NULL, 0, "%*pbl", nbits, kinds[k]) + 1);
	return size;
}
EXPORT_SYMBOL_IF_KUNIT(recount_nl_kind_cpus_size);

/**
 * recount_nl_put_kind_cpus() - put get-info's CPU lists of the kinds
 * @msg: the reply, with the room recount_nl_kind_cpus_size() says
 * @kinds: the CPUs of each kind, bitmaps of @nbits bits
 * @nbits: the bitmaps' length
 *
 * Each list is written in place, in the %*pbl format (0-3,8).
 *
 * Return: 0, or -EMSGSIZE.
 */
int recount_nl_put_kind_cpus(struct sk_buff *msg,
			     const unsigned long *const kinds[RECOUNT_NR_KINDS],
			     unsigned int nbits)
{
	struct nlattr *nest, *list;
	int k, len;

	for (k = 0; k < RECOUNT_NR_KINDS; k++) {
		len = snprintf(NULL, 0, "%*pbl", nbits, kinds[k]) + 1;
		/* The nest's length is 16 bits, as any attribute's. */
		if (NLA_HDRLEN + nla_total_size(sizeof(u32)) + nla_total_size(len) > U16_MAX)
			return -EMSGSIZE;
		nest = nla_nest_start(msg, RECOUNT_A_KIND_CPUS);
		if (!nest || nla_put_u32(msg, RECOUNT_A_KIND_CPUS_KIND, k))
			return -EMSGSIZE;
		list = nla_reserve(msg, RECOUNT_A_KIND_CPUS_CPUS, len);
		if (!list)
			return -EMSGSIZE;
		snprintf(nla_data(list), len, "%*pbl", nbits, kinds[k]);
		nla_nest_end(msg, nest);
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(recount_nl_put_kind_cpus);

/* The chosen events, their generation, how many may be, the counters held. */
static int recount_nl_put_event_set(struct sk_buff *msg)
{
	const struct recount_event_set *set;
	const struct recount_event_spec *spec;
	struct nlattr *nest;
	int e, err = 0;

	rcu_read_lock();
	set = rcu_dereference(recount_events);
	for (e = 0; e < set->nr && !err; e++) {
		spec = &set->event[e];
		nest = nla_nest_start(msg, RECOUNT_A_EVENT);
		if (!nest ||
		    nla_put_u32(msg, RECOUNT_A_EVENT_INDEX, e) ||
		    nla_put_u32(msg, RECOUNT_A_EVENT_TYPE, spec->type) ||
		    nla_put_u64_64bit(msg, RECOUNT_A_EVENT_CONFIG, spec->config,
				      RECOUNT_A_EVENT_PAD) ||
		    nla_put_u32(msg, RECOUNT_A_EVENT_MODE, spec->mode))
			err = -EMSGSIZE;
		else
			nla_nest_end(msg, nest);
	}
	if (!err && nla_put_u32(msg, RECOUNT_A_EVENT_GEN, set->gen))
		err = -EMSGSIZE;
	rcu_read_unlock();
	if (err ||
	    nla_put_u32(msg, RECOUNT_A_MAX_EVENTS, RECOUNT_NR_EVENTS) ||
	    nla_put_u32(msg, RECOUNT_A_PMU_COUNTERS, recount_pmu_held()))
		return -EMSGSIZE;
	return 0;
}

/**
 * recount_nl_set_events_doit() - handle RECOUNT_CMD_SET_EVENTS
 * @skb: the request
 * @info: the request's attributes, extack and sender
 *
 * The request's event nests, validated by the policy, in order: each needs
 * a type and a config; the mode is all if absent; an index, if given, must
 * be its place; counts are refused.
 *
 * Return: 0 once the events are chosen, or a negative errno.
 */
int recount_nl_set_events_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct recount_event_spec spec[RECOUNT_NR_EVENTS];
	struct nlattr *tb[RECOUNT_A_EVENT_MAX + 1];
	unsigned int nr = 0;
	struct nlattr *a;
	int rem, err;

	nlmsg_for_each_attr_type(a, RECOUNT_A_EVENT, info->nlhdr, GENL_HDRLEN, rem) {
		if (nr == RECOUNT_NR_EVENTS) {
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, a, "at most %d events may be chosen",
						RECOUNT_NR_EVENTS);
			return -E2BIG;
		}
		err = nla_parse_nested(tb, RECOUNT_A_EVENT_MAX, a, recount_event_nl_policy,
				       info->extack);
		if (err)
			return err;
		if (NL_REQ_ATTR_CHECK(info->extack, a, tb, RECOUNT_A_EVENT_TYPE) ||
		    NL_REQ_ATTR_CHECK(info->extack, a, tb, RECOUNT_A_EVENT_CONFIG)) {
			NL_SET_ERR_MSG_ATTR(info->extack, a, "an event needs a type and a config");
			return -EINVAL;
		}
		/* The reply's attributes: an index is the event's place, counts are read. */
		if ((tb[RECOUNT_A_EVENT_INDEX] && nla_get_u32(tb[RECOUNT_A_EVENT_INDEX]) != nr) ||
		    tb[RECOUNT_A_EVENT_USER] || tb[RECOUNT_A_EVENT_KERNEL]) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "an event is chosen by its type, config and mode; its index is its place");
			return -EINVAL;
		}
		spec[nr] = (struct recount_event_spec){
			.type = nla_get_u32(tb[RECOUNT_A_EVENT_TYPE]),
			.config = nla_get_u64(tb[RECOUNT_A_EVENT_CONFIG]),
			.mode = tb[RECOUNT_A_EVENT_MODE] ? nla_get_u32(tb[RECOUNT_A_EVENT_MODE]) :
				RECOUNT_EVENT_MODE_ALL,
		};
		nr++;
	}
	return recount_events_choose(spec, nr, skb, info->extack);
}

/**
 * recount_nl_get_info_doit() - handle RECOUNT_CMD_GET_INFO
 * @skb: the request
 * @info: the request's attributes, extack and sender
 *
 * Return: 0 with what this kernel counts sent as reply, or a negative errno.
 */
int recount_nl_get_info_doit(struct sk_buff *skb, struct genl_info *info)
{
	const struct recount_nl_format state = { .state = true };
	const unsigned long *kinds[RECOUNT_NR_KINDS];
	struct sk_buff *msg;
	void *hdr, *pos;
	int k;

	for (k = 0; k < RECOUNT_NR_KINDS; k++)
		kinds[k] = cpumask_bits(&recount_kind_cpus[k]);
	/* A page for the rest; the lists can be longer. */
	msg = genlmsg_new(NLMSG_GOODSIZE + recount_nl_kind_cpus_size(kinds, nr_cpu_ids),
			  GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr)
		goto nospace;
	pos = recount_nl_begin(msg, recount_nl_state_size(&state));
	if (!pos)
		goto nospace;
	recount_nl_end(msg, recount_nl_put_state(pos, recount_nl_state(), &state, NULL),
		       recount_nl_state_size(&state));
	if (nla_put_u32(msg, RECOUNT_A_LISTENERS,
			recount_nr_sockets_listening(genl_info_net(info))))
		goto nospace;
	if (recount_nl_put_kind_cpus(msg, kinds, nr_cpu_ids))
		goto nospace;
	if (recount_nl_put_event_set(msg))
		goto nospace;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/*
 * The dump of RECOUNT_CMD_GET lists tasks in the order of their pids, or
 * CPUs in theirs, and resumes from the next one: every task that lives
 * through the dump is listed once, whatever comes and goes meanwhile, and
 * each record is read whole (as a get reads it). No message is flagged
 * NLM_F_DUMP_INTR: there is nothing a retry would make more consistent, and
 * clients retry on it (libmnl returns EINTR), which on a busy host would
 * never end.
 *
 * After its first message, a dump goes on in whoever reads the socket,
 * which may be another process (the socket passed on, or inherited) in
 * another pid namespace, with other credentials. The dump pins the
 * requester's when it starts and lists, for its whole length, what the
 * requester could read, with the requester's pids.
 *
 * A dump of one process's threads walks no other task: it takes the ids of
 * the process's threads when it starts, in order, and lists those of them
 * that are still threads of the process. That costs 4 bytes per thread,
 * charged to the requester, until the dump ends.
 */
struct recount_dump_tids {
	struct pid *group;
	u32 nr;
	u32 tid[] __counted_by(nr);
};

struct recount_dump_ctx {
	const struct cred *cred;
	struct pid_namespace *ns;
	/* The requester's address space, held by mmgrab(): an exec replaces it */
	struct mm_struct *mm;
	struct recount_dump_tids *tids;
	struct recount_nl_format fmt;
	u8 scope;
	/* The socket's opener is judged too: recount_nl_opener(). */
	bool opener;
	/* recount_nl_task_withheld()'s, for fmt.withheld */
	u8 withheld, withheld_private;
	unsigned int next;
};

static_assert(sizeof(struct recount_dump_ctx) <= sizeof_field(struct netlink_callback, ctx));

static struct recount_dump_ctx *recount_dump_ctx(struct netlink_callback *cb)
{
	return (struct recount_dump_ctx *)cb->ctx;
}

/*
 * The headers of a record, as genlmsg_put() writes them for a family with
 * no header of its own (hdrsize 0), but inline: the calls cost 79
 * instructions a record on arm64. The caller checked the room.
 */
static __always_inline struct nlmsghdr *
__recount_nl_dump_hdr(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)skb_tail_pointer(skb);
	struct genlmsghdr *hdr = nlmsg_data(nlh);

	BUILD_BUG_ON(NLMSG_ALIGN(GENL_HDRLEN) != GENL_HDRLEN);
	nlh->nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
	nlh->nlmsg_type = recount_nl_family.id;
	nlh->nlmsg_flags = NLM_F_MULTI;
	nlh->nlmsg_seq = cb->nlh->nlmsg_seq;
	nlh->nlmsg_pid = NETLINK_CB(cb->skb).portid;
	hdr->cmd = RECOUNT_CMD_GET;
	hdr->version = recount_nl_family.version;
	hdr->reserved = 0;
	__skb_put(skb, NLMSG_HDRLEN + GENL_HDRLEN);
	return nlh;
}

static __always_inline struct nlmsghdr *
recount_nl_dump_hdr(struct sk_buff *skb, struct netlink_callback *cb)
{
	if (skb_tailroom(skb) < NLMSG_HDRLEN + GENL_HDRLEN)
		return NULL;
	return __recount_nl_dump_hdr(skb, cb);
}

/*
 * A lean dump gives the state in its first record, and again in a record
 * written after it changed (recount switched off, the PMU or the power
 * model changed meanwhile).
 */
static __always_inline void recount_nl_dump_state(struct recount_dump_ctx *ctx, u32 state)
{
	ctx->fmt.state = !ctx->fmt.lean || state != ctx->fmt.sent;
}

/*
 * The state the records of @t's process are written in: with what the
 * requester may not read of their PMU counts (recount_nl_task_withheld()),
 * which a lean dump gives again where it changes, in bits 24 to 30.
 */
static __always_inline u32 recount_nl_dump_task_state(struct recount_dump_ctx *ctx, u32 state,
						      struct task_struct *t)
{
	BUILD_BUG_ON((RECOUNT_WITHHELD_USER_PMU | RECOUNT_WITHHELD_KERNEL_PMU) > 0x7f);
	ctx->fmt.withheld = recount_nl_task_withheld(t, ctx->withheld, ctx->withheld_private);
	return state | (u32)ctx->fmt.withheld << 24;
}

/*
 * A record of @t or @cpu, in @state; of @t with @ids if given. A dump of a
 * process's threads takes the state once per batch of RECOUNT_DUMP_BATCH
 * threads, other dumps once per record: it costs 40 instructions a record
 * on arm64, and changes only by a sysctl or a set-events request, which
 * nothing orders against any one record's read anyway.
 */
static int recount_nl_dump_one(struct sk_buff *skb, struct netlink_callback *cb,
			       struct recount_dump_ctx *ctx, u32 state, struct task_struct *t,
			       const struct recount_nl_ids *ids, unsigned int cpu)
{
	struct recount_nl_ids own;
	struct nlmsghdr *nlh;
	int err;

	nlh = recount_nl_dump_hdr(skb, cb);
	if (!nlh)
		return -EMSGSIZE;
	recount_nl_dump_state(ctx, state);
	if (ctx->scope == RECOUNT_SCOPE_CPUS)
		err = recount_nl_put_cpu(skb, cpu, state, &ctx->fmt);
	else if (ctx->scope == RECOUNT_SCOPE_PROCESSES)
		err = recount_nl_put_process(skb, t, ctx->ns, state, &ctx->fmt);
	else if (!ids && !recount_nl_ids_of(&own, t, ctx->ns))
		err = -ESRCH;
	else
		err = recount_nl_put_thread(skb, t, ids ?: &own, state, &ctx->fmt);
	if (err) {
		nlmsg_cancel(skb, nlh);
		/* A task reaped as it is read is not listed. */
		return err == -ESRCH ? 0 : err;
	}
	nlmsg_end(skb, nlh);
	ctx->fmt.sent = state;
	return 0;
}

/*
 * May the requester read @t? Runs with the requester's credentials as
 * current's subjective ones. A dump lists what the requester may read and
 * skips the rest silently, as /proc does (PTRACE_MODE_NOAUDIT; a security
 * module that audits its ptrace denials whatever the mode, as SELinux does,
 * logs them as it does for /proc). ptrace_may_access() lets current read
 * its own thread group: that is right where current is the requester's
 * process with the address space it had (any of its threads), not where
 * the requester passed the socket to another process, nor where its
 * process executed another program since, whose credentials are new ones.
 * There current's threads are judged by the credentials pinned, as
 * recount_nl_may_read_current() judges current, and the requester's
 * threads read by another process as those of any other task: what the
 * requester's process made undumpable since (executing a set-user-ID
 * program) is not listed. Where the request was written by another than
 * the socket's opener, the opener must be allowed to read a task too
 * (recount_nl_opener()). Inline: a call costs a dump 18 instructions a
 * record on arm64.
 */
static __always_inline bool recount_nl_dump_may_read(struct netlink_callback *cb,
						     struct recount_dump_ctx *ctx,
						     struct task_struct *t)
{
	bool ok;

	if (same_thread_group(t, current))
		ok = current->mm == ctx->mm || recount_nl_may_read_current(ctx->cred);
	else
		ok = ptrace_may_access(t, PTRACE_MODE_READ_FSCREDS | PTRACE_MODE_NOAUDIT);
	return ok && (!ctx->opener ||
		      recount_nl_opener_may_read(t, recount_nl_opener(cb->skb, ctx->cred)));
}

/*
 * Under RCU: @t cannot be freed before rcu_read_unlock(), and neither the
 * permission check nor filling the record blocks but on a spinlock_t
 * (task_lock(); for a process, its recount.moved, while one of its threads
 * starts exiting), which PREEMPT_RT allows inside RCU. No reference is
 * taken, unless @t's process is executing (recount_nl_exec_lock()).
 */
static int recount_nl_dump_one_task(struct sk_buff *skb, struct netlink_callback *cb,
				    struct recount_dump_ctx *ctx, u32 state,
				    struct task_struct *t, const struct recount_nl_ids *ids)
{
	int waited, err = 0;

	t = recount_nl_exec_lock_task(t, ctx->scope == RECOUNT_SCOPE_PROCESSES ?
				      PIDTYPE_TGID : PIDTYPE_PID, &waited);
	if (IS_ERR_OR_NULL(t))
		return PTR_ERR_OR_ZERO(t);
	/* It may have changed while the dump waited. */
	if (waited)
		state = recount_nl_state();
	if (recount_nl_dump_may_read(cb, ctx, t))
		err = recount_nl_dump_one(skb, cb, ctx, recount_nl_dump_task_state(ctx, state, t),
					  t, ids, 0);
	recount_nl_exec_unlock(t, waited);
	return err;
}

/*
 * The record of @t, a thread of the process a dump is filtered by, with
 * @ids, as recount_nl_dump_one() writes it, but with the headers and the
 * attributes under one room check, for @size, the most a thread's record
 * of the dump takes: 40 instructions less a record on arm64.
 */
static int recount_nl_dump_thread(struct sk_buff *skb, struct netlink_callback *cb,
				  struct recount_dump_ctx *ctx, u32 state,
				  struct task_struct *t, const struct recount_nl_ids *ids,
				  size_t size)
{
	struct nlmsghdr *nlh;
	void *pos;

	if (skb_tailroom(skb) < NLMSG_HDRLEN + GENL_HDRLEN + size)
		return -EMSGSIZE;
	recount_nl_dump_state(ctx, state);
	nlh = __recount_nl_dump_hdr(skb, cb);
	pos = recount_nl_write_thread(skb_tail_pointer(skb), t, ids, state, &ctx->fmt);
	recount_nl_end(skb, pos, size);
	nlmsg_end(skb, nlh);
	ctx->fmt.sent = state;
	return 0;
}

/* Records a dump writes under one rcu_read_lock(), between cond_resched()s. */
#define RECOUNT_DUMP_BATCH	32

/*
 * task_pid_nr_ns() under rcu_read_lock(), without its calls: 0 once @t is
 * being released. In the initial pid namespace, the id @t caches, 15
 * instructions less on arm64. exchange_tids() (de_thread()) changes it
 * after the struct pid, not with it: racing an exec, a read may pair @t
 * with the other thread's id, as two reads of thread_pid across the two
 * threads could; the dump's start sorts out the duplicate this makes.
 */
static __always_inline pid_t recount_nl_tid(struct task_struct *t, struct pid_namespace *ns)
{
	struct pid *pid = READ_ONCE(t->thread_pid);

	if (ns == &init_pid_ns)
		return pid ? READ_ONCE(t->pid) : 0;
	return pid_nr_ns(pid, ns);
}

/*
 * The thread @tid, in @ns: usually the one after @prev in its process's
 * thread list, when there is a @prev. A lookup by id costs 90 instructions on
 * arm64, a look at the next thread 30. Under rcu_read_lock(), which keeps
 * @prev readable, and its successor, even if it exits meanwhile.
 */
static struct task_struct *recount_nl_next_thread(struct task_struct *prev, u32 tid,
						  struct pid_namespace *ns)
{
	struct task_struct *t = prev ? __next_thread(prev) : NULL;

	if (t && recount_nl_tid(t, ns) == tid)
		return t;
	return find_task_by_pid_ns(tid, ns);
}

/* The threads of the process a dump is filtered by, taken at its start. */
static int recount_nl_dump_threads_of(struct sk_buff *skb, struct netlink_callback *cb,
				      struct recount_dump_ctx *ctx)
{
	struct recount_dump_tids *tids = ctx->tids;
	struct task_struct *t, *parent, *last, *leader;
	struct recount_nl_format most = ctx->fmt;
	struct recount_nl_ids ids;
	int err = 0, n, waited;
	size_t size;
	u32 state;

	/* With the state, which a lean dump's record may leave out. */
	most.state = true;
	size = recount_nl_thread_size(&most);

	/*
	 * Every thread has the process's tgid, and mostly its parent: the
	 * parent's tgid is looked up again only where a thread's parent is
	 * another than the last one's, while the same rcu_read_lock() keeps
	 * the last one from being freed and its pointer from being reused.
	 * The threads share their process's exec_update_lock, held a batch at
	 * a time: by the process's leader, which is there while any of them
	 * is (de_thread() hands its place to the thread that executes).
	 */
	ids.tgid = pid_nr_ns(tids->group, ctx->ns);
	rcu_read_lock();
	while (ctx->next < tids->nr) {
		leader = pid_task(tids->group, PIDTYPE_TGID);
		if (!leader)
			break;
		waited = recount_nl_exec_lock(leader);
		if (waited < 0) {
			err = waited;
			break;
		}
		state = recount_nl_dump_task_state(ctx, recount_nl_state(), leader);
		t = NULL;
		last = NULL;
		for (n = 0; n < RECOUNT_DUMP_BATCH && ctx->next < tids->nr; n++, ctx->next++) {
			ids.pid = tids->tid[ctx->next];
			t = recount_nl_next_thread(t, ids.pid, ctx->ns);
			parent = NULL;
			if (t && recount_nl_group(t) == tids->group)
				parent = recount_nl_parent(t);
			/* NULL too once @t is released: it is not listed then. */
			if (parent) {
				if (parent != last)
					ids.parent_tgid = task_tgid_nr_ns(parent, ctx->ns);
				last = parent;
				/* As recount_nl_dump_one_task(). */
				if (recount_nl_dump_may_read(cb, ctx, t))
					err = recount_nl_dump_thread(skb, cb, ctx, state, t, &ids,
								     size);
			}
			if (err)
				break;
		}
		recount_nl_exec_unlock(leader, waited);
		if (err)
			break;
		rcu_read_unlock();
		cond_resched();
		rcu_read_lock();
	}
	rcu_read_unlock();
	return err;
}

static int recount_nl_dump_tasks(struct sk_buff *skb, struct netlink_callback *cb,
				 struct recount_dump_ctx *ctx)
{
	enum pid_type type = ctx->scope == RECOUNT_SCOPE_PROCESSES ? PIDTYPE_TGID : PIDTYPE_PID;
	struct pid_namespace *ns = ctx->ns;
	const struct cred *old;
	struct task_struct *t;
	struct pid *pid;
	unsigned int nr;
	int err = 0;

	old = override_creds(ctx->cred);
	if (ctx->tids) {
		err = recount_nl_dump_threads_of(skb, cb, ctx);
		revert_creds(old);
		return err;
	}
	for (;;) {
		rcu_read_lock();
		pid = find_ge_pid(ctx->next, ns);
		if (!pid) {
			rcu_read_unlock();
			break;
		}
		nr = pid_nr_ns(pid, ns);
		t = pid_task(pid, type);
		if (t)
			err = recount_nl_dump_one_task(skb, cb, ctx, recount_nl_state(),
						       t, NULL);
		rcu_read_unlock();
		if (err)
			break;
		ctx->next = nr + 1;
		cond_resched();
	}
	revert_creds(old);
	return err;
}

static int recount_nl_cmp_tid(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The ids of @tgid's threads in current's pid namespace, in order, and its
 * pid, pinned. The process may gain threads between the count and the
 * walk: then try again with room for twice as many, which ends, as
 * threads-max bounds them.
 */
static struct recount_dump_tids *recount_nl_tids_of(u32 tgid)
{
	struct recount_dump_tids *tids;
	struct pid_namespace *ns = task_active_pid_ns(current);
	struct task_struct *leader, *t;
	unsigned int room = 0, n, i, k;
	struct pid *group;
	bool full, sorted;

	for (;;) {
		rcu_read_lock();
		leader = pid_task(find_pid_ns(tgid, ns), PIDTYPE_TGID);
		/* Racing clones and exits, which the walk allows for. */
		n = leader ? data_race(get_nr_threads(leader)) : 0;
		rcu_read_unlock();
		if (!leader)
			return ERR_PTR(-ESRCH);
		room = max(n + n / 8 + 8, 2 * room);
		tids = kvmalloc(struct_size(tids, tid, room), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!tids)
			return ERR_PTR(-ENOMEM);
		tids->group = NULL;
		tids->nr = room;
		n = 0;
		full = false;
		sorted = true;
		rcu_read_lock();
		group = find_pid_ns(tgid, ns);
		leader = pid_task(group, PIDTYPE_TGID);
		if (leader) {
			for_each_thread(leader, t) {
				if (n == room) {
					full = true;
					break;
				}
				tids->tid[n] = recount_nl_tid(t, ns);
				/* 0: the thread is being released. */
				if (!tids->tid[n])
					continue;
				if (n && tids->tid[n - 1] >= tids->tid[n])
					sorted = false;
				n++;
			}
			if (!full)
				tids->group = get_pid(group);
		}
		rcu_read_unlock();
		if (!leader || !full)
			break;
		kvfree(tids);
	}
	if (!leader) {
		kvfree(tids);
		return ERR_PTR(-ESRCH);
	}
	/*
	 * A thread joins the end of the list with a higher id than those
	 * before it, until pid_max wraps: the ids are usually in order
	 * already, and sort() (a heapsort) takes 660 instructions a thread on
	 * arm64 to sort 10,000 of them. A duplicate is out of order too.
	 */
	tids->nr = n;
	if (sorted)
		return tids;
	sort(tids->tid, n, sizeof(tids->tid[0]), recount_nl_cmp_tid, NULL);
	/* de_thread() swaps two threads' ids: the walk may have seen one twice. */
	for (i = 1, k = n ? 1 : 0; i < n; i++)
		if (tids->tid[i] != tids->tid[k - 1])
			tids->tid[k++] = tids->tid[i];
	tids->nr = k;
	return tids;
}

/**
 * recount_nl_get_dump_start() - start a dump of RECOUNT_CMD_GET
 * @cb: the dump's state
 *
 * Checks the request and pins what the whole dump is decided by: the
 * requester's pid namespace, credentials and process, the PMU counts it
 * may read and, for a dump of one process's threads, their ids.
 *
 * Return: 0, or a negative errno with the reason in extack.
 */
int recount_nl_get_dump_start(struct netlink_callback *cb)
{
	struct recount_dump_ctx *ctx = recount_dump_ctx(cb);
	const struct genl_info *info = genl_info_dump(cb);
	struct nlattr *tgid = info->attrs[RECOUNT_A_TGID];
	struct nlattr *ver = info->attrs[RECOUNT_A_RUNTIME_VERSION];

	ctx->scope = info->attrs[RECOUNT_A_SCOPE] ?
		     nla_get_u32(info->attrs[RECOUNT_A_SCOPE]) : RECOUNT_SCOPE_THREADS;
	if (tgid && ctx->scope != RECOUNT_SCOPE_THREADS) {
		NL_SET_ERR_MSG_ATTR(cb->extack, tgid, "tgid filters a dump of threads only");
		return -EINVAL;
	}
	if (ver && ctx->scope == RECOUNT_SCOPE_CPUS) {
		NL_SET_ERR_MSG_ATTR(cb->extack, ver,
				    "a CPU has no runtime: runtime-version goes with tasks");
		return -EINVAL;
	}
	if (ver && nla_get_u32(ver) > RECOUNT_RUNTIME_VERSION) {
		NL_SET_ERR_MSG_ATTR_FMT(cb->extack, ver,
					"unknown runtime version %u: this kernel knows versions 1 to %u",
					nla_get_u32(ver), RECOUNT_RUNTIME_VERSION);
		return -EINVAL;
	}
	ctx->fmt.version = ver ? nla_get_u32(ver) : 0;
	ctx->fmt.state = true;
	ctx->fmt.lean = nla_get_flag(info->attrs[RECOUNT_A_LEAN]);
	if (tgid) {
		struct recount_dump_tids *tids = recount_nl_tids_of(nla_get_u32(tgid));

		if (IS_ERR(tids)) {
			if (PTR_ERR(tids) == -ESRCH)
				NL_SET_ERR_MSG_ATTR(cb->extack, tgid, "no such process");
			else
				NL_SET_ERR_MSG(cb->extack, "no memory for the ids of its threads");
			return PTR_ERR(tids);
		}
		ctx->tids = tids;
	}
	ctx->withheld = recount_nl_withheld(cb->skb, ctx->scope == RECOUNT_SCOPE_CPUS);
	/* A CPU's records take no task's: see recount_nl_dump_task_state(). */
	ctx->withheld_private = ctx->scope == RECOUNT_SCOPE_CPUS ? ctx->withheld :
				recount_nl_withheld(cb->skb, true);
	ctx->fmt.withheld = ctx->withheld;
	ctx->cred = get_current_cred();
	ctx->opener = !!recount_nl_opener(cb->skb, ctx->cred);
	ctx->ns = get_pid_ns(task_active_pid_ns(current));
	ctx->mm = current->mm;
	mmgrab(ctx->mm);
	recount_update_current();
	return 0;
}

/**
 * recount_nl_get_dump_done() - end a dump of RECOUNT_CMD_GET
 * @cb: the dump's state
 *
 * Releases what recount_nl_get_dump_start() pinned. Runs when the dump
 * ends or its socket closes, only if the start succeeded.
 *
 * Return: 0.
 */
int recount_nl_get_dump_done(struct netlink_callback *cb)
{
	struct recount_dump_ctx *ctx = recount_dump_ctx(cb);

	if (ctx->tids) {
		put_pid(ctx->tids->group);
		kvfree(ctx->tids);
	}
	mmdrop(ctx->mm);
	put_pid_ns(ctx->ns);
	put_cred(ctx->cred);
	return 0;
}

/**
 * recount_nl_get_dumpit() - dump RECOUNT_CMD_GET: every thread, process or CPU
 * @skb: the message to fill
 * @cb: the dump's state
 *
 * Return: the message's length while there is more to dump, 0 at its end,
 * or a negative errno.
 */
int recount_nl_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct recount_dump_ctx *ctx = recount_dump_ctx(cb);
	int err = 0;

	if (ctx->scope == RECOUNT_SCOPE_CPUS) {
		for (; ctx->next < nr_cpu_ids; ctx->next++) {
			/* As a get: a CPU that is not present has no record. */
			if (!cpu_present(ctx->next))
				continue;
			err = recount_nl_dump_one(skb, cb, ctx, recount_nl_state(), NULL,
						  NULL, ctx->next);
			if (err)
				break;
		}
	} else {
		err = recount_nl_dump_tasks(skb, cb, ctx);
	}
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err;
}

/* The cpumask attribute of a register or deregister request. */
static int recount_nl_parse_cpumask(struct genl_info *info, struct cpumask *cpus)
{
	struct nlattr *nla = info->attrs[RECOUNT_A_CPUMASK];

	if (GENL_REQ_ATTR_CHECK(info, RECOUNT_A_CPUMASK)) {
		NL_SET_ERR_MSG(info->extack, "no cpumask: the CPUs to listen to, such as \"0-3\"");
		return -EINVAL;
	}
	if (cpulist_parse(nla_data(nla), cpus)) {
		NL_SET_ERR_MSG_ATTR(info->extack, nla,
				    "not a CPU list such as \"1-3,5\", or beyond the CPUs there can be");
		return -EINVAL;
	}
	if (cpumask_empty(cpus)) {
		NL_SET_ERR_MSG_ATTR(info->extack, nla, "empty CPU list");
		return -EINVAL;
	}
	/* One CPU: a message of a list could outgrow NETLINK_MAX_FMTMSG_LEN. */
	if (!cpumask_subset(cpus, cpu_possible_mask)) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, nla,
					"CPU %u is not possible (/sys/devices/system/cpu/possible lists them)",
					cpumask_nth_andnot(0, cpus, cpu_possible_mask));
		return -EINVAL;
	}
	return 0;
}

static int recount_nl_listener_doit(struct sk_buff *skb, struct genl_info *info,
				    bool reg)
{
	struct recount_sock *rs;
	cpumask_var_t cpus;
	int err;

	if (!alloc_cpumask_var(&cpus, GFP_KERNEL))
		return -ENOMEM;
	err = recount_nl_parse_cpumask(info, cpus);
	if (err)
		goto out;
	rs = genl_sk_priv_get(&recount_nl_family, NETLINK_CB(skb).sk);
	if (IS_ERR(rs)) {
		err = PTR_ERR(rs);
		goto out;
	}
	if (reg)
		err = recount_listener_register(rs, skb, info, cpus);
	else
		err = recount_listener_deregister(rs, info, cpus);
out:
	free_cpumask_var(cpus);
	return err;
}

/**
 * recount_nl_register_doit() - handle RECOUNT_CMD_REGISTER
 * @skb: the request
 * @info: the request's attributes, extack and sender
 *
 * Return: 0, or a negative errno with the reason in extack.
 */
int recount_nl_register_doit(struct sk_buff *skb, struct genl_info *info)
{
	return recount_nl_listener_doit(skb, info, true);
}

/**
 * recount_nl_deregister_doit() - handle RECOUNT_CMD_DEREGISTER
 * @skb: the request
 * @info: the request's attributes, extack and sender
 *
 * Return: 0, or a negative errno with the reason in extack.
 */
int recount_nl_deregister_doit(struct sk_buff *skb, struct genl_info *info)
{
	return recount_nl_listener_doit(skb, info, false);
}

/* genetlink-legacy specs leave the family to the handlers' file. */
struct genl_family recount_nl_family __ro_after_init = {
	.name			= RECOUNT_FAMILY_NAME,
	.version		= RECOUNT_FAMILY_VERSION,
	.netnsok		= true,
	.parallel_ops		= true,
	.module			= THIS_MODULE,
	.split_ops		= recount_nl_ops,
	.n_split_ops		= ARRAY_SIZE(recount_nl_ops),
	.sock_priv_size		= sizeof(struct recount_sock),
	.sock_priv_destroy	= recount_sock_destroy,
};

static int __init recount_nl_init(void)
{
	int err = recount_listeners_init();

	if (err)
		return err;
	err = genl_register_family(&recount_nl_family);
	if (err)
		recount_listeners_exit();
	return err;
}
late_initcall(recount_nl_init);
