/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recount's raw clock, for architectures without one: recount then reads
 * local_clock(). See include/linux/recount.h.
 */
#ifndef __ASM_GENERIC_RECOUNT_H
#define __ASM_GENERIC_RECOUNT_H

#include <linux/types.h>

static __always_inline u64 arch_recount_clock(void)
{
	return 0;
}

static inline u64 arch_recount_clock_ordered(void)
{
	return 0;
}

static inline u64 arch_recount_clock_rate(void)
{
	return 0;
}

static inline u64 arch_recount_clock_rate_now(u64 rate)
{
	return 0;
}

#endif /* __ASM_GENERIC_RECOUNT_H */
