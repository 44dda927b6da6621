// SPDX-License-Identifier: GPL-2.0
/*
 * A client of the RECOUNT generic netlink family, on libnl-genl-3.
 */
#define _GNU_SOURCE		/* ppoll() */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "recount_client.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

int rc_open(struct rc_client *c)
{
	int one = 1, err;

	c->sk = nl_socket_alloc();
	if (!c->sk)
		return -ENOMEM;
	err = genl_connect(c->sk);
	if (err < 0) {
		rc_close(c);
		return -EIO;
	}
	/* Ask for the kernel's reason with every error (extended ACK). */
	setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	/* Requests that answer with a record get no ACK after it. */
	nl_socket_disable_auto_ack(c->sk);

	c->family = genl_ctrl_resolve(c->sk, RECOUNT_FAMILY_NAME);
	if (c->family < 0) {
		rc_close(c);
		return -ENOENT;
	}
	if (c->verbose)
		fprintf(stderr, "getdelays: family %s has id %d\n",
			RECOUNT_FAMILY_NAME, c->family);
	return 0;
}

void rc_close(struct rc_client *c)
{
	nl_socket_free(c->sk);
	c->sk = NULL;
	free(c->queued);
	c->queued = NULL;
	c->nr_queued = 0;
	c->queue_room = 0;
}

static struct nla_policy usage_policy[RECOUNT_A_USAGE_MAX + 1] = {
	[RECOUNT_A_USAGE_USER_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_USAGE_KERNEL_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_USAGE_IDLE_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_USAGE_USER_CYCLES] = { .type = NLA_U64 },
	[RECOUNT_A_USAGE_KERNEL_CYCLES] = { .type = NLA_U64 },
	[RECOUNT_A_USAGE_USER_INSTRUCTIONS] = { .type = NLA_U64 },
	[RECOUNT_A_USAGE_KERNEL_INSTRUCTIONS] = { .type = NLA_U64 },
	[RECOUNT_A_USAGE_ENERGY] = { .type = NLA_U64 },
	[RECOUNT_A_USAGE_IDLE_ENERGY] = { .type = NLA_U64 },
	[RECOUNT_A_USAGE_IDLE_IRQ_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_USAGE_INEXACT] = { .type = NLA_U32 },
	[RECOUNT_A_USAGE_KIND] = { .type = NLA_U32 },
	[RECOUNT_A_USAGE_EVENT] = { .type = NLA_NESTED },
};

static struct nla_policy event_policy[RECOUNT_A_EVENT_MAX + 1] = {
	[RECOUNT_A_EVENT_INDEX] = { .type = NLA_U32 },
	[RECOUNT_A_EVENT_TYPE] = { .type = NLA_U32 },
	[RECOUNT_A_EVENT_CONFIG] = { .type = NLA_U64 },
	[RECOUNT_A_EVENT_MODE] = { .type = NLA_U32 },
	[RECOUNT_A_EVENT_USER] = { .type = NLA_U64 },
	[RECOUNT_A_EVENT_KERNEL] = { .type = NLA_U64 },
};

static struct nla_policy record_policy[RECOUNT_A_MAX + 1] = {
	[RECOUNT_A_PID] = { .type = NLA_U32 },
	[RECOUNT_A_TGID] = { .type = NLA_U32 },
	[RECOUNT_A_CPU] = { .type = NLA_U32 },
	[RECOUNT_A_COMM] = { .type = NLA_STRING },
	[RECOUNT_A_FLAGS] = { .type = NLA_U32 },
	[RECOUNT_A_USAGE] = { .type = NLA_NESTED },
	[RECOUNT_A_EXITED] = { .type = NLA_NESTED },
	[RECOUNT_A_METRICS] = { .type = NLA_U32 },
	[RECOUNT_A_ENERGY_SOURCE] = { .type = NLA_U32 },
	[RECOUNT_A_PER_KIND] = { .type = NLA_NESTED },
	[RECOUNT_A_KIND_CPUS] = { .type = NLA_NESTED },
	[RECOUNT_A_RUNTIME] = { .type = NLA_NESTED },
	[RECOUNT_A_RUNTIME_STRUCT] = { .type = NLA_UNSPEC },
	[RECOUNT_A_EXITED_RUNTIME] = { .type = NLA_NESTED },
	[RECOUNT_A_EXIT_CODE] = { .type = NLA_U32 },
	[RECOUNT_A_EXIT_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_MISSED] = { .type = NLA_U64 },
	[RECOUNT_A_LISTENERS] = { .type = NLA_U32 },
	[RECOUNT_A_START_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_WITHHELD] = { .type = NLA_U32 },
	[RECOUNT_A_PARENT_TGID] = { .type = NLA_U32 },
	[RECOUNT_A_CHILDREN] = { .type = NLA_NESTED },
	[RECOUNT_A_CHILDREN_RUNTIME] = { .type = NLA_NESTED },
	[RECOUNT_A_EVENT_GEN] = { .type = NLA_U32 },
};

static struct nla_policy runtime_policy[RECOUNT_A_RUNTIME_MAX + 1] = {
	[RECOUNT_A_RUNTIME_CPU_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_QUEUE_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_PAGE_FAULT_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_LOCK_CONTENTION_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_QUEUE_COUNT] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_QUEUE_MAX] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_QUEUE_MAX_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_PAGE_FAULT_COUNT] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_PAGE_FAULT_MAX] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_PAGE_FAULT_MAX_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_LOCK_CONTENTION_COUNT] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_LOCK_CONTENTION_MAX] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_LOCK_CONTENTION_MAX_TIME] = { .type = NLA_U64 },
};

