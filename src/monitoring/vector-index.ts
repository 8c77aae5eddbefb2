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
const BRACE_OPEN = 0x7b;
const BRACE_CLOSE = 0x7d;
const BRACKET_CLOSE = 0x5d;

/** Offsets kept per series: labels object [start, end), time [start, end), value's text [start, end). */
const STRIDE = 6;

/**
 * The series of one instant-vector answer, located in the answer's bytes rather than parsed: a ranking
 * reads one label of thousands of series and shows ten, so it holds six numbers per series (in one
 * typed array, outside the JavaScript heap) and decodes only what it is asked for.
 */
export class Vector {
  readonly length: number;
  readonly #bytes: Buffer;
  readonly #at: Int32Array;

  constructor(bytes: Buffer, offsets: Int32Array) {
    this.#bytes = bytes;
    this.#at = offsets;
    this.length = offsets.length / STRIDE;
  }

  /** Series i's labels. */
  labels(i: number): Record<string, string> {
    const o = i * STRIDE;
    return JSON.parse(this.#bytes.toString('utf8', this.#at[o]!, this.#at[o + 1]!)) as Record<string, string>;
  }

  /** Series i's value of label `key`, or undefined when it has none. */
  label(i: number, key: LabelKey): string | undefined {
    const o = i * STRIDE;
    const end = this.#at[o + 1]!;
    const from = find(this.#bytes, key.bytes, this.#at[o]!, end);
    if (from < 0) return undefined;
    const to = next(this.#bytes, QUOTE, from);
    if (to >= end) return undefined;
    return this.#string(from, to) ?? this.labels(i)[key.name];
  }

  /** Series i's sample value as a number (as `Number` reads Prometheus' text), undefined when it has none. */
  value(i: number): number | undefined {
    const o = i * STRIDE;
    if (this.#at[o + 4]! < 0) return undefined;
    return Number(
      this.#string(this.#at[o + 4]!, this.#at[o + 5]!) ?? this.#escaped(this.#at[o + 4]!, this.#at[o + 5]!),
    );
  }

  /** Series i as Prometheus' parsed answer has it. */
  series(i: number): ParsedSample {
    const o = i * STRIDE;
    const metric = this.labels(i);
    if (this.#at[o + 4]! < 0) return { metric };
    const time = Number(this.#bytes.toString('latin1', this.#at[o + 2]!, this.#at[o + 3]!));
    const start = this.#at[o + 4]!;
    const end = this.#at[o + 5]!;
    return { metric, value: [time, this.#string(start, end) ?? this.#escaped(start, end)] };
  }

  /** The series `keep` accepts (it reads each one's labels). */
  filter(keep: (labels: Record<string, string>) => boolean): Vector {
    const kept = new Int32Array(this.#at.length);
    let n = 0;
    for (let i = 0; i < this.length; i++)
      if (keep(this.labels(i))) for (let j = i * STRIDE; j < (i + 1) * STRIDE; j++) kept[n++] = this.#at[j]!;
    return new Vector(this.#bytes, kept.subarray(0, n));
  }

  /** The text of a JSON string's content [start, end) without escapes; undefined when it has one. */
  #string(start: number, end: number): string | undefined {
    for (let i = start; i < end; i++) if (this.#bytes[i] === BACKSLASH) return undefined;
    return this.#bytes.toString('utf8', start, end);
  }

  #escaped(start: number, end: number): string {
    return JSON.parse(this.#bytes.toString('utf8', start - 1, end + 1)) as string;
  }
}

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

/** An Int32Array that grows as series are found. */
class Offsets {
  #array = new Int32Array(STRIDE * 256);
  #length = 0;

  push(a: number, b: number, c: number, d: number, e: number, f: number): void {
    if (this.#length + STRIDE > this.#array.length) {
      const larger = new Int32Array(this.#array.length * 2);
      larger.set(this.#array);
      this.#array = larger;
    }
    const at = this.#array;
    const n = this.#length;
    at[n] = a;
    at[n + 1] = b;
    at[n + 2] = c;
    at[n + 3] = d;
    at[n + 4] = e;
    at[n + 5] = f;
    this.#length = n + STRIDE;
  }

  done(): Int32Array {
    return this.#array.subarray(0, this.#length);
  }
}

const VECTOR_HEAD = Buffer.from('{"status":"success","data":{"resultType":"vector","result":[');
const SERIES_HEAD = Buffer.from('{"metric":{');
const VALUE_MEMBER = Buffer.from(',"value":[');

function startsWith(bytes: Buffer, prefix: Buffer, at: number): boolean {
  if (at + prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

/** The first `byte` at or after `from`, or the end; a loop, as the scan asks for thousands of near ones. */
function next(bytes: Buffer, byte: number, from: number): number {
  let i = from;
  while (i < bytes.length && bytes[i] !== byte) i++;
  return i;
}

/**
 * Just after the labels object opening at `at` (`{"a":"b",…}`), or -1 when there is none. It holds
 * strings only and, in an answer without an escape, a `"` always bounds one.
 */
function labelsEnd(bytes: Buffer, at: number): number {
  let i = at + 1;
  if (bytes[i] === BRACE_CLOSE) return i + 1;
  for (;;) {
    // "name":"value"
    if (bytes[i] !== QUOTE) return -1;
    i = next(bytes, QUOTE, i + 1) + 1;
    if (bytes[i] !== 0x3a || bytes[i + 1] !== QUOTE) return -1;
    i = next(bytes, QUOTE, i + 2) + 1;
    if (bytes[i] === BRACE_CLOSE) return i + 1;
    if (bytes[i] !== COMMA) return -1;
    i++;
  }
}

/**
 * The series of a successful instant-vector answer, found in its bytes without parsing it; undefined
 * when the answer holds an escape (`\`, rare in label values) or is not laid out as Prometheus lays a
 * vector out (a native histogram, another result type, an error), for the caller to parse it whole.
 */
export function indexVector(bytes: Buffer): Vector | undefined {
  if (!startsWith(bytes, VECTOR_HEAD, 0) || bytes.indexOf(BACKSLASH) >= 0) return undefined;
  const offsets = new Offsets();
  let at = VECTOR_HEAD.length;
  if (bytes[at] === BRACKET_CLOSE) return new Vector(bytes, offsets.done());
  for (;;) {
    if (!startsWith(bytes, SERIES_HEAD, at)) return undefined;
    const labelsStart = at + SERIES_HEAD.length - 1;
    const labelsStop = labelsEnd(bytes, labelsStart);
    if (labelsStop < 0 || !startsWith(bytes, VALUE_MEMBER, labelsStop)) return undefined;
    const timeStart = labelsStop + VALUE_MEMBER.length;
    const timeEnd = next(bytes, COMMA, timeStart);
    if (timeEnd === timeStart || bytes[timeEnd + 1] !== QUOTE) return undefined;
    const valueEnd = next(bytes, QUOTE, timeEnd + 2);
    if (bytes[valueEnd + 1] !== BRACKET_CLOSE || bytes[valueEnd + 2] !== BRACE_CLOSE) return undefined;
    offsets.push(labelsStart, labelsStop, timeStart, timeEnd, timeEnd + 2, valueEnd);
    at = valueEnd + 3;
    if (bytes[at] === COMMA) at++;
    else return bytes[at] === BRACKET_CLOSE ? new Vector(bytes, offsets.done()) : undefined;
  }
}

/** A parsed answer's series as a Vector (the rare answers indexVector leaves to the parser). */
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
      offsets.push(labelsStart, labelsEnd, -1, -1, -1, -1);
      add(' ');
      continue;
    }
    const timeStart = at;
    add(String(s.value[0]));
    const timeEnd = at;
    add('"');
    const valueStart = at;
    add(JSON.stringify(s.value[1]).slice(1, -1));
    offsets.push(labelsStart, labelsEnd, timeStart, timeEnd, valueStart, at);
    add('" ');
  }
  return new Vector(Buffer.from(parts.join('')), offsets.done());
}
