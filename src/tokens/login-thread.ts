import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Counter } from 'prom-client';
import type { CredentialsData } from '../cluster/handed-credentials.ts';
import { materialKey } from '../cluster/upstream-agent.ts';
import type { Logger } from '../observability/logger.ts';
import type { MetricsSnapshot } from '../observability/metrics-export.ts';
import {
  receivedApiError,
  type FromLoginThread,
  type GrantRequest,
  type LoginWorkerData,
  type ToLoginThread,
} from './login-messages.ts';
import { oauthError } from './oauth-request.ts';
import type { TokenResponse } from './oauth-service.ts';

/** The worker's entry beside this file: `.ts` when run from source, `.js` when built. */
export const LOGIN_WORKER_ENTRY = new URL(
  `./login-worker${extname(fileURLToPath(import.meta.url))}`,
  import.meta.url,
);

interface Pending {
  resolve(value: never): void;
  reject(err: unknown): void;
}

const unavailable = () =>
  oauthError('Unavailable', 'temporarily_unavailable', 'logins cannot be admitted right now; retry', {
    retryAfterSeconds: 1,
  });

/**
 * The password grant, served by a worker thread with its own watches of users and sessions, its own
 * kube-apiserver connections and its own admission ledger. A login's writes (the ledger's reservation and
 * settlement, the session, the login record) and their answers are parsed and built there, so a login
 * storm leaves the main thread free for the other routes. A thread that dies is started again (with a
 * growing delay); its logins in flight are answered 503 `temporarily_unavailable`. Until it is ready the
 * caller serves logins itself (tokens-module.ts).
 *
 * The thread does not load the Kubernetes client library (about 60 MB a thread): it is handed the main
 * thread's credentials as data when it starts, and again whenever they change (a renewed token, a rotated
 * certificate), looked at every `credentialsRefreshMs`. A kubeconfig that cannot be handed over (a proxy)
 * leaves the thread unstarted and the logins on the main thread.
 */
export class LoginThread {
  readonly #entry: URL;
  readonly #workerData: Omit<LoginWorkerData, 'credentials'>;
  readonly #credentials: () => Promise<CredentialsData>;
  readonly #credentialsRefreshMs: number;
  #credentialsTimer: NodeJS.Timeout | undefined;
  #sentCredentials = '';
  readonly #env: Record<string, string>;
  readonly #logger: Logger;
  readonly #restarts: Counter | undefined;
  readonly #stopTimeoutMs: number;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  #nextId = 1;
  #ready = false;
  #stopping = false;
  #restartDelayMs: number;
  readonly #firstRestartDelayMs: number;
  #restartTimer: NodeJS.Timeout | undefined;
  #exited: Promise<void> = Promise.resolve();

