import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Informer, InformerListener } from '../../src/cluster/informer.ts';
import type { Logger } from '../../src/observability/logger.ts';
import type { IamApi } from '../../src/users/iam-api.ts';
import type { SessionObject } from '../../src/users/iam-resources.ts';
import { SessionStore, standingOf } from '../../src/tokens/session-store.ts';

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

test('a token stands to its session by incarnation: current, ended (taken over), or newer than this view', () => {
  const session = (incarnation?: number) =>
    ({
      metadata: { name: 's1' },
      spec: { username: 'ann', userUID: 'u', clientId: 'c', refreshTokenId: 'r', expiresAt: '', incarnation },
    }) as SessionObject;
  assert.equal(standingOf(session(2), 2), 'current');
  assert.equal(standingOf(session(2), 1), 'ended');
  assert.equal(standingOf(session(2), undefined), 'ended', 'a token without one, for a session with one');
  assert.equal(standingOf(session(2), 3), 'newer');
  // Written before incarnations (or by a CRD that drops them): never taken over, so every token is current.
  assert.equal(standingOf(session(undefined), undefined), 'current');
  assert.equal(standingOf(session(undefined), 1), 'current');
});

test('a takeover is one compare-and-swap write of the next incarnation; meanwhile no other login takes it', async () => {
  const stored: SessionObject = {
    apiVersion: 'iam.platform.io/v1alpha2',
    kind: 'Session',
    metadata: { name: 's1', resourceVersion: '7', labels: { 'iam.platform.io/user': 'ann' } },
    spec: {
      username: 'ann',
      userUID: 'u',
      clientId: 'old',
      refreshTokenId: 'r-old',
      expiresAt: '2030-01-01T00:00:00.000Z',
      incarnation: 3,
      previousRefreshTokenId: 'r-older',
      rotatedAt: '2029-12-01T00:00:00.000Z',
    },
  };
  const writes: SessionObject[] = [];
  let release!: () => void;
  const api = {
    replace: async (_plural: string, body: SessionObject) => {
      writes.push(body);
      await new Promise<void>((resolve) => (release = resolve));
      return { ...body, metadata: { ...body.metadata, resourceVersion: '8' } };
    },
  } as unknown as IamApi;
  const informer = { get: () => undefined, onEvent: () => () => {} } as unknown as Informer<SessionObject>;
  const store = new SessionStore({ api, informer, logger: {} as Logger });
  try {
    assert.equal(store.canTakeOver(stored), true);
    assert.equal(store.canTakeOver({ ...stored, spec: { ...stored.spec, incarnation: undefined } }), false);
    const taking = store.takeOver(stored, {
      sessionId: 's1',
      username: 'ann',
      userUID: 'u',
      clientId: 'new',
      refreshTokenId: 'r-new',
      expiresAtSeconds: 1_900_000_000,
    });
    assert.equal(store.canTakeOver(stored), false, 'another login of this replica leaves it alone');
    assert.equal(store.isTakenOver('s1'), true);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    const taken = await taking;
    assert.equal(store.isTakenOver('s1'), false);
    assert.equal(writes.length, 1);
    // Conditional on the version seen; the old login's refresh history does not carry over.
    assert.equal(writes[0]!.metadata.resourceVersion, '7');
    assert.deepEqual(writes[0]!.metadata.labels, stored.metadata.labels);
    assert.deepEqual(writes[0]!.spec, {
      username: 'ann',
      userUID: 'u',
      clientId: 'new',
      refreshTokenId: 'r-new',
      expiresAt: new Date(1_900_000_000 * 1000).toISOString(),
      incarnation: 4,
    });
    // The new login's token is current at once on this replica; the old login's is over, with no I/O.
    assert.equal(
      (await store.getHeld({ sid: 's1', sinc: 4 }))?.metadata.resourceVersion,
      taken!.metadata.resourceVersion,
    );
    assert.equal(await store.getHeld({ sid: 's1', sinc: 3 }), undefined);
  } finally {
    store.close();
  }
});

test('a token newer than the session this replica holds reads it again (a takeover made elsewhere)', async () => {
  const at = (incarnation: number, resourceVersion: string) =>
    ({
      metadata: { name: 's1', resourceVersion },
      spec: {
        username: 'ann',
        userUID: 'u',
        clientId: 'c',
        refreshTokenId: 'r',
        expiresAt: '2030-01-01T00:00:00.000Z',
        incarnation,
      },
    }) as SessionObject;
  const reads: string[] = [];
  const api = {
    get: async (_plural: string, name: string) => {
      reads.push(name);
      return at(2, '9');
    },
  } as unknown as IamApi;
  let watched = at(1, '5');
  const informer = {
    get: (name: string) => (name === 's1' ? watched : undefined),
    onEvent: () => () => {},
  } as unknown as Informer<SessionObject>;
  const store = new SessionStore({
    api,
    informer,
    logger: {} as Logger,
    nowMs: () => Date.parse('2029-01-01'),
  });
  try {
    assert.equal((await store.getHeld({ sid: 's1', sinc: 1 }))?.metadata.resourceVersion, '5');
    assert.deepEqual(reads, [], 'a current token costs no read');
    assert.equal((await store.getHeld({ sid: 's1', sinc: 2 }))?.metadata.resourceVersion, '9');
    assert.deepEqual(reads, ['s1']);
    // Once the watch has shown the takeover, an ended login's token is judged without a read.
    watched = at(2, '9');
    assert.equal(await store.getHeld({ sid: 's1', sinc: 1 }), undefined);
    assert.deepEqual(reads, ['s1']);
  } finally {
    store.close();
  }
});

test('until the watch shows a takeover, the user’s sessions show the session as taken over, not as it was', async () => {
  const version = (resourceVersion: string, expiresAt: string, incarnation: number) =>
    ({
      metadata: { name: 's1', resourceVersion },
      spec: { username: 'ann', userUID: 'u', clientId: 'c', refreshTokenId: 'r', expiresAt, incarnation },
    }) as SessionObject;
  const listeners: InformerListener<SessionObject>[] = [];
  let watched: SessionObject | undefined;
  const emit = (type: 'ADDED' | 'MODIFIED', session: SessionObject) => {
    const previous = watched;
    watched = session;
    for (const listener of listeners) listener(type, session, previous);
  };
  const informer = {
    get: () => watched,
    onEvent: (listener: InformerListener<SessionObject>) => (listeners.push(listener), () => {}),
  } as unknown as Informer<SessionObject>;
  const api = {
    replace: async (_plural: string, body: SessionObject) => ({
      ...body,
      metadata: { ...body.metadata, resourceVersion: '8' },
    }),
  } as unknown as IamApi;
  const store = new SessionStore({ api, informer, logger: {} as Logger });
  try {
    const old = version('7', '2030-01-01T00:00:00.000Z', 1);
    emit('ADDED', old);
    await store.takeOver(old, {
      sessionId: 's1',
      username: 'ann',
      userUID: 'u',
      clientId: 'c',
      refreshTokenId: 'r2',
      expiresAtSeconds: 1_900_000_000,
    });
    // The next login at the limit compares the sessions' expiries: it must see the new one.
    assert.deepEqual(
      store.sessionsOf('ann').map((s) => [s.metadata.resourceVersion, s.spec.incarnation]),
      [['8', 2]],
    );
    // Once the watch has delivered a change of it, the index is the truth again.
    emit('MODIFIED', version('9', '2031-01-01T00:00:00.000Z', 2));
    assert.deepEqual(
      store.sessionsOf('ann').map((s) => s.metadata.resourceVersion),
      ['9'],
    );
  } finally {
    store.close();
  }
});
