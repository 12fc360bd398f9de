/*
 * ptjson - dump an Intel PT file as the JSON Lines of docs/formats/packet-json.md,
 * decoded by libipt's packet decoder (an independent oracle for ptlab's own
 * decoder, driver/decode/).
 *
 * Usage: ptjson [--unknown] FILE...
 *        ptjson --stats FILE
 *        ptjson --text FILE
 *
 * --text prints ptlab's ptdump-like text lines (driver/decode/text.ts: the
 * offset, the packet name, its payload and, for IP packets, the IP through
 * Last IP), the baseline of `ptlab dump` in the whole-process benchmark.
 *
 * --stats prints the packet counts per type as `ptlab dump --stats` does
 * (same names, order and columns; without ptlab's timing lines): the
 * baseline of the whole-process benchmark (harness/bench/cli-section.ts).
 *
 * With more than one FILE, each file's lines are preceded by "#file FILE".
 * --unknown installs libipt's unknown-packet callback for the packets newer
 * than libipt 2.0.5 (BBP, BEP, CFE, EVD, TRIG: docs/sdm/packets.md §3.18-3.20),
 * which are then printed as {"off","size","type":"unknown"} instead of a
 * bad_opc error; it exists to show what libipt does with the bytes after them
 * (a BIP decodes as TNT-8, docs/sdm/packets.md §2).
 *
 * Error and resynchronisation rules (docs/formats/packet-json.md): bytes before the
 * first PSB are skipped silently; no PSB at all gives {"off":0,"error":"eos"};
 * an error gives {"off":N,"error":NAME} at the bad packet and decoding resumes
 * at the next PSB that libipt's pt_pkt_sync_forward() finds.
 */
#include "ptio.h"

#include <inttypes.h>

static int opt_unknown;
static int opt_stats;
static int opt_text;

/* --stats: ptlab's kind codes (driver/decode/record.ts PacketKind) and names, in that order. */
static const char *const kind_names[] = {
	"error", "pad", "psb", "psbend", "ovf", "stop", "tip", "tip.pge", "tip.pgd", "fup",
	"tnt.8", "tnt.64", "mode.exec", "mode.tsx", "pip", "vmcs", "cbr", "tsc", "tma", "mtc",
	"cyc", "mnt", "exstop", "mwait", "pwre", "pwrx", "ptw"
};
#define KINDS (sizeof(kind_names) / sizeof(kind_names[0]))
static uint64_t kind_counts[KINDS];
static uint64_t error_counts[3]; /* bad_opc, bad_packet, eos */

static unsigned kind_of(const struct pt_packet *pkt)
{
	switch (pkt->type) {
	case ppt_pad: return 1;
	case ppt_psb: return 2;
	case ppt_psbend: return 3;
	case ppt_ovf: return 4;
	case ppt_stop: return 5;
	case ppt_tip: return 6;
	case ppt_tip_pge: return 7;
	case ppt_tip_pgd: return 8;
	case ppt_fup: return 9;
	case ppt_tnt_8: return 10;
	case ppt_tnt_64: return 11;
	case ppt_mode: return pkt->payload.mode.leaf == pt_mol_exec ? 12 : 13;
	case ppt_pip: return 14;
	case ppt_vmcs: return 15;
	case ppt_cbr: return 16;
	case ppt_tsc: return 17;
	case ppt_tma: return 18;
	case ppt_mtc: return 19;
	case ppt_cyc: return 20;
	case ppt_mnt: return 21;
	case ppt_exstop: return 22;
	case ppt_mwait: return 23;
	case ppt_pwre: return 24;
	case ppt_pwrx: return 25;
	case ppt_ptw: return 26;
	default: return 0;
	}
}

static void count_error(int status)
{
	error_counts[status == -pte_eos ? 2 : status == -pte_bad_opc ? 0 : 1]++;
}

