// Public surface of the packet layer (encoder, streaming decoder, Last IP, JSON/text dump).
export { PacketDecoder, type DecoderOptions } from './decoder.js';
export {
  PacketRecord, PacketKind, type PacketKindCode, DecodeError, type DecodeErrorCode, ERROR_NAMES,
  packetName, toPacket, joinU64,
} from './record.js';
export { type Packet, type PacketType, type PacketOf, type IpCompression, IPC_BY_IPBYTES, IPBYTES_BY_IPC } from './packet.js';
export { encodePacket, encodePackets, PacketWriter } from './encode.js';
export { checksumRecord, checksumBatch, CHECKSUM_INIT, mix } from './checksum.js';
export { PacketBatch, type PacketBatchOptions } from './batch.js';
export { LastIp, reconstructIp, type LastIpOptions } from './last-ip.js';
export { packetJsonLine, dumpJson, hex64, tntBits, execModeName } from './json.js';
export { TextFormatter } from './text.js';
export { findPsb, RESYNC_LOOKBACK } from './sync.js';
export * as opcodes from './opcodes.js';
