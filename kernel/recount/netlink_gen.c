// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/recount.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "netlink_gen.h"

#include <uapi/linux/recount.h>

/* Common nested types */
const struct nla_policy recount_event_nl_policy[RECOUNT_A_EVENT_KERNEL + 1] = {
	[RECOUNT_A_EVENT_INDEX] = { .type = NLA_U32, },
	[RECOUNT_A_EVENT_TYPE] = NLA_POLICY_MAX(NLA_U32, 2),
	[RECOUNT_A_EVENT_CONFIG] = { .type = NLA_U64, },
	[RECOUNT_A_EVENT_MODE] = NLA_POLICY_RANGE(NLA_U32, 1, 3),
	[RECOUNT_A_EVENT_USER] = { .type = NLA_U64, },
	[RECOUNT_A_EVENT_KERNEL] = { .type = NLA_U64, },
};

/* RECOUNT_CMD_GET - do */
static const struct nla_policy recount_get_do_nl_policy[RECOUNT_A_LEAN + 1] = {
	[RECOUNT_A_PID] = NLA_POLICY_MIN(NLA_U32, 1),
	[RECOUNT_A_TGID] = NLA_POLICY_MIN(NLA_U32, 1),
	[RECOUNT_A_CPU] = { .type = NLA_U32, },
	[RECOUNT_A_RUNTIME_VERSION] = NLA_POLICY_MIN(NLA_U32, 1),
	[RECOUNT_A_LEAN] = { .type = NLA_FLAG, },
};

/* RECOUNT_CMD_GET - dump */
static const struct nla_policy recount_get_dump_nl_policy[RECOUNT_A_LEAN + 1] = {
	[RECOUNT_A_SCOPE] = NLA_POLICY_MAX(NLA_U32, 2),
	[RECOUNT_A_TGID] = NLA_POLICY_MIN(NLA_U32, 1),
	[RECOUNT_A_RUNTIME_VERSION] = NLA_POLICY_MIN(NLA_U32, 1),
	[RECOUNT_A_LEAN] = { .type = NLA_FLAG, },
};

/* RECOUNT_CMD_REGISTER - do */
static const struct nla_policy recount_register_nl_policy[RECOUNT_A_CPUMASK + 1] = {
	[RECOUNT_A_CPUMASK] = { .type = NLA_NUL_STRING, },
};

/* RECOUNT_CMD_DEREGISTER - do */
static const struct nla_policy recount_deregister_nl_policy[RECOUNT_A_CPUMASK + 1] = {
	[RECOUNT_A_CPUMASK] = { .type = NLA_NUL_STRING, },
};

/* RECOUNT_CMD_SET_EVENTS - do */
static const struct nla_policy recount_set_events_nl_policy[RECOUNT_A_EVENT + 1] = {
	[RECOUNT_A_EVENT] = NLA_POLICY_NESTED(recount_event_nl_policy),
};

/* Ops table for recount */
const struct genl_split_ops recount_nl_ops[6] = {
	{
		.cmd		= RECOUNT_CMD_GET,
		.doit		= recount_nl_get_doit,
		.policy		= recount_get_do_nl_policy,
		.maxattr	= RECOUNT_A_LEAN,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= RECOUNT_CMD_GET,
		.start		= recount_nl_get_dump_start,
		.dumpit		= recount_nl_get_dumpit,
		.done		= recount_nl_get_dump_done,
		.policy		= recount_get_dump_nl_policy,
		.maxattr	= RECOUNT_A_LEAN,
		.flags		= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd	= RECOUNT_CMD_GET_INFO,
		.doit	= recount_nl_get_info_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= RECOUNT_CMD_REGISTER,
		.doit		= recount_nl_register_doit,
		.policy		= recount_register_nl_policy,
		.maxattr	= RECOUNT_A_CPUMASK,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= RECOUNT_CMD_DEREGISTER,
		.doit		= recount_nl_deregister_doit,
		.policy		= recount_deregister_nl_policy,
		.maxattr	= RECOUNT_A_CPUMASK,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= RECOUNT_CMD_SET_EVENTS,
		.doit		= recount_nl_set_events_doit,
		.policy		= recount_set_events_nl_policy,
		.maxattr	= RECOUNT_A_EVENT,
		.flags		= GENL_CMD_CAP_DO,
	},
};
