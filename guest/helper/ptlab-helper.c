// SPDX-License-Identifier: MIT
/*
 * ptlab-helper - the guest end of ptlab's line protocol (docs/design.md "Guest side").
 *
 * Serves requests on a virtio-serial port given as its argument (persistent, low latency), or on
 * stdin/stdout when started without one (e.g. over SSH). Same protocol either way.
 * `ptlab-helper [--allow-exec] [port]`: without --allow-exec the exec verb answers perm (only the
 * test guest's image starts the helper with it: a line protocol that runs shell commands as root
 * is not something a lab machine should expose).
 *
 * Protocol: one request per line, one response line per request, in order.
 *   request:  <id> <verb> [args...]            (fields separated by single spaces)
 *   response: <id> ok [values...]
 *             <id> err <code> <message...>
 *   event:    * <kind> [values...]             (unsolicited; never has an id)
 * Numbers are hex with 0x; <id> is an opaque token echoed back. Verbs:
 *   ping                       -> ok pong
 *   info                       -> ok <module 0|1> <online cpus>
 *   cpuid <cpu> <leaf> <sub>   -> ok <eax> <ebx> <ecx> <edx>
 *   rdmsr <cpu> <msr>          -> ok <value>
 *   wrmsr <cpu> <msr> <value>  -> ok
 *   msrs <cpu> <op>...         -> ok <result>...   op: r<msr> | w<msr>=<value>; one result per
 *                                 executed op: the value, or "gp" for the #GP that ended the batch
 *   alloc <size>               -> ok <id> <phys>    (physically contiguous, size-aligned, zeroed)
 *   free <id> / freeall        -> ok
 *   bufread <id> <off> <len>   -> ok <hex>          (len <= 256 KiB)
 *   bufwrite <id> <off> <hex>  -> ok
 *   buffill <id> <seed>        -> ok                (xorshift32 stream from seed, little-endian)
 *   hash <id> [<off> <len>]    -> ok <sha256 hex>
 *   xsaves <cpu> <rfbm>        -> ok <hex area>
 *   xrstors <cpu> <rfbm> <hex> -> ok
 *   arm <cpu> <flags>          -> ok    claim ToPA PMIs on <cpu> (flags: bit 1 clear TraceEn in
 *                                       the handler, bit 2 freeze the CPU's workload); the helper
 *                                       then keeps off <cpu>
 *   disarm <cpu>               -> ok
 *   task <cpu> <pid>           -> ok    the workload the top half of <cpu> freezes (0: none);
 *                                       run and arm set it themselves
 *   unmask <cpu>               -> ok    (LVT performance-monitor entry = NMI, unmasked)
 *   pmitest <cpu>              -> ok    (a synthetic event, to test the event path)
 *   events on|off              -> ok    then "* pmi <cpu> <flags> <seq> <gs> <ctl> <status> <tsc>"
 *   kstate                     -> ok <key>=<value>...  (the module's PTLAB_IOC_KSTATE)
 *   close / reopen             -> ok    close the module's file (its release: PT stopped, buffers
 *                                       freed) / close it if open and open it again
 *   state                      -> ok <hex of "key=value" lines>: the facts `ptlab doctor` checks
 *   put <path> <hex>           -> ok    (writes a file)
 *   run <cpu> <path>@<base> <entry> [held]
 *                              -> ok <pid> [<cr3>], later "* exit <pid> <status>". Held: the
 *                                 answer comes once the child waits at its entry, with the CR3
 *                                 its user code runs under ("-" when the module cannot tell)
 *   go <pid>                   -> ok    a held child runs from its entry
 *   cont <pid>                 -> ok    SIGCONT: a workload the top half froze runs on
 *   kill <pid>                 -> ok
 *   exec <hex of a sh -c command line>
 *                              -> ok <status> <hex stdout> <hex stderr>   (needs --allow-exec)
 *      status: exit code, or 0x100 + signal number when killed by a signal; "-" for empty output.
 * MSRs, CPUID, buffers, XSAVES and PMIs go through the ptlab module (/dev/ptlab: guest/kmod);
 * without it, cpuid/rdmsr/wrmsr/msrs fall back to /dev/cpu/N/{cpuid,msr} and the rest answer
 * nodev. Error codes: gp (the CPU raised #GP), nodev (no such CPU, or the module/driver is not
 * loaded), unsupported (the CPU does not enumerate the feature), nomem (no contiguous memory or
 * a module limit), noent (no such buffer, file or process), inval (malformed request, or the
 * module's reach check), perm (the module's or the helper's policy: an MSR outside the
 * allowlist, lockdown, exec without --allow-exec), busy (another file holds the CPU or buffer,
 * or a tracing CPU reaches the buffer), unknown (unknown verb), io (any other errno; the
 * message names it).
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"
#include "ptlab_uapi.h"

#define LINE_MAX_BYTES	(1024 * 1024)
#define OUTPUT_MAX	(1024 * 1024)
#define MAX_FIELDS	(PTLAB_MAX_BATCH + 4)
/* The kernel's ARRAY_SIZE (include/linux/array_size.h), without its __must_be_array check. */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static int unhex(const char *s, char **out);

