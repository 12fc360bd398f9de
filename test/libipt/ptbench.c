/*
 * ptbench - time libipt's packet decoder (pt_pkt_next) over a whole file
 * held in memory, and checksum what it decoded, for `npm run bench`
 * (harness/bench/) and its correctness test.
 *
 * Usage: ptbench FILE [RUNS]
 * Prints {"packets":N,"checksum":"0x…","seconds":S,"errors":E}: S is the
 * best of RUNS (default 1) full decodes, timed with CLOCK_MONOTONIC and
 * excluding file I/O. N counts decoded packets, E error records.
 *
 * The checksum is the C twin of driver/decode/checksum.ts and must match it
 * bit for bit: FNV-1a over 32-bit words, h = 0x811c9dc5,
 * mix(w): h = (h ^ w) * 0x01000193 mod 2^32. Per packet: mix(kind code),
 * mix(size), then the fields in docs/formats/packet-json.md key order: booleans 0/1,
 * small ints as value, 64-bit values as lo32 then hi32, ipc as its IPBytes
 * number with ip omitted when suppressed, TNT as n then the result bits
 * (oldest = bit n-1) lo32, hi32; mode.exec as csl, csd. An error record
 * mixes kind 0 and its size only.
 *
 * Errors and resynchronisation follow docs/formats/packet-json.md, as in ptjson.c.
 */
#include "ptio.h"

#include <inttypes.h>
#include <time.h>

/* Kind codes of driver/decode/record.ts (PacketKind). */
enum kind {
	k_error = 0, k_pad, k_psb, k_psbend, k_ovf, k_stop, k_tip, k_tip_pge,
	k_tip_pgd, k_fup, k_tnt_8, k_tnt_64, k_mode_exec, k_mode_tsx, k_pip,
	k_vmcs, k_cbr, k_tsc, k_tma, k_mtc, k_cyc, k_mnt, k_exstop, k_mwait,
	k_pwre, k_pwrx, k_ptw
};

struct result {
	uint64_t packets;
	uint64_t errors;
	uint32_t checksum;
};

static inline uint32_t mix(uint32_t h, uint32_t w)
{
	return (h ^ w) * 0x01000193u;
}

static inline uint32_t mix64(uint32_t h, uint64_t v)
{
	return mix(mix(h, (uint32_t)v), (uint32_t)(v >> 32));
}

static inline uint32_t mix_ip(uint32_t h, uint32_t kind, uint32_t size,
			      const struct pt_packet_ip *ip)
{
	h = mix(mix(mix(h, kind), size), (uint32_t)ip->ipc);
	return ip->ipc == pt_ipc_suppressed ? h : mix64(h, ip->ip);
}

