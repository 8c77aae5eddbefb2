/** What this needs of a logger: one level. */
export interface WarningLog {
  warn(message: string, fields: object): void;
}

/**
 * Sends Node's process warnings (a dependency's deprecated call, an experimental feature) to the
 * structured log as one JSON line each. Node's own listener prints them to stderr as plain text, which a
 * collector reading the server's JSON lines cannot parse; it is replaced, not joined, so each warning is
 * said once. Under `--no-warnings` Node installs no listener, and none is added: the operator asked for
 * silence. Node already says each deprecation once per process.
 */
export function logProcessWarnings(logger: WarningLog, proc: NodeJS.EventEmitter = process): void {
  const printers = proc.listeners('warning');
  if (printers.length === 0) return;
  for (const printer of printers) proc.off('warning', printer as (warning: Error) => void);
  proc.on('warning', (warning: Error & { code?: string }) => {
    logger.warn('process warning', {
      warning: warning.name,
      ...(warning.code ? { code: warning.code } : {}),
      detail: warning.message,
    });
  });
}
