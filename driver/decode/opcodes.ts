// Intel PT opcodes, masks and packet sizes as named constants, in the style of
// libipt's `pt_opcodes.h`. Every value is from docs/sdm/packets.md §1–§3 (SDM Vol. 3C
// "Packet Definitions"; [new] packets from libipt/perf as the spec notes).

/** First-byte opcodes (docs/sdm/packets.md §1). */
export const OPC = {
  PAD: 0x00,
  EXT: 0x02,
  TIP: 0x0d,
  TIP_PGE: 0x11,
  TIP_PGD: 0x01,
  FUP: 0x1d,
  MODE: 0x99,
  TSC: 0x19,
  MTC: 0x59,
  CYC: 0x03,
  TRIG: 0xd9,
  /** BIP: ID[4:0] << 3 | 100b, only between BBP and BEP (spec §3.18). */
  BIP: 0x04,
} as const;

/** Second byte of the `02 xx` extended opcodes (docs/sdm/packets.md §1, §2). */
export const EXT = {
  PSB: 0x82,
  TNT_64: 0xa3,
  PIP: 0x43,
  OVF: 0xf3,
  PSBEND: 0x23,
  CBR: 0x03,
  TMA: 0x73,
  STOP: 0x83,
  VMCS: 0xc8,
  EXT2: 0xc3,
  EXSTOP: 0x62,
  EXSTOP_IP: 0xe2,
  MWAIT: 0xc2,
  PWRE: 0x22,
  PWRX: 0xa2,
  /** PTW: bit 7 = IP, bits 6:5 = PayloadBytes, bits 4:0 = 10010b (spec §3.16). */
  PTW: 0x12,
  BBP: 0x63,
  BEP: 0x33,
  BEP_IP: 0xb3,
  CFE: 0x13,
  EVD: 0x53,
} as const;

/** Third byte of the `02 C3 xx` opcodes: only MNT (spec §3.15). */
export const EXT2_MNT = 0x88;

/** Opcode masks and shifts (docs/sdm/packets.md §2, §3). */
export const OPM = {
  /** IP packets and FUP: opcode bits 4:0. */
  TIP: 0x1f,
  /** IPBytes = byte0 >> 5 (spec §3.3). */
  IPC_SHR: 5,
  /** TNT-8: bit 0 = 0 (spec §3.2). */
  TNT_8: 0x01,
  /** CYC: bits 1:0 = 11 (spec §3.11). */
  CYC: 0x03,
  CYC_EXT: 0x04,
  CYC_SHR: 3,
  CYCX_EXT: 0x01,
  CYCX_SHR: 1,
  /** MODE byte 1: leaf = bits 7:5 (spec §3.5). */
  MODE_LEAF_SHR: 5,
  PTW: 0x1f,
  PTW_IP: 0x80,
  PTW_PB_SHR: 5,
  PTW_PB_MASK: 0x3,
  /** EXSTOP / BEP / CFE / TRIG IP flag: bit 7. */
  IP_FLAG: 0x80,
  /** BIP: byte0 bits 2:0 = 100b, ID = bits 7:3. */
  BIP: 0x07,
  BIP_ID_SHR: 3,
} as const;

/** MODE leaf IDs (spec §3.5). */
export const MODE_LEAF = { EXEC: 0, TSX: 1 } as const;

/** MODE.Exec / MODE.TSX bits in byte 1 (spec §3.5). */
export const MOB = { EXEC_CSL: 0x01, EXEC_CSD: 0x02, EXEC_IF: 0x04, TSX_INTX: 0x01, TSX_ABRT: 0x02 } as const;

/** PSB: `02 82` repeated 8 times (spec §3.14). */
export const PSB_HI = 0x02;
export const PSB_LO = 0x82;
export const PSB_REPEAT = 8;

/** Packet sizes in bytes, including the opcode (docs/sdm/packets.md §1). */
export const PTPS = {
  PAD: 1,
  TNT_8: 1,
  TNT_64: 8,
  MODE: 2,
  TSC: 8,
  MTC: 2,
  PSB: 16,
  PSBEND: 2,
  OVF: 2,
  PIP: 8,
  CBR: 4,
  TMA: 7,
  STOP: 2,
  VMCS: 7,
  MNT: 11,
  EXSTOP: 2,
  MWAIT: 10,
  PWRE: 4,
  PWRX: 7,
  PTW_32: 6,
  PTW_64: 10,
  BBP: 3,
  BIP_4: 5,
  BIP_8: 9,
  BEP: 2,
  CFE: 4,
  EVD: 11,
  TRIG: 3,
  TRIG_ICNT: 5,
  /** libipt accepts at most 9 CYC bytes (spec §3.11). */
  CYC_MAX: 9,
} as const;

/** IP payload bytes per IPBytes value; -1 = reserved (docs/sdm/packets.md §5 table). */
export const IP_PAYLOAD_BYTES: readonly number[] = [0, 2, 4, 6, 6, -1, 8, -1];

/**
 * TMA's reserved bits (spec §3.10): byte 4 and bits 7:1 of byte 6 must be zero, or libipt calls the
 * packet bad_packet. The general decoder and the hot loop both ask here.
 */
export function tmaReservedClear(byte4: number, byte6: number): boolean {
  return byte4 === 0 && (byte6 & 0xfe) === 0;
}

/** Maximum TNT results: 6 in TNT-8, 47 in TNT-64 (spec §3.2). */
export const TNT_8_MAX = 6;
export const TNT_64_MAX = 47;
