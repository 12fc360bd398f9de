// Every step kind of a sequence file on the sim, each with a failing case beside its passing one:
// a failed expectation is named by the step's file:line (docs/formats/seq.md).
import { describe, expect, test } from 'vitest';
import { at, runText, steps } from './run-text.js';

const TOPA = [
  'alloc: out0\n    size: 4096',
  'topa: t0\n    entries: [{buffer: out0}, {end: t0}]',
];

describe('cpuid', () => {
  test('a register value and a masked register pass; a wrong value fails at its line', async () => {
    const out = await runText(steps(
      'cpuid: 0x14\n    subleaf: 0\n    expect: {ecx: {value: 0x4, mask: 0x4}}',
      'cpuid: 0x14\n    expect: {eax: 0x7}',
    ));
    expect(at(out, 2).ok).toBe(true);
    const bad = at(out, 5);
    expect(bad.ok).toBe(false);
    expect(bad.detail).toMatch(/expected eax=0x7; read eax=0x1 /);
  });
});

describe('rdmsr', () => {
  test('by name with a value, a mask and fields; by number; the wrong value fails with file:line', async () => {
    const out = await runText(steps(
      'rdmsr: IA32_RTIT_CTL\n    expect: 0',
      'rdmsr: IA32_RTIT_OUTPUT_MASK_PTRS\n    expect: {value: 0x7f, mask: 0xff}',
      'rdmsr: IA32_RTIT_STATUS\n    expect: {Stopped: 0, Error: 0}',
      'rdmsr: 0x570\n    expect: 0',
      'rdmsr: IA32_RTIT_OUTPUT_MASK_PTRS\n    expect: 0x12',
      'rdmsr: IA32_RTIT_STATUS\n    expect: {Stopped: 1}',
    ));
    for (const l of [2, 4, 6, 8]) expect(at(out, l).ok, `line ${l}`).toBe(true);
    expect(at(out, 10)).toMatchObject({ ok: false, name: 't.yaml:10 rdmsr IA32_RTIT_OUTPUT_MASK_PTRS' });
    expect(at(out, 12)).toMatchObject({ ok: false, name: 't.yaml:12 rdmsr IA32_RTIT_STATUS Stopped=1', detail: expect.stringMatching(/read Stopped=0/) });
  });

  test('expect: gp passes on an MSR that does not exist, and fails on one that does', async () => {
    const out = await runText(steps(
      'rdmsr: 0x123\n    expect: gp\n    rule: MSR.unknown',
      'rdmsr: IA32_RTIT_CTL\n    expect: gp',
      'rdmsr: 0x123\n    expect: 0',
    ));
    expect(at(out, 2).ok).toBe(true);
    expect(at(out, 5).ok).toBe(false);
    expect(at(out, 7)).toMatchObject({ ok: false, detail: expect.stringMatching(/unexpected #GP/) });
  });
});

describe('wrmsr', () => {
  test('by fields and raw; expect gp with its rule; each failing the other way', async () => {
    const out = await runText(steps(
      'wrmsr: IA32_RTIT_CTL\n    fields: {BranchEn: 1, ToPA: 1}',
      'rdmsr: IA32_RTIT_CTL\n    expect: 0x2100',
      'wrmsr: IA32_RTIT_CTL\n    value: 0x40000\n    expect: gp\n    rule: CTL.2',
      'wrmsr: IA32_RTIT_CTL\n    value: 0x40000\n    expect: gp\n    rule: G3',
      'wrmsr: IA32_RTIT_CTL\n    value: 0x40000',
      'wrmsr: IA32_RTIT_CTL\n    fields: {BranchEn: 1}\n    expect: gp',
    ));
    expect(at(out, 2).ok).toBe(true);
    expect(at(out, 4).ok).toBe(true);
    expect(at(out, 6)).toMatchObject({ ok: true, detail: expect.stringMatching(/CTL\.2: reserved bit 18 set/) });
    expect(at(out, 10)).toMatchObject({ ok: false, name: expect.stringMatching(/raises #GP \(G3\)$/) });
    expect(at(out, 14)).toMatchObject({ ok: false, detail: expect.stringMatching(/^expected the write to succeed; #GP/) });
    expect(at(out, 16)).toMatchObject({ ok: false, detail: 'expected #GP; the write succeeded' });
  });
});

describe('alloc and topa', () => {
  test('OUTPUT_BASE takes a table by name; rdmsr checks it against the right table and fails against another', async () => {
    const out = await runText(steps(
      ...TOPA,
      'alloc: out1\n    size: 8192',
      'topa: t1\n    entries: [{buffer: out1, int: true, stop: true}, {end: t0}]',
      'wrmsr: IA32_RTIT_OUTPUT_BASE\n    value: {buffer: t1}',
      'rdmsr: IA32_RTIT_OUTPUT_BASE\n    expect: {buffer: t1}',
      'rdmsr: IA32_RTIT_OUTPUT_BASE\n    expect: {buffer: t0}',
    ));
    expect(at(out, 12).ok).toBe(true);
    expect(at(out, 14).ok).toBe(false);
    // The table entries reached the transcript as ToPA lines: INT and STOP on the 8 KiB region, END to t0.
    const topa = out.lines.filter((l) => l.includes('"op":"topa"'));
    expect(topa.some((l) => /INT STOP/.test(l))).toBe(true);
    expect(topa.filter((l) => /END/.test(l))).toHaveLength(2);
  });
});

const ENABLE = [
  ...TOPA,
  'wrmsr: IA32_RTIT_OUTPUT_BASE\n    value: {buffer: t0}',
  'wrmsr: IA32_RTIT_OUTPUT_MASK_PTRS\n    value: 0x7f',
  'wrmsr: IA32_RTIT_CTL\n    fields: {TraceEn: 1, BranchEn: 1, ToPA: 1, OS: 1, User: 1}',
];
// Lines: steps at 2,4 (TOPA), 6, 8, 10 (ENABLE); the next step is at line 12.

describe('run and collect', () => {
  test('a run to exit passes and expecting slices fails; collect counts bytes exactly, and fails on a wrong count', async () => {
    const out = await runText(steps(
      ...ENABLE,
      'run: {branches: 100}',
      'run: {branches: 100}\n    expect: slices',
      'wrmsr: IA32_RTIT_CTL\n    fields: {ToPA: 1}',
      'collect:\n    expect: {min-bytes: 1}',
      'collect:\n    expect: {bytes: 1}',
    ));
    expect(at(out, 12).ok).toBe(true);
    expect(at(out, 13)).toMatchObject({ ok: false, detail: expect.stringMatching(/the workload exited/) });
    expect(at(out, 17).ok).toBe(true);
    expect(at(out, 19).ok).toBe(false);
    expect(out.trace!.length).toBeGreaterThan(2);
    expect(out.trace![0]).toBe(0x02); // a PSB first
  });

  test('packet counts of the collected stream: exact and bounded counts pass, a wrong count fails', async () => {
    const out = await runText(steps(
      ...ENABLE,
      'run: {branches: 100}',
      'wrmsr: IA32_RTIT_CTL\n    fields: {ToPA: 1}',
      'collect:\n    expect: {packets: {psb: {min: 1}, tip.pge: 1, ovf: 0, error: 0}}',
      'collect:\n    expect: {packets: {tip.pge: 2, tnt.8: {max: 0}}}',
    ));
    expect(at(out, 15)).toMatchObject({ ok: true, name: 't.yaml:15 collect packets', detail: expect.stringMatching(/^psb \d+ \(≥ 1\), tip\.pge 1 \(= 1\), ovf 0 \(= 0\), error 0 \(= 0\) in \d+ bytes$/) });
    expect(at(out, 17)).toMatchObject({ ok: false, detail: expect.stringMatching(/^tip\.pge 1 \(= 2\), tnt\.8 \d+ \(= 0\) in \d+ bytes$/) });
  });

  test('collect follows the tables from the current one when the first table built does not lead there', async () => {
    const out = await runText(steps(
      ...TOPA,
      'alloc: a\n    size: 4096',
      'alloc: b\n    size: 65536',
      'topa: t1\n    entries: [{buffer: a}, {buffer: b}, {end: t1}]',
      'wrmsr: IA32_RTIT_OUTPUT_BASE\n    value: {buffer: t1}',
      'wrmsr: IA32_RTIT_OUTPUT_MASK_PTRS\n    value: 0x7f',
      'wrmsr: IA32_RTIT_CTL\n    fields: {TraceEn: 1, BranchEn: 1, ToPA: 1, OS: 1, User: 1}',
      'run: {branches: 20000}',
      'wrmsr: IA32_RTIT_CTL\n    fields: {ToPA: 1}',
      'collect:\n    expect: {min-bytes: 4097, packets: {psb: {min: 2}, error: 0}}',
    ));
    expect(out.expectations.every((e) => e.ok), JSON.stringify(out.expectations, null, 1)).toBe(true);
    expect(out.expectations.find((e) => e.name === 't.yaml:21 collect at least 4097 bytes')).toMatchObject({ detail: expect.stringMatching(/^ToPA: 1 full region\(s\), then \d+ bytes of entry 1 /) });
  });

  test('slices suspend the workload; the next run goes on from there', async () => {
    const out = await runText(steps(...ENABLE, 'run: {branches: 500, slices: 2, slice-branches: 50}', 'run:'));
    expect(at(out, 12)).toMatchObject({ ok: true, detail: expect.stringMatching(/^2 slice\(s\), 100 branches/) });
    expect(at(out, 13).ok).toBe(true);
  });
});

describe('pmi-enable and wait-pmi', () => {
  const INT = [
    'alloc: small\n    size: 4096',
    'alloc: large\n    size: 65536',
    'topa: t\n    entries: [{buffer: small, int: true}, {buffer: large}, {end: t}]',
    'wrmsr: IA32_RTIT_OUTPUT_BASE\n    value: {buffer: t}',
    'wrmsr: IA32_RTIT_OUTPUT_MASK_PTRS\n    value: 0x7f',
    'wrmsr: IA32_RTIT_CTL\n    fields: {TraceEn: 1, BranchEn: 1, ToPA: 1, OS: 1, User: 1}',
    'run: {branches: 20000, slices: 1, slice-branches: 10}',
  ];
  // Steps at lines 2,4,6,8,10,12,14; the next is at 15.
  test('with the LVT unmasked the INT region raises a PMI', async () => {
    const out = await runText(steps('pmi-enable: 0', ...INT, 'wait-pmi: {timeout-ms: 20000}'));
    expect(at(out, 16)).toMatchObject({ ok: true, detail: expect.stringMatching(/GLOBAL_STATUS 0x80000000000000/) });
  });

  test('with the LVT masked no PMI comes: wait-pmi fails, and expect: none passes', async () => {
    const out = await runText(steps(...INT, 'wait-pmi: {timeout-ms: 20000}'));
    expect(at(out, 15)).toMatchObject({ ok: false, detail: 'the workload exited without a PMI' });
    const none = await runText(steps(...INT, 'wait-pmi: {timeout-ms: 20000}\n    expect: none'));
    expect(at(none, 15).ok).toBe(true);
  });
});

describe('xsaves and xrstors', () => {
  test('a round trip restores a changed MSR; expecting #GP from a good XRSTORS fails', async () => {
    const out = await runText(['cpu: full', steps(
      'wrmsr: IA32_RTIT_ADDR0_A\n    value: 0x5000',
      'xsaves: a',
      'wrmsr: IA32_RTIT_ADDR0_A\n    value: 0x6000',
      'xrstors: a',
      'rdmsr: IA32_RTIT_ADDR0_A\n    expect: 0x5000',
      'xrstors: a\n    expect: gp',
    )].join('\n'));
    for (const l of [5, 8, 9]) expect(at(out, l).ok, `line ${l}`).toBe(true);
    expect(at(out, 11)).toMatchObject({ ok: false, detail: 'expected #GP; XRSTORS succeeded' });
  });

  test('XSAVES of PT state on a CPU without IA32_XSS[8] ends the sequence with a failure', async () => {
    const out = await runText(['cpu: broadwell', steps('xsaves: a')].join('\n'));
    expect(out.expectations.at(-1)).toMatchObject({ ok: false, name: 't.yaml:3 xsaves the sequence ran to its end' });
  });
});

describe('repeat', () => {
  test('repeats its steps, each run adding its expectation', async () => {
    const out = await runText(steps('repeat: 3\n    steps:\n      - rdmsr: IA32_RTIT_CTL\n        expect: 0\n      - rdmsr: IA32_RTIT_CTL\n        expect: 1'));
    expect(out.expectations.map((e) => [e.name, e.ok])).toEqual(Array.from({ length: 3 }, () => [['t.yaml:4 rdmsr IA32_RTIT_CTL', true], ['t.yaml:6 rdmsr IA32_RTIT_CTL', false]]).flat());
  });
});

describe('YAML anchors as names for values', () => {
  test('an aliased field set, merged with one field changed, encodes as written', async () => {
    const out = await runText(steps(
      'wrmsr: IA32_RTIT_CTL\n    fields: &ctl {BranchEn: 1, ToPA: 1, OS: 1}',
      'rdmsr: IA32_RTIT_CTL\n    expect: *ctl',
      'wrmsr: IA32_RTIT_CTL\n    fields: {<<: *ctl, OS: 0, User: 1}',
      'rdmsr: IA32_RTIT_CTL\n    expect: {User: 1, OS: 0, BranchEn: 1}',
      'rdmsr: IA32_RTIT_CTL\n    expect: *ctl',
    ));
    expect(out.expectations.map((e) => e.ok)).toEqual([true, true, true, true, false]);
    expect(at(out, 6).name).toBe('t.yaml:6 wrmsr IA32_RTIT_CTL ← BranchEn=1 ToPA=1 OS=0 User=1 (0x2108)');
  });
});
