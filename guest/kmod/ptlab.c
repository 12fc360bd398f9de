// SPDX-License-Identifier: GPL-2.0
/*
 * ptlab.c - the guest kernel end of ptlab (docs/design.md "Guest side"): a misc device /dev/ptlab.
 *
 * - RDMSR/WRMSR on a chosen CPU with the _safe variants: a #GP comes back as -EIO, never an oops.
 * - An MSR batch run in one IPI on the target CPU, stopping at the first fault.
 * - CPUID on a chosen CPU.
 * - Physically contiguous, naturally aligned buffers (alloc_pages, order <= PTLAB_MAX_ORDER)
 *   whose physical addresses the host uses for ToPA tables and output regions; copied in and
 *   out with ioctls (the helper hashes them inside the guest).
 * - XSAVES/XRSTORS of state component 8 (PT state) with IA32_XSS[8] set around the instruction,
 *   as FreeBSD's hwt does; refused when CPUID.(EAX=0DH,ECX=1):EAX[3] (XSAVES) or ECX[8] (PT
 *   state in IA32_XSS) is 0.
 * - An NMI handler that claims the ToPA PMI (IA32_PERF_GLOBAL_STATUS bit 55: docs/sdm/output.md,
 *   SDM Vol. 3C "ToPA PMI"), optionally clears TraceEn at once, acknowledges it through
 *   IA32_PERF_GLOBAL_STATUS_RESET (0x390), records what it saw and wakes readers of the device.
 *
 * Every ioctl validates its input: the CPU must be online, sizes and alignments are bounded,
 * buffer ids must exist.
 */
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/irq_work.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <asm/apic.h>
#include <asm/asm.h>
#include <asm/msr.h>
#include <asm/nmi.h>
#include <asm/processor.h>

#include "ptlab_uapi.h"

#define PTLAB_RTIT_CTL			0x570	/* IA32_RTIT_CTL */
#define PTLAB_RTIT_STATUS		0x571	/* IA32_RTIT_STATUS */
#define PTLAB_GLOBAL_STATUS		0x38e	/* IA32_PERF_GLOBAL_STATUS */
#define PTLAB_GLOBAL_STATUS_RESET	0x390	/* IA32_PERF_GLOBAL_STATUS_RESET (OVF_CTRL) */
#define PTLAB_TOPA_PMI			BIT_ULL(55)
#define PTLAB_TRACEEN			BIT_ULL(0)
#define PTLAB_XSS			0xda0	/* IA32_XSS */
#define PTLAB_EVENTS			256	/* ring of PMI events (a power of two) */

/** struct ptlab_buffer - one allocated buffer */
struct ptlab_buffer {
	struct page *page;
	unsigned int order;
	u64 size;
};

static DEFINE_MUTEX(ptlab_lock);	/* buffers and the reader side of the event ring */
static DEFINE_IDR(ptlab_buffers);
static u64 ptlab_total;			/* bytes held by all buffers */

static u32 ptlab_pmi_flags;		/* PTLAB_PMI_*; read in NMI context */
static struct ptlab_pmi_event ptlab_ring[PTLAB_EVENTS];
static u64 ptlab_ring_seq[PTLAB_EVENTS];	/* seq + 1 once slot is complete */
static atomic64_t ptlab_head = ATOMIC64_INIT(0);	/* events produced */
static u64 ptlab_tail;			/* events consumed (under ptlab_lock) */
static DECLARE_WAIT_QUEUE_HEAD(ptlab_wait);
static struct irq_work ptlab_wake_work;

/**
 * ptlab_cpu_ok - is @cpu a valid, online CPU?
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
 * @req: where to copy it (@size bytes)
 * @cpu: the request's CPU field, inside @req
 * Return: 0, -EFAULT for a bad pointer, or ptlab_cpu_ok()'s error.
 */
static int ptlab_get_req(unsigned long arg, void *req, size_t size, const u32 *cpu)
{
	if (copy_from_user(req, (void __user *)arg, size))
		return -EFAULT;
	return ptlab_cpu_ok(*cpu);
}

