// The one hex spelling of ptlab's messages, transcripts and JSON: lowercase,
// 0x, no leading zeros (docs/formats/packet-json.md conventions).

/** "0x1f" — the hex form used in reasons, transcripts and printing. */
export function hex(v: bigint | number): string {
  return `0x${v.toString(16)}`;
}