static int decode_runtime(struct nlattr *nest, struct rc_runtime *rt)
{
	struct nlattr *tb[RECOUNT_A_RUNTIME_MAX + 1];
	static const struct {
		int attr;
		size_t offset;
	} values[] = {
		{ RECOUNT_A_RUNTIME_CPU_TIME, offsetof(struct rc_runtime, cpu_ns) },
		{ RECOUNT_A_RUNTIME_QUEUE_TIME, offsetof(struct rc_runtime, queue_ns) },
		{ RECOUNT_A_RUNTIME_PAGE_FAULT_TIME, offsetof(struct rc_runtime, fault_ns) },
		{ RECOUNT_A_RUNTIME_LOCK_CONTENTION_TIME, offsetof(struct rc_runtime, lock_ns) },
		{ RECOUNT_A_RUNTIME_QUEUE_COUNT, offsetof(struct rc_runtime, wait[0].count) },
		{ RECOUNT_A_RUNTIME_QUEUE_MAX, offsetof(struct rc_runtime, wait[0].max_ns) },
		{ RECOUNT_A_RUNTIME_QUEUE_MAX_TIME,
		  offsetof(struct rc_runtime, wait[0].max_at_ns) },
		{ RECOUNT_A_RUNTIME_PAGE_FAULT_COUNT, offsetof(struct rc_runtime, wait[1].count) },
		{ RECOUNT_A_RUNTIME_PAGE_FAULT_MAX, offsetof(struct rc_runtime, wait[1].max_ns) },
		{ RECOUNT_A_RUNTIME_PAGE_FAULT_MAX_TIME,
		  offsetof(struct rc_runtime, wait[1].max_at_ns) },
		{ RECOUNT_A_RUNTIME_LOCK_CONTENTION_COUNT,
		  offsetof(struct rc_runtime, wait[2].count) },
		{ RECOUNT_A_RUNTIME_LOCK_CONTENTION_MAX,
		  offsetof(struct rc_runtime, wait[2].max_ns) },
		{ RECOUNT_A_RUNTIME_LOCK_CONTENTION_MAX_TIME,
		  offsetof(struct rc_runtime, wait[2].max_at_ns) },
	};
	size_t i;

	if (nla_parse_nested(tb, RECOUNT_A_RUNTIME_MAX, nest, runtime_policy) < 0)
		return -EPROTO;
	memset(rt, 0, sizeof(*rt));
	rt->has = true;
	rt->has_waits = tb[RECOUNT_A_RUNTIME_QUEUE_COUNT];
	for (i = 0; i < ARRAY_SIZE(values); i++)
		if (tb[values[i].attr])
			*(uint64_t *)((char *)rt + values[i].offset) =
				nla_get_u64(tb[values[i].attr]);
	return 0;
}

/* The u64 attributes of a usage, and where they go. */
static const struct {
	int attr;
	size_t offset;
} usage_values[] = {
	{ RECOUNT_A_USAGE_USER_TIME, offsetof(struct rc_usage, user_ns) },
	{ RECOUNT_A_USAGE_KERNEL_TIME, offsetof(struct rc_usage, kernel_ns) },
	{ RECOUNT_A_USAGE_IDLE_TIME, offsetof(struct rc_usage, idle_ns) },
	{ RECOUNT_A_USAGE_USER_CYCLES, offsetof(struct rc_usage, user_cycles) },
	{ RECOUNT_A_USAGE_KERNEL_CYCLES, offsetof(struct rc_usage, kernel_cycles) },
	{ RECOUNT_A_USAGE_USER_INSTRUCTIONS, offsetof(struct rc_usage, user_instructions) },
	{ RECOUNT_A_USAGE_KERNEL_INSTRUCTIONS, offsetof(struct rc_usage, kernel_instructions) },
	{ RECOUNT_A_USAGE_ENERGY, offsetof(struct rc_usage, energy_nj) },
	{ RECOUNT_A_USAGE_IDLE_ENERGY, offsetof(struct rc_usage, idle_energy_nj) },
	{ RECOUNT_A_USAGE_IDLE_IRQ_TIME, offsetof(struct rc_usage, idle_irq_ns) },
};

static int decode_usage(struct nlattr *nest, struct rc_usage *u)
{
	struct nlattr *tb[RECOUNT_A_USAGE_MAX + 1], *a;
	size_t i;
	int rem;

	/* Attributes newer than this client are skipped, not rejected. */
	if (nla_parse_nested(tb, RECOUNT_A_USAGE_MAX, nest, usage_policy) < 0)
		return -EPROTO;
	memset(u, 0, sizeof(*u));
	for (i = 0; i < ARRAY_SIZE(usage_values); i++) {
		struct rc_value *v = (void *)((char *)u + usage_values[i].offset);

		if (tb[usage_values[i].attr]) {
			v->has = true;
			v->v = nla_get_u64(tb[usage_values[i].attr]);
		}
	}
	if (tb[RECOUNT_A_USAGE_INEXACT])
		u->inexact = nla_get_u32(tb[RECOUNT_A_USAGE_INEXACT]);
	if (tb[RECOUNT_A_USAGE_KIND]) {
		u->has_kind = true;
		u->kind = nla_get_u32(tb[RECOUNT_A_USAGE_KIND]);
	}
	/* nla_parse_nested() keeps the last event nest: walk them all. */
	nla_for_each_nested(a, nest, rem) {
		struct nlattr *eb[RECOUNT_A_EVENT_MAX + 1];
		uint32_t i;

		if (nla_type(a) != RECOUNT_A_USAGE_EVENT)
			continue;
		if (nla_parse_nested(eb, RECOUNT_A_EVENT_MAX, a, event_policy) < 0 ||
		    !eb[RECOUNT_A_EVENT_INDEX])
			return -EPROTO;
		i = nla_get_u32(eb[RECOUNT_A_EVENT_INDEX]);
		if (i >= RC_MAX_EVENTS)
			continue;
		if (eb[RECOUNT_A_EVENT_USER])
			u->event_user[i] = (struct rc_value){
				true, nla_get_u64(eb[RECOUNT_A_EVENT_USER]) };
		if (eb[RECOUNT_A_EVENT_KERNEL])
			u->event_kernel[i] = (struct rc_value){
				true, nla_get_u64(eb[RECOUNT_A_EVENT_KERNEL]) };
	}
	return 0;
}

