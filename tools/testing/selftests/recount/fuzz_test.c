// SPDX-License-Identifier: GPL-2.0
/*
 * recount: a seeded fuzzer of the RECOUNT netlink family.
 *
 * Several threads, each on its own socket, send random and mutated requests:
 * random flags, commands, versions, attribute types, lengths and nesting,
 * message types that do no harm as root (other_type()), truncated headers
 * and lengths that lie; valid requests with a few bytes flipped; dumps
 * left half read. After each request a NLMSG_NOOP
 * with NLM_F_ACK marks the end of its replies, so every reply is checked: it
 * must be a well-formed ack or error (an errno the family documents, with an
 * extended ACK message for the errors recount itself returns) or a
 * well-formed record. Meanwhile other threads register and deregister
 * listeners on random cpumasks and close them, sockets are closed under
 * dumps, processes fork and exit so exit records flow, and two unprivileged
 * processes fuzz too: one as nobody, one as root of a new user namespace
 * (user 65533 outside) and init of a new pid namespace. Neither may get a
 * record of any process but its own. The kernel must survive it all with a
 * clean log (the harness checks it), and answer a plain request at the end.
 *
 * RECOUNT_FUZZ_SEED=<n> repeats a run's messages (each thread draws from its
 * own stream of the seed; the interleaving of threads is the scheduler's);
 * RECOUNT_FUZZ_ITERS=<n> sets how many requests are sent in all.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"

#define FUZZERS		3	/* privileged fuzzing threads */
#define DEFAULT_ITERS	200000	/* requests in all, a fifth unprivileged */
#define UNPRIVILEGED	2	/* processes: nobody, and root of a user namespace */
#define SEQS		4096	/* requests remembered (a power of two) */

static unsigned long long seed;
static __u16 family;
static __u16 taskstats_family;	/* 0 without one */
static int ncpus;
static atomic_int stop;

