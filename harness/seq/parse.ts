// Reading a sequence file: YAML (the `yaml` package, which keeps every node's place), its integers
// read exactly as bigints, and the file:line:col of any path into the document.
import { join } from 'node:path';
import { systemWords } from '../text/strerror.js';
import { isMap, isScalar, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';
import { InputTooLargeError, readBounded } from '../files/read-input.js';
import { SeqFileError, type SeqPos } from './errors.js';

/** A path into the parsed document: mapping keys and sequence indices. */
export type SeqPath = readonly (string | number)[];

/** A parsed sequence file: its JavaScript value (integers as bigint) and where each part is. */
export interface SeqSource {
  readonly file: string;
  readonly value: unknown;
  /** Where the node at `path` starts; `key`: where the key `path`'s last element names starts, when it is a mapping key. */
  pos(path: SeqPath, key?: boolean): SeqPos;
}

/** The largest sequence file read (the library's longest is a few kB; a lab inventory shares the bound). */
export const SEQ_FILE_MAX_BYTES = 4 << 20;

/** Reads and parses `file`; throws SeqFileError('syntax') for unreadable or malformed YAML. */
export async function readSeqFile(file: string): Promise<SeqSource> {
  let text: string;
  try {
    text = (await readBounded(file, SEQ_FILE_MAX_BYTES, 'a sequence file')).toString('utf8');
  } catch (e) {
    // A directory of sequences is given by its files: the shell's glob says which, in its order.
    const dir = (e as NodeJS.ErrnoException).code === 'EISDIR' ? ` (give its sequence files: ${join(file, '*.yaml')})` : '';
    throw new SeqFileError('syntax', { file, line: 1, col: 1 }, e instanceof InputTooLargeError ? e.message : `cannot read the file: ${systemWords(e)}${dir}`);
  }
  return parseSeqText(file, text);
}

/** Parses `text` as the sequence file `file`. */
export function parseSeqText(file: string, text: string): SeqSource {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, intAsBigInt: true, prettyErrors: false, uniqueKeys: true, merge: true });
  const at = (offset: number): SeqPos => {
    const p = lines.linePos(offset);
    return { file, line: p.line, col: p.col };
  };
  const err = doc.errors[0];
  if (err) throw new SeqFileError('syntax', at(err.pos[0]), `not valid YAML: ${err.message.split('\n')[0]}`);
  const loop = selfReference(doc);
  if (loop !== undefined) throw new SeqFileError('syntax', at(loop.offset), `the alias *${loop.name} lies inside the node its anchor names: a value cannot contain itself`);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    // The yaml package refuses an alias expanded more often than maxAliasCount (a "billion laughs" file).
    if (!(e instanceof ReferenceError)) throw e;
    throw new SeqFileError('syntax', at(firstAlias(doc) ?? 0), `its aliases expand too far (the bound is ${MAX_ALIAS_COUNT} aliased copies, as a guard against "billion laughs" files): write the values out`);
  }
  return { file, value, pos: (path, key) => at(offsetOf(doc, path, key ?? false)) };
}

/** How often one anchor may be copied by its aliases (the yaml package's own bound, stated). */
const MAX_ALIAS_COUNT = 100;

/** An alias inside the very node its anchor names (`a: &a [*a]`), whose value would contain itself. */
function selfReference(doc: Document): { name: string; offset: number } | undefined {
  let found: { name: string; offset: number } | undefined;
  visit(doc, {
    Alias(_key, alias) {
      const node = alias.resolve(doc);
      const [a, r] = [alias.range, node?.range];
      if (a && r && a[0] >= r[0] && a[1] <= r[2]) { found = { name: alias.source, offset: a[0] }; return visit.BREAK; }
      return undefined;
    },
  });
  return found;
}

/** Where the first alias of `doc` is. */
function firstAlias(doc: Document): number | undefined {
  let at: number | undefined;
  visit(doc, { Alias(_key, alias) { at = alias.range?.[0]; return visit.BREAK; } });
  return at;
}

/** The offset of the node at `path` (or of its key), else of the nearest enclosing node that exists. */
function offsetOf(doc: Document, path: SeqPath, key: boolean): number {
  for (let n = path.length; n >= 0; n--) {
    const sub = path.slice(0, n);
    if (key && n === path.length && n > 0) {
      const parent = sub.length > 1 ? doc.getIn(sub.slice(0, -1), true) : doc.contents;
      if (isMap(parent)) {
        const pair = parent.items.find((p) => isScalar(p.key) && String(p.key.value) === String(sub[sub.length - 1]));
        const r = (pair?.key as Node | undefined)?.range;
        if (r) return r[0];
      }
    }
    const node = (n === 0 ? doc.contents : doc.getIn(sub, true)) as Node | null | undefined;
    if (node && typeof node === 'object' && 'range' in node && node.range) return node.range[0];
  }
  return 0;
}
