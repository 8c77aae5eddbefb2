/**
 * Readiness of the process: ready when every registered check passes and it is not shutting down.
 * Caches register a check that turns true after their first full sync.
 */
export interface ReadinessReport {
  ready: boolean;
  checks: { name: string; ok: boolean }[];
}

export class Readiness {
  readonly #checks = new Map<string, () => boolean>();
  #shuttingDown = false;

  register(name: string, check: () => boolean): void {
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
    const checks = [...this.#checks].map(([name, check]) => ({ name, ok: check() }));
    checks.push({ name: 'shutdown', ok: !this.#shuttingDown });
    return { ready: checks.every((c) => c.ok), checks };
  }
}
