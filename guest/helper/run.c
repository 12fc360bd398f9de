// SPDX-License-Identifier: MIT
/*
 * run.c - running a workload image (docs/design.md "Workloads"): real x86-64 code loaded at its
 * base address in a child process pinned to one CPU, entered at its entry point; it ends with the
 * exit system call. The child's end is reported as an event "* exit <pid> <status>".
 *
 * A held run (the late enable: docs/design.md "Realism") stops the child at its entry, traced
 * (PTRACE_TRACEME; PTRACE_O_EXITKILL kills it with the helper), with its image mapped: nothing of
 * it runs until `go`, which points its RIP at the entry and detaches, so its first user-mode
 * instruction after that is the workload's own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto.h"
#include "ptlab_uapi.h"

#define MAX_RUNS	16
#define IMAGE_MAX	(64u << 20)

/**
 * struct run - a workload child
 * @pid: its pid; 0 for a free slot
 * @cpu: the CPU it is pinned to
 * @entry: its entry point
 * @held: it waits at its entry until `go`
 */
struct run {
	pid_t pid;
	uint64_t cpu;
	uint64_t entry;
	int held;
};

static struct run runs[MAX_RUNS];
static cpu_set_t avoided;

/**
 * avoid_cpu - keep the helper itself off @cpu from now on, unless it is the only CPU it may use
 * @cpu: the CPU
 */
void avoid_cpu(uint64_t cpu)
{
	cpu_set_t set;

	if (cpu >= CPU_SETSIZE)
		return;
	CPU_SET((int)cpu, &avoided);
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	CPU_CLR((int)cpu, &set);
	/* The only CPU left: a one-CPU machine; the helper cannot keep off it. */
	if (CPU_COUNT(&set) > 0)
		sched_setaffinity(0, sizeof(set), &set);
}

/**
 * run_pid_on - the workload running, or held, on @cpu
 * @cpu: the CPU
 * Return: its pid, or 0.
 */
pid_t run_pid_on(uint64_t cpu)
{
	for (int i = 0; i < MAX_RUNS; i++)
		if (runs[i].pid && runs[i].cpu == cpu)
			return runs[i].pid;
	return 0;
}

/**
 * find_run - the workload @pid
 * @pid: its pid
 * Return: its slot, or NULL.
 */
static struct run *find_run(uint64_t pid)
{
	for (int i = 0; i < MAX_RUNS; i++)
		if (runs[i].pid && (uint64_t)runs[i].pid == pid)
			return &runs[i];
	return NULL;
}

/**
 * run_of - the workload "<verb> <pid>" names
 * @id: the request's id
 * @f: the request's fields
 * @nf: how many
 * @usage: the answer to a malformed request
 * Return: its slot, or NULL once an error was answered.
 */
static struct run *run_of(const char *id, char **f, int nf, const char *usage)
{
	struct run *r;
	uint64_t pid;

	if (nf != 3 || parse_u64(f[2], &pid)) {
		respond_err(id, "inval", usage);
		return NULL;
	}
	r = find_run(pid);
	if (!r)
		respond_err(id, "noent", "no such workload");
	return r;
}

/**
 * read_file - the whole file at @path into a malloc'd buffer
 * @path: the file
 * @data: out: the buffer
 * @len: out: its length
 * Return: 0, or an errno value.
 */
