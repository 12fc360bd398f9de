// SPDX-License-Identifier: MIT
/*
 * pathtrace - run a ptlab workload image natively in ring 3 under ptrace, single-stepping,
 * and print every executed control-flow instruction as a flow-json branch record
 * (docs/formats/flow-json.md), so the path can be compared with the model's truth.jsonl.
 *
 *   pathtrace IMAGE BASE ENTRY [MAXSTEPS]     (BASE and ENTRY in hex, e.g. 0x10000000)
 *
 * The child maps IMAGE at BASE (MAP_FIXED_NOREPLACE, then read+execute only), stops itself,
 * and the parent points its RIP at ENTRY and single-steps it until the exit system call.
 * Branches are classified from the instruction bytes, for the opcodes the ptlab assembler
 * emits (Intel SDM Vol. 2 opcode maps): Jcc 7x / 0F 8x, LOOP E2, JMP EB/E9, CALL E8,
 * RET C3, JMP/CALL r/m FF /4 and FF /2, SYSCALL 0F 05. A Jcc's outcome is computed from
 * RFLAGS before the step (so a taken Jcc with displacement 0 is still "taken") and checked
 * against the RIP after it. Exit status: 0 when the workload reached exit(0) through SYSCALL,
 * 2 on a usage or setup error, 3 when the workload left the expected path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static uint8_t *image;
static size_t image_len;
static uint64_t base;
static pid_t child = -1;

static void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	fputs("pathtrace: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (child > 0)
		kill(child, SIGKILL);
	exit(code);
}

/* Jcc condition codes, SDM Vol. 2 Appendix B "Condition Test (tttn) Field Encoding". */
static int cond_holds(unsigned cc, uint64_t fl)
{
	int cf = fl & 1, pf = (fl >> 2) & 1, zf = (fl >> 6) & 1, sf = (fl >> 7) & 1, of = (fl >> 11) & 1;
	int r;

	switch (cc >> 1) {
	case 0: r = of; break;			/* O */
	case 1: r = cf; break;			/* B */
	case 2: r = zf; break;			/* Z */
	case 3: r = cf || zf; break;		/* BE */
	case 4: r = sf; break;			/* S */
	case 5: r = pf; break;			/* P */
	case 6: r = sf != of; break;		/* L */
	default: r = zf || sf != of; break;	/* LE */
	}
	return (cc & 1) ? !r : r;
}

enum kind { K_NONE, K_JCC, K_LOOP, K_JMP, K_CALL, K_RET, K_SYSCALL };

struct insn {
	enum kind kind;
	unsigned cc;
	unsigned len;	/* known for Jcc and LOOP (to check the step) */
	int64_t disp;
};

static uint8_t byte_at(uint64_t ip)
{
	if (ip < base || ip - base >= image_len)
		die(3, "execution left the image at 0x%llx", (unsigned long long)ip);
	return image[ip - base];
}

static int32_t rel32_at(uint64_t ip)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | byte_at(ip + i);
	return (int32_t)v;
}

/* Classify the instruction at ip from its bytes (REX prefix 40-4F skipped). */
static struct insn classify(uint64_t ip)
{
	struct insn in = { K_NONE, 0, 0, 0 };
	uint64_t p = ip;
	uint8_t op;

	if ((byte_at(p) & 0xf0) == 0x40)
		p++;
	op = byte_at(p);
	if (op >= 0x70 && op <= 0x7f) {
		in.kind = K_JCC;
		in.cc = op & 0xf;
		in.len = p + 2 - ip;
		in.disp = (int8_t)byte_at(p + 1);
	} else if (op == 0x0f && (byte_at(p + 1) & 0xf0) == 0x80) {
		in.kind = K_JCC;
		in.cc = byte_at(p + 1) & 0xf;
		in.len = p + 6 - ip;
		in.disp = rel32_at(p + 2);
	} else if (op == 0x0f && byte_at(p + 1) == 0x05) {
		in.kind = K_SYSCALL;
	} else if (op == 0xe2) {
		in.kind = K_LOOP;
		in.len = p + 2 - ip;
		in.disp = (int8_t)byte_at(p + 1);
	} else if (op == 0xeb || op == 0xe9) {
		in.kind = K_JMP;
	} else if (op == 0xe8) {
		in.kind = K_CALL;
	} else if (op == 0xc3) {
		in.kind = K_RET;
	} else if (op == 0xff) {
		unsigned reg = (byte_at(p + 1) >> 3) & 7;

		if (reg == 2)
			in.kind = K_CALL;
		else if (reg == 4)
			in.kind = K_JMP;
		else if (reg == 3 || reg == 5)
			die(3, "far transfer at 0x%llx is not expected", (unsigned long long)ip);
	} else if (op == 0xcc) {
		die(3, "INT3 filler reached at 0x%llx", (unsigned long long)ip);
	}
	return in;
}

static void getregs(struct user_regs_struct *r)
{
	if (ptrace(PTRACE_GETREGS, child, 0, r) < 0)
		die(2, "PTRACE_GETREGS: %s", strerror(errno));
}

