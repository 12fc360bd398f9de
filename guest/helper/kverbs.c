// SPDX-License-Identifier: MIT
/*
 * kverbs.c - the helper verbs backed by the ptlab module (guest/kmod/ptlab_uapi.h): MSR batches,
 * buffers (alloc/free/read/write/fill/sha256), XSAVES/XRSTORS, the ToPA PMI (arming, the task its
 * top half freezes, the event stream) and the module's state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "proto.h"
#include "ptlab_uapi.h"
#include "sha256.h"

#define BUFREAD_MAX	(256u << 10)
#define CHUNK		(1024u * 1024)

int pmi_streaming;

/**
 * need_module - answer nodev when /dev/ptlab is absent
 * @id: the request's id
 * Return: 1 if the module is there, else 0 (answered).
 */
static int need_module(const char *id)
{
	if (ptlab_fd >= 0)
		return 1;
	respond_err(id, "nodev", "the ptlab module is not loaded (/dev/ptlab)");
	return 0;
}

static void respond_errno(const char *id, int err)
{
	respond_err(id, errno_code(err), strerror(err));
}

/**
 * parse_op - "r<msr>" or "w<msr>=<value>"
 * @s: the op's text (the '=' is overwritten)
 * @op: out: the op
 * Return: 0, or -1 if malformed.
 */
static int parse_op(char *s, struct ptlab_msr_op *op)
{
	char *eq;
	uint64_t msr, val = 0;

	memset(op, 0, sizeof(*op));
	if (s[0] != 'r' && s[0] != 'w')
		return -1;
	op->write = s[0] == 'w';
	eq = strchr(s + 1, '=');
	if (op->write != !!eq)
		return -1;
	if (eq)
		*eq = '\0';
	if (parse_u64(s + 1, &msr) || msr > 0xffffffffu || (eq && parse_u64(eq + 1, &val)))
		return -1;
	op->msr = (uint32_t)msr;
	op->value = val;
	return 0;
}

/**
 * do_msrs - a batch: one IPI through the module, else one /dev/cpu access per op
 * @id: the request's id
 * @f: the request's fields
 * @nf: how many
 *
 * Results are data: the value of each executed op, and "gp" for the op whose #GP ended the batch.
 */
void do_msrs(const char *id, char **f, int nf)
{
	struct ptlab_msr_op ops[PTLAB_MAX_BATCH];
	struct ptlab_msr_batch b = { 0 };
	struct out o = { 0 };
	uint64_t cpu;
	int n = nf - 3, i;

	if (nf < 3 || parse_u64(f[2], &cpu) || cpu > 0xffffffffu || n > PTLAB_MAX_BATCH) {
		respond_err(id, "inval",
			    "usage: msrs <cpu> r<msr>|w<msr>=<value>... (at most 256 ops)");
		return;
	}
	for (i = 0; i < n; i++) {
		if (parse_op(f[3 + i], &ops[i])) {
			respond_err(id, "inval", "an op is r<msr> or w<msr>=<value>");
			return;
		}
	}
	if (ptlab_fd >= 0) {
		b.cpu = (uint32_t)cpu;
		b.count = (uint32_t)n;
		b.ops = (uint64_t)(uintptr_t)ops;
		if (ioctl(ptlab_fd, PTLAB_IOC_MSR_BATCH, &b)) {
			respond_errno(id, errno);
			return;
		}
	} else {
		for (i = 0; i < n; i++) {
			uint64_t v = ops[i].value;
			int err = msr_access(cpu, ops[i].msr, &v, ops[i].write);

			ops[i].value = v;

			b.done = (uint32_t)i + 1;
			if (err == EIO) {
				ops[i].err = -EIO;
				break;
			}
			if (err) {
				respond_errno(id, err);
				return;
			}
		}
	}
	out_str(&o, " ok");
	for (i = 0; i < (int)b.done; i++) {
		if (ops[i].err)
			out_str(&o, " gp");
		else
			out_hex64(&o, ops[i].value);
	}
	respond(id, &o);
	free(o.buf);
}

