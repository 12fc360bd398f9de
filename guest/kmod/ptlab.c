// SPDX-License-Identifier: GPL-2.0
/*
 * ptlab.c - the guest kernel end of ptlab (docs/design.md "Guest side"): a misc device /dev/ptlab.
 *
 * - RDMSR/WRMSR on a chosen CPU with the _safe variants: a #GP comes back as -EIO, never an oops.
 * - An MSR batch run in one IPI on the target CPU, stopping at the first fault.
 * - CPUID on a chosen CPU.
 * - Physically contiguous, naturally aligned buffers (alloc_pages, order <= PTLAB_MAX_ORDER)
 *   whose physical addresses the host uses for ToPA tables and output regions.
 * - XSAVES/XRSTORS of state component 8 (PT state) with IA32_XSS[8] set around the instruction.
 * - An NMI handler that claims the ToPA PMI (IA32_PERF_GLOBAL_STATUS bit 55: docs/sdm/output.md,
 *   SDM Vol. 3C "ToPA PMI") on the CPUs a file armed, optionally clears TraceEn, acknowledges it,
 *   records it in the CPU's event ring and, from irq_work, may stop the CPU's task (SIGSTOP)
 *   before it wakes the reader.
 *
 * Ownership: buffers, armed CPUs and the CPUs whose PT an open file programmed belong to that
 * file; other files get -EBUSY. The file's release, and a reboot, clear TraceEn on its CPUs and
 * read it back before any page is freed (docs/sdm/output.md §9); a CPU that does not confirm
 * leaves the file's pages allocated, as orphans, and stays taken.
 *
 * Policy, as arch/x86/kernel/msr.c does for /dev/cpu/N/msr: CAP_SYS_RAWIO to open, no MSR write
 * under lockdown (LOCKDOWN_MSR); and beyond it, WRMSR only to the PT and ToPA-PMI MSRs, and no
 * TraceEn=1 that would let PT reach memory outside the file's buffers (ptlab_reach_out).
 */
#include <linux/bitfield.h>
#include <linux/bitmap.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/irq_work.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/reboot.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <asm/apic.h>
#include <asm/asm.h>
#include <asm/fpu/types.h>
#include <asm/fpu/xstate.h>
#include <asm/mem_encrypt.h>
#include <asm/msr-index.h>
#include <asm/msr.h>
#include <asm/nmi.h>
#include <asm/perf_event.h>
#include <asm/processor.h>

#include "compat.h"
#include "ptlab_uapi.h"

#define PTLAB_EVENTS			64	/* per-CPU ring of PMI events (a power of two) */
#define PTLAB_ARMED			BIT(31)	/* in ptlab_cpu.arm, beside PTLAB_PMI_* */
/*
 * The fields of a ToPA entry (docs/sdm/output.md §4.2) and MASK_PTRS.MaskOrTableOffset (§4.1):
 * <asm/msr-index.h> has no names for them; the kernel describes the entry only in
 * arch/x86/events/intel/pt.h (struct topa_entry), which is not among the headers a module sees.
 */
#define PTLAB_TOPA_END			BIT_ULL(0)
#define PTLAB_TOPA_STOP			BIT_ULL(4)
#define PTLAB_TOPA_SIZE			GENMASK_ULL(9, 6)	/* the region is 4 KiB << Size */
#define PTLAB_TOPA_BASE			GENMASK_ULL(51, 12)
#define PTLAB_MASK_TABLE_OFFSET		GENMASK_ULL(31, 7)	/* the current entry's index */
/* The compacted area's first component follows the legacy region and the XSAVE header. */
#define PTLAB_XSAVE_EXT			(XSAVE_HDR_OFFSET + XSAVE_HDR_SIZE)

struct ptlab_file;

/**
 * struct ptlab_buffer - one allocated buffer
 * @page: its first page (2^@order pages, naturally aligned)
 * @order: the allocation order
 * @size: PAGE_SIZE << @order
 * @phys: page_to_phys(@page)
 * @owner: the file it belongs to; NULL for an orphan
 * @orphan: its place on ptlab_orphans (orphans only)
 * @id: its id in ptlab_buffers
 */
struct ptlab_buffer {
	struct page *page;
	unsigned int order;
	u64 size;
	u64 phys;
	struct ptlab_file *owner;
	struct list_head orphan;
	int id;
};

/**
 * struct ptlab_file - what one open file of /dev/ptlab holds
 * @buffers: how many buffers it holds
 * @bytes: their size
 */
struct ptlab_file {
	u32 buffers;
	u64 bytes;
};

/**
 * struct ptlab_cpu - one CPU's ownership and its PMI event ring
 * @owner: the file that programmed this CPU's PT (under ptlab_lock)
 * @armed_by: the file whose ToPA PMIs are claimed here (under ptlab_lock)
 * @taken: a release could not confirm TraceEn=0 here; never given out again
 * @arm: PTLAB_ARMED | PTLAB_PMI_*, read by the NMI handler
 * @task: the task the top half freezes (PTLAB_PMI_FREEZE), read by @work
 * @work: the top half's second step: the freeze and the reader's wake-up (IRQ context)
 * @head: events produced (slots are reserved atomically: an NMI may interrupt a synthetic event)
 * @published: events the reader may read, advanced by @work
 * @tail: events consumed by @armed_by (under ptlab_lock)
 * @seq: per slot, the event's seq + 1 once complete, 0 while it is written
 * @ring: the events
 */
struct ptlab_cpu {
	struct ptlab_file *owner;
	struct ptlab_file *armed_by;
	bool taken;
	u32 arm;
	struct pid *task;
	struct irq_work work;
	atomic64_t head;
	u64 published;
	u64 tail;
	u64 seq[PTLAB_EVENTS];
	struct ptlab_pmi_event ring[PTLAB_EVENTS];
};

static DEFINE_MUTEX(ptlab_lock);	/* files, buffers, ownership, the readers of the rings */
static DEFINE_IDR(ptlab_buffers);
static LIST_HEAD(ptlab_orphans);
static u64 ptlab_total;			/* bytes held by all buffers, orphans included */
static u32 ptlab_nfiles;
static struct ptlab_cpu **ptlab_cpus;	/* one per possible CPU */
static DECLARE_WAIT_QUEUE_HEAD(ptlab_wait);

static DEFINE_MUTEX(ptlab_xsave_lock);
static void *ptlab_xsave_area;		/* XSAVES writes here, and only here */
static void *ptlab_xrstors_area;	/* XRSTORS reads from here, and only from here */

static unsigned int allow_msr[16];
static int n_allow_msr;
module_param_array(allow_msr, uint, &n_allow_msr, 0444);
MODULE_PARM_DESC(allow_msr, "MSRs WRMSR may write besides the PT and ToPA-PMI ones (at most 16)");

/* The MSRs a file may write: the PT unit's, and the performance-monitoring MSRs of the ToPA PMI. */
static const u32 ptlab_wrmsr_allowed[] = {
	MSR_IA32_RTIT_CTL, MSR_IA32_RTIT_STATUS, MSR_IA32_RTIT_CR3_MATCH,
	MSR_IA32_RTIT_OUTPUT_BASE, MSR_IA32_RTIT_OUTPUT_MASK,
	MSR_IA32_RTIT_ADDR0_A, MSR_IA32_RTIT_ADDR0_B, MSR_IA32_RTIT_ADDR1_A, MSR_IA32_RTIT_ADDR1_B,
	MSR_IA32_RTIT_ADDR2_A, MSR_IA32_RTIT_ADDR2_B, MSR_IA32_RTIT_ADDR3_A, MSR_IA32_RTIT_ADDR3_B,
	MSR_CORE_PERF_GLOBAL_STATUS, MSR_CORE_PERF_GLOBAL_OVF_CTRL, MSR_CORE_PERF_GLOBAL_STATUS_SET,
};

/**
 * ptlab_cpu_ok - is @cpu a valid, online CPU?
 * @cpu: the CPU a request names
 * Return: 0, or -ENXIO.
 */
static int ptlab_cpu_ok(u32 cpu)
{
	if (cpu >= nr_cpu_ids || !cpu_online(cpu))
		return -ENXIO;
	return 0;
}

/**
 * ptlab_get_req - copy an ioctl's request in and check the CPU it names
 * @arg: user address of the request
 * @req: where to copy it
 * @size: its size
 * @cpu: the request's CPU field, inside @req
 * Return: 0, -EFAULT for a bad pointer, or ptlab_cpu_ok()'s error.
 */
static int ptlab_get_req(unsigned long arg, void *req, size_t size, const u32 *cpu)
{
	if (copy_from_user(req, (void __user *)arg, size))
		return -EFAULT;
	return ptlab_cpu_ok(*cpu);
}

/* ---- who may write what --------------------------------------------------------------------- */

/**
 * ptlab_msr_allowed - may a file write @msr?
 * @msr: the MSR
 * Return: 0, or -EPERM outside the allowlist and allow_msr=.
 */
static int ptlab_msr_allowed(u32 msr)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(ptlab_wrmsr_allowed); i++)
		if (ptlab_wrmsr_allowed[i] == msr)
			return 0;
	for (i = 0; i < n_allow_msr; i++)
		if (allow_msr[i] == msr)
			return 0;
	return -EPERM;
}

