// An inventory of lab machines for `ptlab run --hosts FILE` (docs/hosts.md): YAML checked against
// docs/schemas/hosts.schema.json, then the rules a schema cannot say (unique names, names that
// are no suite file), every refusal at file:line:col. Paths are relative to the inventory file.
import { REPORT_FILE } from '../report/html/write-report.js';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { SeqFileError } from '../seq/errors.js';
import { parseSeqText, type SeqPath, type SeqSource } from '../seq/parse.js';
import { RESULTS_FILE } from '../rundir/results-index.js';
import type { PtMode, SshReach } from '../runner/targets.js';
import { InventoryError, type InventoryPos } from './errors.js';
import { checkInventorySchema } from './schema.js';
import { InputTooLargeError, readBounded } from '../files/read-input.js';

/** One lab machine, its paths resolved. */
export interface LabHost {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly user: string;
  /** The client's private key file (absolute). */
  readonly key: string;
  /** The pinned host key file (absolute). */
  readonly knownHost: string;
  readonly tags: readonly string[];
  readonly pt: PtMode;
  readonly connectTimeoutMs: number;
  /** The CPUs its lanes trace on, one each (`cpus:`); absent: every CPU but 0 (runner/cpu-map.ts). */
  readonly cpus?: readonly number[];
  /** Its index in the file's `hosts` (for positions). */
  readonly index: number;
}

/** A checked inventory. */
export interface Inventory {
  readonly file: string;
  readonly hosts: readonly LabHost[];
  /** Where the node at `path` (`key`: its key) is in the file. */
  pos(path: SeqPath, key?: boolean): InventoryPos;
}

/** Names a host cannot have: the files at the root of --out. */
const RESERVED = new Set(['junit.xml', RESULTS_FILE, REPORT_FILE]);
const DEFAULT_CONNECT_S = 30;

/** The entry as the schema lets it through. */
interface Entry {
  name: string; host: string; port?: number; user?: string; key?: string; 'known-host'?: string;
  tags?: string[]; pt?: PtMode; 'connect-timeout'?: number; cpus?: number[];
}

/** The largest inventory read (a few hundred bytes a machine). */
export const INVENTORY_MAX_BYTES = 4 << 20;

/** Reads and checks `file`; throws InventoryError at the first wrong entry. */
export async function readInventory(file: string): Promise<Inventory> {
  let text: string;
  try {
    text = (await readBounded(file, INVENTORY_MAX_BYTES, 'a lab inventory')).toString('utf8');
  } catch (e) {
    throw new InventoryError('syntax', { file, line: 1, col: 1 }, e instanceof InputTooLargeError ? e.message : `cannot read the inventory: ${(e as Error).message}`);
  }
  return parseInventory(file, text);
}

/** Parses and checks `text` as the inventory `file`. */
export function parseInventory(file: string, text: string): Inventory {
  let src: SeqSource;
  try {
    src = parseSeqText(file, text);
  } catch (e) {
    if (e instanceof SeqFileError) throw new InventoryError('syntax', e.pos, e.detail);
    throw e;
  }
  const doc = checkInventorySchema(src) as { hosts: Entry[] };
  const base = dirname(resolve(file));
  const seen = new Map<string, number>();
  const hosts = doc.hosts.map((h, index): LabHost => {
    const at = (k: string): InventoryPos => src.pos(['hosts', index, k]);
    if (RESERVED.has(h.name)) throw new InventoryError('reserved-name', at('name'), `host name '${h.name}' is the name of a file at the root of --out (${[...RESERVED].join(', ')})`);
    const first = seen.get(h.name);
    if (first !== undefined) {
      const p = src.pos(['hosts', first, 'name']);
      throw new InventoryError('duplicate-name', at('name'), `host name '${h.name}' is already used at line ${p.line} (each host has its own directory OUT/<name>/)`);
    }
    seen.set(h.name, index);
    return {
      name: h.name, host: h.host, port: h.port ?? 22, user: h.user ?? 'root',
      key: pathOf(base, h.key, join(homedir(), '.ssh', 'id_ed25519')),
      knownHost: pathOf(base, h['known-host'], join(homedir(), '.ssh', 'known_hosts')),
      tags: h.tags ?? [], pt: h.pt ?? 'hardware', connectTimeoutMs: (h['connect-timeout'] ?? DEFAULT_CONNECT_S) * 1000, index,
      ...(h.cpus === undefined ? {} : { cpus: h.cpus }),
    };
  });
  return { file, hosts, pos: (path, key) => src.pos(path, key) };
}

/** A path of the inventory: `~/` is the home directory, a relative path is relative to the inventory file. */
function pathOf(base: string, given: string | undefined, fallback: string): string {
  if (given === undefined) return fallback;
  if (given === '~' || given.startsWith('~/')) return join(homedir(), given.slice(1));
  return isAbsolute(given) ? given : resolve(base, given);
}

/** How runSuite reaches `h` (runner/targets.ts SshReach). */
export function reachOf(h: LabHost): SshReach {
  return {
    kind: 'ssh', host: h.host, port: h.port, user: h.user, key: h.key, knownHost: h.knownHost,
    pt: h.pt, label: h.name, connectTimeoutMs: h.connectTimeoutMs, ...(h.cpus === undefined ? {} : { cpus: h.cpus }),
  };
}
