/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/recount.yaml */
/* YNL-GEN uapi header */

#ifndef _UAPI_LINUX_RECOUNT_H
#define _UAPI_LINUX_RECOUNT_H

#include <linux/types.h>

#define RECOUNT_FAMILY_NAME	"recount"
#define RECOUNT_FAMILY_VERSION	1

/**
 * enum recount_flags - State of the accounting, reported with every record.
 * @RECOUNT_FLAGS_DISABLED: Accounting is off (sysctl kernel.recount=0 or boot
 *   parameter recount=off): values are frozen at what was counted while it was
 *   on.
 */
enum recount_flags {
	RECOUNT_FLAGS_DISABLED = 1,
};

/**
 * enum recount_metric - The metrics this kernel counts, reported with every
 *   record. The attributes of a metric that is not counted are left out of
 *   every usage: they are unsupported, not zero.
 * @RECOUNT_METRIC_TIME: user-time, kernel-time, idle-time and idle-irq-time.
 *   Always counted.
 * @RECOUNT_METRIC_CYCLES: user-cycles and kernel-cycles, from per-CPU PMU
 *   counters.
 * @RECOUNT_METRIC_INSTRUCTIONS: user-instructions and kernel-instructions,
 *   from the same.
 * @RECOUNT_METRIC_ENERGY: energy and idle-energy; energy-source says from
 *   where.
 * @RECOUNT_METRIC_EVENTS: The events chosen with set-events (get-info lists
 *   them): an event nest per chosen event in every usage, and event-gen in
 *   every record. Counted while some are chosen, with per-CPU PMU counters.
 */
enum recount_metric {
	RECOUNT_METRIC_TIME = 1,
	RECOUNT_METRIC_CYCLES = 2,
	RECOUNT_METRIC_INSTRUCTIONS = 4,
	RECOUNT_METRIC_ENERGY = 8,
	RECOUNT_METRIC_EVENTS = 16,
};

/**
 * enum recount_energy_source - Where energy values come from.
 * @RECOUNT_ENERGY_SOURCE_NONE: Energy is not counted.
 * @RECOUNT_ENERGY_SOURCE_ESTIMATED: A power model: the power of each kind of
 *   CPU, busy and idle (sysctl kernel.recount_power_mw, boot parameter
 *   recount_power_mw=, or the CPUs' Energy Model), times the time.
 */
enum recount_energy_source {
	RECOUNT_ENERGY_SOURCE_NONE,
	RECOUNT_ENERGY_SOURCE_ESTIMATED,
};

/**
 * enum recount_kind - The kinds of CPUs.
 * @RECOUNT_KIND_PERFORMANCE: Performance CPUs; all CPUs of a homogeneous
 *   machine.
 * @RECOUNT_KIND_EFFICIENCY: Efficiency CPUs.
 */
enum recount_kind {
	RECOUNT_KIND_PERFORMANCE,
	RECOUNT_KIND_EFFICIENCY,

	/* private: */
	__RECOUNT_KIND_MAX,
	RECOUNT_KIND_MAX = (__RECOUNT_KIND_MAX - 1)
};

#define RECOUNT_RUNTIME_V1	1
#define RECOUNT_RUNTIME_V2	2
#define RECOUNT_RUNTIME_V3	3
#define RECOUNT_RUNTIME_VERSION	3

/**
 * struct recount_task_runtime_v1 - Version 1 of the task runtime info, 16
 *   bytes.
 * @cpu_time: Time on CPU, user and kernel, in nanoseconds.
 * @queue_time: Time runnable but waiting for a CPU, in nanoseconds.
 */
struct recount_task_runtime_v1 {
	__u64 cpu_time;
	__u64 queue_time;
};

/**
 * struct recount_task_runtime_v2 - Version 2 of the task runtime info, 32
 *   bytes; it begins with version 1.
 * @cpu_time: Time on CPU, user and kernel, in nanoseconds.
 * @queue_time: Time runnable but waiting for a CPU, in nanoseconds.
 * @page_fault_time: Time in page faults, user and kernel, from entry to exit,
 *   whatever they waited for, in nanoseconds.
 * @lock_contention_time: Time waiting for contended sleeping locks (mutex,
 *   rw_semaphore, percpu_rw_semaphore, rt_mutex, semaphore), in nanoseconds.
 */
