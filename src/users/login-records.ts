import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';
import type { Logger } from '../observability/logger.ts';
import type { IamApi } from './iam-api.ts';

/** The original's `LoginRecord` (cluster-scoped `loginrecords.iam.<platform>.io`). */
export interface LoginRecordObject extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string };
  spec: {
    /** `Token` for the password grant, as the original writes it. */
    type: 'Token' | 'Password' | 'OAuth';
    provider: string;
    sourceIP?: string;
    userAgent?: string;
    success: boolean;
    reason: string;
  };
}

export interface LoginEvent {
  username: string;
  success: boolean;
  /** The original's texts: `authenticated successfully`, `incorrect password`. */
  reason: string;
  sourceIP: string | undefined;
  userAgent: string | undefined;
}

/**
 * The original's retention defaults (loginHistoryRetentionPeriod 168h, loginHistoryMaximumEntries 100),
 * and how often a replica runs the pass for a user: after its first record of the user, then every
 * `passEvery`-th. The pass lists all the user's records; run at every login it cost the kube-apiserver
 * more than the record itself.
 */
export const RECORD_RETENTION = { maxAgeMs: 168 * 3600 * 1000, maxPerUser: 100, passEvery: 10 };

/** The label naming a record's user, as the original sets it. */
export function userRefLabel(api: IamApi): string {
  return `${api.iam.group}/user-ref`;
}

/**
 * Writes the original's LoginRecord objects for logins of known users (when that CRD exists), and keeps
 * the original's retention: records older than a week are deleted, and at most 100 per user are kept
 * (checked at every `passEvery`-th record: in between, up to `passEvery - 1` more per replica).
 * Writes happen after the answer (a login never waits for its record); per user they run one at a time.
 */
export class LoginRecordWriter {
  readonly #api: IamApi;
  readonly #enabled: () => boolean;
  readonly #logger: Logger;
  readonly #onFailure: () => void;
  readonly #nowMs: () => number;
  readonly #queues = new Map<string, Promise<void>>();
  /** Records written per user since this replica's last retention pass for that user. */
  readonly #sincePass = new Map<string, number>();

  constructor(deps: {
    api: IamApi;
    enabled: () => boolean;
    logger: Logger;
    onFailure: () => void;
    nowMs?: () => number;
  }) {
    this.#api = deps.api;
    this.#enabled = deps.enabled;
    this.#logger = deps.logger;
    this.#onFailure = deps.onFailure;
    this.#nowMs = deps.nowMs ?? Date.now;
  }

  /** Resolves when the record (and the retention pass) is written or has failed (counted, logged). */
  record(event: LoginEvent): Promise<void> {
    if (!this.#enabled()) return Promise.resolve();
    const previous = this.#queues.get(event.username) ?? Promise.resolve();
    const run = previous.then(() => this.#write(event));
    this.#queues.set(event.username, run);
    void run.then(() => {
      if (this.#queues.get(event.username) === run) this.#queues.delete(event.username);
    });
    return run;
  }

  async #write(event: LoginEvent): Promise<void> {
    try {
      const label = userRefLabel(this.#api);
      const body = {
        apiVersion: `${this.#api.iam.group}/${this.#api.iam.version}`,
        kind: 'LoginRecord',
        metadata: {
          name: '',
          generateName: `${event.username.slice(0, 200)}-`,
          labels: { [label]: labelValue(event.username) },
        },
        spec: {
          type: 'Token',
          provider: '',
          success: event.success,
          reason: event.reason,
          ...(event.sourceIP ? { sourceIP: normalizeIp(event.sourceIP) } : {}),
          ...(event.userAgent ? { userAgent: event.userAgent.slice(0, 1024) } : {}),
        },
      } satisfies LoginRecordObject;
      await this.#api.create('loginrecords', body);
      const since = this.#sincePass.get(event.username);
      if (since === undefined || since + 1 >= RECORD_RETENTION.passEvery) {
        this.#sincePass.set(event.username, 0);
        await this.#retain(event.username);
      } else this.#sincePass.set(event.username, since + 1);
    } catch (err) {
      this.#onFailure();
      this.#logger.error('could not write a login record', { user: event.username, error: String(err) });
    }
  }

  /** The original's retention for one user: too old, then beyond the count (oldest first). */
  async #retain(username: string): Promise<void> {
    // From the kube-apiserver's watch cache: no etcd read, and the pass only bounds how many records pile
    // up (a record a moment too new to be listed is counted at the next pass).
    const records = await this.list(username, { fromWatchCache: true });
    const cutoff = this.#nowMs() - RECORD_RETENTION.maxAgeMs;
    const newestFirst = [...records].sort((a, b) => createdMs(b) - createdMs(a));
    const doomed = newestFirst.filter((r, i) => i >= RECORD_RETENTION.maxPerUser || createdMs(r) < cutoff);
    for (const record of doomed) await this.#api.delete('loginrecords', record.metadata.name);
  }

  /** The user's records (by the user-ref label), straight from the kube-apiserver (see IamApi.list). */
  async list(username: string, options: { fromWatchCache?: boolean } = {}): Promise<LoginRecordObject[]> {
    return this.#api.list<LoginRecordObject>(
      'loginrecords',
      `${userRefLabel(this.#api)}=${labelValue(username)}`,
      options,
    );
  }
}

function createdMs(record: LoginRecordObject): number {
  return Date.parse(String(record.metadata.creationTimestamp ?? '')) || 0;
}

/** A label value holds at most 63 characters; longer names (rare) are cut, as a label can carry no more. */
function labelValue(username: string): string {
  return username.slice(0, 63).replace(/[^A-Za-z0-9]+$/, '');
}

/** As the original: `::1` is shown as 127.0.0.1, and IPv4-mapped IPv6 addresses as IPv4. */
function normalizeIp(ip: string): string {
  if (ip === '::1') return '127.0.0.1';
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}
