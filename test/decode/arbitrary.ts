// fast-check arbitraries: one per packet type, with payloads the encoder accepts.
import fc from 'fast-check';
import type { IpCompression, Packet, PacketType } from '../../driver/decode/packet.js';

const big = (bits: number): fc.Arbitrary<bigint> => fc.bigInt({ min: 0n, max: (1n << BigInt(bits)) - 1n });
const IPC_BITS: [IpCompression, number][] = [
  ['suppressed', 0], ['update-16', 16], ['update-32', 32], ['sext-48', 48], ['update-48', 48], ['full', 64],
];
const ipPacket = (type: 'tip' | 'tip.pge' | 'tip.pgd' | 'fup'): fc.Arbitrary<Packet> =>
  fc.constantFrom(...IPC_BITS).chain(([ipc, bits]) => (bits === 0 ? fc.constant(0n) : big(bits)).map((ip) => ({ type, ipc, ip })));

/** An arbitrary for every packet type. */
export const ARBITRARIES: Record<PacketType, fc.Arbitrary<Packet>> = {
  pad: fc.constant({ type: 'pad' }),
  psb: fc.constant({ type: 'psb' }),
  psbend: fc.constant({ type: 'psbend' }),
  ovf: fc.constant({ type: 'ovf' }),
  stop: fc.constant({ type: 'stop' }),
  'tnt.8': fc.integer({ min: 1, max: 6 }).chain((n) => big(n).map((bits) => ({ type: 'tnt.8' as const, n, bits }))),
  'tnt.64': fc.integer({ min: 1, max: 47 }).chain((n) => big(n).map((bits) => ({ type: 'tnt.64' as const, n, bits }))),
  tip: ipPacket('tip'),
  'tip.pge': ipPacket('tip.pge'),
  'tip.pgd': ipPacket('tip.pgd'),
  fup: ipPacket('fup'),
  'mode.exec': fc.record({ type: fc.constant('mode.exec' as const), csl: fc.boolean(), csd: fc.boolean(), if: fc.boolean() }),
  'mode.tsx': fc.record({ type: fc.constant('mode.tsx' as const), intx: fc.boolean(), abrt: fc.boolean() }),
  pip: fc.record({ type: fc.constant('pip' as const), cr3: big(47).map((v) => v << 5n), nr: fc.boolean() }),
  vmcs: fc.record({ type: fc.constant('vmcs' as const), base: big(40).map((v) => v << 12n) }),
  cbr: fc.record({ type: fc.constant('cbr' as const), ratio: fc.integer({ min: 0, max: 255 }) }),
  tsc: fc.record({ type: fc.constant('tsc' as const), tsc: big(56) }),
  tma: fc.record({ type: fc.constant('tma' as const), ctc: fc.integer({ min: 0, max: 0xffff }), fc: fc.integer({ min: 0, max: 511 }) }),
  mtc: fc.record({ type: fc.constant('mtc' as const), ctc: fc.integer({ min: 0, max: 255 }) }),
  cyc: fc.record({ type: fc.constant('cyc' as const), value: fc.integer({ min: 1, max: 61 }).chain((b) => big(b)) }),
  mnt: fc.record({ type: fc.constant('mnt' as const), payload: big(64) }),
  exstop: fc.record({ type: fc.constant('exstop' as const), ip: fc.boolean() }),
  mwait: fc.record({ type: fc.constant('mwait' as const), hints: fc.nat({ max: 0xffff_ffff }), ext: fc.nat({ max: 0xffff_ffff }) }),
  pwre: fc.record({ type: fc.constant('pwre' as const), state: fc.nat({ max: 15 }), sub_state: fc.nat({ max: 15 }), hw: fc.boolean() }),
  pwrx: fc.record({
    type: fc.constant('pwrx' as const), last: fc.nat({ max: 15 }), deepest: fc.nat({ max: 15 }),
    interrupt: fc.boolean(), store: fc.boolean(), autonomous: fc.boolean(),
  }),
  ptw: fc.record({ type: fc.constant('ptw' as const), plc: fc.constantFrom(0, 1), ip: fc.boolean() })
    .chain((p) => big(p.plc === 0 ? 32 : 64).map((payload) => ({ ...p, payload }))),
  bbp: fc.record({ type: fc.constant('bbp' as const), sz: fc.boolean(), block_type: fc.nat({ max: 31 }) }),
  bip: fc.record({ type: fc.constant('bip' as const), sz: fc.boolean(), id: fc.nat({ max: 31 }) })
    .chain((p) => big(p.sz ? 32 : 64).map((value) => ({ ...p, value }))),
  bep: fc.record({ type: fc.constant('bep' as const), ip: fc.boolean() }),
  cfe: fc.record({ type: fc.constant('cfe' as const), ip: fc.boolean(), cfe_type: fc.nat({ max: 31 }), vector: fc.nat({ max: 255 }) }),
  evd: fc.record({ type: fc.constant('evd' as const), evd_type: fc.nat({ max: 31 }), payload: big(64) }),
  trig: fc.record({ type: fc.constant('trig' as const), ip: fc.boolean(), icntv: fc.boolean(), mult: fc.boolean(), trbv: fc.nat({ max: 255 }) })
    .chain((p) => (p.icntv ? fc.nat({ max: 0xffff }) : fc.constant(0)).map((icnt) => ({ ...p, icnt }))),
};

/** Any packet except BIP (which needs its BBP) . */
export const anyPacket: fc.Arbitrary<Packet> = fc.oneof(
  ...Object.entries(ARBITRARIES).filter(([t]) => t !== 'bip').map(([, a]) => a),
);
