/* SPDX-License-Identifier: MIT */
/* proto.h - the line protocol's output helpers, shared by the helper's verb files. */
#ifndef PTLAB_PROTO_H
#define PTLAB_PROTO_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A growable output line. */
struct out {
	char *buf;
	size_t len, cap;
};

void out_add(struct out *o, const char *s, size_t n);
void out_str(struct out *o, const char *s);
void out_hex64(struct out *o, uint64_t v);
void out_hexbytes(struct out *o, const unsigned char *p, size_t n);

/* Sends "<id><body>\n"; body starts with " ok" (or is built by respond_err). */
void respond(const char *id, struct out *body);
void respond_ok(const char *id);
void respond_err(const char *id, const char *code, const char *msg);
/* An unsolicited event line "* <body>" (PMI events, workload exits). */
void emit_event(struct out *body);

const char *errno_code(int err);
int parse_u64(const char *s, uint64_t *v);
/* Decodes hex text into a malloc'd buffer; Return: 0, or -1 if malformed. */
int unhex_bytes(const char *s, unsigned char **out, size_t *len);

/* The module (/dev/ptlab), or -1 when it is not loaded. */
extern int ptlab_fd;

/* Verb handlers: f[0] is the id, f[1] the verb. */
void do_msrs(const char *id, char **f, int nf);
void do_alloc(const char *id, char **f, int nf);
void do_free(const char *id, char **f, int nf);
void do_freeall(const char *id, char **f, int nf);
void do_bufread(const char *id, char **f, int nf);
void do_bufwrite(const char *id, char **f, int nf);
void do_buffill(const char *id, char **f, int nf);
void do_hash(const char *id, char **f, int nf);
void do_xsave(const char *id, char **f, int nf, int restore);
void do_arm(const char *id, char **f, int nf);
void do_disarm(const char *id, char **f, int nf);
void do_task(const char *id, char **f, int nf);
void do_kstate(const char *id, char **f, int nf);
void do_close(const char *id, char **f, int nf);
void do_reopen(const char *id, char **f, int nf);
void do_state(const char *id, char **f, int nf, int allow_exec);
void module_open(void);
/* Registers @pid as the task the top half of @cpu freezes, when this helper armed @cpu. */
void pmi_task_of(uint64_t cpu, pid_t pid);
/* The module's PTLAB_IOC_KSTATE as " key=value" fields; Return: 0 or an errno value. */
int kstate_line(struct out *o);
int msr_access(uint64_t cpu, uint32_t msr, uint64_t *val, int write);
void do_unmask(const char *id, char **f, int nf);
void do_pmitest(const char *id, char **f, int nf);
void do_events(const char *id, char **f, int nf);
void pmi_drain(void);
extern int pmi_streaming;
void do_put(const char *id, char **f, int nf);
void do_run(const char *id, char **f, int nf);
void do_kill(const char *id, char **f, int nf);
void do_go(const char *id, char **f, int nf);
void do_cont(const char *id, char **f, int nf);
void run_reap(void);
/* The workload running (or held) on @cpu, or 0. */
pid_t run_pid_on(uint64_t cpu);
/* Keeps the helper itself off @cpu from now on (unless it is the only CPU it may use). */
void avoid_cpu(uint64_t cpu);
#endif
