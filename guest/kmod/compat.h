/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - the kernel APIs ptlab.c uses whose names or reach changed between the kernels it
 * builds against (Debian's 6.1 and bookworm-backports' 6.12; and the 6.16 rename).
 */
#ifndef PTLAB_COMPAT_H
#define PTLAB_COMPAT_H

#include <linux/version.h>
#include <asm/apic.h>
#include <asm/msr.h>

/* 6.12 moved the unaligned accessors from <asm/unaligned.h> to <linux/unaligned.h>. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
#include <asm/unaligned.h>
#else
#include <linux/unaligned.h>
#endif

/* 6.16 renamed the 64-bit MSR accessors from the "l" to the "q" suffix; ptlab.c has the new. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 16, 0)
#define rdmsrq_safe(msr, p)			rdmsrl_safe(msr, p)
#define wrmsrq_safe(msr, val)			wrmsrl_safe(msr, val)
#define rdmsrq_safe_on_cpu(cpu, msr, p)		rdmsrl_safe_on_cpu(cpu, msr, p)
#define wrmsrq_safe_on_cpu(cpu, msr, val)	wrmsrl_safe_on_cpu(cpu, msr, val)
#endif

/*
 * IA32_PERF_GLOBAL_STATUS_SET (SDM Vol. 4, "IA32_PERF_GLOBAL_STATUS_SET"): <asm/msr-index.h> of
 * 6.1 and 6.12 lacks it, so it is named the way its MSR_CORE_PERF_GLOBAL_* neighbours are; a
 * kernel that defines it wins.
 */
#ifndef MSR_CORE_PERF_GLOBAL_STATUS_SET
#define MSR_CORE_PERF_GLOBAL_STATUS_SET		0x00000391
#endif

/**
 * ptlab_lvtpc_write - write the LVT performance-monitor entry of the local APIC
 * @val: the entry (APIC_DM_NMI: delivery mode NMI, unmasked)
 *
 * Since 6.6 apic_write() is a static call whose key is not exported to modules, so the entry is
 * written the way the APIC is driven: the x2APIC MSR, or the xAPIC register page.
 */
static inline void ptlab_lvtpc_write(u32 val)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
	apic_write(APIC_LVTPC, val);
#else
	if (x2apic_mode)
		native_apic_msr_write(APIC_LVTPC, val);
	else
		native_apic_mem_write(APIC_LVTPC, val);
#endif
}

#endif /* PTLAB_COMPAT_H */
