// The QMP client against a fake QMP server.
import { describe, expect, test } from 'vitest';
import { PtError } from '../../driver/base/errors.js';
import { QmpError } from '../../harness/qemu/errors.js';
import { StateError, TargetError } from '../../harness/link/errors.js';
import { QmpClient } from '../../harness/qemu/qmp.js';
import { FakeEndpoint, GREETING, reply, type Json } from './fakes.js';
import type { Socket } from 'node:net';

/** A QMP server: greeting on connect, `qmp_capabilities` answered, other commands by `handle`. */
function qmpServer(handle: (msg: Json, s: Socket) => void = () => undefined): Promise<FakeEndpoint> {
  return FakeEndpoint.start((s) => reply(s, GREETING), (msg, s) => {
    if (msg['execute'] === 'qmp_capabilities') reply(s, { return: {}, id: msg['id'] });
    else handle(msg, s);
  });
}

describe('QmpClient', () => {
  test('connect reads the greeting and negotiates capabilities first', async () => {
    await using srv = await qmpServer();
    await using qmp = new QmpClient(srv.path);
    const greeting = await qmp.connect();
    expect(greeting.version.qemu.major).toBe(7);
    expect(srv.commands()).toEqual(['qmp_capabilities']);
    expect(qmp.state).toBe('running');
  });

  test('a command before connect throws StateError naming both states', async () => {
    const qmp = new QmpClient('/nonexistent');
    const err = await qmp.execute('query-status').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StateError);
    expect(err).toMatchObject({ code: 'bad_state', state: 'idle', required: ['running'] });
  });

  test('a command returns its return value', async () => {
    await using srv = await qmpServer((m, s) => reply(s, { return: { status: 'running' }, id: m['id'] }));
    await using qmp = new QmpClient(srv.path);
    await qmp.connect();
    await expect(qmp.execute('query-status')).resolves.toEqual({ status: 'running' });
  });

  test('an error reply becomes QmpError with the class, desc and command sent', async () => {
    await using srv = await qmpServer((m, s) => reply(s, { error: { class: 'GenericError', desc: 'nope' }, id: m['id'] }));
    await using qmp = new QmpClient(srv.path);
    await qmp.connect();
    const err = await qmp.execute('stop', { x: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QmpError);
    expect(err).toMatchObject({ errorClass: 'GenericError', desc: 'nope', sent: { execute: 'stop', arguments: { x: 1 } } });
  });

  test('a command without a reply times out, and its late reply is not taken for the next one', async () => {
    const held: Json[] = [];
    let sock: Socket | undefined;
    await using srv = await qmpServer((m, s) => {
      sock = s;
      if (m['execute'] === 'slow') held.push(m);
      else reply(s, { return: 'fast-answer', id: m['id'] });
    });
    await using qmp = new QmpClient(srv.path);
    await qmp.connect();
    const err = await qmp.execute('slow', undefined, { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'TargetError', phase: 'qmp-command', failure: 'timeout' });
    reply(sock!, { return: 'late-answer', id: held[0]!['id'] });
    await expect(qmp.execute('fast')).resolves.toBe('fast-answer');
  });

  test("the caller's abort rejects with PtError('aborted'), not a timeout", async () => {
    await using srv = await qmpServer();
    await using qmp = new QmpClient(srv.path);
    await qmp.connect();
    const ac = new AbortController();
    const p = qmp.execute('never', undefined, { signal: ac.signal });
    ac.abort('test');
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PtError);
    expect(err).toMatchObject({ code: 'aborted' });
  });

  test('each subscriber receives the events it asked for, in order', async () => {
    await using srv = await qmpServer((m, s) => {
      reply(s, { event: 'STOP', data: {}, timestamp: { seconds: 1, microseconds: 0 } });
      reply(s, { event: 'RESUME', data: {}, timestamp: { seconds: 2, microseconds: 0 } });
      reply(s, { return: {}, id: m['id'] });
    });
    await using qmp = new QmpClient(srv.path);
    await qmp.connect();
    using all = qmp.subscribe();
    using resumes = qmp.subscribe(['RESUME']);
    await qmp.execute('stop');
    expect((await all.take()).value?.event).toBe('STOP');
    expect((await all.take()).value).toMatchObject({ event: 'RESUME', timestamp: { seconds: 2 } });
    expect((await resumes.take()).value?.event).toBe('RESUME');
    expect(resumes.size).toBe(0);
  });

  test('the server closing fails the pending command with closed and ends subscriptions', async () => {
    await using srv = await qmpServer((_m, s) => s.destroy());
    await using qmp = new QmpClient(srv.path);
    await qmp.connect();
    using events = qmp.subscribe();
    const err = await qmp.execute('quit').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TargetError);
    expect(err).toMatchObject({ failure: 'closed' });
    expect(qmp.state).toBe('closed');
    expect((await events.take()).done).toBe(true);
  });

  test('close is idempotent and leaves the client closed', async () => {
    await using srv = await qmpServer();
    const qmp = new QmpClient(srv.path);
    await qmp.connect();
    await qmp.close();
    await qmp.close();
    expect(qmp.state).toBe('closed');
  });
});
