// The login thread (src/tokens/login-thread.ts starts it): the password grant over watches of its own, on
// the credentials the main thread hands over (no Kubernetes client library here: it would cost ~60 MB).
import { Registry } from 'prom-client';
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { createCacheMetrics } from '../cluster/cache-metrics.ts';
import { HandedCredentials } from '../cluster/handed-credentials.ts';
import { memoryReleasingCollection, releaseStartUpMemory } from '../kernel/start-up-memory.ts';
import { ApiError } from '../kernel/api-error.ts';
import { bufferedStdout } from '../observability/buffered-output.ts';
import { createLogger, createRequestContextStore } from '../observability/logger.ts';
import { gauge } from '../observability/metrics.ts';
import { upstreamRequestDuration } from '../observability/upstream-metrics.ts';
import { createUserAccounts } from '../users/users-module.ts';
import {
  sentApiError,
  type FromLoginThread,
  type LoginWorkerData,
  type ToLoginThread,
} from './login-messages.ts';
import { composeOAuth } from './oauth-composition.ts';

const port = parentPort;
if (!port) throw new Error('login-worker.ts runs as a worker thread (src/tokens/login-thread.ts)');
const { config, keys, credentials: handed } = workerData as LoginWorkerData;

const requestContext = createRequestContextStore();
const output = bufferedStdout();
const logger = createLogger({ level: config.log.level, context: requestContext, stream: output }).child({
  thread: 'login',
});
// No default metrics: they describe the process, and the main thread exports them.
const registry = new Registry();
// Except the thread's own heap, which the process's nodejs_heap_* families (the main thread's) leave out.
gauge(registry, {
  name: 'platform_login_thread_heap_bytes',
  help: "The login thread's V8 heap: used (live and not yet collected) and total (reserved).",
  labelNames: ['state'],
  collect: (g) => {
    const heap = getHeapStatistics();
    g.set({ state: 'used' }, heap.used_heap_size);
    g.set({ state: 'total' }, heap.total_heap_size);
  },
});
const credentials = new HandedCredentials(handed, upstreamRequestDuration(registry));
// Its caches are labelled apart from the main thread's caches of the same kinds.
const cacheMetrics = createCacheMetrics(registry, { kindPrefix: 'login-thread/' });
const accounts = createUserAccounts({ config, logger, registry, credentials, cacheMetrics });
const oauth = await composeOAuth({
  config,
  logger,
  registry,
  cacheMetrics,
  accounts,
  keys,
  reportsSessions: false,
});

const send = (message: FromLoginThread) => port.postMessage(message);
const inFlight = new Set<Promise<unknown>>();
let stopping = false;

port.on('message', (message: ToLoginThread) => {
  switch (message.type) {
    case 'grant': {
      const { id, request } = message;
      const grant = requestContext
        .run({ requestId: request.requestId ?? '' }, () => oauth.service.passwordGrant(request.attempt))
        .then(
          (response) => send({ type: 'granted', id, response }),
          (err: unknown) => {
            if (err instanceof ApiError) {
              send({ type: 'refused', id, error: sentApiError(err) });
              return;
            }
            logger.error('password grant failed', { error: String(err) });
            send({ type: 'failed', id });
          },
        )
        .finally(() => inFlight.delete(grant));
      inFlight.add(grant);
      return;
    }
    case 'credentials':
      credentials.update(message.credentials);
      return;
    case 'metrics':
      void registry
        .getMetricsAsJSON()
        .then((snapshot) => send({ type: 'metrics', id: message.id, snapshot }));
      return;
    case 'stop':
      if (!stopping) {
        stopping = true;
        void stop();
      }
      return;
  }
});

accounts.schema.start();
accounts.informer.start();
oauth.sessionInformer.start();
// Ready once its caches have synced, after what loading and the first lists left behind is given back
// (as the main thread does), so that no login meets the pause.
const stopWaitingForReady = releaseStartUpMemory({
  isReady: () => accounts.informer.synced && accounts.schema.known && oauth.sessionInformer.synced,
  collect: memoryReleasingCollection(),
  logger,
  onReleased: () => send({ type: 'ready' }),
  pollMs: 50,
});

/** Finishes the logins in flight, then writes what is held in memory before the thread ends. */
async function stop(): Promise<void> {
  stopWaitingForReady();
  await Promise.allSettled([...inFlight]);
  // Successes whose settlement waits for a ride are written now, not left to count as failures.
  await oauth.admission.flush();
  await accounts.store.flushLoginTimes();
  accounts.schema.stop();
  await Promise.all([accounts.informer.stop(), oauth.sessionInformer.stop()]);
  oauth.sessions.close();
  await credentials.close();
  output.flush();
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(0);
}