int rc_decode_record(struct nlattr *attrs, int len, struct rc_record *rec)
{
	struct nlattr *tb[RECOUNT_A_MAX + 1], *a;
	int rem;

	memset(rec, 0, sizeof(*rec));
	/* Attributes above RECOUNT_A_MAX, from a newer kernel, are skipped. */
	if (nla_parse(tb, RECOUNT_A_MAX, attrs, len, record_policy) < 0)
		return -EPROTO;
	if (tb[RECOUNT_A_PID]) {
		rec->has_pid = true;
		rec->pid = nla_get_u32(tb[RECOUNT_A_PID]);
	}
	if (tb[RECOUNT_A_TGID]) {
		rec->has_tgid = true;
		rec->tgid = nla_get_u32(tb[RECOUNT_A_TGID]);
	}
	if (tb[RECOUNT_A_CPU]) {
		rec->has_cpu = true;
		rec->cpu = nla_get_u32(tb[RECOUNT_A_CPU]);
	}
	rec->type = rec->has_cpu ? RC_CPU : rec->has_pid ? RC_THREAD : RC_PROCESS;
	if (tb[RECOUNT_A_COMM])
		nla_strlcpy(rec->comm, tb[RECOUNT_A_COMM], sizeof(rec->comm));
	if (tb[RECOUNT_A_START_TIME]) {
		rec->start_time.has = true;
		rec->start_time.v = nla_get_u64(tb[RECOUNT_A_START_TIME]);
	}
	if (tb[RECOUNT_A_EXIT_CODE]) {
		rec->is_exit = true;
		rec->exit_code = nla_get_u32(tb[RECOUNT_A_EXIT_CODE]);
	}
	if (tb[RECOUNT_A_EXIT_TIME])
		rec->exit_time = nla_get_u64(tb[RECOUNT_A_EXIT_TIME]);
	if (tb[RECOUNT_A_MISSED])
		rec->missed = nla_get_u64(tb[RECOUNT_A_MISSED]);
	if (tb[RECOUNT_A_FLAGS]) {
		rec->has_flags = true;
		rec->flags = nla_get_u32(tb[RECOUNT_A_FLAGS]);
	}
	if (tb[RECOUNT_A_METRICS])
		rec->metrics = nla_get_u32(tb[RECOUNT_A_METRICS]);
	if (tb[RECOUNT_A_ENERGY_SOURCE])
		rec->energy_source = nla_get_u32(tb[RECOUNT_A_ENERGY_SOURCE]);
	if (tb[RECOUNT_A_WITHHELD])
		rec->withheld = nla_get_u32(tb[RECOUNT_A_WITHHELD]);
	if (tb[RECOUNT_A_EVENT_GEN]) {
		rec->has_event_gen = true;
		rec->event_gen = nla_get_u32(tb[RECOUNT_A_EVENT_GEN]);
	}
	if (tb[RECOUNT_A_PARENT_TGID]) {
		rec->has_parent_tgid = true;
		rec->parent_tgid = nla_get_u32(tb[RECOUNT_A_PARENT_TGID]);
	}
	if (tb[RECOUNT_A_CHILDREN]) {
		rec->has_children = true;
		if (decode_usage(tb[RECOUNT_A_CHILDREN], &rec->children))
			return -EPROTO;
	}
	if (tb[RECOUNT_A_CHILDREN_RUNTIME] &&
	    decode_runtime(tb[RECOUNT_A_CHILDREN_RUNTIME], &rec->children_runtime))
		return -EPROTO;
	if (tb[RECOUNT_A_USAGE]) {
		rec->has_usage = true;
		if (decode_usage(tb[RECOUNT_A_USAGE], &rec->usage))
			return -EPROTO;
	}
	if (tb[RECOUNT_A_EXITED]) {
		rec->has_exited = true;
		if (decode_usage(tb[RECOUNT_A_EXITED], &rec->exited))
			return -EPROTO;
	}
	if (tb[RECOUNT_A_RUNTIME] && decode_runtime(tb[RECOUNT_A_RUNTIME], &rec->runtime))
		return -EPROTO;
	if (tb[RECOUNT_A_EXITED_RUNTIME] &&
	    decode_runtime(tb[RECOUNT_A_EXITED_RUNTIME], &rec->exited_runtime))
		return -EPROTO;
	if (tb[RECOUNT_A_RUNTIME_STRUCT]) {
		/* A later version begins with ours: keep what we know of it. */
		rec->runtime_struct_len = nla_len(tb[RECOUNT_A_RUNTIME_STRUCT]);
		if (rec->runtime_struct_len > (int)sizeof(rec->runtime_struct))
			rec->runtime_struct_len = sizeof(rec->runtime_struct);
		memcpy(rec->runtime_struct, nla_data(tb[RECOUNT_A_RUNTIME_STRUCT]),
		       rec->runtime_struct_len);
	}
	/* nla_parse() keeps the last of a multi-attr: walk them all. */
	nla_for_each_attr(a, attrs, len, rem) {
		if (nla_type(a) != RECOUNT_A_PER_KIND || rec->nr_kinds == RC_MAX_KINDS)
			continue;
		if (decode_usage(a, &rec->per_kind[rec->nr_kinds++]))
			return -EPROTO;
	}
	/*
	 * A lean record gives its runtime only as the struct asked for, when
	 * that struct carries every value the kernel has: version 2 from a
	 * kernel that knows no later one, version 3 from one that does. The
	 * struct is taken for what its length says it holds.
	 */
	if (!rec->runtime.has &&
	    rec->runtime_struct_len >= (int)sizeof(struct recount_task_runtime_v2)) {
		struct recount_task_runtime rt = {};

		memcpy(&rt, rec->runtime_struct, sizeof(struct recount_task_runtime_v2));
		rec->runtime.has = true;
		rec->runtime.cpu_ns = rt.cpu_time;
		rec->runtime.queue_ns = rt.queue_time;
		rec->runtime.fault_ns = rt.page_fault_time;
		rec->runtime.lock_ns = rt.lock_contention_time;
	}
	if (!rec->runtime.has_waits && rec->runtime.has &&
	    rec->runtime_struct_len >= (int)sizeof(struct recount_task_runtime)) {
		struct recount_task_runtime rt;
		struct rc_wait_stats *w = rec->runtime.wait;

		memcpy(&rt, rec->runtime_struct, sizeof(rt));
		rec->runtime.has_waits = true;
		w[RC_WAIT_QUEUE] = (struct rc_wait_stats){ rt.queue_count, rt.queue_max,
							  rt.queue_max_time };
		w[RC_WAIT_FAULT] = (struct rc_wait_stats){ rt.page_fault_count, rt.page_fault_max,
							  rt.page_fault_max_time };
		w[RC_WAIT_LOCK] = (struct rc_wait_stats){ rt.lock_contention_count,
							 rt.lock_contention_max,
							 rt.lock_contention_max_time };
	}
	return 0;
}