void do_alloc(const char *id, char **f, int nf)
{
	struct ptlab_buf b = { 0 };
	struct out o = { 0 };
	uint64_t size;

	if (nf != 3 || parse_u64(f[2], &size)) {
		respond_err(id, "inval", "usage: alloc <size>");
		return;
	}
	if (!need_module(id))
		return;
	b.size = size;
	if (ioctl(ptlab_fd, PTLAB_IOC_BUF_ALLOC, &b)) {
		respond_errno(id, errno);
		return;
	}
	out_str(&o, " ok");
	out_hex64(&o, b.id);
	out_hex64(&o, b.phys);
	respond(id, &o);
	free(o.buf);
}

/**
 * parse_id - a buffer id (a 32-bit number)
 * @s: the text
 * @idv: out: the id
 * Return: 0, or -1 if malformed.
 */
static int parse_id(const char *s, uint32_t *idv)
{
	uint64_t v;

	if (parse_u64(s, &v) || v > 0xffffffffu)
		return -1;
	*idv = (uint32_t)v;
	return 0;
}

void do_free(const char *id, char **f, int nf)
{
	struct ptlab_buf b = { 0 };

	if (nf != 3 || parse_id(f[2], &b.id)) {
		respond_err(id, "inval", "usage: free <id>");
		return;
	}
	if (!need_module(id))
		return;
	if (ioctl(ptlab_fd, PTLAB_IOC_BUF_FREE, &b))
		respond_errno(id, errno);
	else
		respond_ok(id);
}

void do_freeall(const char *id, char **f, int nf)
{
	(void)f;
	(void)nf;
	if (!need_module(id))
		return;
	if (ioctl(ptlab_fd, PTLAB_IOC_BUF_FREE_ALL))
		respond_errno(id, errno);
	else
		respond_ok(id);
}

/**
 * buf_io - copy between buffer @bid and @data (PTLAB_IOC_BUF_READ, PTLAB_IOC_BUF_WRITE)
 * @bid: the buffer
 * @off: the first byte, from the buffer's start
 * @data: the bytes
 * @len: how many
 * @write: into the buffer
 * Return: 0, or an errno value.
 */
static int buf_io(uint32_t bid, uint64_t off, void *data, uint64_t len, int write)
{
	struct ptlab_buf_io io = {
		.id = bid, .offset = off, .len = len, .data = (uint64_t)(uintptr_t)data,
	};

	return ioctl(ptlab_fd, write ? PTLAB_IOC_BUF_WRITE : PTLAB_IOC_BUF_READ, &io) ? errno : 0;
}

void do_bufread(const char *id, char **f, int nf)
{
	uint32_t bid;
	uint64_t off, len;
	unsigned char *data;
	struct out o = { 0 };
	int err;

	if (nf != 5 || parse_id(f[2], &bid) || parse_u64(f[3], &off) || parse_u64(f[4], &len) ||
	    len > BUFREAD_MAX) {
		respond_err(id, "inval", "usage: bufread <id> <offset> <len <= 256 KiB>");
		return;
	}
	if (!need_module(id))
		return;
	data = malloc(len ? len : 1);
	if (!data) {
		respond_errno(id, ENOMEM);
		return;
	}
	err = buf_io(bid, off, data, len, 0);
	if (err) {
		respond_errno(id, err);
	} else {
		out_str(&o, " ok");
		out_hexbytes(&o, data, len);
		respond(id, &o);
		free(o.buf);
	}
	free(data);
}

void do_bufwrite(const char *id, char **f, int nf)
{
	uint32_t bid;
	uint64_t off;
	unsigned char *data = NULL;
	size_t len = 0;
	int err;

	if (nf != 5 || parse_id(f[2], &bid) || parse_u64(f[3], &off) ||
	    unhex_bytes(f[4], &data, &len)) {
		respond_err(id, "inval", "usage: bufwrite <id> <offset> <hex bytes>");
		return;
	}
	if (need_module(id)) {
		err = buf_io(bid, off, data, len, 1);
		if (err)
			respond_errno(id, err);
		else
			respond_ok(id);
	}
	free(data);
}