static int read_file(const char *path, unsigned char **data, size_t *len)
{
	struct stat st;
	unsigned char *p;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (fstat(fd, &st) || st.st_size <= 0 || (uint64_t)st.st_size > IMAGE_MAX) {
		close(fd);
		return EINVAL;
	}
	p = malloc((size_t)st.st_size);
	if (!p) {
		close(fd);
		return ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, p + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (err) {
		free(p);
		return err;
	}
	*data = p;
	*len = got;
	return 0;
}

void do_put(const char *id, char **f, int nf)
{
	unsigned char *data = NULL;
	size_t len = 0, done = 0;
	int fd;

	if (nf != 4 || unhex_bytes(f[3], &data, &len)) {
		respond_err(id, "inval", "usage: put <path> <hex bytes>");
		return;
	}
	fd = open(f[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		respond_err(id, errno_code(errno), strerror(errno));
		free(data);
		return;
	}
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	free(data);
	if (done < len)
		respond_err(id, "io", "short write");
	else
		respond_ok(id);
}

/**
 * child_fds - in the child: nothing of the helper's stays open. Its /dev/ptlab file would hold
 * the module's release back for as long as the workload lives (fork keeps O_CLOEXEC files), and
 * its stdin/stdout may be the SSH channel. 0-2 become /dev/null.
 */
static void child_fds(void)
{
	int null = open("/dev/null", O_RDWR);

	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	if (close_range(3, ~0u, 0))
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
}

/**
 * run_child - in the child: pin to @cpu, map the image at @base (MAP_FIXED_NOREPLACE: never over
 * the helper's own mappings), make it executable and jump to @entry; held, stop before the jump
 * and leave it to the helper (do_go)
 * @cpu: the CPU
 * @img: the image
 * @len: its length
 * @base: where it is mapped
 * @entry: where it is entered
 * @held: stop at the entry
 *
 * Exit codes 120-126 are the helper's: 126 pinning failed, 125 the mapping failed, 124 the image
 * returned, 123 a held child was resumed without `go`.
 */
static noreturn void run_child(uint64_t cpu, const unsigned char *img, size_t len, uint64_t base,
			       uint64_t entry, int held)
{
	cpu_set_t set;
	uint64_t start = base & ~4095ull, size = (base - start + len + 4095) & ~4095ull;
	void *p;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	child_fds();
	if (held && ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(126);
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(126);
	p = mmap((void *)(uintptr_t)start, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || p != (void *)(uintptr_t)start)
		_exit(125);
	memcpy((void *)(uintptr_t)base, img, len);
	if (mprotect(p, size, PROT_READ | PROT_EXEC))
		_exit(125);
	if (held) {
		raise(SIGSTOP);	/* the helper moves RIP to the entry and detaches */
		_exit(123);
	}
	((void (*)(void))(uintptr_t)entry)();
	_exit(124);	/* the image returned instead of calling exit */
}

/**
 * wait_held - wait until the held child @pid stops at its entry
 * @pid: the child
 * @why: out: what went wrong
 * Return: 0, or -1 with @why set (the child was reaped).
 */
static int wait_held(pid_t pid, const char **why)
{
	int status;

	for (;;) {
		if (waitpid(pid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			*why = "the child could not be waited for";
			return -1;
		}
		if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP)
			break;
		if (WIFSTOPPED(status)) {	/* another signal before the stop: hand it on */
			ptrace(PTRACE_CONT, pid, NULL, (void *)(uintptr_t)WSTOPSIG(status));
			continue;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 126)
			*why = "the child could not be pinned";
		else if (WIFEXITED(status) && WEXITSTATUS(status) == 125)
			*why = "the image could not be mapped";
		else
			*why = "the child ended before its entry";
		return -1;
	}
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(uintptr_t)PTRACE_O_EXITKILL);
	return 0;
}

/**
 * out_cr3 - " <cr3>" of @pid through the module, or " -" when it cannot tell
 * @o: the answer being built
 * @pid: the task
 */
static void out_cr3(struct out *o, pid_t pid)
{
	struct ptlab_task_cr3 t = { .pid = pid };

	if (ptlab_fd >= 0 && !ioctl(ptlab_fd, PTLAB_IOC_TASK_CR3, &t))
		out_hex64(o, t.cr3);
	else
		out_str(o, " -");
}

/**
 * do_run - "run <cpu> <path>@<base> <entry> [held]": start the image; its end is an "exit" event
 * @id: the request's id
 * @f: the request's fields
 * @nf: how many
 *
 * Held, the answer waits until the child stops at its entry and carries its CR3.
 */
void do_run(const char *id, char **f, int nf)
{
	uint64_t cpu, base, entry;
	unsigned char *img = NULL;
	size_t len = 0;
	char *at;
	struct out o = { 0 };
	const char *why;
	pid_t pid;
	int slot, err, held = nf == 6 && !strcmp(f[5], "held");

	at = nf == 5 || held ? strrchr(f[3], '@') : NULL;
	if (!at || parse_u64(f[2], &cpu) || cpu >= CPU_SETSIZE || parse_u64(at + 1, &base) ||
	    parse_u64(f[4], &entry)) {
		respond_err(id, "inval", "usage: run <cpu> <path>@<base> <entry> [held]");
		return;
	}
	*at = '\0';
	for (slot = 0; slot < MAX_RUNS && runs[slot].pid; slot++)
		;
	if (slot == MAX_RUNS) {
		respond_err(id, "nomem", "too many workloads running");
		return;
	}
	err = read_file(f[3], &img, &len);
	if (err) {
		respond_err(id, errno_code(err), strerror(err));
		return;
	}
	if (entry < base || entry >= base + len) {
		free(img);
		respond_err(id, "inval", "the entry point lies outside the image");
		return;
	}
	avoid_cpu(cpu);
	pid = fork();
	if (pid == 0)
		run_child(cpu, img, len, base, entry, held);
	free(img);
	if (pid < 0) {
		respond_err(id, "io", strerror(errno));
		return;
	}
	if (held && wait_held(pid, &why)) {
		respond_err(id, "io", why);
		return;
	}
	runs[slot] = (struct run){ .pid = pid, .cpu = cpu, .entry = entry, .held = held };
	pmi_task_of(cpu, pid);
	out_str(&o, " ok");
	out_hex64(&o, (uint64_t)pid);
	if (held)
		out_cr3(&o, pid);
	respond(id, &o);
	free(o.buf);
}

/**
 * do_go - "go <pid>": the held child runs from its entry
 * @id: the request's id
 * @f: the request's fields
 * @nf: how many
 *
 * RIP is the entry, ORIG_RAX -1 (no system call to restart: the stop came after raise returned),
 * RSP 16-byte aligned less 8 below the red zone, as a call would leave it; the detach drops the
 * SIGSTOP.
 */
void do_go(const char *id, char **f, int nf)
{
	struct user_regs_struct regs;
	struct run *r = run_of(id, f, nf, "usage: go <pid>");

	if (!r)
		return;
	if (!r->held) {
		respond_err(id, "noent", "the workload is not held");
		return;
	}
	if (ptrace(PTRACE_GETREGS, r->pid, NULL, &regs)) {
		respond_err(id, errno_code(errno), strerror(errno));
		return;
	}
	regs.rip = r->entry;
	regs.orig_rax = (unsigned long long)-1;
	regs.rsp = ((regs.rsp - 128) & ~15ull) - 8;
	if (ptrace(PTRACE_SETREGS, r->pid, NULL, &regs) ||
	    ptrace(PTRACE_DETACH, r->pid, NULL, NULL)) {
		respond_err(id, errno_code(errno), strerror(errno));
		return;
	}
	r->held = 0;
	respond_ok(id);
}

/**
 * do_cont - "cont <pid>": SIGCONT to a workload (the top half froze it with SIGSTOP)
 * @id: the request's id
 * @f: the request's fields
 * @nf: how many
 */
void do_cont(const char *id, char **f, int nf)
{
	struct run *r = run_of(id, f, nf, "usage: cont <pid>");

	if (!r)
		return;
	if (!r->held)
		kill(r->pid, SIGCONT);	/* a held child is traced: it stays where it waits */
	respond_ok(id);
}

void do_kill(const char *id, char **f, int nf)
{
	struct run *r = run_of(id, f, nf, "usage: kill <pid>");

	if (!r)
		return;
	kill(r->pid, SIGKILL);
	respond_ok(id);
}

/**
 * run_reap - report each finished workload: "* exit <pid> <status>" (0x100 + signal if killed)
 */
void run_reap(void)
{
	for (int i = 0; i < MAX_RUNS; i++) {
		int status;
		struct out o = { 0 };

		if (!runs[i].pid || waitpid(runs[i].pid, &status, WNOHANG | __WALL) != runs[i].pid)
			continue;
		if (WIFSTOPPED(status))
			continue;	/* a held child's ptrace stop: it waits for go or kill */
		out_str(&o, " exit");
		out_hex64(&o, (uint64_t)runs[i].pid);
		out_hex64(&o, WIFEXITED(status) ? (uint64_t)WEXITSTATUS(status) :
				  0x100u + (uint64_t)WTERMSIG(status));
		emit_event(&o);
		free(o.buf);
		runs[i].pid = 0;
	}
}
