/**
 * MCP's stdio framing: one JSON value per line. Bytes are kept until their
 * newline arrives (a message may span chunks, a chunk may hold several), a
 * trailing CR is dropped, blank lines are skipped, and a line that is not
 * JSON, or one longer than MAX_LINE_BYTES, is reported and dropped.
 */

/** Longest line accepted, as the SDK's stdio transport: a larger one is a broken client. */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

export class JsonLines {
  /** Bytes of a line whose newline has not arrived yet. */
  private pending: Buffer | undefined;

  constructor(
    /** Receives every parsed value, in order. */
    private readonly onValue: (value: unknown) => void,
    /** Told about a dropped line. */
    private readonly dropped: (reason: string) => void,
  ) {}

  /** Takes a chunk of the input; calls onValue for each complete line in it. */
  push(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let pending = this.pending === undefined ? bytes : Buffer.concat([this.pending, bytes]);
    for (;;) {
      const newline = pending.indexOf(0x0a);
      if (newline < 0) break;
      const line = pending.toString('utf8', 0, newline).replace(/\r$/, '');
      pending = pending.subarray(newline + 1);
      // Kept across the callback: a handler may push again (it never does today, but the state must be whole).
      this.pending = pending;
      if (line.trim() !== '') this.parse(line);
    }
    if (pending.length === 0) this.pending = undefined;
    else if (pending.length > MAX_LINE_BYTES) {
      this.pending = undefined;
      this.dropped(`a line longer than ${MAX_LINE_BYTES} bytes`);
    } else {
      this.pending = pending;
    }
  }

  private parse(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.dropped('a line that is not JSON');
      return;
    }
    this.onValue(value);
  }
}