  constructor(deps: {
    workerData: Omit<LoginWorkerData, 'credentials'>;
    /** The main thread's credentials for the kube-apiserver as they are now. */
    credentials: () => Promise<CredentialsData>;
    credentialsRefreshMs?: number;
    env: Readonly<Record<string, string | undefined>>;
    logger: Logger;
    restarts?: Counter;
    entry?: URL;
    restartDelayMs?: number;
    stopTimeoutMs?: number;
  }) {
    this.#entry = deps.entry ?? LOGIN_WORKER_ENTRY;
    this.#workerData = deps.workerData;
    this.#credentials = deps.credentials;
    this.#credentialsRefreshMs = deps.credentialsRefreshMs ?? 10_000;
    this.#env = Object.fromEntries(
      Object.entries(deps.env).filter((e): e is [string, string] => e[1] !== undefined),
    );
    this.#logger = deps.logger;
    this.#restarts = deps.restarts;
    this.#firstRestartDelayMs = deps.restartDelayMs ?? 1000;
    this.#restartDelayMs = this.#firstRestartDelayMs;
    this.#stopTimeoutMs = deps.stopTimeoutMs ?? 15_000;
  }

  /** True once the thread's caches have synced, until it stops or dies. */
  get ready(): boolean {
    return this.#ready;
  }

  start(): void {
    if (this.#stopping) return;
    void this.#spawn();
    this.#credentialsTimer = setInterval(() => void this.#refreshCredentials(), this.#credentialsRefreshMs);
    this.#credentialsTimer.unref();
  }

  passwordGrant(request: GrantRequest): Promise<TokenResponse> {
    return this.#ask({ type: 'grant', id: 0, request });
  }

  /** The thread's metrics, to be exported with the main thread's. */
  metrics(): Promise<MetricsSnapshot> {
    return this.#ask({ type: 'metrics', id: 0 });
  }

  /** Lets the logins in flight finish and the thread write what it holds (settlements, login times). */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#restartTimer);
    clearInterval(this.#credentialsTimer);
    const worker = this.#worker;
    if (!worker) return;
    this.#ready = false;
    worker.postMessage({ type: 'stop' } satisfies ToLoginThread);
    const deadline = setTimeout(() => {
      this.#logger.warn('login thread did not stop in time; terminating it', {
        timeoutMs: this.#stopTimeoutMs,
      });
      void worker.terminate();
    }, this.#stopTimeoutMs);
    await this.#exited;
    clearTimeout(deadline);
  }

  #ask<T>(message: Extract<ToLoginThread, { id: number }>): Promise<T> {
    const worker = this.#worker;
    if (!worker || this.#stopping) return Promise.reject(unavailable());
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: never) => void, reject });
      worker.postMessage({ ...message, id });
    });
  }

  async #spawn(): Promise<void> {
    const credentials = await this.#readCredentials(
      'error',
      'login thread not started: the credentials cannot be handed to it; logins stay on the main thread',
    );
    if (!credentials || this.#stopping) return;
    this.#sentCredentials = materialKey(credentials);
    // Named, so that the thread is found by its name in /proc/<pid>/task (login-writes.bench.ts).
    const worker = new Worker(this.#entry, {
      name: 'login-thread',
      workerData: { ...this.#workerData, credentials } satisfies LoginWorkerData,
      env: this.#env,
    });
    this.#worker = worker;
    worker.on('message', (message: FromLoginThread) => this.#receive(message));
    worker.on('error', (err) => this.#logger.error('login thread failed', { error: String(err) }));
    this.#exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        this.#worker = undefined;
        this.#ready = false;
        for (const pending of this.#pending.values()) pending.reject(unavailable());
        this.#pending.clear();
        resolve();
        if (this.#stopping) return;
        this.#logger.error('login thread exited; starting it again', {
          code,
          restartInMs: this.#restartDelayMs,
        });
        this.#restarts?.inc();
        this.#restartTimer = setTimeout(() => void this.#spawn(), this.#restartDelayMs);
        this.#restartTimer.unref();
        this.#restartDelayMs = Math.min(this.#restartDelayMs * 2, 30_000);
      });
    });
  }

  /** Sends the credentials again when they changed since they were last sent. */
  async #refreshCredentials(): Promise<void> {
    if (!this.#worker || this.#stopping) return;
    const credentials = await this.#readCredentials(
      'warn',
      'cannot read the credentials to hand to the login thread',
    );
    if (!credentials) return;
    const key = materialKey(credentials);
    const worker = this.#worker;
    if (!worker || this.#stopping || key === this.#sentCredentials) return;
    this.#sentCredentials = key;
    worker.postMessage({ type: 'credentials', credentials } satisfies ToLoginThread);
  }

  /** The credentials as they are now; undefined (and a log line) when they cannot be read. */
  async #readCredentials(level: 'error' | 'warn', message: string): Promise<CredentialsData | undefined> {
    try {
      return await this.#credentials();
    } catch (err) {
      this.#logger[level](message, { error: err instanceof Error ? err.message : String(err) });
      return undefined;
    }
  }

  #receive(message: FromLoginThread): void {
    switch (message.type) {
      case 'ready':
        this.#ready = !this.#stopping;
        this.#restartDelayMs = this.#firstRestartDelayMs;
        return;
      case 'granted':
        this.#settle(message.id, (p) => p.resolve(message.response as never));
        return;
      case 'metrics':
        this.#settle(message.id, (p) => p.resolve(message.snapshot as never));
        return;
      case 'refused':
        this.#settle(message.id, (p) => p.reject(receivedApiError(message.error)));
        return;
      case 'failed':
        // The thread logged the cause; the caller gets the 500 an unexpected error gets on the main thread.
        this.#settle(message.id, (p) => p.reject(new Error('the login thread could not serve the login')));
        return;
    }
  }

  #settle(id: number, settle: (pending: Pending) => void): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    settle(pending);
  }
}