/**
 * buf_size - the size of buffer @bid, found by probing reads (sizes are powers of two)
 * @bid: the buffer
 * @size: out: its size
 * Return: 0, or an errno value.
 */
static int buf_size(uint32_t bid, uint64_t *size)
{
	unsigned char c;
	uint64_t s;
	int err = buf_io(bid, 0, &c, 1, 0);

	if (err)
		return err;
	for (s = 4096; s <= (4096ull << PTLAB_MAX_ORDER); s *= 2) {
		if (buf_io(bid, s, &c, 0, 0) == 0 && buf_io(bid, s, &c, 1, 0) != 0) {
			*size = s;
			return 0;
		}
	}
	return EIO;
}

/**
 * do_buffill - fill a whole buffer with a xorshift32 stream (x ^= x<<13; x ^= x>>17; x ^= x<<5)
 * @id: the request's id
 * @f: the request's fields
 * @nf: how many
 */
void do_buffill(const char *id, char **f, int nf)
{
	uint32_t bid, x, *chunk;
	uint64_t seed, off, size;
	int err;

	if (nf != 4 || parse_id(f[2], &bid) || parse_u64(f[3], &seed) || seed == 0 ||
	    seed > 0xffffffffu) {
		respond_err(id, "inval", "usage: buffill <id> <seed: nonzero 32-bit>");
		return;
	}
	if (!need_module(id))
		return;
	err = buf_size(bid, &size);
	if (err) {
		respond_errno(id, err);
		return;
	}
	chunk = malloc(CHUNK);
	if (!chunk) {
		respond_errno(id, ENOMEM);
		return;
	}
	x = (uint32_t)seed;
	for (off = 0; off < size && !err; off += CHUNK) {
		uint64_t n = size - off < CHUNK ? size - off : CHUNK;

		for (size_t i = 0; i < n / 4; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			chunk[i] = x;	/* x86 is little-endian */
		}
		err = buf_io(bid, off, chunk, n, 1);
	}
	free(chunk);
	if (err)
		respond_errno(id, err);
	else
		respond_ok(id);
}

void do_hash(const char *id, char **f, int nf)
{
	uint32_t bid;
	uint64_t off = 0, len = 0, done;
	unsigned char *chunk, digest[32];
	struct sha256 h;
	struct out o = { 0 };
	int err;

	if ((nf != 3 && nf != 5) || parse_id(f[2], &bid) ||
	    (nf == 5 && (parse_u64(f[3], &off) || parse_u64(f[4], &len)))) {
		respond_err(id, "inval", "usage: hash <id> [<offset> <len>]");
		return;
	}
	if (!need_module(id))
		return;
	if (nf == 3) {
		err = buf_size(bid, &len);
		if (err) {
			respond_errno(id, err);
			return;
		}
	}
	chunk = malloc(CHUNK);
	if (!chunk) {
		respond_errno(id, ENOMEM);
		return;
	}
	sha256_init(&h);
	for (done = 0, err = 0; done < len && !err; done += CHUNK) {
		uint64_t n = len - done < CHUNK ? len - done : CHUNK;

		err = buf_io(bid, off + done, chunk, n, 0);
		if (!err)
			sha256_update(&h, chunk, n);
	}
	free(chunk);
	if (err) {
		respond_errno(id, err);
		return;
	}
	sha256_final(&h, digest);
	out_str(&o, " ok");
	out_hexbytes(&o, digest, sizeof(digest));
	respond(id, &o);
	free(o.buf);
}