void rc_record_inherit(struct rc_record *rec, const struct rc_record *first)
{
	if (rec->has_flags || !first->has_flags)
		return;
	rec->has_flags = true;
	rec->flags = first->flags;
	rec->metrics = first->metrics;
	rec->energy_source = first->energy_source;
	rec->withheld = first->withheld;
}

static void forget_events(struct rc_usage *u)
{
	int e;

	for (e = 0; e < RC_MAX_EVENTS; e++) {
		u->event_user[e].has = false;
		u->event_kernel[e].has = false;
		u->inexact &= ~(RECOUNT_INEXACT_EVENT_0 << e);
	}
}

void rc_forget_events(struct rc_record *rec)
{
	int k;

	forget_events(&rec->usage);
	forget_events(&rec->exited);
	forget_events(&rec->children);
	for (k = 0; k < rec->nr_kinds; k++)
		forget_events(&rec->per_kind[k]);
	rec->has_event_gen = false;
}

const char *rc_kind_name(uint32_t kind)
{
	switch (kind) {
	case RECOUNT_KIND_PERFORMANCE:
		return "performance";
	case RECOUNT_KIND_EFFICIENCY:
		return "efficiency";
	}
	return "unknown";
}

const char *rc_energy_source_name(uint32_t source)
{
	switch (source) {
	case RECOUNT_ENERGY_SOURCE_NONE:
		return "none";
	case RECOUNT_ENERGY_SOURCE_ESTIMATED:
		return "estimated";
	}
	return "unknown";
}

static int no_seq_check(struct nl_msg *msg, void *arg)
{
	return NL_OK;
}

/* A request in flight: how to decode its replies, and into what. */
struct rc_request {
	struct rc_client *c;
	int (*decode)(struct nlattr *attrs, int len, void *out);
	void *out;
	int decoded;
	/* Dumps and exit records: each record, decoded, goes to fn. */
	rc_record_fn fn;
	void *arg;
	/* Waiting for exit records (rc_receive()), not answering a request. */
	bool exits;
	/* A registration: exit records may fill the socket before its ACK. */
	bool registering;
	bool interrupted, stopped, done;
	/* What fn returned when it stopped. */
	int stop;
	/* The last record of a lean dump that gave the state. */
	struct rc_record first;
};

/*
 * Keep an exit record that came while a request was answered, for
 * rc_receive(): exits go on while a listener registers, and the kernel
 * sends their records from the moment the listener is in place, before
 * its ACK. One that cannot be kept counts as missed.
 */
static void rc_queue_exit(struct rc_client *c, struct nlattr *attrs, int len)
{
	struct rc_record *q;
	unsigned int room;

	if (c->nr_queued == RC_QUEUE_MAX) {
		c->queue_missed++;
		return;
	}
	if (c->nr_queued == c->queue_room) {
		room = c->queue_room ? 2 * c->queue_room : 16;
		q = realloc(c->queued, room * sizeof(*q));
		if (!q) {
			c->queue_missed++;
			return;
		}
		c->queued = q;
		c->queue_room = room;
	}
	if (rc_decode_record(attrs, len, &c->queued[c->nr_queued])) {
		c->queue_missed++;
		return;
	}
	/* Those lost before it are said with it. */
	c->queued[c->nr_queued++].missed += c->queue_missed;
	c->queue_missed = 0;
}

/*
 * Give @rec to the request's fn; false if fn stops the request. What was
 * lost after the records kept meanwhile comes with the first @live one.
 */
static bool rc_deliver(struct rc_request *req, struct rc_record *rec, bool live)
{
	req->decoded++;
	/* A lean dump gives the state again only where it changed. */
	if (rec->has_flags)
		req->first = *rec;
	else
		rc_record_inherit(rec, &req->first);
	if (req->exits && live) {
		rec->missed += req->c->queue_missed;
		req->c->queue_missed = 0;
	}
	req->stop = req->fn(rec, req->arg);
	if (req->stop)
		req->stopped = true;
	return !req->stopped;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct rc_request *req = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct rc_record rec;

	if (nlh->nlmsg_type != req->c->family)
		return NL_SKIP;
	if (gh->cmd == RECOUNT_CMD_EXIT && !req->exits) {
		rc_queue_exit(req->c, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0));
		return NL_SKIP;
	}
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		req->interrupted = true;
	if (!req->fn) {
		/* The one reply: what it says, or that it could not be read. */
		req->done = true;
		if (req->decode(genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), req->out))
			return NL_STOP;
		req->decoded = 1;
		return NL_OK;
	}
	/* The rest of a dump stopped early is read to its end, and dropped. */
	if (req->stopped)
		return NL_SKIP;
	if (rc_decode_record(genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), &rec)) {
		/* An exit record that cannot be read is a record missed. */
		if (req->exits)
			req->c->queue_missed++;
		return NL_SKIP;
	}
	if (rc_deliver(req, &rec, true))
		return NL_OK;
	/* Exit records come one to a datagram: none is dropped here. */
	return req->exits ? NL_STOP : NL_SKIP;
}

/* The extended ACK's message, from the attributes after an error or DONE. */
static void keep_extack(struct rc_client *c, struct nlattr *attrs, int len)
{
	struct nlattr *a;
	int rem;

	nla_for_each_attr(a, attrs, len, rem) {
		if (nla_type(a) == NLMSGERR_ATTR_MSG)
			nla_strlcpy(c->extack, a, sizeof(c->extack));
	}
}

