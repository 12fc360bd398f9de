// Our flow reconstruction against libipt 2.0.5's instruction-flow decoder
// (test/libipt/ptflow.c) on hand-made traces that libipt can decode
// (docs/design.md; not the SDM forms of docs/sdm/packets.md §10 notes it cannot).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { buildPtflow, ptflow } from '../../harness/bench/libipt-flow-tool.js';
import { LibiptToolsError } from '../../harness/bench/libipt-tools.js';
import type { FlowOptions } from '../../driver/decode/flow/flow-decoder.js';
import type { Packet } from '../../driver/decode/packet.js';
import { flowBenchInput } from '../../harness/bench/flow-bench.js';
import { flow, images, ipPkt, MODE64, psbOn, psbThenPge, tnt, trace } from './helpers.js';

let exe: string | undefined;
let skipReason = '';
try {
  exe = await buildPtflow();
} catch (e) {
  if (!(e instanceof LibiptToolsError) || process.env['CI'] === 'true') throw e;
  skipReason = `libipt unavailable (${e.reason})`;
}

const LOOP: [bigint, number[]] = [0x1000n, [0x74, 0x02, 0x90, 0x90, 0x75, 0xfa, 0x0f, 0x05]];
const CALLRET: [bigint, number[]] = [0x1000n, [0xe8, 0x05, 0, 0, 0, 0xeb, 0x04, 0xcc, 0xcc, 0xcc, 0xc3, 0x0f, 0x05]];
const INDCALL: [bigint, number[]] = [0x1000n, [0xff, 0xd0, 0x0f, 0x05, 0xc3]];
const DEFERRED: [bigint, number[]] = [0x1000n, [0x74, 0x02, 0xcc, 0xcc, 0xff, 0xe2, ...Array<number>(10).fill(0xcc), 0x75, 0x02, 0x0f, 0x05, 0xcc, 0xcc]];
const NESTED: [bigint, number[]] = [0x1000n, [
  0xe8, 0x0b, 0, 0, 0, 0x0f, 0x05, ...Array<number>(9).fill(0xcc), 0xe8, 0x0b, 0, 0, 0, 0xc3, ...Array<number>(10).fill(0xcc), 0xc3,
]];
const SECOND: [bigint, number[]] = [0x2000n, [0x90, 0x0f, 0x05]];
const PGD: [bigint, number[]] = [0x1000n, [0x74, 0x10, 0xeb, 0x0e, 0x0f, 0x22, 0xd8]];
const END = ipPkt('tip.pgd');

interface Case {
  readonly name: string;
  readonly images: [bigint, number[]][];
  readonly packets: Packet[];
  readonly opts?: FlowOptions;
}