/* ---- MSRs and CPUID ------------------------------------------------------------------------ */

/** struct ptlab_batch_ctx - a batch being run on its CPU */
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
			op->err = wrmsrl_safe(op->msr, op->value);
		else
			op->err = rdmsrl_safe(op->msr, &op->value);
		ctx->done = i + 1;
		if (op->err)
			break;
	}
}

/**
 * ptlab_msr_batch - PTLAB_IOC_MSR_BATCH: validate, copy the ops in, run them in one IPI
 * @arg: user address of a struct ptlab_msr_batch
 * Return: 0 (faults are reported per op), or a negative errno for bad input.
 */
static long ptlab_msr_batch(unsigned long arg)
{
	struct ptlab_msr_batch req;
	struct ptlab_batch_ctx ctx = { 0 };
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
		ctx.ops = memdup_user(uops, req.count * sizeof(*ctx.ops));
		if (IS_ERR(ctx.ops))
			return PTR_ERR(ctx.ops);
	}
	for (i = 0; i < req.count; i++) {
		if (ctx.ops[i].write > 1) {
			kfree(ctx.ops);
			return -EINVAL;
		}
		ctx.ops[i].err = 0;
	}
	ctx.count = req.count;
	if (req.count) {
		ret = smp_call_function_single(req.cpu, ptlab_batch_on_cpu, &ctx, 1);
		if (!ret && copy_to_user(uops, ctx.ops, req.count * sizeof(*ctx.ops)))
			ret = -EFAULT;
	}
	req.done = ctx.done;
	if (!ret && copy_to_user((void __user *)arg, &req, sizeof(req)))
		ret = -EFAULT;
	kfree(ctx.ops);
	return ret;
}

/**
 * ptlab_msr - PTLAB_IOC_RDMSR / PTLAB_IOC_WRMSR
 * Return: 0, -EIO on #GP, -ENXIO for an offline CPU, -EFAULT.
 */
