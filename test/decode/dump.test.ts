// `ptlab dump` on real temp files: --json, --stats, text, missing file, bad usage.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { dumpCommand } from '../../harness/cli/commands/dump.js';
import { OutputClosedError } from '../../harness/cli/fd-sink.js';
import { hex, PSB } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'ptlab-dump-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, bytes: number[]): string {
  const p = join(dir, name);
  writeFileSync(p, Uint8Array.from(bytes));
  return p;
}

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await dumpCommand(argv, { out: (s) => { out += s; }, err: (s) => { err += s; } });
  return { code, out, err };
}

const STREAM = [...PSB, ...hex('99 01 2D 34 12 0A 05')];

describe('ptlab dump', () => {
  test('--json prints the packet-json lines', async () => {
    const r = await run([file('a.pt', STREAM), '--json']);
    expect(r.code).toBe(1); // the stream ends in an unknown opcode
    expect(r.out).toBe([
      '{"off":0,"size":16,"type":"psb"}',
      '{"off":16,"size":2,"type":"mode.exec","csl":true,"csd":false,"mode":"64bit"}',
      '{"off":18,"size":3,"type":"tip","ipc":"update-16","ip":"0x1234"}',
      '{"off":21,"size":1,"type":"tnt.8","n":2,"bits":"01"}',
      '{"off":22,"error":"bad_opc"}',
      '',
    ].join('\n'));
  });

  test('the default text output shows the reconstructed IP', async () => {
    const r = await run([file('b.pt', STREAM)]);
    expect(r.code).toBe(1);
    const lines = r.out.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe('0000000000000000  psb');
    expect(lines[2]).toMatch(/^0000000000000012  tip\s+1: 16: 0x1234\s+ip 0x1234$/);
    expect(lines[3]).toMatch(/^0000000000000015  tnt\.8\s+\.!$/);
    expect(lines[4]).toBe('0000000000000016  [error: bad_opc]');
  });

  test('--stats counts packets per type and errors', async () => {
    const r = await run(['--stats', file('c.pt', STREAM)]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^psb\s+1$/m);
    expect(r.out).toMatch(/^tip\s+1$/m);
    expect(r.out).toMatch(/^error bad_opc\s+1$/m);
    expect(r.out).toMatch(/^packets\s+4$/m);
    expect(r.out).toMatch(/^bytes\s+23$/m);
    expect(r.out).not.toMatch(/seconds|MB\/s|Mpackets/);
  });

  test('a file larger than one read chunk decodes like the one-shot JSON', async () => {
    // 9 MiB of TNT-8 after a PSB crosses the 8 MiB chunk boundary.
    const big = new Uint8Array(16 + 9 * 1024 * 1024).fill(0x06);
    big.set(PSB, 0);
    const p = join(dir, 'big.pt');
    writeFileSync(p, big);
    const r = await run(['--stats', p]);
    expect(r.out).toMatch(new RegExp(`^tnt\\.8\\s+${9 * 1024 * 1024}$`, 'm'));
    expect(r.out).toMatch(/^errors\s+0$/m);
  });

  test('decode errors: exit 1 with their count, kinds and first offset; --tolerate-errors exits 0 with the same output', async () => {
    const p = file('e.pt', STREAM);
    const strict = await run([p, '--json']);
    const tolerant = await run([p, '--json', '--tolerate-errors']);
    expect([strict.code, strict.err]).toEqual([1, `ptlab dump: ${p}: 1 decode error (1 bad_opc; the first at offset 22); --tolerate-errors exits 0\n`]);
    expect([tolerant.code, tolerant.err, tolerant.out]).toEqual([0, '', strict.out]);
  });

  test('a clean stream exits 0 and bytes with no PSB at all are an error (exit 1)', async () => {
    const clean = await run([file('clean.pt', [...PSB, ...hex('99 01 2D 34 12')]), '--stats']);
    const noise = await run([file('noise.pt', [0x11, 0x22, 0x33, 0x44, 0x55, 0x66]), '--stats']);
    expect([clean.code, clean.err, /^errors\s+0$/m.test(clean.out)]).toEqual([0, '', true]);
    expect([noise.code, /^error eos\s+1$/m.test(noise.out), noise.err.includes('no PSB: not a PT stream')]).toEqual([1, true, true]);
  });

  test('usage: --opt=value style, --help exits 0 on stdout, mistakes exit 2 naming the option', async () => {
    const help = await run(['--help']);
    const both = await run(['--json', '--stats', 'x.pt']);
    const unknown = await run(['--bogus', 'x.pt']);
    const none = await run([]);
    expect([help.code, help.out.startsWith('usage: ptlab dump'), help.err]).toEqual([0, true, '']);
    expect([both.code, both.err.split('\n')[0]]).toEqual([2, 'ptlab dump: --json and --stats exclude each other']);
    expect([unknown.code, unknown.err.split('\n')[0]]).toEqual([2, "ptlab dump: Unknown option '--bogus'"]);
    expect([none.code, none.err.split('\n')[0]]).toEqual([2, 'ptlab dump: missing FILE.pt (or - for standard input)']);
  });

  test('a reader that goes away mid-stream ends the command with OutputClosedError, not as an unreadable input', async () => {
    const big = new Uint8Array(16 + (1 << 20)).fill(0x06);
    big.set(PSB, 0);
    const p = join(dir, 'closed.pt');
    writeFileSync(p, big);
    let err = '';
    const closed = dumpCommand([p, '--json'], { out: () => { throw new OutputClosedError(1); }, err: (s) => { err += s; } });
    await expect(closed).rejects.toBeInstanceOf(OutputClosedError);
    expect(err).toBe('');
  });

  test('a stream with no PSB says so, not eos', async () => {
    const r = await run([file('readme.pt', [...new TextEncoder().encode('# ptlab\nnot a trace\n')])]);
    expect([r.code, r.err]).toEqual([1, `ptlab dump: ${join(dir, 'readme.pt')}: no PSB: not a PT stream, or it starts mid-packet (decoding starts at a PSB); --tolerate-errors exits 0\n`]);
  });

  test('a missing file is exit code 2 with a message', async () => {
    const r = await run([join(dir, 'nope.pt')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('nope.pt');
    expect(r.err).toBe(`ptlab dump: ${join(dir, 'nope.pt')}: No such file or directory\n`);
  });

  test.for([[], ['a', 'b'], ['--json', '--stats', 'x.pt'], ['--bogus', 'x.pt'], ['--json', '--time', 'x.pt'], ['--stats', '--tcal', 'x.pt']])('bad usage %j is exit code 2 with where the options are', async (argv) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.err).toContain('(ptlab dump --help shows its options)');
  });

  test('--stats prints the same on stdout twice; --time puts the timings on stderr', async () => {
    const f = file('t.pt', STREAM);
    const [a, b, t] = [await run(['--stats', f]), await run(['--stats', f]), await run(['--stats', '--time', f])];
    expect([a.out === b.out, /seconds|MB\/s/.test(a.out + a.err), t.out === a.out, /^seconds +\d/m.test(t.err), /^MB\/s /m.test(t.err)])
      .toEqual([true, false, true, true, true]);
  });
});
