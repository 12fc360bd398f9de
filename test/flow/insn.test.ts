// `ptlab flow --insn` (ptxed's listing: every instruction, disassembled): rebuilt from the flow's
// records, it lists exactly as many instructions as the decoder walked, on runs with jumps, calls
// and returns, PMIs, overflows and filters; --att, --raw-insn and --no-inst shape it as in ptxed.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot('ptlab-flow-insn-');

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '', err = '';
  const code = await main(argv, { out: (s) => { out += s; }, err: (s) => { err += s; } });
  return { code, out, err };
}

const SCENARIOS = ['mtc-tsc-timing', 'topa-grow', 'pmi-skid', 'ret-compression', 'ovf-drain', 'ip-filter', 'tracestop'];
await cli('run', ...SCENARIOS, '--cpu', 'full', '--out', join(root, 'suite'));
const runOf = (s: string): string => join(root, 'suite', s, 'full');
const stat = (out: string, name: string): number => Number(new RegExp(`^${name} +(\\d+)$`, 'm').exec(out)?.[1] ?? NaN);

describe('flow --insn', () => {
  test.for(SCENARIOS)('%s: the listing holds as many instructions as the decoder walked, and never gives up', async (s) => {
    const r = await cli('flow', runOf(s), '--insn', '--stat');
    expect([r.code, stat(r.out, 'listed') === stat(r.out, 'instructions'), stat(r.out, 'instructions') > 0, /\[listing stops/.test(r.out)]).toEqual([0, true, true, false]);
  });

  test('each line is the address as ptxed prints it (16 hex digits) and Intel syntax; events are bracketed', async () => {
    const lines = (await cli('flow', runOf('mtc-tsc-timing'), '--insn')).out.split('\n');
    expect(lines.slice(0, 3)).toEqual(['[enabled]', '0000000010000000  xor ecx, ecx', '0000000010000002  jmp 0x10000007']);
    expect(lines.filter((l) => l !== '').at(-1)).toBe('[disabled]');
  });

  test('--att (implying --insn): AT&T syntax; --no-inst: addresses only; --raw-insn: the bytes from the image', async () => {
    const image = await readFile(join(runOf('mtc-tsc-timing'), 'image.bin'));
    const [att, bare, raw] = [await cli('flow', runOf('mtc-tsc-timing'), '--att'), await cli('flow', runOf('mtc-tsc-timing'), '--insn', '--no-inst'), await cli('flow', runOf('mtc-tsc-timing'), '--raw-insn')];
    expect(att.out.split('\n')[1]).toBe('0000000010000000  xor %ecx, %ecx');
    expect(bare.out.split('\n')[1]).toBe('0000000010000000');
    const m = /^0000000010000000  ((?:[0-9a-f]{2} )*[0-9a-f]{2}) +xor ecx, ecx$/.exec(raw.out.split('\n')[1]!);
    expect(m?.[1]).toBe(image.subarray(0, 2).toString('hex').replace(/(..)(?!$)/g, '$1 '));
  });

  test('events are bracketed lines: an OVF resumes the listing where tracing went on; a filter disables and enables it', async () => {
    const events = async (scenario: string): Promise<string[]> => (await cli('flow', runOf(scenario), '--insn')).out.split('\n').filter((l) => l.startsWith('['));
    const [ovf, filter] = [await events('ovf-drain'), await events('ip-filter')];
    const count = (list: string[], re: RegExp): number => list.filter((l) => re.test(l)).length;
    expect([count(ovf, /^\[overflow, resumed at 0x[0-9a-f]+\]$/) > 0, count(ovf, /^\[gap: unknown bytes lost \(ovf\)\]$/) > 0]).toEqual([true, true]);
    expect([count(filter, /^\[disabled\]$/) > 100, count(filter, /^\[disabled\]$/) === count(filter, /^\[enabled\]$/)]).toEqual([true, true]);
  });

  test('--insn with --json is refused: one listing at a time', async () => {
    const r = await cli('flow', runOf('topa-grow'), '--insn', '--json');
    expect([r.code, r.err.split('\n')[0]]).toEqual([2, 'ptlab flow: --insn lists instructions as text lines; --json lists the flow\'s records: give one of them']);
  });
});