/* splitmix64: one stream per fuzzer, reproducible from the seed. */
static __u64 rnd(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int below(__u64 *s, unsigned int n)
{
	return rnd(s) % n;
}

/* What one fuzzer saw; summed and checked at the end. */
struct stats {
	unsigned long sent, acks, errors, records, dumps, enobufs, reopened;
	unsigned long by_errno[160];
	bool to_family[SEQS];	/* by sequence number: sent to recount? */
	__u32 own_tgid;		/* unprivileged: the only process it may read */
	char failure[512];	/* the first malformed reply, if any */
};

static void fail(struct stats *st, const char *fmt, ...)
{
	va_list ap;

	if (st->failure[0])
		return;
	va_start(ap, fmt);
	vsnprintf(st->failure, sizeof(st->failure), fmt, ap);
	va_end(ap);
}

/* Errors the family and the netlink core may answer a bad request with. */
static bool errno_expected(int err)
{
	switch (err) {
	case EINVAL: case ERANGE: case ESRCH: case EACCES: case ENODEV:
	case EOPNOTSUPP: case EPERM: case ENOENT: case EBUSY: case EMSGSIZE:
	case E2BIG:
		return true;
	}
	return false;
}

/* Errors of the generic netlink core, which sends no extended ACK message. */
static bool errno_of_core(int err)
{
	return err == EOPNOTSUPP || err == EPERM || err == EBUSY || err == ENOENT;
}

static int attr_max(int nest)
{
	switch (nest) {
	case RECOUNT_A_USAGE: case RECOUNT_A_EXITED: case RECOUNT_A_PER_KIND:
		return RECOUNT_A_USAGE_MAX;
	case RECOUNT_A_RUNTIME: case RECOUNT_A_EXITED_RUNTIME:
		return RECOUNT_A_RUNTIME_MAX;
	case RECOUNT_A_KIND_CPUS:
		return RECOUNT_A_KIND_CPUS_MAX;
	/* get-info's chosen events; a usage's counts of them (no top nest is 14). */
	case RECOUNT_A_EVENT: case RECOUNT_A_USAGE_EVENT:
		return RECOUNT_A_EVENT_MAX;
	}
	return RECOUNT_A_MAX;
}

/*
 * Attributes of a record fill @len exactly, each well-formed and known; the
 * nests (flagged NLA_F_NESTED, as nla_nest_start() does) recursively so.
 */
static bool attrs_ok(const char *p, int len, int nest, int depth, char *why, size_t wsize)
{
	while (len > 0) {
		const struct nlattr *a = (const void *)p;
		int type = a->nla_type & NLA_TYPE_MASK, alen;

		if (len < NLA_HDRLEN || a->nla_len < NLA_HDRLEN || a->nla_len > len) {
			snprintf(why, wsize, "attribute header overruns (%d left, nla_len %u)",
				 len, len >= NLA_HDRLEN ? a->nla_len : 0);
			return false;
		}
		/* The deepest: a per-kind usage's counts of a chosen event. */
		if (depth > 3 || type == 0 || type > attr_max(nest)) {
			snprintf(why, wsize, "attribute %d in nest %d at depth %d", type, nest,
				 depth);
			return false;
		}
		alen = a->nla_len - NLA_HDRLEN;
		/* Per-kind and kind-cpus nests hold one nest per kind. */
		if ((a->nla_type & NLA_F_NESTED) &&
		    !attrs_ok(p + NLA_HDRLEN, alen,
			      (nest == RECOUNT_A_PER_KIND || nest == RECOUNT_A_KIND_CPUS) &&
			      depth == 1 ? nest : type, depth + 1, why, wsize))
			return false;
		p += NLA_ALIGN(a->nla_len);
		len -= NLA_ALIGN(a->nla_len);
	}
	return true;
}

/* The extended ACK attributes of an error or done message: well-formed. */
static bool ack_tlvs(const char *p, int len, bool *has_msg)
{
	*has_msg = false;
	while (len >= NLA_HDRLEN) {
		const struct nlattr *a = (const void *)p;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return false;
		if (a->nla_type == NLMSGERR_ATTR_MSG) {
			if (a->nla_len == NLA_HDRLEN || p[a->nla_len - 1] != '\0')
				return false;
			*has_msg = true;
		}
		p += NLA_ALIGN(a->nla_len);
		len -= NLA_ALIGN(a->nla_len);
	}
	return len == 0;
}

/* The tgid a record names, at its top level; false if it names none. */
static bool record_tgid(const char *p, int len, __u32 *tgid)
{
	const struct nlattr *a;

	for (; len >= NLA_HDRLEN; p += NLA_ALIGN(a->nla_len), len -= NLA_ALIGN(a->nla_len)) {
		a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return false;
		if ((a->nla_type & NLA_TYPE_MASK) == RECOUNT_A_TGID &&
		    a->nla_len == NLA_HDRLEN + sizeof(*tgid)) {
			memcpy(tgid, p + NLA_HDRLEN, sizeof(*tgid));
			return true;
		}
	}
	return false;
}

struct pending {
	__u32 seq, probe;	/* the request's, and its probe's */
	bool to_family;		/* the request had the family's type and a genl header */
	bool probe_acked, dump_open;
};

/* Check one message the kernel sent; note acks of the request and the probe. */
static void check_msg(struct stats *st, const struct nlmsghdr *nlh, struct pending *pd)
{
	int len = nlh->nlmsg_len, err;
	char why[128];
	__u32 tgid;
	bool msg;

	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nlh);
		int tlv;

		if (len < (int)NLMSG_LENGTH(sizeof(*e)))
			return fail(st, "short error message (%d bytes)", len);
		err = -e->error;
		/* With NETLINK_CAP_ACK only the request's header is echoed. */
		tlv = len - NLMSG_LENGTH(sizeof(*e));
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED) && err)
			tlv -= e->msg.nlmsg_len - NLMSG_HDRLEN;
		if (tlv < 0 || !ack_tlvs((const char *)(e + 1) +
					 (len - NLMSG_LENGTH(sizeof(*e)) - tlv), tlv, &msg))
			return fail(st, "error %d: malformed extended ACK", err);
		if (nlh->nlmsg_seq == pd->probe) {
			if (err)
				return fail(st, "the probe failed: %s", strerror(err));
			pd->probe_acked = true;
			return;
		}
		if (nlh->nlmsg_seq != pd->seq)
			return;
		pd->dump_open = false;
		if (!err) {
			st->acks++;
			return;
		}
		st->errors++;
		st->by_errno[err < 160 ? err : 0]++;
		/*
		 * Only recount's answers are judged: a request of another type
		 * may reach another family (taskstats answers a CPU list it
		 * cannot parse with EOVERFLOW, say).
		 */
		if (err < 0 || err > 4095 || (pd->to_family && !errno_expected(err)))
			return fail(st, "unexpected error %d (%s)", err, strerror(err));
		if (pd->to_family && !errno_of_core(err) && !msg)
			return fail(st, "error %d (%s) without an extended ACK message", err,
				    strerror(err));
		return;
	}
	if (nlh->nlmsg_type == NLMSG_DONE) {
		if (len < (int)NLMSG_LENGTH(sizeof(int)))
			return fail(st, "short NLMSG_DONE (%d bytes)", len);
		memcpy(&err, NLMSG_DATA(nlh), sizeof(int));
		if (err > 0 || !ack_tlvs((const char *)NLMSG_DATA(nlh) + sizeof(int),
					 len - NLMSG_LENGTH(sizeof(int)), &msg))
			return fail(st, "malformed NLMSG_DONE");
		if (err && !errno_expected(-err))
			return fail(st, "dump ended with error %d (%s)", -err, strerror(-err));
		if (nlh->nlmsg_seq == pd->seq) {
			pd->dump_open = false;
			st->dumps++;
		}
		return;
	}
	if (nlh->nlmsg_type != family) {
		/*
		 * A request to another family gets that family's answer, a
		 * dump's perhaps after later requests were sent. One that
		 * registered the socket as a taskstats listener brings it
		 * taskstats' exit records, whose sequence numbers are
		 * taskstats' own.
		 */
		if (!st->to_family[nlh->nlmsg_seq % SEQS] ||
		    (taskstats_family && nlh->nlmsg_type == taskstats_family))
			return;
		return fail(st, "message of type %u, sequence number %u (request %u)",
			    nlh->nlmsg_type, nlh->nlmsg_seq, pd->seq);
	}
	if (len < (int)(NLMSG_HDRLEN + GENL_HDRLEN))
		return fail(st, "record without a genl header (%d bytes)", len);
	switch (((const struct genlmsghdr *)NLMSG_DATA(nlh))->cmd) {
	case RECOUNT_CMD_GET: case RECOUNT_CMD_GET_INFO: case RECOUNT_CMD_EXIT:
		break;
	default:
		return fail(st, "record of command %u",
			    ((const struct genlmsghdr *)NLMSG_DATA(nlh))->cmd);
	}
	if (!attrs_ok((const char *)NLMSG_DATA(nlh) + GENL_HDRLEN,
		      len - NLMSG_HDRLEN - GENL_HDRLEN, 0, 0, why, sizeof(why)))
		return fail(st, "malformed record: %s", why);
	st->records++;
	if (st->own_tgid && record_tgid((const char *)NLMSG_DATA(nlh) + GENL_HDRLEN,
					len - NLMSG_HDRLEN - GENL_HDRLEN, &tgid) &&
	    tgid != st->own_tgid)
		return fail(st, "record of process %u, not of its own (%u)", tgid, st->own_tgid);
	if (nlh->nlmsg_seq == pd->seq && (nlh->nlmsg_flags & NLM_F_MULTI))
		pd->dump_open = true;
}

