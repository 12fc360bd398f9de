// The JSON formats a lab's tools read, checked against the JSON Schemas in docs/schemas/ with ajv:
// every file of real run directories (a suite on the sim, every scenario on one profile, skips
// and failures included), packet JSON Lines of those traces and of arbitrary packets, and flow
// JSON Lines. Each schema is also shown to reject a wrong document, so a pass means something.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { encodePackets } from '../../driver/decode/encode.js';
import { dumpJson } from '../../driver/decode/json.js';
import { flowLines } from '../../driver/decode/flow/flow-decoder.js';
import { ImageSet } from '../../driver/decode/flow/image.js';
import { flowJsonLine } from '../../driver/decode/flow/record.js';
import { main } from '../../harness/cli/main.js';
import { resultJsonText, verdictOf, withCorruption, type ResultJson } from '../../harness/rundir/result.js';
import { tmpRoot } from '../scenarios/tmp.js';
import { anyPacket } from '../decode/arbitrary.js';

// strictRequired is off: a conditional `required` names properties declared at the top level.
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
const schema = (name: string): ValidateFunction => ajv.compile(JSON.parse(readFileSync(join(process.cwd(), 'docs', 'schemas', `${name}.schema.json`), 'utf8')) as object);
const S = {
  result: schema('result'), losses: schema('losses'), image: schema('image'), transcript: schema('transcript-line'),
  packet: schema('packet'), flow: schema('flow'),
};

/** Documents that fail `v`, each with ajv's first complaint. */
function invalid(v: ValidateFunction, docs: readonly unknown[]): string[] {
  return docs.flatMap((d) => (v(d) ? [] : [`${JSON.stringify(d).slice(0, 120)}: ${ajv.errorsText(v.errors)}`]));
}

const root = await tmpRoot('ptlab-schemas-');
const out = join(root, 'suite');
// Every scenario on one profile, one with a failing verdict (a negative-control knob) in another directory.
await main(['run', '--all', '--cpu', 'full', '--out', out], { out: () => undefined, err: () => undefined });
await main(['run', 'topa-grow', '--cpu', 'skylake', '--knob', 'no-topa-pmi', '--out', join(root, 'failing')], { out: () => undefined, err: () => undefined });
const runDirs = [...readdirSync(out, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(out, e.name, 'full')), join(root, 'failing', 'topa-grow', 'skylake')];
const read = (dir: string, f: string): string | undefined => { try { return readFileSync(join(dir, f), 'utf8'); } catch { return undefined; } };
const lines = (text: string | undefined): unknown[] => (text ?? '').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown);

describe('run directories against docs/schemas', () => {
  test('there are run directories of every verdict but error to check', () => {
    const verdicts = new Set(runDirs.map((d) => (JSON.parse(read(d, 'result.json')!) as { verdict: string }).verdict));
    expect([runDirs.length > 30, [...verdicts].sort()]).toEqual([true, ['fail', 'pass', 'skip']]);
  });

  test.for(['result', 'losses', 'image'] as const)('every %s.json validates', (name) => {
    const docs = runDirs.map((d) => read(d, `${name}.json`)).filter((t) => t !== undefined).map((t) => JSON.parse(t) as unknown);
    expect([docs.length > 0, invalid(S[name], docs)]).toEqual([true, []]);
  });

  test('every transcript.jsonl line validates', () => {
    const docs = runDirs.flatMap((d) => lines(read(d, 'transcript.jsonl')));
    expect([docs.length > 1000, invalid(S.transcript, docs)]).toEqual([true, []]);
  });

  test('packet JSON lines of every trace.pt validate (every packet type in them, at most 200 lines of each)', () => {
    const docs: unknown[] = [];
    const perType = new Map<string, number>();
    for (const d of runDirs) {
      try {
        dumpJson(readFileSync(join(d, 'trace.pt')), (l) => {
          const type = /"type":"([^"]+)"/.exec(l)?.[1] ?? 'error';
          const n = perType.get(type) ?? 0;
          perType.set(type, n + 1);
          if (n < 200) docs.push(JSON.parse(l));
        });
      } catch { /* a skipped run has no trace */ }
    }
    expect([perType.size > 12, invalid(S.packet, docs)]).toEqual([true, []]);
  });

  test('every flow JSON line of the runs validates', () => {
    const docs: unknown[] = [];
    for (const d of runDirs) {
      const im = read(d, 'image.json');
      if (im === undefined) continue;
      const set = new ImageSet([{ base: BigInt((JSON.parse(im) as { base: string }).base), bytes: readFileSync(join(d, 'image.bin')) }]);
      for (const l of flowLines(readFileSync(join(d, 'trace.pt')), set, flowJsonLine)) docs.push(JSON.parse(l));
    }
    expect([docs.length > 1000, invalid(S.flow, docs)]).toEqual([true, []]);
  });
});

