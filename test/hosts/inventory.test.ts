// Inventories of lab machines (docs/hosts.md): what a right entry becomes (defaults, paths relative
// to the file), and every wrong one refused at file:line:col with what is wrong, before anything
// runs — the schema's refusals (docs/schemas/hosts.schema.json), the rules beyond it, and the key
// files of the hosts a run selects.
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { InventoryError } from '../../harness/hosts/errors.js';
import { checkHostFiles } from '../../harness/hosts/host-files.js';
import { parseInventory, reachOf } from '../../harness/hosts/inventory.js';
import { tmpRoot } from '../scenarios/tmp.js';

const root = await tmpRoot('ptlab-inventory-');

/** The InventoryError `text` is refused with: problem, "line:col: detail", suggestion. */
function refusal(text: string): { problem: string; at: string; suggestion?: string } {
  try {
    parseInventory('lab.yaml', text);
  } catch (e) {
    if (!(e instanceof InventoryError)) throw e;
    expect(e.message.startsWith(`lab.yaml:${e.pos.line}:${e.pos.col}: `)).toBe(true);
    return { problem: e.problem, at: `${e.pos.line}:${e.pos.col}: ${e.detail}`, ...(e.suggestion ? { suggestion: e.suggestion } : {}) };
  }
  throw new Error('accepted');
}

const ONE = 'hosts:\n  - name: lab1\n    host: 10.0.0.5\n';

describe('a right inventory', () => {
  test('defaults: port 22, user root, the own PT, no tags, 30 s to connect, the keys of ~/.ssh', () => {
    const [h] = parseInventory('lab.yaml', ONE).hosts;
    expect(h).toEqual({
      name: 'lab1', host: '10.0.0.5', port: 22, user: 'root', pt: 'hardware', tags: [], connectTimeoutMs: 30_000, index: 0,
      key: join(homedir(), '.ssh', 'id_ed25519'), knownHost: join(homedir(), '.ssh', 'known_hosts'),
    });
  });

  test('cpus: the CPUs the machine\'s lanes trace on, one each, go to its reach', () => {
    const [h] = parseInventory('lab.yaml', `${ONE}    cpus: [2, 3]\n`).hosts;
    expect([h!.cpus, reachOf(h!).cpus]).toEqual([[2, 3], [2, 3]]);
    expect(refusal(`${ONE}    cpus: [2, 2]\n`).problem).toBe('schema');
  });

  test('key and known-host are relative to the inventory file; ~/ is the home directory; absolute stays', () => {
    const inv = parseInventory('/etc/ptlab/lab.yaml', `${ONE}    key: keys/lab1\n    known-host: ~/.ssh/lab_hosts\n  - name: lab2\n    host: h2\n    key: /k/two\n`);
    expect(inv.hosts.map((h) => [h.key, h.knownHost])).toEqual([
      ['/etc/ptlab/keys/lab1', join(homedir(), '.ssh', 'lab_hosts')], ['/k/two', join(homedir(), '.ssh', 'known_hosts')],
    ]);
  });

  test('every key given, and a YAML merge key for settings hosts share', () => {
    const inv = parseInventory('lab.yaml', [
      'hosts:',
      '  - &lab {name: a, host: h, user: lab, port: 2222, pt: model, connect-timeout: 5, tags: [skylake, rack2]}',
      '  - {<<: *lab, name: b, host: h2}',
    ].join('\n'));
    expect(inv.hosts[1]).toMatchObject({ name: 'b', host: 'h2', user: 'lab', port: 2222, pt: 'model', connectTimeoutMs: 5000, tags: ['skylake', 'rack2'] });
    expect(reachOf(inv.hosts[1]!)).toMatchObject({ kind: 'ssh', host: 'h2', port: 2222, user: 'lab', pt: 'model', label: 'b', connectTimeoutMs: 5000 });
  });
});