static void print_stats(uint64_t bytes)
{
	static const char *const error_names[] = { "bad_opc", "bad_packet", "eos" };
	uint64_t packets = 0, errors = 0;
	unsigned k;

	for (k = 1; k < KINDS; k++) {
		if (kind_counts[k])
			printf("%-10s %" PRIu64 "\n", kind_names[k], kind_counts[k]);
		packets += kind_counts[k];
	}
	for (k = 0; k < 3; k++) {
		char name[32];

		if (!error_counts[k])
			continue;
		snprintf(name, sizeof(name), "error %s", error_names[k]);
		printf("%-10s %" PRIu64 "\n", name, error_counts[k]);
		errors += error_counts[k];
	}
	printf("packets    %" PRIu64 "\nerrors     %" PRIu64 "\nbytes      %" PRIu64 "\n", packets, errors, bytes);
}

/* --text: Last IP (docs/sdm/packets.md §5), reset at PSB. */
static uint64_t last_ip;

static int update_last_ip(const struct pt_packet_ip *ip)
{
	switch (ip->ipc) {
	case pt_ipc_update_16: last_ip = (last_ip & ~0xffffull) | (ip->ip & 0xffffull); return 1;
	case pt_ipc_update_32: last_ip = (last_ip & ~0xffffffffull) | (ip->ip & 0xffffffffull); return 1;
	case pt_ipc_sext_48:
		last_ip = (ip->ip & (1ull << 47)) ? (ip->ip & 0xffffffffffffull) | 0xffff000000000000ull : ip->ip & 0xffffffffffffull;
		return 1;
	case pt_ipc_update_48: last_ip = (last_ip & ~0xffffffffffffull) | (ip->ip & 0xffffffffffffull); return 1;
	case pt_ipc_full: last_ip = ip->ip; return 1;
	default: return 0;
	}
}

/* The payload text of one packet (empty for none), as text.ts TextFormatter writes it. */
static void text_payload(char *out, size_t cap, const struct pt_packet *pkt)
{
	static const char *const ipc_short[] = { "0", "1: 16", "2: 32", "3: s48", "4: 48", "?", "6: 64", "?" };
	static const int ipbytes[] = { [pt_ipc_suppressed] = 0, [pt_ipc_update_16] = 1, [pt_ipc_update_32] = 2,
		[pt_ipc_sext_48] = 3, [pt_ipc_update_48] = 4, [pt_ipc_full] = 6 };
	char tmp[64];
	int n, k;

	out[0] = 0;
	switch (pkt->type) {
	case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd: case ppt_fup:
		if (pkt->payload.ip.ipc == pt_ipc_suppressed) {
			snprintf(out, cap, "0: (suppressed)");
			break;
		}
		snprintf(tmp, sizeof(tmp), "%s: 0x%" PRIx64, ipc_short[ipbytes[pkt->payload.ip.ipc]], pkt->payload.ip.ip);
		if (update_last_ip(&pkt->payload.ip))
			snprintf(out, cap, "%-28sip 0x%" PRIx64, tmp, last_ip);
		else
			snprintf(out, cap, "%-28s", tmp);
		break;
	case ppt_tnt_8: case ppt_tnt_64:
		n = pkt->payload.tnt.bit_size;
		for (k = 0; k < n && k + 1 < (int)cap; k++)
			out[k] = (pkt->payload.tnt.payload >> (n - 1 - k)) & 1 ? '!' : '.';
		out[k] = 0;
		break;
	case ppt_mode:
		if (pkt->payload.mode.leaf == pt_mol_exec) {
			const struct pt_packet_mode_exec *e = &pkt->payload.mode.bits.exec;
			snprintf(out, cap, "%s", e->csl ? (e->csd ? "unknown" : "64bit") : (e->csd ? "32bit" : "16bit"));
		} else {
			const struct pt_packet_mode_tsx *t = &pkt->payload.mode.bits.tsx;
			snprintf(out, cap, "%s", t->intx && t->abrt ? "intx abrt" : t->intx ? "intx" : t->abrt ? "abrt" : "(none)");
		}
		break;
	case ppt_pip: snprintf(out, cap, "cr3 0x%" PRIx64 "%s", pkt->payload.pip.cr3, pkt->payload.pip.nr ? " nr" : ""); break;
	case ppt_vmcs: snprintf(out, cap, "base 0x%" PRIx64, pkt->payload.vmcs.base); break;
	case ppt_cbr: snprintf(out, cap, "%u", pkt->payload.cbr.ratio); break;
	case ppt_tsc: snprintf(out, cap, "0x%" PRIx64, pkt->payload.tsc.tsc); break;
	case ppt_tma: snprintf(out, cap, "ctc 0x%x fc 0x%x", pkt->payload.tma.ctc, pkt->payload.tma.fc); break;
	case ppt_mtc: snprintf(out, cap, "0x%x", pkt->payload.mtc.ctc); break;
	case ppt_cyc: snprintf(out, cap, "0x%" PRIx64, pkt->payload.cyc.value); break;
	case ppt_mnt: snprintf(out, cap, "0x%" PRIx64, pkt->payload.mnt.payload); break;
	case ppt_exstop: snprintf(out, cap, "%s", pkt->payload.exstop.ip ? "ip" : ""); break;
	case ppt_mwait: snprintf(out, cap, "hints 0x%x ext 0x%x", pkt->payload.mwait.hints, pkt->payload.mwait.ext); break;
	case ppt_ptw:
		snprintf(out, cap, "%d: 0x%" PRIx64 "%s", pkt->payload.ptw.plc == 0 ? 4 : 8, pkt->payload.ptw.payload, pkt->payload.ptw.ip ? " ip" : "");
		break;
	default:
		break;
	}
}

