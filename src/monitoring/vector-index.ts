/** A series as Prometheus' parsed answer has it (prometheus-client.ts's PromSeries, which reads this module). */
interface ParsedSample {
  metric: Record<string, string>;
  value?: [number, string];
}

/** A label name as the bytes that open its member in a labels object: `"name":"`. */
export interface LabelKey {
  name: string;
  bytes: Buffer;
}

export const labelKey = (name: string): LabelKey => ({ name, bytes: Buffer.from(`"${name}":"`) });

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const BRACE_OPEN = 0x7b;
const BRACE_CLOSE = 0x7d;
const BRACKET_CLOSE = 0x5d;

/**
 * Offsets kept per series: the segment (a piece of the answer's bytes) that holds it, then in that
 * segment its labels object [start, end), time [start, end) and value's text [start, end) (-1: none).
 */
const STRIDE = 7;

/**
 * The series of one instant-vector answer, located in the answer's bytes rather than parsed: a ranking
 * reads one label of thousands of series and shows ten, so it holds seven numbers per series (in one
 * typed array, outside the JavaScript heap) and the bytes as they came, and decodes only what it is
 * asked for.
 */
export class Vector {
  readonly length: number;
  readonly #segments: readonly Buffer[];
  readonly #at: Int32Array;

  constructor(segments: readonly Buffer[], offsets: Int32Array) {
    this.#segments = segments;
    this.#at = offsets;
    this.length = offsets.length / STRIDE;
  }