describe('a wrong entry is refused at file:line:col', () => {
  test.for([
    { what: 'a misspelled key, with the nearest one', text: `${ONE}    prot: 22\n`, want: { problem: 'schema', at: "4:5: unknown key 'prot' (keys here: name, host, port, user, key, known-host, tags, pt, connect-timeout, cpus)", suggestion: 'port' } },
    { what: 'a misspelled top-level key', text: 'host:\n  - name: a\n    host: h\n', want: { problem: 'schema', at: "1:1: unknown key 'host' (keys here: hosts)", suggestion: 'hosts' } },
    { what: 'a port that is a string', text: `${ONE}    port: "22"\n`, want: { problem: 'schema', at: '4:11: hosts[0].port must be integer' } },
    { what: 'a port out of range', text: `${ONE}    port: 70000\n`, want: { problem: 'schema', at: '4:11: hosts[0].port must be <= 65535' } },
    { what: 'a missing host', text: `${ONE}  - name: lab2\n    user: root\n`, want: { problem: 'schema', at: "4:5: hosts[1] needs the key 'host'" } },
    { what: 'a name that is no directory name', text: 'hosts:\n  - name: ../x\n    host: h\n', want: { problem: 'schema', at: '2:11: hosts[0].name must start with a letter or digit and hold only letters, digits, ".", "_" and "-" (it names a directory)' } },
    { what: 'an unknown pt', text: `${ONE}    pt: modle\n`, want: { problem: 'schema', at: '4:9: hosts[0].pt must be one of "hardware", "model"' } },
    { what: 'a tag with a comma', text: `${ONE}    tags: [a, "b,c"]\n`, want: { problem: 'schema', at: '4:15: hosts[0].tags[1] must be one word without commas or spaces' } },
    { what: 'a tag listed twice', text: `${ONE}    tags: [a, a]\n`, want: { problem: 'schema', at: '4:11: hosts[0].tags lists a tag twice' } },
    { what: 'no host at all', text: 'hosts: []\n', want: { problem: 'schema', at: '1:8: hosts must NOT have fewer than 1 items' } },
    { what: 'a list where a mapping belongs', text: '- name: a\n', want: { problem: 'schema', at: '1:1: the file must be object' } },
    { what: 'two hosts with one name', text: `${ONE}  - name: lab1\n    host: h2\n`, want: { problem: 'duplicate-name', at: "4:11: host name 'lab1' is already used at line 2 (each host has its own directory OUT/<name>/)" } },
    { what: 'a name of a suite file', text: 'hosts:\n  - name: report.html\n    host: h\n', want: { problem: 'reserved-name', at: "2:11: host name 'report.html' is the name of a file at the root of --out (junit.xml, results.jsonl, report.html)" } },
    { what: 'text that is not YAML', text: 'hosts:\n  - name: [a\n', want: { problem: 'syntax', at: expect.stringMatching(/^\d+:\d+: not valid YAML: /) as unknown as string } },
    { what: 'an alias inside its own anchor', text: 'hosts: &h\n  - name: a\n    host: h\n    tags: *h\n', want: { problem: 'syntax', at: '4:11: the alias *h lies inside the node its anchor names: a value cannot contain itself' } },
  ])('$what', ({ text, want }) => {
    expect(refusal(text)).toEqual(want);
  });
});

describe('the key files of the selected hosts', () => {
  // A real private key (RSA in PEM), for the checks ssh(1) makes; written private (0600) below.
  const KEY = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'pkcs1', format: 'pem' } }).privateKey;
  const PUB = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ7bDh5Yw0ZQ4o3e1ov5kY1rC6HgK9oAp0Yt2rSPs0qk lab\n';

  /** The InventoryError an inventory at `root/<dir>` naming these files gives, or 'ok'. */
  async function check(dir: string, files: Record<string, string>, entry: string): Promise<string> {
    await mkdir(join(root, dir, 'keys'), { recursive: true });
    for (const [f, t] of Object.entries(files)) await writeFile(join(root, dir, f), t, { mode: 0o600 });
    const inv = parseInventory(join(root, dir, 'lab.yaml'), `hosts:\n  - name: lab1\n    host: 10.0.0.5\n    port: 2222\n${entry}`);
    return checkHostFiles(inv, inv.hosts).then(() => 'ok', (e: unknown) => {
      if (!(e instanceof InventoryError)) throw e;
      return `${e.problem} ${e.pos.line}:${e.pos.col}: ${e.detail.replace(join(root, dir), '<dir>')}`;
    });
  }

  test('a private key and a public key file of the host: accepted', async () => {
    expect(await check('ok', { 'keys/id': KEY, 'keys/lab.pub': PUB }, '    key: keys/id\n    known-host: keys/lab.pub\n')).toBe('ok');
  });

  test('a known_hosts file naming [host]:port: accepted', async () => {
    expect(await check('kh', { 'keys/id': KEY, known: `[10.0.0.5]:2222 ${PUB}` }, '    key: keys/id\n    known-host: known\n')).toBe('ok');
  });

  test('a key file that is not there: refused at its path', async () => {
    expect(await check('nokey', {}, '    key: keys/missing\n    known-host: keys/lab.pub\n'))
      .toMatch(/^key 5:10: host lab1: cannot read a private key \(key\) <dir>\/keys\/missing: ENOENT/);
  });

  test('a public key given as the client key: refused', async () => {
    expect(await check('pubkey', { 'keys/id.pub': PUB, 'keys/lab.pub': PUB }, '    key: keys/id.pub\n    known-host: keys/lab.pub\n'))
      .toMatch(/^key 5:10: host lab1: key <dir>\/keys\/id\.pub is a public key; give the private key \(e\.g\. .*\/keys\/id\)$/);
  });

  test('a private key others may read: refused at its path, as ssh(1) refuses it', async () => {
    await mkdir(join(root, 'open', 'keys'), { recursive: true });
    await writeFile(join(root, 'open', 'keys', 'id'), KEY, { mode: 0o644 });
    expect(await check('open', { 'keys/lab.pub': PUB }, '    key: keys/id\n    known-host: keys/lab.pub\n'))
      .toMatch(/^key 5:10: host lab1: key <dir>\/keys\/id is readable by others \(mode 0644\)/);
  });

  test('a known_hosts file without the host\'s port: refused at known-host', async () => {
    expect(await check('wrongport', { 'keys/id': KEY, known: `10.0.0.5 ${PUB}` }, '    key: keys/id\n    known-host: known\n'))
      .toBe('known-host 6:17: host lab1: no host key for [10.0.0.5]:2222 in <dir>/known');
  });
});
