// `npm run bench` entry for the packet generator: a synthetic event loop of
// mixed jcc / call / ret / indirect branches with truth recording off.
import { PacketGenerator } from '../sim/trace/generator.js';
import { CountingSink } from '../sim/trace/sink.js';
import { IA32_RTIT_CTL } from '../../driver/hw/msrs.js';

const ROUND = 8;   // branches per round: 5 jcc, a CALL, its (compressed) RET, an indirect JMP
const TABLE = 4096;

/** Throughput of the generator on a synthetic branch mix (never assert on it). */
export function benchGenerator(branches = 20_000_000): { branchesPerSecond: number; bytesPerSecond: number } {
  const base = 0x10000000;
  // Precomputed pseudo-random IPs and outcomes, so the loop measures the generator.
  const ips = new Float64Array(TABLE);
  const taken = new Uint8Array(TABLE);
  let x = 0x12345678;
  for (let i = 0; i < TABLE; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    ips[i] = base + ((x >>> 8) & 0xfff0);
    taken[i] = (x >>> 16) & 1;
  }
  const sink = new CountingSink();
  const g = new PacketGenerator({ sink, flushBytes: 1 << 16 });
  const ctl = IA32_RTIT_CTL.encode({ TraceEn: true, User: true, BranchEn: true, ToPA: true, PSBFreq: 3 });
  g.traceEnable(base, { ctl, status: 0n });
  let done = 0;
  let i = 0;
  const t0 = performance.now();
  while (done < branches) {
    for (let k = 0; k < 5; k++) {
      const ip = ips[i]!;
      g.branchJcc(ip, ip + 2, ip + 0x40, taken[i] === 1);
      i = (i + 1) & (TABLE - 1);
    }
    const at = ips[i]!;
    g.branchDirect('call', at, at + 5, base + 0x20000);
    g.ret(base + 0x20010, base + 0x20011, at + 5);
    g.branchIndirect('jmp', at + 5, at + 7, ips[(i + 7) & (TABLE - 1)]!);
    done += ROUND;
  }
  g.traceDisable(base);
  const secs = (performance.now() - t0) / 1000;
  return { branchesPerSecond: done / secs, bytesPerSecond: sink.bytes / secs };
}