/*
 * Read until the probe is acked and no dump of the request is left open.
 * Returns false if the kernel stopped answering.
 */
static bool drain(int fd, struct stats *st, struct pending *pd)
{
	static __thread __u64 buf[8192];

	while (!pd->probe_acked || pd->dump_open) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		const struct nlmsghdr *nlh;
		ssize_t n;
		int len;

		if (poll(&pfd, 1, 20000) != 1) {
			fail(st, "no answer in 20 s (probe %s, dump %s)",
			     pd->probe_acked ? "acked" : "pending",
			     pd->dump_open ? "open" : "closed");
			return false;
		}
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			/* Exit records overran a listening socket: resync. */
			st->enobufs++;
			return true;
		}
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n < 0) {
			fail(st, "recv: %s", strerror(errno));
			return false;
		}
		len = n;
		for (nlh = (void *)buf; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len))
			check_msg(st, nlh, pd);
		if (len)
			fail(st, "%d bytes of a truncated message", len);
	}
	return true;
}

static const char *const cpumasks[] = {
	"0", "0-3", "1,3", "0-7", "", "-", "0-", "-1", "3-1", "9999", "0-4095", "4096",
	"a", "0,,1", "0-1-2", " 1", "1 ", "0x1", "1\n", "18446744073709551616",
};

