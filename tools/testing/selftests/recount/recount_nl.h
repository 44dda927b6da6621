/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small raw generic netlink client of the RECOUNT family for the selftests:
 * no libnl, so that tests can also send malformed messages and read the
 * kernel's extended ACK.
 */
#ifndef _RECOUNT_NL_H
#define _RECOUNT_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/recount.h>

struct rnl {
	int fd;
	__u16 family;
	__u32 seq;
	/* Requests for records: ask for lean ones (RECOUNT_A_LEAN) ... */
	bool lean;
	/* ... and for struct recount_task_runtime of this version (0: not). */
	__u32 runtime_version;
};

/* Bits of rnl_usage.has: which attributes the kernel sent. */
enum {
	RNL_IDLE		= 1 << 0,
	RNL_CYCLES		= 1 << 1,	/* user and kernel */
	RNL_INSTRUCTIONS	= 1 << 2,	/* user and kernel */
	RNL_ENERGY		= 1 << 3,
	RNL_IDLE_ENERGY		= 1 << 4,
	RNL_KIND		= 1 << 5,
	RNL_USER_PMU		= 1 << 6,	/* a user-mode cycles or instructions */
	RNL_KERNEL_PMU		= 1 << 7,	/* a kernel-mode one */
	RNL_IDLE_IRQ		= 1 << 8,
};

#define RNL_MAX_EVENTS 4

/* A chosen PMU event: set-events takes them, get-info lists them. */
struct rnl_event {
	__u32 type, mode;	/* enum recount_event_type, enum recount_event_mode */
	__u64 config;
};

struct rnl_usage {
	unsigned int has;
	__u64 user, kernel, idle;
	__u64 user_cycles, kernel_cycles;
	__u64 user_instructions, kernel_instructions;
	__u64 energy, idle_energy;
	__u64 idle_irq;
	__u32 inexact, kind;
	/* chosen events, by index: bit 2i their user count came, 2i + 1 kernel */
	unsigned int event_has;
	__u64 event_user[RNL_MAX_EVENTS], event_kernel[RNL_MAX_EVENTS];
};

#define RNL_MAX_KINDS 4

/* The waits of struct rnl_runtime, in the order of the nest's attributes. */
enum { RNL_QUEUE, RNL_FAULT, RNL_LOCK, RNL_NR_WAITS };

struct rnl_wait {
	__u64 count, max, max_time;
};

struct rnl_runtime {
	bool has;
	__u64 cpu, queue, fault, lock;
	/* count, longest and its end, per RNL_QUEUE... (zero if not sent) */
	struct rnl_wait wait[RNL_NR_WAITS];
};

struct rnl_record {
	bool has_pid, has_tgid, has_cpu, has_exited, has_metrics;
	__u32 pid, tgid, cpu, flags, metrics, energy_source;
	char comm[32];
	struct rnl_usage usage, exited;
	int nr_kinds;
	struct rnl_usage per_kind[RNL_MAX_KINDS];
	/* get-info: the CPUs of each kind, as the kernel printed them */
	char kind_cpus[RNL_MAX_KINDS][64];
	struct rnl_runtime runtime, exited_runtime;
	/* runtime-struct, as received */
	int runtime_struct_len;
	unsigned char runtime_struct[128];
	/* process records: the parent, and what the reaped children did */
	bool has_parent_tgid, has_children;
	__u32 parent_tgid;
	struct rnl_usage children;
	struct rnl_runtime children_runtime;
	/* exit records */
	__u8 cmd;
	bool has_exit;
	__u32 exit_code, listeners;
	__u64 exit_time, missed;
	bool has_start_time;
	__u64 start_time;
	__u32 withheld;		/* 0 when absent */
	/* the generation of the event counts; get-info: the chosen events */
	bool has_event_gen;
	__u32 event_gen, max_events, pmu_counters;
	int nr_events;
	struct rnl_event events[RNL_MAX_EVENTS];
};

