// The test vectors of docs/sdm/packets.md §14 (and the malformed inputs of §2),
// with the packet-json line each must decode to, written by hand from the spec
// text. Each vector is wrapped as PSB + PSBEND + vector + PSBEND (wrapVector),
// so its line is at offset 18 and the PSBEND after it checks that the
// vector's size was read right. (The PSBEND before the vector keeps a vector
// that starts with `02 82` from extending the PSB: libipt synchronises on the
// LAST 16 bytes of a run of PSB bytes, see differences.test.ts.)

/** 16 bytes: `02 82` × 8 (docs/sdm/packets.md §3.14). */
export const PSB = Object.freeze([0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82]);
/** `02 23` (docs/sdm/packets.md §3.14). */
export const PSBEND = Object.freeze([0x02, 0x23]);

/** One §14 vector: bytes and the expected packet-json line at offset 18 (SDM reading). */
export interface SpecVector {
  readonly name: string;
  readonly bytes: readonly number[];
  readonly line: string;
}

/** Offset of the vector in wrapVector's output. */
export const VECTOR_OFF = 18;

/** PSB + PSBEND + bytes + PSBEND. */
export function wrapVector(bytes: readonly number[]): Uint8Array {
  return Uint8Array.from([...PSB, ...PSBEND, ...bytes, ...PSBEND]);
}

/** The packet-json lines of the PSB + PSBEND that wrapVector puts first. */
export const HEAD_LINES = Object.freeze(['{"off":0,"size":16,"type":"psb"}', '{"off":16,"size":2,"type":"psbend"}']);

/** The packet-json line of the PSBEND that wrapVector puts after `bytes`. */
export function psbendLine(bytes: readonly number[]): string {
  return `{"off":${VECTOR_OFF + bytes.length},"size":2,"type":"psbend"}`;
}

const atVec = (size: number, rest: string): string => `{"off":${VECTOR_OFF},"size":${size},"type":${rest}}`;

// §14: `0D`, `2D 01 02`, `4D 01 02 03 04`, `6D 01..06`, `8D 01..06`, `CD 01..08`, and the
// same payloads for TIP.PGE (x11), TIP.PGD (x01) and FUP (x1D) (§3.3: byte 0 = IPBytes<<5 | opcode).
const IP_FORMS = [
  { ipBytes: 0, payload: [], ipc: 'suppressed', ip: undefined },
  { ipBytes: 1, payload: [1, 2], ipc: 'update-16', ip: '0x201' },
  { ipBytes: 2, payload: [1, 2, 3, 4], ipc: 'update-32', ip: '0x4030201' },
  { ipBytes: 3, payload: [1, 2, 3, 4, 5, 6], ipc: 'sext-48', ip: '0x60504030201' },
  { ipBytes: 4, payload: [1, 2, 3, 4, 5, 6], ipc: 'update-48', ip: '0x60504030201' },
  { ipBytes: 6, payload: [1, 2, 3, 4, 5, 6, 7, 8], ipc: 'full', ip: '0x807060504030201' },
] as const;
const IP_PACKETS = [
  { type: 'tip', opcode: 0x0d },
  { type: 'tip.pge', opcode: 0x11 },
  { type: 'tip.pgd', opcode: 0x01 },
  { type: 'fup', opcode: 0x1d },
] as const;

const ipVectors: SpecVector[] = IP_PACKETS.flatMap(({ type, opcode }) =>
  IP_FORMS.map(({ ipBytes, payload, ipc, ip }) => ({
    name: `${type} ${ipc}`,
    bytes: [(ipBytes << 5) | opcode, ...payload],
    line: atVec(1 + payload.length, `"${type}","ipc":"${ipc}"${ip === undefined ? '' : `,"ip":"${ip}"`}`),
  })),
);

