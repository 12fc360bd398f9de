// The benchmark sections `npm run bench` runs, in order. Add a later
// benchmark (sim, flow, qemu) as one more entry of SECTIONS.
import { decodeBench, type DecodeResult } from './decode-bench.js';
import type { LibiptTools } from './libipt-tools.js';

/** What every section gets. */
export interface BenchContext {
  /** --quick: small inputs, for smoke tests. */
  readonly quick: boolean;
  readonly tools: LibiptTools;
  /** --check: a missed speed target fails its section (npm run bench exits non-zero). */
  readonly check: boolean;
}

/** A section's printable report; ok = false makes `npm run bench` exit non-zero. */
export interface SectionReport {
  readonly lines: readonly string[];
  readonly ok: boolean;
}

/** One benchmark. */
export interface BenchSection {
  readonly name: string;
  run(ctx: BenchContext): Promise<SectionReport>;
}

/** The decode speed target: ptlab at least this many times libipt's packets/s. */
export const DECODE_TARGET_RATIO = 2.0;

const MB = 1e6;

function pad(s: string, width: number, left = false): string {
  return left ? s.padEnd(width) : s.padStart(width);
}

function decodeRow(name: string, r: DecodeResult, bytes: number): string {
  return [
    pad(name, 8, true),
    pad((bytes / MB / r.seconds).toFixed(1), 9),
    pad((r.packets / 1e6 / r.seconds).toFixed(2), 12),
    pad(r.seconds.toFixed(3), 9),
    pad(String(r.packets), 11),
    pad(String(r.errors), 7),
    `  0x${r.checksum.toString(16)}`,
  ].join('');
}

/** libipt's pt_pkt_next against our PacketDecoder on the realistic stream of stream.ts. */
export const decodeSection: BenchSection = {
  name: 'decode',
  async run({ quick, tools }) {
    const size = (quick ? 8 : 64) << 20;
    const runs = 3;
    const c = await decodeBench(tools.ptbench, size, runs);
    const ratio = (c.ptlab.packets / c.ptlab.seconds) / (c.libipt.packets / c.libipt.seconds);
    const lines = [
      `packet decoder: ${(c.bytes / (1 << 20)).toFixed(1)} MiB stream (harness/bench/stream.ts), best of ${runs}, MB = 10^6 bytes`,
      `${pad('decoder', 8, true)}${pad('MB/s', 9)}${pad('Mpackets/s', 12)}${pad('seconds', 9)}${pad('packets', 11)}${pad('errors', 7)}  checksum`,
      decodeRow('libipt', c.libipt, c.bytes),
      decodeRow('ptlab', c.ptlab, c.bytes),
      `ratio ptlab/libipt: ${ratio.toFixed(2)}x (target >= ${DECODE_TARGET_RATIO.toFixed(1)}x${ratio >= DECODE_TARGET_RATIO ? '' : ', NOT MET'})`,
      ...c.mismatches.map((m) => `MISMATCH ${m}`),
    ];
    return { lines, ok: c.mismatches.length === 0 };
  },
};

/** Every section, in the order `npm run bench` runs them (model sections load lazily). */
export const SECTIONS: readonly BenchSection[] = [
  decodeSection,
  lazySection('sim', async () => (await import('./model-sections.js')).simSection),
  lazySection('flow', async () => (await import('./model-sections.js')).flowSection),
  lazySection('qemu', async () => (await import('./guest-link-bench.js')).qemuSection),
  lazySection('driver', async () => (await import('./driver-section.js')).driverSection),
  lazySection('cli', async () => (await import('./cli-section.js')).cliSection),
  lazySection('report', async () => (await import('./report-bench.js')).reportSection),
  lazySection('suite', async () => (await import('./suite-bench.js')).suiteSection),
];

function lazySection(name: string, load: () => Promise<BenchSection>): BenchSection {
  return { name, run: async (ctx) => (await load()).run(ctx) };
}
