// Every sequence of the sequences/ library passes on the sim, each written as a run directory whose
// result.json and transcript lines the run-directory schemas accept (docs/schemas/result.schema.json,
// docs/schemas/transcript-line.schema.json); each names the docs/sdm section it checks in its first
// comment.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, test } from 'vitest';
import { loadSequences, runSequenceToDir } from '../../harness/seq/run-seq.js';
import { tmpRoot } from '../scenarios/tmp.js';

const dir = join(process.cwd(), 'sequences');
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
const root = await tmpRoot('ptlab-seq-lib-');
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
const schema = (name: string) => ajv.compile(JSON.parse(readFileSync(join(process.cwd(), 'docs', 'schemas', `${name}.schema.json`), 'utf8')) as object);
const resultSchema = schema('result');
const lineSchema = schema('transcript-line');

describe('the sequences/ library on the sim', () => {
  test('has the example sequences it must have', () => {
    expect(files).toEqual(expect.arrayContaining([
      'enable-disable.yaml', 'gp-ctl-reserved-bit.yaml', 'gp-write-while-tracing.yaml', 'gp-ctl-unsupported-mode.yaml',
      'topa-stop.yaml', 'topa-errors.yaml', 'topa-pmi.yaml', 'xsaves-round-trip.yaml', 'single-range-wrap.yaml',
      'single-entry-topa.yaml', 'pmi-preservation.yaml', 'pmi-handler-grow.yaml',
    ]));
  });

  test.each(files)('%s passes', async (f) => {
    const text = readFileSync(join(dir, f), 'utf8');
    expect(text.split('\n')[0]).toMatch(/^# docs\/sdm\/[a-z]+\.md §\d/);
    const [seq] = await loadSequences([join('sequences', f)]);
    const out = join(root, seq!.name);
    const r = await runSequenceToDir(seq!, out);
    expect(r.verdict, JSON.stringify(r.expectations.filter((e) => !e.ok), null, 1)).toBe('pass');
    expect(r.expectations.length).toBeGreaterThan(1);
    expect(r.expectations.every((e) => e.name.startsWith(`sequences/${f}:`))).toBe(true);
    const result = JSON.parse(readFileSync(join(out, 'result.json'), 'utf8')) as unknown;
    expect(resultSchema(result), ajv.errorsText(resultSchema.errors)).toBe(true);
    const lines = readFileSync(join(out, 'transcript.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown);
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.filter((l) => !lineSchema(l)).map((l) => `${JSON.stringify(l)}: ${ajv.errorsText(lineSchema.errors)}`)).toEqual([]);
    expect(existsSync(join(out, 'trace.pt'))).toBe(/^\s+- collect:/m.test(text));
  });
});
