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

/* One metric of a usage; absent (unsupported) unless has is set. */
struct rc_value {
	bool has;
	uint64_t v;
};

/* What a thread, a process or a CPU consumed. */
struct rc_usage {
	struct rc_value user_ns, kernel_ns, idle_ns;
	struct rc_value user_cycles, kernel_cycles;
	struct rc_value user_instructions, kernel_instructions;
	struct rc_value energy_nj, idle_energy_nj;
	uint32_t inexact;		/* RECOUNT_INEXACT_* */
	bool has_kind;
	uint32_t kind;			/* enum recount_kind */
};

#define RC_MAX_KINDS 8

/* Why a thread or process was not running; absent unless has is set. */
struct rc_runtime {
	bool has;
	uint64_t cpu_ns, queue_ns, fault_ns, lock_ns;
};

struct rc_record {
	bool has_pid, has_tgid, has_cpu, has_flags, has_usage, has_exited;
	uint32_t pid, tgid, cpu, flags;
	uint32_t metrics;		/* RECOUNT_METRIC_* */
	uint32_t energy_source;		/* enum recount_energy_source */
	char comm[32];
	struct rc_usage usage, exited;
	int nr_kinds;
	struct rc_usage per_kind[RC_MAX_KINDS];
	struct rc_runtime runtime, exited_runtime;
	/* The struct recount_task_runtime asked for with runtime_version. */
	int runtime_struct_len;
	unsigned char runtime_struct[sizeof(struct recount_task_runtime)];
};

/* What the kernel counts: RECOUNT_CMD_GET_INFO. */
struct rc_info {
	uint32_t flags, metrics, energy_source;
	int nr_kinds;
	struct {
		uint32_t kind;
		char cpus[256];
	} kind_cpus[RC_MAX_KINDS];
};

struct rc_client {
	struct nl_sock *sk;
	int family;
	int verbose;
	/* If not 0, ask for struct recount_task_runtime of this version. */
	uint32_t runtime_version;
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

/* Get what the kernel counts. Returns 0 or a negative errno. */
int rc_get_info(struct rc_client *c, struct rc_info *info);

/* Decode the attributes of a reply (a genetlink payload) into @rec. */
int rc_decode_record(struct nlattr *attrs, int len, struct rc_record *rec);

/* Names of the kernel's enums, for printing. */
const char *rc_kind_name(uint32_t kind);
const char *rc_energy_source_name(uint32_t source);

#endif /* _RECOUNT_CLIENT_H */
