// The JSON Schema check of a sequence file (docs/schemas/seq.schema.json, validated with ajv). Each
// step is checked on its own, against the definition its step key names, so a mistake is reported
// at its own place ("unknown key 'vaule'") rather than as "matches none of 12 step kinds".
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { SeqFileError } from './errors.js';
import { nearest } from './names.js';
import type { SeqPath, SeqSource } from './parse.js';

/** Every step kind, in the order docs/formats/seq.md lists them. */
export const STEP_KINDS = [
  'cpuid', 'rdmsr', 'wrmsr', 'alloc', 'topa', 'trace', 'pmi-enable', 'run', 'wait-pmi', 'handle-pmi', 'collect', 'xsaves', 'xrstors', 'repeat',
] as const;
export type StepKind = (typeof STEP_KINDS)[number];

/** docs/schemas/seq.schema.json, found from harness/seq and from dist/harness/seq alike. */
function loadSchema(): Record<string, unknown> {
  for (const rel of ['../../docs/schemas/seq.schema.json', '../../../docs/schemas/seq.schema.json']) {
    try {
      return JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as Record<string, unknown>;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  throw new Error('docs/schemas/seq.schema.json is missing from this installation');
}

interface Validators {
  readonly top: ValidateFunction;
  readonly whole: ValidateFunction;
  readonly step: ReadonlyMap<StepKind, ValidateFunction>;
}

let validators: Validators | undefined;

function compile(): Validators {
  const schema = loadSchema();
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
  const whole = ajv.compile(schema);
  const id = schema.$id as string;
  const step = new Map(STEP_KINDS.map((k) => [k, ajv.getSchema(`${id}#/definitions/${k}`)!] as const));
  // The top level alone: its steps only have to be an array here (each is checked by its kind).
  const { $id: _id, ...rest } = schema;
  const top = ajv.compile({ ...rest, properties: { ...(schema.properties as object), steps: { type: 'array', minItems: 1 } } });
  return { top, whole, step };
}

/** A copy of `v` with bigints as numbers (ajv knows JSON types only; the range checks stay exact in check.ts). */
function jsonOf(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(jsonOf);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonOf(x)]));
  return v;
}

/** Throws SeqFileError for the first thing the schema refuses in `src`, at its place. */
export function checkSchema(src: SeqSource): void {
  validators ??= compile();
  const doc = jsonOf(src.value);
  fail(src, [], doc, validators.top);
  checkSteps(src, ['steps'], (doc as { steps: unknown[] }).steps);
  // The whole-file schema as well: the per-step checks must never accept what it refuses.
  fail(src, [], doc, validators.whole);
}

function checkSteps(src: SeqSource, at: SeqPath, steps: readonly unknown[]): void {
  steps.forEach((s, i) => {
    const path = [...at, i];
    if (s === null || typeof s !== 'object' || Array.isArray(s)) {
      throw new SeqFileError('schema', src.pos(path), `a step must be a mapping whose first key is its kind (${STEP_KINDS.join(', ')})`);
    }
    const keys = Object.keys(s);
    const kind = keys.find((k): k is StepKind => (STEP_KINDS as readonly string[]).includes(k));
    if (kind === undefined) {
      const first = keys[0] ?? '';
      throw new SeqFileError('unknown-step', src.pos([...path, first], true), `unknown step '${first}' (steps: ${STEP_KINDS.join(', ')})`, nearest(first, STEP_KINDS));
    }
    if (kind === 'repeat') {
      const inner = (s as { steps?: unknown }).steps;
      // The nested steps are checked one by one below; here only the repeat's own keys.
      fail(src, path, { ...s, steps: Array.isArray(inner) ? [{ 'pmi-enable': 0 }] : inner }, validators!.step.get(kind)!);
      checkSteps(src, [...path, 'steps'], inner as unknown[]);
      return;
    }
    fail(src, path, s, validators!.step.get(kind)!);
  });
}

/** Runs `v` on `x` (found at `at`); throws the first error as a SeqFileError at its place. */
function fail(src: SeqSource, at: SeqPath, x: unknown, v: ValidateFunction): void {
  if (v(x)) return;
  const e = pickError(v.errors ?? []);
  const rel = e.instancePath.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')));
  const path = [...at, ...rel];
  if (e.keyword === 'additionalProperties') {
    const k = String(e.params.additionalProperty);
    const allowed = Object.keys((e.parentSchema as { properties?: object }).properties ?? {});
    throw new SeqFileError('schema', src.pos([...path, k], true), `unknown key '${k}'${allowed.length ? ` (keys here: ${allowed.join(', ')})` : ''}`, nearest(k, allowed));
  }
  throw new SeqFileError('schema', src.pos(path), `${describeWhere(path)}${messageOf(e)}`);
}

/** An unknown key is the likeliest mistake (a misspelling): report it first; else the last error, which for a oneOf/anyOf is the combinator's own. */
function pickError(errors: readonly ErrorObject[]): ErrorObject {
  return errors.find((e) => e.keyword === 'additionalProperties') ?? errors[errors.length - 1] ?? errors[0]!;
}

function describeWhere(path: SeqPath): string {
  const last = path[path.length - 1];
  return typeof last === 'string' ? `'${last}' ` : '';
}

function messageOf(e: ErrorObject): string {
  switch (e.keyword) {
    case 'oneOf':
    case 'anyOf':
      return 'has the wrong form (see docs/formats/seq.md for what this key takes)';
    case 'enum':
      return `must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues).map((x) => JSON.stringify(x)).join(', ')}`;
    case 'required':
      return `needs the key '${String((e.params as { missingProperty: string }).missingProperty)}'`;
    default:
      return e.message ?? e.keyword;
  }
}
