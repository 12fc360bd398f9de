// A helper target's dispose gives the module's buffers back safely (docs/design.md "The invariant"):
// it confirms TraceEn=0 — written and read back — on every CPU it may have left tracing before it
// frees anything; when a CPU will not confirm, it frees nothing and says what it left allocated. A
// CPU it never wrote TraceEn on (someone else's) is not touched. SshTarget.dispose is this code
// (HelperTarget.disposeSafely) with the SSH connection closed after; here the helper's end of the
// link is a fake with a PT unit per CPU, since no CPU traces under TCG.
import { describe, expect, test } from 'vitest';
import { TargetError } from '../../harness/link/errors.js';
import { HelperChannel } from '../../harness/link/helper-chan.js';
import { HelperTarget } from '../../harness/link/helper-target.js';
import { fakeHelper } from './fake-helper.js';

const CTL = 0x570;

/** A HelperTarget over `chan` whose dispose is SshTarget's, the SSH part left out. */
class LinkTarget extends HelperTarget {
  readonly description = 'fake:lab1';
  constructor(chan: HelperChannel) { super(chan); }
  async dispose(): Promise<void> { await this.disposeSafely(() => this.helper.close()); }
  async [Symbol.asyncDispose](): Promise<void> { await this.dispose(); }
}

/** A helper with a CTL per CPU (`stuck`: a CPU whose TraceEn does not clear), a buffer allocator, and a log of verbs. */
async function lab(o: { stuck?: boolean } = {}) {
  const ctl = new Map<number, bigint>(), log: string[] = [];
  let next = 1;
  const write = (cpu: number, v: bigint): void => { ctl.set(cpu, o.stuck && ((ctl.get(cpu) ?? 0n) & 1n) === 1n ? ctl.get(cpu)! | 1n : v); };
  const h = await fakeHelper((verb, args) => {
    log.push([verb, ...args].join(' '));
    switch (verb) {
      case 'ping': return 'ok pong';
      case 'alloc': return `ok ${next} 0x${(0x100000 * next++).toString(16)}`;
      case 'free': return 'ok';
      case 'wrmsr': write(Number(args[0]), BigInt(args[2]!)); return 'ok';
      case 'rdmsr': return `ok 0x${(ctl.get(Number(args[0])) ?? 0n).toString(16)}`;
      case 'msrs': {
        const cpu = Number(args[0]);
        return `ok ${args.slice(1).map((a) => {
          if (a.startsWith('w')) { const [, v] = a.slice(1).split('='); write(cpu, BigInt(v!)); return v; }
          return `0x${(ctl.get(cpu) ?? 0n).toString(16)}`;
        }).join(' ')}`;
      }
      default: return 'err inval unknown verb';
    }
  });
  const chan = new HelperChannel(h.path);
  await chan.connect();
  return { h, t: new LinkTarget(chan), ctl, log };
}

describe('a helper target\'s dispose', () => {
  test('on a CPU it left tracing: TraceEn=0 written and read back there, then the buffers freed', async () => {
    const { h, t, ctl, log } = await lab();
    await using _ = h;
    await t.phys.alloc(4096, 4096);
    await t.phys.alloc(8192, 8192);
    await t.wrmsr(2, CTL, 0x2109n);
    const from = log.length;
    await t.dispose();
    expect(log.slice(from)).toEqual([`msrs 2 w0x${CTL.toString(16)}=0x2108 r0x${CTL.toString(16)}`, 'free 1', 'free 2']);
    expect(ctl.get(2)).toBe(0x2108n);
  });

  test('when the CPU will not confirm TraceEn=0, nothing is freed and the dispose says what it left allocated', async () => {
    const { h, t, log } = await lab({ stuck: true });
    await using _ = h;
    await t.phys.alloc(4096, 4096);
    await t.msrBatch(0, [{ op: 'wrmsr', msr: CTL, value: 0x2109n }]);
    const e = await t.dispose().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TargetError);
    expect((e as TargetError).phase).toBe('shutdown');
    expect((e as Error).message).toMatch(/fake:lab1: left 1 buffer, 4096 bytes: module buffer 0x100000\+4096 allocated in the module: tracing could not be confirmed off \(CPU 0: IA32_RTIT_CTL still reads TraceEn=1/);
    expect(log.some((l) => l.startsWith('free'))).toBe(false);
  });

  test('a CPU someone else traces on (this target never wrote its CTL) is not touched', async () => {
    const { h, t, ctl, log } = await lab();
    await using _ = h;
    ctl.set(1, 0x2109n); // another agent's trace
    await t.phys.alloc(4096, 4096);
    const from = log.length;
    await t.dispose();
    expect([log.slice(from), ctl.get(1)]).toEqual([['free 1'], 0x2109n]);
  });

  test('a call on its way when the dispose starts is waited for, and its TraceEn=1 is cleared before the free', async () => {
    const { h, t, ctl, log } = await lab();
    await using _ = h;
    await t.phys.alloc(4096, 4096);
    const enabling = t.wrmsr(3, CTL, 0x2109n);
    await t.dispose();
    await enabling;
    const at = (p: string): number => log.findIndex((l) => l.startsWith(p));
    expect([at('wrmsr 3') < at('msrs 3'), at('msrs 3') < at('free 1'), ctl.get(3)]).toEqual([true, true, 0x2108n]);
  });
});