static int in_fd, out_fd = 1;
static int from_port;
static int allow_exec;
int ptlab_fd = -1;
static int sigchld_pipe[2] = { -1, -1 };

/**
 * write_all - write a whole buffer, retrying short writes
 * @fd: the file
 * @buf: the bytes
 * @len: how many
 * Return: 0, or -1 with errno set.
 */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/**
 * out_add - append bytes to a line, which stays NUL-terminated
 * @o: the line
 * @s: the bytes
 * @n: how many
 */
void out_add(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 256;

		while (cap < o->len + n + 1)
			cap *= 2;
		o->buf = realloc(o->buf, cap);
		if (!o->buf)
			abort();
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/**
 * out_str - append a string to a line
 * @o: the line
 * @s: the string
 */
void out_str(struct out *o, const char *s)
{
	out_add(o, s, strlen(s));
}

/**
 * out_hex64 - append " 0x<v>" to a line
 * @o: the line
 * @v: the number
 */
void out_hex64(struct out *o, uint64_t v)
{
	char tmp[24];

	snprintf(tmp, sizeof(tmp), " 0x%llx", (unsigned long long)v);
	out_str(o, tmp);
}

/**
 * out_hexbytes - append " <hex of the bytes>" to a line, " -" for none
 * @o: the line
 * @p: the bytes
 * @n: how many
 */
void out_hexbytes(struct out *o, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char pair[2];

	out_str(o, " ");
	if (n == 0) {
		out_str(o, "-");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		pair[0] = digits[p[i] >> 4];
		pair[1] = digits[p[i] & 15];
		out_add(o, pair, 2);
	}
}

/**
 * respond - send "<id><body>\n"
 * @id: the request's id
 * @body: the answer: " ok ..." or " err ..."
 */
void respond(const char *id, struct out *body)
{
	struct out line = { 0 };

	out_str(&line, id);
	out_add(&line, body->buf ? body->buf : "", body->len);
	out_str(&line, "\n");
	write_all(out_fd, line.buf, line.len);
	free(line.buf);
}

/**
 * respond_err - send "<id> err <code> <msg>"
 * @id: the request's id
 * @code: the protocol's error code
 * @msg: what went wrong
 */
void respond_err(const char *id, const char *code, const char *msg)
{
	struct out o = { 0 };

	out_str(&o, " err ");
	out_str(&o, code);
	out_str(&o, " ");
	out_str(&o, msg);
	respond(id, &o);
	free(o.buf);
}

/**
 * respond_ok - send "<id> ok"
 * @id: the request's id
 */
void respond_ok(const char *id)
{
	struct out o = { 0 };

	out_str(&o, " ok");
	respond(id, &o);
	free(o.buf);
}

/**
 * emit_event - send "* <body>"
 * @body: the event, beginning with a space
 */
void emit_event(struct out *body)
{
	respond("*", body);
}

/**
 * errno_code - map an errno of the module or the msr/cpuid drivers to a protocol error code
 * @err: the errno value
 * Return: the code.
 */
const char *errno_code(int err)
{
	switch (err) {
	case EIO:
		return "gp";
	case ENXIO:
	case ENODEV:
		return "nodev";
	case ENOENT:
		return "noent";
	case EOPNOTSUPP:
		return "unsupported";
	case ENOMEM:
	case ENOSPC:
		return "nomem";
	case EINVAL:
		return "inval";
	case EPERM:
	case EACCES:
		return "perm";
	case EBUSY:
		return "busy";
	case ESRCH:
		return "noent";
	default:
		return "io";
	}
}

/**
 * parse_u64 - parse a number (0x hex or decimal)
 * @s: the text
 * @v: out: the number
 * Return: 0, or -1 if malformed.
 */
int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno || *end) ? -1 : 0;
}

/**
 * dev_pio - pread or pwrite 8 or 16 bytes at @pos of /dev/cpu/@cpu/@name
 * @name: "msr" or "cpuid"
 * @cpu: the CPU
 * @pos: the file offset: the MSR, or the CPUID leaf and subleaf
 * @buf: the bytes
 * @len: how many
 * @write: pwrite
 * Return: 0, or an errno value.
 */
