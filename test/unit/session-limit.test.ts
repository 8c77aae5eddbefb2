import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SessionObject } from '../../src/users/iam-resources.ts';
import { sessionsBeyondLimit } from '../../src/tokens/session-limit.ts';

const session = (name: string, expiresAt: string, creationTimestamp?: string): SessionObject =>
  ({
    metadata: { name, ...(creationTimestamp ? { creationTimestamp } : {}) },
    spec: { username: 'alice', userUID: 'u1', clientId: 'c', refreshTokenId: 'r', expiresAt },
  }) as SessionObject;

const names = (sessions: SessionObject[]) => sessions.map((s) => s.metadata.name);

describe('sessions beyond the per-user limit', () => {
  const existing = [
    session('refreshed-lately', '2026-11-26T08:00:00.000Z'),
    session('idle-longest', '2026-11-26T05:00:00.000Z'),
    session('idle', '2026-11-26T06:00:00.000Z'),
  ];

  test('a login keeps the user at the limit, the new session included: those nearest to expiry end', () => {
    assert.deepEqual(names(sessionsBeyondLimit(existing, 3)), ['idle-longest']);
    assert.deepEqual(names(sessionsBeyondLimit(existing, 2)), ['idle-longest', 'idle']);
    assert.deepEqual(names(sessionsBeyondLimit(existing, 1)), ['idle-longest', 'idle', 'refreshed-lately']);
  });

  test('under the limit, or with no limit (0), nothing ends', () => {
    assert.deepEqual(sessionsBeyondLimit(existing, 4), []);
    assert.deepEqual(sessionsBeyondLimit(existing, 100), []);
    assert.deepEqual(sessionsBeyondLimit(existing, 0), []);
    assert.deepEqual(sessionsBeyondLimit([], 1), []);
  });

  test('equal expiry: the older session ends first, then by name; the input is left as it was', () => {
    const same = '2026-11-26T06:00:00.000Z';
    const tied = [
      session('b-newer', same, '2026-11-26T02:00:00Z'),
      session('z-older', same, '2026-11-26T01:00:00Z'),
      session('a-newer', same, '2026-11-26T02:00:00Z'),
    ];
    assert.deepEqual(names(sessionsBeyondLimit(tied, 2)), ['z-older', 'a-newer']);
    // One to end (a login at the limit): the same first, found without sorting.
    assert.deepEqual(names(sessionsBeyondLimit(tied, 3)), ['z-older']);
    assert.deepEqual(names(sessionsBeyondLimit(tied.slice(0, 1).concat(tied.slice(2)), 2)), ['a-newer']);
    assert.deepEqual(names(tied), ['b-newer', 'z-older', 'a-newer']);
  });

  test('times written with and without fractions compare as times', () => {
    const mixed = [session('later', '2026-11-26T06:00:00.5Z'), session('earlier', '2026-11-26T06:00:00Z')];
    assert.deepEqual(names(sessionsBeyondLimit(mixed, 2)), ['earlier']);
  });
});
