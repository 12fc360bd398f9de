// A teardown against a machine that stopped answering (a stopped QEMU, a dead link) takes one
// deadline for all its requests: the first one waits it out, the ones after it fail at once
// without being sent. Before, each buffer's free took a fresh timeout of its own, so a hung guest
// cost that timeout once per buffer (the hung-guest case of test/runner/target-death.test.ts).
import { describe, expect, test } from 'vitest';
import { HelperChannel } from '../../harness/link/helper-chan.js';
import { HelperTarget } from '../../harness/link/helper-target.js';
import { freeLeftovers } from '../../harness/runner/helper-suite.js';
import { fakeHelper } from './fake-helper.js';

class LinkTarget extends HelperTarget {
  readonly description = 'fake:hung';
  constructor(chan: HelperChannel) { super(chan); }
  release(ms: number): Promise<string | undefined> { return this.releaseBuffers(ms); }
  async [Symbol.asyncDispose](): Promise<void> { await this.helper.close(); }
}

/** A helper that allocates, and answers nothing once `hang()` was called; it counts what it got after. */
async function hangingLab() {
  let hung = false, next = 1;
  const after: string[] = [];
  const h = await fakeHelper((verb, args) => {
    if (hung) { after.push([verb, ...args].join(' ')); return ''; }
    if (verb === 'ping') return 'ok pong';
    if (verb === 'alloc') return `ok ${next} 0x${(0x100000 * next++).toString(16)}`;
    return 'ok';
  });
  const chan = new HelperChannel(h.path);
  await chan.connect();
  const t = new LinkTarget(chan);
  for (let i = 0; i < 6; i++) await t.phys.alloc(4096, 4096);
  return { h, t, after, hang: () => { hung = true; } };
}

describe('teardowns against a hung helper', () => {
  test('a dispose sends one request, waits one deadline, and leaks the rest without asking', async () => {
    const { h, t, after, hang } = await hangingLab();
    await using _h = h;
    await using _t = t;
    hang();
    const t0 = Date.now();
    const left = await t.release(400);
    const ms = Date.now() - t0;
    expect({ requests: after.length, first: after[0], within: ms < 1500, left: /left 6 buffers/.test(left ?? '') })
      .toEqual({ requests: 1, first: 'free 1', within: true, left: true });
  });

  test('freeLeftovers frees with one deadline: one request, then the others fail unsent', async () => {
    const { h, t, after, hang } = await hangingLab();
    await using _h = h;
    await using _t = t;
    hang();
    const t0 = Date.now();
    await freeLeftovers(t, new Set(), 400);
    const ms = Date.now() - t0;
    expect({ requests: after.length, within: ms < 1500 }).toEqual({ requests: 1, within: true });
  });
});
