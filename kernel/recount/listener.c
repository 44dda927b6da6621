// SPDX-License-Identifier: GPL-2.0
/*
 * recount: exit records, sent to the sockets that listen for them
 *
 * A socket registers a cpumask (RECOUNT_CMD_REGISTER). When a thread exits
 * on one of those CPUs, do_exit() calls recount_exit(), which sends the
 * socket the thread's final record and, if the thread is the last of its
 * process, the process's record: every metric the queries report, and the
 * exit's details.
 *
 * The model is taskstats', with what its users missed:
 *
 *   - Each CPU has a list of the listeners registered for it, under a
 *     per-CPU rw_semaphore: an exit reads its CPU's list, a registration
 *     writes the lists of its CPUs. With no listener at all, recount_exit()
 *     is a static branch.
 *   - Records go out as genlmsg_unicast() sends them, but to the socket
 *     itself, not to whichever socket holds its port id: a closing socket
 *     frees its port before its listener ends. That never blocks: a socket
 *     whose receive buffer is full drops the record, and its listener counts
 *     it as missed. The next record the socket does receive carries the
 *     count (and resets it): received + missed = records due, always, but
 *     for the records the socket's own filter refuses (SO_ATTACH_FILTER or
 *     SO_ATTACH_BPF, or a security module's sock_rcv_skb hook): the socket
 *     chose not to take them, and, as netlink_unicast() has it, they count
 *     as sent; the missed count such a record carried (or a record its
 *     filter cut short) goes with the next one. An exiting thread never
 *     waits for a listener.
 *   - A listener lives as long as its socket (the family's per-socket
 *     private data): closing the socket ends it, as deregistering does.
 *   - A listener receives only the records of tasks it could ptrace-read
 *     (PTRACE_MODE_READ_FSCREDS, with the credentials it registered with,
 *     security modules' ptrace hooks included: what /proc would show it;
 *     where another task wrote the registration on the socket, with its
 *     opener's too),
 *     unless it registered with CAP_SYS_PTRACE or CAP_NET_ADMIN in the
 *     initial user namespace, as taskstats' listeners do; of their PMU
 *     counts, what perf would have let it count when it registered
 *     (recount_nl_withheld()). Pids in records are those of the pid
 *     namespace it registered from; tasks that namespace cannot see are
 *     not sent. Registering needs no privilege, so it works from inside
 *     containers, in every network namespace.
 *   - Every listener costs each exit on its CPUs a check, so a user
 *     (effective uid) without those capabilities may have
 *     user.max_recount_listeners listening sockets at most
 *     (RECOUNT_LISTENERS_PER_USER, 16, in the initial user namespace),
 *     counted as inotify's instances are: a ucount charged in the user's
 *     namespace and, in every namespace above, to the user that created
 *     the one below, so that mapping several uids into a namespace gets no
 *     more listeners. What a listener allocates is charged to its memory
 *     cgroup.
 */

#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/filter.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/percpu.h>
#include <linux/pid_namespace.h>
#include <linux/rwsem.h>
#include <linux/sched/signal.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/user_namespace.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/sock.h>

#include "internal.h"

/**
 * struct recount_listener - a socket listening for exit records
 * @sk: the socket, whose family private data the listener is: it ends as
 *	the socket closes (genl_release()), before the socket is freed
 * @cred: the credentials the socket registered with
 * @opener: the socket opener's, if another task wrote the registration
 *	(recount_nl_opener()), else NULL
 * @pid_ns: the pid namespace it registered from
 * @privileged: it registered with CAP_SYS_PTRACE or CAP_NET_ADMIN
 * @ucounts: the user's count it is charged to, if not privileged
 * @withheld: what of the PMU's counts it may not read, as it registered
 * @withheld_private: what of a CPU's it may not read, as it registered: of
 *	a process that ran a non-dumpable image (recount_nl_task_withheld())
 * @cpus: the CPUs it listens to, under recount_listeners_mutex
 * @missed: records dropped since the last one it received
 */
struct recount_listener {
	struct sock *sk;
	const struct cred *cred;
	const struct cred *opener;
	struct pid_namespace *pid_ns;
	bool privileged;
	struct ucounts *ucounts;
	u32 withheld;
	u32 withheld_private;
	struct cpumask cpus;
	atomic_long_t missed;
};

/* A listener in the list of one of its CPUs. */
struct recount_listener_entry {
	struct list_head node;
	struct recount_listener *listener;
};

