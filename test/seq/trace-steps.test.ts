// The driver's trace session in a sequence on the sim (docs/formats/seq.md "trace", "handle-pmi",
// "collect … flow"): `trace` lets the driver build its ToPA tables with a policy, `handle-pmi` runs
// the driver's own PMI handler for the PMI the last wait-pmi met and checks the branch it took,
// and `flow: truth` decodes the collected stream against the model's truth — each with a failing
// case beside its passing one.
import { describe, expect, test } from 'vitest';
import { at, runText, steps } from './run-text.js';

/** A trace with `policy` (and its options), a workload suspended at once, two PMIs each handled, the rest run with the driver's handler, the flow checked. Steps at lines 2, 3, 4, 5, 6, 7, 8, 9. */
const twoPmis = (trace: string): string => steps(
  `trace: {${trace}}`,
  'run: {branches: 40000, slices: 1, slice-branches: 10}',
  'wait-pmi:',
  'handle-pmi:',
  'wait-pmi:',
  'handle-pmi:',
  'run:',
  'collect:\n    expect: {flow: truth, packets: {error: 0}}',
);

describe('trace and handle-pmi', () => {
  test.for([
    { trace: 'policy: grow', first: 'grow', second: 'grow' },
    { trace: 'policy: grow, table-entries: 8', first: 'grow', second: 'chain' },
    { trace: 'policy: chain', first: 'chain', second: 'chain' },
    { trace: 'policy: circular-fresh', first: 'circular-fresh', second: 'circular-fresh' },
    { trace: 'policy: protect-unread', first: 'protect-unread', second: 'protect-unread' },
    { trace: 'policy: budget, budget: 12288', first: 'circularize', second: 'ring' },
    { trace: 'policy: single-entry', first: 'swap-region', second: 'swap-region', cpu: 'broadwell' },
  ])('$trace: the driver\'s handler takes $first, then $second, and the stream it collects decodes to the truth', async ({ trace, first, second, cpu }) => {
    const out = await runText(`${cpu ? `cpu: ${cpu}\n` : ''}${twoPmis(trace)}`);
    const line = (n: number): number => n + (cpu ? 1 : 0);
    expect(at(out, line(5))).toMatchObject({ ok: true, detail: expect.stringMatching(new RegExp(`the handler took action handled, branch ${first},`)) });
    expect(at(out, line(7))).toMatchObject({ ok: true, detail: expect.stringMatching(new RegExp(`the handler took action handled, branch ${second},`)) });
    expect(out.expectations.every((e) => e.ok), JSON.stringify(out.expectations.filter((e) => !e.ok))).toBe(true);
    expect(out.expectations.find((e) => e.name.endsWith('collect flow = truth'))?.detail).toMatch(/^\d{4,} lines identical/);
    // The handler is the driver's: its branch note is in the transcript beside the MSR accesses it made.
    expect(out.lines.filter((l) => l.includes(`"note"`) && l.includes(`pmi: ${first}`)).length).toBeGreaterThan(0);
  });

  test('expect: {branch: …} names the branch in the expectation, and fails on the branch the handler did not take', async () => {
    const out = await runText(steps(
      'trace: {policy: grow, table-entries: 8}',
      'run: {branches: 40000, slices: 1, slice-branches: 10}',
      'wait-pmi:',
      'handle-pmi: {policy: grow}\n    expect: {branch: chain}',
      'wait-pmi:',
      'handle-pmi:\n    expect: {branch: chain}',
    ));
    expect(at(out, 5)).toMatchObject({ ok: false, name: 't.yaml:5 handle-pmi handled chain', detail: expect.stringMatching(/^expected action handled, branch chain; the handler took action handled, branch grow,/) });
    expect(at(out, 8)).toMatchObject({ ok: true, name: 't.yaml:8 handle-pmi handled chain' });
  });

  test('handle-pmi fails when the last wait-pmi met no PMI', async () => {
    const out = await runText(steps(
      'trace: {policy: grow}',
      'run: {branches: 100, slices: 1, slice-branches: 10}',
      'wait-pmi:\n    expect: none',
      'handle-pmi:',
    ));
    expect(at(out, 4).ok).toBe(true);
    expect(at(out, 6)).toMatchObject({ ok: false, detail: 'no PMI to handle: the last wait-pmi met none, or it was handled already' });
  });

  test('a trace the CPU cannot run ends the sequence: grow needs more than one output entry a table (Broadwell: MENTRY=0)', async () => {
    const out = await runText(['cpu: broadwell', steps('trace: {policy: grow}', 'rdmsr: IA32_RTIT_CTL\n    expect: 0')].join('\n'));
    expect(out.expectations).toEqual([expect.objectContaining({ ok: false, name: 't.yaml:3 trace the sequence ran to its end', detail: expect.stringMatching(/multiple output entries/) })]);
  });

  test('a trace session the sequence never collects is ended: TraceEn is cleared at the end', async () => {
    const out = await runText(steps('trace: {policy: chain}', 'rdmsr: IA32_RTIT_CTL\n    expect: {TraceEn: 1, ToPA: 1, BranchEn: 1, User: 1, OS: 0}'));
    expect(at(out, 3).ok).toBe(true);
    const ctl = out.lines.map((l) => JSON.parse(l) as { op: string; msr?: string; value?: string }).filter((l) => l.op === 'wrmsr' && l.msr === '0x570');
    expect(ctl.map((l) => BigInt(l.value!) & 1n)).toEqual([0n, 1n, 0n]); // enable: TraceEn=0, then 1; the end: 0
  });
});