const CASES: readonly Case[] = [
  { name: 'jcc taken and not taken', images: [LOOP], packets: [...psbOn(0x1000n), tnt('TN'), END] },
  { name: 'direct call, compressed ret, direct jmp', images: [CALLRET], packets: [...psbOn(0x1000n), tnt('T'), END] },
  { name: 'uncompressed ret', images: [CALLRET], packets: [...psbOn(0x1000n), ipPkt('tip', 0x100bn), END] },
  { name: 'indirect call via TIP', images: [INDCALL], packets: [...psbOn(0x1000n), ipPkt('tip', 0x1004n), tnt('T'), END] },
  { name: 'deferred TIP', images: [DEFERRED], packets: [...psbOn(0x1000n), tnt('TN'), ipPkt('tip', 0x1010n), END] },
  {
    name: 'uncompressed then compressed RET with the libipt return stack',
    images: [NESTED], packets: [...psbOn(0x1000n), ipPkt('tip', 0x1015n), tnt('T'), ipPkt('tip.pgd', 0x1005n)], opts: { libiptRetStack: true },
  },
  { name: 'TIP.PGE then TIP.PGD with the jcc target', images: [PGD], packets: [...psbThenPge(0x1000n), ipPkt('tip.pgd', 0x1012n)] },
  { name: 'TIP.PGD after a direct jmp', images: [PGD], packets: [...psbThenPge(0x1000n), tnt('N'), ipPkt('tip.pgd', 0x1012n)] },
  { name: 'FUP + TIP.PGD() (WRMSR)', images: [LOOP], packets: [...psbOn(0x1000n), tnt('T'), ipPkt('fup', 0x1004n), ipPkt('tip.pgd')] },
  {
    name: 'disable and re-enable', images: [LOOP],
    packets: [...psbOn(0x1000n), ipPkt('fup', 0x1000n), ipPkt('tip.pgd'), MODE64, ipPkt('tip.pge', 0x1004n), tnt('N'), END],
  },
  { name: 'async FUP + TIP', images: [LOOP, SECOND], packets: [...psbOn(0x1000n), tnt('T'), ipPkt('fup', 0x1004n), ipPkt('tip', 0x2000n), END] },
  {
    name: 'OVF then FUP', images: [LOOP],
    packets: [...psbOn(0x1000n), { type: 'ovf' }, { type: 'tsc', tsc: 5n }, ipPkt('fup', 0x1004n), tnt('N'), END],
  },
  {
    name: 'OVF then TIP.PGE', images: [LOOP],
    packets: [...psbOn(0x1000n), { type: 'ovf' }, MODE64, ipPkt('tip.pge', 0x1004n), tnt('N'), END],
  },
  { name: 'PSB+ later in the trace', images: [LOOP], packets: [...psbOn(0x1000n), tnt('T'), ...psbOn(0x1004n), tnt('N'), END] },
];

describe.skipIf(exe === undefined)(exe === undefined ? `flow vs libipt (skipped: ${skipReason})` : 'flow vs libipt', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ptlab-flow-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test.for(CASES.map((c, i) => ({ ...c, i })))('$name: ptflow prints the same records', async ({ images: imgs, packets, opts, i }) => {
    const bytes = trace(packets);
    const tracePath = join(dir, `t${i}.pt`);
    writeFileSync(tracePath, bytes);
    const files = imgs.map(([base, code], k) => {
      const path = join(dir, `t${i}-img${k}.bin`);
      writeFileSync(path, Uint8Array.from(code));
      return { path, base };
    });
    const theirs = await ptflow(exe!, tracePath, files);
    const ours = flow(images(...imgs), bytes, opts);
    expect(ours.length).toBeGreaterThan(0);
    expect(ours).toEqual(theirs);
  });

  test('a synthetic loop with PSBs (2000 iterations, 8000 branches): ptflow prints the same records', async () => {
    const { trace: bytes, images: imgs } = flowBenchInput(2000, 4);
    const tracePath = join(dir, 'loop.pt');
    const imagePath = join(dir, 'loop.bin');
    writeFileSync(tracePath, bytes);
    writeFileSync(imagePath, imgs[0]!.bytes);
    const theirs = await ptflow(exe!, tracePath, [{ path: imagePath, base: imgs[0]!.base }]);
    const ours = flow(images([imgs[0]!.base, [...imgs[0]!.bytes]]), bytes);
    expect(ours).toHaveLength(8001);
    expect(ours).toEqual(theirs);
  });

  test('TIP.PGD() after a taken jcc (the SDM form, spec §10 notes): libipt 2.0.5 fails with bad_query, we decode the taken jcc', async () => {
    // A probe of libipt: PSB+ (FUP at the jcc), TIP.PGD(); a second PSB+ follows.
    const bytes = trace(psbOn(0x1000n), ipPkt('tip.pgd'), psbOn(0x1004n));
    const tracePath = join(dir, 'sdm-pgd.pt');
    const imagePath = join(dir, 'sdm-pgd.bin');
    writeFileSync(tracePath, bytes);
    writeFileSync(imagePath, Uint8Array.from(PGD[1]));
    const theirs = await ptflow(exe!, tracePath, [{ path: imagePath, base: PGD[0] }]);
    expect(theirs.map((l) => JSON.parse(l) as unknown)).toMatchObject([{ kind: 'error', error: 'bad_query' }]);
    expect(flow(images(PGD), bytes)).toEqual(['{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1012"}', '{"kind":"disable"}']);
  });
});
