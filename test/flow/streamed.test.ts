// The flow decoder streamed (FlowDecoder begin → push… → end, what `ptlab flow` does with its input
// chunk by chunk) gives exactly the records of the one-shot decode, wherever the chunks are cut:
// across packets, PSBs, the ledger's cut points and OVFs.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { FlowDecoder, type FlowLoss } from '../../driver/decode/flow/flow-decoder.js';
import { ImageSet } from '../../driver/decode/flow/image.js';
import { flowJsonLine } from '../../driver/decode/flow/record.js';
import { parseLosses } from '../../harness/cli/commands/flow.js';
import { runScenario } from '../../harness/runner/run-scenario.js';
import { findScenario } from '../../harness/scenarios/index.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot('ptlab-streamed-');

/** A run's trace, image and ledger (the scenarios chosen for their losses: none, STOP, OVF, wrap). */
async function runOf(scenario: string, profile: 'skylake' | 'full' = 'skylake') {
  const dir = join(root, scenario);
  await runScenario({ scenario: findScenario(scenario), target: 'sim', profile, seed: 3 }, dir);
  const ledger = parseLosses(await readFile(join(dir, 'losses.json'), 'utf8')) as FlowLoss[];
  return { trace: new Uint8Array(await readFile(join(dir, 'trace.pt'))), image: new Uint8Array(await readFile(join(dir, 'image.bin'))), ledger };
}

const RUNS = await Promise.all(['topa-grow', 'topa-stop', 'ovf-drain', 'single-range-wrap', 'ret-compression'].map(async (s) => ({ s, ...(await runOf(s)) })));

function decoded(r: (typeof RUNS)[number], chunks: readonly Uint8Array[] | undefined): string[] {
  const images = new ImageSet([{ base: 0x1000_0000n, bytes: r.image }]);
  const out: string[] = [];
  const d = new FlowDecoder(images, { ledger: r.ledger, maxSteps: 65536 });
  const onRecord = (rec: Parameters<Parameters<FlowDecoder['decode']>[1]>[0]) => out.push(flowJsonLine(rec));
  if (chunks === undefined) d.decode(r.trace, onRecord);
  else { d.begin(onRecord); for (const c of chunks) d.push(c); d.end(); }
  images.dispose();
  return out;
}

/** `bytes` cut at the sorted offsets `at`. */
function cut(bytes: Uint8Array, at: readonly number[]): Uint8Array[] {
  const ends = [...new Set(at)].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const e of [...ends, bytes.length]) { out.push(bytes.subarray(from, e)); from = e; }
  return out;
}

describe('streamed flow decoding', () => {
  test.for(RUNS.map((r) => ({ name: `${r.s} (${r.trace.length} bytes, ${r.ledger.length} losses)`, r })))('$name: one byte at a time equals the one-shot decode', ({ r }) => {
    const bytes = Array.from({ length: r.trace.length }, (_, i) => r.trace.subarray(i, i + 1));
    expect(decoded(r, bytes)).toEqual(decoded(r, undefined));
  });

  test('random cuts, at the ledger\'s offsets too, give the one-shot records', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: RUNS.length - 1 }), fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), (k, raw, atLosses) => {
      const r = RUNS[k]!;
      const at = [...raw.map((x) => x % (r.trace.length + 1)), ...(atLosses ? r.ledger.map((l) => l.at) : [])];
      expect(decoded(r, cut(r.trace, at))).toEqual(decoded(r, undefined));
    }), { numRuns: 60, seed: 7 });
  });

  test('the runs decoded are not trivial: every kind of loss is among them', () => {
    const reasons = new Set(RUNS.flatMap((r) => r.ledger.map((l) => l.reason)));
    expect([...reasons].sort()).toEqual(expect.arrayContaining(['ovf', 'stop', 'wrap']));
  });
});
