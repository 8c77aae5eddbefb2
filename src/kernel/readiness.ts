/**
 * Readiness of the process: ready when every registered check passes and it is not shutting down.
 * Caches register a check that turns true after their first full sync.
 */
export interface ReadinessReport {
  ready: boolean;
  checks: { name: string; ok: boolean; detail?: string }[];
}

/**
 * What a check answers: passing or not, optionally with a line for `/readyz?verbose` (e.g. a degradation
 * that does not, by choice, take the process out of service).
 */
export type ReadinessCheck = () => boolean | { ok: boolean; detail?: string };

export class Readiness {
  readonly #checks = new Map<string, ReadinessCheck>();
  #shuttingDown = false;

  register(name: string, check: ReadinessCheck): void {
    if (this.#checks.has(name)) throw new Error(`readiness check ${name} registered twice`);
    this.#checks.set(name, check);
  }

  markShuttingDown(): void {
    this.#shuttingDown = true;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  report(): ReadinessReport {
    const checks: ReadinessReport['checks'] = [...this.#checks].map(([name, check]) => {
      const outcome = check();
      return typeof outcome === 'boolean' ? { name, ok: outcome } : { name, ...outcome };
    });
    checks.push({ name: 'shutdown', ok: !this.#shuttingDown });
    return { ready: checks.every((c) => c.ok), checks };
  }
}