static void put_text(uint64_t off, const struct pt_packet *pkt)
{
	char payload[128];

	if (pkt->type == ppt_psb)
		last_ip = 0;
	text_payload(payload, sizeof(payload), pkt);
	if (payload[0])
		printf("%016" PRIx64 "  %-10s%s\n", off, kind_names[kind_of(pkt)], payload);
	else
		printf("%016" PRIx64 "  %s\n", off, kind_names[kind_of(pkt)]);
}


/* Exactly the hex form of docs/formats/packet-json.md: 0x, lowercase, no leading 0s. */
static void put_hex(const char *key, uint64_t value)
{
	printf(",\"%s\":\"0x%" PRIx64 "\"", key, value);
}

static void put_int(const char *key, uint64_t value)
{
	printf(",\"%s\":%" PRIu64, key, value);
}

static void put_bool(const char *key, int value)
{
	printf(",\"%s\":%s", key, value ? "true" : "false");
}

static const char *ipc_name(enum pt_ip_compression ipc)
{
	switch (ipc) {
	case pt_ipc_suppressed:
		return "suppressed";
	case pt_ipc_update_16:
		return "update-16";
	case pt_ipc_update_32:
		return "update-32";
	case pt_ipc_sext_48:
		return "sext-48";
	case pt_ipc_update_48:
		return "update-48";
	case pt_ipc_full:
		return "full";
	}
	return "invalid";
}

static const char *exec_mode_name(const struct pt_packet_mode_exec *exec)
{
	switch (pt_get_exec_mode(exec)) {
	case ptem_16bit:
		return "16bit";
	case ptem_32bit:
		return "32bit";
	case ptem_64bit:
		return "64bit";
	case ptem_unknown:
		break;
	}
	return "unknown";
}

static void put_ip(const char *type, const struct pt_packet_ip *ip)
{
	printf("%s\"", type);
	printf(",\"ipc\":\"%s\"", ipc_name(ip->ipc));
	if (ip->ipc != pt_ipc_suppressed)
		put_hex("ip", ip->ip);
}

/*
 * libipt keeps the TNT results without the stop bit in the low bit_size bits
 * of payload, the oldest result in the most significant of them (libipt
 * pt_pkt_read_tnt(); docs/sdm/packets.md §3.2: the bit next to the stop bit is
 * the oldest). packet-json wants the oldest first.
 */
static void put_tnt(const char *type, const struct pt_packet_tnt *tnt)
{
	char bits[65];
	int n = tnt->bit_size, k;

	for (k = 0; k < n && k < 64; k++)
		bits[k] = ((tnt->payload >> (n - 1 - k)) & 1) ? '1' : '0';
	bits[k] = '\0';
	printf("%s\",\"n\":%d,\"bits\":\"%s\"", type, n, bits);
}

