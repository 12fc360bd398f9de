// Flow JSON Lines written as bytes (../ascii-out.ts): the same lines as flowJsonLine (record.ts)
// byte for byte (test/flow/record-out.test.ts), for the records a trace is made of (branches,
// async, enable, disable); the rest through flowJsonLine itself.
import { ascii, type AsciiOut } from '../ascii-out.js';
import { flowJsonLine, type FlowRecord } from './record.js';

const IP = ascii('{"ip":"'), KIND = ascii('","kind":"'), TAKEN = ascii(',"taken":true'), NOT_TAKEN = ascii(',"taken":false'), TO = ascii(',"to":"');
const ASYNC = ascii('{"kind":"async","from":"'), ASYNC_TO = ascii('","to":"'), ENABLE = ascii('{"kind":"enable","ip":"');
const DISABLE = ascii('{"kind":"disable"'), END = ascii('"}');
const BRANCH_KIND = new Map(['jcc', 'jmp', 'call', 'ret', 'far.call', 'far.ret', 'far.jmp'].map((k) => [k, ascii(`${k}"`)]));

/** Writes the flow JSON line of `r` (with its newline) to `o`. */
export function writeFlowJson(o: AsciiOut, r: FlowRecord): void {
  switch (r.kind) {
    case 'branch':
      o.bytes(IP); o.hex64(r.ipLo, r.ipHi); o.bytes(KIND); o.bytes(BRANCH_KIND.get(r.branch)!);
      if (r.branch === 'jcc') o.bytes(r.taken ? TAKEN : NOT_TAKEN);
      if (r.hasTo) { o.bytes(TO); o.hex64(r.toLo, r.toHi); o.byte(34); }
      o.byte(125);
      break;
    case 'async':
      o.bytes(ASYNC); o.hex64(r.ipLo, r.ipHi); o.bytes(ASYNC_TO); o.hex64(r.toLo, r.toHi); o.bytes(END);
      break;
    case 'enable':
      o.bytes(ENABLE); o.hex64(r.ipLo, r.ipHi); o.bytes(END);
      break;
    case 'disable':
      if (r.hasIp) { o.str(flowJsonLine(r)); break; }
      o.bytes(DISABLE); o.byte(125);
      break;
    default:
      o.str(flowJsonLine(r));
  }
  o.newline();
}