struct recount_task_runtime_v2 {
	__u64 cpu_time;
	__u64 queue_time;
	__u64 page_fault_time;
	__u64 lock_contention_time;
};

/**
 * struct recount_task_runtime - The task runtime info: why a thread or process
 *   was not running, version 3, 104 bytes; it begins with version 2. The waits
 *   may overlap (a page fault may wait for a lock) and do not add up to the
 *   wall time. For a process, the times and counts are the sums over its
 *   threads, live and exited, and the longest wait is the longest of any.
 * @cpu_time: Time on CPU, user and kernel, in nanoseconds.
 * @queue_time: Time runnable but waiting for a CPU, in nanoseconds.
 * @page_fault_time: Time in page faults, user and kernel, from entry to exit,
 *   whatever they waited for, in nanoseconds.
 * @lock_contention_time: Time waiting for contended sleeping locks (mutex,
 *   rw_semaphore, percpu_rw_semaphore, rt_mutex, semaphore), in nanoseconds.
 * @queue_count: How many times it waited for a CPU: became runnable, then ran.
 *   The wait after a wakeup that preempts, or reaches an idle CPU, is timed
 *   short (often 0 ns): the scheduler does not update its clock for the switch
 *   that follows.
 * @queue_max: The longest of those waits, in nanoseconds.
 * @queue_max_time: When the longest of those waits ended: CLOCK_BOOTTIME, in
 *   nanoseconds; 0 if none took longer than 0 ns.
 * @page_fault_count: How many times it waited for page faults to be handled.
 * @page_fault_max: The longest of those waits, in nanoseconds.
 * @page_fault_max_time: When the longest of those waits ended: CLOCK_BOOTTIME,
 *   in nanoseconds; 0 if none took longer than 0 ns.
 * @lock_contention_count: How many times it waited for contended sleeping
 *   locks.
 * @lock_contention_max: The longest of those waits, in nanoseconds.
 * @lock_contention_max_time: When the longest of those waits ended:
 *   CLOCK_BOOTTIME, in nanoseconds; 0 if none took longer than 0 ns.
 */
struct recount_task_runtime {
	__u64 cpu_time;
	__u64 queue_time;
	__u64 page_fault_time;
	__u64 lock_contention_time;
	__u64 queue_count;
	__u64 queue_max;
	__u64 queue_max_time;
	__u64 page_fault_count;
	__u64 page_fault_max;
	__u64 page_fault_max_time;
	__u64 lock_contention_count;
	__u64 lock_contention_max;
	__u64 lock_contention_max_time;
};

/**
 * enum recount_scope - What a dump of get lists.
 * @RECOUNT_SCOPE_THREADS: Every thread the caller may read (only those of
 *   tgid, if given).
 * @RECOUNT_SCOPE_PROCESSES: Every process the caller may read.
 * @RECOUNT_SCOPE_CPUS: Every present CPU, online or not.
 */
enum recount_scope {
	RECOUNT_SCOPE_THREADS,
	RECOUNT_SCOPE_PROCESSES,
	RECOUNT_SCOPE_CPUS,
};

/**
 * enum recount_inexact - Counts of a usage that missed part of what they
 *   should have counted: at some accounting point their counters could not be
 *   read, or were not counting (another user held the PMU); or, in children, a
 *   reaped child's were left out (it ran a non-dumpable image). They are never
 *   scaled up. Sticky.
 * @RECOUNT_INEXACT_EVENT_0: The chosen event of index 0.
 * @RECOUNT_INEXACT_EVENT_1: The chosen event of index 1.
 */
enum recount_inexact {
	RECOUNT_INEXACT_CYCLES = 1,
	RECOUNT_INEXACT_INSTRUCTIONS = 2,
	RECOUNT_INEXACT_EVENT_0 = 4,
	RECOUNT_INEXACT_EVENT_1 = 8,
};

