// `ptlab dump` and `ptlab flow` given a perf.data: the round trip through `ptlab export perf`
// (the same packets and the same flow as the run directory's), perf's own file of another event,
// a truncated or corrupt file (one line, exit 2), AUX flags as losses, and several CPUs.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, test } from 'vitest';
import { main } from '../../harness/cli/main.js';
import { ptlab } from '../cli/run-main.js';
import { tmpRoot } from '../scenarios/tmp.js';
import { perfFixture, recordAt as recordOf } from './perf-fixture.js';

/** `ptlab argv…` with stdout and stderr each as one string, exactly as written. */
async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '', err = '';
  const code = await main(argv, { out: (s) => { out += s; }, err: (s) => { err += s; } });
  return { code, out, err };
}

const root = await tmpRoot('ptlab-perf-in-');
const suite = join(root, 'suite');
await ptlab('run', 'topa-grow', '--cpu', 'skylake', '--out', suite);
const run = join(suite, 'topa-grow', 'skylake');
const exported = join(root, 'tg.data');
await ptlab('export', 'perf', run, '-o', exported);
const trace = await readFile(join(run, 'trace.pt'));
const imageBase = BigInt((JSON.parse(await readFile(join(run, 'image.json'), 'utf8')) as { base: string }).base);
const image = join(run, 'image.bin');
const imageLen = BigInt(Math.ceil((await readFile(image)).length / 4096) * 4096);

/** A perf.data of the run's trace built with the writer's encoders, written to `name`. */
async function fixture(name: string, o: Omit<Parameters<typeof perfFixture>[0], 'image' | 'base' | 'imageLen'> & { image?: string }): Promise<string> {
  const path = join(root, name);
  await writeFile(path, perfFixture({ image, base: imageBase, imageLen, ...o }));
  return path;
}

describe('the round trip through ptlab export perf', () => {
  test('dump prints what it prints for trace.pt, after the line of its CPU', async () => {
    const [a, b] = [await cli('dump', exported), await cli('dump', join(run, 'trace.pt'))];
    expect([a.code, a.err]).toEqual([b.code, b.err]);
    expect(a.out).toBe(`# cpu 0: ${trace.length} bytes of AUX data\n${b.out}`);
    expect(b.out.split('\n').length).toBeGreaterThan(30_000);
  });

  test('dump --json: the stream record, then the packets of trace.pt', async () => {
    const [a, b] = [await cli('dump', exported, '--json'), await cli('dump', join(run, 'trace.pt'), '--json')];
    expect(a.out).toBe(`{"stream":"aux","cpu":0,"tid":4242,"bytes":${trace.length}}\n${b.out}`);
  });

  test('every line of dump --json, the stream record with them, holds to docs/schemas/packet.schema.json', async () => {
    const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
    const valid = ajv.compile(JSON.parse(await readFile(join(process.cwd(), 'docs', 'schemas', 'packet.schema.json'), 'utf8')) as object);
    const lines = (await cli('dump', exported, '--json')).out.trimEnd().split('\n');
    const bad = lines.filter((l) => !valid(JSON.parse(l)));
    expect([lines.length > 30_000, bad.slice(0, 3)]).toEqual([true, []]);
    expect(valid({ stream: 'aux', cpu: 0, tid: 1, bytes: 'many' })).toBe(false);
  });

  test('dump --stats counts the same packets and bytes', async () => {
    const [a, b] = [await cli('dump', exported, '--stats'), await cli('dump', run, '--stats')];
    expect([a.code, a.out]).toEqual([0, b.out]);
  });

  test('flow, its image from the MMAP record, equals flow of the run directory (text and JSON)', async () => {
    const [a, b] = [await cli('flow', exported), await cli('flow', run)];
    const [aj, bj] = [await cli('flow', exported, '--json'), await cli('flow', run, '--json')];
    expect([a.code, a.err, aj.out === bj.out]).toEqual([b.code, b.err.replace(join(run, 'trace.pt'), exported), true]);
    expect(a.out).toBe(b.out);
    expect(b.out.split('\n').length).toBeGreaterThan(10_000);
  });
});

const perf = '/usr/bin/perf';
const ccData = join(root, 'cpu-clock.data');
const recorded = existsSync(perf) ? spawnSync(perf, ['record', '-q', '-e', 'cpu-clock', '-o', ccData, '--', 'true'], { encoding: 'utf8' }) : undefined;
const canRecord = recorded?.status === 0 && existsSync(ccData);

const skipWhy = !existsSync(perf) ? `skipped: ${perf} is missing` : `skipped: perf record -e cpu-clock failed (${recorded?.stderr.trim().split('\n')[0] ?? ''})`;
describe.skipIf(!canRecord)(`a perf record -e cpu-clock file${canRecord ? '' : ` (${skipWhy})`}`, () => {
  test.for(['dump', 'flow'])('%s says it holds no Intel PT data and names its events, exit 2', async (cmd) => {
    const r = await cli(cmd, ccData);
    expect([r.code, r.out, r.err]).toEqual([2, '', `ptlab ${cmd}: ${ccData}: a perf.data without Intel PT data (its events: cpu-clock)\n`]);
  });
});

