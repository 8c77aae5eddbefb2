import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A full collection that also gives the freed pages back to the system. */
export type MemoryReleasingCollection = () => void;

interface ExposedGc {
  (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }): void;
}

/**
 * V8's collector in its "last resort" flavour: a full mark-compact that compacts aggressively and releases
 * the pages it freed (a regular full collection keeps them pooled for reuse, and the process's RSS with
 * them). Node gives no API for it, so `gc` is exposed by the flag at run time, which affects only
 * contexts created afterwards: the one made here, not the main context's global. Undefined when the
 * runtime refuses.
 */
export function memoryReleasingCollection(): MemoryReleasingCollection | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('typeof gc === "function" ? gc : undefined') as ExposedGc | undefined;
    if (!gc) return undefined;
    return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } catch {
    return undefined;
  }
}

export interface StartUpMemoryOptions {
  /** Whether every cache has synced (the process's readiness, shutdown aside). */
  isReady: () => boolean;
  collect: MemoryReleasingCollection | undefined;
  logger: { info(message: string, fields: object): void };
  /** Called once the collection is done (or, without one, once the process is ready): work that waits for it starts. */
  onReleased?: () => void;
  /** How often readiness is looked at until it holds. */
  pollMs?: number;
  rssBytes?: () => number;
}

/**
 * Once the caches have made their first sync, one memory-releasing collection. The initial LISTs are the
 * largest allocation burst of the process's life (at 50,000 pods, some 280 MB of JSON parsed within
 * seconds); what survives is a small fraction of it, but V8 keeps the freed pages, so without this the
 * process would carry the burst's footprint for its whole life (docs/benchmarks.md, pod cache). The pause
 * (tens of milliseconds) comes once, as the process turns ready. Work that would add its own start-up burst
 * to this one (the login thread) waits for `onReleased`. Returns a function that cancels the wait.
 */
export function releaseStartUpMemory(options: StartUpMemoryOptions): () => void {
  const { collect, logger } = options;
  const rss = options.rssBytes ?? (() => process.memoryUsage.rss());
  const timer = setInterval(() => {
    if (!options.isReady()) return;
    clearInterval(timer);
    if (collect) {
      const before = rss();
      const started = performance.now();
      collect();
      const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
      logger.info('start-up memory released', {
        rssBeforeMb: mb(before),
        rssAfterMb: mb(rss()),
        pauseMs: Math.round(performance.now() - started),
      });
    }
    options.onReleased?.();
  }, options.pollMs ?? 200);
  // Never what keeps the process alive.
  timer.unref();
  return () => clearInterval(timer);
}
