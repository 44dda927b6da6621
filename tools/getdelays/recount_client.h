/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A client of the RECOUNT generic netlink family, on libnl-genl-3: open a
 * socket, send requests, decode records into struct rc_record. Also the
 * little of taskstats that getdelays shows next to recount's figures.
 */
#ifndef _RECOUNT_CLIENT_H
#define _RECOUNT_CLIENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/recount.h>
#include <linux/cgroupstats.h>
#include <linux/taskstats.h>

struct nl_sock;
struct nlattr;

/* One metric of a usage; absent (unsupported) unless has is set. */
struct rc_value {
	bool has;
	uint64_t v;
};

/* The chosen PMU events a record carries at most. */
#define RC_MAX_EVENTS 4

/* A chosen PMU event: set-events takes them, get-info lists them. */
struct rc_event {
	uint32_t type;			/* enum recount_event_type */
	uint32_t mode;			/* enum recount_event_mode */
	uint64_t config;
};

/* What a thread, a process or a CPU consumed. */
struct rc_usage {
	struct rc_value user_ns, kernel_ns, idle_ns;
	struct rc_value user_cycles, kernel_cycles;
	struct rc_value user_instructions, kernel_instructions;
	struct rc_value energy_nj, idle_energy_nj;
	struct rc_value idle_irq_ns;	/* part of kernel_ns, of a CPU */
	uint32_t inexact;		/* RECOUNT_INEXACT_* */
	bool has_kind;
	uint32_t kind;			/* enum recount_kind */
	/* The chosen events, by index: their counts at each level counted. */
	struct rc_value event_user[RC_MAX_EVENTS], event_kernel[RC_MAX_EVENTS];
};

#define RC_MAX_KINDS 8

/* The waits of a runtime, in the order of the kernel's attributes. */
enum rc_wait {
	RC_WAIT_QUEUE,
	RC_WAIT_FAULT,
	RC_WAIT_LOCK,
	RC_NR_WAITS,
};

/* How often a thread or process waited for one thing, and its longest wait. */
struct rc_wait_stats {
	uint64_t count, max_ns;
	uint64_t max_at_ns;		/* when the longest ended: CLOCK_BOOTTIME */
};

/*
 * Why a thread or process was not running; absent unless has is set. The
 * counts and longest waits are absent (a kernel before runtime version 3)
 * unless has_waits is set.
 */
struct rc_runtime {
	bool has, has_waits;
	uint64_t cpu_ns, queue_ns, fault_ns, lock_ns;
	struct rc_wait_stats wait[RC_NR_WAITS];
};

/* What an interval's record covers (interval.h). */
enum rc_iv_state {
	RC_IV_BEGAN = 1 << 0,	/* it began in the interval */
	RC_IV_EXITED = 1 << 1,	/* it exited in the interval */
};

struct rc_interval {
	bool is;		/* the figures are an interval's, not totals */
	uint8_t state;		/* RC_IV_* */
	uint8_t max_in;		/* BIT(enum rc_wait): that longest wait ended in it */
	uint64_t t0, t1;	/* the reads: CLOCK_BOOTTIME, ns */
	uint64_t span_ns;	/* the part of t0..t1 the task or CPU lived */
	int64_t wall_ns;	/* t1 as CLOCK_REALTIME, for the clock column */
};

/* What a record is of. */
enum rc_type {
	RC_THREAD,
	RC_PROCESS,
	RC_CPU,
};

struct rc_record {
	enum rc_type type;
	bool has_pid, has_tgid, has_cpu, has_flags, has_usage, has_exited;
	uint32_t pid, tgid, cpu, flags;
	uint32_t metrics;		/* RECOUNT_METRIC_* */
	uint32_t withheld;		/* RECOUNT_WITHHELD_*: not ours to read */
	uint32_t energy_source;		/* enum recount_energy_source */
	bool has_event_gen;
	uint32_t event_gen;		/* the generation of the event counts */
	char comm[32];
	struct rc_value start_time;	/* CLOCK_BOOTTIME, ns */
	struct rc_usage usage, exited;
	int nr_kinds;
	struct rc_usage per_kind[RC_MAX_KINDS];
	struct rc_runtime runtime, exited_runtime;
	/* The struct recount_task_runtime asked for with runtime_version. */
	int runtime_struct_len;
	unsigned char runtime_struct[128];
	/* The parent's tgid; of a process, what its reaped children did. */
	bool has_parent_tgid, has_children;
	uint32_t parent_tgid;
	struct rc_usage children;
	struct rc_runtime children_runtime;
	/* Exit records (RECOUNT_CMD_EXIT) */
	bool is_exit;
	uint32_t exit_code;
	uint64_t exit_time, missed;
	/* Not decoded: set by interval.c when the figures are an interval's. */
	struct rc_interval iv;
};

