/* SPDX-License-Identifier: MIT */
/*
 * msr-index.h - the MSR names the helper uses, as the kernel's arch/x86/include/asm/msr-index.h
 * defines them: that header is not exported to userspace, so the helper keeps its own copy of
 * the few it needs, with the kernel's exact names and values.
 */
#ifndef PTLAB_MSR_INDEX_H
#define PTLAB_MSR_INDEX_H

#ifndef BIT
#define BIT(nr)			(1UL << (nr))	/* as include/vdso/bits.h */
#endif

#define MSR_IA32_RTIT_CTL	0x00000570
#define RTIT_CTL_TRACEEN	BIT(0)

#endif