static long ptlab_msr(unsigned long arg, bool write)
{
	struct ptlab_msr req;
	long ret;

	ret = ptlab_get_req(arg, &req, sizeof(req), &req.cpu);
	if (ret)
		return ret;
	if (write)
		return wrmsrl_safe_on_cpu(req.cpu, req.msr, req.value);
	ret = rdmsrl_safe_on_cpu(req.cpu, req.msr, &req.value);
	if (!ret && copy_to_user((void __user *)arg, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

static void ptlab_cpuid_on_cpu(void *info)
{
	struct ptlab_cpuid *c = info;

	cpuid_count(c->leaf, c->subleaf, &c->eax, &c->ebx, &c->ecx, &c->edx);
}

/** ptlab_cpuid - PTLAB_IOC_CPUID; Return: 0, -ENXIO, -EFAULT */
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

/* ---- buffers -------------------------------------------------------------------------------- */

/**
 * ptlab_buf_alloc - PTLAB_IOC_BUF_ALLOC: a zeroed, naturally aligned block of 2^order pages
 *
 * The buddy allocator returns blocks aligned to their size, which is what ToPA output regions
 * and tables need (SDM Vol. 3C "Table of Physical Addresses (ToPA)": a region of size 2^n is
 * 2^n-aligned). @size must be a power of two from PAGE_SIZE to PAGE_SIZE << PTLAB_MAX_ORDER.
 * Return: 0, -EINVAL, -ENOSPC (limits), -ENOMEM.
 */
static long ptlab_buf_alloc(unsigned long arg)
{
	struct ptlab_buf req;
	struct ptlab_buffer *b;
	int id;

	if (copy_from_user(&req, (void __user *)arg, sizeof(req)))
		return -EFAULT;
	if (req.size < PAGE_SIZE || req.size > (PAGE_SIZE << PTLAB_MAX_ORDER) || !is_power_of_2(req.size))
		return -EINVAL;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->size = req.size;
	b->order = get_order(req.size);
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
	id = idr_alloc(&ptlab_buffers, b, 1, PTLAB_MAX_BUFFERS + 1, GFP_KERNEL);
	if (id < 0) {	/* -ENOSPC: PTLAB_MAX_BUFFERS reached */
		__free_pages(b->page, b->order);
		goto fail;
	}
	ptlab_total += b->size;
	mutex_unlock(&ptlab_lock);
	req.id = id;
	req.phys = page_to_phys(b->page);
	if (copy_to_user((void __user *)arg, &req, sizeof(req)))
		return -EFAULT;	/* the buffer stays allocated; free-all reclaims it */
	return 0;
fail:
	mutex_unlock(&ptlab_lock);
	kfree(b);
	return id;
}

static void ptlab_buf_release(struct ptlab_buffer *b)
{
	ptlab_total -= b->size;
	__free_pages(b->page, b->order);
	kfree(b);
}

/** ptlab_buf_free - PTLAB_IOC_BUF_FREE of buffer @id; Return: 0, -ENOENT */
static long ptlab_buf_free(unsigned long arg)
{
	struct ptlab_buf req;
	struct ptlab_buffer *b;

	if (copy_from_user(&req, (void __user *)arg, sizeof(req)))
		return -EFAULT;
	mutex_lock(&ptlab_lock);
	b = idr_remove(&ptlab_buffers, req.id);
	if (b)
		ptlab_buf_release(b);
	mutex_unlock(&ptlab_lock);
	return b ? 0 : -ENOENT;
}

static int ptlab_buf_free_one(int id, void *p, void *data)
{
	ptlab_buf_release(p);
	return 0;
}

/** ptlab_buf_free_all - free every buffer (PTLAB_IOC_BUF_FREE_ALL and module exit) */
static void ptlab_buf_free_all(void)
{
	mutex_lock(&ptlab_lock);
	idr_for_each(&ptlab_buffers, ptlab_buf_free_one, NULL);
	idr_destroy(&ptlab_buffers);
	mutex_unlock(&ptlab_lock);
}

/**
 * ptlab_buf_io - PTLAB_IOC_BUF_READ / PTLAB_IOC_BUF_WRITE: copy between a buffer and user memory
 * Return: 0, -ENOENT (no such buffer), -EINVAL (range outside the buffer), -EFAULT.
 */
static long ptlab_buf_io(unsigned long arg, bool write)
{
	struct ptlab_buf_io req;
	struct ptlab_buffer *b;
	void *kaddr;
	long ret = 0;

	if (copy_from_user(&req, (void __user *)arg, sizeof(req)))
		return -EFAULT;
	mutex_lock(&ptlab_lock);
	b = idr_find(&ptlab_buffers, req.id);
	if (!b) {
		ret = -ENOENT;
		goto out;
	}
	if (req.offset > b->size || req.len > b->size - req.offset) {
		ret = -EINVAL;
		goto out;
	}
	/* alloc_pages without __GFP_HIGHMEM: the block is in the direct map on x86-64. */
	kaddr = page_address(b->page) + req.offset;
	if (write)
		ret = copy_from_user(kaddr, u64_to_user_ptr(req.data), req.len) ? -EFAULT : 0;
	else
		ret = copy_to_user(u64_to_user_ptr(req.data), kaddr, req.len) ? -EFAULT : 0;
out:
	mutex_unlock(&ptlab_lock);
	return ret;
}

/* ---- XSAVES / XRSTORS of PT state ------------------------------------------------------------ */

/** struct ptlab_xsave_ctx - one XSAVES or XRSTORS on its CPU */
struct ptlab_xsave_ctx {
	void *area;		/* 64-byte aligned */
	u64 rfbm;
	bool restore;
	int err;		/* 0, -EIO (#GP), -EOPNOTSUPP */
};

/**
 * ptlab_xsave_supported - CPUID.(EAX=0DH,ECX=1):EAX[3] (XSAVES/XRSTORS) and ECX[8] (PT state
 * is a supervisor component of IA32_XSS): SDM Vol. 1 "Enumeration of CPU Support for XSAVE
 * Instructions and XSAVE-Supported Features".
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

	if (rdmsrl_safe(PTLAB_XSS, &xss) || wrmsrl_safe(PTLAB_XSS, xss | BIT_ULL(PTLAB_XSTATE_PT))) {
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
	wrmsrl_safe(PTLAB_XSS, xss);
	c->err = trap ? -EIO : 0;
}

/**
 * ptlab_xsave - PTLAB_IOC_XSAVES / PTLAB_IOC_XRSTORS
 *
 * Only RFBM = bit 8 is accepted: user state components would clobber the registers of the task
 * the IPI interrupts. The compacted area is the 512-byte legacy region, the 64-byte header and
 * component 8 (CPUID.(EAX=0DH,ECX=8):EAX bytes).
 * Return: 0, -EOPNOTSUPP (CPUID lacks it), -EINVAL, -ENXIO, -EIO (#GP), -EFAULT, -ENOMEM.
 */
static long ptlab_xsave(unsigned long arg, bool restore)
{
	struct ptlab_xsave req;
	struct ptlab_xsave_ctx c = { .restore = restore };
	u32 eax, ebx, ecx, edx, len;
	long ret;

	ret = ptlab_get_req(arg, &req, sizeof(req), &req.cpu);
	if (ret)
		return ret;
	if (req.rfbm != BIT_ULL(PTLAB_XSTATE_PT))
		return -EINVAL;
	if (!ptlab_xsave_supported())
		return -EOPNOTSUPP;
	cpuid_count(0xd, PTLAB_XSTATE_PT, &eax, &ebx, &ecx, &edx);
	len = 512 + 64 + eax;
	if (len > PTLAB_XSAVE_MAX)
		return -EOPNOTSUPP;
	if (restore && req.len != len)
		return -EINVAL;
	/* kmalloc of a page is page aligned, more than the 64 bytes XSAVES needs. */
	c.area = kzalloc(PTLAB_XSAVE_MAX, GFP_KERNEL);
	if (!c.area)
		return -ENOMEM;
	c.rfbm = req.rfbm;
	if (restore && copy_from_user(c.area, u64_to_user_ptr(req.area), len)) {
		ret = -EFAULT;
		goto out;
	}
	ret = smp_call_function_single(req.cpu, ptlab_xsave_on_cpu, &c, 1);
	if (!ret)
		ret = c.err;
	if (!ret && !restore) {
		req.len = len;
		if (copy_to_user(u64_to_user_ptr(req.area), c.area, len) ||
		    copy_to_user((void __user *)arg, &req, sizeof(req)))
			ret = -EFAULT;
	}
out:
	kfree(c.area);
	return ret;
}

/* ---- the ToPA PMI -------------------------------------------------------------------------- */

static void ptlab_wake(struct irq_work *w)
{
	wake_up_interruptible(&ptlab_wait);
}

/**
 * ptlab_record - add an event to the ring (NMI safe: slots are reserved atomically) and wake
 * readers through irq_work (wake_up cannot be called from NMI context).
 */
static void ptlab_record(u32 flags, u64 gs, u64 ctl, u64 status)
{
	u64 seq = atomic64_inc_return(&ptlab_head) - 1;
	unsigned int slot = seq & (PTLAB_EVENTS - 1);
	struct ptlab_pmi_event *e = &ptlab_ring[slot];

	e->cpu = smp_processor_id();
	e->flags = flags;
	e->seq = seq;
	e->global_status = gs;
	e->ctl = ctl;
	e->status = status;
	e->tsc = rdtsc();
	smp_wmb();
	WRITE_ONCE(ptlab_ring_seq[slot], seq + 1);
	irq_work_queue(&ptlab_wake_work);
}

/**
 * ptlab_nmi - claim a ToPA PMI: IA32_PERF_GLOBAL_STATUS bit 55 (docs/sdm/output.md, SDM Vol. 3C
 * "ToPA PMI"). Reads IA32_RTIT_CTL and IA32_RTIT_STATUS before changing anything, optionally
 * clears TraceEn, then clears bit 55 through IA32_PERF_GLOBAL_STATUS_RESET. Registered first
 * in the NMI_LOCAL chain so perf's handler cannot acknowledge the bit before us.
 */
static int ptlab_nmi(unsigned int cmd, struct pt_regs *regs)
{
	u32 cfg = READ_ONCE(ptlab_pmi_flags), flags = PTLAB_EV_ACKED;
	u64 gs, ctl = 0, status = 0;

	if (!(cfg & PTLAB_PMI_ENABLE))
		return NMI_DONE;
	if (rdmsrl_safe(PTLAB_GLOBAL_STATUS, &gs) || !(gs & PTLAB_TOPA_PMI))
		return NMI_DONE;
	rdmsrl_safe(PTLAB_RTIT_CTL, &ctl);
	rdmsrl_safe(PTLAB_RTIT_STATUS, &status);
	if ((cfg & PTLAB_PMI_CLEAR_TRACEEN) && (ctl & PTLAB_TRACEEN) &&
	    !wrmsrl_safe(PTLAB_RTIT_CTL, ctl & ~PTLAB_TRACEEN))
		flags |= PTLAB_EV_TRACEEN_CLEARED;
	if (wrmsrl_safe(PTLAB_GLOBAL_STATUS_RESET, PTLAB_TOPA_PMI))
		flags &= ~PTLAB_EV_ACKED;
	ptlab_record(flags, gs, ctl, status);
	return NMI_HANDLED;
}

static void ptlab_unmask_on_cpu(void *info)
{
	/* The CPU sets the mask bit of LVT performance-monitor entry on every PMI. */
	apic_write(APIC_LVTPC, APIC_DM_NMI);
}

/** ptlab_pmi_unmask - PTLAB_IOC_PMI_UNMASK: LVTPC = NMI, unmasked, on the CPU given */
static long ptlab_pmi_unmask(unsigned long arg)
{
	u32 cpu;
	long ret;

	ret = ptlab_get_req(arg, &cpu, sizeof(cpu), &cpu);
	if (ret)
		return ret;
	if (!boot_cpu_has(X86_FEATURE_APIC))
		return -EOPNOTSUPP;
	return smp_call_function_single(cpu, ptlab_unmask_on_cpu, NULL, 1);
}

static void ptlab_test_on_cpu(void *info)
{
	ptlab_record(PTLAB_EV_SYNTHETIC, 0, 0, 0);
}

/** ptlab_pmi_test - PTLAB_IOC_PMI_TEST: record a synthetic event on a CPU (tests the wake path) */
static long ptlab_pmi_test(unsigned long arg)
{
	u32 cpu;
	long ret;

	ret = ptlab_get_req(arg, &cpu, sizeof(cpu), &cpu);
	if (ret)
		return ret;
	return smp_call_function_single(cpu, ptlab_test_on_cpu, NULL, 1);
}

/* ---- the device ------------------------------------------------------------------------------ */

/**
 * ptlab_read - read whole struct ptlab_pmi_event records; blocks unless O_NONBLOCK.
 * Events overwritten before they were read are skipped (their seq numbers show the gap).
 */
static ssize_t ptlab_read(struct file *f, char __user *ubuf, size_t len, loff_t *ppos)
{
	size_t n = 0;
	int ret;

	if (len < sizeof(struct ptlab_pmi_event))
		return -EINVAL;
	for (;;) {
		mutex_lock(&ptlab_lock);
		if (ptlab_tail + PTLAB_EVENTS < (u64)atomic64_read(&ptlab_head))
			ptlab_tail = atomic64_read(&ptlab_head) - PTLAB_EVENTS;
		while (n + sizeof(struct ptlab_pmi_event) <= len && ptlab_tail < (u64)atomic64_read(&ptlab_head)) {
			unsigned int slot = ptlab_tail & (PTLAB_EVENTS - 1);
			struct ptlab_pmi_event e;

			if (READ_ONCE(ptlab_ring_seq[slot]) != ptlab_tail + 1)
				break;	/* still being written */
			smp_rmb();
			e = ptlab_ring[slot];
			if (copy_to_user(ubuf + n, &e, sizeof(e))) {
				mutex_unlock(&ptlab_lock);
				return n ? n : -EFAULT;
			}
			n += sizeof(e);
			ptlab_tail++;
		}
		mutex_unlock(&ptlab_lock);
		if (n || (f->f_flags & O_NONBLOCK))
			return n ? n : -EAGAIN;
		ret = wait_event_interruptible(ptlab_wait, ptlab_tail < (u64)atomic64_read(&ptlab_head));
		if (ret)
			return ret;
	}
}

static __poll_t ptlab_poll(struct file *f, poll_table *wait)
{
	poll_wait(f, &ptlab_wait, wait);
	return ptlab_tail < (u64)atomic64_read(&ptlab_head) ? EPOLLIN | EPOLLRDNORM : 0;
}

static long ptlab_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct ptlab_pmi_config pc;

	switch (cmd) {
	case PTLAB_IOC_RDMSR:
		return ptlab_msr(arg, false);
	case PTLAB_IOC_WRMSR:
		return ptlab_msr(arg, true);
	case PTLAB_IOC_MSR_BATCH:
		return ptlab_msr_batch(arg);
	case PTLAB_IOC_CPUID:
		return ptlab_cpuid(arg);
	case PTLAB_IOC_BUF_ALLOC:
		return ptlab_buf_alloc(arg);
	case PTLAB_IOC_BUF_FREE:
		return ptlab_buf_free(arg);
	case PTLAB_IOC_BUF_READ:
		return ptlab_buf_io(arg, false);
	case PTLAB_IOC_BUF_WRITE:
		return ptlab_buf_io(arg, true);
	case PTLAB_IOC_BUF_FREE_ALL:
		ptlab_buf_free_all();
		return 0;
	case PTLAB_IOC_XSAVES:
		return ptlab_xsave(arg, false);
	case PTLAB_IOC_XRSTORS:
		return ptlab_xsave(arg, true);
	case PTLAB_IOC_PMI_CONFIG:
		if (copy_from_user(&pc, (void __user *)arg, sizeof(pc)))
			return -EFAULT;
		if (pc.flags & ~(PTLAB_PMI_ENABLE | PTLAB_PMI_CLEAR_TRACEEN))
			return -EINVAL;
		WRITE_ONCE(ptlab_pmi_flags, pc.flags);
		return 0;
	case PTLAB_IOC_PMI_UNMASK:
		return ptlab_pmi_unmask(arg);
	case PTLAB_IOC_PMI_TEST:
		return ptlab_pmi_test(arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations ptlab_fops = {
	.owner = THIS_MODULE,
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

static int __init ptlab_init(void)
{
	int ret;

	init_irq_work(&ptlab_wake_work, ptlab_wake);
	ret = register_nmi_handler(NMI_LOCAL, ptlab_nmi, NMI_FLAG_FIRST, "ptlab");
	if (ret)
		return ret;
	ret = misc_register(&ptlab_dev);
	if (ret)
		unregister_nmi_handler(NMI_LOCAL, "ptlab");
	return ret;
}

static void __exit ptlab_exit(void)
{
	misc_deregister(&ptlab_dev);
	unregister_nmi_handler(NMI_LOCAL, "ptlab");
	irq_work_sync(&ptlab_wake_work);
	ptlab_buf_free_all();
}

module_init(ptlab_init);
module_exit(ptlab_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ptlab: MSRs, CPUID, contiguous buffers, XSAVES of PT state and the ToPA PMI for a host-side PT driver");