/**
 * ptlab_may_claim - may @f write the MSRs of @cpu? (under ptlab_lock)
 * @f: the file
 * @cpu: an online CPU
 *
 * Writes are refused under lockdown, as arch/x86/kernel/msr.c msr_write refuses them
 * (LOCKDOWN_MSR). Once a write is allowed, @cpu is @f's (ptlab_cpu.owner) before it runs.
 * Return: 0; -EPERM under lockdown; -EBUSY when another file holds the CPU or it is taken.
 */
static int ptlab_may_claim(struct ptlab_file *f, u32 cpu)
{
	struct ptlab_cpu *c = ptlab_cpus[cpu];
	int ret = security_locked_down(LOCKDOWN_MSR);

	if (ret)
		return ret;
	if (c->taken || (c->owner && c->owner != f) || (c->armed_by && c->armed_by != f))
		return -EBUSY;
	return 0;
}

/* ---- what PT would reach -------------------------------------------------------------------- */

/**
 * struct ptlab_out - the output MSRs a TraceEn 0->1 loads (docs/sdm/output.md §4.1)
 * @ctl: IA32_RTIT_CTL
 * @base: IA32_RTIT_OUTPUT_BASE
 * @mask: IA32_RTIT_OUTPUT_MASK_PTRS
 */
struct ptlab_out {
	u64 ctl;
	u64 base;
	u64 mask;
};

/**
 * struct ptlab_overlay - bytes a buffer write is about to put at @at (seen by the walk)
 * @at: their physical address
 * @len: how many
 * @data: the bytes
 */
struct ptlab_overlay {
	u64 at;
	u64 len;
	const u8 *data;
};

/**
 * struct ptlab_walk - one reach check
 * @f: the file whose buffers PT may reach
 * @ov: a pending buffer write, or NULL
 * @reached: the ids of the buffers PT reaches
 * @bad: out: the first address outside @f's buffers
 */
struct ptlab_walk {
	struct ptlab_file *f;
	const struct ptlab_overlay *ov;
	unsigned long *reached;
	u64 bad;
};

/**
 * ptlab_buf_at - @f's buffer holding all of [@phys, @phys + @len), if any (under ptlab_lock)
 * @f: the file
 * @phys: a physical address
 * @len: a length, at least 1
 * Return: the buffer, or NULL.
 */
static struct ptlab_buffer *ptlab_buf_at(struct ptlab_file *f, u64 phys, u64 len)
{
	struct ptlab_buffer *b;
	int id;

	idr_for_each_entry(&ptlab_buffers, b, id) {
		if (b->owner == f && phys >= b->phys && len <= b->size &&
		    phys - b->phys <= b->size - len)
			return b;
	}
	return NULL;
}

/**
 * ptlab_reach - PT may write [@phys, @phys + @len): it must lie in one buffer of the walk's file
 * @w: the walk
 * @phys: the first address
 * @len: the bytes
 * Return: the buffer, or NULL with @w->bad set.
 */
static struct ptlab_buffer *ptlab_reach(struct ptlab_walk *w, u64 phys, u64 len)
{
	struct ptlab_buffer *b = ptlab_buf_at(w->f, phys, len);

	if (!b) {
		w->bad = phys;
		return NULL;
	}
	if (w->reached)
		__set_bit(b->id, w->reached);
	return b;
}

/**
 * ptlab_entry - the ToPA entry at @phys inside @b, as memory will hold it after the pending write
 * @w: the walk (its overlay)
 * @b: the buffer holding the entry
 * @phys: the entry's address (8-byte aligned)
 * Return: the entry.
 */
static u64 ptlab_entry(const struct ptlab_walk *w, const struct ptlab_buffer *b, u64 phys)
{
	/* alloc_pages without __GFP_HIGHMEM: the block is in the direct map on x86-64. */
	const u8 *mem = page_address(b->page) + (phys - b->phys);
	const struct ptlab_overlay *ov = w->ov;
	u8 bytes[8];
	int i;

	for (i = 0; i < 8; i++) {
		u64 at = phys + i;

		if (ov && at >= ov->at && at - ov->at < ov->len)
			bytes[i] = ov->data[at - ov->at];
		else
			bytes[i] = mem[i];
	}
	return get_unaligned_le64(bytes);
}

/**
 * ptlab_topa_step - check the ToPA entry at *@pos and move *@pos to the next one PT would use
 * @w: the walk
 * @table: in/out: the base of the table *@pos lies in
 * @pos: in/out: the entry's physical address
 * @stop: out: true when the entry ends the walk (STOP)
 *
 * docs/sdm/output.md §4.3: an END entry links to entry 0 of the table at its Base; any other entry
 * names an output region of 4 KiB << Size at its Base, and STOP ends output once it is full. The
 * entry must lie inside the buffer holding its table; the region inside one buffer.
 * Return: 0, or -EINVAL with @w->bad set.
 */
static int ptlab_topa_step(struct ptlab_walk *w, u64 *table, u64 *pos, bool *stop)
{
	struct ptlab_buffer *tb = ptlab_buf_at(w->f, *table, 8);
	u64 e;

	if (!tb || !ptlab_reach(w, *pos, 8) || *pos + 8 > tb->phys + tb->size) {
		w->bad = *pos;
		return -EINVAL;
	}
	e = ptlab_entry(w, tb, *pos);
	*stop = false;
	if (e & PTLAB_TOPA_END) {
		*table = e & PTLAB_TOPA_BASE;
		*pos = *table;
		return 0;
	}
	if (!ptlab_reach(w, e & PTLAB_TOPA_BASE, (u64)SZ_4K << FIELD_GET(PTLAB_TOPA_SIZE, e)))
		return -EINVAL;
	*stop = e & PTLAB_TOPA_STOP;
	*pos += 8;
	return 0;
}

/**
 * ptlab_reach_out - walk everything PT would write from @out, which has TraceEn=1
 * @w: the walk
 * @out: the output MSRs
 *
 * Single range (docs/sdm/output.md §3.1): the region of OutputMask + 1 bytes at OutputBase &
 * ~OutputMask. ToPA: from the current entry (OUTPUT_BASE, MASK_PTRS[31:7] as the entry index)
 * through END links up to a STOP entry, or until the walk comes back to an entry it checked (a
 * ring: Brent's cycle detection, so no entry is remembered). Trace transport (FabricEn) writes no
 * memory.
 * Return: 0, or -EINVAL with @w->bad set.
 */
static int ptlab_reach_out(struct ptlab_walk *w, const struct ptlab_out *out)
{
	u64 table = out->base, pos, tortoise, power = 1, lam = 1, steps;
	bool stop;
	int ret;

	if (out->ctl & RTIT_CTL_FABRIC_EN)
		return 0;
	if (!(out->ctl & RTIT_CTL_TOPA)) {
		u64 mask = lower_32_bits(out->mask) | 0x7f;

		return ptlab_reach(w, out->base & ~mask, mask + 1) ? 0 : -EINVAL;
	}
	pos = table + (FIELD_GET(PTLAB_MASK_TABLE_OFFSET, out->mask) << 3);
	tortoise = pos;
	/* Each position is an entry of the file's buffers: there are no more steps than entries. */
	for (steps = 0; steps <= 2 * (PTLAB_MAX_TOTAL / 8); steps++) {
		ret = ptlab_topa_step(w, &table, &pos, &stop);
		if (ret || stop || pos == tortoise)
			return ret;
		if (power == lam) {
			tortoise = pos;
			power <<= 1;
			lam = 0;
		}
		lam++;
		if (!(steps & 0xfff))
			cond_resched();
	}
	w->bad = pos;
	return -EINVAL;
}

/**
 * ptlab_read_out_on_cpu - read the output MSRs on the chosen CPU
 * @info: the struct ptlab_out; an MSR that faults (no PT) reads as 0
 */
static void ptlab_read_out_on_cpu(void *info)
{
	struct ptlab_out *out = info;

	if (rdmsrq_safe(MSR_IA32_RTIT_CTL, &out->ctl))
		out->ctl = 0;
	if (rdmsrq_safe(MSR_IA32_RTIT_OUTPUT_BASE, &out->base))
		out->base = 0;
	if (rdmsrq_safe(MSR_IA32_RTIT_OUTPUT_MASK, &out->mask))
		out->mask = 0;
}

/**
 * ptlab_reach_denied - log, once in a while, where PT would have written
 * @cpu: the CPU
 * @bad: the address outside the file's buffers
 * @what: what was refused
 * Return: -EINVAL.
 */
static int ptlab_reach_denied(u32 cpu, u64 bad, const char *what)
{
	pr_warn_ratelimited("ptlab: CPU %u: %s refused: PT would reach 0x%llx\n", cpu, what, bad);
	return -EINVAL;
}

/**
 * ptlab_tracing_walk - walk every CPU of @f that traces now (under ptlab_lock)
 * @f: the file
 * @ov: a pending buffer write, or NULL
 * @reached: out, or NULL: the buffers those CPUs reach
 * @cpu: out: the CPU whose walk failed
 * @bad: out: where it failed
 * Return: 0, or -EINVAL.
 */
