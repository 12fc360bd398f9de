// SPDX-License-Identifier: MIT
/*
 * kverbs.c - the helper verbs backed by the ptlab module (guest/kmod/ptlab_uapi.h): MSR batches,
 * buffers (alloc/free/read/write/fill/sha256), XSAVES/XRSTORS and the ToPA PMI event stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "proto.h"
#include "ptlab_uapi.h"
#include "sha256.h"

#define BUFREAD_MAX	(256u << 10)
#define CHUNK		(1u << 20)

int pmi_streaming;
int msr_access(uint64_t cpu, uint32_t msr, uint64_t *val, int write);

/** need_module - answer nodev when /dev/ptlab is absent; Return: 1 if the module is there */
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

/** parse_op - "r<msr>" or "w<msr>=<value>"; Return: 0, or -1 if malformed */
static int parse_op(char *s, struct ptlab_msr_op *op)
{
	char *eq;
	uint64_t msr, val = 0;

	memset(op, 0, sizeof(*op));
	if (s[0] != 'r' && s[0] != 'w')
		return -1;
	op->write = s[0] == 'w';
	eq = strchr(s + 1, '=');
	if (op->write != (eq != NULL))
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
 * do_msrs - a batch: one IPI through the module, else one /dev/cpu access per op. Results are
 * data: the value of each executed op, and "gp" for the op whose #GP ended the batch.
 */
void do_msrs(const char *id, char **f, int nf)
{
	struct ptlab_msr_op ops[PTLAB_MAX_BATCH];
	struct ptlab_msr_batch b = { 0 };
	struct out o = { 0 };
	uint64_t cpu;
	int n = nf - 3, i;

	if (nf < 3 || parse_u64(f[2], &cpu) || cpu > 0xffffffffu || n > PTLAB_MAX_BATCH) {
		respond_err(id, "inval", "usage: msrs <cpu> r<msr>|w<msr>=<value>... (at most 256 ops)");
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

/** parse_id - a buffer id (a 32-bit number) */
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

/** buf_io - copy between buffer @bid and @data; Return: 0 or an errno value */
static int buf_io(uint32_t bid, uint64_t off, void *data, uint64_t len, int write)
{
	struct ptlab_buf_io io = { .id = bid, .offset = off, .len = len, .data = (uint64_t)(uintptr_t)data };

	return ioctl(ptlab_fd, write ? PTLAB_IOC_BUF_WRITE : PTLAB_IOC_BUF_READ, &io) ? errno : 0;
}

void do_bufread(const char *id, char **f, int nf)
{
	uint32_t bid;
	uint64_t off, len;
	unsigned char *data;
	struct out o = { 0 };
	int err;

	if (nf != 5 || parse_id(f[2], &bid) || parse_u64(f[3], &off) || parse_u64(f[4], &len) || len > BUFREAD_MAX) {
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

	if (nf != 5 || parse_id(f[2], &bid) || parse_u64(f[3], &off) || unhex_bytes(f[4], &data, &len)) {
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

/** buf_size - the size of buffer @bid, found by probing reads (sizes are powers of two) */
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

/** do_buffill - fill a whole buffer with a xorshift32 stream (x ^= x<<13; x ^= x>>17; x ^= x<<5) */
void do_buffill(const char *id, char **f, int nf)
{
	uint32_t bid, x, *chunk;
	uint64_t seed, off, size;
	int err;

	if (nf != 4 || parse_id(f[2], &bid) || parse_u64(f[3], &seed) || seed == 0 || seed > 0xffffffffu) {
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

	if (nf != (restore ? 5 : 4) || parse_u64(f[2], &cpu) || cpu > 0xffffffffu || parse_u64(f[3], &rfbm) ||
	    (restore && (unhex_bytes(f[4], &area, &len) || len > PTLAB_XSAVE_MAX))) {
		free(area);
		respond_err(id, "inval", restore ? "usage: xrstors <cpu> <rfbm> <hex area>" : "usage: xsaves <cpu> <rfbm>");
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

void do_pmi(const char *id, char **f, int nf)
{
	struct ptlab_pmi_config c = { 0 };
	uint64_t flags;

	if (nf != 3 || parse_u64(f[2], &flags) || flags > 0xffffffffu) {
		respond_err(id, "inval", "usage: pmi <flags: bit 0 claim, bit 1 clear TraceEn>");
		return;
	}
	if (!need_module(id))
		return;
	c.flags = (uint32_t)flags;
	if (ioctl(ptlab_fd, PTLAB_IOC_PMI_CONFIG, &c))
		respond_errno(id, errno);
	else
		respond_ok(id);
}

/** cpu_ioctl - an ioctl whose argument is a CPU number */
static void cpu_ioctl(const char *id, char **f, int nf, unsigned long cmd, const char *usage)
{
	uint64_t cpu;
	uint32_t c;

	if (nf != 3 || parse_u64(f[2], &cpu) || cpu > 0xffffffffu) {
		respond_err(id, "inval", usage);
		return;
	}
	if (!need_module(id))
		return;
	c = (uint32_t)cpu;
	if (ioctl(ptlab_fd, cmd, &c))
		respond_errno(id, errno);
	else
		respond_ok(id);
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

/** pmi_drain - send every PMI event the module has as a "* pmi ..." line */
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