/* What the kernel counts: RECOUNT_CMD_GET_INFO. */
struct rc_info {
	uint32_t flags, metrics, energy_source, listeners;
	/* The chosen events, their generation, how many may be, counters held. */
	int nr_events;
	struct rc_event events[RC_MAX_EVENTS];
	uint32_t event_gen, max_events, pmu_counters;
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
	/*
	 * Exit records that came while a request was being answered (the
	 * first ones, say, while registering): rc_receive() gives them first.
	 * Records that could not be kept or decoded count as missed there.
	 */
	struct rc_record *queued;
	unsigned int nr_queued, queue_room;
	uint64_t queue_missed;
};

/* Exit records kept while a request is answered, at most; more are missed. */
#define RC_QUEUE_MAX	1024

enum rc_selector {
	RC_SEL_PID = RECOUNT_A_PID,
	RC_SEL_TGID = RECOUNT_A_TGID,
	RC_SEL_CPU = RECOUNT_A_CPU,
};

/*
 * Called for each record of a dump or each exit record; nonzero stops. A
 * dump so stopped fails with the value returned if it is negative, else
 * with -ECANCELED.
 */
typedef int (*rc_record_fn)(const struct rc_record *rec, void *arg);

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
/* Choose the @nr events @ev (none if 0): 0, or a negative errno with extack. */
int rc_set_events(struct rc_client *c, const struct rc_event *ev, int nr);

/*
 * Dump every thread (of @tgid, if not 0), process or CPU, calling @fn for
 * each record. @interrupted tells whether tasks came and went meanwhile
 * (NLM_F_DUMP_INTR). Returns 0 or a negative errno.
 */
int rc_dump(struct rc_client *c, enum recount_scope scope, uint32_t tgid,
	    rc_record_fn fn, void *arg, bool *interrupted);

/* Set the socket's receive buffer to @bytes (forcing it if allowed). */
int rc_set_rcvbuf(struct rc_client *c, int bytes);
/* The receive buffer the kernel gave the socket, in bytes. */
int rc_get_rcvbuf(struct rc_client *c);

/* Register (or deregister) for the exit records of @cpulist. */
int rc_listen(struct rc_client *c, const char *cpulist, bool reg);

/*
 * Wait up to @timeout_ms in all (-1: forever) for exit records, calling @fn
 * for each. Returns 1 if @fn stopped, 0 on timeout, or a negative errno: -EINTR
 * if a signal came. @sigmask, if not NULL, is the signal mask while waiting,
 * as for ppoll(): a caller that blocks the signals it stops on and lets them
 * in only here sees each one, whenever it came.
 */
int rc_receive(struct rc_client *c, int timeout_ms, const sigset_t *sigmask,
	       rc_record_fn fn, void *arg);

/*
 * Decode the attributes of a record (a genetlink payload) into @rec.
 * Attributes this client does not know (from a newer kernel) are ignored.
 */
int rc_decode_record(struct nlattr *attrs, int len, struct rc_record *rec);
/*
 * A lean dump (RECOUNT_A_LEAN) gives the state (flags, metrics, energy
 * source, withheld) in its first record and where it changed: give @rec,
 * which has none, that of @first, the last record that had it.
 */
void rc_record_inherit(struct rc_record *rec, const struct rc_record *first);
/* Leave out @rec's counts of chosen events, and their generation. */
void rc_forget_events(struct rc_record *rec);

/* Names of the kernel's enums, for printing. */
const char *rc_kind_name(uint32_t kind);
const char *rc_energy_source_name(uint32_t source);

/*
 * taskstats (Documentation/accounting/taskstats.rst): what getdelays -d, -i
 * and -q show. Its requests need CAP_NET_ADMIN.
 */
struct ts_client {
	struct nl_sock *sk;
	int family;
	/* Exit records that came while registering: ts_drain() gives them first. */
	struct ts_record *queued;
	unsigned int nr_queued, queue_room;
};

/* A task's struct taskstats; the fields a kernel did not send are 0. */
struct ts_record {
	bool has_pid;		/* a thread's, else a process's */
	uint32_t id;
	uint16_t version;	/* the kernel's TASKSTATS_VERSION */
	struct taskstats stats;
};

/* Returns 0, -ENOENT without a TASKSTATS family, or another negative errno. */
int ts_open(struct ts_client *t);
void ts_close(struct ts_client *t);
/* Get the taskstats of a thread (@tgid false) or process. */
int ts_get(struct ts_client *t, uint32_t id, bool tgid, struct ts_record *rec);
/*
 * The tasks of the cgroup (v1) whose directory @fd is open, by state
 * (CGROUPSTATS_CMD_GET). Returns 0, or -EINVAL if @fd is no cgroup v1
 * directory, or another negative errno.
 */
int ts_cgroup(struct ts_client *t, int fd, struct cgroupstats *stats);
/* Register for the exit records of @cpulist. */
int ts_listen(struct ts_client *t, const char *cpulist);
/* Take the exit records that arrived, without waiting; @fn for each. */
int ts_drain(struct ts_client *t, void (*fn)(const struct ts_record *rec, void *arg),
	     void *arg);
/* Decode a TASKSTATS_CMD_NEW reply's attributes into @rec. */
int ts_decode(struct nlattr *attrs, int len, struct ts_record *rec);

#endif /* _RECOUNT_CLIENT_H */
