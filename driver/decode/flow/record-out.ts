// Flow JSON Lines written as bytes (../ascii-out.ts): the same lines as flowJsonLine (record.ts)
// byte for byte (test/flow/record-out.test.ts), for the records a trace is made of (branches,
// async, enable, disable); the rest through flowJsonLine itself.
import { ascii, putBytes, putHex64, type AsciiOut } from '../ascii-out.js';
import { flowJsonLine, type FlowRecord } from './record.js';

const IP = ascii('{"ip":"'), KIND = ascii('","kind":"'), TAKEN = ascii(',"taken":true'), NOT_TAKEN = ascii(',"taken":false'), TO = ascii(',"to":"');
const ASYNC = ascii('{"kind":"async","from":"'), ASYNC_TO = ascii('","to":"'), ENABLE = ascii('{"kind":"enable","ip":"');
const DISABLE = ascii('{"kind":"disable"'), END = ascii('"}');
const BRANCH_KIND = new Map(['jcc', 'jmp', 'call', 'ret', 'far.call', 'far.ret', 'far.jmp'].map((k) => [k, ascii(`${k}"`)]));

/** Room for the longest line written here (a branch with two full IPs), with room to spare. */
const MAX_LINE = 128;

/** Writes the flow JSON line of `r` (with its newline) to `o`. */
export function writeFlowJson(o: AsciiOut, r: FlowRecord): void {
  if (r.kind === 'gap' || r.kind === 'error' || r.kind === 'overflow' || (r.kind === 'disable' && r.hasIp)) {
    o.line(flowJsonLine(r));
    return;
  }
  let p = o.begin(MAX_LINE);
  const buf = o.buffer;
  switch (r.kind) {
    case 'branch':
      p = putBytes(buf, p, IP); p = putHex64(buf, p, r.ipLo, r.ipHi); p = putBytes(buf, p, KIND); p = putBytes(buf, p, BRANCH_KIND.get(r.branch)!);
      if (r.branch === 'jcc') p = putBytes(buf, p, r.taken ? TAKEN : NOT_TAKEN);
      if (r.hasTo) { p = putBytes(buf, p, TO); p = putHex64(buf, p, r.toLo, r.toHi); buf[p++] = 34; }
      buf[p++] = 125;
      break;
    case 'async':
      p = putBytes(buf, p, ASYNC); p = putHex64(buf, p, r.ipLo, r.ipHi); p = putBytes(buf, p, ASYNC_TO); p = putHex64(buf, p, r.toLo, r.toHi); p = putBytes(buf, p, END);
      break;
    case 'enable':
      p = putBytes(buf, p, ENABLE); p = putHex64(buf, p, r.ipLo, r.ipHi); p = putBytes(buf, p, END);
      break;
    default: // disable without an IP
      p = putBytes(buf, p, DISABLE); buf[p++] = 125;
  }
  buf[p++] = 10;
  o.end(p);
}