/* A u32 a request may plausibly carry: ids of tasks, CPUs, versions. */
static __u32 some_u32(__u64 *s)
{
	switch (below(s, 10)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return getpid();
	case 3:
		return gettid();
	case 4:
		return getppid();
	case 5:
		return below(s, ncpus + 2);
	case 6:
		return below(s, 4);
	case 7:
		return 0xffffffff;
	case 8:
		return 0x7fffffff;
	}
	return rnd(s);
}

/* A random payload, mostly short; returns its length. */
static size_t random_bytes(__u64 *s, char *p)
{
	size_t len = below(s, 4) ? below(s, 17) : below(s, 64), i;

	for (i = 0; i < len; i++)
		p[i] = rnd(s);
	return len;
}

/* Append one random attribute (nested up to @depth) to @p; returns its size. */
static size_t put_attr(__u64 *s, char *p, size_t room, int depth)
{
	struct nlattr *a = (void *)p;
	size_t len = 0;

	if (room < NLA_HDRLEN + 64)
		return 0;
	a->nla_type = below(s, RECOUNT_A_MAX + 3);
	if (!below(s, 16))
		a->nla_type |= below(s, 2) ? NLA_F_NESTED : NLA_F_NET_BYTEORDER;
	switch (below(s, 6)) {
	case 0: case 1: {
		__u32 v = some_u32(s);

		len = sizeof(v);
		memcpy(p + NLA_HDRLEN, &v, len);
		break;
	}
	case 2: {
		const char *m = cpumasks[below(s, ARRAY_SIZE(cpumasks))];

		len = strlen(m) + below(s, 2);	/* with its NUL, or not */
		memcpy(p + NLA_HDRLEN, m, len);
		break;
	}
	case 3:
		if (depth < 3) {
			size_t n = below(s, 4);

			a->nla_type |= below(s, 4) ? NLA_F_NESTED : 0;
			while (n--)
				len += put_attr(s, p + NLA_HDRLEN + len,
						room - NLA_HDRLEN - len, depth + 1);
			break;
		}
		len = random_bytes(s, p + NLA_HDRLEN);
		break;
	default:
		len = random_bytes(s, p + NLA_HDRLEN);
		break;
	}
	a->nla_len = NLA_HDRLEN + len;
	/* Now and then, a length that lies. */
	if (!below(s, 32))
		a->nla_len = below(s, 2) ? below(s, NLA_HDRLEN) : a->nla_len + below(s, 64);
	return NLA_ALIGN(NLA_HDRLEN + len);
}

/* A request that is valid as it is, before mutation. */
static size_t valid_request(__u64 *s, char *buf, bool *dump)
{
	struct nlmsghdr *nlh = (void *)buf;
	struct genlmsghdr *gh = NLMSG_DATA(nlh);
	char *p = buf + NLMSG_HDRLEN + GENL_HDRLEN;
	struct nlattr *a = (void *)p;
	__u32 v;

	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	gh->cmd = RECOUNT_CMD_GET;
	a->nla_len = NLA_HDRLEN + sizeof(v);
	switch (below(s, 7)) {
	case 0:
		a->nla_type = RECOUNT_A_PID;
		v = gettid();
		break;
	case 1:
		a->nla_type = RECOUNT_A_TGID;
		v = below(s, 2) ? getpid() : 1;
		break;
	case 2:
		a->nla_type = RECOUNT_A_CPU;
		v = below(s, ncpus);
		break;
	case 3:
		nlh->nlmsg_flags |= NLM_F_DUMP;
		*dump = true;
		a->nla_type = RECOUNT_A_SCOPE;
		v = below(s, 3);
		break;
	case 4:
		gh->cmd = RECOUNT_CMD_GET_INFO;
		return NLMSG_HDRLEN + GENL_HDRLEN;
	default: {
		const char *m = cpumasks[below(s, 4)];

		gh->cmd = below(s, 2) ? RECOUNT_CMD_REGISTER : RECOUNT_CMD_DEREGISTER;
		a->nla_type = RECOUNT_A_CPUMASK;
		a->nla_len = NLA_HDRLEN + strlen(m) + 1;
		memcpy(p + NLA_HDRLEN, m, strlen(m) + 1);
		return NLMSG_HDRLEN + GENL_HDRLEN + NLA_ALIGN(a->nla_len);
	}
	}
	memcpy(p + NLA_HDRLEN, &v, sizeof(v));
	return NLMSG_HDRLEN + GENL_HDRLEN + NLA_ALIGN(a->nla_len);
}

