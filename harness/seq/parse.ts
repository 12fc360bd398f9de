// Reading a sequence file: YAML (the `yaml` package, which keeps every node's place), its integers
// read exactly as bigints, and the file:line:col of any path into the document.
import { readFile } from 'node:fs/promises';
import { isMap, isScalar, LineCounter, parseDocument, type Document, type Node } from 'yaml';
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

/** Reads and parses `file`; throws SeqFileError('syntax') for unreadable or malformed YAML. */
export async function readSeqFile(file: string): Promise<SeqSource> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new SeqFileError('syntax', { file, line: 1, col: 1 }, `cannot read the file: ${(e as Error).message}`);
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
  return { file, value: doc.toJS({ maxAliasCount: 100 }) as unknown, pos: (path, key) => at(offsetOf(doc, path, key ?? false)) };
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
