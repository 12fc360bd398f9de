/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ptlab_uapi.h - the ioctl interface of /dev/ptlab (guest/kmod/ptlab.c), shared with the helper.
 *
 * Every ioctl returns 0 or -1 with errno. A #GP raised by RDMSR/WRMSR/XSAVES/XRSTORS is
 * errno EIO (the kernel's *_safe helpers say -EIO); in a batch it is the `err` of the op.
 * A CPU that is not online is ENXIO; a missing CPU feature EOPNOTSUPP; bad arguments EINVAL.
 */
#ifndef PTLAB_UAPI_H
#define PTLAB_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define PTLAB_DEVICE		"/dev/ptlab"
#define PTLAB_MAX_BATCH		256
#define PTLAB_MAX_ORDER		10		/* 4 MiB with 4 KiB pages (docs/qemu.md §6) */
#define PTLAB_MAX_BUFFERS	256
#define PTLAB_MAX_TOTAL		(128u << 20)	/* bytes held by all buffers together */
#define PTLAB_XSAVE_MAX		4096
#define PTLAB_XSTATE_PT		8		/* XSAVE state component 8: PT state */

/** struct ptlab_msr - one RDMSR or WRMSR on @cpu (value in for WRMSR, out for RDMSR) */
struct ptlab_msr {
	__u32 cpu;
	__u32 msr;
	__u64 value;
};

/** struct ptlab_msr_op - one op of a batch; @err is 0 or -EIO (#GP), set for executed ops */
struct ptlab_msr_op {
	__u32 msr;
	__u32 write;
	__u64 value;
	__s32 err;
	__u32 pad;
};

/**
 * struct ptlab_msr_batch - @count ops at user address @ops, run on @cpu in one IPI
 * @done: out: how many ops ran (the last one faulted when its err is set)
 */
struct ptlab_msr_batch {
	__u32 cpu;
	__u32 count;
	__u64 ops;
	__u32 done;
	__u32 pad;
};

/** struct ptlab_cpuid - CPUID.(@leaf, @subleaf) executed on @cpu */
struct ptlab_cpuid {
	__u32 cpu;
	__u32 leaf;
	__u32 subleaf;
	__u32 eax, ebx, ecx, edx;
	__u32 pad;
};

/** struct ptlab_buf - a physically contiguous, naturally aligned buffer (alloc: @size in; @id, @phys out) */
struct ptlab_buf {
	__u64 size;
	__u64 phys;
	__u32 id;
	__u32 pad;
};

/** struct ptlab_buf_io - copy @len bytes between buffer @id at @offset and user address @data */
struct ptlab_buf_io {
	__u32 id;
	__u32 pad;
	__u64 offset;
	__u64 len;
	__u64 data;
};

/**
 * struct ptlab_xsave - XSAVES/XRSTORS with RFBM @rfbm on @cpu, IA32_XSS[8] set around it
 * @area: user address of @len bytes (out for XSAVES, with @len set to the bytes written)
 */
struct ptlab_xsave {
	__u32 cpu;
	__u32 len;
	__u64 rfbm;
	__u64 area;
};

#define PTLAB_PMI_ENABLE	(1u << 0)	/* claim ToPA PMIs (GLOBAL_STATUS bit 55) */
#define PTLAB_PMI_CLEAR_TRACEEN	(1u << 1)	/* clear IA32_RTIT_CTL.TraceEn in the handler */

/** struct ptlab_pmi_config - what the NMI handler does */
struct ptlab_pmi_config {
	__u32 flags;
	__u32 pad;
};

#define PTLAB_EV_ACKED		(1u << 0)	/* GLOBAL_STATUS bit 55 was cleared via 0x390 */
#define PTLAB_EV_TRACEEN_CLEARED (1u << 1)
#define PTLAB_EV_SYNTHETIC	(1u << 2)	/* made by PTLAB_IOC_PMI_TEST, not by an NMI */

/** struct ptlab_pmi_event - one claimed PMI, as read(2) from /dev/ptlab returns it */
struct ptlab_pmi_event {
	__u32 cpu;
	__u32 flags;
	__u64 seq;
	__u64 global_status;
	__u64 ctl;
	__u64 status;
	__u64 tsc;
};

#define PTLAB_IOC_MAGIC		'P'
#define PTLAB_IOC_RDMSR		_IOWR(PTLAB_IOC_MAGIC, 1, struct ptlab_msr)
#define PTLAB_IOC_WRMSR		_IOW(PTLAB_IOC_MAGIC, 2, struct ptlab_msr)
#define PTLAB_IOC_MSR_BATCH	_IOWR(PTLAB_IOC_MAGIC, 3, struct ptlab_msr_batch)
#define PTLAB_IOC_CPUID		_IOWR(PTLAB_IOC_MAGIC, 4, struct ptlab_cpuid)
#define PTLAB_IOC_BUF_ALLOC	_IOWR(PTLAB_IOC_MAGIC, 5, struct ptlab_buf)
#define PTLAB_IOC_BUF_FREE	_IOW(PTLAB_IOC_MAGIC, 6, struct ptlab_buf)
#define PTLAB_IOC_BUF_READ	_IOW(PTLAB_IOC_MAGIC, 7, struct ptlab_buf_io)
#define PTLAB_IOC_BUF_WRITE	_IOW(PTLAB_IOC_MAGIC, 8, struct ptlab_buf_io)
#define PTLAB_IOC_XSAVES	_IOWR(PTLAB_IOC_MAGIC, 9, struct ptlab_xsave)
#define PTLAB_IOC_XRSTORS	_IOW(PTLAB_IOC_MAGIC, 10, struct ptlab_xsave)
#define PTLAB_IOC_PMI_CONFIG	_IOW(PTLAB_IOC_MAGIC, 11, struct ptlab_pmi_config)
#define PTLAB_IOC_PMI_UNMASK	_IOW(PTLAB_IOC_MAGIC, 12, __u32)
#define PTLAB_IOC_PMI_TEST	_IOW(PTLAB_IOC_MAGIC, 13, __u32)
#define PTLAB_IOC_BUF_FREE_ALL	_IO(PTLAB_IOC_MAGIC, 14)

#endif /* PTLAB_UAPI_H */
