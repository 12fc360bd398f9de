// `ptlab flow`: files in, flow-json or a listing out; exit 2 for bad usage and unreadable files.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { flowCommand, parseLosses } from '../../harness/cli/commands/flow.js';
import { ipPkt, psbOn, tnt, trace } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'ptlab-flow-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// 0x1000: je 0x1004 | nop | nop | 0x1004: jne 0x1000 | 0x1006: syscall
const IMAGE = join(dir, 'image.bin');
writeFileSync(IMAGE, Uint8Array.from([0x74, 0x02, 0x90, 0x90, 0x75, 0xfa, 0x0f, 0x05]));
const TRACE = join(dir, 'trace.pt');
writeFileSync(TRACE, trace(psbOn(0x1000n), tnt('TN'), ipPkt('tip.pgd')));

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await flowCommand(argv, { out: (s) => { out += s; }, err: (s) => { err += s; } });
  return { code, out, err };
}

describe('ptlab flow', () => {
  test('--json prints flow JSON Lines', async () => {
    const r = await run(TRACE, '--image', `${IMAGE}@0x1000`, '--json');
    expect(r.code).toBe(0);
    expect(r.out).toBe([
      '{"ip":"0x1000","kind":"jcc","taken":true,"to":"0x1004"}',
      '{"ip":"0x1004","kind":"jcc","taken":false,"to":"0x1006"}',
      '{"ip":"0x1006","kind":"far.call"}',
      '{"kind":"disable"}',
      '',
    ].join('\n'));
  });

  test('without --json it prints one readable line per record', async () => {
    const r = await run(TRACE, '--image', `${IMAGE}@0x1000`);
    expect(r.code).toBe(0);
    expect(r.out.trimEnd().split('\n')).toHaveLength(4);
    expect(r.out).toContain('jcc taken');
  });

  test('--losses adds the ledger gaps', async () => {
    const losses = join(dir, 'losses.json');
    writeFileSync(losses, JSON.stringify({ collected: 10, lost: [{ at: 1000, bytes: 64, reason: 'stop' }] }));
    const r = await run(TRACE, '--image', `${IMAGE}@0x1000`, '--json', '--losses', losses);
    expect(r.out.trimEnd().split('\n').at(-1)).toBe('{"kind":"gap","bytes":64,"reason":"stop"}');
  });

  test.for([
    { name: 'no arguments', argv: [] },
    { name: 'no --image', argv: [TRACE] },
    { name: 'an --image without a base', argv: [TRACE, '--image', IMAGE] },
    { name: 'an unknown option', argv: [TRACE, '--image', `${IMAGE}@0x1000`, '--fast'] },
    { name: 'a missing trace file', argv: [join(dir, 'nope.pt'), '--image', `${IMAGE}@0x1000`] },
    { name: 'a missing image file', argv: [TRACE, '--image', `${join(dir, 'nope.bin')}@0x1000`] },
  ])('exits 2 with a message for $name', async ({ argv }) => {
    const r = await run(...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^ptlab flow: /);
    expect(r.out).toBe('');
  });

  test('--opt=value works, and a base is read as ptxed reads it (digits alone are decimal)', async () => {
    const hex = await run(TRACE, '--image', `${IMAGE}@0x1000`, '--json');
    const dec = await run(TRACE, `--image=${IMAGE}@4096`, '--json');
    expect([dec.code, dec.out]).toEqual([0, hex.out]);
  });

  test('an image at the wrong base: error records, exit 1, and a line that says no instruction lies in the image', async () => {
    const r = await run(TRACE, '--image', `${IMAGE}@1000`, '--json');
    expect(r.code).toBe(1);
    expect(r.out).toContain('"error":"nomap"');
    expect(r.err).toContain(`no instruction of the trace lies in the image(s) (${IMAGE}@0x3e8): is the base right?`);
    const tolerated = await run(TRACE, '--image', `${IMAGE}@1000`, '--json', '--tolerate-errors');
    expect([tolerated.code, tolerated.out]).toEqual([0, r.out]);
  });

  test('a loop with no packets (jmp $) stops at --max-insns with one runaway record, not millions of records', async () => {
    const spin = join(dir, 'spin.bin');
    writeFileSync(spin, Uint8Array.from([0xeb, 0xfe]));
    const t = join(dir, 'spin.pt');
    writeFileSync(t, trace(psbOn(0x1000n), tnt('T')));
    const bounded = await run(t, '--image', `${spin}@0x1000`, '--json', '--max-insns=1000');
    const lines = bounded.out.trimEnd().split('\n');
    expect([bounded.code, lines.length < 1100, lines.filter((l) => l.includes('"error":"runaway"')).length]).toEqual([1, true, 1]);
    const byDefault = await run(t, '--image', `${spin}@0x1000`, '--json');
    expect(byDefault.out.trimEnd().split('\n').length).toBeLessThan(70_000);
    const bad = await run(t, '--image', `${spin}@0x1000`, '--max-insns', '0');
    expect([bad.code, bad.err.split('\n')[0]]).toEqual([2, "ptlab flow: --max-insns takes a positive whole number, got '0'"]);
  });

  test('--help prints the usage on stdout and exits 0', async () => {
    const r = await run('--help');
    expect([r.code, r.out.startsWith('usage: ptlab flow'), r.err]).toEqual([0, true, '']);
  });

  test('a malformed losses.json is rejected with its reason', () => {
    expect(parseLosses('{"lost":[{"at":-1,"bytes":1,"reason":"wrap"}]}')).toMatch(/bad "at"/);
    expect(parseLosses('{"lost":[{"at":1,"bytes":1,"reason":"lunch"}]}')).toMatch(/bad "reason"/);
    expect(parseLosses('[]')).toMatch(/no "lost"/);
  });
});