/**
 * enum recount_withheld - What of the counts this kernel has the requester may
 *   not read, by the rules perf_event_open() applies to the same counts; those
 *   attributes are left out of the record's usages (and per-kind and exited
 *   nests). Decided once per request, dump or listener registration, with the
 *   capabilities of both the sender and the socket's opener, whatever the PMU
 *   counts then: a listener keeps it when the PMU starts counting. The records
 *   of a process that executed a non-dumpable image (set-user-ID,
 *   set-group-ID, file capabilities), or that such a process forked, and of
 *   their threads, withhold what a CPU's would: perf counted them on only for
 *   CPU-wide events. Given only in records that carry cycles and instructions.
 * @RECOUNT_WITHHELD_USER_PMU: user-cycles and user-instructions: a CPU's,
 *   where perf refuses a CPU-wide event (perf_event_paranoid above 0 without
 *   CAP_PERFMON); anyone's, where perf refuses any event (perf_event_paranoid
 *   above 2 without CAP_SYS_ADMIN, in kernels that give 3 that meaning).
 * @RECOUNT_WITHHELD_KERNEL_PMU: kernel-cycles and kernel-instructions: where
 *   perf refuses to count the kernel (perf_event_paranoid above 1 without
 *   CAP_PERFMON), and in every case that withholds user-pmu. A security
 *   module's perf_event_open hook may withhold both.
 */
enum recount_withheld {
	RECOUNT_WITHHELD_USER_PMU = 1,
	RECOUNT_WITHHELD_KERNEL_PMU = 2,
};

/**
 * enum recount_event_type - What the config of a chosen event is.
 * @RECOUNT_EVENT_TYPE_HARDWARE: A generic hardware event, as perf_event_attr's
 *   PERF_TYPE_HARDWARE (enum perf_hw_id: PERF_COUNT_HW_CACHE_MISSES is 3).
 * @RECOUNT_EVENT_TYPE_HW_CACHE: A generic cache event, as PERF_TYPE_HW_CACHE:
 *   cache id, operation shifted by 8, result shifted by 16.
 * @RECOUNT_EVENT_TYPE_RAW: The PMU's own event code, as PERF_TYPE_RAW.
 */
enum recount_event_type {
	RECOUNT_EVENT_TYPE_HARDWARE,
	RECOUNT_EVENT_TYPE_HW_CACHE,
	RECOUNT_EVENT_TYPE_RAW,
};

/**
 * enum recount_event_mode - At which privilege levels a chosen event is
 *   counted.
 * @RECOUNT_EVENT_MODE_USER: User mode only; each usage has its user count.
 * @RECOUNT_EVENT_MODE_KERNEL: Kernel mode only; each usage has its kernel
 *   count.
 * @RECOUNT_EVENT_MODE_ALL: Both, each apart; each usage has its user and its
 *   kernel count.
 */
enum recount_event_mode {
	RECOUNT_EVENT_MODE_USER = 1,
	RECOUNT_EVENT_MODE_KERNEL,
	RECOUNT_EVENT_MODE_ALL,
};

enum {
	RECOUNT_A_USAGE_PAD = 1,
	RECOUNT_A_USAGE_USER_TIME,
	RECOUNT_A_USAGE_KERNEL_TIME,
	RECOUNT_A_USAGE_IDLE_TIME,
	RECOUNT_A_USAGE_USER_CYCLES,
	RECOUNT_A_USAGE_KERNEL_CYCLES,
	RECOUNT_A_USAGE_USER_INSTRUCTIONS,
	RECOUNT_A_USAGE_KERNEL_INSTRUCTIONS,
	RECOUNT_A_USAGE_ENERGY,
	RECOUNT_A_USAGE_IDLE_ENERGY,
	RECOUNT_A_USAGE_INEXACT,
	RECOUNT_A_USAGE_KIND,
	RECOUNT_A_USAGE_IDLE_IRQ_TIME,
	RECOUNT_A_USAGE_EVENT,

	__RECOUNT_A_USAGE_MAX,
	RECOUNT_A_USAGE_MAX = (__RECOUNT_A_USAGE_MAX - 1)
};

