/**
 * Splits a byte stream into lines, as a watch streams its events: one JSON object per line, a line
 * arriving across any number of chunks and a chunk holding any number of lines.
 */
export class LineSplitter {
  /** The start of a line whose end has not arrived yet. */
  #pending: Buffer[] = [];

  /** The lines completed by `chunk`, without their newline; the rest waits for the next chunk. */
  push(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      const tail = chunk.subarray(start, end);
      lines.push(this.#pending.length > 0 ? Buffer.concat([...this.#pending, tail]) : tail);
      this.#pending = [];
      start = end + 1;
    }
    if (start < chunk.length) this.#pending.push(chunk.subarray(start));
    return lines;
  }
}
