// The line framing QMP and the helper channel share (harness/link/socket.ts LineSplitter).
import { describe, expect, test } from 'vitest';
import { LineSplitter } from '../../harness/link/socket.js';

describe('LineSplitter', () => {
  test('a line split across chunks comes out once, when its newline arrives', () => {
    const s = new LineSplitter();
    expect(s.push('{"retu')).toEqual([]);
    expect(s.push('rn": {}}\n{"event"')).toEqual(['{"return": {}}']);
    expect(s.push(': "STOP"}\n')).toEqual(['{"event": "STOP"}']);
  });

  test('several lines in one chunk come out in order; blank lines and CR/space padding are dropped', () => {
    const s = new LineSplitter();
    expect(s.push('h1 ok 1\r\n\n  h2 ok 2 \n*  pmi 0\nh3')).toEqual(['h1 ok 1', 'h2 ok 2', '*  pmi 0']);
    expect(s.push('\n')).toEqual(['h3']);
  });
});
