/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A client of the RECOUNT generic netlink family, on libnl-genl-3: open a
 * socket, send a request, decode the reply into a struct rc_record.
 */
#ifndef _RECOUNT_CLIENT_H
#define _RECOUNT_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/recount.h>

struct nl_sock;
struct nlattr;

/* What a thread, a process or a CPU consumed; absent attributes stay false. */
struct rc_usage {
	bool has_user, has_kernel, has_idle;
	uint64_t user_ns, kernel_ns, idle_ns;
};

struct rc_record {
	bool has_pid, has_tgid, has_cpu, has_flags, has_usage, has_exited;
	uint32_t pid, tgid, cpu, flags;
	char comm[32];
	struct rc_usage usage, exited;
};

struct rc_client {
	struct nl_sock *sk;
	int family;
	int verbose;
	/* Filled when the kernel answers with an error. */
	int error;
	char extack[256];
};

enum rc_selector {
	RC_SEL_PID = RECOUNT_A_PID,
	RC_SEL_TGID = RECOUNT_A_TGID,
	RC_SEL_CPU = RECOUNT_A_CPU,
};

/*
 * Connect and resolve the family. Returns 0, or a negative errno:
 * -ENOENT when the kernel has no RECOUNT family.
 */
int rc_open(struct rc_client *c);
void rc_close(struct rc_client *c);

/*
 * Get one record. Returns 0, or the kernel's negative errno with its extack
 * message in c->extack (-ESRCH no such task, -EACCES not allowed, -EINVAL or
 * -ENODEV bad CPU, ...).
 */
int rc_get(struct rc_client *c, enum rc_selector sel, uint32_t id,
	   struct rc_record *rec);

/* Decode the attributes of a reply (a genetlink payload) into @rec. */
int rc_decode_record(struct nlattr *attrs, int len, struct rc_record *rec);

#endif /* _RECOUNT_CLIENT_H */
