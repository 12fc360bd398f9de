/*
 * ptflow - libipt's instruction-flow decoder (the ptxed path) printing the
 * executed path as flow JSON Lines (docs/formats/flow-json.md), the independent
 * check of ptlab's flow reconstruction (driver/decode/flow/).
 *
 * Usage: ptflow [--bench RUNS] [--time MTC_FREQ EAX EBX NOM_FREQ] TRACE.pt IMAGE.bin 0xBASE ...
 *
 * --time gives libipt the timing parameters (pt_config mtc_freq, cpuid_0x15_eax/ebx, nom_freq)
 * and adds "tsc":"0x..." to each branch record: pt_insn_time at the branch instruction, the
 * time ptlab's flow --time is checked against (docs/sdm/packets.md 13.1).
 *
 * --bench RUNS decodes RUNS times without printing and prints
 * {"instructions":N,"errors":N,"seconds":BEST} (the flow benchmark).
 *
 * Branch records come from the instruction classes (ptic_cond_jump, ptic_jump,
 * ptic_call, ptic_return, ptic_far_*) and the IP of the next instruction;
 * enable/disable/async/overflow records come from libipt's events. Errors
 * print {"kind":"error","error":"NAME","off":N} and decoding resumes at the
 * next PSB (pt_insn_sync_forward), like ptlab's decoder.
 */
#include "ptio.h"

#include <inttypes.h>
#include <sys/stat.h>
#include <time.h>

/* Bench mode: no output, count only. */
static int quiet;

/* --time: print the time of each branch. */
static int with_time;

/* A branch waiting for the IP of the instruction that follows it. */
struct pending {
	int valid;
	uint64_t ip;
	uint8_t size;
	enum pt_insn_class iclass;
	/* The time at the branch (with_time), and whether libipt had one. */
	int has_tsc;
	uint64_t tsc;
};

static const char *kind_name(enum pt_insn_class c)
{
	switch (c) {
	case ptic_cond_jump:
		return "jcc";
	case ptic_jump:
		return "jmp";
	case ptic_call:
		return "call";
	case ptic_return:
		return "ret";
	case ptic_far_call:
		return "far.call";
	case ptic_far_return:
		return "far.ret";
	case ptic_far_jump:
		return "far.jmp";
	default:
		return NULL;
	}
}

/* Prints the pending branch, with @to when @has_to, and clears it. */
static void flush_branch(struct pending *p, int has_to, uint64_t to)
{
	const char *kind;

	if (!p->valid)
		return;
	p->valid = 0;
	if (quiet)
		return;
	kind = kind_name(p->iclass);
	printf("{\"ip\":\"0x%" PRIx64 "\",\"kind\":\"%s\"", p->ip, kind);
	if (p->iclass == ptic_cond_jump) {
		/* Without a destination a jcc leaving tracing was taken (docs/sdm/packets.md §3.3). */
		int taken = has_to ? to != p->ip + p->size : 1;

		printf(",\"taken\":%s", taken ? "true" : "false");
	}
	if (has_to)
		printf(",\"to\":\"0x%" PRIx64 "\"", to);
	if (p->has_tsc)
		printf(",\"tsc\":\"0x%" PRIx64 "\"", p->tsc);
	printf("}\n");
}

static void print_ip_record(const char *kind, int has_ip, uint64_t ip)
{
	if (quiet)
		return;
	if (has_ip)
		printf("{\"kind\":\"%s\",\"ip\":\"0x%" PRIx64 "\"}\n", kind, ip);
	else
		printf("{\"kind\":\"%s\"}\n", kind);
}

/* Turns one event into flow-json records. */
static void on_event(const struct pt_event *ev, struct pending *p)
{
	switch (ev->type) {
	case ptev_enabled:
		p->valid = 0;
		print_ip_record("enable", 1, ev->variant.enabled.ip);
		break;
	case ptev_disabled:
		flush_branch(p, !ev->ip_suppressed, ev->variant.disabled.ip);
		print_ip_record("disable", !ev->ip_suppressed, ev->variant.disabled.ip);
		break;
	case ptev_async_disabled:
		flush_branch(p, 1, ev->variant.async_disabled.at);
		if (!ev->ip_suppressed && !quiet)
			printf("{\"kind\":\"async\",\"from\":\"0x%" PRIx64 "\",\"to\":\"0x%" PRIx64 "\"}\n",
			       ev->variant.async_disabled.at, ev->variant.async_disabled.ip);
		print_ip_record("disable", !ev->ip_suppressed, ev->variant.async_disabled.ip);
		break;
	case ptev_async_branch:
		flush_branch(p, 1, ev->variant.async_branch.from);
		if (!quiet)
			printf("{\"kind\":\"async\",\"from\":\"0x%" PRIx64 "\",\"to\":\"0x%" PRIx64 "\"}\n",
		       ev->variant.async_branch.from, ev->variant.async_branch.to);
		break;
	case ptev_overflow:
		p->valid = 0;
		print_ip_record("overflow", !ev->ip_suppressed, ev->variant.overflow.ip);
		break;
	default:
		/* paging, exec mode, tsx, stop, vmcs, power, ptwrite, timing: not part of the path */
		break;
	}
}