/* The listeners of a CPU. */
struct recount_cpu_listeners {
	struct rw_semaphore sem;
	struct list_head list;
};

static DEFINE_PER_CPU(struct recount_cpu_listeners, recount_cpu_listeners);

/* Serializes registrations; protects every listener's @cpus. */
static DEFINE_MUTEX(recount_listeners_mutex);
/* On while a socket listens: its count is the listeners'. */
DEFINE_STATIC_KEY_FALSE(recount_listening_key);

/* A network namespace's listening sockets, written under recount_listeners_mutex. */
struct recount_net {
	unsigned int listeners;
};

static unsigned int recount_net_id __read_mostly;

static struct pernet_operations recount_net_ops = {
	.id	= &recount_net_id,
	.size	= sizeof(struct recount_net),
};

static struct recount_net *recount_pernet(const struct net *net)
{
	return net_generic(net, recount_net_id);
}

/* A listener's socket, a user's, holds its namespace: the count is down before it goes. */
static void recount_net_listeners_add(const struct recount_listener *l, int n)
{
	struct recount_net *rn = recount_pernet(sock_net(l->sk));

	WRITE_ONCE(rn->listeners, rn->listeners + n);
}

/*
 * Could @l ptrace-read @t, which is current, exiting, its mm not released
 * yet: as /proc decides, with the credentials @l registered with
 * (recount_nl_may_read_current()), and with its socket opener's if another
 * task wrote the registration (recount_nl_opener()).
 */
static bool recount_listener_may_read(const struct recount_listener *l,
				      struct task_struct *t)
{
	if (l->privileged)
		return true;
	return recount_nl_may_read_current(l->cred) &&
	       (!l->opener || recount_nl_may_read_current(l->opener));
}

/*
 * The exit records of one exit for the listeners that see it from one pid
 * namespace and may read the same PMU counts: built once, then copied to
 * each of them with its own missed count, as taskstats builds a record once
 * and clones it to its listeners. A process's record sums its threads; it is
 * not read again for each listener.
 */
struct recount_exit_records {
	struct pid_namespace *ns;
	u32 withheld;
	struct sk_buff *msg[2];		/* the thread's, the process's */
};

/* Kinds of listeners (namespace, PMU counts) one exit builds records for. */
#define RECOUNT_EXIT_KINDS	4

/*
 * The exit record of @t, or of its process if @process, for @recs's
 * listeners, ended but for their missed count; NULL if it cannot be built.
 */
static struct sk_buff *recount_exit_build(const struct recount_exit_records *recs,
					  struct task_struct *t, bool process, u64 now)
{
	const struct recount_nl_format fmt = { .withheld = recs->withheld, .state = true };
	struct signal_struct *sig = t->signal;
	struct sk_buff *msg;
	u32 code;
	int err;

	/*
	 * Not of the memory reserves, whose skbs only SOCK_MEMALLOC sockets
	 * take: an exiting OOM victim's record is missed, not refused.
	 */
	msg = genlmsg_new(recount_nl_record_size(), GFP_KERNEL | __GFP_NOMEMALLOC);
	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, 0, 0, &recount_nl_family, 0, RECOUNT_CMD_EXIT))
		goto nospace;
	if (process) {
		code = sig->flags & SIGNAL_GROUP_EXIT ? sig->group_exit_code : t->exit_code;
		err = recount_nl_fill_process(msg, t->group_leader, recs->ns, &fmt);
	} else {
		code = t->exit_code;
		err = recount_nl_fill_thread(msg, t, recs->ns, &fmt);
	}
	if (err || nla_put_u32(msg, RECOUNT_A_EXIT_CODE, code) ||
	    nla_put_u64_64bit(msg, RECOUNT_A_EXIT_TIME, now, RECOUNT_A_PAD))
		goto nospace;
	return msg;

nospace:
	nlmsg_free(msg);
	return NULL;
}

/*
 * Queue @msg on @l's socket, as genlmsg_unicast() would on the socket that
 * holds @l's port id, but on @l's own: netlink_release() frees the port
 * (netlink_remove()) before the listener ends (genl_release()), and another
 * socket may bind it in between. Never blocks: a full receive buffer drops
 * @msg (and sets the socket's ENOBUFS). Consumes @msg.
 *
 * Return: 0 if queued whole; 1 if the socket's own filter refused it, or
 * cut it short (a classic BPF filter's length), so that its missed count
 * did not arrive: as for netlink_unicast(), that is no loss of the record;
 * a negative errno if a full receive buffer dropped it.
 */
