// The guest-agent client against a fake agent: no greeting, no ids, 0xFF-delimited sync.
import type { Socket } from 'node:net';
import { describe, expect, test } from 'vitest';
import { QmpError } from '../../harness/qemu/errors.js';
import { TargetError } from '../../harness/link/errors.js';
import { QgaClient } from '../../harness/qemu/qga.js';
import { FakeEndpoint, reply, type Json } from './fakes.js';

/** A fake agent. `echo {n}` returns n; while `paused`, requests wait (like a stopped VM). */
class FakeAgent {
  paused = false;
  outstanding = 0;
  maxOutstanding = 0;
  delayMs = 0;
  execPolls = 0;
  private held: [Json, Socket][] = [];

  handle(msg: Json, s: Socket): void {
    if (this.paused) {
      this.held.push([msg, s]);
      return;
    }
    this.outstanding++;
    this.maxOutstanding = Math.max(this.maxOutstanding, this.outstanding);
    const answer = (): void => {
      this.outstanding--;
      this.answer(msg, s);
    };
    if (this.delayMs > 0) setTimeout(answer, this.delayMs);
    else answer();
  }

  resume(): void {
    this.paused = false;
    for (const [m, s] of this.held.splice(0)) this.handle(m, s);
  }

  private answer(msg: Json, s: Socket): void {
    const args = (msg['arguments'] ?? {}) as Json;
    switch (msg['execute']) {
      case 'guest-sync-delimited':
        s.write(Buffer.from([0xff]));
        reply(s, { return: args['id'] });
        return;
      case 'echo':
        reply(s, { return: args['n'] });
        return;
      case 'guest-exec':
        reply(s, { return: { pid: 42 } });
        return;
      case 'guest-exec-status':
        this.execPolls++;
        reply(s, {
          return: this.execPolls < 2
            ? { exited: false }
            : { exited: true, exitcode: 3, 'out-data': Buffer.from('out\n').toString('base64'), 'err-data': Buffer.from('err\n').toString('base64') },
        });
        return;
      default:
        reply(s, { error: { class: 'CommandNotFound', desc: `The command ${String(msg['execute'])} has not been found` } });
    }
  }
}

async function agentWith(agent: FakeAgent, stale?: string): Promise<FakeEndpoint> {
  return FakeEndpoint.start((s) => { if (stale !== undefined) s.write(stale); }, (m, s) => agent.handle(m, s));
}

describe('QgaClient', () => {
  test('connect sends 0xFF and guest-sync-delimited, skipping what the agent sent before its 0xFF', async () => {
    const agent = new FakeAgent();
    await using srv = await agentWith(agent, '{"return": 7}\n{"return": {}}\n');
    await using qga = new QgaClient(srv.path);
    await qga.connect();
    expect(srv.commands()).toEqual(['guest-sync-delimited']);
    await expect(qga.request('echo', { n: 5 })).resolves.toBe(5);
  });

  test('a request to a paused agent times out, and the next request resynchronises past the late reply', async () => {
    const agent = new FakeAgent();
    await using srv = await agentWith(agent);
    await using qga = new QgaClient(srv.path);
    await qga.connect();
    agent.paused = true;
    const err = await qga.request('echo', { n: 1 }, { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TargetError);
    expect(err).toMatchObject({ phase: 'qga-command', failure: 'timeout' });
    agent.resume();
    await expect(qga.request('echo', { n: 2 })).resolves.toBe(2);
    expect(srv.commands().filter((c) => c === 'guest-sync-delimited')).toHaveLength(2);
  });

  test('concurrent requests reach the agent one at a time and get their own replies', async () => {
    const agent = new FakeAgent();
    agent.delayMs = 10;
    await using srv = await agentWith(agent);
    await using qga = new QgaClient(srv.path);
    await qga.connect();
    const got = await Promise.all([1, 2, 3].map((n) => qga.request('echo', { n })));
    expect(got).toEqual([1, 2, 3]);
    expect(agent.maxOutstanding).toBe(1);
  });

  test('an error reply becomes QmpError with the command sent', async () => {
    await using srv = await agentWith(new FakeAgent());
    await using qga = new QgaClient(srv.path);
    await qga.connect();
    const err = await qga.request('guest-nothing').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QmpError);
    expect(err).toMatchObject({ errorClass: 'CommandNotFound', sent: { execute: 'guest-nothing' } });
  });

  test('exec polls guest-exec-status until exit and decodes the base64 output', async () => {
    const agent = new FakeAgent();
    await using srv = await agentWith(agent);
    await using qga = new QgaClient(srv.path);
    await qga.connect();
    await expect(qga.exec('/bin/x', ['a'])).resolves.toEqual({ exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n', truncated: false });
    expect(agent.execPolls).toBe(2);
    expect(srv.received.find((m) => m['execute'] === 'guest-exec')).toMatchObject({ arguments: { path: '/bin/x', arg: ['a'], 'capture-output': true } });
  });

  test('after the socket drops, the next request reconnects and resynchronises', async () => {
    await using srv = await agentWith(new FakeAgent());
    await using qga = new QgaClient(srv.path);
    await qga.connect();
    srv.dropClients();
    await new Promise((r) => setTimeout(r, 20));
    await expect(qga.request('echo', { n: 9 })).resolves.toBe(9);
  });

  test('a request before connect is refused with StateError', async () => {
    const qga = new QgaClient('/nonexistent');
    await expect(qga.ping()).rejects.toMatchObject({ name: 'StateError', state: 'idle', required: ['running'] });
  });
});