void do_xsave(const char *id, char **f, int nf, int restore)
{
	struct ptlab_xsave x = { 0 };
	unsigned char *area = NULL;
	size_t len = 0;
	uint64_t cpu, rfbm;
	struct out o = { 0 };

	if (nf != (restore ? 5 : 4) || parse_u64(f[2], &cpu) || cpu > 0xffffffffu ||
	    parse_u64(f[3], &rfbm) ||
	    (restore && (unhex_bytes(f[4], &area, &len) || len > PTLAB_XSAVE_MAX))) {
		free(area);
		respond_err(id, "inval", restore ? "usage: xrstors <cpu> <rfbm> <hex area>" :
						   "usage: xsaves <cpu> <rfbm>");
		return;
	}
	if (!need_module(id)) {
		free(area);
		return;
	}
	if (!restore) {
		area = calloc(1, PTLAB_XSAVE_MAX);
		if (!area) {
			respond_errno(id, ENOMEM);
			return;
		}
	}
	x.cpu = (uint32_t)cpu;
	x.rfbm = rfbm;
	x.len = (uint32_t)len;
	x.area = (uint64_t)(uintptr_t)area;
	if (ioctl(ptlab_fd, restore ? PTLAB_IOC_XRSTORS : PTLAB_IOC_XSAVES, &x)) {
		int err = errno;

		if (err == EOPNOTSUPP)
			respond_err(id, "unsupported",
				    "XSAVES of PT state needs CPUID.(EAX=0DH,ECX=1):EAX[3] (XSAVES) and ECX[8] (IA32_XSS[8])");
		else
			respond_errno(id, err);
	} else if (restore) {
		respond_ok(id);
	} else {
		out_str(&o, " ok");
		out_hexbytes(&o, area, x.len);
		respond(id, &o);
		free(o.buf);
	}
	free(area);
}

/* The CPUs this helper's file armed (the module disarms them all at the file's release). */
static unsigned char armed[CPU_SETSIZE];

/**
 * module_open - open the module's file, once per helper or per reopen (ptlab_fd is -1 when the
 * module is not loaded)
 */
