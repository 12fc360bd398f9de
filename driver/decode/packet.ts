// The Packet discriminated union: one member per packet of
// docs/sdm/packets.md §1, field names as the keys of docs/formats/packet-json.md. Values
// are raw payloads (IPs not reconstructed: that is last-ip.ts).

/** IP compression, spelled as packet-json's `ipc` (IPBytes 0,1,2,3,4,6: docs/sdm/packets.md §5). */
export type IpCompression = 'suppressed' | 'update-16' | 'update-32' | 'sext-48' | 'update-48' | 'full';

/** IPBytes → IpCompression; undefined for the reserved values 101b/111b (spec §5). */
export const IPC_BY_IPBYTES: readonly (IpCompression | undefined)[] = [
  'suppressed', 'update-16', 'update-32', 'sext-48', 'update-48', undefined, 'full', undefined,
];

/** IpCompression → IPBytes (spec §5). */
export const IPBYTES_BY_IPC: Readonly<Record<IpCompression, number>> = {
  suppressed: 0, 'update-16': 1, 'update-32': 2, 'sext-48': 3, 'update-48': 4, full: 6,
};

/** Packet type names (packet-json spelling). */
export type PacketType = Packet['type'];

export type Packet =
  | { readonly type: 'pad' | 'psb' | 'psbend' | 'ovf' | 'stop' }
  /** n results; `bits` holds exactly the n result bits, the oldest branch in bit n-1 (spec §3.2). */
  | { readonly type: 'tnt.8' | 'tnt.64'; readonly n: number; readonly bits: bigint }
  /** Raw IP payload (0n when suppressed), not reconstructed (spec §3.3, §5). */
  | { readonly type: 'tip' | 'tip.pge' | 'tip.pgd' | 'fup'; readonly ipc: IpCompression; readonly ip: bigint }
  /** CS.L (& LMA), CS.D, RFLAGS.IF (spec §3.5). */
  | { readonly type: 'mode.exec'; readonly csl: boolean; readonly csd: boolean; readonly if: boolean }
  | { readonly type: 'mode.tsx'; readonly intx: boolean; readonly abrt: boolean }
  /** CR3[51:5] with the low 5 bits zero; nr = non-root (spec §3.4). */
  | { readonly type: 'pip'; readonly cr3: bigint; readonly nr: boolean }
  /** VMCS pointer bits 51:12, low 12 bits zero (spec §3.12). */
  | { readonly type: 'vmcs'; readonly base: bigint }
  | { readonly type: 'cbr'; readonly ratio: number }
  /** TSC[55:0] (spec §3.8). */
  | { readonly type: 'tsc'; readonly tsc: bigint }
  /** CTC = ART[15:0], FastCounter 9 bits (spec §3.10). */
  | { readonly type: 'tma'; readonly ctc: number; readonly fc: number }
  | { readonly type: 'mtc'; readonly ctc: number }
  /** Cycles, below 2^61 (spec §3.11). */
  | { readonly type: 'cyc'; readonly value: bigint }
  | { readonly type: 'mnt'; readonly payload: bigint }
  | { readonly type: 'exstop'; readonly ip: boolean }
  /** Two raw 32-bit fields as libipt reads them: bytes 2–5 and 6–9 (spec §3.17). */
  | { readonly type: 'mwait'; readonly hints: number; readonly ext: number }
  /** HW at byte 2 bit 7 (spec §3.17 discrepancy note: SDM and perf, not libipt). */
  | { readonly type: 'pwre'; readonly state: number; readonly sub_state: number; readonly hw: boolean }
  | {
      readonly type: 'pwrx'; readonly last: number; readonly deepest: number;
      readonly interrupt: boolean; readonly store: boolean; readonly autonomous: boolean;
    }
  /** plc 0 = 4-byte payload, 1 = 8-byte (spec §3.16). */
  | { readonly type: 'ptw'; readonly plc: number; readonly payload: bigint; readonly ip: boolean }
  /** sz = true: the block's BIPs carry 4-byte values (spec §3.18). */
  | { readonly type: 'bbp'; readonly sz: boolean; readonly block_type: number }
  /** Block item: `sz` as in its BBP (true → 4-byte value, size 5; false → 8-byte, size 9). */
  | { readonly type: 'bip'; readonly sz: boolean; readonly id: number; readonly value: bigint }
  | { readonly type: 'bep'; readonly ip: boolean }
  /** Control Flow Event: IP flag, type bits 4:0, vector (spec §3.19). */
  | { readonly type: 'cfe'; readonly ip: boolean; readonly cfe_type: number; readonly vector: number }
  /** Event Data: type bits 4:0 (libipt's mask), 64-bit payload (spec §3.19). */
  | { readonly type: 'evd'; readonly evd_type: number; readonly payload: bigint }
  /** TRIG (spec §3.20): icnt is 0 unless icntv. */
  | {
      readonly type: 'trig'; readonly ip: boolean; readonly icntv: boolean; readonly mult: boolean;
      readonly trbv: number; readonly icnt: number;
    };

/** Narrows a Packet by its type. */
export type PacketOf<T extends PacketType> = Extract<Packet, { readonly type: T }>;

