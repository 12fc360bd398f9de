// What a sequence may do on each target, checked before anything runs (docs/formats/seq.md
// "Targets"): on a real CPU (qemu --pt hardware, ssh; with --pt model the MSRs the guest answers)
// a WRMSR outside the PT and performance-monitoring allowlist needs --allow-msr, and `flow: truth`
// needs the reference model as the PT unit.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { RTIT_MSRS } from '../../driver/hw/msrs.js';
import type { TargetReach } from '../../harness/runner/targets.js';
import { checkSequence } from '../../harness/seq/check.js';
import { SeqFileError } from '../../harness/seq/errors.js';
import { parseSeqText } from '../../harness/seq/parse.js';
import { loadSequences } from '../../harness/seq/run-seq.js';
import { targetRules } from '../../harness/seq/target-rules.js';

const SSH: TargetReach = { kind: 'ssh', host: 'lab1' };
const QEMU_HW: TargetReach = { kind: 'qemu', pt: 'hardware', accel: 'tcg' };
const QEMU_MODEL: TargetReach = { kind: 'qemu', pt: 'model', accel: 'tcg' };

/** Checks `text` as t.yaml for `reach`; the refusal, or undefined when accepted. */
function check(text: string, reach: TargetReach | undefined, allowMsr = false): SeqFileError | undefined {
  try {
    checkSequence(parseSeqText('t.yaml', text), targetRules(reach, allowMsr));
    return undefined;
  } catch (e) {
    if (e instanceof SeqFileError) return e;
    throw e;
  }
}

const write = (msr: string, value = '0'): string => `steps:\n  - wrmsr: ${msr}\n    value: ${value}\n`;

describe('the WRMSR allowlist', () => {
  test.for([
    { msr: 'IA32_XSS', target: 'ssh', reach: SSH },
    { msr: 'IA32_X2APIC_LVT_PMI', target: 'qemu --pt hardware', reach: QEMU_HW },
    { msr: '0x1d9', target: 'ssh', reach: SSH },
    { msr: '0x1d9', target: 'qemu --pt model', reach: QEMU_MODEL },
  ])('$msr on $target is refused at its place, naming the MSR and --allow-msr', ({ msr, reach }) => {
    const e = check(write(msr), reach);
    expect(e?.problem).toBe('msr-not-allowed');
    expect(e?.message).toMatch(new RegExp(`^t\\.yaml:2:12: WRMSR ${msr}.* writes a real MSR on .*, and it is not a PT or performance-monitoring MSR \\(IA32_RTIT_\\*, IA32_PERF_GLOBAL_STATUS, IA32_PERF_GLOBAL_STATUS_RESET, IA32_PERF_GLOBAL_STATUS_SET\\): give --allow-msr to write it$`));
  });

  test('an MSR outside the tables is named by its number and its name, where it has one', () => {
    expect(check(write('0x1d9'), SSH)?.message).toMatch(/^t\.yaml:2:12: WRMSR 0x1d9 writes a real MSR on ssh:lab1,/);
    expect(check(write('0xda0'), SSH)?.message).toMatch(/^t\.yaml:2:12: WRMSR IA32_XSS \(0xda0\) writes a real MSR on ssh:lab1,/);
  });

  test('a refusal inside a repeat points at the nested step', () => {
    expect(check('steps:\n  - repeat: 2\n    steps:\n      - wrmsr: IA32_XSS\n        value: 0\n', SSH)?.message).toMatch(/^t\.yaml:4:16: WRMSR IA32_XSS/);
  });

  test.for([
    ...RTIT_MSRS.map((m) => m.name),
    'IA32_PERF_GLOBAL_STATUS', 'IA32_PERF_GLOBAL_STATUS_RESET', 'IA32_PERF_GLOBAL_STATUS_SET',
  ])('%s is on the allowlist: accepted on ssh without --allow-msr', (msr) => {
    expect(check(write(msr), SSH)).toBeUndefined();
  });

  test('--allow-msr accepts the writes the allowlist refuses', () => {
    for (const reach of [SSH, QEMU_HW, QEMU_MODEL]) {
      expect(check(write('IA32_XSS'), reach, true)).toBeUndefined();
      expect(check(write('0x1d9'), reach, true)).toBeUndefined();
    }
  });

  test('with --pt model the MSRs the model answers are not real: IA32_XSS and the LVT entry are accepted', () => {
    expect(check(write('IA32_XSS'), QEMU_MODEL)).toBeUndefined();
    expect(check(write('IA32_X2APIC_LVT_PMI', '0x10000'), QEMU_MODEL)).toBeUndefined();
  });

  test('on the sim nothing is real: every write is accepted', () => {
    expect(check(write('0x1d9'), undefined)).toBeUndefined();
  });

  test('reads are never refused', () => {
    expect(check('steps:\n  - rdmsr: 0x1d9\n', SSH)).toBeUndefined();
  });

  test('the sequences/ library writes the allowlist only: on ssh without --allow-msr no file is refused for an MSR', async () => {
    const files = readdirSync('sequences').filter((f) => f.endsWith('.yaml')).map((f) => join('sequences', f));
    const problems = await Promise.all(files.map((f) => loadSequences([f], targetRules(SSH, false)).then(() => 'accepted', (e: SeqFileError) => e.problem)));
    expect(new Set(problems)).toEqual(new Set(['accepted', 'not-on-target']));
  });
});

describe('flow: truth and the target', () => {
  const FLOW = 'steps:\n  - collect:\n    expect: {flow: truth}\n';

  test.for([
    { target: 'ssh', reach: SSH, label: 'ssh:lab1' },
    { target: 'qemu --pt hardware', reach: QEMU_HW, label: 'qemu --pt hardware' },
  ])('is refused on $target, where the PT unit is the CPU\'s own', ({ reach, label }) => {
    const e = check(FLOW, reach);
    expect(e?.problem).toBe('not-on-target');
    expect(e?.message).toBe(`t.yaml:3:20: flow: truth compares with the reference model's truth, and on ${label} the PT unit is the CPU's own (no truth): run it on the sim or qemu --pt model`);
  });

  test('is accepted on qemu --pt model and on the sim', () => {
    expect(check(FLOW, QEMU_MODEL)).toBeUndefined();
    expect(check(FLOW, undefined)).toBeUndefined();
  });
});