void module_open(void)
{
	ptlab_fd = open(PTLAB_DEVICE, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	memset(armed, 0, sizeof(armed));
}

/**
 * pmi_task_of - make @pid the task the top half of @cpu freezes, when this helper armed @cpu
 * @cpu: the CPU
 * @pid: the task
 */
void pmi_task_of(uint64_t cpu, pid_t pid)
{
	struct ptlab_pmi_task t = { .cpu = (uint32_t)cpu, .pid = pid };

	if (ptlab_fd >= 0 && cpu < CPU_SETSIZE && armed[cpu])
		ioctl(ptlab_fd, PTLAB_IOC_PMI_TASK, &t);
}

/**
 * parse_cpu - a CPU number the helper can pin to
 * @s: the text
 * @cpu: out: the CPU
 * Return: 0, or -1.
 */
static int parse_cpu(const char *s, uint64_t *cpu)
{
	return parse_u64(s, cpu) || *cpu >= CPU_SETSIZE ? -1 : 0;
}

/**
 * do_arm - "arm <cpu> <flags>": the module claims the CPU's ToPA PMIs for this helper's file
 * @id: the request's id
 * @f: the request's fields
 * @nf: how many
 *
 * The workload running there becomes the task its top half freezes, and the helper moves off it.
 */
void do_arm(const char *id, char **f, int nf)
{
	struct ptlab_pmi_arm a = { 0 };
	uint64_t cpu, flags;
	pid_t pid;

	if (nf != 4 || parse_cpu(f[2], &cpu) || parse_u64(f[3], &flags) || flags > 0xffffffffu) {
		respond_err(id, "inval",
			    "usage: arm <cpu> <flags: bit 1 clear TraceEn, bit 2 freeze>");
		return;
	}
	if (!need_module(id))
		return;
	a.cpu = (uint32_t)cpu;
	a.flags = (uint32_t)flags;
	if (ioctl(ptlab_fd, PTLAB_IOC_PMI_ARM, &a)) {
		respond_errno(id, errno);
		return;
	}
	armed[cpu] = 1;
	avoid_cpu(cpu);
	pid = run_pid_on(cpu);
	if (pid > 0)
		pmi_task_of(cpu, pid);
	respond_ok(id);
}

void do_task(const char *id, char **f, int nf)
{
	struct ptlab_pmi_task t = { 0 };
	uint64_t cpu, pid;

	if (nf != 4 || parse_cpu(f[2], &cpu) || parse_u64(f[3], &pid) || pid > 0x7fffffff) {
		respond_err(id, "inval", "usage: task <cpu> <pid, 0 for none>");
		return;
	}
	if (!need_module(id))
		return;
	t.cpu = (uint32_t)cpu;
	t.pid = (int32_t)pid;
	if (ioctl(ptlab_fd, PTLAB_IOC_PMI_TASK, &t))
		respond_errno(id, errno);
	else
		respond_ok(id);
}

/**
 * out_cpus - " <key>=<list>": the CPUs of a kstate bitmap as "0,2-3", or "-"
 * @o: the answer being built
 * @key: the key
 * @words: the bitmap
 * @n: the CPUs it may hold (nr_cpu_ids)
 */
static void out_cpus(struct out *o, const char *key, const __u64 *words, uint32_t n)
{
	char tmp[32];
	int first = 1;

	out_str(o, " ");
	out_str(o, key);
	out_str(o, "=");
	for (uint32_t c = 0; c < n && c < PTLAB_KSTATE_CPUS; c++) {
		uint32_t end = c;

		if (!(words[c / 64] >> (c % 64) & 1))
			continue;
		while (end + 1 < n && end + 1 < PTLAB_KSTATE_CPUS &&
		       (words[(end + 1) / 64] >> ((end + 1) % 64) & 1))
			end++;
		snprintf(tmp, sizeof(tmp), end > c ? "%s%u-%u" : "%s%u", first ? "" : ",", c, end);
		out_str(o, tmp);
		first = 0;
		c = end;
	}
	if (first)
		out_str(o, "-");
}

/**
 * out_kv - " <key>=0x<value>"
 * @o: the answer being built
 * @key: the key
 * @v: the value
 */
static void out_kv(struct out *o, const char *key, uint64_t v)
{
	char tmp[64];

	snprintf(tmp, sizeof(tmp), " %s=0x%llx", key, (unsigned long long)v);
	out_str(o, tmp);
}

/**
 * kstate_line - the module's state (PTLAB_IOC_KSTATE) as " key=value" fields
 * @o: the answer being built
 * Return: 0, or an errno value.
 */
int kstate_line(struct out *o)
{
	struct ptlab_kstate k;

	if (ioctl(ptlab_fd, PTLAB_IOC_KSTATE, &k))
		return errno;
	out_kv(o, "abi", k.abi);
	out_kv(o, "files", k.files);
	out_kv(o, "buffers", k.buffers);
	out_kv(o, "bytes", k.bytes);
	out_kv(o, "orphans", k.orphans);
	out_kv(o, "orphan_bytes", k.orphan_bytes);
	out_kv(o, "mine_buffers", k.mine_buffers);
	out_kv(o, "mine_bytes", k.mine_bytes);
	out_kv(o, "lockdown", k.lockdown);
	out_kv(o, "nr_cpus", k.nr_cpus);
	out_cpus(o, "armed", k.armed, k.nr_cpus);
	out_cpus(o, "armed_mine", k.armed_mine, k.nr_cpus);
	out_cpus(o, "owned", k.owned, k.nr_cpus);
	out_cpus(o, "owned_mine", k.owned_mine, k.nr_cpus);
	out_cpus(o, "taken", k.taken, k.nr_cpus);
	return 0;
}

void do_kstate(const char *id, char **f, int nf)
{
	struct out o = { 0 };
	int err;

	(void)f;
	if (nf != 2) {
		respond_err(id, "inval", "usage: kstate");
		return;
	}
	if (!need_module(id))
		return;
	out_str(&o, " ok");
	err = kstate_line(&o);
	if (err)
		respond_errno(id, err);
	else
		respond(id, &o);
	free(o.buf);
}

/**
 * do_close - close the module's file: its release stops PT on its CPUs and frees its buffers
 * @id: the request's id
 * @f: the request's fields
 * @nf: how many
 */
void do_close(const char *id, char **f, int nf)
{
	(void)f;
	(void)nf;
	if (ptlab_fd >= 0)
		close(ptlab_fd);
	ptlab_fd = -1;
	pmi_streaming = 0;
	memset(armed, 0, sizeof(armed));
	respond_ok(id);
}

/**
 * do_reopen - close the module's file if open, and open it again
 * @id: the request's id
 * @f: the request's fields
 * @nf: how many
 */
void do_reopen(const char *id, char **f, int nf)
{
	struct out o = { 0 };

	(void)f;
	(void)nf;
	if (ptlab_fd >= 0)
		close(ptlab_fd);
	pmi_streaming = 0;
	module_open();
	if (ptlab_fd < 0) {
		respond_errno(id, errno == ENOENT ? ENODEV : errno);
		return;
	}
	out_str(&o, " ok");
	respond(id, &o);
	free(o.buf);
}

/**
 * cpu_ioctl - an ioctl whose argument is a CPU number, answered
 * @id: the request's id
 * @f: the request's fields
 * @nf: how many
 * @cmd: the ioctl
 * @usage: the answer to a malformed request
 * Return: the CPU, or -1.
 */
static long cpu_ioctl(const char *id, char **f, int nf, unsigned long cmd, const char *usage)
{
	uint64_t cpu;
	uint32_t c;

	if (nf != 3 || parse_u64(f[2], &cpu) || cpu > 0xffffffffu) {
		respond_err(id, "inval", usage);
		return -1;
	}
	if (!need_module(id))
		return -1;
	c = (uint32_t)cpu;
	if (ioctl(ptlab_fd, cmd, &c)) {
		respond_errno(id, errno);
		return -1;
	}
	respond_ok(id);
	return (long)cpu;
}

void do_disarm(const char *id, char **f, int nf)
{
	long cpu = cpu_ioctl(id, f, nf, PTLAB_IOC_PMI_DISARM, "usage: disarm <cpu>");

	if (cpu >= 0 && cpu < CPU_SETSIZE)
		armed[cpu] = 0;
}

void do_unmask(const char *id, char **f, int nf)
{
	cpu_ioctl(id, f, nf, PTLAB_IOC_PMI_UNMASK, "usage: unmask <cpu>");
}

void do_pmitest(const char *id, char **f, int nf)
{
	cpu_ioctl(id, f, nf, PTLAB_IOC_PMI_TEST, "usage: pmitest <cpu>");
}

void do_events(const char *id, char **f, int nf)
{
	if (nf != 3 || (strcmp(f[2], "on") && strcmp(f[2], "off"))) {
		respond_err(id, "inval", "usage: events on|off");
		return;
	}
	if (!need_module(id))
		return;
	pmi_streaming = !strcmp(f[2], "on");
	respond_ok(id);
	if (pmi_streaming)
		pmi_drain();
}

/**
 * pmi_drain - send every PMI event the module has as a "* pmi ..." line
 */
void pmi_drain(void)
{
	struct ptlab_pmi_event ev[16];
	ssize_t n;

	if (ptlab_fd < 0)
		return;
	while ((n = read(ptlab_fd, ev, sizeof(ev))) > 0) {
		for (size_t i = 0; i < (size_t)n / sizeof(ev[0]); i++) {
			struct out o = { 0 };

			out_str(&o, " pmi");
			out_hex64(&o, ev[i].cpu);
			out_hex64(&o, ev[i].flags);
			out_hex64(&o, ev[i].seq);
			out_hex64(&o, ev[i].global_status);
			out_hex64(&o, ev[i].ctl);
			out_hex64(&o, ev[i].status);
			out_hex64(&o, ev[i].tsc);
			emit_event(&o);
			free(o.buf);
		}
	}
}
