import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { waitFor } from '../cluster/wait-for.ts';
import type { CredentialsData } from '../../src/cluster/handed-credentials.ts';
import type { Config } from '../../src/config/config.ts';
import { ApiError } from '../../src/kernel/api-error.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { counter } from '../../src/observability/metrics.ts';
import { LoginThread } from '../../src/tokens/login-thread.ts';
import { ephemeralKeySet } from '../../src/tokens/signing-keys.ts';
import { Writable } from 'node:stream';

const ENTRY = new URL('../fixtures/scripted-login-worker.ts', import.meta.url);

const credentialsOf = (token: string): CredentialsData => ({
  server: 'https://kube.test:6443',
  headers: { Authorization: `Bearer ${token}` },
  connect: { ca: Buffer.from('a CA') },
});

function loginThread(
  credentials: () => Promise<CredentialsData> = async () => credentialsOf('t0'),
  credentialsRefreshMs?: number,
) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      callback();
    },
  });
  const registry = new Registry();
  const thread = new LoginThread({
    // The scripted worker reads neither; the real one starts from them (and they must cross threads).
    workerData: { config: {} as Config, keys: ephemeralKeySet('ES256') },
    credentials,
    ...(credentialsRefreshMs !== undefined ? { credentialsRefreshMs } : {}),
    env: {},
    logger: createLogger({ level: 'info', stream }),
    restarts: counter(registry, { name: 'platform_test_restarts_total', help: 'test' }),
    entry: ENTRY,
    restartDelayMs: 10,
  });
  const restarts = async () =>
    (await registry.getSingleMetric('platform_test_restarts_total')!.get()).values[0]!.value;
  return { thread, lines, restarts };
}

const attempt = (login: string) => ({
  attempt: { clientId: 'platform', login, password: 'p', sourceAddress: '127.0.0.1' },
  requestId: 'req-1',
});

test('answers, refusals and failures of the thread reach the caller as the main thread would raise them', async () => {
  const { thread } = loginThread();
  thread.start();
  try {
    await waitFor('the thread to be ready', () => thread.ready || undefined);
    const granted = await thread.passwordGrant(attempt('alice'));
    assert.equal(granted.access_token, 'for alice (req-1)');

    const refused = await thread.passwordGrant(attempt('refused')).catch((err: unknown) => err);
    assert.ok(refused instanceof ApiError);
    assert.equal(refused.kind, 'TooManyRequests');
    assert.equal(refused.oauthError, 'invalid_grant');
    assert.equal(refused.retryAfterSeconds, 7);

    const failed = await thread.passwordGrant(attempt('fails')).catch((err: unknown) => err);
    assert.ok(failed instanceof Error && !(failed instanceof ApiError));
    assert.deepEqual(await thread.metrics(), []);
  } finally {
    await thread.stop();
  }
});

test('a thread that dies: its logins get 503, it is not ready until it has started again', async () => {
  const { thread, lines, restarts } = loginThread();
  thread.start();
  try {
    await waitFor('the thread to be ready', () => thread.ready || undefined);
    const lost = await thread.passwordGrant(attempt('dies')).catch((err: unknown) => err);
    assert.ok(lost instanceof ApiError);
    assert.equal(lost.kind, 'Unavailable');
    assert.equal(lost.oauthError, 'temporarily_unavailable');
    assert.equal(lost.retryAfterSeconds, 1);
    assert.equal(thread.ready, false);
    assert.equal(await restarts(), 1);
    assert.ok(
      lines.some((l) => l['message'] === 'login thread exited; starting it again' && l['code'] === 3),
    );

    await waitFor('the thread to be ready again', () => thread.ready || undefined);
    assert.equal((await thread.passwordGrant(attempt('bob'))).access_token, 'for bob (req-1)');
  } finally {
    await thread.stop();
  }
});

test('a thread stopped before it started is never started', async () => {
  const { thread } = loginThread();
  await thread.stop();
  thread.start();
  assert.equal(thread.ready, false);
  const refused = await thread.passwordGrant(attempt('dave')).catch((err: unknown) => err);
  assert.ok(refused instanceof ApiError && refused.kind === 'Unavailable');
});

test('after stop, logins are refused with 503 and the thread is not started again', async () => {
  const { thread, restarts } = loginThread();
  thread.start();
  await waitFor('the thread to be ready', () => thread.ready || undefined);
  await thread.stop();
  assert.equal(thread.ready, false);
  const refused = await thread.passwordGrant(attempt('carol')).catch((err: unknown) => err);
  assert.ok(refused instanceof ApiError && refused.kind === 'Unavailable');
  assert.equal(await restarts(), 0);
});

test('the thread starts with the credentials of the moment, and is sent them again only when they change', async () => {
  let token = 't1';
  let reads = 0;
  const { thread } = loginThread(async () => {
    reads++;
    return credentialsOf(token);
  }, 5);
  thread.start();
  try {
    await waitFor('the thread to be ready', () => thread.ready || undefined);
    const held = async () => (await thread.passwordGrant(attempt('credentials'))).access_token;
    assert.equal(await held(), 'https://kube.test:6443 Bearer t1 0');
    // Read again and again, unchanged: not sent.
    const readsBefore = reads;
    await waitFor('the credentials to be read again', () => reads >= readsBefore + 3 || undefined);
    assert.equal(await held(), 'https://kube.test:6443 Bearer t1 0');

    token = 't2';
    await waitFor(
      'the renewed token to reach the thread',
      async () => (await held()) === 'https://kube.test:6443 Bearer t2 1' || undefined,
    );
  } finally {
    await thread.stop();
  }
});

test('credentials that cannot be handed over leave the thread unstarted, and say why', async () => {
  let reads = 0;
  const { thread, lines } = loginThread(async () => {
    reads++;
    throw new Error('the kubeconfig reaches its cluster through a proxy (proxy-url)');
  });
  thread.start();
  try {
    await waitFor('the refusal to be logged', () =>
      lines.find((l) => String(l['message']).startsWith('login thread not started')),
    );
    assert.equal(thread.ready, false);
    assert.equal(reads, 1);
    const refused = await thread.passwordGrant(attempt('erin')).catch((err: unknown) => err);
    assert.ok(refused instanceof ApiError && refused.kind === 'Unavailable');
    assert.ok(lines.some((l) => String(l['error']).includes('proxy-url')));
  } finally {
    await thread.stop();
  }
});