static int recount_exit_unicast(struct recount_listener *l, struct sk_buff *msg)
{
	unsigned int len = msg->len;
	struct sock *sk = l->sk;
	long timeo = 0;
	int err;

	/* Put by netlink_attachskb() if it drops @msg, else by netlink_sendskb(). */
	sock_hold(sk);
	skb_reset_network_header(msg);
	skb_reset_mac_header(msg);
	if (sk_filter(sk, msg)) {
		kfree_skb(msg);
		sock_put(sk);
		return 1;
	}
	err = netlink_attachskb(sk, msg, &timeo, sock_net(sk)->genl_sock);
	if (err)
		return err;
	if (msg->len < len)
		err = 1;
	netlink_sendskb(sk, msg);
	return err;
}

/* Send @l a copy of @record, with what @l missed; or count it missed. */
static void recount_exit_send(struct recount_listener *l, const struct sk_buff *record)
{
	struct sk_buff *msg;
	long missed;
	int err;

	/*
	 * The copy has the record's bytes and room for the missed count only:
	 * the receive buffer is charged for what it holds.
	 */
	msg = record ? skb_copy_expand(record, skb_headroom(record),
				       nla_total_size_64bit(sizeof(u64)),
				       GFP_KERNEL | __GFP_NOMEMALLOC) : NULL;
	if (!msg) {
		atomic_long_inc(&l->missed);
		return;
	}
	missed = atomic_long_xchg(&l->missed, 0);
	if (nla_put_u64_64bit(msg, RECOUNT_A_MISSED, missed, RECOUNT_A_PAD)) {
		nlmsg_free(msg);
		atomic_long_add(missed + 1, &l->missed);
		return;
	}
	nlmsg_end(msg, nlmsg_hdr(msg));
	err = recount_exit_unicast(l, msg);
	if (err)
		atomic_long_add(err > 0 ? missed : missed + 1, &l->missed);
}

/*
 * The records of @l's kind among the @n of @recs, built if there are none
 * yet; @spare holds them when @recs is full, to be freed once sent.
 */
static struct recount_exit_records *
recount_exit_records_for(struct recount_exit_records *recs, int *n,
			 struct recount_exit_records *spare, const struct recount_listener *l,
			 struct task_struct *t, bool group_dead, u64 now)
{
	u32 withheld = recount_nl_task_withheld(t, l->withheld, l->withheld_private);
	struct recount_exit_records *r;
	int i;

	for (i = 0; i < *n; i++)
		if (recs[i].ns == l->pid_ns && recs[i].withheld == withheld)
			return &recs[i];
	r = *n < RECOUNT_EXIT_KINDS ? &recs[(*n)++] : spare;
	r->ns = l->pid_ns;
	r->withheld = withheld;
	r->msg[0] = recount_exit_build(r, t, false, now);
	r->msg[1] = NULL;
	if (group_dead) {
		/*
		 * The thread's record counted it up to now; its process, which
		 * it has left, counts what was charged: charge it first.
		 */
		recount_update_current();
		r->msg[1] = recount_exit_build(r, t, true, now);
	}
	return r;
}

static void recount_exit_records_free(struct recount_exit_records *r)
{
	nlmsg_free(r->msg[0]);
	nlmsg_free(r->msg[1]);
}

/**
 * __recount_exit() - send exit records to the listeners of this CPU
 * @t: the exiting thread, current
 * @group_dead: whether @t is the last thread of its process
 *
 * See recount_exit().
 */
void __recount_exit(struct task_struct *t, bool group_dead)
{
	struct recount_exit_records recs[RECOUNT_EXIT_KINDS], spare;
	struct recount_cpu_listeners *cl;
	struct recount_listener_entry *e;
	u64 now;
	int n = 0, i;

	recount_update_current();
	now = ktime_get_boottime_ns();
	cl = per_cpu_ptr(&recount_cpu_listeners, raw_smp_processor_id());
	down_read(&cl->sem);
	list_for_each_entry(e, &cl->list, node) {
		struct recount_listener *l = e->listener;
		struct recount_exit_records *r;

		if (!task_pid_nr_ns(t, l->pid_ns) || !recount_listener_may_read(l, t))
			continue;
		r = recount_exit_records_for(recs, &n, &spare, l, t, group_dead, now);
		recount_exit_send(l, r->msg[0]);
		if (group_dead)
			recount_exit_send(l, r->msg[1]);
		if (r == &spare)
			recount_exit_records_free(r);
	}
	up_read(&cl->sem);
	for (i = 0; i < n; i++)
		recount_exit_records_free(&recs[i]);
}

