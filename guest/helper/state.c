// SPDX-License-Identifier: MIT
/*
 * state.c - the `state` verb: the facts of this machine that `ptlab doctor --target ssh` judges
 * (harness/link/doctor/), read here and sent as "key=value" lines, hex-encoded on one reply
 * line. The helper only reads; every verdict is the host's.
 *
 *   helper=<PTLAB_ABI the helper was built for>   exec=<1 with --allow-exec>
 *   kernel=<uname -r>                             module=<1 when /dev/ptlab is open>
 *   kstate=<the module's PTLAB_IOC_KSTATE fields, or an errno text>
 *   cpus=<online CPUs>                            vendor=<CPUID.0 vendor string>
 *   pt=<CPUID.(EAX=07H,ECX=0):EBX[25]>
 *   traceen=<CPUs with IA32_RTIT_CTL.TraceEn=1, or "-">   traceen_unread=<CPUs whose CTL faulted>
 *   intel_pt_pmu=<1 when perf registered the intel_pt PMU>
 *   nmi_watchdog=, lockdown=, sig_enforce=, module_taint=, isolated=, nohz_full=, cmdline=:
 *     the files of /proc and /sys that say so ("-" when absent)
 *   secure_boot=<1, 0, or "-" without EFI variables>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "msr-index.h"
#include "proto.h"
#include "ptlab_uapi.h"

#define SECURE_BOOT_VAR "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

/**
 * add - one "key=value\n" line
 * @o: the state being built
 * @key: the key
 * @value: the value
 */
static void add(struct out *o, const char *key, const char *value)
{
	out_str(o, key);
	out_str(o, "=");
	out_str(o, value);
	out_str(o, "\n");
}

/**
 * add_file - "key=<first line of path>", or "key=-" when it cannot be read
 * @o: the state being built
 * @key: the key
 * @path: the file
 */
static void add_file(struct out *o, const char *key, const char *path)
{
	char buf[4096];
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n < 0) {
		add(o, key, "-");
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	add(o, key, buf);
}

/**
 * cpuid0 - CPUID on CPU 0 through the module, else /dev/cpu/0/cpuid
 * @leaf: EAX before CPUID
 * @sub: ECX before CPUID
 * @r: out: EAX, EBX, ECX, EDX
 * Return: 0, or -1.
 */
static int cpuid0(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	ssize_t n;
	int fd;

	if (ptlab_fd >= 0) {
		struct ptlab_cpuid c = { .cpu = 0, .leaf = leaf, .subleaf = sub };

		if (ioctl(ptlab_fd, PTLAB_IOC_CPUID, &c))
			return -1;
		r[0] = c.eax;
		r[1] = c.ebx;
		r[2] = c.ecx;
		r[3] = c.edx;
		return 0;
	}
	fd = open("/dev/cpu/0/cpuid", O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : pread(fd, r, 16, ((off_t)sub << 32) | leaf);
	if (fd >= 0)
		close(fd);
	return n == 16 ? 0 : -1;
}

/**
 * add_list - "key=<comma-separated CPUs>", or "key=-"
 * @o: the state being built
 * @key: the key
 * @list: the CPUs, "" for none
 */
static void add_list(struct out *o, const char *key, const char *list)
{
	add(o, key, list[0] ? list : "-");
}

/**
 * append_cpu - add @cpu to a comma-separated list in @buf
 * @buf: the list
 * @size: the room in @buf
 * @cpu: the CPU
 */
static void append_cpu(char *buf, size_t size, long cpu)
{
	size_t n = strlen(buf);

	snprintf(buf + n, size - n, "%s%ld", n ? "," : "", cpu);
}

/**
 * add_traceen - read IA32_RTIT_CTL on every online CPU: who traces now
 * @o: the state being built
 * @ncpus: the CPUs to try (offline ones are skipped)
 */
static void add_traceen(struct out *o, long ncpus)
{
	static char on[8192], unread[8192];

	on[0] = '\0';
	unread[0] = '\0';
	for (long cpu = 0; cpu < ncpus; cpu++) {
		uint64_t ctl = 0;
		int err = msr_access((uint64_t)cpu, MSR_IA32_RTIT_CTL, &ctl, 0);

		if (err == ENXIO)
			continue;	/* offline */
		if (err)
			append_cpu(unread, sizeof(unread), cpu);
		else if (ctl & RTIT_CTL_TRACEEN)
			append_cpu(on, sizeof(on), cpu);
	}
	add_list(o, "traceen", on);
	add_list(o, "traceen_unread", unread);
}

/**
 * add_secure_boot - the SecureBoot EFI variable: 4 attribute bytes, then the value
 * @o: the state being built
 */
static void add_secure_boot(struct out *o)
{
	unsigned char v[5];
	int fd = open(SECURE_BOOT_VAR, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, v, sizeof(v));

	if (fd >= 0)
		close(fd);
	add(o, "secure_boot", n == 5 ? (v[4] ? "1" : "0") : "-");
}

void do_state(const char *id, char **f, int nf, int allow_exec)
{
	struct out o = { 0 }, k = { 0 }, line = { 0 };
	struct utsname u;
	uint32_t r[4];
	char tmp[64], vendor[13] = "";
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	int pt = 0;

	(void)f;
	if (nf != 2) {
		respond_err(id, "inval", "usage: state");
		return;
	}
	snprintf(tmp, sizeof(tmp), "%d", PTLAB_ABI);
	add(&o, "helper", tmp);
	add(&o, "exec", allow_exec ? "1" : "0");
	add(&o, "kernel", uname(&u) ? "-" : u.release);
	add(&o, "module", ptlab_fd >= 0 ? "1" : "0");
	if (ptlab_fd >= 0) {
		int err = kstate_line(&k);

		add(&o, "kstate", err ? strerror(err) : k.buf + 1);
	} else {
		add(&o, "kstate", "-");
	}
	add_file(&o, "cpus", "/sys/devices/system/cpu/online");
	if (!cpuid0(0, 0, r)) {
		memcpy(vendor, &r[1], 4);
		memcpy(vendor + 4, &r[3], 4);
		memcpy(vendor + 8, &r[2], 4);
		pt = r[0] >= 7 && !cpuid0(7, 0, r) && (r[1] >> 25 & 1);
	}
	add(&o, "vendor", vendor[0] ? vendor : "-");
	add(&o, "pt", pt ? "1" : "0");
	if (pt)
		add_traceen(&o, ncpus);
	else
		add(&o, "traceen", "-");
	add(&o, "intel_pt_pmu", access("/sys/bus/event_source/devices/intel_pt", F_OK) ? "0" : "1");
	add_file(&o, "nmi_watchdog", "/proc/sys/kernel/nmi_watchdog");
	add_file(&o, "lockdown", "/sys/kernel/security/lockdown");
	add_file(&o, "sig_enforce", "/sys/module/module/parameters/sig_enforce");
	add_file(&o, "module_taint", "/sys/module/ptlab/taint");
	add_secure_boot(&o);
	add_file(&o, "isolated", "/sys/devices/system/cpu/isolated");
	add_file(&o, "nohz_full", "/sys/devices/system/cpu/nohz_full");
	add_file(&o, "cmdline", "/proc/cmdline");
	out_str(&line, " ok");
	out_hexbytes(&line, (const unsigned char *)o.buf, o.len);
	respond(id, &line);
	free(o.buf);
	free(k.buf);
	free(line.buf);
}
