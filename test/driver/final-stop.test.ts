// STATUS.Stopped=1 at the final stop (driver/collect/collect.ts): a ToPA STOP that no PMI handler
// moved past cut the trace, and the CPU dropped what it still held — a "stop" loss with bytes
// null (docs/sdm/output.md §4.4); a TraceStop also sets Stopped but loses nothing, and its TraceStop
// packet (02 83, docs/sdm/packets.md) is in the stream. Both runs on the real model (SimTarget).
import { describe, expect, test } from 'vitest';
import { imbalance } from '../../driver/collect/ledger.js';
import type { TraceRequest } from '../../driver/request.js';
import { TraceSession, type TraceResult } from '../../driver/session.js';
import { SimTarget } from '../../harness/sim/sim-target.js';
import { generateWorkload, truthLines, type GeneratedWorkload } from '../../harness/sim/workload/index.js';

/** One trace run that never hands a PMI to the driver (the handler never runs). */
async function runWithoutPmiHandler(req: TraceRequest, w: GeneratedWorkload): Promise<{ r: TraceResult; pmisSeen: number }> {
  await using sim = await SimTarget.create({ profile: 'skylake', trace: { flushBytes: 256 } });
  const s = await TraceSession.open(sim, req);
  let pmisSeen = 0;
  try {
    await s.start();
    {
      await using ex = sim.start(w, 0);
      for await (const ev of ex.events) {
        if (ev.kind === 'pmi') { pmisSeen++; continue; }
        if (!(await s.onEvent(ev))) break;
      }
    }
    return { r: await s.stop(() => ({ written: sim.written(0) })), pmisSeen };
  } finally {
    await s.release();
  }
}

/** Offsets of the two-byte TraceStop packet 02 83 (docs/sdm/packets.md) in `b`. */
function traceStopAt(b: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i + 1 < b.length; i++) if (b[i] === 0x02 && b[i + 1] === 0x83) out.push(i);
  return out;
}

describe('STATUS.Stopped at the final stop', () => {
  // grow with 3 regions of 4 KiB: INT on region 1, STOP on region 2 (driver/topa/policies.ts); a
  // workload that writes well over 12 KiB fills all three when nobody handles the PMI.
  const stopReq: TraceRequest = { output: { scheme: 'topa', policy: 'grow', regionSize: 4096, regions: 3 } };

  test('a ToPA STOP the PMI handler never saw is a "stop" loss with bytes null at the end of the full STOP region', async () => {
    const { r, pmisSeen } = await runWithoutPmiHandler(stopReq, generateWorkload(3, { branches: 60_000 }));
    expect({ pmisSeen: pmisSeen > 0, stopped: r.final.stopped, actions: r.pmis.map((p) => p.action), lost: r.ledger.lost })
      .toEqual({ pmisSeen: true, stopped: true, actions: ['final-stop'], lost: [{ at: 3 * 4096, bytes: null, reason: 'stop' }] });
  });

  test('a ToPA PMI nobody handled is settled at the final stop: GLOBAL_STATUS[55] acknowledged, LVT unmasked', async () => {
    await using sim = await SimTarget.create({ profile: 'skylake', trace: { flushBytes: 256 } });
    const s = await TraceSession.open(sim, stopReq);
    try {
      await s.start();
      {
        await using ex = sim.start(generateWorkload(3, { branches: 60_000 }), 0);
        for await (const ev of ex.events) if (ev.kind !== 'pmi' && !(await s.onEvent(ev))) break;
      }
      const raisedBefore = (sim.unit(0).globalStatus >> 55n) & 1n;
      await s.stop();
      expect([raisedBefore, (sim.unit(0).globalStatus >> 55n) & 1n, (sim.unit(0).lvtPmi >> 16n) & 1n]).toEqual([1n, 0n, 0n]);
    } finally {
      await s.release();
    }
  });

  test('with PMI preservation, a PendTopaPMI left at the final stop is cleared', async () => {
    await using sim = await SimTarget.create({ profile: 'full', trace: { flushBytes: 256 } });
    const s = await TraceSession.open(sim, { ...stopReq, InjectPsbPmiOnEnable: true });
    try {
      await s.start();
      {
        await using ex = sim.start(generateWorkload(3, { branches: 60_000 }), 0);
        for await (const ev of ex.events) if (ev.kind !== 'pmi' && !(await s.onEvent(ev))) break;
      }
      const pendBefore = (sim.unit(0).status >> 7n) & 1n;
      const r = await s.stop();
      expect([pendBefore, (sim.unit(0).status >> 7n) & 1n, (r.final.status >> 7n) & 1n, r.pmis.at(-1)?.action]).toEqual([1n, 0n, 0n, 'final-stop']);
    } finally {
      await s.release();
    }
  });

  test('the ledger still balances: the stop loss counts no written byte', async () => {
    const { r } = await runWithoutPmiHandler(stopReq, generateWorkload(3, { branches: 60_000 }));
    expect([r.ledger.written, r.ledger.collected, imbalance(r.ledger)]).toEqual([3 * 4096, 3 * 4096, 0]);
  });

  test('a TraceStop sets Stopped too, but is no loss: the stream holds its TraceStop packet 02 83', async () => {
    const w = generateWorkload(5, { branches: 6_000 });
    // A taken branch's target from the middle of the path (docs/sdm/README.md §4.4: the first branch landing there stops tracing).
    const path = truthLines(w.model).filter((l) => l.startsWith('{"ip"')).map((l) => JSON.parse(l) as { kind: string; to?: string; taken?: boolean });
    const pick = path.slice(Math.floor(path.length / 2)).find((x) => x.to !== undefined && (x.kind !== 'jcc' || x.taken === true))!;
    const at = BigInt(pick.to!);
    const req: TraceRequest = {
      output: { scheme: 'topa', policy: 'grow', regionSize: 65536, regions: 3 },
      ranges: [{ role: 'tracestop', a: at, b: at }],
    };
    const { r } = await runWithoutPmiHandler(req, w);
    const stops = traceStopAt(r.stream);
    expect({ stopped: r.final.stopped, lost: r.ledger.lost, traceStops: stops.length })
      .toEqual({ stopped: true, lost: [], traceStops: 1 });
  });
});
