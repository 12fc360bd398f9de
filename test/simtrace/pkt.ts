// A small, independent packet lister for the generator's tests, written from
// docs/sdm/packets.md §2–§3 (not from the generator's code). Each packet becomes
// one readable token, e.g. "tip.pge 2 0x10000000" (type, IPBytes, raw payload).
export function tokens(b: Uint8Array): string[] {
  const out: string[] = [];
  let i = 0;
  const u8 = (k: number): number => {
    if (i + k >= b.length) throw new Error(`cut off at ${i}`);
    return b[i + k]!;
  };
  const le = (from: number, n: number): bigint => {
    let v = 0n;
    for (let k = n - 1; k >= 0; k--) v = (v << 8n) | BigInt(u8(from + k));
    return v;
  };
  const hex = (v: bigint): string => `0x${v.toString(16)}`;
  while (i < b.length) {
    const b0 = u8(0);
    if (b0 === 0x00) { out.push('pad'); i += 1; continue; }
    if (b0 === 0x02) {
      const b1 = u8(1);
      if ((b1 & 0x1f) === 0x12) {
        const n = (b1 & 0x60) === 0x20 ? 8 : 4;
        out.push(`ptw ${n} ${hex(le(2, n))}${b1 & 0x80 ? ' ip' : ''}`); i += 2 + n; continue;
      }
      switch (b1) {
        case 0x82:
          for (let k = 0; k < 16; k += 2) if (u8(k) !== 0x02 || u8(k + 1) !== 0x82) throw new Error(`bad psb at ${i}`);
          out.push('psb'); i += 16; continue;
        case 0x23: out.push('psbend'); i += 2; continue;
        case 0xf3: out.push('ovf'); i += 2; continue;
        case 0x83: out.push('stop'); i += 2; continue;
        case 0x03: out.push(`cbr ${u8(2)}`); i += 4; continue;
        case 0x43: {
          const p = le(2, 6);
          out.push(`pip ${hex((p >> 1n) << 5n)}${p & 1n ? ' nr' : ''}`); i += 8; continue;
        }
        case 0x73: out.push(`tma ${u8(2) | (u8(3) << 8)} ${u8(5) | ((u8(6) & 1) << 8)}`); i += 7; continue;
        default: throw new Error(`unknown 02 ${b1.toString(16)} at ${i}`);
      }
    }
    if ((b0 & 1) === 0) {
      let n = 7;
      while (((b0 >> n) & 1) === 0) n--;
      let bits = '';
      for (let k = n - 1; k >= 1; k--) bits += (b0 >> k) & 1 ? 'T' : 'N';
      out.push(`tnt ${bits}`); i += 1; continue;
    }
    if ((b0 & 3) === 3) {
      let v = BigInt(b0 >> 3);
      let shift = 5n;
      let k = 0;
      let more = (b0 & 4) !== 0;
      while (more) { k++; const x = u8(k); v |= BigInt(x >> 1) << shift; shift += 7n; more = (x & 1) !== 0; }
      out.push(`cyc ${v}`); i += k + 1; continue;
    }
    if (b0 === 0x19) { out.push(`tsc ${hex(le(1, 7))}`); i += 8; continue; }
    if (b0 === 0x59) { out.push(`mtc ${u8(1)}`); i += 2; continue; }
    if (b0 === 0x99) {
      const m = u8(1);
      if (m >> 5 === 0) out.push(`mode.exec ${['16', '64', '32', 'bad'][m & 3]}`);
      else out.push(`mode.tsx ${m & 3}`);
      i += 2; continue;
    }
    const names: Record<number, string> = { 0x01: 'tip.pgd', 0x0d: 'tip', 0x11: 'tip.pge', 0x1d: 'fup' };
    const name = names[b0 & 0x1f];
    if (name === undefined) throw new Error(`bad opcode ${b0.toString(16)} at ${i}`);
    const ipb = b0 >> 5;
    const size = [0, 2, 4, 6, 6, -1, 8, -1][ipb]!;
    if (size < 0) throw new Error(`bad IPBytes at ${i}`);
    out.push(size === 0 ? `${name} 0` : `${name} ${ipb} ${hex(le(1, size))}`);
    i += 1 + size;
  }
  return out;
}

/** Splits a token list at each PSB, for cadence tests. */
export function count(toks: readonly string[], tok: string): number {
  return toks.filter((t) => t === tok).length;
}
