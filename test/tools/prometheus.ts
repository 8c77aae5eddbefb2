import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./build-prometheus.sh', import.meta.url));

/**
 * Path of the pinned Prometheus server, building it from the Go module proxy if it is not cached yet.
 * Throws (never skips) when Go is missing or the build fails.
 */
export function prometheusPath(): string {
  try {
    return execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  } catch (err) {
    throw new Error(`cannot build prometheus (${script}): ${(err as Error).message}`, { cause: err });
  }
}
