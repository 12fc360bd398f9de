// A run on a real target arms its CPU's ToPA PMIs once, unmasks LVTPC at every PMI, and disarms
// the CPU when the run ends (HelperPtSuite release) and at the target's dispose: the module's
// NMI handler claims bit 55 only while ptlab traces, so perf's intel_pt and a KVM guest get their
// PMIs back between runs. The helper's end is a fake logging what it is asked (the transport edge).
import { describe, expect, test } from 'vitest';
import { HelperChannel } from '../../harness/link/helper-chan.js';
import { HelperTarget } from '../../harness/link/helper-target.js';
import { HelperPtSuite } from '../../harness/runner/helper-suite.js';
import { getProfile } from '../../harness/sim/profiles.js';
import { fakeHelper } from '../link/fake-helper.js';

class LinkTarget extends HelperTarget {
  readonly description = 'fake:lab1';
  readonly cpus = 4;
  constructor(chan: HelperChannel) { super(chan); }
  async [Symbol.asyncDispose](): Promise<void> { await this.disposeSafely(() => this.helper.close()); }
}

async function lab() {
  const log: string[] = [];
  const h = await fakeHelper((verb, args) => {
    if (verb === 'ping') return 'ok pong';
    log.push([verb, ...args].join(' '));
    if (verb === 'msrs') return `ok ${args.slice(1).map(() => '0x0').join(' ')}`;
    if (verb === 'alloc') return 'ok 1 0x100000';
    return 'ok';
  });
  const chan = new HelperChannel(h.path);
  await chan.connect();
  return { h, t: new LinkTarget(chan), log };
}

const pmiVerbs = (log: readonly string[]): string[] => log.filter((l) => /^(arm|disarm|unmask|events) /.test(l));

describe('the ToPA PMI of a real-PT run', () => {
  test('is armed once per run (with the freeze), unmasked at every PMI, and disarmed when the run ends', async () => {
    const { h, t, log } = await lab();
    await using _h = h;
    await using suite = new HelperPtSuite('ssh', t, getProfile('skylake'), { cpu: 2 });
    for (let run = 0; run < 2; run++) {
      const r = await suite.prepare();
      for (let pmi = 0; pmi < 3; pmi++) await r.target.pmiEnable(0); // the run's CPU 0 is the machine's CPU 2
      await r.release();
    }
    const once = ['arm 2 0x4', 'events on', 'unmask 2', 'unmask 2', 'unmask 2', 'disarm 2'];
    expect(pmiVerbs(log)).toEqual([...once, ...once.filter((v) => v !== 'events on')]);
  });

  test('a CPU still armed when the target goes is disarmed by its dispose, before the buffers are freed', async () => {
    const { h, t, log } = await lab();
    await using _h = h;
    await t.phys.alloc(4096, 4096);
    await t.pmiEnable(1);
    await t[Symbol.asyncDispose]();
    expect(log.slice(log.indexOf('unmask 1') + 1)).toEqual(['disarm 1', 'free 1']);
  });
});
