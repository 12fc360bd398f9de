// Output lines gathered into writes of about 1 MiB: one write per batch instead of one per line
// (dump and flow print millions of lines), and never more than one batch held.

const FLUSH_CHARS = 1 << 20;

export class LineBatch {
  private lines: string[] = [];
  private chars = 0;

  constructor(private readonly write: (s: string) => void) {}

  /** Adds one line (without its newline); writes the batch once it is full. */
  push(line: string): void {
    this.lines.push(line);
    this.chars += line.length + 1;
    if (this.chars >= FLUSH_CHARS) this.flush();
  }

  /** Writes what is gathered, if anything. */
  flush(): void {
    if (this.lines.length > 0) this.write(this.lines.join('\n') + '\n');
    this.lines = [];
    this.chars = 0;
  }
}
