// The commands the CLI fuzz drives and the file arguments ("slots") of each: every ptlab command
// that reads a file a user names, or a file inside a run directory, suite or shard it names.
// A slot's right contents come from the fixtures (fixtures.ts); the fuzz replaces one slot per case.

/** Where a slot's right contents are, relative to the fixtures directory. */
export interface Slot {
  /** The slot's name in reports: the argument, or `DIR/file` for a file inside a directory. */
  readonly name: string;
  /** The fixture: a file, or (with `within`) a directory copied whole. */
  readonly fixture: string;
  /** The file inside the copied directory that the fuzz replaces. */
  readonly within?: string;
}

/** One command line with file slots; `argv` builds it from each slot's path and a new `out`. */
export interface FuzzCommand {
  readonly name: string;
  readonly slots: readonly Slot[];
  argv(at: Readonly<Record<string, string>>, out: string, f: FixtureFacts): string[];
}

/** What the fixtures know that a command line needs. */
export interface FixtureFacts {
  /** The load address of the run's image (image.json `base`), as 0x… */
  readonly imageBase: string;
  /** A local TCP port with nothing listening. */
  readonly closedPort: number;
}

const RUN = 'suite/topa-grow/skylake';
const trace: Slot = { name: 'TRACE', fixture: `${RUN}/trace.pt` };
const image: Slot = { name: 'IMAGE', fixture: `${RUN}/image.bin` };
const key: Slot = { name: 'KEY', fixture: 'key' };
const knownHost: Slot = { name: 'KNOWN_HOST', fixture: 'known_hosts' };

export const FUZZ_COMMANDS: readonly FuzzCommand[] = [
  { name: 'dump', slots: [trace], argv: (a) => ['dump', a.TRACE!] },
  { name: 'dump --json', slots: [trace], argv: (a) => ['dump', '--json', a.TRACE!] },
  { name: 'dump --stats', slots: [trace], argv: (a) => ['dump', '--stats', a.TRACE!] },
  { name: 'flow', slots: [trace, image], argv: (a, _o, f) => ['flow', a.TRACE!, '--image', `${a.IMAGE!}@${f.imageBase}`] },
  { name: 'flow --json', slots: [image, trace], argv: (a, _o, f) => ['flow', '--json', a.TRACE!, '--image', `${a.IMAGE!}@${f.imageBase}`] },
  {
    name: 'diff', slots: [{ name: 'A/result.json', fixture: RUN, within: 'result.json' }, { name: 'B/transcript.jsonl', fixture: 'suite2/topa-grow/skylake', within: 'transcript.jsonl' }],
    argv: (a) => ['diff', a['A/result.json']!, a['B/transcript.jsonl']!],
  },
  {
    name: 'diff --suite', slots: [{ name: 'A/results.jsonl', fixture: 'suite', within: 'results.jsonl' }, { name: 'B/results.jsonl', fixture: 'suite2', within: 'results.jsonl' }],
    argv: (a) => ['diff', '--suite', a['A/results.jsonl']!, a['B/results.jsonl']!],
  },
  { name: 'replay', slots: [{ name: 'RUN/transcript.jsonl', fixture: RUN, within: 'transcript.jsonl' }], argv: (a, out) => ['replay', a['RUN/transcript.jsonl']!, '--out', out] },
  { name: 'replay (result.json)', slots: [{ name: 'RUN/result.json', fixture: RUN, within: 'result.json' }], argv: (a, out) => ['replay', a['RUN/result.json']!, '--out', out] },
  { name: 'report', slots: [{ name: 'SUITE/results.jsonl', fixture: 'suite', within: 'results.jsonl' }], argv: (a, out) => ['report', a['SUITE/results.jsonl']!, '--out', `${out}.html`] },
  {
    name: 'report (a run\'s result.json)', slots: [{ name: 'SUITE/RUN/result.json', fixture: 'suite', within: 'topa-grow/skylake/result.json' }],
    argv: (a, out) => ['report', a['SUITE/RUN/result.json']!, '--out', `${out}.html`],
  },
  {
    name: 'merge', slots: [{ name: 'SHARD1/shard.json', fixture: 'shard1', within: 'shard.json' }, { name: 'SHARD2/results.jsonl', fixture: 'shard2', within: 'results.jsonl' }],
    argv: (a, out) => ['merge', a['SHARD1/shard.json']!, a['SHARD2/results.jsonl']!, '--out', out],
  },
  { name: 'seq', slots: [{ name: 'SEQ', fixture: 'seq.yaml' }], argv: (a, out) => ['seq', a.SEQ!, '--out', out] },
  { name: 'run --hosts', slots: [{ name: 'INVENTORY', fixture: 'hosts.yaml' }], argv: (a, out) => ['run', 'topa-grow', '--hosts', a.INVENTORY!, '--out', out] },
  {
    name: 'run --target ssh', slots: [key, knownHost],
    argv: (a, out, f) => ['run', 'topa-grow', '--target', 'ssh', '--host', '127.0.0.1', '--port', String(f.closedPort), '--key', a.KEY!, '--known-host', a.KNOWN_HOST!, '--out', out],
  },
];
