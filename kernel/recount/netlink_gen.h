/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/recount.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_RECOUNT_GEN_H
#define _LINUX_RECOUNT_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/recount.h>

/* Common nested types */
extern const struct nla_policy recount_event_nl_policy[RECOUNT_A_EVENT_KERNEL + 1];

/* Ops table for recount */
extern const struct genl_split_ops recount_nl_ops[6];

int recount_nl_get_dump_start(struct netlink_callback *cb);
int recount_nl_get_dump_done(struct netlink_callback *cb);

int recount_nl_get_doit(struct sk_buff *skb, struct genl_info *info);
int recount_nl_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int recount_nl_get_info_doit(struct sk_buff *skb, struct genl_info *info);
int recount_nl_register_doit(struct sk_buff *skb, struct genl_info *info);
int recount_nl_deregister_doit(struct sk_buff *skb, struct genl_info *info);
int recount_nl_set_events_doit(struct sk_buff *skb, struct genl_info *info);

#endif /* _LINUX_RECOUNT_GEN_H */