/* Single-step; returns 0 when stopped by the step, 1 when the child exited (status in *code). */
static int step(int *code)
{
	int st;

	if (ptrace(PTRACE_SINGLESTEP, child, 0, 0) < 0)
		die(2, "PTRACE_SINGLESTEP: %s", strerror(errno));
	if (waitpid(child, &st, 0) < 0)
		die(2, "waitpid: %s", strerror(errno));
	if (WIFEXITED(st)) {
		*code = WEXITSTATUS(st);
		child = -1;
		return 1;
	}
	if (WIFSIGNALED(st)) {
		child = -1;
		die(3, "workload killed by signal %d", WTERMSIG(st));
	}
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP) {
		struct user_regs_struct r;

		getregs(&r);
		die(3, "workload stopped by signal %d at 0x%llx", WIFSTOPPED(st) ? WSTOPSIG(st) : -1,
		    (unsigned long long)r.rip);
	}
	return 0;
}

static void load(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat sb;

	if (fd < 0 || fstat(fd, &sb) < 0)
		die(2, "%s: %s", path, strerror(errno));
	image_len = sb.st_size;
	image = malloc(image_len ? image_len : 1);
	if (!image || read(fd, image, image_len) != (ssize_t)image_len)
		die(2, "%s: short read", path);
	close(fd);
}

/* In the child: map the image at base (read + execute), then stop for the tracer. */
static void child_main(void)
{
	size_t pg = sysconf(_SC_PAGESIZE);
	size_t len = (image_len + pg - 1) / pg * pg;
	void *at;

	if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
		_exit(120);
	at = mmap((void *)base, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (at != (void *)base)
		_exit(121);
	memcpy(at, image, image_len);
	if (mprotect(at, len, PROT_READ | PROT_EXEC) < 0)
		_exit(122);
	raise(SIGSTOP);
	_exit(123);	/* not reached: the tracer moves RIP to the entry point */
}

int main(int argc, char **argv)
{
	static char outbuf[1 << 16];
	struct user_regs_struct r;
	unsigned long long maxsteps = 100000000ULL, steps = 0;
	uint64_t entry;
	int st, code = -1;

	if (argc < 4)
		die(2, "usage: pathtrace IMAGE BASE ENTRY [MAXSTEPS]");
	load(argv[1]);
	base = strtoull(argv[2], NULL, 16);
	entry = strtoull(argv[3], NULL, 16);
	if (argc > 4)
		maxsteps = strtoull(argv[4], NULL, 10);
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	child = fork();
	if (child < 0)
		die(2, "fork: %s", strerror(errno));
	if (child == 0)
		child_main();
	if (waitpid(child, &st, 0) < 0 || !WIFSTOPPED(st)) {
		if (WIFEXITED(st))
			die(2, "child setup failed with status %d (121: address in use)", WEXITSTATUS(st));
		die(2, "child did not stop");
	}
	ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_EXITKILL);
	getregs(&r);
	r.rip = entry;
	r.rsp &= ~0xfULL;	/* a clean, 16-byte aligned stack for the workload */
	if (ptrace(PTRACE_SETREGS, child, 0, &r) < 0)
		die(2, "PTRACE_SETREGS: %s", strerror(errno));

	for (;;) {
		struct insn in;
		uint64_t ip, to;
		int taken = 0;

		if (++steps > maxsteps)
			die(3, "more than %llu steps", maxsteps);
		getregs(&r);
		ip = r.rip;
		in = classify(ip);
		if (in.kind == K_JCC)
			taken = cond_holds(in.cc, r.eflags);
		else if (in.kind == K_LOOP)
			taken = r.rcx != 1;	/* LOOP decrements RCX first (SDM "LOOP/LOOPcc") */
		if (in.kind == K_SYSCALL) {
			if (r.rax != 60)
				die(3, "unexpected system call %llu at 0x%llx", (unsigned long long)r.rax,
				    (unsigned long long)ip);
			printf("{\"ip\":\"0x%llx\",\"kind\":\"far.call\"}\n", (unsigned long long)ip);
		}
		if (step(&code))
			break;
		if (in.kind == K_NONE || in.kind == K_SYSCALL)
			continue;
		getregs(&r);
		to = r.rip;
		switch (in.kind) {
		case K_JCC:
		case K_LOOP:
			if (to != ip + in.len + (taken ? (uint64_t)in.disp : 0))
				die(3, "Jcc at 0x%llx went to 0x%llx, not where RFLAGS say", (unsigned long long)ip,
				    (unsigned long long)to);
			printf("{\"ip\":\"0x%llx\",\"kind\":\"jcc\",\"taken\":%s,\"to\":\"0x%llx\"}\n",
			       (unsigned long long)ip, taken ? "true" : "false", (unsigned long long)to);
			break;
		case K_JMP:
		case K_CALL:
		case K_RET:
			printf("{\"ip\":\"0x%llx\",\"kind\":\"%s\",\"to\":\"0x%llx\"}\n", (unsigned long long)ip,
			       in.kind == K_JMP ? "jmp" : in.kind == K_CALL ? "call" : "ret", (unsigned long long)to);
			break;
		default:
			break;
		}
	}
	fflush(stdout);
	if (code != 0)
		die(3, "workload exited with status %d", code);
	return 0;
}