/** Every libipt-known vector of docs/sdm/packets.md §14, SDM reading. */
export const SPEC_VECTORS: readonly SpecVector[] = [
  { name: 'pad', bytes: [0x00], line: atVec(1, '"pad"') },
  { name: 'tnt.8 N', bytes: [0x04], line: atVec(1, '"tnt.8","n":1,"bits":"0"') },
  { name: 'tnt.8 T', bytes: [0x06], line: atVec(1, '"tnt.8","n":1,"bits":"1"') },
  { name: 'tnt.8 6xN', bytes: [0x80], line: atVec(1, '"tnt.8","n":6,"bits":"000000"') },
  { name: 'tnt.8 6xT', bytes: [0xfe], line: atVec(1, '"tnt.8","n":6,"bits":"111111"') },
  { name: 'tnt.8 NT (§3.2 example 0x0A)', bytes: [0x0a], line: atVec(1, '"tnt.8","n":2,"bits":"01"') },
  { name: 'tnt.64 one N', bytes: [0x02, 0xa3, 0x02, 0, 0, 0, 0, 0], line: atVec(8, '"tnt.64","n":1,"bits":"0"') },
  {
    name: 'tnt.64 47xN',
    bytes: [0x02, 0xa3, 0, 0, 0, 0, 0, 0x80],
    line: atVec(8, `"tnt.64","n":47,"bits":"${'0'.repeat(47)}"`),
  },
  ...ipVectors,
  { name: 'pip nr=0', bytes: [0x02, 0x43, 0x02, 0x04, 0x06, 0x08, 0x0a, 0x0c], line: atVec(8, '"pip","cr3":"0xc0a080604020","nr":false') },
  { name: 'pip nr=1', bytes: [0x02, 0x43, 0x03, 0x04, 0x06, 0x08, 0x0a, 0x0c], line: atVec(8, '"pip","cr3":"0xc0a080604020","nr":true') },
  { name: 'mode.exec 16bit', bytes: [0x99, 0x00], line: atVec(2, '"mode.exec","csl":false,"csd":false,"mode":"16bit"') },
  { name: 'mode.exec 64bit', bytes: [0x99, 0x01], line: atVec(2, '"mode.exec","csl":true,"csd":false,"mode":"64bit"') },
  { name: 'mode.exec 32bit', bytes: [0x99, 0x02], line: atVec(2, '"mode.exec","csl":false,"csd":true,"mode":"32bit"') },
  { name: 'mode.exec invalid', bytes: [0x99, 0x03], line: atVec(2, '"mode.exec","csl":true,"csd":true,"mode":"unknown"') },
  { name: 'mode.tsx commit', bytes: [0x99, 0x20], line: atVec(2, '"mode.tsx","intx":false,"abrt":false') },
  { name: 'mode.tsx intx', bytes: [0x99, 0x21], line: atVec(2, '"mode.tsx","intx":true,"abrt":false') },
  { name: 'mode.tsx abort', bytes: [0x99, 0x22], line: atVec(2, '"mode.tsx","intx":false,"abrt":true') },
  { name: 'stop', bytes: [0x02, 0x83], line: atVec(2, '"stop"') },
  { name: 'cbr', bytes: [0x02, 0x03, 0x12, 0x00], line: atVec(4, '"cbr","ratio":18') },
  { name: 'tsc', bytes: [0x19, 1, 2, 3, 4, 5, 6, 7], line: atVec(8, '"tsc","tsc":"0x7060504030201"') },
  { name: 'mtc', bytes: [0x59, 0x12], line: atVec(2, '"mtc","ctc":18') },
  { name: 'tma', bytes: [0x02, 0x73, 0x80, 0xc0, 0x00, 0xff, 0x01], line: atVec(7, '"tma","ctc":49280,"fc":511') },
  { name: 'cyc 0', bytes: [0x03], line: atVec(1, '"cyc","value":"0x0"') },
  { name: 'cyc 1', bytes: [0x0b], line: atVec(1, '"cyc","value":"0x1"') },
  { name: 'cyc 0x1f', bytes: [0xfb], line: atVec(1, '"cyc","value":"0x1f"') },
  { name: 'cyc 0x20', bytes: [0x07, 0x02], line: atVec(2, '"cyc","value":"0x20"') },
  { name: 'cyc 0xfff', bytes: [0xff, 0xfe], line: atVec(2, '"cyc","value":"0xfff"') },
  { name: 'cyc 0x1000', bytes: [0x07, 0x01, 0x02], line: atVec(3, '"cyc","value":"0x1000"') },
  { name: 'vmcs', bytes: [0x02, 0xc8, 1, 2, 3, 4, 5], line: atVec(7, '"vmcs","base":"0x504030201000"') },
  { name: 'ovf', bytes: [0x02, 0xf3], line: atVec(2, '"ovf"') },
  { name: 'psb', bytes: [...PSB], line: atVec(16, '"psb"') },
  { name: 'psbend', bytes: [...PSBEND], line: atVec(2, '"psbend"') },
  { name: 'mnt', bytes: [0x02, 0xc3, 0x88, 1, 2, 3, 4, 5, 6, 7, 8], line: atVec(11, '"mnt","payload":"0x807060504030201"') },
  { name: 'ptw 4B', bytes: [0x02, 0x12, 1, 2, 3, 4], line: atVec(6, '"ptw","plc":0,"payload":"0x4030201","ip":false') },
  { name: 'ptw 8B', bytes: [0x02, 0x32, 1, 2, 3, 4, 5, 6, 7, 8], line: atVec(10, '"ptw","plc":1,"payload":"0x807060504030201","ip":false') },
  { name: 'ptw 4B+IP', bytes: [0x02, 0x92, 1, 2, 3, 4], line: atVec(6, '"ptw","plc":0,"payload":"0x4030201","ip":true') },
  { name: 'ptw 8B+IP', bytes: [0x02, 0xb2, 1, 2, 3, 4, 5, 6, 7, 8], line: atVec(10, '"ptw","plc":1,"payload":"0x807060504030201","ip":true') },
  { name: 'exstop', bytes: [0x02, 0x62], line: atVec(2, '"exstop","ip":false') },
  { name: 'exstop ip', bytes: [0x02, 0xe2], line: atVec(2, '"exstop","ip":true') },
  // §3.17: hints = bytes 2-5, ext = bytes 6-9, each a 32-bit value as libipt reads them.
  { name: 'mwait', bytes: [0x02, 0xc2, 1, 2, 3, 4, 5, 6, 7, 8], line: atVec(10, '"mwait","hints":"0x4030201","ext":"0x8070605"') },
  // §3.17: byte 2 bit 7 = HW; byte 3 = state 7:4, sub-state 3:0.
  { name: 'pwre hw', bytes: [0x02, 0x22, 0x80, 0x34], line: atVec(4, '"pwre","state":3,"sub_state":4,"hw":true') },
  // §3.17: byte 2 = last 7:4, deepest 3:0; byte 3 bit 0 interrupt, bit 2 store, bit 3 hw wake (bit 1 reserved).
  {
    name: 'pwrx',
    bytes: [0x02, 0xa2, 0x01, 0x02, 0x03, 0x04, 0x05],
    line: atVec(7, '"pwrx","last":0,"deepest":1,"interrupt":false,"store":false,"autonomous":false'),
  },
];