/* Keep the extended ACK message of the ACK @e, an error or not. */
static void keep_ack_extack(struct rc_client *c, struct nlmsgerr *e)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	int off = sizeof(*e);

	c->extack[0] = '\0';
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	keep_extack(c, (struct nlattr *)((char *)e + off),
		    (int)nlh->nlmsg_len - NLMSG_HDRLEN - off);
}

/* Keep the errno and the extended ACK message of an error reply. */
static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct rc_request *req = arg;

	(void)nla;
	req->c->error = e->error;
	req->done = true;
	keep_ack_extack(req->c, e);
	return NL_STOP;
}

/* A success may come with a warning, such as counters set-events did not get. */
static int on_ack(struct nl_msg *msg, void *arg)
{
	struct rc_request *req = arg;

	req->done = true;
	keep_ack_extack(req->c, nlmsg_data(nlmsg_hdr(msg)));
	return NL_STOP;
}

/* A dump that failed says so in its NLMSG_DONE: an errno, then the extack. */
static int on_finish(struct nl_msg *msg, void *arg)
{
	struct rc_request *req = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	int len = (int)nlh->nlmsg_len - NLMSG_LENGTH(sizeof(int));
	int err;

	req->done = true;
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		req->interrupted = true;
	if (len < 0)
		return NL_STOP;
	memcpy(&err, nlmsg_data(nlh), sizeof(err));
	if (err) {
		req->c->error = err;
		keep_extack(req->c, (struct nlattr *)((char *)nlmsg_data(nlh) + sizeof(int)), len);
	}
	return NL_STOP;
}

/*
 * A dump that changed as it was read (NLM_F_DUMP_INTR) is read to its end
 * all the same, and the caller told (libnl would fail it).
 */
static int on_dump_intr(struct nl_msg *msg, void *arg)
{
	struct rc_request *req = arg;

	req->interrupted = true;
	return NL_OK;
}

/* Build @cmd with attribute @attr = @id unless @attr is 0. */
static struct nl_msg *rc_request_msg(struct rc_client *c, uint8_t cmd, int flags,
				     int attr, uint32_t id)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0, flags,
			 cmd, RECOUNT_FAMILY_VERSION) ||
	    (attr && nla_put_u32(msg, attr, id) < 0) ||
	    (cmd == RECOUNT_CMD_GET && attr != RECOUNT_A_CPU && attr != RECOUNT_A_SCOPE &&
	     c->runtime_version &&
	     nla_put_u32(msg, RECOUNT_A_RUNTIME_VERSION, c->runtime_version) < 0)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/*
 * Send @msg (consumed) and receive until the answer is complete: its reply,
 * its ACK, an error, or a dump's end. Exit records that come meanwhile are
 * kept for rc_receive().
 */
static int rc_transact(struct rc_client *c, struct nl_msg *msg, struct rc_request *req)
{
	struct nl_cb *cb;
	int err;

	c->error = 0;
	c->extack[0] = '\0';
	if (!msg)
		return -ENOMEM;
	err = nl_send_auto(c->sk, msg);
	nlmsg_free(msg);
	if (err < 0)
		return -EIO;

	cb = nl_cb_clone(nl_socket_get_cb(c->sk));
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, req);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, req);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, req);
	nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_dump_intr, req);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, req);
	do {
		err = nl_recvmsgs(c->sk, cb);
		/*
		 * Exit records filled the socket, and its ACK was dropped:
		 * they come only once the listener is in place, so it is, and
		 * the kernel counts what they lost.
		 */
		if (err == -NLE_NOMEM && errno == ENOBUFS && req->registering) {
			req->done = true;
			err = 0;
		}
	} while (err >= 0 && !req->done);
	nl_cb_put(cb);
	if (c->error)
		return c->error;
	if (req->stopped)
		return req->stop < 0 ? req->stop : -ECANCELED;
	if (err < 0 || (!req->fn && !req->decoded))
		return -EPROTO;
	return 0;
}

static int decode_record(struct nlattr *attrs, int len, void *out)
{
	return rc_decode_record(attrs, len, out);
}

int rc_get(struct rc_client *c, enum rc_selector sel, uint32_t id,
	   struct rc_record *rec)
{
	struct rc_request req = { .c = c, .decode = decode_record, .out = rec };

	return rc_transact(c, rc_request_msg(c, RECOUNT_CMD_GET, 0, sel, id), &req);
}

static int rc_dump_once(struct rc_client *c, enum recount_scope scope, uint32_t tgid,
			rc_record_fn fn, void *arg, bool *interrupted, bool lean)
{
	struct rc_request req = { .c = c, .fn = fn, .arg = arg };
	struct nl_msg *msg;
	int err;

	msg = rc_request_msg(c, RECOUNT_CMD_GET, NLM_F_DUMP, RECOUNT_A_SCOPE, scope);
	if (msg && ((tgid && nla_put_u32(msg, RECOUNT_A_TGID, tgid) < 0) ||
		    (lean && nla_put_flag(msg, RECOUNT_A_LEAN) < 0))) {
		nlmsg_free(msg);
		msg = NULL;
	}
	if (msg && scope != RECOUNT_SCOPE_CPUS && c->runtime_version &&
	    nla_put_u32(msg, RECOUNT_A_RUNTIME_VERSION, c->runtime_version) < 0) {
		nlmsg_free(msg);
		msg = NULL;
	}
	err = rc_transact(c, msg, &req);
	if (interrupted)
		*interrupted = req.interrupted;
	return err;
}

int rc_dump(struct rc_client *c, enum recount_scope scope, uint32_t tgid,
	    rc_record_fn fn, void *arg, bool *interrupted)
{
	int err;

	/*
	 * Lean records: the state once, no per-kind usage of a single kind. A
	 * kernel from before them refuses the attribute, before any record.
	 */
	err = rc_dump_once(c, scope, tgid, fn, arg, interrupted, true);
	if (err == -EINVAL && strstr(c->extack, "Unknown attribute"))
		err = rc_dump_once(c, scope, tgid, fn, arg, interrupted, false);
	return err;
}

