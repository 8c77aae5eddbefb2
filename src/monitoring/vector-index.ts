/** A series as Prometheus' parsed answer has it (prometheus-client.ts's ParsedSample, which reads this module). */
interface ParsedSample {
  metric: Record<string, string>;
  value?: [number, string];
}

/**
 * One series of an instant vector as Prometheus wrote it: its labels still as JSON text (parsed only
 * for the rows an answer shows) and its sample.
 */
export interface IndexedSample {
  /** The labels object, `{…}`, as it stands in Prometheus' answer. */
  labelsJson: string;
  value?: [number, string];
}

const VECTOR_HEAD = '{"status":"success","data":{"resultType":"vector","result":[';
const SERIES_HEAD = '{"metric":';
const LABELS_END = '},"value":[';

/**
 * The series of a successful instant-vector answer, found in its text without parsing it whole (a
 * ranking reads two labels of thousands of series and shows ten); undefined when the text is not laid
 * out as Prometheus lays a vector out (a native histogram, another result type, an error), for the
 * caller to parse it whole. The markers searched for start or end with a bare `"` or `}`, which inside
 * a JSON string are always escaped or quoted, so a label value cannot fake one.
 */
export function indexVector(text: string): IndexedSample[] | undefined {
  if (!text.startsWith(VECTOR_HEAD)) return undefined;
  const samples: IndexedSample[] = [];
  let at = VECTOR_HEAD.length;
  if (text[at] === ']') return samples;
  for (;;) {
    if (!text.startsWith(SERIES_HEAD, at)) return undefined;
    const labelsEnd = text.indexOf(LABELS_END, at + SERIES_HEAD.length);
    if (labelsEnd < 0) return undefined;
    const timeStart = labelsEnd + LABELS_END.length;
    const timeEnd = text.indexOf(',"', timeStart);
    const valueEnd = text.indexOf('"]}', timeEnd + 2);
    if (timeEnd < 0 || valueEnd < 0) return undefined;
    const time = Number(text.slice(timeStart, timeEnd));
    if (Number.isNaN(time)) return undefined;
    samples.push({
      labelsJson: text.slice(at + SERIES_HEAD.length, labelsEnd + 1),
      value: [time, text.slice(timeEnd + 2, valueEnd)],
    });
    at = valueEnd + 3;
    if (text[at] === ',') at++;
    else return text[at] === ']' ? samples : undefined;
  }
}

/** The value of label `name` (a plain label name), or undefined when the series has none. */
export function labelOf(sample: IndexedSample, name: string): string | undefined {
  const key = `"${name}":"`;
  const at = sample.labelsJson.indexOf(key);
  if (at < 0) return undefined;
  const from = at + key.length;
  const value = sample.labelsJson.slice(from, sample.labelsJson.indexOf('"', from));
  // An escape in the value: let the JSON parser read it.
  return value.includes('\\') ? labelsOf(sample)[name] : value;
}

export const labelsOf = (sample: IndexedSample): Record<string, string> =>
  JSON.parse(sample.labelsJson) as Record<string, string>;

/** The series as a parsed answer has it. */
export function seriesOf(sample: IndexedSample): ParsedSample {
  return sample.value ? { metric: labelsOf(sample), value: sample.value } : { metric: labelsOf(sample) };
}

/** Series of a parsed answer as indexed ones (the rare answers indexVector leaves to the parser). */
export const indexedOf = (series: ParsedSample): IndexedSample =>
  series.value
    ? { labelsJson: JSON.stringify(series.metric), value: series.value }
    : { labelsJson: JSON.stringify(series.metric) };