/** §14 vectors libipt 2.0.5 does not know (docs/sdm/packets.md §2: bad_opc), with our packet type. */
export const NEW_PACKET_VECTORS = [
  { name: 'bbp SZ=0 type 0', type: 'bbp', bytes: [0x02, 0x63, 0x00] },
  { name: 'bbp SZ=1 type 0', type: 'bbp', bytes: [0x02, 0x63, 0x80] },
  { name: 'bbp SZ=1 type 0x1f', type: 'bbp', bytes: [0x02, 0x63, 0x9f] },
  { name: 'bep', type: 'bep', bytes: [0x02, 0x33] },
  { name: 'bep ip', type: 'bep', bytes: [0x02, 0xb3] },
  { name: 'cfe intr', type: 'cfe', bytes: [0x02, 0x13, 0x01, 0x03] },
  { name: 'cfe intr ip', type: 'cfe', bytes: [0x02, 0x13, 0x81, 0x03] },
  { name: 'evd', type: 'evd', bytes: [0x02, 0x53, 0x09, 1, 2, 3, 4, 5, 6, 7, 0] },
] as const;

/** Malformed packets of docs/sdm/packets.md §2 and the error libipt 2.0.5 gives each (at VECTOR_OFF). */
export const ERROR_VECTORS = [
  { name: 'unknown first byte 0x05', bytes: [0x05], error: 'bad_opc' },
  { name: 'unknown 02 xx', bytes: [0x02, 0x01], error: 'bad_opc' },
  { name: '02 c3 not followed by 88', bytes: [0x02, 0xc3, 0x89], error: 'bad_opc' },
  { name: 'IPBytes 101b', bytes: [0xa1, 1, 2, 3, 4, 5, 6, 7, 8], error: 'bad_packet' },
  { name: 'IPBytes 111b', bytes: [0xed, 1, 2, 3, 4, 5, 6, 7, 8], error: 'bad_packet' },
  { name: 'PTW PayloadBytes 10b', bytes: [0x02, 0x52, 1, 2, 3, 4, 5, 6, 7, 8], error: 'bad_packet' },
  { name: 'PTW PayloadBytes 11b', bytes: [0x02, 0x72, 1, 2, 3, 4, 5, 6, 7, 8], error: 'bad_packet' },
  { name: 'MODE leaf 010b', bytes: [0x99, 0x40], error: 'bad_packet' },
  { name: 'MODE leaf 111b', bytes: [0x99, 0xe0], error: 'bad_packet' },
  { name: 'TNT-64 payload 0', bytes: [0x02, 0xa3, 0, 0, 0, 0, 0, 0], error: 'bad_packet' },
  { name: 'TNT-64 payload 1', bytes: [0x02, 0xa3, 1, 0, 0, 0, 0, 0], error: 'bad_packet' },
  // 16 bytes, so the PSB is not simply cut off by the end of the data (that is eos).
  { name: 'partial PSB', bytes: [0x02, 0x82, 0x02, 0x82, ...Array<number>(12).fill(0)], error: 'bad_packet' },
  { name: 'CYC of 10 bytes', bytes: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0e], error: 'bad_packet' },
  { name: 'TMA byte 4 non-zero', bytes: [0x02, 0x73, 0x80, 0xc0, 0x01, 0xff, 0x01], error: 'bad_packet' },
  { name: 'TMA byte 6 bits 7:1 non-zero', bytes: [0x02, 0x73, 0x80, 0xc0, 0x00, 0xff, 0x03], error: 'bad_packet' },
] as const;