/*
 * Another message type than recount's, of which no request does harm,
 * privileged or not, on a real machine as in the test's guest: netlink's
 * own (below NLMSG_MIN_TYPE), the generic netlink controller's (which only
 * reads), taskstats' (which reads, and registers exit listeners on the
 * socket, dropped once a record to it fails after it closes), or no
 * family's (above GENL_MAX_ID). Any type would reach any
 * family, of which some change the machine (devlink, ethtool, nl80211).
 */
static __u16 other_type(__u64 *s)
{
	switch (below(s, 4)) {
	case 0:
		return below(s, NLMSG_MIN_TYPE);
	case 1:
		return GENL_ID_CTRL;
	case 2:
		if (taskstats_family)
			return taskstats_family;
		break;
	}
	return GENL_MAX_ID + 1 + below(s, 0x10000 - GENL_MAX_ID - 1);
}

/*
 * Netlink parses what follows a message's length as more messages: the
 * offset of the one after the message at @off in @len bytes, or 0.
 */
static size_t next_message(const char *req, size_t len, size_t off)
{
	const struct nlmsghdr *nlh = (const void *)(req + off);

	if (off + NLMSG_HDRLEN > len || nlh->nlmsg_len < NLMSG_HDRLEN ||
	    nlh->nlmsg_len > len - off)
		return 0;
	off += NLMSG_ALIGN(nlh->nlmsg_len);
	return off + NLMSG_HDRLEN <= len ? off : 0;
}

/*
 * Make the message at @m, with @len bytes from it on, one that does no
 * harm: of recount's type or other_type() (if @other: one that netlink
 * parses from what follows a length that claims less, next_message()),
 * and if of recount's, not, from a privileged fuzzer, a choice of PMU
 * events, each a restart of recount: only the unprivileged ones try.
 */
static void tame(__u64 *s, char *m, size_t len, bool other)
{
	struct nlmsghdr *nlh = (void *)m;
	struct genlmsghdr *gh = NLMSG_DATA(nlh);

	if (len < NLMSG_HDRLEN)
		return;
	if (other && nlh->nlmsg_type != family)
		nlh->nlmsg_type = other_type(s);
	if (nlh->nlmsg_type == family && !geteuid() && len >= NLMSG_HDRLEN + GENL_HDRLEN &&
	    gh->cmd == RECOUNT_CMD_SET_EVENTS)
		gh->cmd = RECOUNT_CMD_GET_INFO;
}

/*
 * Build a request in @buf: valid and mutated, or random from the header on.
 * Returns how many bytes to send; *@to_family says whether the family is to
 * answer it with its own errors.
 */
static size_t make_request(__u64 *s, char *buf, size_t size, __u32 seq, bool *to_family)
{
	struct nlmsghdr *nlh = (void *)buf;
	struct genlmsghdr *gh = NLMSG_DATA(nlh);
	size_t len, n, i;
	bool dump = false;

	memset(buf, 0, NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN + 64);
	nlh->nlmsg_type = family;
	nlh->nlmsg_seq = seq;
	gh->version = RECOUNT_FAMILY_VERSION;
	if (below(s, 3) == 0) {
		len = valid_request(s, buf, &dump);
		/* Flip a few bytes of the genl header and attributes. */
		for (n = below(s, 4); n; n--)
			buf[NLMSG_HDRLEN + below(s, len - NLMSG_HDRLEN)] = rnd(s);
		if (!below(s, 4))
			len += put_attr(s, buf + len, size - len, 0);
	} else {
		nlh->nlmsg_flags = NLM_F_REQUEST | (below(s, 4) ? NLM_F_ACK : 0);
		if (!below(s, 4))
			nlh->nlmsg_flags |= NLM_F_DUMP;
		if (!below(s, 8))
			nlh->nlmsg_flags = rnd(s);
		gh->cmd = below(s, 8) ? below(s, RECOUNT_CMD_MAX + 3) : rnd(s);
		gh->version = below(s, 8) ? RECOUNT_FAMILY_VERSION : rnd(s);
		gh->reserved = below(s, 16) ? 0 : rnd(s);
		len = NLMSG_HDRLEN + GENL_HDRLEN;
		for (n = below(s, 7); n; n--)
			len += put_attr(s, buf + len, size - len, 0);
	}
	nlh->nlmsg_len = len;
	*to_family = true;
	switch (below(s, 24)) {
	case 0:		/* another message type */
		nlh->nlmsg_type = other_type(s);
		*to_family = false;
		break;
	case 1:		/* a header that claims more than is sent */
		nlh->nlmsg_len = len + 1 + below(s, 256);
		break;
	case 2:		/* a header that claims less */
		nlh->nlmsg_len = below(s, len);
		*to_family = nlh->nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN;
		break;
	case 3:		/* sent short */
		len = below(s, len);
		*to_family = false;
		break;
	case 4:		/* random bytes from the header on, but its number and type */
		for (i = 0; i < len; i++)
			buf[i] = rnd(s);
		if (len >= NLMSG_HDRLEN) {
			nlh->nlmsg_seq = seq;
			nlh->nlmsg_type = below(s, 2) ? family : other_type(s);
		}
		*to_family = false;
		break;
	}
	i = 0;
	do {
		tame(s, buf + i, len - i, i > 0);
		i = next_message(buf, len, i);
	} while (i);
	return len;
}

