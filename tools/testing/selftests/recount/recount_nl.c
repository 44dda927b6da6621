// SPDX-License-Identifier: GPL-2.0
/*
 * A small raw generic netlink client of the RECOUNT family for the selftests.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "recount_nl.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define RNL_ATTR_DATA(a)	((void *)((char *)(a) + NLA_HDRLEN))
#define RNL_ATTR_LEN(a)		((int)(a)->nla_len - NLA_HDRLEN)

/* Is @a a whole attribute within the @rem bytes left? */
static bool rnl_attr_ok(const struct nlattr *a, int rem)
{
	return rem >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) && a->nla_len <= rem;
}

static struct nlattr *rnl_attr_next(const struct nlattr *a, int *rem)
{
	*rem -= NLA_ALIGN(a->nla_len);
	return (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
}

/* Copy a string attribute, NUL-terminated even if the kernel's was not. */
static void rnl_attr_strcpy(char *dst, size_t size, const struct nlattr *a)
{
	size_t len = RNL_ATTR_LEN(a);

	if (len >= size)
		len = size - 1;
	memcpy(dst, RNL_ATTR_DATA(a), len);
	dst[len] = '\0';
}

void rnl_msg_init(struct rnl *nl, struct rnl_msg *m, __u8 cmd, __u16 flags)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)m->buf;
	struct genlmsghdr *gh = NLMSG_DATA(nlh);

	memset(m->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	nlh->nlmsg_type = nl->family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++nl->seq;
	gh->cmd = cmd;
	gh->version = RECOUNT_FAMILY_VERSION;
	nlh->nlmsg_len = m->len;
}

void rnl_put(struct rnl_msg *m, __u16 type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->buf + m->len);

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy(RNL_ATTR_DATA(a), data, len);
	memset((char *)RNL_ATTR_DATA(a) + len, 0, NLA_ALIGN(a->nla_len) - a->nla_len);
	m->len += NLA_ALIGN(a->nla_len);
	((struct nlmsghdr *)m->buf)->nlmsg_len = m->len;
}

void rnl_put_u32(struct rnl_msg *m, __u16 type, __u32 v)
{
	rnl_put(m, type, &v, sizeof(v));
}

#define USAGE(attr, field, bits) \
	{ attr, offsetof(struct rnl_usage, field), sizeof(((struct rnl_usage *)0)->field), bits }

/* The attributes of a usage, where they go, and their bits in rnl_usage.has. */
static const struct {
	int attr;
	size_t offset, size;
	unsigned int has;
} usage_values[] = {
	USAGE(RECOUNT_A_USAGE_USER_TIME, user, 0),
	USAGE(RECOUNT_A_USAGE_KERNEL_TIME, kernel, 0),
	USAGE(RECOUNT_A_USAGE_IDLE_TIME, idle, RNL_IDLE),
	USAGE(RECOUNT_A_USAGE_USER_CYCLES, user_cycles, RNL_CYCLES | RNL_USER_PMU),
	USAGE(RECOUNT_A_USAGE_KERNEL_CYCLES, kernel_cycles, RNL_CYCLES | RNL_KERNEL_PMU),
	USAGE(RECOUNT_A_USAGE_USER_INSTRUCTIONS, user_instructions,
	      RNL_INSTRUCTIONS | RNL_USER_PMU),
	USAGE(RECOUNT_A_USAGE_KERNEL_INSTRUCTIONS, kernel_instructions,
	      RNL_INSTRUCTIONS | RNL_KERNEL_PMU),
	USAGE(RECOUNT_A_USAGE_ENERGY, energy, RNL_ENERGY),
	USAGE(RECOUNT_A_USAGE_IDLE_ENERGY, idle_energy, RNL_IDLE_ENERGY),
	USAGE(RECOUNT_A_USAGE_IDLE_IRQ_TIME, idle_irq, RNL_IDLE_IRQ),
	USAGE(RECOUNT_A_USAGE_INEXACT, inexact, 0),
	USAGE(RECOUNT_A_USAGE_KIND, kind, RNL_KIND),
};

