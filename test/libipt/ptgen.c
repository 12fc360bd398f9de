/*
 * ptgen - deterministic random Intel PT streams written by libipt's packet
 * ENCODER (pt_enc_next), for the cross-check corpus (test/crosscheck/).
 *
 * Usage: ptgen [--size BYTES] FIRST_SEED LAST_SEED OUTDIR
 *
 * Writes OUTDIR/ptgen-SEED.pt for every seed in [FIRST_SEED, LAST_SEED].
 * Each stream starts with a PSB+ and then holds a random mix of every packet
 * type libipt 2.0.5 knows (docs/sdm/packets.md §1 minus the [new] packets), with
 * random payloads, and a PSB+ again every few hundred bytes. The streams are
 * packet-level tests only: they follow no control-flow rules.
 *
 * The PRNG is splitmix64, so a seed gives the same bytes on every machine.
 */
#include "ptio.h"

#include <inttypes.h>

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A uniform value in [0, n). The tiny modulo bias is irrelevant here. */
static uint64_t below(uint64_t n)
{
	return rnd() % n;
}

/* A random value of 0..bits random bits, so small and large values appear. */
static uint64_t rnd_bits(unsigned int bits)
{
	unsigned int width = (unsigned int)below(bits + 1);

	if (width == 0)
		return 0;
	return width >= 64 ? rnd() : rnd() & ((1ull << width) - 1);
}

static const enum pt_ip_compression ipcs[] = {
	pt_ipc_suppressed, pt_ipc_update_16, pt_ipc_update_32,
	pt_ipc_sext_48,    pt_ipc_update_48, pt_ipc_full,
};

/* Payload bits each IP compression carries (docs/sdm/packets.md §5). */
static unsigned int ipc_bits(enum pt_ip_compression ipc)
{
	switch (ipc) {
	case pt_ipc_suppressed:
		return 0;
	case pt_ipc_update_16:
		return 16;
	case pt_ipc_update_32:
		return 32;
	case pt_ipc_sext_48:
	case pt_ipc_update_48:
		return 48;
	case pt_ipc_full:
		return 64;
	}
	return 0;
}

static void rnd_ip(struct pt_packet *pkt, enum pt_packet_type type)
{
	enum pt_ip_compression ipc = ipcs[below(6)];
	unsigned int bits = ipc_bits(ipc);

	pkt->type = type;
	pkt->payload.ip.ipc = ipc;
	pkt->payload.ip.ip = bits == 0 ? 0 :
			     bits == 64 ? rnd() : rnd() & ((1ull << bits) - 1);
}

static void rnd_tnt(struct pt_packet *pkt, enum pt_packet_type type,
		    unsigned int max)
{
	unsigned int n = 1 + (unsigned int)below(max);

	pkt->type = type;
	pkt->payload.tnt.bit_size = (uint8_t)n;
	pkt->payload.tnt.payload = rnd() & ((1ull << n) - 1);
}

/* One random packet of any type libipt 2.0.5 knows. */
static void rnd_packet(struct pt_packet *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
	switch (below(27)) {
	case 0:
		pkt->type = ppt_pad;
		break;
	case 1:
		pkt->type = ppt_psb;
		break;
	case 2:
		pkt->type = ppt_psbend;
		break;
	case 3:
		pkt->type = ppt_ovf;
		break;
	case 4:
		pkt->type = ppt_stop;
		break;
	case 5:
		rnd_ip(pkt, ppt_tip);
		break;
	case 6:
		rnd_ip(pkt, ppt_tip_pge);
		break;
	case 7:
		rnd_ip(pkt, ppt_tip_pgd);
		break;
	case 8:
		rnd_ip(pkt, ppt_fup);
		break;
	case 9:
	case 10:
		rnd_tnt(pkt, ppt_tnt_8, 6);
		break;
	case 11:
		rnd_tnt(pkt, ppt_tnt_64, 47);
		break;
	case 12:
		pkt->type = ppt_mode;
		pkt->payload.mode.leaf = pt_mol_exec;
		pkt->payload.mode.bits.exec.csl = below(2);
		pkt->payload.mode.bits.exec.csd = below(2);
		break;
	case 13:
		pkt->type = ppt_mode;
		pkt->payload.mode.leaf = pt_mol_tsx;
		pkt->payload.mode.bits.tsx.intx = below(2);
		pkt->payload.mode.bits.tsx.abrt = below(2);
		break;
	case 14: /* CR3[51:5] (docs/sdm/packets.md §3.4) */
		pkt->type = ppt_pip;
		pkt->payload.pip.cr3 = rnd() & 0x000fffffffffffe0ull;
		pkt->payload.pip.nr = below(2);
		break;
	case 15: /* VMCS pointer [51:12] (§3.12) */
		pkt->type = ppt_vmcs;
		pkt->payload.vmcs.base = rnd() & 0x000ffffffffff000ull;
		break;
	case 16:
		pkt->type = ppt_cbr;
		pkt->payload.cbr.ratio = (uint8_t)rnd();
		break;
	case 17: /* TSC[55:0] (§3.8) */
		pkt->type = ppt_tsc;
		pkt->payload.tsc.tsc = rnd_bits(56);
		break;
	case 18: /* CTC 16 bits, FC 9 bits (§3.10) */
		pkt->type = ppt_tma;
		pkt->payload.tma.ctc = (uint16_t)rnd();
		pkt->payload.tma.fc = (uint16_t)below(512);
		break;
	case 19:
		pkt->type = ppt_mtc;
		pkt->payload.mtc.ctc = (uint8_t)rnd();
		break;
	case 20: /* at most 9 bytes = 61 value bits (§3.11) */
		pkt->type = ppt_cyc;
		pkt->payload.cyc.value = rnd_bits(61);
		break;
	case 21:
		pkt->type = ppt_mnt;
		pkt->payload.mnt.payload = rnd();
		break;
	case 22:
		pkt->type = ppt_exstop;
		pkt->payload.exstop.ip = below(2);
		break;
	case 23:
		pkt->type = ppt_mwait;
		pkt->payload.mwait.hints = (uint32_t)rnd();
		pkt->payload.mwait.ext = (uint32_t)rnd();
		break;
	case 24: /* libipt writes hw at byte-2 bit 3 (docs/sdm/packets.md §3.17) */
		pkt->type = ppt_pwre;
		pkt->payload.pwre.state = (uint8_t)below(16);
		pkt->payload.pwre.sub_state = (uint8_t)below(16);
		pkt->payload.pwre.hw = below(2);
		break;
	case 25:
		pkt->type = ppt_pwrx;
		pkt->payload.pwrx.last = (uint8_t)below(16);
		pkt->payload.pwrx.deepest = (uint8_t)below(16);
		pkt->payload.pwrx.interrupt = below(2);
		pkt->payload.pwrx.store = below(2);
		pkt->payload.pwrx.autonomous = below(2);
		break;
	default:
		pkt->type = ppt_ptw;
		pkt->payload.ptw.plc = (uint8_t)below(2);
		pkt->payload.ptw.payload =
			pkt->payload.ptw.plc ? rnd() : (uint32_t)rnd();
		pkt->payload.ptw.ip = below(2);
		break;
	}
}

