import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SessionObject, UserObject } from '../../src/users/iam-resources.ts';
import type { InformerListener } from '../../src/cluster/informer.ts';
import type { LiveSession } from '../../src/kernel/session-signals.ts';
import { sessionSignals } from '../../src/tokens/session-signals.ts';
import { standingOf } from '../../src/tokens/session-store.ts';
import {
  StreamRegistry,
  type StreamEndReason,
  type StreamOwner,
} from '../../src/kube-proxy/stream-registry.ts';

/** Lets pending promise callbacks (the registry's lookups) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function setup(live: Map<string, LiveSession>) {
  const ended: StreamEndReason[] = [];
  const registry = new StreamRegistry({
    lookup: async (owner) => (owner.sessionId ? live.get(owner.sessionId) : undefined),
    onEnded: (reason) => ended.push(reason),
  });
  const open = (owner: StreamOwner) => {
    const connection = { endedBy: undefined as StreamEndReason | undefined, untrack: () => {} };
    connection.untrack = registry.track(owner, (reason) => {
      assert.equal(connection.endedBy, undefined, 'end is called at most once');
      connection.endedBy = reason;
    });
    return connection;
  };
  return { registry, ended, open };
}

const far = { expiresAtMs: Date.now() + 3_600_000 };

describe('stream registry', () => {
  test('ending a session ends its connections only, once each', async () => {
    const { registry, ended, open } = setup(
      new Map([
        ['s1', far],
        ['s2', far],
      ]),
    );
    const a = open({ username: 'ann', sessionId: 's1' });
    const b = open({ username: 'ann', sessionId: 's1' });
    const c = open({ username: 'ann', sessionId: 's2' });
    await settle();
    assert.equal(registry.size, 3);
    registry.endSession('s1');
    registry.endSession('s1');
    assert.equal(a.endedBy, 'session_ended');
    assert.equal(b.endedBy, 'session_ended');
    assert.equal(c.endedBy, undefined);
    assert.deepEqual(ended, ['session_ended', 'session_ended']);
    assert.equal(registry.size, 1);
    registry.close();
  });

  test('a disabled or deleted user loses every connection, whatever the session', async () => {
    const { registry, open } = setup(
      new Map([
        ['s1', far],
        ['s2', far],
        ['s3', far],
      ]),
    );
    const a = open({ username: 'ann', sessionId: 's1' });
    const b = open({ username: 'ann', sessionId: 's2' });
    const other = open({ username: 'bob', sessionId: 's3' });
    await settle();
    registry.endUser('ann', 'user_disabled');
    assert.equal(a.endedBy, 'user_disabled');
    assert.equal(b.endedBy, 'user_disabled');
    assert.equal(other.endedBy, undefined);
    registry.close();
  });

  test('a connection closed by its client is forgotten and never ended', async () => {
    const { registry, ended, open } = setup(new Map([['s1', far]]));
    const a = open({ username: 'ann', sessionId: 's1' });
    await settle();
    a.untrack();
    assert.equal(registry.size, 0);
    registry.endSession('s1');
    registry.endUser('ann', 'user_deleted');
    assert.equal(a.endedBy, undefined);
    assert.deepEqual(ended, []);
    registry.close();
  });

  test('a session that ended before tracking began ends the connection at once', async () => {
    const { registry, open } = setup(new Map());
    const a = open({ username: 'ann', sessionId: 'gone' });
    assert.equal(a.endedBy, undefined, 'decided by the lookup, not synchronously');
    await settle();
    assert.equal(a.endedBy, 'session_ended');
    assert.equal(registry.size, 0);
    registry.close();
  });

  test('expiry: a timer ends the connection when the session expires, unless a refresh moved it', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
    const live = new Map([['s1', { expiresAtMs: 1_000_000 + 30_000 }]]);
    const { registry, open } = setup(live);
    const a = open({ username: 'ann', sessionId: 's1' });
    await settle();
    // A refresh (seen as a MODIFIED session) moves the expiry: the first deadline passes harmlessly.
    live.set('s1', { expiresAtMs: 1_000_000 + 90_000 });
    registry.sessionExpiry('s1', 1_000_000 + 90_000);
    t.mock.timers.tick(60_000);
    await settle();
    assert.equal(a.endedBy, undefined);
    // Past the new deadline the lookup no longer finds the session (expired sessions are not returned).
    live.delete('s1');
    t.mock.timers.tick(30_010);
    await settle();
    assert.equal(a.endedBy, 'session_expired');
    registry.close();
  });

  test('a timer that fires while the session still looks live re-arms instead of ending', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
    // The cache has seen a refresh the registry has not: the lookup answers with the later expiry.
    const live = new Map([['s1', { expiresAtMs: 1_000_000 + 10_000 }]]);
    const { registry, open } = setup(live);
    const a = open({ username: 'ann', sessionId: 's1' });
    await settle();
    live.set('s1', { expiresAtMs: 1_000_000 + 50_000 });
    t.mock.timers.tick(10_010);
    await settle();
    assert.equal(a.endedBy, undefined);
    live.delete('s1');
    t.mock.timers.tick(40_000);
    await settle();
    assert.equal(a.endedBy, 'session_expired');
    registry.close();
  });

  test('informer events: a deleted session, a disabled or deleted user end streams; a refresh re-arms', async () => {
    const sessionListeners: InformerListener<SessionObject>[] = [];
    const userListeners: InformerListener<UserObject>[] = [];
    const sessionDeadlines: [string, number][] = [];
    const calls: string[] = [];
    const fake = {
      endSession: (id: string, reason: string) => calls.push(`session ${id} ${reason}`),
      endUser: (name: string, reason: string) => calls.push(`user ${name} ${reason}`),
      sessionExpiry: (id: string, ms: number) => sessionDeadlines.push([id, ms]),
    };
    const signals = sessionSignals({
      sessionEvents: { onEvent: (l) => (sessionListeners.push(l), () => {}) },
      userEvents: { onEvent: (l) => (userListeners.push(l), () => {}) },
      sessions: { getHeld: async () => undefined },
      users: { peek: () => undefined, get: async () => undefined },
    });
    const stop = signals.subscribe(fake);
    const session = (name: string, expiresAt: string, incarnation?: number) =>
      ({
        metadata: { name },
        spec: { username: 'ann', userUID: 'u1', clientId: 'c', refreshTokenId: 'r', expiresAt, incarnation },
      }) as SessionObject;
    const user = (uid: string, state?: 'Disabled' | 'Active' | 'AuthLimitExceeded') =>
      ({ metadata: { name: 'ann', uid }, ...(state ? { status: { state } } : {}) }) as UserObject;
    sessionListeners[0]!('MODIFIED', session('s1', '2030-01-01T00:00:00Z'), undefined);
    sessionListeners[0]!('DELETED', session('s1', '2030-01-01T00:00:00Z'), undefined);
    // A refresh keeps the incarnation; a later login's takeover at the limit moves it on.
    sessionListeners[0]!(
      'MODIFIED',
      session('s2', '2030-01-01T00:00:00Z', 1),
      session('s2', '2029-01-01T00:00:00Z', 1),
    );
    sessionListeners[0]!(
      'MODIFIED',
      session('s2', '2031-01-01T00:00:00Z', 2),
      session('s2', '2030-01-01T00:00:00Z', 1),
    );
    userListeners[0]!('MODIFIED', user('u1', 'AuthLimitExceeded'), user('u1'));
    userListeners[0]!('MODIFIED', user('u1', 'Disabled'), user('u1'));
    userListeners[0]!('MODIFIED', user('u2'), user('u1'));
    userListeners[0]!('DELETED', user('u2'), undefined);
    assert.deepEqual(sessionDeadlines, [
      ['s1', Date.parse('2030-01-01T00:00:00Z')],
      ['s2', Date.parse('2030-01-01T00:00:00Z')],
    ]);
    assert.deepEqual(calls, [
      'session s1 session_ended',
      'session s2 session_ended',
      'user ann user_disabled',
      'user ann user_deleted',
      'user ann user_deleted',
    ]);
    stop();
  });

  test('the session lookup judges as bearer authentication does', async () => {
    const session = {
      metadata: { name: 's1' },
      spec: {
        username: 'ann',
        userUID: 'u1',
        clientId: 'c',
        refreshTokenId: 'r',
        expiresAt: '2030-01-01T00:00:00Z',
        incarnation: 2,
      },
    } as SessionObject;
    let user: UserObject | undefined = { metadata: { name: 'ann', uid: 'u1' } } as UserObject;
    const signals = sessionSignals({
      sessionEvents: { onEvent: () => () => {} },
      userEvents: { onEvent: () => () => {} },
      // The store's judgement of a token's incarnation, over one session.
      sessions: {
        getHeld: async (ref) =>
          ref.sid === 's1' && standingOf(session, ref.sinc) === 'current' ? session : undefined,
      },
      users: { peek: () => user, get: async () => user },
    });
    assert.deepEqual(await signals.lookup({ username: 'ann', sessionId: 's1', sessionIncarnation: 2 }), {
      expiresAtMs: Date.parse('2030-01-01T00:00:00Z'),
    });
    assert.equal(
      await signals.lookup({ username: 'ann', sessionId: 's1', sessionIncarnation: 1 }),
      undefined,
      'a login whose session a later login took over',
    );
    assert.equal(await signals.lookup({ username: 'ann', sessionId: 'gone' }), undefined);
    assert.equal(await signals.lookup({ username: 'ann' }), undefined);
    user = { metadata: { name: 'ann', uid: 'u1' }, status: { state: 'Disabled' } } as UserObject;
    assert.equal(
      await signals.lookup({ username: 'ann', sessionId: 's1', sessionIncarnation: 2 }),
      undefined,
      'disabled',
    );
    user = { metadata: { name: 'ann', uid: 'u2' } } as UserObject;
    assert.equal(
      await signals.lookup({ username: 'ann', sessionId: 's1', sessionIncarnation: 2 }),
      undefined,
      're-created user',
    );
    user = undefined;
    assert.equal(
      await signals.lookup({ username: 'ann', sessionId: 's1', sessionIncarnation: 2 }),
      undefined,
      'deleted user',
    );
  });
});
