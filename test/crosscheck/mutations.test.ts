// Corpus (d): mutated and truncated streams, so errors and resynchronisation
// must agree with libipt too (docs/formats/packet-json.md "Errors and
// resynchronisation"; docs/sdm/packets.md §2 error classes). Mutations are seeded
// and deterministic. A mutation whose result holds a packet libipt 2.0.5 does
// not know (BBP/BIP/BEP/CFE/EVD/TRIG: a documented difference that
// desynchronises the two dumps, see differences.test.ts) is re-drawn.
import { beforeAll, describe, expect, test } from 'vitest';
import { Prng } from '../../harness/bench/prng.js';
import { libiptTools, ptgenStreams, ptjsonOf } from '../libipt/tools.js';
import { compareDumps, ourDump, type DumpComparison } from './compare.js';
import { randomStream } from './random-stream.js';
import { PSB } from './spec-vectors.js';

const { tools, title } = libiptTools();

const MUTATIONS = ['flip', 'truncate', 'insert', 'delete', 'psb-inside', 'garbage-prefix', 'no-psb'] as const;
type Mutation = (typeof MUTATIONS)[number];
const NEW_TYPES = new Set(['bbp', 'bip', 'bep', 'cfe', 'evd', 'trig']);

function splice(b: Uint8Array, at: number, remove: number, insert: ArrayLike<number>): Uint8Array {
  return Uint8Array.from([...b.subarray(0, at), ...Array.from(insert), ...b.subarray(at + remove)]);
}

function randomBytes(r: Prng, n: number): number[] {
  return Array.from({ length: n }, () => r.below(256));
}

/** One mutation of `src` (never in place). */
function mutate(src: Uint8Array, how: Mutation, r: Prng): Uint8Array {
  const at = r.below(src.length);
  switch (how) {
    case 'flip': {
      const out = src.slice();
      for (let k = 1 + r.below(4); k > 0; k--) out[r.below(out.length)] = r.below(256);
      return out;
    }
    case 'truncate':
      return src.slice(0, at);
    case 'insert':
      return splice(src, at, 0, randomBytes(r, 1 + r.below(8)));
    case 'delete':
      return splice(src, at, 1 + r.below(16), []);
    case 'psb-inside': // a PSB at an arbitrary byte, usually inside a packet
      return splice(src, at, 0, PSB);
    case 'garbage-prefix':
      return splice(src, 0, 0, randomBytes(r, 1 + r.below(64)));
    case 'no-psb': { // every PSB byte pair broken: nothing to synchronise on
      const out = src.slice();
      for (let i = 0; i + 1 < out.length; i++) if (out[i] === 0x02 && out[i + 1] === 0x82) out[i + 1] = 0x83;
      return out;
    }
  }
}

interface Case {
  readonly name: string;
  readonly bytes: Uint8Array;
}

/** Mutations of each source, re-drawn (deterministically) while the result holds a libipt-unknown packet. */
function mutatedCorpus(sources: ReadonlyMap<string, Uint8Array>): Case[] {
  const cases: Case[] = [];
  let n = 0;
  for (const [srcName, src] of sources) {
    for (const how of MUTATIONS) {
      const r = new Prng(1000 + n++);
      for (let attempt = 0; attempt < 50; attempt++) {
        const bytes = mutate(src, how, r);
        const hasNew = ourDump(bytes).some((l) => NEW_TYPES.has((JSON.parse(l) as { type?: string }).type ?? ''));
        if (!hasNew) {
          cases.push({ name: `${srcName} ${how}`, bytes });
          break;
        }
      }
    }
  }
  return cases;
}

describe.skipIf(tools === undefined)(title('mutated streams: ptlab vs libipt'), () => {
  let cases: Case[] = [];
  const results = new Map<string, DumpComparison>();
  let libipt = new Map<string, string[]>();

  beforeAll(async () => {
    const sources = new Map<string, Uint8Array>();
    for (let seed = 301; seed <= 306; seed++) sources.set(`ours-${seed}`, randomStream(seed, 1024));
    for (const [seed, bytes] of await ptgenStreams(tools!, 301, 306, 1024)) sources.set(`ptgen-${seed}`, bytes);
    cases = mutatedCorpus(sources);
    libipt = await ptjsonOf(tools!, new Map(cases.map((c) => [c.name, c.bytes])));
    for (const c of cases) results.set(c.name, compareDumps(ourDump(c.bytes), libipt.get(c.name) ?? [], c.bytes));
  });

  test('every source stream got every mutation', () => {
    expect(cases).toHaveLength(12 * MUTATIONS.length);
  });

  test.for(Array.from({ length: 12 * MUTATIONS.length }, (_, i) => i))('mutated stream #%i dumps the same as libipt', (i) => {
    const c = cases[i]!;
    expect({ name: c.name, unexplained: results.get(c.name)?.unexplained }).toEqual({ name: c.name, unexplained: [] });
  });

  test('the mutated corpus exercises every error class and resynchronisation', () => {
    const lines = [...libipt.values()].flat();
    const errors = (name: string): number => lines.filter((l) => l.includes(`"error":"${name}"`)).length;
    expect(errors('bad_opc')).toBeGreaterThan(0);
    expect(errors('bad_packet')).toBeGreaterThan(0);
    expect(errors('eos')).toBeGreaterThan(0);
    // A stream with no PSB at all is one eos line at offset 0.
    const noPsb = [...libipt].filter(([name]) => name.endsWith(' no-psb')).map(([, l]) => l);
    expect(noPsb.every((l) => l.length === 1 && l[0] === '{"off":0,"error":"eos"}')).toBe(true);
  });
});
