// Corpora (b) and (c): 100 random streams from OUR encoder (seeds 1..100,
// random-stream.ts) and 100 from libipt's encoder (ptgen seeds 1..100). Our
// dump of each equals libipt's line for line, except the documented PWRE HW
// difference (compare.ts). A coverage test keeps the corpus from silently
// losing a packet type or an IP compression.
import { beforeAll, describe, expect, test } from 'vitest';
import { libiptTools, ptgenStreams, ptjsonOf } from '../libipt/tools.js';
import { compareDumps, ourDump, type DumpComparison } from './compare.js';
import { LIBIPT_KNOWN_TYPES, randomStream } from './random-stream.js';

const { tools, title } = libiptTools();

const SEEDS = Array.from({ length: 100 }, (_, i) => i + 1);
const IPCS = ['suppressed', 'update-16', 'update-32', 'sext-48', 'update-48', 'full'];

/** Every "type" and "ipc" value in a set of libipt dumps. */
function coverage(dumps: Iterable<string[]>): { types: Set<string>; ipcs: Set<string>; errors: string[] } {
  const types = new Set<string>();
  const ipcs = new Set<string>();
  const errors: string[] = [];
  for (const lines of dumps) {
    for (const line of lines) {
      const j = JSON.parse(line) as { type?: string; ipc?: string; error?: string };
      if (j.type) types.add(j.type);
      if (j.ipc) ipcs.add(`${j.type} ${j.ipc}`);
      if (j.error) errors.push(line);
    }
  }
  return { types, ipcs, errors };
}

const IP_FORMS = ['tip', 'tip.pge', 'tip.pgd', 'fup'].flatMap((t) => IPCS.map((c) => `${t} ${c}`));

describe.skipIf(tools === undefined)(title('corpus: ptlab vs libipt'), () => {
  const streams = new Map<string, Uint8Array>();
  let libipt = new Map<string, string[]>();
  const results = new Map<string, DumpComparison>();

  beforeAll(async () => {
    for (const seed of SEEDS) streams.set(`ours-${seed}`, randomStream(seed));
    for (const [seed, bytes] of await ptgenStreams(tools!, 1, SEEDS.length)) streams.set(`ptgen-${seed}`, bytes);
    libipt = await ptjsonOf(tools!, streams);
    for (const [name, bytes] of streams) results.set(name, compareDumps(ourDump(bytes), libipt.get(name) ?? [], bytes));
  });

  const check = (name: string): void => {
    const result = results.get(name);
    expect(result?.unexplained).toEqual([]);
    expect(result?.known.every((k) => k.kind === 'pwre-hw')).toBe(true);
  };

  test.for(SEEDS)('our encoder stream seed %i dumps the same as libipt', (seed) => check(`ours-${seed}`));
  test.for(SEEDS)('libipt encoder (ptgen) stream seed %i dumps the same as libipt', (seed) => check(`ptgen-${seed}`));

  test.for(['ours', 'ptgen'])('the %s corpus has every libipt-known packet type and IP compression, and no errors', (which) => {
    const dumps = [...libipt].filter(([name]) => name.startsWith(`${which}-`)).map(([, lines]) => lines);
    const { types, ipcs, errors } = coverage(dumps);
    expect(dumps).toHaveLength(SEEDS.length);
    expect([...types].sort()).toEqual([...LIBIPT_KNOWN_TYPES].sort());
    expect([...ipcs].sort()).toEqual([...IP_FORMS].sort());
    expect(errors).toEqual([]);
  });

  test.for(['ours', 'ptgen'])('the %s corpus exercises the documented PWRE HW difference', (which) => {
    const known = [...results].filter(([name]) => name.startsWith(`${which}-`)).flatMap(([, r]) => r.known);
    expect(known.length).toBeGreaterThan(0);
  });
});
