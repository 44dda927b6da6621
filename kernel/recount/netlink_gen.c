// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/recount.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "netlink_gen.h"

#include <uapi/linux/recount.h>

/* RECOUNT_CMD_GET - do */
static const struct nla_policy recount_get_nl_policy[RECOUNT_A_RUNTIME_VERSION + 1] = {
	[RECOUNT_A_PID] = NLA_POLICY_MIN(NLA_U32, 1),
	[RECOUNT_A_TGID] = NLA_POLICY_MIN(NLA_U32, 1),
	[RECOUNT_A_CPU] = { .type = NLA_U32, },
	[RECOUNT_A_RUNTIME_VERSION] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* Ops table for recount */
const struct genl_split_ops recount_nl_ops[2] = {
	{
		.cmd		= RECOUNT_CMD_GET,
		.doit		= recount_nl_get_doit,
		.policy		= recount_get_nl_policy,
		.maxattr	= RECOUNT_A_RUNTIME_VERSION,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= RECOUNT_CMD_GET_INFO,
		.doit	= recount_nl_get_info_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
};