/* A request being built. */
struct rnl_msg {
	union {
		char buf[4096];
		__u64 align;
	};
	size_t len;
};

/* The kernel's answer to one request. */
struct rnl_reply {
	int error;		/* 0, or the negative errno the kernel returned */
	char extack[256];	/* NLMSGERR_ATTR_MSG, if any */
	__u32 extack_offs;	/* NLMSGERR_ATTR_OFFS, if any */
	bool has_offs;
	struct rnl_record rec;	/* the first record, when error == 0 */
	int nrec;		/* how many records came */
	int nbatch;		/* dumps: in how many reads */
};

/* Returns 0, -ENOENT without a RECOUNT family, or another negative errno. */
int rnl_open(struct rnl *nl);
/*
 * The id of generic netlink family @name in *@id (CTRL_CMD_GETFAMILY on @nl's
 * socket); returns 0, -ENOENT without such a family, or another negative errno.
 */
int rnl_family_id(struct rnl *nl, const char *name, __u16 *id);
void rnl_close(struct rnl *nl);

void rnl_msg_init(struct rnl *nl, struct rnl_msg *m, __u8 cmd, __u16 flags);
void rnl_put(struct rnl_msg *m, __u16 type, const void *data, size_t len);
void rnl_put_u32(struct rnl_msg *m, __u16 type, __u32 v);

/* Send @m as it is and read the answer up to its ACK. Returns reply->error. */
int rnl_transact(struct rnl *nl, struct rnl_msg *m, struct rnl_reply *reply);

/* RECOUNT_CMD_GET of one pid, tgid or cpu (@sel is the attribute type). */
int rnl_get(struct rnl *nl, int sel, __u32 id, struct rnl_reply *reply);

/* RECOUNT_CMD_GET_INFO. */
int rnl_get_info(struct rnl *nl, struct rnl_reply *reply);
/* Choose @nr events; a @mode of 0 leaves the attribute out. */
int rnl_set_events(struct rnl *nl, const struct rnl_event *ev, int nr, struct rnl_reply *reply);

/* RECOUNT_CMD_REGISTER or _DEREGISTER of @cpumask (NULL: no attribute). */
int rnl_listen(struct rnl *nl, bool reg, const char *cpumask, struct rnl_reply *reply);

/*
 * Wait up to @timeout_ms for the next exit record on a listening socket.
 * Returns 1 with it in @rec, 0 on timeout, or a negative errno.
 */
int rnl_next_exit(struct rnl *nl, struct rnl_record *rec, int timeout_ms);

/*
 * Dump RECOUNT_CMD_GET: @scope (a RECOUNT_SCOPE_*, or -1 for none), @tgid
 * (0 for none). Calls @fn for each record; counts the messages flagged
 * NLM_F_DUMP_INTR in *@intr and those without NLM_F_MULTI in *@not_multi.
 * Returns 0 or the negative errno of the dump, with its extack in @reply.
 */
int rnl_dump(struct rnl *nl, int scope, __u32 tgid,
	     void (*fn)(const struct rnl_record *rec, void *arg), void *arg,
	     int *intr, int *not_multi, struct rnl_reply *reply);

/*
 * The two halves of rnl_dump(), for a dump that another process finishes:
 * send the request (its sequence number in *@seq), and read the dump up to
 * its end. Each returns 0 or a negative errno.
 */
int rnl_dump_send(struct rnl *nl, int scope, __u32 tgid, __u32 *seq);
int rnl_dump_recv(struct rnl *nl, __u32 seq,
		  void (*fn)(const struct rnl_record *rec, void *arg), void *arg,
		  int *intr, int *not_multi, struct rnl_reply *reply);

/* RECOUNT_CMD_GET with a runtime-version. */
int rnl_get_runtime(struct rnl *nl, int sel, __u32 id, __u32 version,
		    struct rnl_reply *reply);

static inline __u64 rnl_cpu_time(const struct rnl_usage *u)
{
	return u->user + u->kernel;
}

#endif /* _RECOUNT_NL_H */