static void recount_listener_unlink(struct recount_listener *l, const struct cpumask *cpus)
{
	struct recount_listener_entry *e, *tmp;
	int cpu;

	for_each_cpu(cpu, cpus) {
		struct recount_cpu_listeners *cl = per_cpu_ptr(&recount_cpu_listeners, cpu);

		down_write(&cl->sem);
		list_for_each_entry_safe(e, tmp, &cl->list, node) {
			if (e->listener != l)
				continue;
			list_del(&e->node);
			kfree(e);
		}
		up_write(&cl->sem);
	}
	cpumask_andnot(&l->cpus, &l->cpus, cpus);
}

/* Drop what @l holds, and free it. */
static void recount_listener_release(struct recount_listener *l)
{
	if (l->ucounts)
		dec_ucount(l->ucounts, UCOUNT_RECOUNT_LISTENERS);
	put_pid_ns(l->pid_ns);
	put_cred(l->cred);
	put_cred(l->opener);
	kfree(l);
}

/* End a registered listener. */
static void recount_listener_free(struct recount_listener *l)
{
	recount_net_listeners_add(l, -1);
	recount_listener_release(l);
	static_branch_dec(&recount_listening_key);
}

/* CAP_SYS_PTRACE or CAP_NET_ADMIN, of the sender and the socket's opener. */
static bool recount_listener_capable(struct sk_buff *skb)
{
	return recount_nl_capable(skb, CAP_SYS_PTRACE) ||
	       recount_nl_capable(skb, CAP_NET_ADMIN);
}

/**
 * recount_listener_register() - make a socket listen to more CPUs
 * @rs: the socket's recount state
 * @skb: the register request, for its sender's capabilities
 * @info: the register request
 * @cpus: the CPUs, possible ones
 *
 * A socket that did not listen yet becomes a listener with the sender's
 * credentials and pid namespace; it is privileged if the sender and the
 * socket's opener have CAP_SYS_PTRACE or CAP_NET_ADMIN (asked without an
 * audit record: recount_nl_capable()), else it counts against the sender's
 * user.max_recount_listeners. What of the PMU's counts its records carry is
 * decided then, as for a request. A later registration keeps all that; one
 * that adds CPUs to a privileged listener must be privileged too, and a
 * denial is audited (as CAP_SYS_PTRACE's).
 *
 * Return: 0, -EPERM if the sender may not add CPUs to a privileged listener,
 * -EMFILE if the sender's user has as many listening sockets as it may, or
 * -ENOMEM.
 */
int recount_listener_register(struct recount_sock *rs, struct sk_buff *skb,
			      struct genl_info *info, const struct cpumask *cpus)
{
	struct recount_listener_entry *e, *tmp;
	struct recount_listener *l;
	LIST_HEAD(entries);
	int cpu;

	guard(mutex)(&recount_listeners_mutex);
	l = rs->listener;
	/*
	 * Widening a privileged listener is a privileged request, as
	 * netlink_capable() has it. It asks for what only the capabilities
	 * allow, so unlike recount's other checks, a denial is audited: once.
	 */
	if (l && l->privileged && !cpumask_subset(cpus, &l->cpus) &&
	    !recount_listener_capable(skb) && !netlink_capable(skb, CAP_SYS_PTRACE)) {
		NL_SET_ERR_MSG(info->extack,
			       "this socket listens with CAP_SYS_PTRACE or CAP_NET_ADMIN: only a sender with one of them may add CPUs");
		return -EPERM;
	}
	if (!l) {
		bool privileged = recount_listener_capable(skb);
		struct ucounts *ucounts = NULL;

		if (!privileged) {
			/* NULL also when out of memory: EMFILE, as inotify says. */
			ucounts = inc_ucount(current_user_ns(), current_euid(),
					     UCOUNT_RECOUNT_LISTENERS);
			if (!ucounts) {
				NL_SET_ERR_MSG(info->extack,
					       "this user, or the creator of its user namespace, has as many listening sockets as user.max_recount_listeners allows (without CAP_SYS_PTRACE or CAP_NET_ADMIN)");
				return -EMFILE;
			}
		}
		l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
		if (!l) {
			if (ucounts)
				dec_ucount(ucounts, UCOUNT_RECOUNT_LISTENERS);
			return -ENOMEM;
		}
		l->ucounts = ucounts;
		l->sk = NETLINK_CB(skb).sk;
		l->cred = get_current_cred();
		l->opener = get_cred(recount_nl_opener(skb, current_cred()));
		l->pid_ns = get_pid_ns(task_active_pid_ns(current));
		l->privileged = privileged;
		l->withheld = recount_nl_withheld(skb, false);
		l->withheld_private = recount_nl_withheld(skb, true);
	}