static int ptlab_tracing_walk(struct ptlab_file *f, const struct ptlab_overlay *ov,
			      unsigned long *reached, u32 *cpu, u64 *bad)
{
	struct ptlab_walk w = { .f = f, .ov = ov, .reached = reached };
	unsigned int c;

	for_each_online_cpu(c) {
		struct ptlab_out out = { 0 };

		if (ptlab_cpus[c]->owner != f)
			continue;
		if (smp_call_function_single(c, ptlab_read_out_on_cpu, &out, 1) ||
		    !(out.ctl & RTIT_CTL_TRACEEN))
			continue;
		if (ptlab_reach_out(&w, &out)) {
			*cpu = c;
			*bad = w.bad;
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- MSRs and CPUID ------------------------------------------------------------------------- */

/**
 * struct ptlab_batch_ctx - a batch being run on its CPU
 * @ops: the ops
 * @count: how many
 * @done: out: how many ran
 */
struct ptlab_batch_ctx {
	struct ptlab_msr_op *ops;
	u32 count;
	u32 done;
};

/**
 * ptlab_batch_on_cpu - run the ops of a batch in order, stopping after the first fault
 * @info: the struct ptlab_batch_ctx; runs in IPI context on the chosen CPU (IRQs off)
 */
static void ptlab_batch_on_cpu(void *info)
{
	struct ptlab_batch_ctx *ctx = info;
	u32 i;

	for (i = 0; i < ctx->count; i++) {
		struct ptlab_msr_op *op = &ctx->ops[i];

		if (op->write)
			op->err = wrmsrq_safe(op->msr, op->value);
		else
			op->err = rdmsrq_safe(op->msr, &op->value);
		ctx->done = i + 1;
		if (op->err)
			break;
	}
}

/**
 * ptlab_batch_allowed - the policy over a whole batch, before any of it runs (under ptlab_lock)
 * @f: the file
 * @cpu: the batch's CPU
 * @ops: the ops
 * @count: how many
 *
 * Every write must be allowed (ptlab_msr_allowed) and the CPU claimable; the CPU is then @f's.
 * Each write of CTL with
 * TraceEn=1 is checked against the output MSRs as the batch leaves them at that point: the
 * CPU's own values, changed by the batch's earlier writes of OUTPUT_BASE and MASK_PTRS.
 * Return: 0, -EPERM, -EBUSY, or -EINVAL (PT would reach outside the file's buffers).
 */
static int ptlab_batch_allowed(struct ptlab_file *f, u32 cpu, const struct ptlab_msr_op *ops,
			       u32 count)
{
	struct ptlab_walk w = { .f = f };
	struct ptlab_out out = { 0 };
	bool writes = false, read = false;
	u32 i;
	int ret;

	for (i = 0; i < count; i++) {
		if (!ops[i].write)
			continue;
		ret = ptlab_msr_allowed(ops[i].msr);
		if (ret)
			return ret;
		writes = true;
	}
	if (!writes)
		return 0;
	ret = ptlab_may_claim(f, cpu);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		if (!ops[i].write)
			continue;
		if (!read) {
			ret = smp_call_function_single(cpu, ptlab_read_out_on_cpu, &out, 1);
			if (ret)
				return ret;
			read = true;
		}
		switch (ops[i].msr) {
		case MSR_IA32_RTIT_OUTPUT_BASE:
			out.base = ops[i].value;
			break;
		case MSR_IA32_RTIT_OUTPUT_MASK:
			out.mask = ops[i].value;
			break;
		case MSR_IA32_RTIT_CTL:
			out.ctl = ops[i].value;
			if ((out.ctl & RTIT_CTL_TRACEEN) && ptlab_reach_out(&w, &out))
				return ptlab_reach_denied(cpu, w.bad, "TraceEn=1");
			break;
		}
	}
	ptlab_cpus[cpu]->owner = f;
	return 0;
}

/**
 * ptlab_run_batch - check a batch against the policy, then run it in one IPI
 * @f: the file
 * @cpu: an online CPU
 * @ops: the ops (err set for those that ran)
 * @count: how many
 * @done: out: how many ran
 * Return: 0 (faults are reported per op), or the policy's error with nothing run.
 */
static int ptlab_run_batch(struct ptlab_file *f, u32 cpu, struct ptlab_msr_op *ops, u32 count,
			   u32 *done)
{
	struct ptlab_batch_ctx ctx = { .ops = ops, .count = count };
	int ret;

	mutex_lock(&ptlab_lock);
	ret = ptlab_batch_allowed(f, cpu, ops, count);
	if (!ret && count)
		ret = smp_call_function_single(cpu, ptlab_batch_on_cpu, &ctx, 1);
	mutex_unlock(&ptlab_lock);
	*done = ctx.done;
	return ret;
}

/**
 * ptlab_msr_batch - PTLAB_IOC_MSR_BATCH: validate, copy the ops in, run them in one IPI
 * @f: the file
 * @arg: user address of a struct ptlab_msr_batch
 * Return: 0 (faults are reported per op), or a negative errno for bad input or the policy.
 */
static long ptlab_msr_batch(struct ptlab_file *f, unsigned long arg)
{
	struct ptlab_msr_batch req;
	struct ptlab_msr_op *ops = NULL;
	void __user *uops;
	long ret;
	u32 i;

	ret = ptlab_get_req(arg, &req, sizeof(req), &req.cpu);
	if (ret)
		return ret;
	if (req.count > PTLAB_MAX_BATCH)
		return -EINVAL;
	uops = u64_to_user_ptr(req.ops);
	if (req.count) {
		ops = memdup_user(uops, req.count * sizeof(*ops));
		if (IS_ERR(ops))
			return PTR_ERR(ops);
	}
	for (i = 0; i < req.count; i++) {
		if (ops[i].write > 1) {
			kfree(ops);
			return -EINVAL;
		}
		ops[i].err = 0;
	}
	ret = ptlab_run_batch(f, req.cpu, ops, req.count, &req.done);
	if (!ret && req.count && copy_to_user(uops, ops, req.count * sizeof(*ops)))
		ret = -EFAULT;
	if (!ret && copy_to_user((void __user *)arg, &req, sizeof(req)))
		ret = -EFAULT;
	kfree(ops);
	return ret;
}

/**
 * ptlab_msr - PTLAB_IOC_RDMSR / PTLAB_IOC_WRMSR (a WRMSR is a batch of one)
 * @f: the file
 * @arg: user address of a struct ptlab_msr
 * @write: WRMSR
 * Return: 0, -EIO on #GP, -ENXIO for an offline CPU, -EFAULT, or the policy's error.
 */
static long ptlab_msr(struct ptlab_file *f, unsigned long arg, bool write)
{
	struct ptlab_msr req;
	struct ptlab_msr_op op = { 0 };
	long ret;
	u32 done;

	ret = ptlab_get_req(arg, &req, sizeof(req), &req.cpu);
	if (ret)
		return ret;
	if (write) {
		op.msr = req.msr;
		op.write = 1;
		op.value = req.value;
		ret = ptlab_run_batch(f, req.cpu, &op, 1, &done);
		return ret ? ret : op.err;
	}
	ret = rdmsrq_safe_on_cpu(req.cpu, req.msr, &req.value);
	if (!ret && copy_to_user((void __user *)arg, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

/**
 * ptlab_cpuid_on_cpu - CPUID on the chosen CPU
 * @info: the struct ptlab_cpuid
 */
static void ptlab_cpuid_on_cpu(void *info)
{
	struct ptlab_cpuid *c = info;

	cpuid_count(c->leaf, c->subleaf, &c->eax, &c->ebx, &c->ecx, &c->edx);
}

/**
 * ptlab_cpuid - PTLAB_IOC_CPUID
 * @arg: user address of a struct ptlab_cpuid
 * Return: 0, -ENXIO, -EFAULT.
 */
static long ptlab_cpuid(unsigned long arg)
{
	struct ptlab_cpuid req;
	long ret;

	ret = ptlab_get_req(arg, &req, sizeof(req), &req.cpu);
	if (ret)
		return ret;
	ret = smp_call_function_single(req.cpu, ptlab_cpuid_on_cpu, &req, 1);
	if (!ret && copy_to_user((void __user *)arg, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

/* ---- stopping PT ---------------------------------------------------------------------------- */

/**
 * ptlab_stop_on_cpu - clear TraceEn on the chosen CPU and read it back
 * @info: an int, out: 0 when TraceEn reads 0 (or the CPU has no IA32_RTIT_CTL), else -EBUSY
 */
static void ptlab_stop_on_cpu(void *info)
{
	int *ret = info;
	u64 ctl;

	*ret = 0;
	if (rdmsrq_safe(MSR_IA32_RTIT_CTL, &ctl) || !(ctl & RTIT_CTL_TRACEEN))
		return;
	if (wrmsrq_safe(MSR_IA32_RTIT_CTL, ctl & ~RTIT_CTL_TRACEEN) ||
	    rdmsrq_safe(MSR_IA32_RTIT_CTL, &ctl) || (ctl & RTIT_CTL_TRACEEN))
		*ret = -EBUSY;
}

/**
 * ptlab_stop_pt - TraceEn=0 written and read back on @cpu (docs/sdm/output.md §9), as
 * arch/x86/events/intel/pt.c stops tracing (pt_event_stop) before it frees the AUX buffer
 * @cpu: the CPU
 * Return: 0 when confirmed; -EBUSY when TraceEn still reads 1; -ENXIO for an offline CPU.
 */
static int ptlab_stop_pt(unsigned int cpu)
{
	int ret, stopped = -EBUSY;

	ret = smp_call_function_single(cpu, ptlab_stop_on_cpu, &stopped, 1);
	return ret ? ret : stopped;
}

/* ---- buffers -------------------------------------------------------------------------------- */

/**
 * ptlab_buf_alloc - PTLAB_IOC_BUF_ALLOC: a zeroed, naturally aligned block of 2^order pages
 * @f: the file that will own it
 * @arg: user address of a struct ptlab_buf
 *
 * The buddy allocator returns blocks aligned to their size, which is what ToPA output regions
 * and tables need (SDM Vol. 3C "Table of Physical Addresses (ToPA)": a region of size 2^n is
 * 2^n-aligned). The size must be a power of two from PAGE_SIZE to PAGE_SIZE << PTLAB_MAX_ORDER.
 * Return: 0, -EINVAL, -ENOSPC (limits), -ENOMEM.
 */
static long ptlab_buf_alloc(struct ptlab_file *f, unsigned long arg)
{
	struct ptlab_buf req;
	struct ptlab_buffer *b;
	int id;

	if (copy_from_user(&req, (void __user *)arg, sizeof(req)))
		return -EFAULT;
	if (req.size < PAGE_SIZE || req.size > (PAGE_SIZE << PTLAB_MAX_ORDER) ||
	    !is_power_of_2(req.size))
		return -EINVAL;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->size = req.size;
	b->order = get_order(req.size);
	b->owner = f;
	mutex_lock(&ptlab_lock);
	if (ptlab_total + req.size > PTLAB_MAX_TOTAL) {
		id = -ENOSPC;
		goto fail;
	}
	b->page = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN, b->order);
	if (!b->page) {
		id = -ENOMEM;
		goto fail;
	}
	b->phys = page_to_phys(b->page);
	id = idr_alloc(&ptlab_buffers, b, 1, PTLAB_MAX_BUFFERS + 1, GFP_KERNEL);
	if (id < 0) {	/* -ENOSPC: PTLAB_MAX_BUFFERS reached */
		__free_pages(b->page, b->order);
		goto fail;
	}
	b->id = id;
	ptlab_total += b->size;
	f->buffers++;
	f->bytes += b->size;
	mutex_unlock(&ptlab_lock);
	req.id = id;
	req.phys = b->phys;
	if (copy_to_user((void __user *)arg, &req, sizeof(req)))
		return -EFAULT;	/* the buffer stays; free-all or the release reclaims it */
	return 0;
fail:
	mutex_unlock(&ptlab_lock);
	kfree(b);
	return id;
}

/**
 * ptlab_buf_release - give a buffer's pages back (under ptlab_lock; nothing may trace into it)
 * @b: the buffer, already out of ptlab_buffers
 */
static void ptlab_buf_release(struct ptlab_buffer *b)
{
	ptlab_total -= b->size;
	if (b->owner) {
		b->owner->buffers--;
		b->owner->bytes -= b->size;
	}
	__free_pages(b->page, b->order);
	kfree(b);
}

/**
 * ptlab_buf_get - buffer @id of @f (under ptlab_lock)
 * @f: the file
 * @id: the id
 * @b: out: the buffer
 * Return: 0, -ENOENT (no such buffer), -EBUSY (another file's, or an orphan).
 */
static int ptlab_buf_get(struct ptlab_file *f, u32 id, struct ptlab_buffer **b)
{
	*b = id > INT_MAX ? NULL : idr_find(&ptlab_buffers, id);
	if (!*b)
		return -ENOENT;
	return (*b)->owner == f ? 0 : -EBUSY;
}

/**
 * ptlab_buf_free - PTLAB_IOC_BUF_FREE; refused while a tracing CPU of the file reaches the buffer
 * @f: the file
 * @arg: user address of a struct ptlab_buf
 * Return: 0, -ENOENT, -EBUSY.
 */
static long ptlab_buf_free(struct ptlab_file *f, unsigned long arg)
{
	DECLARE_BITMAP(reached, PTLAB_MAX_BUFFERS + 1) = { 0 };
	struct ptlab_buf req;
	struct ptlab_buffer *b;
	u64 bad;
	u32 cpu;
	int ret;

	if (copy_from_user(&req, (void __user *)arg, sizeof(req)))
		return -EFAULT;
	mutex_lock(&ptlab_lock);
	ret = ptlab_buf_get(f, req.id, &b);
	if (!ret && (ptlab_tracing_walk(f, NULL, reached, &cpu, &bad) || test_bit(b->id, reached)))
		ret = -EBUSY;	/* a failed walk may reach any buffer: keep them all */
	if (!ret) {
		idr_remove(&ptlab_buffers, b->id);
		ptlab_buf_release(b);
	}
	mutex_unlock(&ptlab_lock);
	return ret;
}

/**
 * ptlab_buf_free_all - PTLAB_IOC_BUF_FREE_ALL: every buffer of @f, or none while a tracing CPU
 * of @f reaches any of them
 * @f: the file
 * Return: 0, -EBUSY.
 */
static long ptlab_buf_free_all(struct ptlab_file *f)
{
	DECLARE_BITMAP(reached, PTLAB_MAX_BUFFERS + 1) = { 0 };
	struct ptlab_buffer *b;
	u64 bad;
	u32 cpu;
	int id, ret;

	mutex_lock(&ptlab_lock);
	ret = ptlab_tracing_walk(f, NULL, reached, &cpu, &bad);
	if (ret || !bitmap_empty(reached, PTLAB_MAX_BUFFERS + 1)) {
		mutex_unlock(&ptlab_lock);
		return -EBUSY;
	}
	idr_for_each_entry(&ptlab_buffers, b, id) {
		if (b->owner != f)
			continue;
		idr_remove(&ptlab_buffers, id);
		ptlab_buf_release(b);
	}
	mutex_unlock(&ptlab_lock);
	return 0;
}

/**
 * ptlab_buf_io - PTLAB_IOC_BUF_READ / PTLAB_IOC_BUF_WRITE: copy between a buffer and user memory
 * @f: the file
 * @arg: user address of a struct ptlab_buf_io
 * @write: into the buffer
 *
 * A write goes through a copy first: while a CPU of the file traces, the write must not make PT
 * reach outside the file's buffers (a ToPA table edited under a live CPU).
 * Return: 0, -ENOENT, -EBUSY (another file's buffer), -EINVAL (range outside the buffer, or the
 * reach check), -EFAULT, -ENOMEM.
 */
static long ptlab_buf_io(struct ptlab_file *f, unsigned long arg, bool write)
{
	struct ptlab_buf_io req;
	struct ptlab_overlay ov;
	struct ptlab_buffer *b;
	void *data = NULL;
	u64 bad;
	u32 cpu;
	long ret;

	if (copy_from_user(&req, (void __user *)arg, sizeof(req)))
		return -EFAULT;
	if (req.len > (PAGE_SIZE << PTLAB_MAX_ORDER))
		return -EINVAL;
	if (write && req.len) {
		data = vmemdup_user(u64_to_user_ptr(req.data), req.len);
		if (IS_ERR(data))
			return PTR_ERR(data);
	}
	mutex_lock(&ptlab_lock);
	ret = ptlab_buf_get(f, req.id, &b);
	if (ret)
		goto out;
	if (req.offset > b->size || req.len > b->size - req.offset) {
		ret = -EINVAL;
		goto out;
	}
	if (write && data) {
		ov = (struct ptlab_overlay){ .at = b->phys + req.offset, .len = req.len,
					     .data = data };
		if (ptlab_tracing_walk(f, &ov, NULL, &cpu, &bad)) {
			ret = ptlab_reach_denied(cpu, bad, "a buffer write");
			goto out;
		}
		memcpy(page_address(b->page) + req.offset, data, req.len);
	} else if (!write && copy_to_user(u64_to_user_ptr(req.data),
					  page_address(b->page) + req.offset, req.len)) {
		ret = -EFAULT;
	}
out:
	mutex_unlock(&ptlab_lock);
	kvfree(data);
	return ret;
}

/* ---- XSAVES / XRSTORS of PT state ----------------------------------------------------------- */

/**
 * struct ptlab_xsave_ctx - one XSAVES or XRSTORS on its CPU
 * @area: 64-byte aligned
 * @rfbm: the requested-feature bitmap
 * @restore: XRSTORS
 * @err: 0, -EIO (#GP), -EOPNOTSUPP
 */
struct ptlab_xsave_ctx {
	void *area;
	u64 rfbm;
	bool restore;
	int err;
};

/**
 * ptlab_xsave_supported - CPUID.(EAX=0DH,ECX=1):EAX[3] (XSAVES/XRSTORS) and ECX[8] (PT state
 * is a supervisor component of IA32_XSS): SDM Vol. 1 "Enumeration of CPU Support for XSAVE
 * Instructions and XSAVE-Supported Features".
 * Return: whether both are set.
 */
static bool ptlab_xsave_supported(void)
{
	u32 eax, ebx, ecx, edx;

	if (boot_cpu_data.cpuid_level < 0xd)
		return false;
	cpuid_count(0xd, 1, &eax, &ebx, &ecx, &edx);
	return (eax & BIT(3)) && (ecx & BIT(PTLAB_XSTATE_PT));
}

/**
 * ptlab_xsave_on_cpu - set IA32_XSS[8], XSAVES or XRSTORS, restore IA32_XSS
 * @info: struct ptlab_xsave_ctx; runs with IRQs off, so the kernel's own XSAVES never sees the
 * extra bit. A fault of the instruction is caught through the exception table (never an oops).
 */
static void ptlab_xsave_on_cpu(void *info)
{
	struct ptlab_xsave_ctx *c = info;
	u32 lo = (u32)c->rfbm, hi = (u32)(c->rfbm >> 32);
	u64 xss;
	int trap = 0;

	if (rdmsrq_safe(MSR_IA32_XSS, &xss) ||
	    wrmsrq_safe(MSR_IA32_XSS, xss | BIT_ULL(PTLAB_XSTATE_PT))) {
		c->err = -EOPNOTSUPP;
		return;
	}
	/* EX_TYPE_FAULT puts the trap number into EAX and resumes at 2: */
	if (c->restore)
		asm volatile("1: xrstors64 (%[area])\n\t"
			     "xor %%eax, %%eax\n"
			     "2:\n\t"
			     _ASM_EXTABLE_TYPE(1b, 2b, EX_TYPE_FAULT)
			     : "=a" (trap)
			     : [area] "D" (c->area), "a" (lo), "d" (hi)
			     : "memory");
	else
		asm volatile("1: xsaves64 (%[area])\n\t"
			     "xor %%eax, %%eax\n"
			     "2:\n\t"
			     _ASM_EXTABLE_TYPE(1b, 2b, EX_TYPE_FAULT)
			     : "=a" (trap)
			     : [area] "D" (c->area), "a" (lo), "d" (hi)
			     : "memory");
	wrmsrq_safe(MSR_IA32_XSS, xss);
	c->err = trap ? -EIO : 0;
}

/**
 * ptlab_image_allowed - the reach check of an XRSTORS image whose PT state has TraceEn=1
 * @f: the file
 * @cpu: the CPU it is restored on
 * @area: the image
 * @len: its length
 *
 * The compacted form (XCOMP_BV[63]) holds component 8 at byte 576 when no component from 2 to 7
 * comes before it (docs/sdm/xsave.md §1.1); the standard form makes XRSTORS #GP. An image whose
 * layout cannot be told is refused.
 * Return: 0, or -EINVAL.
 */
static int ptlab_image_allowed(struct ptlab_file *f, u32 cpu, const u8 *area, u32 len)
{
	struct ptlab_walk w = { .f = f };
	struct ptlab_out out;
	u64 xstate_bv, xcomp_bv;

	if (len < XSAVE_HDR_OFFSET + 16)
		return 0;	/* no header: XRSTORS faults */
	xstate_bv = get_unaligned_le64(area + XSAVE_HDR_OFFSET);
	xcomp_bv = get_unaligned_le64(area + XSAVE_HDR_OFFSET + 8);
	if (!(xstate_bv & BIT_ULL(PTLAB_XSTATE_PT)) || !(xcomp_bv & XCOMP_BV_COMPACTED_FORMAT))
		return 0;	/* the initial configuration (TraceEn=0), or a #GP */
	if ((xcomp_bv & GENMASK_ULL(PTLAB_XSTATE_PT - 1, 2)) || len < PTLAB_XSAVE_EXT + 24)
		return -EINVAL;
	out.ctl = get_unaligned_le64(area + PTLAB_XSAVE_EXT);
	out.base = get_unaligned_le64(area + PTLAB_XSAVE_EXT + 8);
	out.mask = get_unaligned_le64(area + PTLAB_XSAVE_EXT + 16);
	if ((out.ctl & RTIT_CTL_TRACEEN) && ptlab_reach_out(&w, &out))
		return ptlab_reach_denied(cpu, w.bad, "an XRSTORS image with TraceEn=1");
	return 0;
}

/**
 * ptlab_xsave - PTLAB_IOC_XSAVES / PTLAB_IOC_XRSTORS
 * @f: the file
 * @arg: user address of a struct ptlab_xsave
 * @restore: XRSTORS
 *
 * Only RFBM = bit 8 is accepted: user state components would clobber the registers of the task
 * the IPI interrupts. The compacted area is the 512-byte legacy region, the 64-byte header and
 * component 8 (CPUID.(EAX=0DH,ECX=8):EAX bytes). XSAVES always writes ptlab_xsave_area and
 * XRSTORS always reads ptlab_xrstors_area, two areas kept for the module's life: the XSAVES
 * modified optimization applies only to an XSAVES at the address of the last XRSTORS
 * (docs/sdm/xsave.md §2.1), so no XSAVES of ptlab's can skip component 8.
 * Return: 0, -EOPNOTSUPP (CPUID lacks it), -EINVAL, -ENXIO, -EIO (#GP), -EFAULT, -EPERM, -EBUSY.
 */
static long ptlab_xsave(struct ptlab_file *f, unsigned long arg, bool restore)
{
	struct ptlab_xsave req;
	struct ptlab_xsave_ctx c = { .restore = restore };
	u32 eax, ebx, ecx, edx, len;
	long ret;

	ret = ptlab_get_req(arg, &req, sizeof(req), &req.cpu);
	if (ret)
		return ret;
	if (req.rfbm != BIT_ULL(PTLAB_XSTATE_PT) || (restore && req.len > PTLAB_XSAVE_MAX))
		return -EINVAL;
	mutex_lock(&ptlab_xsave_lock);
	c.area = restore ? ptlab_xrstors_area : ptlab_xsave_area;
	c.rfbm = req.rfbm;
	memset(c.area, 0, PTLAB_XSAVE_MAX);
	if (restore && copy_from_user(c.area, u64_to_user_ptr(req.area), req.len)) {
		ret = -EFAULT;
		goto out;
	}
	mutex_lock(&ptlab_lock);
	ret = ptlab_may_claim(f, req.cpu);
	if (!ret && restore)
		ret = ptlab_image_allowed(f, req.cpu, c.area, req.len);
	if (ret)
		goto unlock;
	ret = -EOPNOTSUPP;
	if (!ptlab_xsave_supported())
		goto unlock;
	cpuid_count(0xd, PTLAB_XSTATE_PT, &eax, &ebx, &ecx, &edx);
	len = PTLAB_XSAVE_EXT + eax;
	if (len > PTLAB_XSAVE_MAX)
		goto unlock;
	ret = -EINVAL;
	if (restore && req.len != len)
		goto unlock;
	/* XSAVES clears TraceEn, XRSTORS may set it: both program the CPU's PT. */
	ptlab_cpus[req.cpu]->owner = f;
	ret = smp_call_function_single(req.cpu, ptlab_xsave_on_cpu, &c, 1);
	if (!ret)
		ret = c.err;
unlock:
	mutex_unlock(&ptlab_lock);
	if (!ret && !restore) {
		req.len = len;
		if (copy_to_user(u64_to_user_ptr(req.area), c.area, len) ||
		    copy_to_user((void __user *)arg, &req, sizeof(req)))
			ret = -EFAULT;
	}
out:
	mutex_unlock(&ptlab_xsave_lock);
	return ret;
}

/* ---- the ToPA PMI --------------------------------------------------------------------------- */

/**
 * ptlab_publish - the top half's second step, in IRQ context on the PMI's CPU: freeze the CPU's
 * task when asked (SIGSTOP, before anything can wake the host), then let the reader see the
 * events and wake it (wake_up cannot be called from NMI context)
 * @w: the CPU's irq_work
 */
static void ptlab_publish(struct irq_work *w)
{
	struct ptlab_cpu *c = container_of(w, struct ptlab_cpu, work);
	u64 head = atomic64_read(&c->head), s;
	struct pid *task;

	if (head == c->published)
		return;
	task = READ_ONCE(c->task);
	if ((READ_ONCE(c->arm) & PTLAB_PMI_FREEZE) && task && !kill_pid(task, SIGSTOP, 1)) {
		/* Not the oldest slot: an NMI now would write it for event head. */
		s = c->published;
		if (head - s > PTLAB_EVENTS - 1)
			s = head - (PTLAB_EVENTS - 1);
		for (; s < head; s++)
			c->ring[s & (PTLAB_EVENTS - 1)].flags |= PTLAB_EV_FROZEN;
	}
	smp_wmb();	/* the flags before the events become readable */
	WRITE_ONCE(c->published, head);
	wake_up_interruptible(&ptlab_wait);
}

/**
 * ptlab_record - add an event to the ring of the current CPU (NMI safe) and queue the publish
 * @c: the current CPU's struct ptlab_cpu
 * @flags: PTLAB_EV_*
 * @gs: IA32_PERF_GLOBAL_STATUS
 * @ctl: IA32_RTIT_CTL
 * @status: IA32_RTIT_STATUS
 *
 * The slot's seq is zeroed before it is written and set after: a reader that copied it while it
 * was rewritten sees the change and drops the copy (ptlab_read).
 */
static void ptlab_record(struct ptlab_cpu *c, u32 flags, u64 gs, u64 ctl, u64 status)
{
	u64 seq = atomic64_inc_return(&c->head) - 1;
	unsigned int slot = seq & (PTLAB_EVENTS - 1);
	struct ptlab_pmi_event *e = &c->ring[slot];

	WRITE_ONCE(c->seq[slot], 0);
	smp_wmb();	/* the slot reads as being written before any of it changes */
	e->cpu = smp_processor_id();
	e->flags = flags;
	e->seq = seq;
	e->global_status = gs;
	e->ctl = ctl;
	e->status = status;
	e->tsc = rdtsc();
	smp_wmb();	/* all of the event before its seq says it is complete */
	WRITE_ONCE(c->seq[slot], seq + 1);
	irq_work_queue(&c->work);
}

/**
 * ptlab_nmi - claim a ToPA PMI on an armed CPU: IA32_PERF_GLOBAL_STATUS bit 55 (docs/sdm/output.md
 * §4.5). Reads IA32_RTIT_CTL and IA32_RTIT_STATUS before changing anything, optionally clears
 * TraceEn, then clears bit 55 through IA32_PERF_GLOBAL_STATUS_RESET.
 * @cmd: NMI_LOCAL
 * @regs: the interrupted context
 *
 * Registered NMI_FLAG_FIRST (arch/x86/kernel/nmi.c puts it at the head of the NMI_LOCAL chain):
 * perf's handler (arch/x86/events/core.c perf_event_nmi_handler, registered without the flag)
 * reaches handle_pmi_common in arch/x86/events/intel/core.c, which clears bit 55 from the
 * status it acknowledges and hands the PMI to intel_pt_interrupt, so after it ptlab would never
 * see a ToPA PMI. On a CPU no file armed it returns NMI_DONE at once, so perf keeps its PMIs.
 * Return: NMI_HANDLED, or NMI_DONE when the NMI is not ptlab's.
 */
static int ptlab_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct ptlab_cpu *c = ptlab_cpus[smp_processor_id()];
	u32 arm = READ_ONCE(c->arm), flags = PTLAB_EV_ACKED;
	u64 gs, ctl = 0, status = 0;

	if (!(arm & PTLAB_ARMED))
		return NMI_DONE;
	if (rdmsrq_safe(MSR_CORE_PERF_GLOBAL_STATUS, &gs) || !(gs & GLOBAL_STATUS_TRACE_TOPAPMI))
		return NMI_DONE;
	if (rdmsrq_safe(MSR_IA32_RTIT_CTL, &ctl))
		ctl = 0;
	if (rdmsrq_safe(MSR_IA32_RTIT_STATUS, &status))
		status = 0;
	if ((arm & PTLAB_PMI_CLEAR_TRACEEN) && (ctl & RTIT_CTL_TRACEEN) &&
	    !wrmsrq_safe(MSR_IA32_RTIT_CTL, ctl & ~RTIT_CTL_TRACEEN))
		flags |= PTLAB_EV_TRACEEN_CLEARED;
	if (wrmsrq_safe(MSR_CORE_PERF_GLOBAL_OVF_CTRL,
			MSR_CORE_PERF_GLOBAL_OVF_CTRL_TRACE_TOPA_PMI))
		flags &= ~PTLAB_EV_ACKED;
	ptlab_record(c, flags, gs, ctl, status);
	return NMI_HANDLED;
}

/**
 * ptlab_armed_cpu - the CPU a PMI ioctl names, which @f must have armed (under ptlab_lock)
 * @f: the file
 * @cpu: an online CPU
 * Return: 0, -EBUSY (another file armed it), -EINVAL (nobody did).
 */
static int ptlab_armed_cpu(struct ptlab_file *f, u32 cpu)
{
	struct ptlab_file *by = ptlab_cpus[cpu]->armed_by;

	return by == f ? 0 : by ? -EBUSY : -EINVAL;
}

/**
 * ptlab_traceen_on_cpu - read IA32_RTIT_CTL.TraceEn on the chosen CPU
 * @info: a bool, out: TraceEn (false when the MSR faults: no PT)
 */
static void ptlab_traceen_on_cpu(void *info)
{
	bool *on = info;
	u64 ctl;

	*on = !rdmsrq_safe(MSR_IA32_RTIT_CTL, &ctl) && (ctl & RTIT_CTL_TRACEEN);
}

/**
 * ptlab_pmi_arm - PTLAB_IOC_PMI_ARM: claim ToPA PMIs on a CPU for @f
 * @f: the file
 * @arg: user address of a struct ptlab_pmi_arm
 *
 * A CPU whose TraceEn is already 1 for someone else (perf's intel_pt, another tool) is never
 * armed: its PMIs are that tracer's. Arming again changes only the flags.
 * Return: 0, -EINVAL, -EBUSY, -ENXIO, -EFAULT.
 */
static long ptlab_pmi_arm(struct ptlab_file *f, unsigned long arg)
{
	struct ptlab_pmi_arm req;
	struct ptlab_cpu *c;
	bool on = false;
	long ret;

	ret = ptlab_get_req(arg, &req, sizeof(req), &req.cpu);
	if (ret)
		return ret;
	if (req.flags & ~(PTLAB_PMI_CLEAR_TRACEEN | PTLAB_PMI_FREEZE))
		return -EINVAL;
	c = ptlab_cpus[req.cpu];
	mutex_lock(&ptlab_lock);
	ret = -EBUSY;
	if (c->taken || (c->armed_by && c->armed_by != f) || (c->owner && c->owner != f))
		goto out;
	if (!c->armed_by) {
		ret = smp_call_function_single(req.cpu, ptlab_traceen_on_cpu, &on, 1);
		if (ret || on)
			goto out;
		c->tail = READ_ONCE(c->published);
		c->armed_by = f;
	}
	WRITE_ONCE(c->arm, PTLAB_ARMED | req.flags);
	ret = 0;
out:
	mutex_unlock(&ptlab_lock);
	return ret;
}

/**
 * ptlab_set_task - make @task the task @c's top half freezes, and let the one it replaces run
 * @c: the CPU (under ptlab_lock)
 * @task: a reference to give @c, or NULL
 *
 * Once the pointer is replaced, irq_work_sync waits out a publish that may still use the old one.
 */
static void ptlab_set_task(struct ptlab_cpu *c, struct pid *task)
{
	struct pid *old = c->task;

	WRITE_ONCE(c->task, task);
	smp_mb();	/* the pointer before the work's state */
	irq_work_sync(&c->work);
	if (old) {
		kill_pid(old, SIGCONT, 1);
		put_pid(old);
	}
}

/**
 * ptlab_disarm - stop claiming PMIs on @cpu; its frozen task runs again (under ptlab_lock)
 * @cpu: the CPU
 */
static void ptlab_disarm(unsigned int cpu)
{
	struct ptlab_cpu *c = ptlab_cpus[cpu];

	WRITE_ONCE(c->arm, 0);
	smp_mb();	/* a publish that starts from now on sees no PTLAB_PMI_FREEZE */
	irq_work_sync(&c->work);
	ptlab_set_task(c, NULL);
	c->armed_by = NULL;
}

/**
 * ptlab_pmi_disarm - PTLAB_IOC_PMI_DISARM
 * @f: the file
 * @arg: user address of the CPU number
 * Return: 0, -EINVAL (not armed), -EBUSY (another file's), -ENXIO, -EFAULT.
 */
static long ptlab_pmi_disarm(struct ptlab_file *f, unsigned long arg)
{
	u32 cpu;
	long ret;

	ret = ptlab_get_req(arg, &cpu, sizeof(cpu), &cpu);
	if (ret)
		return ret;
	mutex_lock(&ptlab_lock);
	ret = ptlab_armed_cpu(f, cpu);
	if (!ret)
		ptlab_disarm(cpu);
	mutex_unlock(&ptlab_lock);
	return ret;
}

/**
 * ptlab_pmi_task - PTLAB_IOC_PMI_TASK: the task the top half of an armed CPU freezes
 * @f: the file
 * @arg: user address of a struct ptlab_pmi_task (pid 0: none)
 * Return: 0, -ESRCH, -EINVAL, -EBUSY, -ENXIO, -EFAULT.
 */
static long ptlab_pmi_task(struct ptlab_file *f, unsigned long arg)
{
	struct ptlab_pmi_task req;
	struct pid *task = NULL;
	long ret;

	ret = ptlab_get_req(arg, &req, sizeof(req), &req.cpu);
	if (ret)
		return ret;
	if (req.pid < 0)
		return -EINVAL;
	if (req.pid) {
		task = find_get_pid(req.pid);
		if (!task)
			return -ESRCH;
	}
	mutex_lock(&ptlab_lock);
	ret = ptlab_armed_cpu(f, req.cpu);
	if (!ret) {
		ptlab_set_task(ptlab_cpus[req.cpu], task);
		task = NULL;
	}
	mutex_unlock(&ptlab_lock);
	put_pid(task);
	return ret;
}

/**
 * ptlab_unmask_on_cpu - LVTPC = NMI, unmasked
 * @info: unused
 */
static void ptlab_unmask_on_cpu(void *info)
{
	/* The CPU sets the mask bit of the LVT performance-monitor entry on every PMI. */
	ptlab_lvtpc_write(APIC_DM_NMI);
}

/**
 * ptlab_test_on_cpu - record a synthetic event on the chosen CPU
 * @info: unused
 */
static void ptlab_test_on_cpu(void *info)
{
	ptlab_record(ptlab_cpus[smp_processor_id()], PTLAB_EV_SYNTHETIC, 0, 0, 0);
}

/**
 * ptlab_pmi_cpu_op - PTLAB_IOC_PMI_UNMASK and PTLAB_IOC_PMI_TEST, on a CPU @f armed
 * @f: the file
 * @arg: user address of the CPU number
 * @fn: what runs on the CPU
 * Return: 0, -EINVAL (not armed), -EBUSY, -ENXIO, -EOPNOTSUPP (no APIC), -EFAULT.
 */
static long ptlab_pmi_cpu_op(struct ptlab_file *f, unsigned long arg, smp_call_func_t fn)
{
	u32 cpu;
	long ret;

	ret = ptlab_get_req(arg, &cpu, sizeof(cpu), &cpu);
	if (ret)
		return ret;
	if (fn == ptlab_unmask_on_cpu && !boot_cpu_has(X86_FEATURE_APIC))
		return -EOPNOTSUPP;
	mutex_lock(&ptlab_lock);
	ret = ptlab_armed_cpu(f, cpu);
	if (!ret)
		ret = smp_call_function_single(cpu, fn, NULL, 1);
	mutex_unlock(&ptlab_lock);
	return ret;
}

/* ---- module state and tasks ----------------------------------------------------------------- */

/**
 * ptlab_kstate - PTLAB_IOC_KSTATE
 * @f: the file asking
 * @arg: user address of a struct ptlab_kstate
 * Return: 0, -EFAULT, -ENOMEM.
 */
static long ptlab_kstate(struct ptlab_file *f, unsigned long arg)
{
	struct ptlab_kstate *k = kzalloc(sizeof(*k), GFP_KERNEL);
	struct ptlab_buffer *b;
	unsigned int cpu;
	long ret = 0;
	int id;

	if (!k)
		return -ENOMEM;
	k->abi = PTLAB_ABI;
	k->nr_cpus = nr_cpu_ids;
	k->lockdown = security_locked_down(LOCKDOWN_MSR) ? 1 : 0;
	mutex_lock(&ptlab_lock);
	k->files = ptlab_nfiles;
	idr_for_each_entry(&ptlab_buffers, b, id) {
		k->buffers++;
		k->bytes += b->size;
	}
	list_for_each_entry(b, &ptlab_orphans, orphan) {
		k->orphans++;
		k->orphan_bytes += b->size;
	}
	k->mine_buffers = f->buffers;
	k->mine_bytes = f->bytes;
	for_each_possible_cpu(cpu) {
		struct ptlab_cpu *c = ptlab_cpus[cpu];
		u64 bit = BIT_ULL(cpu % 64);
		unsigned int word = cpu / 64;

		if (cpu >= PTLAB_KSTATE_CPUS)
			break;
		k->armed[word] |= c->armed_by ? bit : 0;
		k->armed_mine[word] |= c->armed_by == f ? bit : 0;
		k->owned[word] |= c->owner ? bit : 0;
		k->owned_mine[word] |= c->owner == f ? bit : 0;
		k->taken[word] |= c->taken ? bit : 0;
	}
	mutex_unlock(&ptlab_lock);
	if (copy_to_user((void __user *)arg, k, sizeof(*k)))
		ret = -EFAULT;
	kfree(k);
	return ret;
}

/**
 * ptlab_task_cr3 - PTLAB_IOC_TASK_CR3: the CR3 a task's user code runs under
 * @arg: user address of a struct ptlab_task_cr3
 *
 * The physical address of the task's page-table root, as the kernel loads it into CR3
 * (encryption bit included); with page-table isolation (X86_FEATURE_PTI), user code runs on the
 * user copy, the kernel's with bit 12 set. The PCID in bits 11:0 depends on the CPU's recent
 * address spaces and cannot be known: it is 0 (docs/hardware.md).
 * Return: 0, -ESRCH (no such task, or no address space), -EFAULT.
 */
static long ptlab_task_cr3(unsigned long arg)
{
	struct ptlab_task_cr3 req;
	struct task_struct *t;
	struct mm_struct *mm;

	if (copy_from_user(&req, (void __user *)arg, sizeof(req)))
		return -EFAULT;
	if (req.pid <= 0)
		return -ESRCH;
	rcu_read_lock();
	t = pid_task(find_vpid(req.pid), PIDTYPE_PID);
	if (t)
		get_task_struct(t);
	rcu_read_unlock();
	if (!t)
		return -ESRCH;
	mm = get_task_mm(t);
	put_task_struct(t);
	if (!mm)
		return -ESRCH;
	req.cr3 = __sme_pa(mm->pgd);
	if (boot_cpu_has(X86_FEATURE_PTI))
		req.cr3 |= BIT_ULL(PAGE_SHIFT);
	mmput(mm);
	return copy_to_user((void __user *)arg, &req, sizeof(req)) ? -EFAULT : 0;
}

/* ---- the device ----------------------------------------------------------------------------- */

/**
 * ptlab_has_events - does a CPU @f armed hold events @f has not read?
 * @f: the file
 * Return: true if so (read without the lock: a wake-up condition).
 */
static bool ptlab_has_events(struct ptlab_file *f)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ptlab_cpu *c = ptlab_cpus[cpu];

		if (READ_ONCE(c->armed_by) == f && READ_ONCE(c->tail) < READ_ONCE(c->published))
			return true;
	}
	return false;
}

/**
 * ptlab_read_cpu - copy @c's unread events out (under ptlab_lock)
 * @c: a CPU the reader armed
 * @ubuf: where
 * @len: room
 * @n: in/out: bytes copied so far
 * Return: 0, -EFAULT.
 */
static int ptlab_read_cpu(struct ptlab_cpu *c, char __user *ubuf, size_t len, size_t *n)
{
	u64 published = READ_ONCE(c->published);

	smp_rmb();	/* the events up to published */
	if (c->tail + PTLAB_EVENTS < published)
		c->tail = published - PTLAB_EVENTS;	/* lost: the seq numbers show the gap */
	while (*n + sizeof(struct ptlab_pmi_event) <= len && c->tail < published) {
		unsigned int slot = c->tail & (PTLAB_EVENTS - 1);
		struct ptlab_pmi_event e;
		u64 want = c->tail + 1;

		WRITE_ONCE(c->tail, c->tail + 1);
		if (READ_ONCE(c->seq[slot]) != want)
			continue;	/* overwritten before it was read */
		smp_rmb();	/* the seq before the slot: ptlab_record's second smp_wmb */
		e = c->ring[slot];
		smp_rmb();	/* the slot before the seq again: its first smp_wmb */
		if (READ_ONCE(c->seq[slot]) != want)
			continue;	/* rewritten during the copy: torn, dropped */
		if (copy_to_user(ubuf + *n, &e, sizeof(e)))
			return -EFAULT;
		*n += sizeof(e);
	}
	return 0;
}

/**
 * ptlab_read - read whole struct ptlab_pmi_event records of the CPUs this file armed; blocks
 * unless O_NONBLOCK. Events overwritten before they were read are skipped (their seq numbers
 * show the gap).
 * @file: the file
 * @ubuf: where
 * @len: room
 * @ppos: unused
 * Return: bytes read, -EAGAIN, -EINVAL (room for no event), -EFAULT, -ERESTARTSYS.
 */
static ssize_t ptlab_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	struct ptlab_file *f = file->private_data;
	unsigned int cpu;
	size_t n = 0;
	int ret = 0;

	if (len < sizeof(struct ptlab_pmi_event))
		return -EINVAL;
	for (;;) {
		mutex_lock(&ptlab_lock);
		for_each_possible_cpu(cpu) {
			if (ptlab_cpus[cpu]->armed_by != f)
				continue;
			ret = ptlab_read_cpu(ptlab_cpus[cpu], ubuf, len, &n);
			if (ret)
				break;
		}
		mutex_unlock(&ptlab_lock);
		if (n || ret || (file->f_flags & O_NONBLOCK))
			return n ? n : ret ? ret : -EAGAIN;
		ret = wait_event_interruptible(ptlab_wait, ptlab_has_events(f));
		if (ret)
			return ret;
	}
}

/**
 * ptlab_poll - readable when a CPU this file armed has unread events
 * @file: the file
 * @wait: the poll table
 * Return: the poll mask.
 */
static __poll_t ptlab_poll(struct file *file, poll_table *wait)
{
	poll_wait(file, &ptlab_wait, wait);
	return ptlab_has_events(file->private_data) ? EPOLLIN | EPOLLRDNORM : 0;
}

/**
 * ptlab_open - a file of its own for each opener with CAP_SYS_RAWIO (arch/x86/kernel/msr.c
 * msr_open asks the same)
 * @inode: the device node
 * @file: the file
 * Return: 0, -EPERM, -ENOMEM.
 */
static int ptlab_open(struct inode *inode, struct file *file)
{
	struct ptlab_file *f;

	if (!capable(CAP_SYS_RAWIO))
		return -EPERM;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_lock(&ptlab_lock);
	ptlab_nfiles++;
	mutex_unlock(&ptlab_lock);
	file->private_data = f;
	return 0;
}

/**
 * ptlab_let_go - end @f's hold on every CPU: disarmed, and TraceEn=0 read back where it
 * programmed PT (under ptlab_lock)
 * @f: the file
 * Return: true when every such CPU confirmed; a CPU that did not is taken.
 */
static bool ptlab_let_go(struct ptlab_file *f)
{
	bool confirmed = true;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct ptlab_cpu *c = ptlab_cpus[cpu];

		if (c->armed_by == f)
			ptlab_disarm(cpu);
		if (c->owner != f)
			continue;
		c->owner = NULL;
		if (ptlab_stop_pt(cpu)) {
			pr_err("ptlab: CPU %u kept TraceEn=1: its buffers stay\n", cpu);
			c->taken = true;
			confirmed = false;
		}
	}
	return confirmed;
}

/**
 * ptlab_release - the file's end, however the helper ended (exit, crash, a dropped SSH link):
 * its CPUs are disarmed and stopped, then its buffers freed, or kept as orphans when a CPU did
 * not confirm TraceEn=0 (docs/design.md "The invariant")
 * @inode: the device node
 * @file: the file
 * Return: 0.
 */
static int ptlab_release(struct inode *inode, struct file *file)
{
	struct ptlab_file *f = file->private_data;
	struct ptlab_buffer *b;
	bool confirmed;
	int id;

	mutex_lock(&ptlab_lock);
	confirmed = ptlab_let_go(f);
	idr_for_each_entry(&ptlab_buffers, b, id) {
		if (b->owner != f)
			continue;
		idr_remove(&ptlab_buffers, id);
		if (confirmed) {
			ptlab_buf_release(b);
			continue;
		}
		b->owner = NULL;
		list_add_tail(&b->orphan, &ptlab_orphans);
	}
	ptlab_nfiles--;
	mutex_unlock(&ptlab_lock);
	kfree(f);
	return 0;
}

/**
 * ptlab_ioctl - dispatch
 * @file: the file
 * @cmd: PTLAB_IOC_*
 * @arg: the request's user address
 * Return: the handler's result, or -ENOTTY.
 */
static long ptlab_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct ptlab_file *f = file->private_data;

	switch (cmd) {
	case PTLAB_IOC_RDMSR:
		return ptlab_msr(f, arg, false);
	case PTLAB_IOC_WRMSR:
		return ptlab_msr(f, arg, true);
	case PTLAB_IOC_MSR_BATCH:
		return ptlab_msr_batch(f, arg);
	case PTLAB_IOC_CPUID:
		return ptlab_cpuid(arg);
	case PTLAB_IOC_BUF_ALLOC:
		return ptlab_buf_alloc(f, arg);
	case PTLAB_IOC_BUF_FREE:
		return ptlab_buf_free(f, arg);
	case PTLAB_IOC_BUF_READ:
		return ptlab_buf_io(f, arg, false);
	case PTLAB_IOC_BUF_WRITE:
		return ptlab_buf_io(f, arg, true);
	case PTLAB_IOC_BUF_FREE_ALL:
		return ptlab_buf_free_all(f);
	case PTLAB_IOC_XSAVES:
		return ptlab_xsave(f, arg, false);
	case PTLAB_IOC_XRSTORS:
		return ptlab_xsave(f, arg, true);
	case PTLAB_IOC_PMI_ARM:
		return ptlab_pmi_arm(f, arg);
	case PTLAB_IOC_PMI_DISARM:
		return ptlab_pmi_disarm(f, arg);
	case PTLAB_IOC_PMI_TASK:
		return ptlab_pmi_task(f, arg);
	case PTLAB_IOC_PMI_UNMASK:
		return ptlab_pmi_cpu_op(f, arg, ptlab_unmask_on_cpu);
	case PTLAB_IOC_PMI_TEST:
		return ptlab_pmi_cpu_op(f, arg, ptlab_test_on_cpu);
	case PTLAB_IOC_KSTATE:
		return ptlab_kstate(f, arg);
	case PTLAB_IOC_TASK_CR3:
		return ptlab_task_cr3(arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations ptlab_fops = {
	.owner = THIS_MODULE,
	.open = ptlab_open,
	.release = ptlab_release,
	.unlocked_ioctl = ptlab_ioctl,
	.read = ptlab_read,
	.poll = ptlab_poll,
	.llseek = noop_llseek,
};

static struct miscdevice ptlab_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "ptlab",
	.fops = &ptlab_fops,
	.mode = 0600,
};

/**
 * ptlab_reboot - before a reboot, halt or kexec: stop PT on every CPU a file programmed, so the
 * next kernel's memory is not written (arch/x86/events/intel/pt.c cpu_emergency_stop_pt does the
 * same on a crash); no page is freed
 * @nb: the notifier
 * @action: SYS_RESTART, SYS_HALT or SYS_POWER_OFF
 * @data: unused
 * Return: NOTIFY_DONE.
 */
static int ptlab_reboot(struct notifier_block *nb, unsigned long action, void *data)
{
	unsigned int cpu;

	mutex_lock(&ptlab_lock);
	for_each_online_cpu(cpu) {
		struct ptlab_cpu *c = ptlab_cpus[cpu];

		if (c->armed_by)
			ptlab_disarm(cpu);
		if ((c->owner || c->taken) && ptlab_stop_pt(cpu))
			pr_emerg("ptlab: CPU %u still traces into its buffers at reboot\n", cpu);
	}
	mutex_unlock(&ptlab_lock);
	return NOTIFY_DONE;
}

static struct notifier_block ptlab_reboot_nb = {
	.notifier_call = ptlab_reboot,
};

/**
 * ptlab_free_cpus - free the per-CPU state
 */
static void ptlab_free_cpus(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		kfree(ptlab_cpus[cpu]);
	kfree(ptlab_cpus);
}

/**
 * ptlab_init - per-CPU state, XSAVE areas, the NMI handler, the reboot notifier, the device
 * Return: 0 or a negative errno.
 */
static int __init ptlab_init(void)
{
	unsigned int cpu;
	int ret = -ENOMEM;

	ptlab_cpus = kcalloc(nr_cpu_ids, sizeof(*ptlab_cpus), GFP_KERNEL);
	if (!ptlab_cpus)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		ptlab_cpus[cpu] = kzalloc(sizeof(**ptlab_cpus), GFP_KERNEL);
		if (!ptlab_cpus[cpu])
			goto fail;
		init_irq_work(&ptlab_cpus[cpu]->work, ptlab_publish);
	}
	/* kmalloc of a page is page aligned, more than the 64 bytes XSAVES needs. */
	ptlab_xsave_area = kzalloc(PTLAB_XSAVE_MAX, GFP_KERNEL);
	ptlab_xrstors_area = kzalloc(PTLAB_XSAVE_MAX, GFP_KERNEL);
	if (!ptlab_xsave_area || !ptlab_xrstors_area)
		goto fail;
	ret = register_nmi_handler(NMI_LOCAL, ptlab_nmi, NMI_FLAG_FIRST, "ptlab");
	if (ret)
		goto fail;
	ret = register_reboot_notifier(&ptlab_reboot_nb);
	if (ret)
		goto fail_nmi;
	ret = misc_register(&ptlab_dev);
	if (ret)
		goto fail_reboot;
	return 0;
fail_reboot:
	unregister_reboot_notifier(&ptlab_reboot_nb);
fail_nmi:
	unregister_nmi_handler(NMI_LOCAL, "ptlab");
fail:
	kfree(ptlab_xsave_area);
	kfree(ptlab_xrstors_area);
	ptlab_free_cpus();
	return ret;
}

/**
 * ptlab_exit - no file is open any more (each held a module reference): the orphans go back
 * once every taken CPU confirms TraceEn=0, else they stay allocated for good
 */
static void __exit ptlab_exit(void)
{
	struct ptlab_buffer *b, *next;
	bool confirmed = true;
	unsigned int cpu;

	misc_deregister(&ptlab_dev);
	unregister_reboot_notifier(&ptlab_reboot_nb);
	unregister_nmi_handler(NMI_LOCAL, "ptlab");
	mutex_lock(&ptlab_lock);
	for_each_possible_cpu(cpu) {
		irq_work_sync(&ptlab_cpus[cpu]->work);
		if (ptlab_cpus[cpu]->taken && ptlab_stop_pt(cpu))
			confirmed = false;
	}
	list_for_each_entry_safe(b, next, &ptlab_orphans, orphan) {
		if (!confirmed)
			break;
		list_del(&b->orphan);
		ptlab_buf_release(b);
	}
	if (!confirmed)
		pr_err("ptlab: %llu bytes stay allocated: a CPU traces\n", ptlab_total);
	mutex_unlock(&ptlab_lock);
	idr_destroy(&ptlab_buffers);
	kfree(ptlab_xsave_area);
	kfree(ptlab_xrstors_area);
	ptlab_free_cpus();
}

module_init(ptlab_init);
module_exit(ptlab_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ptlab: MSRs, buffers, XSAVES and the ToPA PMI for a host-side PT driver");
