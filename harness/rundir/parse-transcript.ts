// Reading transcript.jsonl text (docs/transcript.md) for the commands that take a run directory as
// input: one line as its fields, whatever the line holds, and the #GP rule a fault text names.

/** One line of transcript text, parsed; a line that is not a JSON object is kept as `{ text }`. */
export function parseTranscriptLine(l: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(l);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { text: l };
  } catch {
    return { text: l };
  }
}

/** The #GP rule id a transcript fault names (`#GP on WRMSR …: CTL.2: reserved bit …`), if any. */
export function gpRuleOf(line: string | undefined): string | undefined {
  const m = line?.match(/#GP on [A-Z]+[^:]*: ([A-Za-z0-9_.-]+):/);
  return m?.[1];
}
