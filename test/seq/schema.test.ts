// A bad sequence file is refused before anything runs, with file:line:col, the kind of mistake and,
// for a misspelled name, the nearest valid one (docs/formats/seq.md "Errors").
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { checkSequence } from '../../harness/seq/check.js';
import { SeqFileError, type SeqProblem } from '../../harness/seq/errors.js';
import { editDistance, nearest } from '../../harness/text/nearest.js';
import { parseSeqText } from '../../harness/seq/parse.js';
import { STEP_KINDS } from '../../harness/seq/schema.js';
import { PROFILE_NAMES } from '../../harness/sim/profiles.js';
import { TOPA_POLICIES } from '../../driver/request.js';
import { POLICY_BRANCHES, TOPA_BRANCHES } from '../../driver/topa/policies.js';

/** The error checking `text` (as bad.yaml) throws. */
function refusal(text: string): SeqFileError {
  try {
    checkSequence(parseSeqText('bad.yaml', text));
  } catch (e) {
    if (e instanceof SeqFileError) return e;
    throw e;
  }
  throw new Error('the file was accepted');
}

const cases: readonly { what: string; text: string; problem: SeqProblem; at: string; message: RegExp }[] = [
  { what: 'not YAML', text: 'steps:\n  - rdmsr: [1, 2\n', problem: 'syntax', at: 'bad.yaml:3:1', message: /not valid YAML/ },
  { what: 'an alias inside its own anchor', text: 'steps: &s [*s]\n', problem: 'syntax', at: 'bad.yaml:1:12', message: /the alias \*s lies inside the node its anchor names/ },
  { what: 'a billion laughs', text: 'steps:\n  - note: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n' + Array.from({ length: 9 }, (_, i) => `  - note: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]\n`).join(''), problem: 'syntax', at: 'bad.yaml:3:15', message: /aliases expand too far/ },
  { what: 'an unknown top-level key', text: 'cpu: skylake\nstep:\n  - rdmsr: 0x570\n', problem: 'schema', at: 'bad.yaml:2:1', message: /unknown key 'step'.*\(did you mean steps\?\)/ },
  { what: 'an unknown step, with the nearest kind', text: 'steps:\n  - rdmrs: IA32_RTIT_CTL\n', problem: 'unknown-step', at: 'bad.yaml:2:5', message: /unknown step 'rdmrs'.*\(did you mean rdmsr\?\)$/ },
  { what: 'an unknown MSR, with the nearest name', text: 'steps:\n  - rdmsr: IA32_RTIT_STATSU\n', problem: 'unknown-msr', at: 'bad.yaml:2:12', message: /unknown MSR 'IA32_RTIT_STATSU'.*\(did you mean IA32_RTIT_STATUS\?\)$/ },
  { what: 'an unknown field, with MSR.Field', text: 'steps:\n  - rdmsr: IA32_RTIT_STATUS\n    expect: {Stoped: 1}\n', problem: 'unknown-field', at: 'bad.yaml:3:14', message: /IA32_RTIT_STATUS has no field 'Stoped'.*\(did you mean IA32_RTIT_STATUS\.Stopped\?\)$/ },
  { what: 'an unknown field of a wrmsr', text: 'steps:\n  - wrmsr: IA32_RTIT_CTL\n    fields:\n      TraceEn: 1\n      BranchEN: 1\n', problem: 'unknown-field', at: 'bad.yaml:5:7', message: /did you mean IA32_RTIT_CTL\.BranchEn\?/ },
  { what: 'a wrong type', text: 'steps:\n  - cpuid: leaf14\n', problem: 'schema', at: 'bad.yaml:2:12', message: /'cpuid' must be integer/ },
  { what: 'a wrong enum', text: 'steps:\n  - wrmsr: IA32_RTIT_CTL\n    value: 0\n    expect: fault\n', problem: 'schema', at: 'bad.yaml:4:13', message: /'expect' must be one of "ok", "gp"/ },
  { what: 'a misspelled key of a step', text: 'steps:\n  - wrmsr: IA32_RTIT_CTL\n    vaule: 1\n', problem: 'schema', at: 'bad.yaml:3:5', message: /unknown key 'vaule'.*\(did you mean value\?\)/ },
  { what: 'a wrmsr with neither value nor fields', text: 'steps:\n  - wrmsr: IA32_RTIT_CTL\n', problem: 'schema', at: 'bad.yaml:2:5', message: /must be given exactly one of value and fields/ },
  { what: 'a field value too wide for its field', text: 'steps:\n  - wrmsr: IA32_RTIT_CTL\n    fields: {MTCFreq: 16}\n', problem: 'bad-value', at: 'bad.yaml:3:23', message: /IA32_RTIT_CTL\.MTCFreq \(bits 17:14\) cannot hold 0x10/ },
  { what: 'a value wider than 64 bits', text: 'steps:\n  - wrmsr: 0x570\n    value: 0x10000000000000000\n', problem: 'bad-value', at: 'bad.yaml:3:12', message: /wider than 64 bits/ },
  { what: 'a buffer used before it is defined', text: 'steps:\n  - wrmsr: IA32_RTIT_OUTPUT_BASE\n    value: {buffer: tabel0}\n  - topa: table0\n    entries: [{end: table0}]\n', problem: 'unknown-name', at: 'bad.yaml:3:21', message: /no buffer or table named 'tabel0'/ },
  { what: 'a misspelled buffer in a ToPA entry', text: 'steps:\n  - alloc: out0\n    size: 4096\n  - topa: t\n    entries: [{buffer: otu0}]\n', problem: 'unknown-name', at: 'bad.yaml:5:24', message: /no buffer named 'otu0'.*\(did you mean out0\?\)/ },
  { what: 'a ToPA region that is not a power of two', text: 'steps:\n  - alloc: b\n    size: 12288\n  - topa: t\n    entries: [{buffer: b}]\n', problem: 'bad-value', at: 'bad.yaml:5:24', message: /buffer b is 12288 bytes: a ToPA output region is a power of two/ },
  { what: 'an unknown packet name', text: 'steps:\n  - collect:\n    expect: {packets: {tip.pgd: 1, tipp: 2}}\n', problem: 'unknown-name', at: 'bad.yaml:3:36', message: /no packet is named 'tipp'.*\(did you mean tip\?\)$/ },
  { what: 'a name defined twice', text: 'steps:\n  - alloc: a\n    size: 4096\n  - alloc: a\n    size: 4096\n', problem: 'unknown-name', at: 'bad.yaml:4:12', message: /'a' is already defined/ },
  { what: 'an unknown profile', text: 'cpu: skylak\nsteps:\n  - rdmsr: 0x570\n', problem: 'schema', at: 'bad.yaml:1:6', message: /'cpu' must be one of/ },
  { what: 'a rule without expect: gp', text: 'steps:\n  - wrmsr: IA32_RTIT_CTL\n    value: 0\n    rule: CTL.2\n', problem: 'schema', at: 'bad.yaml:4:5', message: /'rule' names the #GP rule/ },
  { what: 'fields of an MSR without a field table', text: 'steps:\n  - wrmsr: 0x123\n    fields: {X: 1}\n', problem: 'unknown-field', at: 'bad.yaml:2:12', message: /has no field table/ },
  { what: 'a step nested in repeat', text: 'steps:\n  - repeat: 2\n    steps:\n      - rdmsr: IA32_RTIT_CTLL\n', problem: 'unknown-msr', at: 'bad.yaml:4:16', message: /did you mean IA32_RTIT_CTL\?/ },
  { what: 'a step that is not a mapping', text: 'steps:\n  - rdmsr\n', problem: 'schema', at: 'bad.yaml:2:5', message: /a step must be a mapping/ },
  // trace and handle-pmi: the handler acts on the tables the driver built, so handle-pmi needs an open trace session.
  { what: 'handle-pmi with no trace before it', text: 'steps:\n  - handle-pmi:\n', problem: 'trace-state', at: 'bad.yaml:2:5', message: /handle-pmi runs the driver's PMI handler, which acts on the ToPA tables the driver built: it needs an open trace session/ },
  { what: 'handle-pmi after collect ended the session', text: 'steps:\n  - trace: {policy: grow}\n  - collect:\n  - handle-pmi:\n', problem: 'trace-state', at: 'bad.yaml:4:5', message: /needs an open trace session/ },
  { what: 'a trace while another is open', text: 'steps:\n  - trace: {policy: grow}\n  - trace: {policy: chain}\n', problem: 'trace-state', at: 'bad.yaml:3:5', message: /a trace session is already open \(the trace at bad\.yaml:2\): collect ends it/ },
  { what: 'a repeated trace that is never collected', text: 'steps:\n  - repeat: 2\n    steps:\n      - trace: {policy: grow}\n', problem: 'trace-state', at: 'bad.yaml:4:9', message: /already open \(the trace at bad\.yaml:4\)/ },
  { what: 'handle-pmi naming another policy than the trace', text: 'steps:\n  - trace: {policy: grow}\n  - handle-pmi: {policy: chain}\n', problem: 'bad-value', at: 'bad.yaml:3:26', message: /the trace at bad\.yaml:2 built its tables for policy grow; the handler refills with that policy, so handle-pmi cannot use chain/ },
  { what: 'a branch the policy never takes', text: 'steps:\n  - trace: {policy: chain}\n  - handle-pmi:\n    expect: {branch: grow}\n', problem: 'bad-value', at: 'bad.yaml:4:22', message: /policy chain never takes branch grow \(its branches: chain\)/ },
  { what: 'a branch with an action that does not refill', text: 'steps:\n  - trace: {policy: grow}\n  - handle-pmi:\n    expect: {action: not-topa, branch: grow}\n', problem: 'bad-value', at: 'bad.yaml:4:40', message: /only a handled PMI refills/ },
  { what: 'an unknown policy in handle-pmi (schema)', text: 'steps:\n  - trace: {policy: grow}\n  - handle-pmi: {policy: groww}\n', problem: 'schema', at: 'bad.yaml:3:26', message: /'policy' must be one of "grow", "chain", "circular-fresh", "protect-unread", "single-entry", "budget"/ },
  { what: 'an unknown branch (schema)', text: 'steps:\n  - trace: {policy: grow}\n  - handle-pmi:\n    expect: {branch: grwo}\n', problem: 'schema', at: 'bad.yaml:4:22', message: /'branch' must be one of "grow", "chain"/ },
  { what: 'a misspelled key of trace', text: 'steps:\n  - trace: {policy: grow, regoins: 3}\n', problem: 'schema', at: 'bad.yaml:2:27', message: /unknown key 'regoins'.*\(did you mean regions\?\)/ },
  { what: 'a trace without a policy', text: 'steps:\n  - trace: {regions: 3}\n', problem: 'schema', at: 'bad.yaml:2:12', message: /'trace' needs the key 'policy'/ },
  { what: 'a CTL field the driver sets itself', text: 'steps:\n  - trace: {policy: grow}\n    ctl: {TraceEn: 1}\n', problem: 'unknown-field', at: 'bad.yaml:3:11', message: /IA32_RTIT_CTL\.TraceEn is not an option of trace: it is set by the driver/ },
  { what: 'a misspelled CTL option', text: 'steps:\n  - trace: {policy: grow}\n    ctl: {BranchEN: 0}\n', problem: 'unknown-field', at: 'bad.yaml:3:11', message: /\(did you mean IA32_RTIT_CTL\.BranchEn\?\)$/ },
  { what: 'a trace the driver\'s checkRequest refuses', text: 'steps:\n  - trace: {policy: circular-fresh, regions: 2}\n', problem: 'bad-value', at: 'bad.yaml:2:12', message: /the driver refuses this trace: ToPA policy "circular-fresh" needs at least 3 regions, got 2/ },
  { what: 'a region size that is not a power of two', text: 'steps:\n  - trace: {policy: grow, region-size: 12288}\n', problem: 'bad-value', at: 'bad.yaml:2:40', message: /region-size 12288 is not a power of two/ },
  { what: 'a budget for another policy', text: 'steps:\n  - trace: {policy: grow, budget: 65536}\n', problem: 'schema', at: 'bad.yaml:2:27', message: /'budget' is the memory budget of policy budget; this trace's policy is grow/ },
  { what: 'flow expecting something but truth (schema)', text: 'steps:\n  - collect:\n    expect: {flow: truht}\n', problem: 'schema', at: 'bad.yaml:3:20', message: /'flow' must be one of "truth"/ },
];

describe('refused sequence files', () => {
  test.each(cases)('$what: $at', ({ text, problem, at, message }) => {
    const e = refusal(text);
    expect(e.code).toBe('bad_config');
    expect(e.problem).toBe(problem);
    expect(e.message.startsWith(`${at}: `), e.message).toBe(true);
    expect(e.message).toMatch(message);
  });

  test('a far-off name gets no suggestion', () => {
    const e = refusal('steps:\n  - rdmsr: MSR_LASTBRANCH_TOS\n');
    expect(e.suggestion).toBeUndefined();
    expect(e.message).not.toMatch(/did you mean/);
  });
});

describe('names', () => {
  test('edit distance ignores case and counts single edits', () => {
    expect(editDistance('stopped', 'Stopped')).toBe(0);
    expect(editDistance('Stoped', 'Stopped')).toBe(1);
    expect(editDistance('TraceEn', 'TracEn')).toBe(1);
  });
  test('nearest picks the closest name within a third of the word', () => {
    expect(nearest('IA32_RTIT_OUTPUT_BSAE', ['IA32_RTIT_OUTPUT_BASE', 'IA32_RTIT_CTL'])).toBe('IA32_RTIT_OUTPUT_BASE');
    expect(nearest('xyz', ['IA32_RTIT_CTL'])).toBeUndefined();
  });
});

describe('docs/schemas/seq.schema.json agrees with the code', () => {
  const schema = JSON.parse(readFileSync(join(process.cwd(), 'docs', 'schemas', 'seq.schema.json'), 'utf8')) as {
    properties: { cpu: { enum: string[] } };
    definitions: { step: { oneOf: { $ref: string }[] } };
  };
  test('its profiles are the model\'s', () => {
    expect(schema.properties.cpu.enum).toEqual([...PROFILE_NAMES]);
  });
  test('its ToPA policies and branches are the driver\'s', () => {
    const defs = (schema as unknown as { definitions: { topaPolicy: { enum: string[] }; 'handle-pmi': { properties: { expect: { properties: { branch: { enum: string[] } } } } } } }).definitions;
    expect(defs.topaPolicy.enum).toEqual([...TOPA_POLICIES]);
    expect(defs['handle-pmi'].properties.expect.properties.branch.enum).toEqual([...TOPA_BRANCHES]);
    expect(new Set(Object.values(POLICY_BRANCHES).flat())).toEqual(new Set(TOPA_BRANCHES));
  });
  test('its step kinds are the checker\'s, in the same order', () => {
    expect(schema.definitions.step.oneOf.map((r) => r.$ref.replace('#/definitions/', ''))).toEqual([...STEP_KINDS]);
  });
});