/* Attribute @type of the nest @nest, if it is there and @size bytes. */
static bool rnl_nested(const struct nlattr *nest, int type, void *value, size_t size)
{
	int len = RNL_ATTR_LEN(nest);
	struct nlattr *a;

	for (a = RNL_ATTR_DATA(nest); rnl_attr_ok(a, len); a = rnl_attr_next(a, &len)) {
		if ((a->nla_type & NLA_TYPE_MASK) == type && RNL_ATTR_LEN(a) == (int)size) {
			memcpy(value, RNL_ATTR_DATA(a), size);
			return true;
		}
	}
	return false;
}

/* A usage's event nest: its counts go to their index. */
static void parse_event_counts(const struct nlattr *nest, struct rnl_usage *u)
{
	__u32 i;

	if (!rnl_nested(nest, RECOUNT_A_EVENT_INDEX, &i, sizeof(i)) || i >= RNL_MAX_EVENTS)
		return;
	if (rnl_nested(nest, RECOUNT_A_EVENT_USER, &u->event_user[i], sizeof(__u64)))
		u->event_has |= 1u << (2 * i);
	if (rnl_nested(nest, RECOUNT_A_EVENT_KERNEL, &u->event_kernel[i], sizeof(__u64)))
		u->event_has |= 1u << (2 * i + 1);
}

/* get-info's event nest: the chosen event of its index. */
static void parse_event(const struct nlattr *nest, struct rnl_record *r)
{
	struct rnl_event *ev;
	__u32 i;

	if (!rnl_nested(nest, RECOUNT_A_EVENT_INDEX, &i, sizeof(i)) || i >= RNL_MAX_EVENTS)
		return;
	ev = &r->events[i];
	rnl_nested(nest, RECOUNT_A_EVENT_TYPE, &ev->type, sizeof(ev->type));
	rnl_nested(nest, RECOUNT_A_EVENT_MODE, &ev->mode, sizeof(ev->mode));
	rnl_nested(nest, RECOUNT_A_EVENT_CONFIG, &ev->config, sizeof(ev->config));
	if ((int)i >= r->nr_events)
		r->nr_events = i + 1;
}

/* An attribute of the wrong size is left out, as one this test does not know. */
static void parse_usage(struct nlattr *nest, struct rnl_usage *u)
{
	int len = RNL_ATTR_LEN(nest);
	struct nlattr *a;
	size_t i;

	memset(u, 0, sizeof(*u));
	for (a = RNL_ATTR_DATA(nest); rnl_attr_ok(a, len); a = rnl_attr_next(a, &len)) {
		if ((a->nla_type & NLA_TYPE_MASK) == RECOUNT_A_USAGE_EVENT) {
			parse_event_counts(a, u);
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(usage_values); i++) {
			if (usage_values[i].attr != (a->nla_type & NLA_TYPE_MASK))
				continue;
			if (RNL_ATTR_LEN(a) != (int)usage_values[i].size)
				break;
			memcpy((char *)u + usage_values[i].offset, RNL_ATTR_DATA(a),
			       usage_values[i].size);
			u->has |= usage_values[i].has;
			break;
		}
	}
}

static void parse_runtime(struct nlattr *nest, struct rnl_runtime *rt)
{
	int len = RNL_ATTR_LEN(nest);
	struct nlattr *a;

	memset(rt, 0, sizeof(*rt));
	rt->has = true;
	for (a = RNL_ATTR_DATA(nest); rnl_attr_ok(a, len); a = rnl_attr_next(a, &len)) {
		__u64 v;

		if (RNL_ATTR_LEN(a) != sizeof(v))
			continue;
		memcpy(&v, RNL_ATTR_DATA(a), sizeof(v));
		if ((a->nla_type & NLA_TYPE_MASK) >= RECOUNT_A_RUNTIME_QUEUE_COUNT &&
		    (a->nla_type & NLA_TYPE_MASK) <= RECOUNT_A_RUNTIME_LOCK_CONTENTION_MAX_TIME) {
			int i = (a->nla_type & NLA_TYPE_MASK) - RECOUNT_A_RUNTIME_QUEUE_COUNT;
			struct rnl_wait *w = &rt->wait[i / 3];
			__u64 *field[] = { &w->count, &w->max, &w->max_time };

			*field[i % 3] = v;
			continue;
		}
		switch (a->nla_type & NLA_TYPE_MASK) {
		case RECOUNT_A_RUNTIME_CPU_TIME:
			rt->cpu = v;
			break;
		case RECOUNT_A_RUNTIME_QUEUE_TIME:
			rt->queue = v;
			break;
		case RECOUNT_A_RUNTIME_PAGE_FAULT_TIME:
			rt->fault = v;
			break;
		case RECOUNT_A_RUNTIME_LOCK_CONTENTION_TIME:
			rt->lock = v;
			break;
		}
	}
}

