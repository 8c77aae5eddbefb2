import { randomBytes } from 'node:crypto';
import { dailyIndex } from '../../src/log-query/index-names.ts';

/**
 * Log documents shaped as the log collector (fluent-bit's Elasticsearch output in Logstash format,
 * with the kubernetes filter) writes them, written with `_bulk` into daily `<prefix>-YYYY.MM.DD`
 * indices of the record's UTC day. No fluent-bit is available to tests, so this is the one stand-in.
 */

export interface LogLine {
  namespace: string;
  pod: string;
  container: string;
  /** Milliseconds since the epoch; the stored `time` adds `nanos` below the millisecond. */
  timeMs: number;
  /** Sub-millisecond part written into `time` (dockerd writes nanoseconds). */
  nanos?: number;
  log: string;
}

/** `2025-03-01T12:00:00.123456789Z`: the `time` string as the container runtime wrote it. */
export function runtimeTime(timeMs: number, nanos = 0): string {
  const iso = new Date(timeMs).toISOString(); // …ss.mmmZ
  return `${iso.slice(0, 23)}${String(nanos).padStart(6, '0')}Z`;
}

/** A stable 64-hex container id per (namespace, pod, container). */
export function containerId(line: Pick<LogLine, 'namespace' | 'pod' | 'container'>): string {
  let h = 0n;
  for (const c of `${line.namespace}/${line.pod}/${line.container}`)
    h = (h * 131n + BigInt(c.charCodeAt(0))) % (1n << 64n);
  return h.toString(16).padStart(16, '0').repeat(4);
}

export function fluentBitDocument(line: LogLine): Record<string, unknown> {
  return {
    '@timestamp': new Date(line.timeMs).toISOString(),
    log: line.log,
    time: runtimeTime(line.timeMs, line.nanos),
    kubernetes: {
      pod_name: line.pod,
      namespace_name: line.namespace,
      container_name: line.container,
      docker_id: containerId(line),
      container_image: `docker.io/library/${line.container}:1.0`,
    },
  };
}

async function storeCall(url: string, init: RequestInit): Promise<unknown> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : undefined;
}

/** Writes the lines with `_bulk` (refreshed before it returns). Throws when any document was refused. */
export async function seedLogs(storeUrl: string, prefix: string, lines: LogLine[]): Promise<void> {
  const chunkSize = 5000;
  for (let i = 0; i < lines.length; i += chunkSize) {
    const body =
      lines
        .slice(i, i + chunkSize)
        .flatMap((line) => [
          JSON.stringify({ create: { _index: dailyIndex(prefix, Math.floor(line.timeMs / 1000)) } }),
          JSON.stringify(fluentBitDocument(line)),
        ])
        .join('\n') + '\n';
    const result = (await storeCall(`${storeUrl}/_bulk?refresh=true`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-ndjson' },
      body,
    })) as { errors: boolean; items: unknown[] };
    if (result.errors)
      throw new Error(`bulk refused documents: ${JSON.stringify(result.items).slice(0, 1000)}`);
  }
}

/** Deletes every daily index of the prefix. */
export async function deleteLogs(storeUrl: string, prefix: string): Promise<void> {
  await storeCall(`${storeUrl}/${prefix}-*?expand_wildcards=all`, { method: 'DELETE' });
}

/** Search contexts (scroll cursors) open on the daily indices of a prefix. */
export async function openSearchContexts(storeUrl: string, prefix: string): Promise<number> {
  const stats = (await storeCall(`${storeUrl}/${prefix}-*/_stats/search`, { method: 'GET' })) as {
    _all: { total: { search: { open_contexts: number } } };
  };
  return stats._all.total.search.open_contexts;
}

/** An index prefix no other test uses. */
export function uniquePrefix(name: string): string {
  return `t-${name}-${randomBytes(3).toString('hex')}-log`;
}