enum {
	RECOUNT_A_PAD = 1,
	RECOUNT_A_PID,
	RECOUNT_A_TGID,
	RECOUNT_A_CPU,
	RECOUNT_A_COMM,
	RECOUNT_A_FLAGS,
	RECOUNT_A_USAGE,
	RECOUNT_A_EXITED,
	RECOUNT_A_METRICS,
	RECOUNT_A_ENERGY_SOURCE,
	RECOUNT_A_PER_KIND,
	RECOUNT_A_KIND_CPUS,
	RECOUNT_A_RUNTIME,
	RECOUNT_A_RUNTIME_VERSION,
	RECOUNT_A_RUNTIME_STRUCT,
	RECOUNT_A_EXITED_RUNTIME,
	RECOUNT_A_WITHHELD,
	RECOUNT_A_SCOPE,
	RECOUNT_A_CPUMASK,
	RECOUNT_A_EXIT_CODE,
	RECOUNT_A_EXIT_TIME,
	RECOUNT_A_MISSED,
	RECOUNT_A_LISTENERS,
	RECOUNT_A_START_TIME,
	RECOUNT_A_LEAN,
	RECOUNT_A_PARENT_TGID,
	RECOUNT_A_CHILDREN,
	RECOUNT_A_CHILDREN_RUNTIME,
	RECOUNT_A_EVENT,
	RECOUNT_A_EVENT_GEN,
	RECOUNT_A_MAX_EVENTS,
	RECOUNT_A_PMU_COUNTERS,

	__RECOUNT_A_MAX,
	RECOUNT_A_MAX = (__RECOUNT_A_MAX - 1)
};

enum {
	RECOUNT_A_EVENT_PAD = 1,
	RECOUNT_A_EVENT_INDEX,
	RECOUNT_A_EVENT_TYPE,
	RECOUNT_A_EVENT_CONFIG,
	RECOUNT_A_EVENT_MODE,
	RECOUNT_A_EVENT_USER,
	RECOUNT_A_EVENT_KERNEL,

	__RECOUNT_A_EVENT_MAX,
	RECOUNT_A_EVENT_MAX = (__RECOUNT_A_EVENT_MAX - 1)
};

enum {
	RECOUNT_A_RUNTIME_PAD = 1,
	RECOUNT_A_RUNTIME_CPU_TIME,
	RECOUNT_A_RUNTIME_QUEUE_TIME,
	RECOUNT_A_RUNTIME_PAGE_FAULT_TIME,
	RECOUNT_A_RUNTIME_LOCK_CONTENTION_TIME,
	RECOUNT_A_RUNTIME_QUEUE_COUNT,
	RECOUNT_A_RUNTIME_QUEUE_MAX,
	RECOUNT_A_RUNTIME_QUEUE_MAX_TIME,
	RECOUNT_A_RUNTIME_PAGE_FAULT_COUNT,
	RECOUNT_A_RUNTIME_PAGE_FAULT_MAX,
	RECOUNT_A_RUNTIME_PAGE_FAULT_MAX_TIME,
	RECOUNT_A_RUNTIME_LOCK_CONTENTION_COUNT,
	RECOUNT_A_RUNTIME_LOCK_CONTENTION_MAX,
	RECOUNT_A_RUNTIME_LOCK_CONTENTION_MAX_TIME,

	__RECOUNT_A_RUNTIME_MAX,
	RECOUNT_A_RUNTIME_MAX = (__RECOUNT_A_RUNTIME_MAX - 1)
};

enum {
	RECOUNT_A_KIND_CPUS_KIND = 1,
	RECOUNT_A_KIND_CPUS_CPUS,

	__RECOUNT_A_KIND_CPUS_MAX,
	RECOUNT_A_KIND_CPUS_MAX = (__RECOUNT_A_KIND_CPUS_MAX - 1)
};

enum {
	RECOUNT_CMD_GET = 1,
	RECOUNT_CMD_GET_INFO,
	RECOUNT_CMD_REGISTER,
	RECOUNT_CMD_DEREGISTER,
	RECOUNT_CMD_EXIT,
	RECOUNT_CMD_SET_EVENTS,

	__RECOUNT_CMD_MAX,
	RECOUNT_CMD_MAX = (__RECOUNT_CMD_MAX - 1)
};

#endif /* _UAPI_LINUX_RECOUNT_H */
