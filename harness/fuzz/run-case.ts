// One CLI fuzz case: a command with one file slot replaced by an input kind, run as a user runs
// it (its own process, from dist/), and judged on what a user must never see: exit 70 or a stack
// trace, a hang past HANG_MS, a peak RSS past MAX_RSS_BYTES, a file outside --out created, changed
// or removed, or a file left in TMPDIR. Peak RSS is GNU time's %M (getrusage of the finished child).
import { spawn } from 'node:child_process';
import { cp, lstat, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { constants } from 'node:os';
import { join } from 'node:path';
import type { Rng } from '../sim/workload/prng.js';
import type { FixtureFacts, FuzzCommand } from './commands.js';
import { makeInput, type InputKind } from './inputs.js';

/** A case that runs longer than this hangs. */
export const HANG_MS = 30_000;
/** A case's peak resident set may not pass this. */
export const MAX_RSS_BYTES = 1 << 30;
/** ptlab's exit statuses (docs/exit-codes.md) other than 70, its own failure. */
const USER_STATUSES = new Set([0, 1, 2, 3, 4]);

/** One case: which command, which slot is replaced, by what. */
export interface FuzzCase {
  readonly command: FuzzCommand;
  readonly slot: string;
  readonly kind: InputKind;
  readonly seed: number;
}

/** What a case did and what was wrong with it (nothing, when `problems` is empty). */
export interface CaseOutcome {
  readonly command: string;
  readonly slot: string;
  readonly kind: InputKind;
  readonly seed: number;
  readonly exitCode: number | null;
  readonly ms: number;
  readonly peakRssBytes: number;
  readonly problems: readonly string[];
  /** The last line of stderr: what the user was told last. */
  readonly said: string;
}

/** Runs `c` in a new directory under `work`; `fixtures` is read, never given to ptlab. `hangMs` is for tests of the fuzz itself. */
export async function runCase(c: FuzzCase, cli: string, fixtures: string, facts: FixtureFacts, work: string, rng: Rng, hangMs = HANG_MS): Promise<CaseOutcome> {
  const dir = join(work, `case-${c.seed}`);
  const tmp = join(dir, 'tmp');
  await mkdir(tmp, { recursive: true });
  const at: Record<string, string> = {};
  let fifo: { path: string; bytes: Uint8Array } | undefined;
  for (const [i, slot] of c.command.slots.entries()) {
    const kind: InputKind = slot.name === c.slot ? c.kind : 'valid';
    const fixture = join(fixtures, slot.fixture);
    if (slot.within !== undefined) {
      const copy = join(dir, `slot${i}`);
      await cp(fixture, copy, { recursive: true });
      const file = join(copy, slot.within);
      const valid = await readFile(file);
      await rm(file);
      const made = await makeInput(kind, file, valid, rng, true);
      if (made.fifoBytes) fifo = { path: made.path, bytes: made.fifoBytes };
      at[slot.name] = copy;
    } else {
      const made = await makeInput(kind, join(dir, `slot${i}`), await readFile(fixture), rng, false);
      if (made.fifoBytes) fifo = { path: made.path, bytes: made.fifoBytes };
      at[slot.name] = made.path;
    }
  }
  const out = join(dir, 'out');
  const argv = c.command.argv(at, out, facts);
  const watched = [dir, fixtures];
  const before = await snapshot(watched, [out, `${out}.html`, tmp, join(dir, 'rss')]);
  const t0 = performance.now();
  const run = await spawnCase(cli, argv, dir, tmp, fifo, hangMs);
  const ms = Math.round(performance.now() - t0);
  const after = await snapshot(watched, [out, `${out}.html`, tmp, join(dir, 'rss')]);
  const problems: string[] = [];
  if (run.hung) problems.push(`hung: still running after ${hangMs} ms (killed)`);
  else if (run.signal !== null) problems.push(`killed by ${run.signal}`);
  else if (!USER_STATUSES.has(run.exitCode ?? -1)) problems.push(`exit ${run.exitCode}`);
  if (/^\s+at .+:\d+:\d+\)?$/m.test(run.stderr) || /internal error/.test(run.stderr)) problems.push('a stack trace or an internal error on stderr');
  if (run.peakRssBytes > MAX_RSS_BYTES) problems.push(`peak RSS ${Math.round(run.peakRssBytes / 2 ** 20)} MiB`);
  const changed = changes(before, after);
  if (changed.length) problems.push(`outside --out: ${changed.slice(0, 5).join(', ')}`);
  const left = await readdir(tmp).catch(() => [] as string[]);
  if (left.length) problems.push(`left in TMPDIR: ${left.slice(0, 5).join(', ')}`);
  const devices = await devicesChanged();
  if (devices.length) problems.push(`devices replaced: ${devices.join(', ')}`);
  await rm(dir, { recursive: true, force: true });
  return {
    command: c.command.name, slot: c.slot, kind: c.kind, seed: c.seed, exitCode: run.exitCode, ms, peakRssBytes: run.peakRssBytes, problems,
    said: run.stderr.split('\n').filter((l) => l.trim() !== '').at(-1) ?? '',
  };
}

