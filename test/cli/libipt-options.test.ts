// Every libipt ptdump/ptxed option in harness/cli/libipt-options.ts: docs/formats/libipt-options.md
// holds the same table; each option ptlab takes does what ptdump or ptxed does with it; each it does
// not take is refused with its row's reason (exit 2), never ignored.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { encodePackets } from '../../driver/decode/encode.js';
import type { Packet } from '../../driver/decode/packet.js';
import { LIBIPT_OPTIONS, libiptOptionsTable } from '../../harness/cli/libipt-options.js';
import { tmpRoot } from '../scenarios/tmp.js';
import { ptlab } from './run-main.js';

const root = await tmpRoot('ptlab-libipt-options-');

/** A stream with every kind the filters choose between: PAD, timing packets, IP packets, and an error record at the end. */
const PACKETS: Packet[] = [
  { type: 'psb' }, { type: 'tsc', tsc: 0x1234n }, { type: 'tma', ctc: 1, fc: 2 }, { type: 'cbr', ratio: 32 }, { type: 'psbend' },
  { type: 'pad' }, { type: 'pad' }, { type: 'mode.exec', csl: true, csd: false, if: true },
  { type: 'tip.pge', ipc: 'update-32', ip: 0x10000000n }, { type: 'cyc', value: 5n }, { type: 'mtc', ctc: 3 },
  { type: 'tnt.8', n: 3, bits: 0b101n }, { type: 'pad' }, { type: 'tip', ipc: 'update-16', ip: 0x40n }, { type: 'cyc', value: 9n },
];
const stream = Buffer.concat([encodePackets(PACKETS), Buffer.from([0xd9])]); // 0xd9 opens a packet the stream then cuts off: one error record (eos) at the end
const trace = join(root, 'mixed.pt');
await writeFile(trace, stream);

type Result = Awaited<ReturnType<typeof ptlab>>;
/** `ptlab dump OPTIONS… mixed.pt` for each set of options, one after the other. */
async function dumpEach(...sets: string[][]): Promise<[Result, Result, Result, Result]> {
  const out: Result[] = [];
  for (const o of sets) out.push(await ptlab('dump', ...o, trace));
  return out as [Result, Result, Result, Result];
}
/** The kinds of flow-json branch records (docs/formats/flow-json.md). */
const BRANCHES = new Set(['jcc', 'jmp', 'call', 'ret', 'far.call', 'far.jmp', 'far.ret']);
const lines = (s: string): string[] => s.split('\n').filter((l) => l !== '');
const kinds = (s: string): string[] => lines(s).map((l) => /^[0-9a-f]{16}  (\S+)/.exec(l)?.[1] ?? l);

describe('docs/formats/libipt-options.md', () => {
  test('holds the table of each tool exactly as the code has it', async () => {
    const doc = await readFile('docs/formats/libipt-options.md', 'utf8');
    expect([doc.includes(libiptOptionsTable('ptdump')), doc.includes(libiptOptionsTable('ptxed'))]).toEqual([true, true]);
  });
});