static void parse_kind_cpus(struct nlattr *nest, struct rnl_record *r)
{
	int len = RNL_ATTR_LEN(nest), kind = -1;
	struct nlattr *a;

	for (a = RNL_ATTR_DATA(nest); rnl_attr_ok(a, len); a = rnl_attr_next(a, &len)) {
		if ((a->nla_type & NLA_TYPE_MASK) == RECOUNT_A_KIND_CPUS_KIND)
			memcpy(&kind, RNL_ATTR_DATA(a), 4);
		if ((a->nla_type & NLA_TYPE_MASK) == RECOUNT_A_KIND_CPUS_CPUS &&
		    kind >= 0 && kind < RNL_MAX_KINDS)
			rnl_attr_strcpy(r->kind_cpus[kind], sizeof(r->kind_cpus[0]), a);
	}
}

#define NO_FLAG ((size_t)-1)
#define SCALAR(attr, field, flag) \
	{ attr, offsetof(struct rnl_record, field), sizeof(((struct rnl_record *)0)->field), flag }
#define FLAG(field) offsetof(struct rnl_record, field)

/* The u32 and u64 attributes of a record, where they go, what says they came. */
static const struct {
	int attr;
	size_t offset, size, flag;
} scalars[] = {
	SCALAR(RECOUNT_A_PID, pid, FLAG(has_pid)),
	SCALAR(RECOUNT_A_TGID, tgid, FLAG(has_tgid)),
	SCALAR(RECOUNT_A_CPU, cpu, FLAG(has_cpu)),
	SCALAR(RECOUNT_A_FLAGS, flags, NO_FLAG),
	SCALAR(RECOUNT_A_METRICS, metrics, FLAG(has_metrics)),
	SCALAR(RECOUNT_A_ENERGY_SOURCE, energy_source, NO_FLAG),
	SCALAR(RECOUNT_A_EXIT_CODE, exit_code, FLAG(has_exit)),
	SCALAR(RECOUNT_A_EXIT_TIME, exit_time, NO_FLAG),
	SCALAR(RECOUNT_A_MISSED, missed, NO_FLAG),
	SCALAR(RECOUNT_A_LISTENERS, listeners, NO_FLAG),
	SCALAR(RECOUNT_A_START_TIME, start_time, FLAG(has_start_time)),
	SCALAR(RECOUNT_A_WITHHELD, withheld, NO_FLAG),
	SCALAR(RECOUNT_A_PARENT_TGID, parent_tgid, FLAG(has_parent_tgid)),
	SCALAR(RECOUNT_A_EVENT_GEN, event_gen, FLAG(has_event_gen)),
	SCALAR(RECOUNT_A_MAX_EVENTS, max_events, NO_FLAG),
	SCALAR(RECOUNT_A_PMU_COUNTERS, pmu_counters, NO_FLAG),
};

static bool parse_scalar(const struct nlattr *a, struct rnl_record *r)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(scalars); i++) {
		if (scalars[i].attr != (a->nla_type & NLA_TYPE_MASK))
			continue;
		if (RNL_ATTR_LEN(a) != (int)scalars[i].size)
			return true;
		memcpy((char *)r + scalars[i].offset, RNL_ATTR_DATA(a), scalars[i].size);
		if (scalars[i].flag != NO_FLAG)
			*(bool *)((char *)r + scalars[i].flag) = true;
		return true;
	}
	return false;
}

