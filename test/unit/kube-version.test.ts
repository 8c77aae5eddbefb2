import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KubeVersionCache, type KubeVersion } from '../../src/cluster/kube-version.ts';

const v = (gitVersion: string): KubeVersion => ({ major: '1', minor: '36', gitVersion });

describe('the kube-apiserver version cache', () => {
  test('fetched once per TTL; concurrent callers share a fetch; a failed refresh serves the last copy', async () => {
    let now = 0;
    const answers: (KubeVersion | Error)[] = [v('v1.36.3'), new Error('unreachable'), v('v1.37.0')];
    let fetches = 0;
    const cache = new KubeVersionCache({
      fetch: async () => {
        fetches++;
        const next = answers.shift()!;
        if (next instanceof Error) throw next;
        return next;
      },
      ttlMs: 60_000,
      nowMs: () => now,
    });
    const [a, b] = await Promise.all([cache.get(), cache.get()]);
    assert.equal(a.gitVersion, 'v1.36.3');
    assert.equal(b, a);
    assert.equal(fetches, 1);
    now = 59_999;
    assert.equal((await cache.get()).gitVersion, 'v1.36.3');
    assert.equal(fetches, 1);
    now = 60_000;
    assert.equal((await cache.get()).gitVersion, 'v1.36.3', 'the refresh failed: last copy');
    assert.equal((await cache.get()).gitVersion, 'v1.37.0', 'the next call tries again');
    assert.equal(fetches, 3);
  });

  test('without any copy the error reaches the caller', async () => {
    const cache = new KubeVersionCache({
      fetch: () => Promise.reject(new Error('unreachable')),
      ttlMs: 60_000,
    });
    await assert.rejects(cache.get(), /unreachable/);
  });
});