static inline uint32_t mix_packet(uint32_t h, const struct pt_packet *pkt)
{
	uint32_t size = pkt->size;

	switch (pkt->type) {
	case ppt_pad:
		return mix(mix(h, k_pad), size);
	case ppt_psb:
		return mix(mix(h, k_psb), size);
	case ppt_psbend:
		return mix(mix(h, k_psbend), size);
	case ppt_ovf:
		return mix(mix(h, k_ovf), size);
	case ppt_stop:
		return mix(mix(h, k_stop), size);
	case ppt_tip:
		return mix_ip(h, k_tip, size, &pkt->payload.ip);
	case ppt_tip_pge:
		return mix_ip(h, k_tip_pge, size, &pkt->payload.ip);
	case ppt_tip_pgd:
		return mix_ip(h, k_tip_pgd, size, &pkt->payload.ip);
	case ppt_fup:
		return mix_ip(h, k_fup, size, &pkt->payload.ip);
	case ppt_tnt_8:
	case ppt_tnt_64:
		h = mix(mix(h, pkt->type == ppt_tnt_8 ? k_tnt_8 : k_tnt_64),
			size);
		h = mix(h, pkt->payload.tnt.bit_size);
		return mix64(h, pkt->payload.tnt.payload);
	case ppt_mode:
		if (pkt->payload.mode.leaf == pt_mol_exec) {
			h = mix(mix(h, k_mode_exec), size);
			h = mix(h, pkt->payload.mode.bits.exec.csl);
			return mix(h, pkt->payload.mode.bits.exec.csd);
		}
		h = mix(mix(h, k_mode_tsx), size);
		h = mix(h, pkt->payload.mode.bits.tsx.intx);
		return mix(h, pkt->payload.mode.bits.tsx.abrt);
	case ppt_pip:
		h = mix64(mix(mix(h, k_pip), size), pkt->payload.pip.cr3);
		return mix(h, pkt->payload.pip.nr);
	case ppt_vmcs:
		return mix64(mix(mix(h, k_vmcs), size), pkt->payload.vmcs.base);
	case ppt_cbr:
		return mix(mix(mix(h, k_cbr), size), pkt->payload.cbr.ratio);
	case ppt_tsc:
		return mix64(mix(mix(h, k_tsc), size), pkt->payload.tsc.tsc);
	case ppt_tma:
		h = mix(mix(mix(h, k_tma), size), pkt->payload.tma.ctc);
		return mix(h, pkt->payload.tma.fc);
	case ppt_mtc:
		return mix(mix(mix(h, k_mtc), size), pkt->payload.mtc.ctc);
	case ppt_cyc:
		return mix64(mix(mix(h, k_cyc), size), pkt->payload.cyc.value);
	case ppt_mnt:
		return mix64(mix(mix(h, k_mnt), size), pkt->payload.mnt.payload);
	case ppt_exstop:
		return mix(mix(mix(h, k_exstop), size), pkt->payload.exstop.ip);
	case ppt_mwait:
		h = mix(mix(mix(h, k_mwait), size), pkt->payload.mwait.hints);
		return mix(h, pkt->payload.mwait.ext);
	case ppt_pwre:
		h = mix(mix(mix(h, k_pwre), size), pkt->payload.pwre.state);
		h = mix(h, pkt->payload.pwre.sub_state);
		return mix(h, pkt->payload.pwre.hw);
	case ppt_pwrx:
		h = mix(mix(mix(h, k_pwrx), size), pkt->payload.pwrx.last);
		h = mix(h, pkt->payload.pwrx.deepest);
		h = mix(h, pkt->payload.pwrx.interrupt);
		h = mix(h, pkt->payload.pwrx.store);
		return mix(h, pkt->payload.pwrx.autonomous);
	case ppt_ptw:
		h = mix(mix(mix(h, k_ptw), size), pkt->payload.ptw.plc);
		h = mix64(h, pkt->payload.ptw.payload);
		return mix(h, pkt->payload.ptw.ip);
	case ppt_unknown:
	case ppt_invalid:
		break;
	}
	return mix(mix(h, k_error), size);
}

/* One full decode of @buf; returns 0 or -1 if libipt itself fails. */
static int decode_all(uint8_t *buf, size_t size, struct result *res)
{
	struct pt_packet_decoder *decoder;
	struct pt_config config;
	uint32_t h = 0x811c9dc5u;
	int status;

	memset(res, 0, sizeof(*res));
	pt_config_init(&config);
	config.begin = buf;
	config.end = buf + size;
	decoder = pt_pkt_alloc_decoder(&config);
	if (!decoder)
		return -1;

	status = pt_pkt_sync_forward(decoder);
	if (status < 0) { /* no PSB at all: one eos error at offset 0 */
		h = mix(mix(h, k_error), 0);
		res->errors++;
	}
	while (status >= 0) {
		struct pt_packet pkt;
		uint64_t off;

		status = pt_pkt_next(decoder, &pkt, sizeof(pkt));
		if (status >= 0) {
			h = mix_packet(h, &pkt);
			res->packets++;
			continue;
		}
		if (pt_pkt_get_offset(decoder, &off) < 0)
			break;
		if (status == -pte_eos && off == size)
			break;
		h = mix(mix(h, k_error), 0);
		res->errors++;
		status = pt_pkt_sync_forward(decoder);
	}
	pt_pkt_free_decoder(decoder);
	res->checksum = h;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct result res;
	double best = -1.0;
	long runs = 1, i;
	uint8_t *buf;
	size_t size;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: ptbench FILE [RUNS]\n");
		return 2;
	}
	if (argc == 3)
		runs = strtol(argv[2], NULL, 0);
	if (runs < 1)
		runs = 1;
	buf = ptio_read_file(argv[1], &size);
	if (!buf)
		return 1;
	for (i = 0; i < runs; i++) {
		double start = now(), took;

		if (decode_all(buf, size, &res) < 0) {
			fprintf(stderr, "ptbench: cannot allocate a decoder\n");
			free(buf);
			return 1;
		}
		took = now() - start;
		if (best < 0 || took < best)
			best = took;
	}
	printf("{\"packets\":%" PRIu64 ",\"checksum\":\"0x%" PRIx32
	       "\",\"seconds\":%.6f,\"errors\":%" PRIu64 "}\n",
	       res.packets, res.checksum, best, res.errors);
	free(buf);
	return 0;
}
