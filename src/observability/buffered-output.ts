import { Writable } from 'node:stream';

/** Where the buffer goes: process.stdout in the server, a sink in tests. */
export interface LineSink {
  write(chunk: Buffer): unknown;
}

export interface BufferedOutputOptions {
  sink: LineSink;
  /** Written at the latest this long after the first buffered line. */
  flushIntervalMs: number;
  /** Written at once when this many bytes are waiting. */
  maxBufferBytes: number;
}

/**
 * Log lines gathered and written in batches. stdout to a pipe or a file is a synchronous write in Node on
 * Linux: one `write(2)` per log line costs the event loop a system call for every request. Batched, a
 * thousand lines cost one. The price is at most `flushIntervalMs` of lines in memory: they are written
 * when the stream ends (graceful stop), and on process exit whatever the cause (`flush()` from the
 * 'exit' hook the server installs); only a SIGKILL loses them.
 */
export class BufferedOutput extends Writable {
  readonly #sink: LineSink;
  readonly #flushIntervalMs: number;
  readonly #maxBufferBytes: number;
  #chunks: Buffer[] = [];
  #bytes = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: BufferedOutputOptions) {
    super({ decodeStrings: true });
    this.#sink = options.sink;
    this.#flushIntervalMs = options.flushIntervalMs;
    this.#maxBufferBytes = options.maxBufferBytes;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    if (this.#bytes >= this.#maxBufferBytes) this.flush();
    else if (!this.#timer) {
      this.#timer = setTimeout(() => this.flush(), this.#flushIntervalMs);
      // A pending flush must not keep the process alive; exit flushes what is left.
      this.#timer.unref();
    }
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.flush();
    callback();
  }

  /** Writes what is buffered now, in one call to the sink. Safe to call at any time, also from 'exit'. */
  flush(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#bytes === 0) return;
    const batch = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#bytes);
    this.#chunks = [];
    this.#bytes = 0;
    this.#sink.write(batch);
  }

  /** Bytes waiting to be written. */
  get pendingBytes(): number {
    return this.#bytes;
  }
}

/**
 * The server's log output: stdout, batched every 200 ms or 64 kB, and flushed when the process exits
 * (graceful stop, process.exit, uncaught error). stdout to a pipe or file is synchronous on Linux, so the
 * final flush is complete before the process is gone.
 */
export function bufferedStdout(): BufferedOutput {
  const output = new BufferedOutput({
    sink: process.stdout,
    flushIntervalMs: 200,
    maxBufferBytes: 64 * 1024,
  });
  process.once('exit', () => output.flush());
  return output;
}