	/* Allocate every entry first, so that a failure changes nothing. */
	for_each_cpu_andnot(cpu, cpus, &l->cpus) {
		e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
		if (!e)
			goto nomem;
		e->listener = l;
		list_add_tail(&e->node, &entries);
	}
	for_each_cpu_andnot(cpu, cpus, &l->cpus) {
		struct recount_cpu_listeners *cl = per_cpu_ptr(&recount_cpu_listeners, cpu);

		e = list_first_entry(&entries, struct recount_listener_entry, node);
		down_write(&cl->sem);
		list_move_tail(&e->node, &cl->list);
		up_write(&cl->sem);
	}
	cpumask_or(&l->cpus, &l->cpus, cpus);
	if (!rs->listener) {
		rs->listener = l;
		recount_net_listeners_add(l, 1);
		static_branch_inc(&recount_listening_key);
	}
	return 0;

nomem:
	list_for_each_entry_safe(e, tmp, &entries, node)
		kfree(e);
	if (!rs->listener)
		recount_listener_release(l);
	return -ENOMEM;
}

/**
 * recount_listener_deregister() - make a socket stop listening to CPUs
 * @rs: the socket's recount state
 * @info: the deregister request, for its extack
 * @cpus: the CPUs, all registered on this socket
 *
 * Return: 0, or -EINVAL if some CPU is not registered.
 */
int recount_listener_deregister(struct recount_sock *rs, struct genl_info *info,
				const struct cpumask *cpus)
{
	struct recount_listener *l;

	guard(mutex)(&recount_listeners_mutex);
	l = rs->listener;
	/* One CPU: a message of a list could outgrow NETLINK_MAX_FMTMSG_LEN. */
	if (!l || !cpumask_subset(cpus, &l->cpus)) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, info->attrs[RECOUNT_A_CPUMASK],
					"this socket does not listen to CPU %u",
					l ? cpumask_nth_andnot(0, cpus, &l->cpus) :
					    cpumask_first(cpus));
		return -EINVAL;
	}
	recount_listener_unlink(l, cpus);
	if (cpumask_empty(&l->cpus)) {
		rs->listener = NULL;
		recount_listener_free(l);
	}
	return 0;
}

/**
 * recount_sock_destroy() - end a socket's registration as it closes
 * @priv: the socket's struct recount_sock
 *
 * The family's sock_priv_destroy.
 */
void recount_sock_destroy(void *priv)
{
	struct recount_sock *rs = priv;
	struct recount_listener *l;

	guard(mutex)(&recount_listeners_mutex);
	l = rs->listener;
	if (!l)
		return;
	recount_listener_unlink(l, &l->cpus);
	rs->listener = NULL;
	recount_listener_free(l);
}

/**
 * recount_nr_sockets_listening() - how many sockets of a network namespace
 *	listen for exit records
 * @net: the network namespace
 *
 * Those of other namespaces are none of its business: a container does not
 * learn that the host, or another container, listens.
 *
 * Return: the number of registered listeners whose socket is in @net.
 */
unsigned int recount_nr_sockets_listening(const struct net *net)
{
	return READ_ONCE(recount_pernet(net)->listeners);
}

/**
 * recount_listeners_init() - set up the listeners' state
 *
 * The per-CPU lists of listeners, the bound of a user's listening sockets
 * in the initial user namespace, and the count of each network namespace's
 * listening sockets.
 *
 * Return: 0, or the error of register_pernet_subsys().
 */
int __init recount_listeners_init(void)
{
	int cpu;

	init_user_ns.ucount_max[UCOUNT_RECOUNT_LISTENERS] = RECOUNT_LISTENERS_PER_USER;

	for_each_possible_cpu(cpu) {
		struct recount_cpu_listeners *cl = per_cpu_ptr(&recount_cpu_listeners, cpu);

		init_rwsem(&cl->sem);
		INIT_LIST_HEAD(&cl->list);
	}
	return register_pernet_subsys(&recount_net_ops);
}

/**
 * recount_listeners_exit() - undo recount_listeners_init()
 *
 * If the family cannot be registered after all.
 */
void __init recount_listeners_exit(void)
{
	unregister_pernet_subsys(&recount_net_ops);
}
