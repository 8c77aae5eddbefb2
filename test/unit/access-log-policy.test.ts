import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { accessLogPolicy, isRoutine, type AccessRecord } from '../../src/observability/access-log-policy.ts';

const read: AccessRecord = { method: 'GET', status: 200, durationMs: 2, completed: true };

describe('access log policy', () => {
  test('routine: a safe method answered whole, in time, below 400', () => {
    assert.equal(isRoutine(read, 1000), true);
    assert.equal(isRoutine({ ...read, status: 304 }, 1000), true);
    assert.equal(isRoutine({ ...read, method: 'HEAD' }, 1000), true);
    assert.equal(isRoutine({ ...read, status: 401 }, 1000), false, 'authentication failures');
    assert.equal(isRoutine({ ...read, status: 403 }, 1000), false, 'authorisation failures');
    assert.equal(isRoutine({ ...read, status: 503 }, 1000), false);
    assert.equal(isRoutine({ ...read, method: 'POST' }, 1000), false, 'logins and every change');
    assert.equal(isRoutine({ ...read, durationMs: 1000 }, 1000), false, 'slow');
    assert.equal(isRoutine({ ...read, completed: false }, 1000), false, 'aborted');
  });

  test('all: every request, standing for itself', () => {
    const policy = accessLogPolicy({ mode: 'all', sampleEvery: 100, slowMs: 1000 });
    assert.deepEqual([read, read, { ...read, status: 500 }].map(policy), [1, 1, 1]);
  });

  test('sampled: exceptional requests always, one routine request in N marked as standing for N', () => {
    const policy = accessLogPolicy({ mode: 'sampled', sampleEvery: 4, slowMs: 1000 });
    const kept = Array.from({ length: 12 }, () => policy(read));
    assert.deepEqual(kept, [
      4,
      undefined,
      undefined,
      undefined,
      4,
      undefined,
      undefined,
      undefined,
      4,
      undefined,
      undefined,
      undefined,
    ]);
    assert.equal(policy({ ...read, status: 401 }), 1);
    assert.equal(policy({ ...read, method: 'POST', status: 200 }), 1);
    assert.equal(policy({ ...read, durationMs: 5000 }), 1);
  });

  test('sampled with sampleEvery 1 keeps every routine request', () => {
    const policy = accessLogPolicy({ mode: 'sampled', sampleEvery: 1, slowMs: 1000 });
    assert.deepEqual([read, read, read].map(policy), [1, 1, 1]);
  });

  test('exceptions: routine requests dropped, exceptional ones kept', () => {
    const policy = accessLogPolicy({ mode: 'exceptions', sampleEvery: 1, slowMs: 1000 });
    assert.deepEqual([read, read].map(policy), [undefined, undefined]);
    assert.equal(policy({ ...read, status: 404 }), 1);
    assert.equal(policy({ ...read, method: 'DELETE' }), 1);
  });
});