static int open_socket(void)
{
	struct rnl nl;

	if (rnl_open(&nl))
		return -1;
	return nl.fd;
}

/*
 * After a header that claims less than was sent, random bytes may make more
 * requests (next_message()), under sequence numbers of their own. Their
 * answers are not judged as recount's.
 */
static void note_trailing(struct stats *st, const char *req, size_t len)
{
	const struct nlmsghdr *nlh;
	size_t off;

	for (off = next_message(req, len, 0); off; off = next_message(req, len, off)) {
		nlh = (const void *)(req + off);
		st->to_family[nlh->nlmsg_seq % SEQS] = false;
	}
}

/* Send @len bytes of @req and a probe; check what comes back. */
static bool fuzz_one(int fd, struct stats *st, const char *req, size_t len, __u32 seq,
		     bool to_family)
{
	struct {
		struct nlmsghdr nlh;
	} probe = {
		.nlh = { .nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = NLMSG_NOOP,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = seq + 1 },
	};
	struct pending pd = { .seq = seq, .probe = seq + 1, .to_family = to_family };

	st->sent++;
	st->to_family[seq % SEQS] = to_family;
	st->to_family[(seq + 1) % SEQS] = true;
	note_trailing(st, req, len);
	/* Netlink refuses an empty message itself (ENODATA). */
	if (send(fd, req, len, 0) < 0 && !(len == 0 && errno == ENODATA)) {
		fail(st, "send: %s", strerror(errno));
		return false;
	}
	if (send(fd, &probe, sizeof(probe), 0) != sizeof(probe)) {
		fail(st, "send of the probe: %s", strerror(errno));
		return false;
	}
	return drain(fd, st, &pd);
}

/* Run @iters requests from stream @stream on a socket of our own. */
static void fuzz(struct stats *st, int stream, unsigned long iters)
{
	static __thread __u64 req[1024];
	__u64 s = seed ^ (0x5851f42d4c957f2dULL * (stream + 1));
	__u32 seq = 1;
	int fd = open_socket();

	if (fd < 0) {
		fail(st, "cannot open a RECOUNT socket");
		return;
	}
	while (iters-- && !st->failure[0] && !atomic_load(&stop)) {
		bool to_family;
		size_t len = make_request(&s, (char *)req, sizeof(req), seq, &to_family);

		if (!fuzz_one(fd, st, (char *)req, len, seq, to_family))
			break;
		seq += 2;
		/* Now and then, leave a dump half read and the socket closed. */
		if (!below(&s, 500)) {
			struct nlmsghdr *nlh = (void *)req;

			len = valid_request(&s, (char *)req, &to_family);
			nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
			nlh->nlmsg_len = len;
			send(fd, req, len, 0);
			close(fd);
			fd = open_socket();
			st->reopened++;
			if (fd < 0) {
				fail(st, "cannot reopen a RECOUNT socket");
				return;
			}
		}
	}
	close(fd);
}

