import type { ServerResponse } from 'node:http';
import type { Logger } from '../observability/logger.ts';
import { indicesFor } from './index-names.ts';
import type { LogFilter, SortOrder } from './log-query.ts';
import { LogStoreError, type LogStore } from './log-store.ts';
import type { LoggingMetrics } from './logging-metrics.ts';
import { exportBody, type SearchResponseBody } from './store-query.ts';

/**
 * The export operation: every matching log line as a streamed text/plain attachment, read from the
 * store page by page through a scroll cursor. At most one page is held in memory; writing waits for
 * the client to take what was sent (back-pressure); the cursor is released on the store when the
 * export ends for any reason — done, capped, failed, or the client went away.
 */

export const EXPORT_PAGE_SIZE = 1000;
const SCROLL_KEEP_ALIVE = '1m';

export type ExportOutcome = 'completed' | 'capped' | 'aborted' | 'failed';

/** ANSI escape sequences (colours, cursor movement, OSC titles): terminal noise in a downloaded file. */
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

export interface ExportOptions {
  store: LogStore;
  indexPrefix: string;
  filter: LogFilter;
  sort: SortOrder;
  maxLines: number;
  pageSize?: number;
  metrics: Pick<LoggingMetrics, 'exports' | 'exportLines'>;
  logger: Logger;
}

/**
 * Streams the export to `res`. Errors before the first byte (the store is down, the query is refused)
 * are thrown for the error handler; after that, a failure cuts the response off so the client sees an
 * incomplete transfer rather than a file that looks whole.
 */
export async function exportLogs(res: ServerResponse, options: ExportOptions): Promise<ExportOutcome> {
  const { store, filter, maxLines, metrics, logger } = options;
  const pageSize = Math.min(options.pageSize ?? EXPORT_PAGE_SIZE, maxLines);
  const gone = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) gone.abort();
  };
  res.on('close', onClose);

  let scrollId: string | undefined;
  let lines = 0;
  let outcome: ExportOutcome;
  try {
    let page: SearchResponseBody = await store.search(
      {
        indices: indicesFor(options.indexPrefix, filter.startTimeSeconds, filter.endTimeSeconds),
        body: exportBody(filter, options.sort, pageSize),
        scroll: SCROLL_KEEP_ALIVE,
      },
      gone.signal,
    );
    scrollId = page._scroll_id;
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('Content-Disposition', 'attachment');
    res.setHeader('Cache-Control', 'no-store');
    res.flushHeaders();

    for (;;) {
      const hits = page.hits?.hits ?? [];
      let chunk = '';
      for (const hit of hits) {
        if (lines >= maxLines) break;
        const log = hit._source?.log;
        if (typeof log !== 'string') continue;
        const line = stripAnsi(log);
        chunk += line.endsWith('\n') ? line : `${line}\n`;
        lines++;
      }
      if (chunk && !res.write(chunk)) await drained(res);
      if (gone.signal.aborted) {
        outcome = 'aborted';
        break;
      }
      if (lines >= maxLines) {
        outcome = 'capped';
        break;
      }
      if (hits.length < pageSize || !scrollId) {
        outcome = 'completed';
        break;
      }
      page = await store.scroll(scrollId, SCROLL_KEEP_ALIVE, gone.signal);
      scrollId = page._scroll_id ?? scrollId;
    }
    if (outcome !== 'aborted') res.end();
  } catch (err) {
    if (gone.signal.aborted || (err instanceof LogStoreError && err.failure === 'aborted')) {
      outcome = 'aborted';
    } else if (!res.headersSent) {
      throw err;
    } else {
      outcome = 'failed';
      logger.error('log export failed part-way', { lines, error: (err as Error).message });
      res.destroy(err as Error);
    }
  } finally {
    res.off('close', onClose);
    metrics.exportLines.inc(lines);
    if (scrollId) {
      const id = scrollId;
      // Released even when the client is gone; a failure here only costs the store one cursor until keep-alive.
      await store.clearScroll(id).catch((err: Error) => {
        logger.warn('could not release the export cursor on the log store', { error: err.message });
      });
    }
  }
  metrics.exports.inc({ outcome });
  return outcome;
}

/** Resolves when the response can take more data, or when the client has gone away. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