static struct nla_policy kind_cpus_policy[RECOUNT_A_KIND_CPUS_MAX + 1] = {
	[RECOUNT_A_KIND_CPUS_KIND] = { .type = NLA_U32 },
	[RECOUNT_A_KIND_CPUS_CPUS] = { .type = NLA_STRING },
};

/* get-info's event nest: the chosen event of its index. */
static void decode_info_event(struct nlattr *nest, struct rc_info *info)
{
	struct nlattr *eb[RECOUNT_A_EVENT_MAX + 1];
	struct rc_event *ev;
	uint32_t i;

	if (nla_parse_nested(eb, RECOUNT_A_EVENT_MAX, nest, event_policy) < 0 ||
	    !eb[RECOUNT_A_EVENT_INDEX])
		return;
	i = nla_get_u32(eb[RECOUNT_A_EVENT_INDEX]);
	if (i >= RC_MAX_EVENTS)
		return;
	ev = &info->events[i];
	if (eb[RECOUNT_A_EVENT_TYPE])
		ev->type = nla_get_u32(eb[RECOUNT_A_EVENT_TYPE]);
	if (eb[RECOUNT_A_EVENT_MODE])
		ev->mode = nla_get_u32(eb[RECOUNT_A_EVENT_MODE]);
	if (eb[RECOUNT_A_EVENT_CONFIG])
		ev->config = nla_get_u64(eb[RECOUNT_A_EVENT_CONFIG]);
	if ((int)i >= info->nr_events)
		info->nr_events = i + 1;
}

static int decode_info(struct nlattr *attrs, int len, void *out)
{
	struct nlattr *tb[RECOUNT_A_KIND_CPUS_MAX + 1], *a;
	struct rc_info *info = out;
	int rem;

	memset(info, 0, sizeof(*info));
	nla_for_each_attr(a, attrs, len, rem) {
		switch (nla_type(a)) {
		case RECOUNT_A_FLAGS:
			info->flags = nla_get_u32(a);
			break;
		case RECOUNT_A_METRICS:
			info->metrics = nla_get_u32(a);
			break;
		case RECOUNT_A_ENERGY_SOURCE:
			info->energy_source = nla_get_u32(a);
			break;
		case RECOUNT_A_LISTENERS:
			info->listeners = nla_get_u32(a);
			break;
		case RECOUNT_A_EVENT_GEN:
			info->event_gen = nla_get_u32(a);
			break;
		case RECOUNT_A_MAX_EVENTS:
			info->max_events = nla_get_u32(a);
			break;
		case RECOUNT_A_PMU_COUNTERS:
			info->pmu_counters = nla_get_u32(a);
			break;
		case RECOUNT_A_EVENT:
			decode_info_event(a, info);
			break;
		case RECOUNT_A_KIND_CPUS:
			if (info->nr_kinds == RC_MAX_KINDS ||
			    nla_parse_nested(tb, RECOUNT_A_KIND_CPUS_MAX, a, kind_cpus_policy) < 0)
				break;
			if (tb[RECOUNT_A_KIND_CPUS_KIND])
				info->kind_cpus[info->nr_kinds].kind =
					nla_get_u32(tb[RECOUNT_A_KIND_CPUS_KIND]);
			if (tb[RECOUNT_A_KIND_CPUS_CPUS])
				nla_strlcpy(info->kind_cpus[info->nr_kinds].cpus,
					    tb[RECOUNT_A_KIND_CPUS_CPUS],
					    sizeof(info->kind_cpus[0].cpus));
			info->nr_kinds++;
			break;
		}
	}
	return 0;
}

int rc_get_info(struct rc_client *c, struct rc_info *info)
{
	struct rc_request req = { .c = c, .decode = decode_info, .out = info };

	return rc_transact(c, rc_request_msg(c, RECOUNT_CMD_GET_INFO, 0, 0, 0), &req);
}

int rc_set_events(struct rc_client *c, const struct rc_event *ev, int nr)
{
	struct rc_request req = { .c = c, .decoded = 1 };
	struct nl_msg *msg = rc_request_msg(c, RECOUNT_CMD_SET_EVENTS, 0, 0, 0);
	struct nlattr *nest;
	int i;

	for (i = 0; msg && i < nr; i++) {
		nest = nla_nest_start(msg, RECOUNT_A_EVENT | NLA_F_NESTED);
		if (!nest ||
		    nla_put_u32(msg, RECOUNT_A_EVENT_TYPE, ev[i].type) < 0 ||
		    nla_put_u64(msg, RECOUNT_A_EVENT_CONFIG, ev[i].config) < 0 ||
		    nla_put_u32(msg, RECOUNT_A_EVENT_MODE, ev[i].mode) < 0) {
			nlmsg_free(msg);
			msg = NULL;
			break;
		}
		nla_nest_end(msg, nest);
	}
	/* The answer is an ACK: ask for one. */
	if (msg)
		nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_ACK;
	return rc_transact(c, msg, &req);
}

static int set_rcvbuf(struct nl_sock *sk, int bytes)
{
	int fd = nl_socket_get_fd(sk);

	/* Beyond net.core.rmem_max only with CAP_NET_ADMIN: try that first. */
	if (!setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)))
		return 0;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)))
		return -errno;
	return 0;
}

int rc_set_rcvbuf(struct rc_client *c, int bytes)
{
	return set_rcvbuf(c->sk, bytes);
}

int rc_get_rcvbuf(struct rc_client *c)
{
	socklen_t len = sizeof(int);
	int bytes;

	if (getsockopt(nl_socket_get_fd(c->sk), SOL_SOCKET, SO_RCVBUF, &bytes, &len))
		return -errno;
	return bytes;
}

