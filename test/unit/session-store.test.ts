import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Informer } from '../../src/cluster/informer.ts';
import type { Logger } from '../../src/observability/logger.ts';
import type { IamApi } from '../../src/users/iam-api.ts';
import type { SessionObject } from '../../src/users/iam-resources.ts';
import { SessionStore } from '../../src/tokens/session-store.ts';

// Logins of one user at the session limit pick the same oldest sessions to end, at the same moment.
test('concurrent deletes of one session send one request, and only one caller is told it ended it', async () => {
  const existing = new Set(['s1', 's2']);
  const requests: string[] = [];
  const api = {
    delete: async (_plural: string, name: string) => {
      requests.push(name);
      await new Promise((resolve) => setImmediate(resolve));
      return existing.delete(name);
    },
  } as unknown as IamApi;
  const informer = {
    get: () => undefined,
    onEvent: () => () => {},
  } as unknown as Informer<SessionObject>;
  const store = new SessionStore({ api, informer, logger: {} as Logger });
  try {
    const ended = await Promise.all([
      store.delete('s1'),
      store.delete('s1'),
      store.delete('s1'),
      store.delete('s2'),
    ]);
    assert.deepEqual(ended, [true, false, false, true]);
    assert.deepEqual(requests, ['s1', 's2']);
    // Once it has finished, a later delete asks again (and learns the session is gone).
    assert.equal(await store.delete('s1'), false);
    assert.deepEqual(requests, ['s1', 's2', 's1']);
  } finally {
    store.close();
  }
});