describe('a truncated or corrupt perf.data is one line, exit 2', async () => {
  // A copy of its own (a Buffer's slice() is a view), so that each case patches its own bytes.
  const good = new Uint8Array(await readFile(exported));
  const dataAt = Number(new DataView(good.buffer).getBigUint64(40, true));
  const recordAt = (type: number): number => recordOf(good, type);
  const cases: Record<string, Uint8Array> = {};
  for (const n of [8, 60, 104, 250, dataAt + 100, Math.floor(good.length / 2), good.length - 50]) cases[`cut at ${n} bytes`] = good.subarray(0, n);
  const zero = good.slice();
  new DataView(zero.buffer).setUint16(recordAt(3) + 6, 0, true);
  cases['a record of size 0'] = zero;
  const huge = good.slice();
  new DataView(huge.buffer).setBigUint64(recordAt(71) + 8, 0xffff_ffff_ffff_fff8n, true);
  cases['a huge AUXTRACE size'] = huge;
  let i = 0;
  for (const [name, bytes] of Object.entries(cases)) {
    const path = join(root, `bad-${i++}.data`);
    await writeFile(path, bytes);
    test.for(['dump', 'flow'])(`${name}: %s`, async (cmd) => {
      const r = await cli(cmd, path);
      expect([r.code, r.out, r.err.split('\n').length, r.err]).toEqual([2, '', 2, expect.stringMatching(new RegExp(`^ptlab ${cmd}: ${path}: a truncated or corrupt perf\\.data: .* \\(at byte \\d+\\)\\n$`))]);
    });
  }
});

describe('AUX flags are losses', async () => {
  const half = Math.floor(trace.length / 2);
  const flagged = await fixture('flagged.data', { cpus: [{ cpu: 1, buffers: [trace], aux: [{ offset: 0, size: half, flags: ['TRUNCATED'] }, { offset: half, size: trace.length - half }] }] });

  test('dump reports each on stderr: where, the AUX record, its flags', async () => {
    const r = await cli('dump', flagged);
    expect([r.code, r.err]).toEqual([0, `ptlab dump: ${flagged}: cpu 1: AUX data lost at byte ${half} of the stream (stop): the AUX record of bytes 0-${half} of the AUX area is flagged TRUNCATED; how many bytes were lost is not recorded\n`]);
  });

  test('flow turns them into gap records: the flow of the run directory with that loss in its ledger', async () => {
    const ledger = join(root, 'half.json');
    await writeFile(ledger, JSON.stringify({ lost: [{ at: half, bytes: null, reason: 'stop' }] }));
    const [a, b] = [await cli('flow', flagged, '--json', '--tolerate-errors'), await cli('flow', run, '--json', '--losses', ledger, '--tolerate-errors')];
    expect(a.out).toContain('{"kind":"gap","bytes":null,"reason":"stop"}');
    expect([a.code, a.out]).toEqual([b.code, b.out]);
  });
});

describe('several CPUs', async () => {
  const two = await fixture('two.data', { cpus: [{ cpu: 2, buffers: [trace] }, { cpu: 0, buffers: [trace.subarray(0, 4096)] }] });

  test('dump decodes each, in the file\'s order, each after its line', async () => {
    const r = await cli('dump', two, '--tolerate-errors');
    expect(r.out.split('\n').filter((l) => l.startsWith('#'))).toEqual([`# cpu 2: ${trace.length} bytes of AUX data`, '# cpu 0: 4096 bytes of AUX data']);
  });

  test('flow refuses to choose, naming the CPUs; --cpu-index N decodes that one', async () => {
    const [none, cpu2, cpu5, direct] = [await cli('flow', two), await cli('flow', two, '--cpu-index', '2'), await cli('flow', two, '--cpu-index', '5'), await cli('flow', run)];
    expect([none.code, none.err]).toEqual([2, `ptlab flow: ${two} holds the AUX data of 2 streams (cpu 2, cpu 0): give --cpu-index N to decode one (ptlab dump shows them all)\n`]);
    expect([cpu2.code, cpu2.out === direct.out, cpu5.code, cpu5.err]).toEqual([0, true, 2, `ptlab flow: ${two} has no AUX data of cpu 5 (its streams: cpu 2, cpu 0)\n`]);
  });
});

describe('the images of a perf.data', () => {
  test('--sysroot DIR is put before each MMAP path, as perf\'s --symfs', async () => {
    const sysroot = join(root, 'sysroot');
    await mkdir(join(sysroot, 'opt'), { recursive: true });
    await writeFile(join(sysroot, 'opt', 'code.bin'), await readFile(image));
    const f = await fixture('moved.data', { cpus: [{ cpu: 0, buffers: [trace] }], image: '/opt/code.bin' });
    const [without, withRoot, direct] = [await cli('flow', f), await cli('flow', f, '--sysroot', sysroot), await cli('flow', run)];
    expect([without.code, without.err.split('\n')[0]]).toEqual([2, `ptlab flow: note: ${f} maps /opt/code.bin: No such file or directory: its code is not in the image (--sysroot DIR finds the files under DIR)`]);
    expect([withRoot.code, withRoot.err, withRoot.out === direct.out]).toEqual([0, '', true]);
  });

  test('--image replaces the MMAP records\' files; --cpu-index and --sysroot go with a perf.data only', async () => {
    const f = await fixture('elsewhere.data', { cpus: [{ cpu: 0, buffers: [trace] }], image: '/nowhere/code.bin' });
    const [given, raw] = [await cli('flow', f, '--image', `${image}@0x${imageBase.toString(16)}`), await cli('flow', join(run, 'trace.pt'), '--image', `${image}@0x${imageBase.toString(16)}`, '--cpu-index', '0')];
    expect([given.code, given.err]).toEqual([0, '']);
    expect([raw.code, raw.err.split('\n')[0]]).toEqual([2, `ptlab flow: --cpu-index goes with a perf.data; ${join(run, 'trace.pt')} is a raw trace`]);
  });

  test('a range of a perf.data is refused: its AUX data is decoded whole', async () => {
    const r = await cli('dump', `${exported}:0x10-0x20`);
    expect([r.code, r.err.split('\n')[0]]).toEqual([2, `ptlab dump: ${exported} is a perf.data: its AUX data is decoded whole (a range FROM-TO applies to a raw trace)`]);
  });
});