struct fuzzer {
	pthread_t thread;
	int stream;
	unsigned long iters;
	struct stats st;
};

static void *fuzzer_main(void *p)
{
	struct fuzzer *f = p;

	fuzz(&f->st, f->stream, f->iters);
	return NULL;
}

/*
 * Listeners come and go on random cpumasks, closed registered or not, while
 * exit records are sent to them; the closer registers on sockets the storm
 * hands it and closes them, concurrently with the storm's own.
 */
static atomic_int handed_fd = -1;

static void *storm_main(void *p)
{
	__u64 s = seed ^ 0xabcdef;
	struct rnl nl = { .family = family };
	struct rnl_reply r;

	while (!atomic_load(&stop)) {
		int fd = open_socket(), old;

		if (fd < 0)
			continue;
		nl.fd = fd;
		rnl_listen(&nl, true, cpumasks[below(&s, ARRAY_SIZE(cpumasks))], &r);
		if (below(&s, 2))
			rnl_listen(&nl, false, cpumasks[below(&s, 4)], &r);
		if (below(&s, 2)) {
			old = atomic_exchange(&handed_fd, fd);
			if (old >= 0)
				close(old);
		} else {
			close(fd);
		}
	}
	return NULL;
}

static void *closer_main(void *p)
{
	struct rnl nl = { .family = family };
	struct rnl_reply r;

	while (!atomic_load(&stop)) {
		int fd = atomic_exchange(&handed_fd, -1);

		if (fd < 0) {
			sched_yield();
			continue;
		}
		nl.fd = fd;
		rnl_listen(&nl, true, "0-1", &r);
		close(fd);
	}
	return NULL;
}

/* Processes that exit, so that listeners have records to receive. */
static void *forker_main(void *p)
{
	while (!atomic_load(&stop)) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		sleep_ns(2 * NSEC_PER_MSEC);
	}
	return NULL;
}

static void report(struct __test_metadata *_metadata, const char *who, struct stats *st)
{
	char line[512] = "";
	int n = 0, e;

	for (e = 0; e < 160; e++)
		if (st->by_errno[e])
			n += snprintf(line + n, sizeof(line) - n, " %s:%lu",
				      e ? strerrorname_np(e) : "other", st->by_errno[e]);
	TH_LOG("%s: %lu requests, %lu acks, %lu records, %lu dumps, %lu sockets reopened",
	       who, st->sent, st->acks, st->records, st->dumps, st->reopened);
	TH_LOG("%s: %lu ENOBUFS; errors:%s", who, st->enobufs, line);
}

FIXTURE(fuzz) {
	struct rnl nl;
};

FIXTURE_SETUP(fuzz)
{
	const char *env = getenv("RECOUNT_FUZZ_SEED");
	int err = rnl_open(&self->nl);

	if (err == -ENOENT)
		SKIP(return, "the kernel has no RECOUNT netlink family (CONFIG_RECOUNT=n)");
	ASSERT_EQ(0, err);
	family = self->nl.family;
	err = rnl_family_id(&self->nl, TASKSTATS_GENL_NAME, &taskstats_family);
	ASSERT_TRUE(!err || err == -ENOENT) TH_LOG("taskstats: %s", strerror(-err));
	ncpus = get_nprocs_conf();
	seed = env ? strtoull(env, NULL, 0) : (unsigned long long)now_ns();
	/* The seed goes to the TAP output, to repeat this run. */
	ksft_print_msg("fuzz: seed %llu (RECOUNT_FUZZ_SEED=%llu repeats it)\n", seed, seed);
}

/* Random requests may choose PMU events: none stay chosen. */
FIXTURE_TEARDOWN(fuzz)
{
	struct rnl_reply r;

	if (!rnl_get_info(&self->nl, &r) && r.rec.nr_events)
		rnl_set_events(&self->nl, NULL, 0, &r);
	rnl_close(&self->nl);
}

static unsigned long iterations(void)
{
	const char *env = getenv("RECOUNT_FUZZ_ITERS");

	return env ? strtoul(env, NULL, 0) : DEFAULT_ITERS;
}

/*
 * Fuzz as nobody; in namespaces, as root of a new user namespace and init of
 * a new pid namespace, made by another user (each may read the other's
 * processes if they were the same user). Every record must be of the fuzzing
 * process itself: it may read nothing else.
 */