describe('packet JSON of arbitrary packets and bytes', () => {
  test('every packet the encoder can write, and every decode error of random bytes, validates', () => {
    fc.assert(fc.property(fc.array(anyPacket, { maxLength: 40 }), fc.uint8Array({ maxLength: 64 }), (packets, junk) => {
      const docs: unknown[] = [];
      dumpJson(new Uint8Array([...encodePackets(packets), ...junk]), (l) => docs.push(JSON.parse(l)));
      return invalid(S.packet, docs).length === 0;
    }), { numRuns: 300 });
  });
});

describe('the memory oracle in result.json and transcript.jsonl', () => {
  const event = { kind: 'free-while-tracing', cpu: 1, addr: '0x7000', length: 4096, detail: 'output region 0x7000+4096 freed while CPU 1 had TraceEn=1' };
  const judged: ResultJson = {
    scenario: 'topa-grow', target: 'sim', profile: 'skylake', seed: 1, ...verdictOf([{ name: 'a', ok: true, detail: 'd' }]),
    expectations: [{ name: 'a', ok: true, detail: 'd' }], figures: { bytes: 1 },
  };
  const corrupt = { ...withCorruption(judged, [event]), leaked: [{ base: '0x9000', size: 4096, role: 'ToPA table' }] };

  test('a corrupt result.json with its events and a leaked buffer validates', () => {
    const doc = JSON.parse(resultJsonText(corrupt)) as Record<string, unknown>;
    expect([doc.verdict, invalid(S.result, [doc])]).toEqual(['corrupt', []]);
  });

  test('a pass with a leaked buffer but no corrupt event validates', () => {
    expect(invalid(S.result, [JSON.parse(resultJsonText({ ...judged, leaked: corrupt.leaked })) as unknown])).toEqual([]);
  });

  test('a corrupt transcript line validates', () => {
    const line = { seq: 7, t_us: 12, cpu: 1, op: 'corrupt', value: event.kind, addr: event.addr, length: event.length, result: event.detail };
    expect(invalid(S.transcript, [line])).toEqual([]);
  });

  test.for([
    { name: 'result', doc: { ...corrupt, corrupt: undefined }, why: 'a corrupt verdict without its events' },
    { name: 'result', doc: { ...corrupt, corrupt: [{ ...event, kind: 'scribble' }] }, why: 'an event of no known kind' },
    { name: 'result', doc: { ...corrupt, corrupt: [{ ...event, addr: 28672 }] }, why: 'an event address that is not hex' },
    { name: 'result', doc: { ...corrupt, leaked: [{ base: '0x9000', size: -1, role: 'ToPA table' }] }, why: 'a leaked buffer of negative size' },
    { name: 'transcript', doc: { seq: 0, t_us: 0, cpu: 0, op: 'corrupt', value: 'trace-write', addr: '0x7000', result: 'x' }, why: 'a corrupt line without its length' },
    { name: 'transcript', doc: { seq: 0, t_us: 0, cpu: 0, op: 'corrupt', value: 'trace-write', addr: '0x7000', length: -8, result: 'x' }, why: 'a negative length' },
  ] as const)('rejected: $why', ({ name, doc }) => {
    expect(S[name](JSON.parse(JSON.stringify(doc)))).toBe(false);
  });
});

describe('the schemas reject what is wrong', () => {
  test.for([
    { name: 'result', doc: { scenario: 's', target: 'sim', profile: 'p', seed: 1, verdict: 'fail', expectations: [], figures: {} }, why: 'a fail without a reason' },
    { name: 'losses', doc: { collected: 1, lost: [{ at: 0, bytes: 1, reason: 'lost' }] }, why: 'an unknown loss reason' },
    { name: 'transcript', doc: { seq: 0, t_us: 0, cpu: 0, op: 'rdmsr' }, why: 'an rdmsr without its MSR' },
    { name: 'packet', doc: { off: 0, size: 3, type: 'tip', ipc: 'full' }, why: 'a TIP with an IP compression but no IP' },
    { name: 'packet', doc: { off: 0, size: 2, type: 'exstop', ip: '0x1' }, why: 'a boolean field given as hex' },
    { name: 'flow', doc: { kind: 'branch', ip: '0x1000' }, why: 'a branch kind that flow-json does not have' },
    { name: 'image', doc: { base: '0x10', entry: '0x10', bytes: 2, cpuid14: [], profile: 'p' }, why: 'an image.json without cpu and timing' },
  ] as const)('$name: $why', ({ name, doc }) => {
    expect(S[name](doc)).toBe(false);
  });
});
