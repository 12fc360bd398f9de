/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ptlab_uapi.h - the ioctl interface of /dev/ptlab (guest/kmod/ptlab.c), shared with the helper.
 *
 * Every ioctl returns 0 or -1 with errno. A #GP raised by RDMSR/WRMSR/XSAVES/XRSTORS is
 * errno EIO (the kernel's *_safe helpers say -EIO); in a batch it is the `err` of the op.
 * A CPU that is not online is ENXIO; a missing CPU feature EOPNOTSUPP; bad arguments EINVAL.
 *
 * The policy (docs/design.md "Guest side"): opening needs CAP_SYS_RAWIO. A WRMSR outside the
 * IA32_RTIT_* and ToPA-PMI MSRs (plus the module parameter allow_msr=) is EPERM, and so is any
 * MSR write or XSAVES/XRSTORS while the kernel is locked down. A TraceEn=1 write (WRMSR, a batch,
 * an XRSTORS image) or a buffer write while a CPU of this file traces, that would let PT reach
 * memory outside this file's buffers, is EINVAL before anything runs. A CPU, buffer or event ring
 * another open file holds is EBUSY.
 */
#ifndef PTLAB_UAPI_H
#define PTLAB_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* The interface's version: the host refuses a module of another one (PTLAB_IOC_KSTATE). */
#define PTLAB_ABI		2

#define PTLAB_DEVICE		"/dev/ptlab"
#define PTLAB_MAX_BATCH		256
#define PTLAB_MAX_ORDER		10		/* 4 MiB with 4 KiB pages (docs/qemu.md §6) */
#define PTLAB_MAX_BUFFERS	1024		/* a grow policy on 4 KiB regions keeps hundreds */
#define PTLAB_MAX_TOTAL		(128u << 20)	/* bytes held by all buffers together */
#define PTLAB_XSAVE_MAX		4096
#define PTLAB_XSTATE_PT		8		/* XSAVE state component 8: PT state */
#define PTLAB_KSTATE_CPUS	1024		/* CPUs the kstate bitmaps cover */

/**
 * struct ptlab_msr - one RDMSR or WRMSR on @cpu
 * @cpu: the CPU
 * @msr: the MSR's address
 * @value: in for WRMSR, out for RDMSR
 */
struct ptlab_msr {
	__u32 cpu;
	__u32 msr;
	__u64 value;
};

/**
 * struct ptlab_msr_op - one op of a batch
 * @msr: the MSR's address
 * @write: 1 for WRMSR, 0 for RDMSR
 * @value: in for WRMSR, out for RDMSR
 * @err: out: 0, or -EIO (#GP) for the op that ended the batch
 * @pad: 0
 */
struct ptlab_msr_op {
	__u32 msr;
	__u32 write;
	__u64 value;
	__s32 err;
	__u32 pad;
};

/**
 * struct ptlab_msr_batch - @count ops at user address @ops, run on @cpu in one IPI
 * @cpu: the CPU
 * @count: how many ops (at most PTLAB_MAX_BATCH)
 * @ops: user address of @count struct ptlab_msr_op
 * @done: out: how many ops ran (the last one faulted when its err is set)
 * @pad: 0
 */
struct ptlab_msr_batch {
	__u32 cpu;
	__u32 count;
	__u64 ops;
	__u32 done;
	__u32 pad;
};

/**
 * struct ptlab_cpuid - CPUID.(@leaf, @subleaf) executed on @cpu
 * @cpu: the CPU
 * @leaf: EAX before CPUID
 * @subleaf: ECX before CPUID
 * @eax: out
 * @ebx: out
 * @ecx: out
 * @edx: out
 * @pad: 0
 */
struct ptlab_cpuid {
	__u32 cpu;
	__u32 leaf;
	__u32 subleaf;
	__u32 eax, ebx, ecx, edx;
	__u32 pad;
};

/**
 * struct ptlab_buf - a contiguous, naturally aligned buffer
 * @size: in for PTLAB_IOC_BUF_ALLOC: a power of two, from a page to PTLAB_MAX_ORDER pages
 * @phys: out for PTLAB_IOC_BUF_ALLOC: its physical address
 * @id: out for PTLAB_IOC_BUF_ALLOC, in for PTLAB_IOC_BUF_FREE
 * @pad: 0
 */
struct ptlab_buf {
	__u64 size;
	__u64 phys;
	__u32 id;
	__u32 pad;
};

/**
 * struct ptlab_buf_io - copy @len bytes between buffer @id at @offset and user address @data
 * @id: the buffer
 * @pad: 0
 * @offset: the first byte, from the buffer's start
 * @len: how many bytes
 * @data: user address of @len bytes (in for PTLAB_IOC_BUF_WRITE, out for PTLAB_IOC_BUF_READ)
 */
struct ptlab_buf_io {
	__u32 id;
	__u32 pad;
	__u64 offset;
	__u64 len;
	__u64 data;
};

/**
 * struct ptlab_xsave - XSAVES/XRSTORS with RFBM @rfbm on @cpu, IA32_XSS[8] set around it
 * @cpu: the CPU
 * @len: the area's bytes (in for XRSTORS, out for XSAVES)
 * @rfbm: the requested-feature bitmap: bit 8 only
 * @area: user address of @len bytes (out for XSAVES, with @len set to the bytes written)
 */
struct ptlab_xsave {
	__u32 cpu;
	__u32 len;
	__u64 rfbm;
	__u64 area;
};

#define PTLAB_PMI_CLEAR_TRACEEN	(1u << 1)	/* clear IA32_RTIT_CTL.TraceEn in the handler */
#define PTLAB_PMI_FREEZE	(1u << 2)	/* SIGSTOP the CPU's task (PTLAB_IOC_PMI_TASK) */

/**
 * struct ptlab_pmi_arm - claim ToPA PMIs (IA32_PERF_GLOBAL_STATUS bit 55) on @cpu
 * @cpu: the CPU
 * @flags: PTLAB_PMI_CLEAR_TRACEEN, PTLAB_PMI_FREEZE
 */
struct ptlab_pmi_arm {
	__u32 cpu;
	__u32 flags;
};

/**
 * struct ptlab_pmi_task - the task the top half of @cpu freezes (PTLAB_PMI_FREEZE)
 * @cpu: a CPU the caller's file armed
 * @pid: the task, or 0 for none
 */
struct ptlab_pmi_task {
	__u32 cpu;
	__s32 pid;
};

#define PTLAB_EV_ACKED		(1u << 0)	/* GLOBAL_STATUS bit 55 was cleared via 0x390 */
#define PTLAB_EV_TRACEEN_CLEARED (1u << 1)
#define PTLAB_EV_SYNTHETIC	(1u << 2)	/* made by PTLAB_IOC_PMI_TEST, not by an NMI */
#define PTLAB_EV_FROZEN		(1u << 3)	/* the CPU's task got SIGSTOP before the wake-up */

/**
 * struct ptlab_pmi_event - one claimed PMI, as read(2) from /dev/ptlab returns it
 * @cpu: the CPU it arrived on
 * @flags: PTLAB_EV_*
 * @seq: its number on that CPU (a gap: events overwritten before they were read)
 * @global_status: IA32_PERF_GLOBAL_STATUS (0 for a synthetic event)
 * @ctl: IA32_RTIT_CTL before the handler changed it (0 for a synthetic event)
 * @status: IA32_RTIT_STATUS (0 for a synthetic event)
 * @tsc: the TSC when the event was recorded
 */
struct ptlab_pmi_event {
	__u32 cpu;
	__u32 flags;
	__u64 seq;
	__u64 global_status;
	__u64 ctl;
	__u64 status;
	__u64 tsc;
};

#define PTLAB_KSTATE_WORDS	(PTLAB_KSTATE_CPUS / 64)

/**
 * struct ptlab_kstate - the module's state, as the caller's file sees it
 * @abi: PTLAB_ABI
 * @files: files open on the device
 * @buffers: buffers of every file
 * @orphans: buffers left by a release whose CPU did not confirm TraceEn=0
 * @bytes: bytes of @buffers
 * @orphan_bytes: bytes of @orphans
 * @mine_buffers: buffers of the caller's file
 * @lockdown: 1 when the kernel is locked down against MSR writes (LOCKDOWN_MSR)
 * @mine_bytes: bytes of @mine_buffers
 * @nr_cpus: nr_cpu_ids
 * @pad: 0
 * @armed: CPUs whose ToPA PMIs some file claims
 * @armed_mine: CPUs whose ToPA PMIs the caller's file claims
 * @owned: CPUs whose PT some file programmed
 * @owned_mine: CPUs whose PT the caller's file programmed
 * @taken: CPUs a release could not stop (TraceEn still read 1): never given out again
 */
struct ptlab_kstate {
	__u32 abi;
	__u32 files;
	__u32 buffers;
	__u32 orphans;
	__u64 bytes;
	__u64 orphan_bytes;
	__u32 mine_buffers;
	__u32 lockdown;
	__u64 mine_bytes;
	__u32 nr_cpus;
	__u32 pad;
	__u64 armed[PTLAB_KSTATE_WORDS];
	__u64 armed_mine[PTLAB_KSTATE_WORDS];
	__u64 owned[PTLAB_KSTATE_WORDS];
	__u64 owned_mine[PTLAB_KSTATE_WORDS];
	__u64 taken[PTLAB_KSTATE_WORDS];
};

/**
 * struct ptlab_task_cr3 - the CR3 task @pid's user code runs under
 * @pid: the task
 * @pad: 0
 * @cr3: out
 */
struct ptlab_task_cr3 {
	__s32 pid;
	__u32 pad;
	__u64 cr3;
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
/* 11 was PTLAB_IOC_PMI_CONFIG (ABI 1: one global claim flag), replaced by PTLAB_IOC_PMI_ARM. */
#define PTLAB_IOC_PMI_UNMASK	_IOW(PTLAB_IOC_MAGIC, 12, __u32)
#define PTLAB_IOC_PMI_TEST	_IOW(PTLAB_IOC_MAGIC, 13, __u32)
#define PTLAB_IOC_BUF_FREE_ALL	_IO(PTLAB_IOC_MAGIC, 14)
#define PTLAB_IOC_PMI_ARM	_IOW(PTLAB_IOC_MAGIC, 15, struct ptlab_pmi_arm)
#define PTLAB_IOC_PMI_DISARM	_IOW(PTLAB_IOC_MAGIC, 16, __u32)
#define PTLAB_IOC_PMI_TASK	_IOW(PTLAB_IOC_MAGIC, 17, struct ptlab_pmi_task)
#define PTLAB_IOC_KSTATE	_IOR(PTLAB_IOC_MAGIC, 18, struct ptlab_kstate)
#define PTLAB_IOC_TASK_CR3	_IOWR(PTLAB_IOC_MAGIC, 19, struct ptlab_task_cr3)

#endif /* PTLAB_UAPI_H */
