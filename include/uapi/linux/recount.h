/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/recount.yaml */
/* YNL-GEN uapi header */

#ifndef _UAPI_LINUX_RECOUNT_H
#define _UAPI_LINUX_RECOUNT_H

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

enum {
	RECOUNT_A_USAGE_PAD = 1,
	RECOUNT_A_USAGE_USER_TIME,
	RECOUNT_A_USAGE_KERNEL_TIME,
	RECOUNT_A_USAGE_IDLE_TIME,

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

	__RECOUNT_A_MAX,
	RECOUNT_A_MAX = (__RECOUNT_A_MAX - 1)
};

enum {
	RECOUNT_CMD_GET = 1,

	__RECOUNT_CMD_MAX,
	RECOUNT_CMD_MAX = (__RECOUNT_CMD_MAX - 1)
};

#endif /* _UAPI_LINUX_RECOUNT_H */