describe('ptdump options in ptlab dump', () => {
  test('--no-pad, --no-timing and --no-cyc leave exactly ptdump\'s packets out; Last IP still counts them', async () => {
    const [all, noPad, noTiming, noCyc] = await dumpEach([], ['--no-pad'], ['--no-timing'], ['--no-cyc']);
    const every = kinds(all.out);
    expect(every.filter((k) => k === 'pad')).toHaveLength(3);
    expect(kinds(noPad.out)).toEqual(every.filter((k) => k !== 'pad'));
    expect(kinds(noTiming.out)).toEqual(every.filter((k) => !['tsc', 'tma', 'cbr', 'mtc', 'cyc'].includes(k)));
    expect(kinds(noCyc.out)).toEqual(every.filter((k) => k !== 'cyc'));
    // The tip's 16-bit update rebuilds 0x10000040 from the tip.pge before it, whatever was hidden between.
    for (const r of [all, noPad, noTiming, noCyc]) expect([r.code, r.out]).toEqual([1, expect.stringMatching(/tip\s+1: 16: 0x40\s+ip 0x10000040/)]);
  });

  test('--quiet prints the error records only, and the exit status is unchanged', async () => {
    const r = await ptlab('dump', '--quiet', trace);
    expect([r.code, lines(r.out)]).toEqual([1, [expect.stringMatching(/^[0-9a-f]{16}  \[error: \w+\]$/)]]);
    const clean = join(root, 'clean.pt');
    await writeFile(clean, encodePackets(PACKETS));
    const q = await ptlab('dump', '--quiet', '--json', clean);
    expect([q.code, q.out]).toEqual([0, '']);
  });

  test('--no-offset drops the first column; --raw adds each packet\'s bytes, padded to 16 bytes', async () => {
    const [all, noOff, raw] = await dumpEach([], ['--no-offset'], ['--raw']);
    const a = lines(all.out), n = lines(noOff.out), r = lines(raw.out);
    expect(n).toEqual(a.map((l) => l.slice(18)));
    let at = 0;
    r.forEach((l, k) => {
      const m = /^([0-9a-f]{16})  ([0-9a-f ]{32})  (.*)$/.exec(l);
      expect(m, l).not.toBeNull();
      const off = Number.parseInt(m![1]!, 16), bytes = m![2]!.trim();
      expect([off, m![3]]).toEqual([at, a[k]!.slice(18)]);
      if (!m![3]!.startsWith('[error')) expect(bytes).toBe(stream.subarray(off, off + bytes.length / 2).toString('hex'));
      at = off + bytes.length / 2;
    });
  });

  test('--lastip and --exec-mode print what ptlab always prints', async () => {
    const [all, last, em] = await dumpEach([], ['--lastip'], ['--exec-mode']);
    expect([last.out, em.out]).toEqual([all.out, all.out]);
  });

  test('--no-sync starts at the first byte; without it bytes before the PSB are skipped', async () => {
    const shifted = join(root, 'shifted.pt');
    await writeFile(shifted, Buffer.concat([Buffer.from([0x00, 0x00]), stream]));
    const [sync, noSync] = [await ptlab('dump', '--json', shifted), await ptlab('dump', '--json', '--no-sync', shifted)];
    expect(lines(noSync.out).slice(0, 3).map((l) => JSON.parse(l) as { off: number; type: string })).toEqual([
      { off: 0, size: 1, type: 'pad' }, { off: 1, size: 1, type: 'pad' }, { off: 2, size: 16, type: 'psb' },
    ]);
    expect(lines(sync.out)).toEqual(lines(noSync.out).slice(2));
  });

  test('FILE:FROM-TO decodes those bytes with offsets from FROM, as dump of a file holding them', async () => {
    const from = 16, to = 40;
    const part = join(root, 'part.pt'), tail = join(root, 'tail.pt');
    await writeFile(part, stream.subarray(from, to));
    await writeFile(tail, stream.subarray(from));
    for (const [arg, file] of [[`${trace}:${from}-${to}`, part], [`${trace}:0x10-0x28`, part], [`${trace}:${from}`, tail]] as const) {
      const [a, b] = [await ptlab('dump', '--no-sync', '--json', arg), await ptlab('dump', '--no-sync', '--json', file)];
      expect([a.code, a.out, lines(a.out).length > 3]).toEqual([b.code, b.out, true]);
    }
    const [past, backwards, onStdin] = [await ptlab('dump', `${trace}:0-${stream.length + 1}`), await ptlab('dump', `${trace}:9-3`), await ptlab('dump', '--', '-:3')];
    expect([past.code, past.err, backwards.code, backwards.err.split('\n')[0], onStdin.code, onStdin.err]).toEqual([
      2, `ptlab dump: ${trace}: ${stream.length} bytes: the range 0-${stream.length + 1} lies past its end\n`,
      2, `ptlab dump: bad trace range '${trace}:9-3': the end (3) must lie past the start (9)`,
      2, 'ptlab dump: standard input: a range is read from a regular file only\n',
    ]);
  });

  test('a file whose name ends in :N is that file, not a range of another', async () => {
    const odd = join(root, 'odd.pt:2');
    await writeFile(odd, stream);
    const [a, b] = [await ptlab('dump', odd), await ptlab('dump', trace)];
    expect(a.out).toBe(b.out);
  });
});