static void parse_record(struct nlmsghdr *nlh, struct rnl_record *r)
{
	int len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	struct nlattr *a;

	memset(r, 0, sizeof(*r));
	r->cmd = ((struct genlmsghdr *)NLMSG_DATA(nlh))->cmd;
	for (a = (struct nlattr *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
	     rnl_attr_ok(a, len); a = rnl_attr_next(a, &len)) {
		if (parse_scalar(a, r))
			continue;
		switch (a->nla_type & NLA_TYPE_MASK) {
		case RECOUNT_A_COMM:
			rnl_attr_strcpy(r->comm, sizeof(r->comm), a);
			break;
		case RECOUNT_A_USAGE:
			parse_usage(a, &r->usage);
			break;
		case RECOUNT_A_EXITED:
			r->has_exited = true;
			parse_usage(a, &r->exited);
			break;
		case RECOUNT_A_PER_KIND:
			if (r->nr_kinds < RNL_MAX_KINDS)
				parse_usage(a, &r->per_kind[r->nr_kinds++]);
			break;
		case RECOUNT_A_KIND_CPUS:
			parse_kind_cpus(a, r);
			break;
		case RECOUNT_A_EVENT:
			parse_event(a, r);
			break;
		case RECOUNT_A_RUNTIME:
			parse_runtime(a, &r->runtime);
			break;
		case RECOUNT_A_EXITED_RUNTIME:
			parse_runtime(a, &r->exited_runtime);
			break;
		case RECOUNT_A_CHILDREN:
			r->has_children = true;
			parse_usage(a, &r->children);
			break;
		case RECOUNT_A_CHILDREN_RUNTIME:
			parse_runtime(a, &r->children_runtime);
			break;
		case RECOUNT_A_RUNTIME_STRUCT:
			r->runtime_struct_len = RNL_ATTR_LEN(a);
			if (r->runtime_struct_len <= (int)sizeof(r->runtime_struct))
				memcpy(r->runtime_struct, RNL_ATTR_DATA(a), r->runtime_struct_len);
			break;
		}
	}
}

/* The extended ACK attributes of an error or of a dump's NLMSG_DONE. */
static void parse_ack_tlvs(struct nlattr *a, int len, struct rnl_reply *reply)
{
	for (; rnl_attr_ok(a, len); a = rnl_attr_next(a, &len)) {
		if (a->nla_type == NLMSGERR_ATTR_MSG)
			rnl_attr_strcpy(reply->extack, sizeof(reply->extack), a);
		if (a->nla_type == NLMSGERR_ATTR_OFFS) {
			memcpy(&reply->extack_offs, RNL_ATTR_DATA(a), 4);
			reply->has_offs = true;
		}
	}
}

static void parse_error(struct nlmsghdr *nlh, struct rnl_reply *reply)
{
	struct nlmsgerr *e = NLMSG_DATA(nlh);
	int off = sizeof(*e);

	reply->error = e->error;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	parse_ack_tlvs((struct nlattr *)((char *)e + off),
		       (int)nlh->nlmsg_len - NLMSG_HDRLEN - off, reply);
}

/* A dump ends with NLMSG_DONE: its error, and the extended ACK if it failed. */
static void parse_done(struct nlmsghdr *nlh, struct rnl_reply *reply)
{
	int len = (int)nlh->nlmsg_len - NLMSG_LENGTH(sizeof(int));

	reply->error = 0;
	if (len < 0)
		return;
	memcpy(&reply->error, NLMSG_DATA(nlh), sizeof(int));
	parse_ack_tlvs((struct nlattr *)((char *)NLMSG_DATA(nlh) + sizeof(int)), len, reply);
}

int rnl_transact(struct rnl *nl, struct rnl_msg *m, struct rnl_reply *reply)
{
	__u32 seq = ((struct nlmsghdr *)m->buf)->nlmsg_seq;
	/* A get-info reply lists CPUs: up to 5 bytes a CPU on large machines. */
	__u64 msgs[8192];
	char *buf = (char *)msgs;
	bool done = false;

	memset(reply, 0, sizeof(*reply));
	if (send(nl->fd, m->buf, m->len, 0) != (ssize_t)m->len)
		return reply->error = -errno;

	while (!done) {
		struct nlmsghdr *nlh;
		ssize_t n = recv(nl->fd, buf, sizeof(msgs), 0);
		int len = n;

		if (n < 0)
			return reply->error = -errno;
		reply->nbatch++;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len)) {
			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				parse_error(nlh, reply);
				done = true;
			} else if (nlh->nlmsg_type == NLMSG_DONE) {
				done = true;
			} else if (nlh->nlmsg_type == nl->family) {
				if (!reply->nrec++)
					parse_record(nlh, &reply->rec);
			}
		}
	}
	return reply->error;
}