int rc_listen(struct rc_client *c, const char *cpulist, bool reg)
{
	struct rc_request req = { .c = c, .registering = reg };
	struct nl_msg *msg;
	int one = 1, err;

	msg = rc_request_msg(c, reg ? RECOUNT_CMD_REGISTER : RECOUNT_CMD_DEREGISTER, 0, 0, 0);
	if (msg && nla_put_string(msg, RECOUNT_A_CPUMASK, cpulist) < 0) {
		nlmsg_free(msg);
		msg = NULL;
	}
	/* The answer is an ACK: ask for one. */
	if (msg)
		nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_ACK;
	req.fn = NULL;
	req.decoded = 1;
	err = rc_transact(c, msg, &req);
	/*
	 * Not before the ACK, which a full socket would drop without a word.
	 * From now on the kernel counts what overflows and says so in the next
	 * record (RECOUNT_A_MISSED): an ENOBUFS error from recv() would only
	 * repeat it.
	 */
	if (!err && reg)
		setsockopt(nl_socket_get_fd(c->sk), SOL_NETLINK, NETLINK_NO_ENOBUFS, &one,
			   sizeof(one));
	return err;
}

int rc_receive(struct rc_client *c, int timeout_ms, const sigset_t *sigmask,
	       rc_record_fn fn, void *arg)
{
	struct rc_request req = { .c = c, .fn = fn, .arg = arg, .exits = true };
	struct pollfd pfd = { .fd = nl_socket_get_fd(c->sk), .events = POLLIN };
	struct timespec ts, end;
	unsigned int i;
	struct nl_cb *cb;
	int err;

	/* First the records that came while a request was answered. */
	for (i = 0; i < c->nr_queued && rc_deliver(&req, &c->queued[i], false); i++)
		;
	if (req.stopped)
		i++;
	if (i) {
		memmove(c->queued, c->queued + i, (c->nr_queued - i) * sizeof(*c->queued));
		c->nr_queued -= i;
	}
	if (req.stopped)
		return 1;

	/* The wait ends @timeout_ms from now, however many records came. */
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_ms / 1000;
	end.tv_nsec += timeout_ms % 1000 * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}

	cb = nl_cb_clone(nl_socket_get_cb(c->sk));
	if (!cb)
		return -ENOMEM;
	/* Exit records are events: no sequence number to check. */
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, no_seq_check, NULL);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &req);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec = end.tv_sec - ts.tv_sec;
		ts.tv_nsec = end.tv_nsec - ts.tv_nsec;
		if (ts.tv_nsec < 0) {
			ts.tv_sec--;
			ts.tv_nsec += 1000000000L;
		}
		if (ts.tv_sec < 0)
			ts = (struct timespec){};
		err = ppoll(&pfd, 1, timeout_ms < 0 ? NULL : &ts, sigmask);
		if (err < 0) {
			err = -errno;
			break;
		}
		if (err == 0)
			break;
		err = nl_recvmsgs(c->sk, cb);
		if (req.stopped) {
			err = 1;
			break;
		}
		if (err < 0) {
			err = -EIO;
			break;
		}
	}
	nl_cb_put(cb);
	return err;
}

int ts_open(struct ts_client *t)
{
	t->sk = nl_socket_alloc();
	if (!t->sk)
		return -ENOMEM;
	if (genl_connect(t->sk) < 0) {
		ts_close(t);
		return -EIO;
	}
	nl_socket_disable_auto_ack(t->sk);
	t->family = genl_ctrl_resolve(t->sk, TASKSTATS_GENL_NAME);
	if (t->family < 0) {
		ts_close(t);
		return -ENOENT;
	}
	return 0;
}

void ts_close(struct ts_client *t)
{
	nl_socket_free(t->sk);
	t->sk = NULL;
	free(t->queued);
	t->queued = NULL;
	t->nr_queued = 0;
	t->queue_room = 0;
}

static struct nla_policy ts_aggr_policy[TASKSTATS_TYPE_MAX + 1] = {
	[TASKSTATS_TYPE_PID] = { .type = NLA_U32 },
	[TASKSTATS_TYPE_TGID] = { .type = NLA_U32 },
	[TASKSTATS_TYPE_STATS] = { .type = NLA_UNSPEC },
};

/* One TASKSTATS_TYPE_AGGR_PID or _AGGR_TGID nest: an id and its stats. */
static int ts_decode_aggr(struct nlattr *nest, struct ts_record *rec)
{
	struct nlattr *tb[TASKSTATS_TYPE_MAX + 1];
	int n;

	memset(rec, 0, sizeof(*rec));
	if (nla_parse_nested(tb, TASKSTATS_TYPE_MAX, nest, ts_aggr_policy) < 0 ||
	    !tb[TASKSTATS_TYPE_STATS])
		return -EPROTO;
	rec->has_pid = !!tb[TASKSTATS_TYPE_PID];
	if (tb[TASKSTATS_TYPE_PID])
		rec->id = nla_get_u32(tb[TASKSTATS_TYPE_PID]);
	else if (tb[TASKSTATS_TYPE_TGID])
		rec->id = nla_get_u32(tb[TASKSTATS_TYPE_TGID]);
	/* Older kernels send less, newer more: keep what both know. */
	n = nla_len(tb[TASKSTATS_TYPE_STATS]);
	if (n > (int)sizeof(rec->stats))
		n = sizeof(rec->stats);
	memcpy(&rec->stats, nla_data(tb[TASKSTATS_TYPE_STATS]), n);
	rec->version = rec->stats.version;
	return 0;
}

static bool ts_is_aggr(const struct nlattr *a)
{
	return nla_type(a) == TASKSTATS_TYPE_AGGR_PID || nla_type(a) == TASKSTATS_TYPE_AGGR_TGID;
}

int ts_decode(struct nlattr *attrs, int len, struct ts_record *rec)
{
	struct nlattr *a;
	int rem;

	nla_for_each_attr(a, attrs, len, rem) {
		if (ts_is_aggr(a))
			return ts_decode_aggr(a, rec);
	}
	return -ENOENT;
}

