// What the YAML files ptlab reads (sequence files, lab inventories) share in checking them against
// their JSON Schema with ajv (the schema file: harness/files/schema-file.ts): the document with
// the parser's bigints as numbers, and an ajv error turned into a document path and
// a message in ptlab's words. Each file's own checker (schema.ts, harness/hosts/schema.ts) places
// the error with its SeqSource and adds what only it knows.
import type { ErrorObject } from 'ajv';
import type { SeqPath } from './parse.js';

/** A copy of `v` with bigints as numbers (ajv knows JSON types only; exact range checks come after). */
export function jsonOf(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(jsonOf);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonOf(x)]));
  return v;
}

/** The document path of an error's instance (`/hosts/1/port` → ['hosts', 1, 'port']). */
export function errorPath(e: ErrorObject): SeqPath {
  return e.instancePath.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')));
}

/** For an unknown key: the key and the keys allowed where it stands. */
export function unknownKeyOf(e: ErrorObject): { readonly key: string; readonly allowed: readonly string[] } | undefined {
  if (e.keyword !== 'additionalProperties') return undefined;
  return { key: String(e.params.additionalProperty), allowed: Object.keys((e.parentSchema as { properties?: object }).properties ?? {}) };
}

/** "unknown key 'k' (keys here: a, b)". */
export function unknownKeyMessage(u: { readonly key: string; readonly allowed: readonly string[] }): string {
  return `unknown key '${u.key}'${u.allowed.length ? ` (keys here: ${u.allowed.join(', ')})` : ''}`;
}

/** The message of the keywords both files word alike (enum, required); undefined for the others. */
export function commonMessage(e: ErrorObject): string | undefined {
  switch (e.keyword) {
    case 'enum':
      return `must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues).map((x) => JSON.stringify(x)).join(', ')}`;
    case 'required':
      return `needs the key '${String((e.params as { missingProperty: string }).missingProperty)}'`;
    default:
      return undefined;
  }
}