describe('ptxed options in ptlab flow', async () => {
  await ptlab('run', 'mtc-tsc-timing', '--cpu', 'full', '--out', join(root, 'suite'));
  const run = join(root, 'suite', 'mtc-tsc-timing', 'full');
  const base = (JSON.parse(await readFile(join(run, 'image.json'), 'utf8')) as { base: string }).base;
  const image = `${join(run, 'image.bin')}:${base}`;
  const commands = (JSON.parse(await readFile(join(run, 'result.json'), 'utf8')) as { libipt: { ptxed: string; ptdump: string } }).libipt;

  test('the ptxed and ptdump lines result.json prints run as ptlab flow and ptlab dump, and print what the plain forms print', async () => {
    const argsOf = (line: string): string[] => line.split(' ').slice(1).map((a) => a.replace(/^trace\.pt$/, join(run, 'trace.pt')).replace(/^image\.bin:/, `${join(run, 'image.bin')}:`));
    const [flow, plainFlow] = [await ptlab('flow', ...argsOf(commands.ptxed)), await ptlab('flow', run)];
    const [dump, plainDump] = [await ptlab('dump', ...argsOf(commands.ptdump)), await ptlab('dump', run)];
    expect(commands.ptxed).toMatch(/--cpu \d+\/\d+\/\d+ .*--pt trace\.pt --raw image\.bin:0x/);
    expect([flow.code, flow.out === plainFlow.out, flow.out.length > 1000, dump.code, dump.out === plainDump.out]).toEqual([0, true, true, 0, true]);
  });

  test('--quiet prints nothing but errors; --stat counts what --json lists', async () => {
    const [json, quiet, stat] = [await ptlab('flow', run, '--json'), await ptlab('flow', run, '-q'), await ptlab('flow', '--pt', join(run, 'trace.pt'), '--raw', image, '--stat', '--quiet')];
    const records = lines(json.out).map((l) => JSON.parse(l) as { kind: string });
    expect([quiet.code, quiet.out]).toEqual([0, '']);
    expect(lines(stat.out)).toEqual([
      expect.stringMatching(/^instructions \d+$/), `records      ${records.length}`,
      `branches     ${records.filter((r) => BRANCHES.has(r.kind)).length}`, 'errors       0',
    ]);
    const both = await ptlab('flow', run, '--stat', '--json');
    expect([both.code, both.err.split('\n')[0]]).toEqual([2, 'ptlab flow: --stat prints text lines, which would break the JSON Lines of --json: give one of them']);
  });

  test('--pt FILE:FROM decodes from there, offsets counted from FROM', async () => {
    const r = await ptlab('flow', '--pt', `${join(run, 'trace.pt')}:1`, '--raw', image, '--json', '--tolerate-errors');
    const whole = await ptlab('flow', '--pt', join(run, 'trace.pt'), '--raw', image, '--json');
    // One byte in, the first PSB is gone: the decode syncs at the next one and loses the records before it.
    expect([r.code, lines(r.out).length > 0, lines(r.out).length < lines(whole.out).length]).toEqual([0, true, true]);
  });

  test('--cpu names the packet-stream errata of that CPU on stderr, and the timing options are checked', async () => {
    const bdw = await ptlab('flow', run, '--cpu', '6/61', '--mtc-freq', '3', '--nom-freq', '0x20', '--cpuid-0x15.eax', '2', '--cpuid-0x15.ebx', '168');
    expect([bdw.code, bdw.err]).toEqual([0, 'ptlab flow: --cpu 6/61/0 (06_3DH) has packet-stream errata BDM70, BDM64: ptlab decodes by the SDM and works around none of them (libipt does; docs/sdm/errata.md)\n']);
    const none = await ptlab('flow', run, '--cpu', 'none');
    expect([none.code, none.err]).toEqual([0, '']);
    for (const [opt, value, says] of [['--cpu', '6', /--cpu takes none or FAMILY\/MODEL/], ['--cpu', '6/256', /--cpu model takes a number from 0 to 255/],
      ['--mtc-freq', '16', /--mtc-freq takes a number from 0 to 15/], ['--nom-freq', '-1', /--nom-freq takes a number/], ['--cpuid-0x15.eax', '0x100000000', /from 0 to 4294967295/]] as const) {
      const r = await ptlab('flow', run, `${opt}=${value}`);
      expect([r.code, r.err.split('\n')[0]]).toEqual([2, expect.stringMatching(says)]);
    }
  });
});

describe('a libipt option ptlab does not take', () => {
  const spelled = (option: string): string => option.replace('<n>', '1').replace(/^--sb$/, '--sb:compact').replace(/^--pevent$/, '--pevent:primary');
  const refused = LIBIPT_OPTIONS.filter((o) => o.ptlab === undefined && o.option.startsWith('--'));

  test.for(refused.map((o) => [o.tool, o.option] as const))('%s %s is refused with its reason', async ([tool, option]) => {
    const row = refused.find((o) => o.tool === tool && o.option === option)!;
    const r = await ptlab(tool === 'ptdump' ? 'dump' : 'flow', `${spelled(option)}=1`, trace);
    expect([r.code, r.err.split('\n')[0]]).toEqual([2, `ptlab ${tool === 'ptdump' ? 'dump' : 'flow'}: ${tool}'s ${option} (${row.does}) is not taken: ${row.note}`]);
  });

  test('ptlab\'s own --time still goes with --stats', async () => {
    const r = await ptlab('dump', '--stats', '--time', trace);
    expect([r.code, r.err]).toEqual([1, expect.stringMatching(/^seconds\s+[\d.]+\nMB\/s/)]);
  });
});