static int emit(struct pt_encoder *encoder, struct pt_packet *pkt)
{
	int status = pt_enc_next(encoder, pkt);

	if (status < 0 && status != -pte_eos)
		fprintf(stderr, "ptgen: pt_enc_next(type %d): %s\n",
			(int)pkt->type, ptio_error_name(status));
	return status;
}

/* PSB+ in the reference-model order (docs/sdm/packets.md §8), parts optional. */
static int psb_plus(struct pt_encoder *encoder)
{
	struct pt_packet pkt;
	int status;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_psb;
	status = emit(encoder, &pkt);
	if (status >= 0 && below(2)) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_tsc;
		pkt.payload.tsc.tsc = rnd_bits(56);
		status = emit(encoder, &pkt);
	}
	if (status >= 0 && below(2)) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_pip;
		pkt.payload.pip.cr3 = rnd() & 0x000fffffffffffe0ull;
		status = emit(encoder, &pkt);
	}
	if (status >= 0) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_cbr;
		pkt.payload.cbr.ratio = (uint8_t)rnd();
		status = emit(encoder, &pkt);
	}
	if (status >= 0 && below(2)) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_mode;
		pkt.payload.mode.leaf = pt_mol_exec;
		pkt.payload.mode.bits.exec.csl = 1;
		status = emit(encoder, &pkt);
		if (status >= 0) {
			rnd_ip(&pkt, ppt_fup);
			status = emit(encoder, &pkt);
		}
	}
	if (status >= 0) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_psbend;
		status = emit(encoder, &pkt);
	}
	return status;
}

/* Fill @buf with one stream for @seed; returns the bytes written or -1. */
static long generate(uint64_t seed, uint8_t *buf, size_t size)
{
	struct pt_encoder *encoder;
	struct pt_config config;
	uint64_t off = 0, next_psb;
	int status;

	rng_state = seed;
	pt_config_init(&config);
	config.begin = buf;
	config.end = buf + size;
	encoder = pt_alloc_encoder(&config);
	if (!encoder)
		return -1;

	status = psb_plus(encoder);
	next_psb = 256 + below(768);
	while (status >= 0) {
		struct pt_packet pkt;

		if (pt_enc_get_offset(encoder, &off) < 0)
			break;
		/* Stop with room to spare: the longest packet is 16 bytes. */
		if (off + 64 > size)
			break;
		if (off >= next_psb) {
			status = psb_plus(encoder);
			next_psb = off + 256 + below(768);
			continue;
		}
		rnd_packet(&pkt);
		status = emit(encoder, &pkt);
	}
	if (status < 0)
		off = 0;
	else if (pt_enc_get_offset(encoder, &off) < 0)
		off = 0;
	pt_free_encoder(encoder);
	return status < 0 ? -1 : (long)off;
}

int main(int argc, char **argv)
{
	unsigned long first, last, seed;
	size_t size = 4096;
	const char *outdir;
	uint8_t *buf;
	int argi = 1;

	if (argc > 2 && strcmp(argv[1], "--size") == 0) {
		size = strtoul(argv[2], NULL, 0);
		argi = 3;
	}
	if (argc - argi != 3 || size < 128) {
		fprintf(stderr,
			"usage: ptgen [--size BYTES>=128] FIRST_SEED LAST_SEED OUTDIR\n");
		return 2;
	}
	first = strtoul(argv[argi], NULL, 0);
	last = strtoul(argv[argi + 1], NULL, 0);
	outdir = argv[argi + 2];

	buf = malloc(size);
	if (!buf)
		return 1;
	for (seed = first; seed <= last; seed++) {
		char path[4096];
		long len;

		memset(buf, 0, size);
		len = generate(seed, buf, size);
		if (len < 0) {
			fprintf(stderr, "ptgen: seed %lu failed\n", seed);
			free(buf);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/ptgen-%lu.pt", outdir, seed);
		if (ptio_write_file(path, buf, (size_t)len) < 0) {
			free(buf);
			return 1;
		}
	}
	free(buf);
	return 0;
}
