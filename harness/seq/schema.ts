// The JSON Schema check of a sequence file (docs/schemas/seq.schema.json, validated with ajv). Each
// step is checked on its own, against the definition its step key names, so a mistake is reported
// at its own place ("unknown key 'vaule'") rather than as "matches none of 12 step kinds".
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { SeqFileError, SeqFileErrors } from './errors.js';
import { nearest } from '../text/nearest.js';
import type { SeqPath, SeqSource } from './parse.js';
import { loadSchemaFile } from '../files/schema-file.js';
import { commonMessage, errorPath, jsonOf, unknownKeyMessage, unknownKeyOf } from './schema-errors.js';

/** Every step kind, in the order docs/formats/seq.md lists them. */
export const STEP_KINDS = [
  'cpuid', 'rdmsr', 'wrmsr', 'alloc', 'topa', 'trace', 'pmi-enable', 'run', 'wait-pmi', 'handle-pmi', 'collect', 'xsaves', 'xrstors', 'repeat',
] as const;
export type StepKind = (typeof STEP_KINDS)[number];

interface Validators {
  readonly top: ValidateFunction;
  readonly whole: ValidateFunction;
  readonly step: ReadonlyMap<StepKind, ValidateFunction>;
}

let validators: Validators | undefined;

function compile(): Validators {
  const schema = loadSchemaFile('seq.schema.json');
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
  const whole = ajv.compile(schema);
  const id = schema.$id as string;
  const step = new Map(STEP_KINDS.map((k) => [k, ajv.getSchema(`${id}#/definitions/${k}`)!] as const));
  // The top level alone: its steps only have to be an array here (each is checked by its kind).
  const { $id: _id, ...rest } = schema;
  const top = ajv.compile({ ...rest, properties: { ...(schema.properties as object), steps: { type: 'array', minItems: 1 } } });
  return { top, whole, step };
}

/**
 * Throws what the schema refuses in `src`, each at its place: a SeqFileError for the file's top
 * level, or for one step; SeqFileErrors when several steps are wrong (every one of them, at once).
 */
export function checkSchema(src: SeqSource): void {
  validators ??= compile();
  const doc = jsonOf(src.value);
  fail(src, [], doc, validators.top);
  const wrong: SeqFileError[] = [];
  checkSteps(src, ['steps'], (doc as { steps: unknown[] }).steps, wrong);
  if (wrong.length === 1) throw wrong[0]!;
  if (wrong.length > 1) throw new SeqFileErrors(wrong);
  // The whole-file schema as well: the per-step checks must never accept what it refuses.
  fail(src, [], doc, validators.whole);
}

/** Checks every step (each on its own), adding what is wrong with each to `wrong`. */
function checkSteps(src: SeqSource, at: SeqPath, steps: readonly unknown[], wrong: SeqFileError[]): void {
  steps.forEach((s, i) => {
    try {
      checkStep(src, [...at, i], s, wrong);
    } catch (e) {
      if (!(e instanceof SeqFileError)) throw e;
      wrong.push(e);
    }
  });
}

/** One step against the definition its kind names; throws SeqFileError (a repeat adds its nested steps' to `wrong`). */
function checkStep(src: SeqSource, path: SeqPath, s: unknown, wrong: SeqFileError[]): void {
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
    checkSteps(src, [...path, 'steps'], inner as unknown[], wrong);
    return;
  }
  fail(src, path, s, validators!.step.get(kind)!);
}

/** Runs `v` on `x` (found at `at`); throws the first error as a SeqFileError at its place. */
function fail(src: SeqSource, at: SeqPath, x: unknown, v: ValidateFunction): void {
  if (v(x)) return;
  const e = pickError(v.errors ?? []);
  const path = [...at, ...errorPath(e)];
  const u = unknownKeyOf(e);
  if (u) throw new SeqFileError('schema', src.pos([...path, u.key], true), unknownKeyMessage(u), nearest(u.key, u.allowed));
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
    case 'anyOf': {
      // What belongs there, from the schema's own description of the alternatives.
      const d = (e.parentSchema as { description?: unknown } | undefined)?.description;
      return typeof d === 'string' ? `must be ${d.replace(/\.$/, '')}` : 'has the wrong form (see docs/formats/seq.md for what this key takes)';
    }
    case 'type':
      // The top level of an empty file, or a list where the file's mapping belongs: say what belongs there.
      if (e.instancePath === '' && (e.params as { type: string }).type === 'object') {
        return 'is not a mapping: the file holds nothing, or no keys (a sequence is name, cpu and steps: docs/formats/seq.md)';
      }
      return commonMessage(e) ?? e.message ?? e.keyword;
    default:
      return commonMessage(e) ?? e.message ?? e.keyword;
  }
}
