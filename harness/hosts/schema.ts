// The JSON Schema check of an inventory (docs/schemas/hosts.schema.json, validated with ajv), each
// refusal placed at file:line:col through the parsed document's positions (harness/seq/parse.ts
// SeqSource.pos), with the nearest valid key for a misspelled one (harness/seq/names.ts) — the
// approach of harness/seq/schema.ts for sequence files.
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { nearest } from '../seq/names.js';
import type { SeqPath, SeqSource } from '../seq/parse.js';
import { InventoryError } from './errors.js';

/** docs/schemas/hosts.schema.json, found from harness/hosts and from dist/harness/hosts alike. */
function loadSchema(): Record<string, unknown> {
  for (const rel of ['../../docs/schemas/hosts.schema.json', '../../../docs/schemas/hosts.schema.json']) {
    try {
      return JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as Record<string, unknown>;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  throw new Error('docs/schemas/hosts.schema.json is missing from this installation');
}

let validate: ValidateFunction | undefined;

/** A copy of `v` with the parser's bigints as numbers (ajv knows JSON types only). */
export function jsonOf(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(jsonOf);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonOf(x)]));
  return v;
}

/** Throws InventoryError('schema') for the first thing the schema refuses in `src`, at its place; returns the document. */
export function checkInventorySchema(src: SeqSource): unknown {
  validate ??= new Ajv({ allErrors: true, verbose: true, strict: true }).compile(loadSchema());
  const doc = jsonOf(src.value);
  if (validate(doc)) return doc;
  const e = pickError(validate.errors ?? []);
  const path: SeqPath = e.instancePath.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')));
  if (e.keyword === 'additionalProperties') {
    const k = String(e.params.additionalProperty);
    const allowed = Object.keys((e.parentSchema as { properties?: object }).properties ?? {});
    throw new InventoryError('schema', src.pos([...path, k], true), `unknown key '${k}'${allowed.length ? ` (keys here: ${allowed.join(', ')})` : ''}`, nearest(k, allowed));
  }
  throw new InventoryError('schema', src.pos(path), `${whereOf(path)}${messageOf(e)}`);
}

/** An unknown key is the likeliest mistake (a misspelling): it comes first; then the first error. */
function pickError(errors: readonly ErrorObject[]): ErrorObject {
  return errors.find((e) => e.keyword === 'additionalProperties') ?? errors[0]!;
}

/** "hosts[1].port " for a path into the document. */
function whereOf(path: SeqPath): string {
  if (path.length === 0) return 'the file ';
  return `${path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${p}`)).join('')} `;
}

function messageOf(e: ErrorObject): string {
  switch (e.keyword) {
    case 'enum':
      return `must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues).map((x) => JSON.stringify(x)).join(', ')}`;
    case 'required':
      return `needs the key '${String((e.params as { missingProperty: string }).missingProperty)}'`;
    case 'pattern':
      return e.instancePath.endsWith('/name')
        ? 'must start with a letter or digit and hold only letters, digits, ".", "_" and "-" (it names a directory)'
        : 'must be one word without commas or spaces';
    case 'uniqueItems':
      return 'lists a tag twice';
    default:
      return e.message ?? e.keyword;
  }
}