int rnl_get(struct rnl *nl, int sel, __u32 id, struct rnl_reply *reply)
{
	struct rnl_msg m;

	rnl_msg_init(nl, &m, RECOUNT_CMD_GET, 0);
	rnl_put_u32(&m, sel, id);
	if (nl->runtime_version)
		rnl_put_u32(&m, RECOUNT_A_RUNTIME_VERSION, nl->runtime_version);
	if (nl->lean)
		rnl_put(&m, RECOUNT_A_LEAN, NULL, 0);
	return rnl_transact(nl, &m, reply);
}

int rnl_get_runtime(struct rnl *nl, int sel, __u32 id, __u32 version,
		    struct rnl_reply *reply)
{
	struct rnl_msg m;

	rnl_msg_init(nl, &m, RECOUNT_CMD_GET, 0);
	rnl_put_u32(&m, sel, id);
	rnl_put_u32(&m, RECOUNT_A_RUNTIME_VERSION, version);
	return rnl_transact(nl, &m, reply);
}

int rnl_listen(struct rnl *nl, bool reg, const char *cpumask, struct rnl_reply *reply)
{
	struct rnl_msg m;

	rnl_msg_init(nl, &m, reg ? RECOUNT_CMD_REGISTER : RECOUNT_CMD_DEREGISTER, 0);
	if (cpumask)
		rnl_put(&m, RECOUNT_A_CPUMASK, cpumask, strlen(cpumask) + 1);
	return rnl_transact(nl, &m, reply);
}

int rnl_next_exit(struct rnl *nl, struct rnl_record *rec, int timeout_ms)
{
	__u64 msgs[2048];
	char *buf = (char *)msgs;
	struct nlmsghdr *nlh;
	struct pollfd pfd = { .fd = nl->fd, .events = POLLIN };
	ssize_t n;

	for (;;) {
		if (poll(&pfd, 1, timeout_ms) == 0)
			return 0;
		/* One record per datagram: recv() takes one netlink message. */
		n = recv(nl->fd, buf, sizeof(msgs), MSG_DONTWAIT);
		/* The socket overflowed: the next record's missed says by how much. */
		if (n < 0 && errno == ENOBUFS)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		nlh = (struct nlmsghdr *)buf;
		if (!NLMSG_OK(nlh, n) || nlh->nlmsg_type != nl->family)
			continue;
		parse_record(nlh, rec);
		if (rec->cmd == RECOUNT_CMD_EXIT)
			return 1;
	}
}

int rnl_dump_send(struct rnl *nl, int scope, __u32 tgid, __u32 *seq)
{
	struct rnl_msg m;

	rnl_msg_init(nl, &m, RECOUNT_CMD_GET, NLM_F_DUMP);
	if (scope >= 0)
		rnl_put_u32(&m, RECOUNT_A_SCOPE, scope);
	if (tgid)
		rnl_put_u32(&m, RECOUNT_A_TGID, tgid);
	if (nl->runtime_version)
		rnl_put_u32(&m, RECOUNT_A_RUNTIME_VERSION, nl->runtime_version);
	if (nl->lean)
		rnl_put(&m, RECOUNT_A_LEAN, NULL, 0);
	*seq = ((struct nlmsghdr *)m.buf)->nlmsg_seq;
	if (send(nl->fd, m.buf, m.len, 0) != (ssize_t)m.len)
		return -errno;
	return 0;
}

int rnl_dump_recv(struct rnl *nl, __u32 seq,
		  void (*fn)(const struct rnl_record *rec, void *arg), void *arg,
		  int *intr, int *not_multi, struct rnl_reply *reply)
{
	__u64 msgs[4096];
	char *buf = (char *)msgs;

	memset(reply, 0, sizeof(*reply));
	*intr = 0;
	*not_multi = 0;
	for (;;) {
		struct nlmsghdr *nlh;
		ssize_t n = recv(nl->fd, buf, sizeof(msgs), 0);
		int len = n;

		if (n < 0)
			return reply->error = -errno;
		reply->nbatch++;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len)) {
			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				(*intr)++;
			if (nlh->nlmsg_type == NLMSG_DONE) {
				parse_done(nlh, reply);
				return reply->error;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				parse_error(nlh, reply);
				if (reply->error)
					return reply->error;
				continue;
			}
			if (!(nlh->nlmsg_flags & NLM_F_MULTI))
				(*not_multi)++;
			parse_record(nlh, &reply->rec);
			reply->nrec++;
			fn(&reply->rec, arg);
		}
	}
}