static int dev_pio(const char *name, uint64_t cpu, uint64_t pos, void *buf, size_t len, int write)
{
	char path[64];
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/dev/cpu/%llu/%s", (unsigned long long)cpu, name);
	fd = open(path, write ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return errno;
	n = write ? pwrite(fd, buf, len, (off_t)pos) : pread(fd, buf, len, (off_t)pos);
	if (n < 0)
		err = errno;
	else if ((size_t)n != len)
		err = EIO;
	close(fd);
	return err;
}

/**
 * msr_access - RDMSR/WRMSR on @cpu through the module (PTLAB_IOC_RDMSR, PTLAB_IOC_WRMSR), else
 * /dev/cpu/N/msr
 * @cpu: the CPU
 * @msr: the MSR's address
 * @val: in for WRMSR, out for RDMSR
 * @write: WRMSR
 * Return: 0, or an errno value (EIO for #GP).
 */
int msr_access(uint64_t cpu, uint32_t msr, uint64_t *val, int write)
{
	int err;

	if (ptlab_fd >= 0) {
		struct ptlab_msr m = { .cpu = (uint32_t)cpu, .msr = msr, .value = *val };

		if (cpu > UINT32_MAX)
			return ENXIO;
		if (ioctl(ptlab_fd, write ? PTLAB_IOC_WRMSR : PTLAB_IOC_RDMSR, &m))
			return errno;
		*val = m.value;
		return 0;
	}
	err = dev_pio("msr", cpu, msr, val, sizeof(*val), write);
	/* No /dev/cpu/N/msr: the msr driver is not loaded. */
	return err == ENOENT ? ENODEV : err;
}

static void do_cpuid(const char *id, char **f, int nf)
{
	uint64_t cpu, leaf, sub;
	uint32_t regs[4];
	struct out o = { 0 };
	int err;

	if (nf != 5 || parse_u64(f[2], &cpu) || parse_u64(f[3], &leaf) || parse_u64(f[4], &sub) ||
	    leaf > 0xffffffffu || sub > 0xffffffffu) {
		respond_err(id, "inval", "usage: cpuid <cpu> <leaf> <subleaf>");
		return;
	}
	if (ptlab_fd >= 0) {
		struct ptlab_cpuid c = {
			.cpu = (uint32_t)cpu, .leaf = (uint32_t)leaf, .subleaf = (uint32_t)sub,
		};

		err = cpu > UINT32_MAX ? ENXIO : ioctl(ptlab_fd, PTLAB_IOC_CPUID, &c) ? errno : 0;
		regs[0] = c.eax;
		regs[1] = c.ebx;
		regs[2] = c.ecx;
		regs[3] = c.edx;
	} else {
		/* The cpuid driver's offset: the leaf in bits 31:0, the subleaf in bits 63:32. */
		err = dev_pio("cpuid", cpu, (sub << 32) | leaf, regs, sizeof(regs), 0);
	}
	if (err) {
		respond_err(id, errno_code(err), strerror(err));
		return;
	}
	out_str(&o, " ok");
	for (int i = 0; i < 4; i++)
		out_hex64(&o, regs[i]);
	respond(id, &o);
	free(o.buf);
}

static void do_rdmsr(const char *id, char **f, int nf)
{
	uint64_t cpu, msr, val;
	struct out o = { 0 };
	int err;

	if (nf != 4 || parse_u64(f[2], &cpu) || parse_u64(f[3], &msr) || msr > 0xffffffffu) {
		respond_err(id, "inval", "usage: rdmsr <cpu> <msr>");
		return;
	}
	err = msr_access(cpu, (uint32_t)msr, &val, 0);
	if (err) {
		respond_err(id, errno_code(err), strerror(err));
		return;
	}
	out_str(&o, " ok");
	out_hex64(&o, val);
	respond(id, &o);
	free(o.buf);
}

static void do_wrmsr(const char *id, char **f, int nf)
{
	uint64_t cpu, msr, val;
	struct out o = { 0 };
	int err;

	if (nf != 5 || parse_u64(f[2], &cpu) || parse_u64(f[3], &msr) || parse_u64(f[4], &val) ||
	    msr > 0xffffffffu) {
		respond_err(id, "inval", "usage: wrmsr <cpu> <msr> <value>");
		return;
	}
	err = msr_access(cpu, (uint32_t)msr, &val, 1);
	if (err) {
		respond_err(id, errno_code(err), strerror(err));
		return;
	}
	out_str(&o, " ok");
	respond(id, &o);
	free(o.buf);
}

/**
 * unhex_bytes - decode hex text, or "-" for none, into a malloc'd buffer
 * @s: the text
 * @out: out: the buffer
 * @len: out: its length
 * Return: 0, or -1 if malformed.
 */
int unhex_bytes(const char *s, unsigned char **out, size_t *len)
{
	char *p;

	if (!strcmp(s, "-")) {
		*out = malloc(1);
		*len = 0;
		return *out ? 0 : -1;
	}
	if (unhex(s, &p))
		return -1;
	*out = (unsigned char *)p;
	*len = strlen(s) / 2;
	return 0;
}

static int unhex(const char *s, char **out)
{
	size_t n = strlen(s);
	char *p;

	if (n % 2)
		return -1;
	p = malloc(n / 2 + 1);
	if (!p)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1) {
			free(p);
			return -1;
		}
		p[i] = (char)b;
	}
	p[n / 2] = '\0';
	*out = p;
	return 0;
}

