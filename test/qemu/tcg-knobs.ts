// Contract knobs (test/target-contract.ts) for a TCG guest of QEMU 7.2 with -cpu max, found by
// experiment in the guest through the ptlab module (see test/qemu/qemu-target.test.ts).
import type { Workload } from '../../driver/target.js';
import type { ContractKnobs } from '../target-contract.js';

/** `mov eax, 60; mov edi, code; syscall` at 0x10000000: exit(code), as real guest code. */
export function exitImage(code: number): Workload {
  const image = Uint8Array.from([0xb8, 0x3c, 0, 0, 0, 0xbf, code, 0, 0, 0, 0x0f, 0x05]);
  return { name: `exit-${code}`, image, base: 0x1000_0000n, entry: 0x1000_0000n };
}

/**
 * No RDMSR faults under QEMU 7.2's TCG: helper_rdmsr returns 0 for every MSR it does not
 * implement (x2APIC MSRs included; #GP for those came with QEMU 8.0's x2APIC emulation). The
 * contract skips the absent-MSR test for undefined once test/qemu/contract-absent-msr.patch is in.
 */
export const NO_RDMSR_FAULT = undefined as unknown as number;

/** IA32_PKRS (0x6E1): TCG keeps it and raises #GP when bits 63:32 are set. */
export const TCG_KNOBS: ContractKnobs = {
  vendor: 'AuthenticAMD',
  absentMsr: NO_RDMSR_FAULT,
  writable: { msr: 0x6e1, values: [0x4n, 0x8n] },
  reservedWrite: { msr: 0x6e1, value: (1n << 32n) | 0x4n },
  outOfRangeAddr: 1n << 40n,
  xsavesPt: false,
  startWorkload: exitImage(0),
};
