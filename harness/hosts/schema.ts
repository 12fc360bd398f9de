// The JSON Schema check of an inventory (docs/schemas/hosts.schema.json, validated with ajv), each
// refusal placed at file:line:col through the parsed document's positions (harness/seq/parse.ts
// SeqSource.pos), with the nearest valid key for a misspelled one (harness/seq/names.ts) — the
// approach of harness/seq/schema.ts for sequence files.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { nearest } from '../text/nearest.js';
import type { SeqPath, SeqSource } from '../seq/parse.js';
import { loadSchemaFile } from '../files/schema-file.js';
import { commonMessage, errorPath, jsonOf, unknownKeyMessage, unknownKeyOf } from '../seq/schema-errors.js';
import { InventoryError } from './errors.js';

let validate: ValidateFunction | undefined;

/** Throws InventoryError('schema') for the first thing the schema refuses in `src`, at its place; returns the document. */
export function checkInventorySchema(src: SeqSource): unknown {
  validate ??= new Ajv({ allErrors: true, verbose: true, strict: true }).compile(loadSchemaFile('hosts.schema.json'));
  const doc = jsonOf(src.value);
  if (validate(doc)) return doc;
  const e = pickError(validate.errors ?? []);
  const path = errorPath(e);
  const u = unknownKeyOf(e);
  if (u) throw new InventoryError('schema', src.pos([...path, u.key], true), unknownKeyMessage(u), nearest(u.key, u.allowed));
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
    case 'pattern':
      return e.instancePath.endsWith('/name')
        ? 'must start with a letter or digit and hold only letters, digits, ".", "_" and "-" (it names a directory)'
        : 'must be one word without commas or spaces';
    case 'uniqueItems':
      return 'lists a tag twice';
    default:
      return commonMessage(e) ?? e.message ?? e.keyword;
  }
}