/* Captured output of one stream, capped at OUTPUT_MAX. */
struct capture {
	unsigned char *buf;
	size_t len;
	int fd;
};

static void capture_read(struct capture *c)
{
	unsigned char tmp[4096];
	ssize_t n = read(c->fd, tmp, sizeof(tmp));

	if (n <= 0) {
		close(c->fd);
		c->fd = -1;
		return;
	}
	if (c->len + (size_t)n > OUTPUT_MAX)
		n = (ssize_t)(OUTPUT_MAX - c->len);
	if (n > 0) {
		c->buf = realloc(c->buf, c->len + (size_t)n);
		if (!c->buf)
			abort();
		memcpy(c->buf + c->len, tmp, (size_t)n);
		c->len += (size_t)n;
	}
}

static void do_exec(const char *id, char **f, int nf)
{
	int po[2], pe[2], status;
	struct capture out = { 0 }, err = { 0 };
	struct out o = { 0 };
	char *cmd;
	pid_t pid;

	if (!allow_exec) {
		respond_err(id, "perm", "exec is off: the helper was started without --allow-exec");
		return;
	}
	if (nf != 3 || unhex(f[2], &cmd)) {
		respond_err(id, "inval", "usage: exec <hex of a shell command line>");
		return;
	}
	if (pipe(po) || pipe(pe)) {
		respond_err(id, "io", strerror(errno));
		free(cmd);
		return;
	}
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		dup2(devnull, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	free(cmd);
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		respond_err(id, "io", strerror(errno));
		return;
	}
	out.fd = po[0];
	err.fd = pe[0];
	while (out.fd >= 0 || err.fd >= 0) {
		struct pollfd pf[2] = { { out.fd, POLLIN, 0 }, { err.fd, POLLIN, 0 } };

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (out.fd >= 0 && pf[0].revents)
			capture_read(&out);
		if (err.fd >= 0 && pf[1].revents)
			capture_read(&err);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out_str(&o, " ok");
	out_hex64(&o, WIFEXITED(status) ? (uint64_t)WEXITSTATUS(status) :
			  0x100u + (uint64_t)WTERMSIG(status));
	out_hexbytes(&o, out.buf, out.len);
	out_hexbytes(&o, err.buf, err.len);
	respond(id, &o);
	free(o.buf);
	free(out.buf);
	free(err.buf);
}

static void do_info(const char *id)
{
	struct out o = { 0 };

	out_str(&o, " ok");
	out_hex64(&o, ptlab_fd >= 0);
	out_hex64(&o, (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	respond(id, &o);
	free(o.buf);
}

static void do_ping(const char *id, char **f, int nf)
{
	struct out o = { 0 };

	(void)f;
	(void)nf;
	out_str(&o, " ok pong");
	respond(id, &o);
	free(o.buf);
}

static void do_info_verb(const char *id, char **f, int nf)
{
	(void)f;
	(void)nf;
	do_info(id);
}

static void do_xsaves(const char *id, char **f, int nf)
{
	do_xsave(id, f, nf, 0);
}

static void do_xrstors(const char *id, char **f, int nf)
{
	do_xsave(id, f, nf, 1);
}

static void do_state_verb(const char *id, char **f, int nf)
{
	do_state(id, f, nf, allow_exec);
}

/* The protocol's verbs (guest/helper/proto.h): one line "ID VERB ARGS…" each. */
static const struct verb {
	const char *name;
	void (*handle)(const char *id, char **f, int nf);
} verbs[] = {
	{ "ping", do_ping },		{ "cpuid", do_cpuid },		{ "rdmsr", do_rdmsr },
	{ "wrmsr", do_wrmsr },		{ "exec", do_exec },		{ "info", do_info_verb },
	{ "msrs", do_msrs },		{ "alloc", do_alloc },		{ "free", do_free },
	{ "freeall", do_freeall },	{ "bufread", do_bufread },	{ "bufwrite", do_bufwrite },
	{ "buffill", do_buffill },	{ "hash", do_hash },		{ "xsaves", do_xsaves },
	{ "xrstors", do_xrstors },	{ "arm", do_arm },		{ "disarm", do_disarm },
	{ "task", do_task },		{ "kstate", do_kstate },	{ "close", do_close },
	{ "reopen", do_reopen },	{ "state", do_state_verb },	{ "unmask", do_unmask },
	{ "pmitest", do_pmitest },	{ "events", do_events },	{ "put", do_put },
	{ "run", do_run },		{ "kill", do_kill },		{ "go", do_go },
	{ "cont", do_cont },
};

static void handle_line(char *line)
{
	char *f[MAX_FIELDS + 1];
	int nf = 0;
	char *save, *tok;
	size_t i;

	for (tok = strtok_r(line, " \r", &save); tok && nf <= MAX_FIELDS;
	     tok = strtok_r(NULL, " \r", &save))
		f[nf++] = tok;
	if (nf == 0)
		return;
	if (nf < 2) {
		respond_err(f[0], "inval", "missing verb");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(verbs); i++) {
		if (!strcmp(f[1], verbs[i].name)) {
			verbs[i].handle(f[0], f, nf);
			return;
		}
	}
	respond_err(f[0], "unknown", f[1]);
}

static void on_sigchld(int sig)
{
	int saved = errno;
	ssize_t n;

	(void)sig;
	/* It fails only when the pipe is full: a wake-up is already pending. */
	n = write(sigchld_pipe[1], "c", 1);
	(void)n;
	errno = saved;
}

/**
 * serve_input - read what the host sent and handle each complete line
 * @buf: the bytes of an incomplete line so far
 * @len: in/out: how many
 * Return: 0, or -1 at EOF on stdin.
 */
static int serve_input(char *buf, size_t *len)
{
	ssize_t n = read(in_fd, buf + *len, LINE_MAX_BYTES - 1 - *len);
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	char *nl;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		if (!from_port)
			return -1;
		/* The host end is not connected: wait for it (virtio ports read EOF meanwhile). */
		nanosleep(&ts, NULL);
		return 0;
	}
	*len += (size_t)n;
	buf[*len] = '\0';
	while ((nl = memchr(buf, '\n', *len)) != NULL) {
		size_t used = (size_t)(nl - buf) + 1;

		*nl = '\0';
		handle_line(buf);
		memmove(buf, buf + used, *len - used);
		*len -= used;
	}
	if (*len == LINE_MAX_BYTES - 1)
		*len = 0;	/* an overlong line: drop it */
	return 0;
}

int main(int argc, char **argv)
{
	static char buf[LINE_MAX_BYTES];
	size_t len = 0;
	struct sigaction sa = { 0 };
	const char *port = NULL;

	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--allow-exec")) {
			allow_exec = 1;
		} else if (!port && argv[i][0] != '-') {
			port = argv[i];
		} else {
			fprintf(stderr, "usage: ptlab-helper [--allow-exec] [port]\n");
			return 2;
		}
	}
	if (port) {
		in_fd = open(port, O_RDWR | O_CLOEXEC);
		if (in_fd < 0) {
			fprintf(stderr, "ptlab-helper: %s: %s\n", port, strerror(errno));
			return 1;
		}
		out_fd = in_fd;
		from_port = 1;
	}
	module_open();
	if (pipe(sigchld_pipe) == 0) {
		fcntl(sigchld_pipe[0], F_SETFL, O_NONBLOCK);
		fcntl(sigchld_pipe[1], F_SETFL, O_NONBLOCK);
		fcntl(sigchld_pipe[0], F_SETFD, FD_CLOEXEC);
		fcntl(sigchld_pipe[1], F_SETFD, FD_CLOEXEC);
	}
	sa.sa_handler = on_sigchld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	for (;;) {
		struct pollfd pf[3] = {
			{ in_fd, POLLIN, 0 },
			{ sigchld_pipe[0], POLLIN, 0 },
			{ pmi_streaming ? ptlab_fd : -1, POLLIN, 0 },
		};

		if (poll(pf, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (pf[1].revents) {
			char tmp[64];

			while (read(sigchld_pipe[0], tmp, sizeof(tmp)) > 0)
				;
			run_reap();
		}
		if (pf[2].revents)
			pmi_drain();
		if (pf[0].revents && serve_input(buf, &len) < 0)
			return 0;
	}
}
