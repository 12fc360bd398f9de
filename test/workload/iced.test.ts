// Cross-check of generated images with an independent x86 decoder (iced-x86): every instruction
// boundary the model names is a real instruction of that length, every branch instruction in the
// code is in the model with the same class and static target, and nothing decodes as invalid.
import { Code, Decoder, DecoderOptions, FlowControl } from 'iced-x86';
import { describe, expect, test } from 'vitest';
import { generateWorkload } from '../../harness/sim/workload/generate.js';
import { F_LEN, F_OFF, ROW } from '../../harness/sim/workload/ops.js';

interface Decoded {
  readonly ip: bigint;
  readonly length: number;
  readonly flow: FlowControl;
  readonly target: bigint;
  readonly invalid: boolean;
}

function decodeCode(image: Uint8Array, base: bigint, codeEnd: number): Decoded[] {
  const d = new Decoder(64, image.subarray(0, codeEnd), DecoderOptions.None);
  d.ip = base;
  const out: Decoded[] = [];
  while (d.canDecode) {
    const i = d.decode();
    out.push({ ip: i.ip, length: i.length, flow: i.flowControl, target: i.nearBranchTarget, invalid: i.code === Code.INVALID });
    i.free();
  }
  d.free();
  return out;
}

/** flow-json kind and "indirect" of an iced flow-control class (libipt's classes: docs/formats/flow-json.md). */
function classOf(f: FlowControl): { kind: string; indirect: boolean } | null {
  switch (f) {
    case FlowControl.ConditionalBranch: return { kind: 'jcc', indirect: false };
    case FlowControl.UnconditionalBranch: return { kind: 'jmp', indirect: false };
    case FlowControl.IndirectBranch: return { kind: 'jmp', indirect: true };
    case FlowControl.Call: return { kind: 'call', indirect: false };
    case FlowControl.IndirectCall: return { kind: 'call', indirect: true };
    case FlowControl.Return: return { kind: 'ret', indirect: false };
    default: return null;
  }
}

describe.each([1, 2, 3, 17, 256, 4096, 65_537, 0x7fff_ffff])('seed %i', (seed) => {
  const w = generateWorkload(seed, { branches: 20_000 });
  const m = w.model;
  const insns = decodeCode(w.image, w.base, m.codeEnd);
  const byIp = new Map(insns.map((i) => [i.ip, i]));

  test('the code decodes without invalid instructions', () => {
    expect(insns.filter((i) => i.invalid)).toEqual([]);
  });

  test('every IR row sits on an instruction boundary with the decoded length', () => {
    for (let r = 0; r < m.code.length; r += ROW) {
      const ip = w.base + BigInt(m.code[r + F_OFF]!);
      expect(byIp.get(ip)?.length, `row at 0x${ip.toString(16)}`).toBe(m.code[r + F_LEN]);
    }
  });

  test('every decoded branch is a model site with the same kind, indirectness and target', () => {
    const sites = new Map(m.sites().map((s) => [s.ip, s]));
    const decodedBranches = insns.filter((i) => classOf(i.flow) !== null || i.flow === FlowControl.Call);
    for (const i of decodedBranches) {
      const s = sites.get(i.ip);
      expect(s, `branch at 0x${i.ip.toString(16)} missing from the model`).toBeDefined();
      const isSyscall = i.flow === FlowControl.Call && s?.kind === 'far.call';
      if (isSyscall) continue;
      expect({ kind: s!.kind, indirect: s!.indirect }).toEqual(classOf(i.flow));
      if (!s!.indirect && s!.kind !== 'ret') expect(s!.target).toBe(i.target);
    }
    expect(decodedBranches.length).toBe(sites.size);
  });

  test('the entry point and every path target are instruction boundaries', () => {
    expect(byIp.has(w.entry)).toBe(true);
    m.forEachBranch((e) => {
      if (e.to >= 0 && !byIp.has(BigInt(e.to))) throw new Error(`to 0x${e.to.toString(16)} is not an instruction`);
    });
  });
});