static void fuzz_unprivileged(struct stats *st, int stream, unsigned long iters,
			      bool in_namespaces)
{
	uid_t id = in_namespaces ? 65533 : 65534;
	char map[32];
	pid_t init;
	int status;

	if (become_user(id)) {
		fail(st, "cannot become user %u: %s", id, strerror(errno));
		_exit(1);
	}
	snprintf(map, sizeof(map), "0 %u 1", id);
	if (in_namespaces) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWPID) ||
		    write_file("/proc/self/setgroups", "deny") ||
		    write_file("/proc/self/uid_map", map) ||
		    write_file("/proc/self/gid_map", map)) {
			fail(st, "cannot make the namespaces: %s", strerror(errno));
			_exit(1);
		}
		init = fork();
		if (init < 0) {
			fail(st, "cannot fork in the new pid namespace: %s", strerror(errno));
			_exit(1);
		}
		if (init > 0)
			_exit(waitpid(init, &status, 0) == init && WIFEXITED(status) ?
			      WEXITSTATUS(status) : 1);
	}
	st->own_tgid = getpid();
	fuzz(st, stream, iters);
	_exit(0);
}

/* Seconds on a normal kernel, about ten minutes on a debug one under TCG. */
TEST_F_TIMEOUT(fuzz, random_and_mutated_requests, 1500)
{
	unsigned long iters = iterations(), unpriv = iters / 5 / UNPRIVILEGED;
	static const char *const unprivileged[UNPRIVILEGED] = {
		"nobody", "root of a user and pid namespace (user 65533 outside)",
	};
	pid_t child[UNPRIVILEGED];
	pthread_t storm, closer, forker;
	struct stats *child_st;
	struct fuzzer f[FUZZERS];
	struct rnl_reply r;
	int i, status;

	/* The unprivileged shares, each in a process of its own. */
	child_st = mmap(NULL, UNPRIVILEGED * sizeof(*child_st), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, child_st);
	memset(child_st, 0, UNPRIVILEGED * sizeof(*child_st));
	for (i = 0; i < UNPRIVILEGED; i++) {
		child[i] = fork();
		ASSERT_GE(child[i], 0);
		if (child[i] == 0)
			fuzz_unprivileged(&child_st[i], FUZZERS + i, unpriv, i == 1);
	}

	ASSERT_EQ(0, pthread_create(&storm, NULL, storm_main, NULL));
	ASSERT_EQ(0, pthread_create(&closer, NULL, closer_main, NULL));
	ASSERT_EQ(0, pthread_create(&forker, NULL, forker_main, NULL));
	for (i = 0; i < FUZZERS; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		f[i].stream = i;
		f[i].iters = (iters - UNPRIVILEGED * unpriv) / FUZZERS;
		ASSERT_EQ(0, pthread_create(&f[i].thread, NULL, fuzzer_main, &f[i]));
	}
	for (i = 0; i < FUZZERS; i++)
		pthread_join(f[i].thread, NULL);
	for (i = 0; i < UNPRIVILEGED; i++) {
		ASSERT_EQ(child[i], waitpid(child[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("%s: status %#x", unprivileged[i], status);
	}
	atomic_store(&stop, 1);
	pthread_join(storm, NULL);
	pthread_join(closer, NULL);
	pthread_join(forker, NULL);
	if (atomic_load(&handed_fd) >= 0)
		close(atomic_load(&handed_fd));

	for (i = 0; i < FUZZERS; i++) {
		char who[32];

		snprintf(who, sizeof(who), "fuzzer %d", i);
		report(_metadata, who, &f[i].st);
		EXPECT_STREQ("", f[i].st.failure);
		EXPECT_EQ(f[i].iters, f[i].st.sent);
	}
	for (i = 0; i < UNPRIVILEGED; i++) {
		report(_metadata, unprivileged[i], &child_st[i]);
		EXPECT_STREQ("", child_st[i].failure);
		EXPECT_EQ(unpriv, child_st[i].sent);
	}
	munmap(child_st, UNPRIVILEGED * sizeof(*child_st));

	/* The kernel still answers a plain request, with sane values. */
	ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_PID, gettid(), &r)) TH_LOG("%s", r.extack);
	EXPECT_GT(rnl_cpu_time(&r.rec.usage), 0);
}

TEST_HARNESS_MAIN