static void put_packet(uint64_t off, const struct pt_packet *pkt)
{
	printf("{\"off\":%" PRIu64 ",\"size\":%u,\"type\":\"", off,
	       (unsigned)pkt->size);
	switch (pkt->type) {
	case ppt_pad:
		printf("pad\"");
		break;
	case ppt_psb:
		printf("psb\"");
		break;
	case ppt_psbend:
		printf("psbend\"");
		break;
	case ppt_ovf:
		printf("ovf\"");
		break;
	case ppt_stop:
		printf("stop\"");
		break;
	case ppt_tip:
		put_ip("tip", &pkt->payload.ip);
		break;
	case ppt_tip_pge:
		put_ip("tip.pge", &pkt->payload.ip);
		break;
	case ppt_tip_pgd:
		put_ip("tip.pgd", &pkt->payload.ip);
		break;
	case ppt_fup:
		put_ip("fup", &pkt->payload.ip);
		break;
	case ppt_tnt_8:
		put_tnt("tnt.8", &pkt->payload.tnt);
		break;
	case ppt_tnt_64:
		put_tnt("tnt.64", &pkt->payload.tnt);
		break;
	case ppt_mode:
		if (pkt->payload.mode.leaf == pt_mol_exec) {
			const struct pt_packet_mode_exec *exec =
				&pkt->payload.mode.bits.exec;

			printf("mode.exec\"");
			put_bool("csl", exec->csl);
			put_bool("csd", exec->csd);
			printf(",\"mode\":\"%s\"", exec_mode_name(exec));
		} else {
			printf("mode.tsx\"");
			put_bool("intx", pkt->payload.mode.bits.tsx.intx);
			put_bool("abrt", pkt->payload.mode.bits.tsx.abrt);
		}
		break;
	case ppt_pip:
		printf("pip\"");
		put_hex("cr3", pkt->payload.pip.cr3);
		put_bool("nr", pkt->payload.pip.nr);
		break;
	case ppt_vmcs:
		printf("vmcs\"");
		put_hex("base", pkt->payload.vmcs.base);
		break;
	case ppt_cbr:
		printf("cbr\"");
		put_int("ratio", pkt->payload.cbr.ratio);
		break;
	case ppt_tsc:
		printf("tsc\"");
		put_hex("tsc", pkt->payload.tsc.tsc);
		break;
	case ppt_tma:
		printf("tma\"");
		put_int("ctc", pkt->payload.tma.ctc);
		put_int("fc", pkt->payload.tma.fc);
		break;
	case ppt_mtc:
		printf("mtc\"");
		put_int("ctc", pkt->payload.mtc.ctc);
		break;
	case ppt_cyc:
		printf("cyc\"");
		put_hex("value", pkt->payload.cyc.value);
		break;
	case ppt_mnt:
		printf("mnt\"");
		put_hex("payload", pkt->payload.mnt.payload);
		break;
	case ppt_exstop:
		printf("exstop\"");
		put_bool("ip", pkt->payload.exstop.ip);
		break;
	case ppt_mwait:
		printf("mwait\"");
		put_hex("hints", pkt->payload.mwait.hints);
		put_hex("ext", pkt->payload.mwait.ext);
		break;
	case ppt_pwre:
		printf("pwre\"");
		put_int("state", pkt->payload.pwre.state);
		put_int("sub_state", pkt->payload.pwre.sub_state);
		put_bool("hw", pkt->payload.pwre.hw);
		break;
	case ppt_pwrx:
		printf("pwrx\"");
		put_int("last", pkt->payload.pwrx.last);
		put_int("deepest", pkt->payload.pwrx.deepest);
		put_bool("interrupt", pkt->payload.pwrx.interrupt);
		put_bool("store", pkt->payload.pwrx.store);
		put_bool("autonomous", pkt->payload.pwrx.autonomous);
		break;
	case ppt_ptw:
		printf("ptw\"");
		put_int("plc", pkt->payload.ptw.plc);
		put_hex("payload", pkt->payload.ptw.payload);
		put_bool("ip", pkt->payload.ptw.ip);
		break;
	case ppt_unknown:
		printf("unknown\"");
		break;
	case ppt_invalid:
		printf("invalid\"");
		break;
	}
	printf("}\n");
}

