// `ptlab run --hosts` without a VM (docs/hosts.md): the options an inventory replaces are refused,
// a wrong inventory is refused at file:line:col with nothing written (exit 2), hosts nobody
// answers on are errors for their own cells with every suite file written (exit 3 when no host
// could be used), --tags picks the hosts, --json says the same as data, and the exit status over
// several hosts follows docs/hosts.md "Exit status".
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { utils } from 'ssh2';
import { describe, expect, test } from 'vitest';
import { exitOfHosts } from '../../harness/cli/commands/run-hosts.js';
import { parseRunArgs } from '../../harness/cli/commands/run.js';
import { main } from '../../harness/cli/main.js';
import { readInventory } from '../../harness/hosts/inventory.js';
import { runHosts, type HostRun, type HostsOutcome } from '../../harness/hosts/run-hosts.js';
import { errorResult, type ResultJson } from '../../harness/rundir/result.js';
import { tmpRoot } from '../scenarios/tmp.js';
import { deadPort } from './dead-port.js';

const root = await tmpRoot('ptlab-hosts-cli-');
const XSD = join(process.cwd(), 'docs', 'schemas', 'junit.xsd');
const DEAD = await deadPort();

async function ptlab(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [], err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** An inventory of hosts on a port where no SSH server answers (1 s to give up), with a real key pair beside it. */
async function downInventory(name: string, hosts: readonly { name: string; pt?: string; tags?: string[] }[]): Promise<string> {
  const k = utils.generateKeyPairSync('ed25519');
  await writeFile(join(root, `${name}.key`), k.private, { mode: 0o600 });
  await writeFile(join(root, `${name}.pub`), k.public);
  const port = DEAD;
  const file = join(root, `${name}.yaml`);
  await writeFile(file, `hosts:\n${hosts.map((h) => `  - {name: ${h.name}, host: 127.0.0.1, port: ${port}, key: ${name}.key, known-host: ${name}.pub, connect-timeout: 1` +
    `${h.pt ? `, pt: ${h.pt}` : ''}${h.tags ? `, tags: [${h.tags.join(', ')}]` : ''}}\n`).join('')}`);
  return file;
}

describe('the command line', () => {
  test.for([
    { argv: ['--target', 'ssh'], want: '--target does not combine' },
    { argv: ['--host', 'h', '--port', '22'], want: '--host, --port do not combine' },
    { argv: ['--pt', 'model'], want: '--pt does not combine' },
    { argv: ['--shard', '1/2'], want: '--shard does not combine' },
  ])('--hosts with $argv is refused', ({ argv, want }) => {
    expect(() => parseRunArgs(['topa-grow', '--hosts', 'lab.yaml', ...argv])).toThrow(want);
  });

  test('--tags without --hosts is refused', () => {
    expect(() => parseRunArgs(['topa-grow', '--tags', 'skylake'])).toThrow('--tags selects hosts of an inventory: give --hosts FILE too');
  });

  test('--hosts makes an ssh suite whose --cpu chooses the model profiles; --knob is still sim only', () => {
    expect(parseRunArgs(['topa-grow', '--hosts', 'lab.yaml', '--tags', 'a,b', '--cpu', 'icelake'])).toMatchObject({ target: 'ssh', profiles: ['icelake'], hosts: { file: 'lab.yaml', tags: ['a', 'b'] } });
    expect(() => parseRunArgs(['topa-grow', '--hosts', 'lab.yaml', '--knob', 'no-topa-stop-status'])).toThrow(/sim target only/);
  });

  test('a wrong inventory: exit 2 with file:line:col and what is wrong, nothing written', async () => {
    const file = join(root, 'bad.yaml');
    await writeFile(file, 'hosts:\n  - name: lab1\n    host: h\n    prot: 22\n');
    const out = join(root, 'bad-out');
    const r = await ptlab('run', 'topa-grow', '--hosts', file, '--out', out);
    expect([r.code, r.err.split('\n')[0], existsSync(out)]).toEqual([2, `ptlab run: ${file}:4:5: unknown key 'prot' (keys here: name, host, port, user, key, known-host, tags, pt, connect-timeout, cpus) (did you mean port?)`, false]);
  });
});

describe('hosts nobody answers on', () => {
  test('every host down: exit 3, each host\'s cells are errors with the reason, every suite file written and valid', async () => {
    const file = await downInventory('down', [{ name: 'm1', pt: 'model' }, { name: 'h1' }]);
    const out = join(root, 'down-out');
    const r = await ptlab('run', 'topa-grow', 'tracestop', '--cpu', 'skylake', '--hosts', file, '--out', out);
    const lines = (await readFile(join(out, 'results.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as ResultJson & { host: string });
    const x = await Promise.all([join(out, 'junit.xml'), join(out, 'm1', 'junit.xml')].map((f) => execa('xmllint', ['--noout', '--schema', XSD, f], { reject: false })));
    expect({
      code: r.code,
      said: /\[m1\] UNAVAILABLE: ssh:m1: ssh: 127\.0\.0\.1:\d+: /.test(r.err) && /\[h1\] UNAVAILABLE/.test(r.err),
      cells: lines.map((l) => `${l.host} ${l.scenario} ${l.profile} ${l.verdict}`),
      reasons: lines.every((l) => /^not run: the host is unavailable: ssh:(m1|h1): ssh: 127\.0\.0\.1:\d+: /.test(l.reason ?? '')),
      hostFiles: existsSync(join(out, 'h1', 'results.jsonl')),
      valid: x.map((v) => v.exitCode),
    }).toEqual({
      code: 3, said: true,
      cells: ['m1 topa-grow skylake error', 'm1 tracestop skylake error', 'h1 topa-grow probed error', 'h1 tracestop probed error'],
      reasons: true, hostFiles: true, valid: [0, 0],
    });
  }, 30_000);

  test('--tags runs only the hosts with those tags; --json says the same as data', async () => {
    const file = await downInventory('tags', [{ name: 'a', tags: ['skylake'] }, { name: 'b', tags: ['icelake'] }, { name: 'c', pt: 'model', tags: ['icelake', 'rack2'] }]);
    const out = join(root, 'tags-out');
    const r = await ptlab('run', 'err-reserved-bit', '--cpu', 'skylake', '--hosts', file, '--tags', 'rack2,skylake', '--out', out, '--json');
    const doc = JSON.parse(r.out) as { exitCode: number; hosts: { name: string; target: string; status: string }[]; counts: { runs: number; errors: number }; runs: { host: string }[] };
    expect({
      code: r.code, exitCode: doc.exitCode, dirs: ['a', 'b', 'c'].map((h) => existsSync(join(out, h))),
      hosts: doc.hosts.map((h) => [h.name, h.target, h.status]), counts: doc.counts, runs: doc.runs.map((x) => x.host),
    }).toEqual({
      code: 3, exitCode: 3, dirs: [true, false, true],
      hosts: [['a', 'ssh:a', 'unavailable'], ['c', 'ssh:c+model', 'unavailable']], counts: { runs: 2, passed: 0, failed: 0, corrupt: 0, skipped: 0, errors: 2 }, runs: ['a', 'c'],
    });
  }, 30_000);
});

describe('an interrupted run', () => {
  test('a stop signal while connecting: every host is incomplete, its cells "not run: interrupted…", nothing unavailable', async () => {
    const inv = await readInventory(await downInventory('stop', [{ name: 'a', pt: 'model' }, { name: 'b' }]));
    const stop = new AbortController();
    stop.abort(new Error('SIGINT'));
    const plan = parseRunArgs(['topa-grow', '--cpu', 'skylake', '--hosts', inv.file, '--out', join(root, 'stop-out')]);
    const o = await runHosts(plan, inv.hosts, { signal: stop.signal });
    expect({
      status: o.hosts.map((h) => [h.host.name, h.status, h.reason]),
      reasons: o.hosts.flatMap((h) => h.timed.map((t) => t.result.reason)),
      exit: exitOfHosts(o, 'SIGINT'),
    }).toEqual({
      status: [['a', 'incomplete', 'interrupted while connecting to a'], ['b', 'incomplete', 'interrupted while connecting to b']],
      reasons: ['not run: interrupted while connecting to a', 'not run: interrupted while connecting to b'],
      exit: 130,
    });
  });
});

describe('the exit status over several hosts', () => {
  const base = { scenario: 's', target: 'ssh', profile: 'skylake', seed: 1 };
  const pass: ResultJson = { ...base, verdict: 'pass', expectations: [{ name: 'x', ok: true, detail: '' }], figures: {} };
  const fail: ResultJson = { ...base, verdict: 'fail', reason: 'x: no', expectations: [{ name: 'x', ok: false, detail: 'no' }], figures: {} };
  const corrupt: ResultJson = { ...pass, verdict: 'corrupt', reason: 'PT reached memory the driver does not own (trace-write): x', corrupt: [{ kind: 'trace-write', cpu: 0, addr: '0x1000', length: 8, detail: 'x' }] };
  const host = (status: HostRun['status'], r: ResultJson): HostRun => ({
    host: { name: 'h', host: 'h', port: 22, user: 'root', key: '', knownHost: '', tags: [], pt: 'model', connectTimeoutMs: 1000, index: 0 },
    out: 'o', status, timed: [{ result: status === 'complete' ? r : errorResult(base, 'not run: x'), ms: 0 }], ...(status === 'complete' ? {} : { reason: 'x' }),
  });
  const of = (...hosts: HostRun[]): HostsOutcome => ({ hosts });

  test.for([
    { what: 'every host passed', o: of(host('complete', pass), host('complete', pass)), want: 0 },
    { what: 'a verdict failed on a host that ran to its end', o: of(host('complete', pass), host('complete', fail)), want: 1 },
    { what: 'a run was corrupt on a host that ran to its end', o: of(host('complete', pass), host('complete', corrupt)), want: 1 },
    { what: 'a host died (incomplete), another failed a verdict', o: of(host('incomplete', pass), host('complete', fail)), want: 4 },
    { what: 'a host unavailable, another passed', o: of(host('unavailable', pass), host('complete', pass)), want: 4 },
    { what: 'every host unavailable', o: of(host('unavailable', pass), host('unavailable', pass)), want: 3 },
    { what: 'every host ran, a top-level file could not be written', o: { ...of(host('complete', pass)), writeError: 'ENOSPC' }, want: 4 },
  ])('$what: exit $want', ({ o, want }) => {
    expect(exitOfHosts(o, undefined)).toBe(want);
  });

  test('a signal decides over everything: 128 + its number', () => {
    expect(exitOfHosts(of(host('unavailable', pass)), 'SIGINT')).toBe(130);
  });
});
