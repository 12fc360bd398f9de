// The host's WRMSR allowlist (harness/link/msr-allowlist.ts), enforced by every helper target —
// the qemu guest's and the lab machine's — before anything is sent: `ptlab run`, `seq` and
// `replay` all reach a real CPU through one, and only `allowMsr` (`ptlab seq --allow-msr`) lifts it.
// The helper's end is a fake (the transport edge); the target and its channel are the real ones.
import { describe, expect, test } from 'vitest';
import { HelperChannel } from '../../harness/link/helper-chan.js';
import { HelperTarget, type HelperTargetOptions } from '../../harness/link/helper-target.js';
import { MsrNotAllowedError, WRMSR_ALLOWLIST } from '../../harness/link/msr-allowlist.js';
import { fakeHelper } from './fake-helper.js';

const IA32_MISC_ENABLE = 0x1a0;
const IA32_RTIT_CTL = 0x570;

class LinkTarget extends HelperTarget {
  readonly description = 'fake:lab1';
  constructor(chan: HelperChannel, o?: HelperTargetOptions) { super(chan, o); }
  async [Symbol.asyncDispose](): Promise<void> { await this.disposeSafely(() => this.helper.close()); }
}

/** A helper that answers every MSR request, and logs the verbs it got. */
async function lab(o?: HelperTargetOptions) {
  const log: string[] = [];
  const h = await fakeHelper((verb, args) => {
    if (verb !== 'ping') log.push([verb, ...args].join(' '));
    if (verb === 'msrs') return `ok ${args.slice(1).map(() => '0x0').join(' ')}`;
    return verb === 'ping' ? 'ok pong' : 'ok';
  });
  const chan = new HelperChannel(h.path);
  await chan.connect();
  return { h, t: new LinkTarget(chan, o), log };
}

describe('the host allowlist of a helper target', () => {
  test('holds the IA32_RTIT_* MSRs and the ToPA PMI\'s IA32_PERF_GLOBAL_STATUS, _RESET and _SET, nothing else', () => {
    expect([...WRMSR_ALLOWLIST].sort((a, b) => a - b).map((m) => m.toString(16)))
      .toEqual(['38e', '390', '391', '560', '561', '570', '571', '572', '580', '581', '582', '583', '584', '585', '586', '587']);
  });

  test('a WRMSR of IA32_MISC_ENABLE throws MsrNotAllowedError and nothing reaches the helper', async () => {
    const { h, t, log } = await lab();
    await using _h = h;
    await using _t = t;
    const e = await t.wrmsr(0, IA32_MISC_ENABLE, 0n).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(MsrNotAllowedError);
    expect(e).toMatchObject({ code: 'bad_config', msr: IA32_MISC_ENABLE });
    expect((e as Error).message).toMatch(/--allow-msr/);
    expect(log).toEqual([]);
  });

  test('a batch with one write outside the list is refused whole: not even its allowed ops are sent', async () => {
    const { h, t, log } = await lab();
    await using _h = h;
    await using _t = t;
    await expect(t.msrBatch(0, [
      { op: 'wrmsr', msr: IA32_RTIT_CTL, value: 0n },
      { op: 'wrmsr', msr: IA32_MISC_ENABLE, value: 0n },
    ])).rejects.toBeInstanceOf(MsrNotAllowedError);
    expect(log).toEqual([]);
  });

  test('PT MSRs pass, and reads of any MSR are not the list\'s business', async () => {
    const { h, t, log } = await lab();
    await using _h = h;
    await using _t = t;
    await t.wrmsr(0, IA32_RTIT_CTL, 0x2000n);
    await t.msrBatch(0, [{ op: 'rdmsr', msr: IA32_MISC_ENABLE }, { op: 'wrmsr', msr: 0x561, value: 0x7fn }]);
    expect(log).toEqual(['wrmsr 0 0x570 0x2000', 'msrs 0 r0x1a0 w0x561=0x7f']);
  });

  test('allowMsr (ptlab seq --allow-msr) sends the write on', async () => {
    const { h, t, log } = await lab({ allowMsr: true });
    await using _h = h;
    await using _t = t;
    await t.wrmsr(0, IA32_MISC_ENABLE, 1n);
    expect(log).toEqual(['wrmsr 0 0x1a0 0x1']);
  });
});
