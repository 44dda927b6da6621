// SPDX-License-Identifier: GPL-2.0
/*
 * A client of the RECOUNT generic netlink family, on libnl-genl-3.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
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
	[RECOUNT_A_USAGE_INEXACT] = { .type = NLA_U32 },
	[RECOUNT_A_USAGE_KIND] = { .type = NLA_U32 },
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
};

static struct nla_policy runtime_policy[RECOUNT_A_RUNTIME_MAX + 1] = {
	[RECOUNT_A_RUNTIME_CPU_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_QUEUE_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_PAGE_FAULT_TIME] = { .type = NLA_U64 },
	[RECOUNT_A_RUNTIME_LOCK_CONTENTION_TIME] = { .type = NLA_U64 },
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
	};
	size_t i;

	if (nla_parse_nested(tb, RECOUNT_A_RUNTIME_MAX, nest, runtime_policy) < 0)
		return -EPROTO;
	memset(rt, 0, sizeof(*rt));
	rt->has = true;
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
};

static int decode_usage(struct nlattr *nest, struct rc_usage *u)
{
	struct nlattr *tb[RECOUNT_A_USAGE_MAX + 1];
	size_t i;

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
	return 0;
}

int rc_decode_record(struct nlattr *attrs, int len, struct rc_record *rec)
{
	struct nlattr *tb[RECOUNT_A_MAX + 1], *a;
	int rem;

	memset(rec, 0, sizeof(*rec));
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
	if (tb[RECOUNT_A_COMM])
		nla_strlcpy(rec->comm, tb[RECOUNT_A_COMM], sizeof(rec->comm));
	if (tb[RECOUNT_A_FLAGS]) {
		rec->has_flags = true;
		rec->flags = nla_get_u32(tb[RECOUNT_A_FLAGS]);
	}
	if (tb[RECOUNT_A_METRICS])
		rec->metrics = nla_get_u32(tb[RECOUNT_A_METRICS]);
	if (tb[RECOUNT_A_ENERGY_SOURCE])
		rec->energy_source = nla_get_u32(tb[RECOUNT_A_ENERGY_SOURCE]);
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
		rec->runtime_struct_len = nla_len(tb[RECOUNT_A_RUNTIME_STRUCT]);
		if (rec->runtime_struct_len > (int)sizeof(rec->runtime_struct))
			return -EPROTO;
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
	return 0;
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

/* A request in flight: how to decode its reply, and into what. */
struct rc_request {
	struct rc_client *c;
	int (*decode)(struct nlattr *attrs, int len, void *out);
	void *out;
	int decoded;
};

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct rc_request *req = arg;
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));

	if (req->decode(genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), req->out))
		return NL_STOP;
	req->decoded = 1;
	return NL_OK;
}

/* Keep the errno and the extended ACK message of an error reply. */
static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct rc_request *req = arg;
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	int off = sizeof(*e);
	struct nlattr *a;
	int rem;

	(void)nla;
	req->c->error = e->error;
	req->c->extack[0] = '\0';
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	rem = (int)nlh->nlmsg_len - NLMSG_HDRLEN - off;
	nla_for_each_attr(a, (struct nlattr *)((char *)e + off), rem, rem) {
		if (nla_type(a) == NLMSGERR_ATTR_MSG)
			nla_strlcpy(req->c->extack, a, sizeof(req->c->extack));
	}
	return NL_STOP;
}

/* Send @cmd, with attribute @attr = @id unless @attr is 0; decode the reply. */
static int rc_transact(struct rc_client *c, uint8_t cmd, int attr, uint32_t id,
		       struct rc_request *req)
{
	struct nl_msg *msg;
	struct nl_cb *cb;
	int err;

	c->error = 0;
	c->extack[0] = '\0';
	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, c->family, 0, 0,
			 cmd, RECOUNT_FAMILY_VERSION) ||
	    (attr && nla_put_u32(msg, attr, id) < 0) ||
	    (attr && attr != RECOUNT_A_CPU && c->runtime_version &&
	     nla_put_u32(msg, RECOUNT_A_RUNTIME_VERSION, c->runtime_version) < 0)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	err = nl_send_auto(c->sk, msg);
	nlmsg_free(msg);
	if (err < 0)
		return -EIO;

	cb = nl_cb_clone(nl_socket_get_cb(c->sk));
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, req);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, req);
	err = nl_recvmsgs(c->sk, cb);
	nl_cb_put(cb);
	if (c->error)
		return c->error;
	if (err < 0 || !req->decoded)
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

	return rc_transact(c, RECOUNT_CMD_GET, sel, id, &req);
}

static struct nla_policy kind_cpus_policy[RECOUNT_A_KIND_CPUS_MAX + 1] = {
	[RECOUNT_A_KIND_CPUS_KIND] = { .type = NLA_U32 },
	[RECOUNT_A_KIND_CPUS_CPUS] = { .type = NLA_STRING },
};

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

	return rc_transact(c, RECOUNT_CMD_GET_INFO, 0, 0, &req);
}