describe('collect … flow: truth', () => {
  test('a hand-built ToPA trace, disabled before collect, decodes to the truth', async () => {
    const out = await runText(steps(
      'alloc: out0\n    size: 65536',
      'topa: t0\n    entries: [{buffer: out0}, {end: t0}]',
      'wrmsr: IA32_RTIT_OUTPUT_BASE\n    value: {buffer: t0}',
      'wrmsr: IA32_RTIT_OUTPUT_MASK_PTRS\n    value: 0x7f',
      'wrmsr: IA32_RTIT_CTL\n    fields: {TraceEn: 1, BranchEn: 1, ToPA: 1, OS: 1, User: 1}',
      'run: {branches: 2000}',
      'wrmsr: IA32_RTIT_CTL\n    fields: {ToPA: 1}',
      'collect:\n    expect: {flow: truth}',
    ));
    expect(out.expectations.find((e) => e.name === 't.yaml:15 collect flow = truth')).toMatchObject({ ok: true, detail: expect.stringMatching(/^\d+ lines identical/) });
  });

  test('a wrapped single range (its start overwritten) does not', async () => {
    const out = await runText(steps(
      'alloc: out0\n    size: 4096',
      'wrmsr: IA32_RTIT_OUTPUT_BASE\n    value: {buffer: out0}',
      'wrmsr: IA32_RTIT_OUTPUT_MASK_PTRS\n    value: 0xfff',
      'wrmsr: IA32_RTIT_CTL\n    fields: {TraceEn: 1, BranchEn: 1, OS: 1, User: 1}',
      'run: {branches: 20000}',
      'wrmsr: IA32_RTIT_CTL\n    fields: {BranchEn: 1}',
      'collect:\n    expect: {flow: truth}',
    ));
    expect(out.expectations.find((e) => e.name === 't.yaml:13 collect flow = truth')).toMatchObject({ ok: false, detail: expect.stringMatching(/^line \d+ differs/) });
  });

  test('a driver trace that lost bytes (a PMI left unhandled, so the STOP guard fired) does not: the flow has a gap the truth lacks', async () => {
    const out = await runText(steps(
      'trace: {policy: grow}',
      'run: {branches: 40000, slices: 1, slice-branches: 10}',
      'wait-pmi:',
      'run:',
      'collect:\n    expect: {flow: truth}',
    ));
    expect(out.expectations.find((e) => e.name === 't.yaml:6 collect the output')?.detail).toMatch(/lost: stop at \d+$/);
    expect(out.expectations.find((e) => e.name === 't.yaml:6 collect flow = truth')).toMatchObject({
      ok: false, detail: expect.stringMatching(/differs: flow \{"kind":"gap","bytes":null,"reason":"stop"\} .*; 1 loss\(es\) in the ledger$/),
    });
  });

  test('each collect compares the truth recorded since the previous one', async () => {
    const on = 'wrmsr: IA32_RTIT_CTL\n    fields: {TraceEn: 1, BranchEn: 1, ToPA: 1, OS: 1, User: 1}';
    const off = 'wrmsr: IA32_RTIT_CTL\n    fields: {ToPA: 1}';
    const out = await runText(steps(
      'trace: {policy: grow}', 'run: {branches: 3000}', 'collect:\n    expect: {flow: truth}',
      'alloc: out0\n    size: 65536',
      'topa: t0\n    entries: [{buffer: out0}, {end: t0}]',
      'wrmsr: IA32_RTIT_OUTPUT_BASE\n    value: {buffer: t0}',
      'wrmsr: IA32_RTIT_OUTPUT_MASK_PTRS\n    value: 0x7f',
      'wrmsr: IA32_RTIT_STATUS\n    value: 0',
      on, 'run: {branches: 3000}', off, 'collect:\n    expect: {flow: truth}',
    ));
    expect(out.expectations.filter((e) => e.name.endsWith('flow = truth')).map((e) => e.ok)).toEqual([true, true]);
  });

  test('two different workloads between collects cannot be decoded against one image', async () => {
    const out = await runText(steps(
      'trace: {policy: grow}', 'run: {seed: 1, branches: 300}', 'run: {seed: 2, branches: 300}', 'collect:\n    expect: {flow: truth}',
    ));
    expect(out.expectations.find((e) => e.name === 't.yaml:5 collect flow = truth')).toMatchObject({ ok: false, detail: '2 different workloads ran since the previous collect; the flow is decoded against one code image (collect between them)' });
  });
});