struct ts_request {
	struct ts_client *t;
	struct ts_record *rec;
	struct cgroupstats *cg;		/* a CGROUPSTATS_CMD_GET's reply */
	void (*fn)(const struct ts_record *rec, void *arg);
	void *arg;
	int error, decoded;
	bool done;
};

/* Keep an exit's record that came while registering, for ts_drain(). */
static void ts_queue_exit(struct ts_client *t, const struct ts_record *rec)
{
	struct ts_record *q;
	unsigned int room;

	if (t->nr_queued == RC_QUEUE_MAX)
		return;
	if (t->nr_queued == t->queue_room) {
		room = t->queue_room ? 2 * t->queue_room : 16;
		q = realloc(t->queued, room * sizeof(*q));
		/* Then it is missed, as one the kernel could not send. */
		if (!q)
			return;
		t->queued = q;
		t->queue_room = room;
	}
	t->queued[t->nr_queued++] = *rec;
}

static int ts_on_valid(struct nl_msg *msg, void *arg)
{
	struct ts_request *req = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct ts_record rec;
	struct nlattr *a;
	int rem;

	if (nlh->nlmsg_type != req->t->family)
		return NL_SKIP;
	if (req->cg) {
		req->done = true;
		nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), rem) {
			size_t n = nla_len(a);

			if (nla_type(a) != CGROUPSTATS_TYPE_CGROUP_STATS)
				continue;
			/* Older kernels send less, newer more: keep what both know. */
			memcpy(req->cg, nla_data(a), n < sizeof(*req->cg) ? n : sizeof(*req->cg));
			req->decoded++;
		}
		return NL_OK;
	}
	if (req->rec) {
		req->done = true;
		if (!ts_decode(genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), req->rec))
			req->decoded++;
		return NL_OK;
	}
	/*
	 * An exit: the thread's, and with the last thread its process's; kept
	 * for later if it came while registering.
	 */
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), rem) {
		if (ts_is_aggr(a) && !ts_decode_aggr(a, &rec)) {
			req->decoded++;
			if (req->fn)
				req->fn(&rec, req->arg);
			else
				ts_queue_exit(req->t, &rec);
		}
	}
	return NL_OK;
}

static int ts_on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct ts_request *req = arg;

	req->error = e->error;
	req->done = true;
	return NL_STOP;
}

static int ts_on_ack(struct nl_msg *msg, void *arg)
{
	struct ts_request *req = arg;

	req->done = true;
	return NL_STOP;
}

static int ts_transact(struct ts_client *t, int attr, const void *data, int len,
		       struct ts_request *req)
{
	int cmd = req->cg ? CGROUPSTATS_CMD_GET : TASKSTATS_CMD_GET;
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb;
	int err;

	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, t->family, 0, 0,
			 cmd, TASKSTATS_VERSION) ||
	    nla_put(msg, attr, len, data) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	/* Registering answers with an ACK only. */
	if (attr == TASKSTATS_CMD_ATTR_REGISTER_CPUMASK)
		nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_ACK;
	err = nl_send_auto(t->sk, msg);
	nlmsg_free(msg);
	if (err < 0)
		return -EIO;
	cb = nl_cb_clone(nl_socket_get_cb(t->sk));
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, ts_on_valid, req);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, ts_on_ack, req);
	nl_cb_err(cb, NL_CB_CUSTOM, ts_on_error, req);
	req->t = t;
	/* Until the reply, the ACK or an error: exit records may come first. */
	do {
		err = nl_recvmsgs(t->sk, cb);
		/* They filled the socket, and dropped the ACK: as rc_transact(). */
		if (err == -NLE_NOMEM && errno == ENOBUFS &&
		    attr == TASKSTATS_CMD_ATTR_REGISTER_CPUMASK) {
			req->done = true;
			err = 0;
		}
	} while (err >= 0 && !req->done);
	nl_cb_put(cb);
	if (req->error)
		return req->error;
	return err < 0 ? -EPROTO : 0;
}

int ts_get(struct ts_client *t, uint32_t id, bool tgid, struct ts_record *rec)
{
	struct ts_request req = { .rec = rec };
	int err;

	err = ts_transact(t, tgid ? TASKSTATS_CMD_ATTR_TGID : TASKSTATS_CMD_ATTR_PID,
			  &id, sizeof(id), &req);
	if (!err && !req.decoded)
		return -EPROTO;
	return err;
}

int ts_cgroup(struct ts_client *t, int fd, struct cgroupstats *stats)
{
	struct ts_request req = { .cg = stats };
	uint32_t v = fd;
	int err;

	memset(stats, 0, sizeof(*stats));
	err = ts_transact(t, CGROUPSTATS_CMD_ATTR_FD, &v, sizeof(v), &req);
	if (!err && !req.decoded)
		return -EPROTO;
	return err;
}

int ts_listen(struct ts_client *t, const char *cpulist)
{
	struct ts_request req = {};
	int one = 1, err;

	err = ts_transact(t, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, cpulist,
			  strlen(cpulist) + 1, &req);
	/* Not before the ACK: see rc_listen(). */
	if (!err)
		setsockopt(nl_socket_get_fd(t->sk), SOL_NETLINK, NETLINK_NO_ENOBUFS, &one,
			   sizeof(one));
	return err;
}

int ts_drain(struct ts_client *t, void (*fn)(const struct ts_record *rec, void *arg),
	     void *arg)
{
	struct ts_request req = { .t = t, .fn = fn, .arg = arg };
	struct pollfd pfd = { .fd = nl_socket_get_fd(t->sk), .events = POLLIN };
	struct nl_cb *cb;
	unsigned int i;
	int err = 0;

	for (i = 0; i < t->nr_queued; i++)
		fn(&t->queued[i], arg);
	t->nr_queued = 0;

	cb = nl_cb_clone(nl_socket_get_cb(t->sk));
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, no_seq_check, NULL);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, ts_on_valid, &req);
	while (poll(&pfd, 1, 0) > 0) {
		err = nl_recvmsgs(t->sk, cb);
		if (err < 0)
			break;
	}
	nl_cb_put(cb);
	return err < 0 ? -EIO : 0;
}
