import type { AccessLogSettings } from '../config/config.ts';

/**
 * Which requests get an access log line. In the spirit of the kube-apiserver's audit levels: what an
 * operator must be able to reconstruct (errors, authentication events, changes, slow or broken requests)
 * is always written; routine successful reads and probes — the bulk of the traffic and of the volume —
 * can be sampled or dropped.
 */
export type { AccessLogSettings } from '../config/config.ts';

/** What the policy looks at: a finished request as the access log sees it. */
export interface AccessRecord {
  method: string;
  status: number;
  durationMs: number;
  /** The response was sent whole (false: the client went away or the stream broke). */
  completed: boolean;
}

/**
 * The decision for one request: undefined to drop it; otherwise the number of routine requests the line
 * stands for (1 for every line written unconditionally, `sampleEvery` for a sampled one), so counts can be
 * scaled back up.
 */
export type AccessLogPolicy = (record: AccessRecord) => number | undefined;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Routine: a safe method answered with a success or redirect (304 included), whole and in time. Everything
 * else — 4xx (401 and 403 are authentication and authorisation events), 5xx, every write (logins, token
 * refreshes and revocations are POSTs; so are changes through the Kubernetes proxy), slow and aborted
 * requests — is exceptional.
 */
export function isRoutine(record: AccessRecord, slowMs: number): boolean {
  return (
    SAFE_METHODS.has(record.method) && record.status < 400 && record.completed && record.durationMs < slowMs
  );
}

/** A policy from the settings. Sampling is by count (one in N, deterministic), not by chance. */
export function accessLogPolicy(settings: AccessLogSettings): AccessLogPolicy {
  if (settings.mode === 'all') return () => 1;
  const every = Math.max(1, Math.floor(settings.sampleEvery));
  let routineSeen = 0;
  return (record) => {
    if (!isRoutine(record, settings.slowMs)) return 1;
    if (settings.mode === 'exceptions') return undefined;
    routineSeen = (routineSeen + 1) % every;
    return routineSeen === 1 % every ? every : undefined;
  };
}