int rnl_dump(struct rnl *nl, int scope, __u32 tgid,
	     void (*fn)(const struct rnl_record *rec, void *arg), void *arg,
	     int *intr, int *not_multi, struct rnl_reply *reply)
{
	__u32 seq;
	int err = rnl_dump_send(nl, scope, tgid, &seq);

	if (err) {
		memset(reply, 0, sizeof(*reply));
		*intr = 0;
		*not_multi = 0;
		return reply->error = err;
	}
	return rnl_dump_recv(nl, seq, fn, arg, intr, not_multi, reply);
}

int rnl_get_info(struct rnl *nl, struct rnl_reply *reply)
{
	struct rnl_msg m;

	rnl_msg_init(nl, &m, RECOUNT_CMD_GET_INFO, 0);
	return rnl_transact(nl, &m, reply);
}

int rnl_set_events(struct rnl *nl, const struct rnl_event *ev, int nr, struct rnl_reply *reply)
{
	struct rnl_msg m;
	int i;

	rnl_msg_init(nl, &m, RECOUNT_CMD_SET_EVENTS, 0);
	for (i = 0; i < nr; i++) {
		struct nlattr *nest = (struct nlattr *)(m.buf + m.len);
		size_t start = m.len;

		rnl_put(&m, RECOUNT_A_EVENT | NLA_F_NESTED, NULL, 0);
		rnl_put_u32(&m, RECOUNT_A_EVENT_TYPE, ev[i].type);
		rnl_put(&m, RECOUNT_A_EVENT_CONFIG, &ev[i].config, sizeof(ev[i].config));
		if (ev[i].mode)
			rnl_put_u32(&m, RECOUNT_A_EVENT_MODE, ev[i].mode);
		nest->nla_len = m.len - start;
	}
	return rnl_transact(nl, &m, reply);
}

int rnl_family_id(struct rnl *nl, const char *name, __u16 *id)
{
	struct rnl ctrl = { .fd = nl->fd, .family = GENL_ID_CTRL, .seq = nl->seq };
	__u64 msgs[1024];
	char *buf = (char *)msgs;
	struct nlmsghdr *nlh;
	struct rnl_msg m;
	int len;

	*id = 0;
	rnl_msg_init(&ctrl, &m, CTRL_CMD_GETFAMILY, 0);
	((struct genlmsghdr *)(m.buf + NLMSG_HDRLEN))->version = 1;
	rnl_put(&m, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	nl->seq = ctrl.seq;
	if (send(nl->fd, m.buf, m.len, 0) != (ssize_t)m.len)
		return -errno;
	for (;;) {
		len = recv(nl->fd, buf, sizeof(msgs), 0);
		if (len < 0)
			return -errno;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len)) {
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nlh);

				if (e->error == -ENOENT)
					return -ENOENT;
				if (e->error)
					return e->error;
				return *id ? 0 : -ENOENT;
			}
			if (nlh->nlmsg_type == GENL_ID_CTRL) {
				int alen = (int)nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
				struct nlattr *a;

				for (a = (struct nlattr *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
				     rnl_attr_ok(a, alen); a = rnl_attr_next(a, &alen))
					if (a->nla_type == CTRL_ATTR_FAMILY_ID)
						memcpy(id, RNL_ATTR_DATA(a), 2);
			}
		}
	}
}

int rnl_open(struct rnl *nl)
{
	int one = 1, err;

	memset(nl, 0, sizeof(*nl));
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return -errno;
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	err = rnl_family_id(nl, RECOUNT_FAMILY_NAME, &nl->family);
	if (err) {
		close(nl->fd);
		nl->fd = -1;
	}
	return err;
}

void rnl_close(struct rnl *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	nl->fd = -1;
}
