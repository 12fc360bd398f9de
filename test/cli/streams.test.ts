// The CLI as a citizen of pipes: spawned from dist/ as a shell user runs it. A reader
// that goes away ends the command quietly, a reader that does not read stops the writer with
// bounded memory, standard input, /dev/stdin and FIFOs are inputs, and the small conventions
// (--version, help COMMAND, COMMAND --help) hold.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { PSB } from '../decode/helpers.js';
import { psbOn, tnt, trace } from '../flow/helpers.js';
import { tmpRoot } from '../scenarios/tmp.js';

const CLI = join(process.cwd(), 'dist', 'harness', 'cli', 'ptlab.js');
const built = existsSync(CLI);
const root = await tmpRoot('ptlab-streams-');

/** PSB then `n` TNT-8 packets: n + 1 packet records, a JSON line each. */
function tntStream(n: number): string {
  const bytes = new Uint8Array(PSB.length + n).fill(0x06);
  bytes.set(PSB, 0);
  const p = join(root, `tnt-${n}.pt`);
  if (!existsSync(p)) writeFileSync(p, bytes);
  return p;
}

/** `script` under bash with pipefail: the exit status is the first failure in the pipeline. */
const sh = (script: string) => execa('bash', ['-o', 'pipefail', '-c', script], { reject: false, timeout: 60_000, env: { CLI } });

/** The peak resident set of `pid` in kB (VmHWM). */
function peakRssKb(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]);
}

describe.skipIf(!built)('ptlab and pipes (run `npm run build` first)', () => {
  test('dump | head -1: the closed pipe ends the command quietly, exit 0, nothing on stderr', async () => {
    const r = await sh(`node "$CLI" dump ${tntStream(1 << 20)} --json | head -1`);
    expect([r.exitCode, r.stdout, r.stderr]).toEqual([0, '{"off":0,"size":16,"type":"psb"}', '']);
  });

  test('flow | head -3 and text dump | head -2 end quietly too', async () => {
    const spin = join(root, 'spin.bin');
    writeFileSync(spin, Uint8Array.from([0xeb, 0xfe])); // jmp $
    const t = join(root, 'spin.pt');
    writeFileSync(t, trace(psbOn(0x1000n), tnt('T')));
    const flow = await sh(`node "$CLI" flow ${t} --image ${spin}@0x1000 --json | head -3`);
    const text = await sh(`node "$CLI" dump ${tntStream(1 << 20)} | head -2`);
    expect([flow.exitCode, flow.stdout.split('\n').length, flow.stderr]).toEqual([0, 3, '']);
    expect([text.exitCode, text.stdout.split('\n').length, text.stderr]).toEqual([0, 2, '']);
  });

  test('a reader that does not read blocks the writer: memory stays bounded, and the output is whole once read', async () => {
    // 4 Mi TNT packets print about 200 MB of JSON Lines; without backpressure they pile up in memory.
    const file = tntStream(4 << 20);
    const child = spawn('node', [CLI, 'dump', file, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((r) => child.on('close', r));
    await new Promise((r) => setTimeout(r, 2000));
    const stalled = child.exitCode === null;
    const peakKb = peakRssKb(child.pid!);
    let lines = 0, tail = '';
    for await (const chunk of child.stdout) {
      const s = tail + String(chunk);
      const parts = s.split('\n');
      tail = parts.pop()!;
      lines += parts.length;
    }
    const done = { exitCode: await exited };
    expect([stalled, peakKb < 150_000, done.exitCode, lines, tail]).toEqual([true, true, 0, (4 << 20) + 1, '']);
  });

  test('standard input (-), /dev/stdin and a FIFO are inputs: the whole stream is decoded, whatever its size on disk says', async () => {
    const file = tntStream(300_000);
    const dash = await sh(`cat ${file} | node "$CLI" dump - --stats`);
    const devStdin = await sh(`cat ${file} | node "$CLI" dump /dev/stdin --stats`);
    const fifo = join(root, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const viaFifo = await sh(`(cat ${file} > ${fifo} &) ; node "$CLI" dump ${fifo} --stats`);
    for (const r of [dash, devStdin, viaFifo]) {
      expect([r.exitCode, /^packets\s+300001$/m.test(r.stdout), /^bytes\s+300016$/m.test(r.stdout)]).toEqual([0, true, true]);
    }
  });

  test('--version prints package.json\'s version; help COMMAND and COMMAND --help exit 0; no command is a usage error', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const version = await execa('node', [CLI, '--version'], { reject: false });
    const helpRun = await execa('node', [CLI, 'help', 'run'], { reject: false });
    const runHelp = await execa('node', [CLI, 'run', '--help'], { reject: false });
    const listHelp = await execa('node', [CLI, 'list', '-h'], { reject: false });
    const doctorHelp = await execa('node', [CLI, 'doctor', '--help'], { reject: false });
    const none = await execa('node', [CLI], { reject: false });
    expect([version.exitCode, version.stdout]).toEqual([0, `ptlab ${pkg.version}`]);
    expect([helpRun.exitCode, helpRun.stdout.startsWith('usage: ptlab run'), helpRun.stdout]).toEqual([0, true, runHelp.stdout]);
    expect([runHelp.exitCode, listHelp.exitCode, listHelp.stdout, doctorHelp.exitCode, doctorHelp.stdout.startsWith('usage: ptlab doctor')])
      .toEqual([0, 0, 'usage: ptlab list [--knobs] [--json]\n  the scenarios; --knobs: the model knobs and driver faults, what each breaks and the scenarios that catch it', 0, true]);
    expect([none.exitCode, none.stdout, none.stderr.startsWith('usage:')]).toEqual([2, '', true]);
  });

  test('bin/ptlab.js (what npx runs, built by `prepare` on npm ci) answers --version', async () => {
    const r = await execa('node', ['bin/ptlab.js', '--version'], { reject: false });
    expect([r.exitCode, r.stdout.startsWith('ptlab ')]).toEqual([0, true]);
  });
});