  /** Series i's labels. */
  labels(i: number): Record<string, string> {
    const o = i * STRIDE;
    const bytes = this.#segments[this.#at[o]!]!;
    return JSON.parse(bytes.toString('utf8', this.#at[o + 1]!, this.#at[o + 2]!)) as Record<string, string>;
  }

  /** Series i's value of label `key`, or undefined when it has none. */
  label(i: number, key: LabelKey): string | undefined {
    const o = i * STRIDE;
    const bytes = this.#segments[this.#at[o]!]!;
    const end = this.#at[o + 2]!;
    const from = find(bytes, key.bytes, this.#at[o + 1]!, end);
    if (from < 0) return undefined;
    const to = next(bytes, QUOTE, from);
    if (to >= end) return undefined;
    return plainString(bytes, from, to) ?? this.labels(i)[key.name];
  }

  /** Series i's sample value as a number (as `Number` reads Prometheus' text), undefined when it has none. */
  value(i: number): number | undefined {
    const o = i * STRIDE;
    if (this.#at[o + 5]! < 0) return undefined;
    return Number(jsonString(this.#segments[this.#at[o]!]!, this.#at[o + 5]!, this.#at[o + 6]!));
  }

  /** Series i as Prometheus' parsed answer has it. */
  series(i: number): ParsedSample {
    const o = i * STRIDE;
    const metric = this.labels(i);
    if (this.#at[o + 5]! < 0) return { metric };
    const bytes = this.#segments[this.#at[o]!]!;
    const time = Number(bytes.toString('latin1', this.#at[o + 3]!, this.#at[o + 4]!));
    return { metric, value: [time, jsonString(bytes, this.#at[o + 5]!, this.#at[o + 6]!)] };
  }

  /** The series `keep` accepts (it reads each one's labels). */
  filter(keep: (labels: Record<string, string>) => boolean): Vector {
    const kept = new Int32Array(this.#at.length);
    let n = 0;
    for (let i = 0; i < this.length; i++)
      if (keep(this.labels(i))) for (let j = i * STRIDE; j < (i + 1) * STRIDE; j++) kept[n++] = this.#at[j]!;
    return new Vector(this.#segments, kept.subarray(0, n));
  }
}

/** The text of a JSON string's content [start, end) without escapes; undefined when it has one. */
function plainString(bytes: Buffer, start: number, end: number): string | undefined {
  for (let i = start; i < end; i++) if (bytes[i] === BACKSLASH) return undefined;
  return bytes.toString('utf8', start, end);
}

/** The text of the JSON string whose content is [start, end), quoted in `bytes`. */
const jsonString = (bytes: Buffer, start: number, end: number): string =>
  plainString(bytes, start, end) ?? (JSON.parse(bytes.toString('utf8', start - 1, end + 1)) as string);

/**
 * Where the value of the member `key` opens (just after `"name":"`) in the labels object [start, end),
 * or -1. A member's name starts after `{` or `,`; a `"` inside a string follows a `\`, so a label
 * value cannot fake one.
 */
function find(bytes: Buffer, key: Buffer, start: number, end: number): number {
  const last = end - key.length;
  outer: for (let i = start + 1; i <= last; i++) {
    if (bytes[i] !== QUOTE) continue;
    const before = bytes[i - 1];
    if (before !== BRACE_OPEN && before !== COMMA) continue;
    for (let j = 1; j < key.length; j++) if (bytes[i + j] !== key[j]) continue outer;
    return i + key.length;
  }
  return -1;
}

/** The first `byte` at or after `from`, or the end; a loop, as the scan asks for thousands of near ones. */
function next(bytes: Buffer, byte: number, from: number): number {
  let i = from;
  while (i < bytes.length && bytes[i] !== byte) i++;
  return i;
}

/** An Int32Array that grows as series are found. */
class Offsets {
  #array = new Int32Array(STRIDE * 256);
  #length = 0;

  push(segment: number, a: number, b: number, c: number, d: number, e: number, f: number): void {
    if (this.#length + STRIDE > this.#array.length) {
      const larger = new Int32Array(this.#array.length * 2);
      larger.set(this.#array);
      this.#array = larger;
    }
    const at = this.#array;
    const n = this.#length;
    at[n] = segment;
    at[n + 1] = a;
    at[n + 2] = b;
    at[n + 3] = c;
    at[n + 4] = d;
    at[n + 5] = e;
    at[n + 6] = f;
    this.#length = n + STRIDE;
  }

  done(): Int32Array {
    return this.#array.subarray(0, this.#length);
  }
}

const VECTOR_HEAD = Buffer.from('{"status":"success","data":{"resultType":"vector","result":[');
const SERIES_HEAD = Buffer.from('{"metric":{');
const VALUE_MEMBER = Buffer.from(',"value":[');
const SERIES_END = Buffer.from(']}');

/** What a scan of bytes that may end too early found. */
const MISMATCH = -1;
const INCOMPLETE = -2;

/** 1 when `prefix` stands at `at`, MISMATCH when not, INCOMPLETE when the bytes end before telling. */
function match(bytes: Buffer, prefix: Buffer, at: number): number {
  for (let i = 0; i < prefix.length; i++) {
    if (at + i >= bytes.length) return INCOMPLETE;
    if (bytes[at + i] !== prefix[i]) return MISMATCH;
  }
  return 1;
}

/**
 * Just after the labels object opening at `at` (`{"a":"b",…}`), MISMATCH or INCOMPLETE. It holds
 * strings only and, in an answer without an escape, a `"` always bounds one.
 */
function labelsEnd(bytes: Buffer, at: number): number {
  const n = bytes.length;
  let i = at + 1;
  if (i >= n) return INCOMPLETE;
  if (bytes[i] === BRACE_CLOSE) return i + 1;
  for (;;) {
    // "name":"value"
    if (i >= n) return INCOMPLETE;
    if (bytes[i] !== QUOTE) return MISMATCH;
    i = next(bytes, QUOTE, i + 1) + 1;
    if (i + 1 >= n) return INCOMPLETE;
    if (bytes[i] !== COLON || bytes[i + 1] !== QUOTE) return MISMATCH;
    i = next(bytes, QUOTE, i + 2) + 1;
    if (i >= n) return INCOMPLETE;
    if (bytes[i] === BRACE_CLOSE) return i + 1;
    if (bytes[i] !== COMMA) return MISMATCH;
    i++;
  }
}

/**
 * The series of a successful instant-vector answer, found in its bytes as they arrive (chunk by chunk,
 * never joined into one buffer or string): `push` each chunk, then `end()` gives the series, or
 * undefined when the answer holds an escape (`\`, rare in label values) or is not laid out as
 * Prometheus lays a vector out (a native histogram, another result type, an error), for the caller to
 * parse `chunks` whole. A series split between two chunks is copied into a small segment of its own.
 */
export class VectorScanner {
  /** Every chunk, for the parser when the answer is not a plain vector. */
  readonly chunks: Buffer[] = [];
  readonly #segments: Buffer[] = [];
  readonly #offsets = new Offsets();
  #state: 'head' | 'first' | 'series' | 'separator' | 'done' | 'failed' = 'head';
  /** The bytes not scanned yet: an unfinished series (or head) at the end of what came so far. */
  #carry: Buffer | undefined;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    if (this.#state === 'done' || this.#state === 'failed') return;
    if (chunk.indexOf(BACKSLASH) >= 0) {
      this.#state = 'failed';
      return;
    }
    let rest = chunk;
    if (this.#carry) {
      const cut = this.#cut(this.#carry, chunk);
      if (cut < 0) {
        this.#carry = Buffer.concat([this.#carry, chunk]);
        return;
      }
      const joined = Buffer.concat([this.#carry, chunk.subarray(0, cut)]);
      this.#carry = undefined;
      rest = chunk.subarray(cut);
      const stop = this.#scan(joined);
      if (stop < joined.length) {
        this.#carry = Buffer.concat([joined.subarray(stop), rest]);
        return;
      }
    }
    const stop = this.#scan(rest);
    if (stop < rest.length) this.#carry = rest.subarray(stop);
  }

  end(): Vector | undefined {
    return this.#state === 'done' ? new Vector(this.#segments, this.#offsets.done()) : undefined;
  }

  /**
   * Where in `chunk` the series the carried bytes begin ends (just after its `"]}`: a value's closing
   * quote, then the sample's and the series' closing), or -1 when not in this chunk.
   */
  #cut(carry: Buffer, chunk: Buffer): number {
    const last = carry[carry.length - 1];
    if (last === BRACKET_CLOSE && carry[carry.length - 2] === QUOTE && chunk[0] === BRACE_CLOSE) return 1;
    if (last === QUOTE && chunk[0] === BRACKET_CLOSE && chunk[1] === BRACE_CLOSE) return 2;
    for (let i = chunk.indexOf(SERIES_END); i >= 0; i = chunk.indexOf(SERIES_END, i + 1))
      if (i > 0 && chunk[i - 1] === QUOTE) return i + 2;
    return -1;
  }

  /** Scans `bytes` as far as whole series go; where it stopped (the end when all of it was read). */
  #scan(bytes: Buffer): number {
    const segment = this.#segments.length;
    this.#segments.push(bytes);
    const n = bytes.length;
    let at = 0;
    for (;;) {
      switch (this.#state) {
        case 'done':
        case 'failed':
          return n;
        case 'head': {
          const m = match(bytes, VECTOR_HEAD, at);
          if (m === INCOMPLETE) return at;
          if (m === MISMATCH) this.#state = 'failed';
          else {
            at += VECTOR_HEAD.length;
            this.#state = 'first';
          }
          break;
        }
        case 'first':
          if (at >= n) return at;
          if (bytes[at] === BRACKET_CLOSE) this.#state = 'done';
          else this.#state = 'series';
          break;
        case 'separator':
          if (at >= n) return at;
          if (bytes[at] === COMMA) {
            at++;
            this.#state = 'series';
          } else this.#state = bytes[at] === BRACKET_CLOSE ? 'done' : 'failed';
          break;
        case 'series': {
          const end = this.#series(bytes, at, segment);
          if (end === INCOMPLETE) return at;
          if (end === MISMATCH) this.#state = 'failed';
          else {
            at = end;
            this.#state = 'separator';
          }
          break;
        }
      }
    }
  }

  /** Just after the series at `at` (its offsets recorded), MISMATCH or INCOMPLETE. */
  #series(bytes: Buffer, at: number, segment: number): number {
    const n = bytes.length;
    const head = match(bytes, SERIES_HEAD, at);
    if (head !== 1) return head;
    const labelsStart = at + SERIES_HEAD.length - 1;
    const labelsStop = labelsEnd(bytes, labelsStart);
    if (labelsStop < 0) return labelsStop;
    const member = match(bytes, VALUE_MEMBER, labelsStop);
    if (member !== 1) return member;
    const timeStart = labelsStop + VALUE_MEMBER.length;
    const timeEnd = next(bytes, COMMA, timeStart);
    if (timeEnd + 1 >= n) return INCOMPLETE;
    if (timeEnd === timeStart || bytes[timeEnd + 1] !== QUOTE) return MISMATCH;
    const valueEnd = next(bytes, QUOTE, timeEnd + 2);
    if (valueEnd + 2 >= n) return INCOMPLETE;
    if (bytes[valueEnd + 1] !== BRACKET_CLOSE || bytes[valueEnd + 2] !== BRACE_CLOSE) return MISMATCH;
    this.#offsets.push(segment, labelsStart, labelsStop, timeStart, timeEnd, timeEnd + 2, valueEnd);
    return valueEnd + 3;
  }
}

/** indexVector over an answer in one piece. */
export function indexVector(bytes: Buffer): Vector | undefined {
  const scanner = new VectorScanner();
  scanner.push(bytes);
  return scanner.end();
}

/** A parsed answer's series as a Vector (the rare answers the scanner leaves to the parser). */
export function vectorOf(series: readonly ParsedSample[]): Vector {
  const parts: string[] = [];
  const offsets = new Offsets();
  let at = 0;
  const add = (text: string) => {
    parts.push(text);
    at += Buffer.byteLength(text);
  };
  for (const s of series) {
    const labelsStart = at;
    add(JSON.stringify(s.metric));
    const labelsEnd = at;
    if (!s.value) {
      offsets.push(0, labelsStart, labelsEnd, -1, -1, -1, -1);
      add(' ');
      continue;
    }
    const timeStart = at;
    add(String(s.value[0]));
    const timeEnd = at;
    add('"');
    const valueStart = at;
    add(JSON.stringify(s.value[1]).slice(1, -1));
    offsets.push(0, labelsStart, labelsEnd, timeStart, timeEnd, valueStart, at);
    add('" ');
  }
  return new Vector([Buffer.from(parts.join(''))], offsets.done());
}