interface Spawned {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly hung: boolean;
  readonly stderr: string;
  readonly peakRssBytes: number;
}

/** Runs ptlab under GNU time in a process group of its own, feeding `fifo` the way `<(…)` would. */
async function spawnCase(cli: string, argv: readonly string[], cwd: string, tmp: string, fifo: { path: string; bytes: Uint8Array } | undefined, hangMs: number): Promise<Spawned> {
  const rss = join(cwd, 'rss');
  const child = spawn('/usr/bin/time', ['-f', '%M', '-o', rss, process.execPath, cli, ...argv], {
    cwd, env: { ...process.env, TMPDIR: tmp }, stdio: ['ignore', 'ignore', 'pipe'], detached: true,
  });
  // The writer of a FIFO blocks in open() until ptlab opens it for reading; it goes with the case.
  const writer = fifo && spawn('sh', ['-c', 'exec cat > "$0"', fifo.path], { stdio: ['pipe', 'ignore', 'ignore'] });
  writer?.stdin?.on('error', () => undefined);
  writer?.stdin?.end(fifo!.bytes);
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => { if (stderr.length < 1 << 16) stderr += d; });
  let hung = false;
  const timer = setTimeout(() => { hung = true; try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, hangMs);
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (code, sig) => resolve([code, sig])));
  clearTimeout(timer);
  writer?.kill('SIGKILL');
  const timeText = await readFile(rss, 'utf8').catch(() => '');
  // GNU time writes "Command exited with non-zero status N" or "Command terminated by signal N" before %M.
  const kb = Number(timeText.trim().split('\n').at(-1));
  const bySignal = /terminated by signal (\d+)/.exec(timeText);
  return {
    exitCode: bySignal ? null : exitCode, signal: bySignal ? signalName(Number(bySignal[1])) : signal, hung, stderr,
    peakRssBytes: Number.isFinite(kb) ? kb * 1024 : 0,
  };
}

function signalName(n: number): NodeJS.Signals {
  const name = Object.entries(constants.signals).find(([, v]) => v === n)?.[0];
  return (name ?? `SIG${n}`) as NodeJS.Signals;
}

/** Every path under `roots` (not under `skip`) with its type, size, mtime and inode. */
async function snapshot(roots: readonly string[], skip: readonly string[]): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  const walk = async (p: string): Promise<void> => {
    if (skip.includes(p)) return;
    const st = await lstat(p).catch(() => undefined);
    if (st === undefined) return;
    // A FIFO's mtime moves when its writer writes: only its being there counts.
    seen.set(p, st.isFIFO() ? 'fifo' : st.isDirectory() ? 'dir' : `${st.mode}:${st.size}:${st.mtimeMs}:${st.ino}`);
    if (st.isDirectory()) for (const n of await readdir(p)) await walk(join(p, n));
  };
  for (const r of roots) await walk(r);
  return seen;
}

/** Paths created, removed or changed between two snapshots. */
function changes(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [p, v] of before) if (after.get(p) !== v) out.push(after.has(p) ? `${p} changed` : `${p} removed`);
  for (const p of after.keys()) if (!before.has(p)) out.push(`${p} created`);
  return out;
}

/** The devices a case may name that must stay character devices (report --out /dev/full once replaced one). */
async function devicesChanged(): Promise<string[]> {
  const out: string[] = [];
  for (const d of ['/dev/zero', '/dev/urandom', '/dev/null', '/dev/full']) {
    const st = await lstat(d).catch(() => undefined);
    if (st !== undefined && !st.isCharacterDevice()) out.push(d);
  }
  return out;
}
