import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { loadConfig } from '../../src/config/config.ts';
import type { LoginWorkerData } from '../../src/tokens/login-messages.ts';
import { LOGIN_WORKER_ENTRY } from '../../src/tokens/login-thread.ts';
import { ephemeralKeySet } from '../../src/tokens/signing-keys.ts';

test('the login thread loads no Kubernetes client library (it would cost the thread about 60 MB)', async () => {
  const data: LoginWorkerData & { entry: string } = {
    entry: LOGIN_WORKER_ENTRY.href,
    config: loadConfig({ argv: [], env: {}, readFile: () => '' }),
    keys: ephemeralKeySet('ES256'),
    // Nothing listens there: the thread's watches fail and retry, which is all this test lets them do.
    credentials: { server: 'https://127.0.0.1:1', headers: {}, connect: undefined },
  };
  const worker = new Worker(new URL('../fixtures/module-recording-worker.ts', import.meta.url), {
    workerData: data,
    stdout: true,
  });
  worker.stdout.resume();
  try {
    const [loaded] = (await once(worker, 'message', {
      signal: AbortSignal.timeout(20_000),
    })) as [{ type: string; packages: string[] }];
    assert.equal(loaded.type, 'packages');
    // What it does load, so that the test would notice the hook seeing nothing at all.
    assert.ok(loaded.packages.includes('undici'), loaded.packages.join(', '));
    assert.deepEqual(
      loaded.packages.filter((name) => name.startsWith('@kubernetes/')),
      [],
    );
  } finally {
    await worker.terminate();
  }
});