static int add_image(struct pt_image *image, const char *path, const char *base_text)
{
	struct stat st;
	char *end;
	uint64_t base;
	int errcode;

	base = strtoull(base_text, &end, 0);
	if (*base_text == '\0' || *end != '\0') {
		fprintf(stderr, "ptflow: bad base '%s'\n", base_text);
		return -1;
	}
	if (stat(path, &st) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	errcode = pt_image_add_file(image, path, 0, (uint64_t)st.st_size, NULL, base);
	if (errcode < 0) {
		fprintf(stderr, "ptflow: %s: %s\n", path, pt_errstr(pt_errcode(errcode)));
		return -1;
	}
	return 0;
}

/* libipt's pt_error_code spelling without "pte_" (the names ptlab's flow errors use). */
static const char *flow_error_name(int status)
{
	switch (pt_errcode(status)) {
	case pte_nomap:
		return "nomap";
	case pte_bad_insn:
		return "bad_insn";
	case pte_bad_query:
		return "bad_query";
	case pte_retstack_empty:
		return "retstack_empty";
	case pte_bad_context:
		return "bad_context";
	case pte_noip:
		return "noip";
	default:
		return ptio_error_name(status);
	}
}

static void print_error(struct pt_insn_decoder *dec, int status)
{
	uint64_t off = 0;

	if (quiet)
		return;
	pt_insn_get_offset(dec, &off);
	printf("{\"kind\":\"error\",\"error\":\"%s\",\"off\":%" PRIu64 "}\n",
	       flow_error_name(status), off);
}

/* Decodes the whole trace once; returns the number of instructions, counts errors. */
static uint64_t decode_all(struct pt_insn_decoder *dec, uint64_t *errors)
{
	struct pending pend = { 0 };
	uint64_t insns = 0;
	int status;

	for (;;) {
		status = pt_insn_sync_forward(dec);
		if (status < 0) {
			if (status != -pte_eos) {
				print_error(dec, status);
				(*errors)++;
			}
			break;
		}
		pend.valid = 0;
		for (;;) {
			struct pt_insn insn;

			while (status & pts_event_pending) {
				struct pt_event ev;

				status = pt_insn_event(dec, &ev, sizeof(ev));
				if (status < 0)
					break;
				on_event(&ev, &pend);
			}
			if (status < 0)
				break;
			status = pt_insn_next(dec, &insn, sizeof(insn));
			if (status < 0)
				break;
			insns++;
			flush_branch(&pend, 1, insn.ip);
			if (kind_name(insn.iclass)) {
				pend.valid = 1;
				pend.ip = insn.ip;
				pend.size = insn.size;
				pend.iclass = insn.iclass;
				pend.has_tsc = with_time &&
					pt_insn_time(dec, &pend.tsc, NULL, NULL) >= 0;
			}
		}
		if (status == -pte_eos)
			break;
		print_error(dec, status);
		(*errors)++;
	}
	return insns;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct pt_config config;
	uint8_t *buf;
	size_t size;
	int i, runs = 1, first = 1;
	double best = -1.0;
	uint64_t insns = 0, errors = 0;

	if (argc > 2 && strcmp(argv[1], "--bench") == 0) {
		runs = atoi(argv[2]);
		quiet = 1;
		first = 3;
		if (runs < 1) {
			fprintf(stderr, "ptflow: bad --bench count\n");
			return 2;
		}
	}
	pt_config_init(&config);
	if (argc - first > 5 && strcmp(argv[first], "--time") == 0) {
		with_time = 1;
		config.mtc_freq = (uint8_t)strtoul(argv[first + 1], NULL, 0);
		config.cpuid_0x15_eax = (uint32_t)strtoul(argv[first + 2], NULL, 0);
		config.cpuid_0x15_ebx = (uint32_t)strtoul(argv[first + 3], NULL, 0);
		config.nom_freq = (uint8_t)strtoul(argv[first + 4], NULL, 0);
		first += 5;
	}
	if (argc - first < 3 || (argc - first - 1) % 2 != 0) {
		fprintf(stderr, "usage: ptflow [--bench RUNS] [--time MTC_FREQ EAX EBX NOM_FREQ] TRACE.pt IMAGE.bin 0xBASE ...\n");
		return 2;
	}
	buf = ptio_read_file(argv[first], &size);
	if (!buf)
		return 2;

	config.begin = buf;
	config.end = buf + size;
	for (int run = 0; run < runs; run++) {
		struct pt_insn_decoder *dec;
		double t0, dt;

		dec = pt_insn_alloc_decoder(&config);
		if (!dec) {
			fprintf(stderr, "ptflow: cannot allocate the decoder\n");
			return 2;
		}
		for (i = first + 1; i < argc; i += 2)
			if (add_image(pt_insn_get_image(dec), argv[i], argv[i + 1]) < 0)
				return 2;
		errors = 0;
		t0 = now_seconds();
		insns = decode_all(dec, &errors);
		dt = now_seconds() - t0;
		if (best < 0 || dt < best)
			best = dt;
		pt_insn_free_decoder(dec);
	}
	if (quiet)
		printf("{\"instructions\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"seconds\":%.9f}\n", insns, errors, best);
	free(buf);
	return 0;
}