static void put_error(uint64_t off, int status)
{
	printf("{\"off\":%" PRIu64 ",\"error\":\"%s\"}\n", off,
	       ptio_error_name(status));
}

/*
 * Sizes of the packets newer than libipt 2.0.5, for --unknown only
 * (docs/sdm/packets.md §1 and §3.18-3.20). Anything else stays bad_opc.
 */
static int decode_unknown(struct pt_packet_unknown *unknown,
			  const struct pt_config *config, const uint8_t *pos,
			  void *context)
{
	size_t left = (size_t)(config->end - pos);
	int size = 0;

	(void)unknown;
	(void)context;
	if (pos[0] == 0x02 && left >= 2) {
		switch (pos[1]) {
		case 0x63: /* BBP */
			size = 3;
			break;
		case 0x33: /* BEP */
		case 0xb3:
			size = 2;
			break;
		case 0x13: /* CFE */
			size = 4;
			break;
		case 0x53: /* EVD */
			size = 11;
			break;
		}
	} else if (pos[0] == 0xd9 && left >= 2) { /* TRIG: ICNTV adds 2 */
		size = (pos[1] & 0x40) ? 5 : 3;
	}
	if (size == 0)
		return -pte_bad_opc;
	if ((size_t)size > left)
		return -pte_eos;
	return size;
}

static int dump_file(const char *path)
{
	struct pt_packet_decoder *decoder;
	struct pt_config config;
	uint8_t *buf;
	size_t size;
	int status;

	buf = ptio_read_file(path, &size);
	if (!buf)
		return -1;

	pt_config_init(&config);
	config.begin = buf;
	config.end = buf + size;
	if (opt_unknown)
		config.decode.callback = decode_unknown;

	decoder = pt_pkt_alloc_decoder(&config);
	if (!decoder) {
		fprintf(stderr, "%s: cannot allocate a libipt decoder\n", path);
		free(buf);
		return -1;
	}

	status = pt_pkt_sync_forward(decoder);
	if (status < 0) {
		if (opt_stats)
			count_error(status);
		else
			put_error(0, status); /* no PSB at all: {"off":0,"error":"eos"} */
	}

	while (status >= 0) {
		struct pt_packet pkt;
		uint64_t off;

		status = pt_pkt_get_offset(decoder, &off);
		if (status < 0)
			break;
		status = pt_pkt_next(decoder, &pkt, sizeof(pkt));
		if (status >= 0) {
			if (opt_stats)
				kind_counts[kind_of(&pkt)]++;
			else if (opt_text)
				put_text(off, &pkt);
			else
				put_packet(off, &pkt);
			continue;
		}
		if (status == -pte_eos && off == size)
			break; /* ended exactly on a packet boundary */
		if (opt_stats)
			count_error(status);
		else if (opt_text)
			printf("%016" PRIx64 "  [error: %s]\n", off, ptio_error_name(status));
		else
			put_error(off, status);
		status = pt_pkt_sync_forward(decoder);
	}

	pt_pkt_free_decoder(decoder);
	free(buf);
	if (opt_stats)
		print_stats(size);
	return 0;
}

int main(int argc, char **argv)
{
	static char outbuf[1 << 16];
	int first = 1, files, i, rc = 0;

	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	if (argc > 1 && strcmp(argv[1], "--unknown") == 0) {
		opt_unknown = 1;
		first = 2;
	} else if (argc == 3 && strcmp(argv[1], "--stats") == 0) {
		opt_stats = 1;
		first = 2;
	} else if (argc == 3 && strcmp(argv[1], "--text") == 0) {
		opt_text = 1;
		first = 2;
	}
	files = argc - first;
	if (files < 1) {
		fprintf(stderr, "usage: ptjson [--unknown] FILE... | ptjson --stats FILE | ptjson --text FILE\n");
		return 2;
	}
	for (i = first; i < argc; i++) {
		if (files > 1)
			printf("#file %s\n", argv[i]);
		if (dump_file(argv[i]) < 0)
			rc = 1;
	}
	if (fflush(stdout) != 0)
		rc = 1;
	return rc;
}
