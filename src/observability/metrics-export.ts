import { AggregatorRegistry, type Registry } from 'prom-client';

/** One registry's metrics as prom-client's JSON: what another thread sends to be exported here. */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;
export type MetricsSource = () => Promise<MetricsSnapshot>;

/**
 * What /metrics answers: this process's registry, plus the registries of its other threads (the login
 * thread's), merged series by series. A counter or histogram counted in two threads is exported once, as
 * their sum, so the process reads as one replica; a source that cannot answer (within `sourceTimeoutMs`: a
 * thread stuck in a loop must not hang the scrape) leaves only its own series out.
 */
export class MetricsExport {
  readonly #registry: Registry;
  readonly #sources = new Set<MetricsSource>();
  readonly #sourceTimeoutMs: number;

  constructor(registry: Registry, options: { sourceTimeoutMs?: number } = {}) {
    this.#registry = registry;
    this.#sourceTimeoutMs = options.sourceTimeoutMs ?? 2000;
  }

  get contentType(): string {
    return this.#registry.contentType;
  }

  /** Adds a thread's metrics; the returned function removes them again. */
  add(source: MetricsSource): () => void {
    this.#sources.add(source);
    return () => this.#sources.delete(source);
  }

  async text(): Promise<string> {
    if (this.#sources.size === 0) return this.#registry.metrics();
    const snapshots = await Promise.all([
      this.#registry.getMetricsAsJSON(),
      ...[...this.#sources].map((source) => this.#within(source())),
    ]);
    return AggregatorRegistry.aggregate(snapshots).metrics();
  }

  #within(snapshot: Promise<MetricsSnapshot>): Promise<MetricsSnapshot> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<MetricsSnapshot>((resolve) => {
      timer = setTimeout(() => resolve([]), this.#sourceTimeoutMs);
    });
    return Promise.race([snapshot.catch((): MetricsSnapshot => []), late]).finally(() => clearTimeout(timer));
  }
}
