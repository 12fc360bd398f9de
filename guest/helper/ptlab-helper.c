// SPDX-License-Identifier: MIT
/*
 * ptlab-helper - the guest end of ptlab's line protocol (DESIGN.md "Guest side").
 *
 * Serves requests on a virtio-serial port given as argv[1] (persistent, low latency), or on
 * stdin/stdout when started without arguments (e.g. over SSH). Same protocol either way.
 *
 * Protocol: one request per line, one response line per request, in order.
 *   request:  <id> <verb> [args...]            (fields separated by single spaces)
 *   response: <id> ok [values...]
 *             <id> err <code> <message...>
 * Numbers are hex with 0x; <id> is an opaque token echoed back. Verbs:
 *   ping                       -> ok pong
 *   cpuid <cpu> <leaf> <sub>   -> ok <eax> <ebx> <ecx> <edx>     (/dev/cpu/N/cpuid)
 *   rdmsr <cpu> <msr>          -> ok <value>                     (/dev/cpu/N/msr)
 *   wrmsr <cpu> <msr> <value>  -> ok
 *   exec <hex of a sh -c command line>
 *                              -> ok <status> <hex stdout> <hex stderr>
 *      status: exit code, or 0x100 + signal number when killed by a signal; "-" for empty output.
 * Error codes: gp (the CPU raised #GP: the msr/cpuid driver returns EIO), nodev (no such CPU
 * or the driver is not loaded), inval (malformed request), unknown (unknown verb), io (any
 * other errno; the message names it).
 */
#include <errno.h>
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

#define LINE_MAX_BYTES	(1 << 20)
#define OUTPUT_MAX	(1 << 20)
#define MAX_FIELDS	8

static int in_fd = 0, out_fd = 1;
static int from_port;

/**
 * write_all - write a whole buffer, retrying short writes
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

/* A growable output line. */
struct out {
	char *buf;
	size_t len, cap;
};

static void out_add(struct out *o, const char *s, size_t n)
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

static void out_str(struct out *o, const char *s)
{
	out_add(o, s, strlen(s));
}

static void out_hex64(struct out *o, uint64_t v)
{
	char tmp[24];

	snprintf(tmp, sizeof(tmp), " 0x%llx", (unsigned long long)v);
	out_str(o, tmp);
}

static void out_hexbytes(struct out *o, const unsigned char *p, size_t n)
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

static void respond(const char *id, struct out *body)
{
	struct out line = { 0 };

	out_str(&line, id);
	out_add(&line, body->buf ? body->buf : "", body->len);
	out_str(&line, "\n");
	write_all(out_fd, line.buf, line.len);
	free(line.buf);
}

static void respond_err(const char *id, const char *code, const char *msg)
{
	struct out o = { 0 };

	out_str(&o, " err ");
	out_str(&o, code);
	out_str(&o, " ");
	out_str(&o, msg);
	respond(id, &o);
	free(o.buf);
}

/** errno_code - map an errno of the msr/cpuid drivers to a protocol error code */
static const char *errno_code(int err)
{
	switch (err) {
	case EIO:
		return "gp";
	case ENOENT:
	case ENXIO:
	case ENODEV:
		return "nodev";
	default:
		return "io";
	}
}

/** parse_u64 - parse a number (0x hex or decimal); Return: 0, or -1 if malformed */
static int parse_u64(const char *s, uint64_t *v)
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
	/* The cpuid driver takes the leaf in the low and the subleaf in the high 32 bits of the offset. */
	err = dev_pio("cpuid", cpu, (sub << 32) | leaf, regs, sizeof(regs), 0);
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
	err = dev_pio("msr", cpu, msr, &val, sizeof(val), 0);
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
	err = dev_pio("msr", cpu, msr, &val, sizeof(val), 1);
	if (err) {
		respond_err(id, errno_code(err), strerror(err));
		return;
	}
	out_str(&o, " ok");
	respond(id, &o);
	free(o.buf);
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
	out_hex64(&o, WIFEXITED(status) ? (uint64_t)WEXITSTATUS(status) : 0x100u + (uint64_t)WTERMSIG(status));
	out_hexbytes(&o, out.buf, out.len);
	out_hexbytes(&o, err.buf, err.len);
	respond(id, &o);
	free(o.buf);
	free(out.buf);
	free(err.buf);
}

static void handle_line(char *line)
{
	char *f[MAX_FIELDS + 1];
	int nf = 0;
	char *save, *tok;

	for (tok = strtok_r(line, " \r", &save); tok && nf <= MAX_FIELDS; tok = strtok_r(NULL, " \r", &save))
		f[nf++] = tok;
	if (nf == 0)
		return;
	if (nf < 2) {
		respond_err(f[0], "inval", "missing verb");
		return;
	}
	if (!strcmp(f[1], "ping")) {
		struct out o = { 0 };

		out_str(&o, " ok pong");
		respond(f[0], &o);
		free(o.buf);
	} else if (!strcmp(f[1], "cpuid")) {
		do_cpuid(f[0], f, nf);
	} else if (!strcmp(f[1], "rdmsr")) {
		do_rdmsr(f[0], f, nf);
	} else if (!strcmp(f[1], "wrmsr")) {
		do_wrmsr(f[0], f, nf);
	} else if (!strcmp(f[1], "exec")) {
		do_exec(f[0], f, nf);
	} else {
		respond_err(f[0], "unknown", f[1]);
	}
}

int main(int argc, char **argv)
{
	static char buf[LINE_MAX_BYTES];
	size_t len = 0;

	signal(SIGPIPE, SIG_IGN);
	if (argc > 1) {
		in_fd = open(argv[1], O_RDWR | O_CLOEXEC);
		if (in_fd < 0) {
			fprintf(stderr, "ptlab-helper: %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		out_fd = in_fd;
		from_port = 1;
	}
	for (;;) {
		ssize_t n = read(in_fd, buf + len, sizeof(buf) - 1 - len);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!from_port)
				return 0;
			/* The host end is not connected: wait for it (virtio ports read EOF meanwhile). */
			struct timespec ts = { 0, 50 * 1000 * 1000 };

			nanosleep(&ts, NULL);
			continue;
		}
		len += (size_t)n;
		buf[len] = '\0';
		while ((nl = memchr(buf, '\n', len)) != NULL) {
			size_t used = (size_t)(nl - buf) + 1;

			*nl = '\0';
			handle_line(buf);
			memmove(buf, buf + used, len - used);
			len -= used;
		}
		if (len == sizeof(buf) - 1)
			len = 0;	/* an overlong line: drop it */
	}
}
