// Packet opcodes the generator writes (docs/sdm/packets.md §1, §3). Kept apart
// from driver/decode on purpose: the model and the decoder must not share a
// bug (docs/design.md "Layers").

/** First byte of every extended (two-byte header) packet. */
export const EXT = 0x02;
/** TIP opcode bits 4:0; IPBytes go in bits 7:5. */
export const OPC_TIP = 0x0d;
/** TIP.PGE opcode bits 4:0. */
export const OPC_TIP_PGE = 0x11;
/** TIP.PGD opcode bits 4:0. */
export const OPC_TIP_PGD = 0x01;
/** FUP opcode bits 4:0. */
export const OPC_FUP = 0x1d;
/** MODE header; byte 1 bits 7:5 = leaf (000 MODE.Exec, 001 MODE.TSX). */
export const OPC_MODE = 0x99;
/** TSC header (then TSC[55:0]). */
export const OPC_TSC = 0x19;
/** MTC header (then CTC). */
export const OPC_MTC = 0x59;
/** Second bytes of extended packets. */
export const EXT_PSB = 0x82;
export const EXT_PSBEND = 0x23;
export const EXT_OVF = 0xf3;
export const EXT_PIP = 0x43;
export const EXT_CBR = 0x03;
export const EXT_TMA = 0x73;
export const EXT_TRACESTOP = 0x83;
/** PTW byte 1: bit 7 = IP (FUPonPTW), bits 6:5 = PayloadBytes, bits 4:0 = 10010b. */
export const EXT_PTW = 0x12;
/** Size of a PSB: `02 82` eight times. */
export const PSB_SIZE = 16;

/** IPBytes values (docs/sdm/packets.md §5). */
export const IPB_SUPPRESSED = 0;
export const IPB_UPDATE16 = 1;
export const IPB_UPDATE32 = 2;
export const IPB_SEXT48 = 3;
export const IPB_UPDATE48 = 4;
export const IPB_FULL = 6;
