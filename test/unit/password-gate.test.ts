import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { PasswordGate, type PasswordCheck } from '../../src/tokens/password-gate.ts';
import { ApiError } from '../../src/kernel/api-error.ts';

/** A verifier whose answers the test releases one by one. */
function heldVerifier() {
  const pending: ((ok: boolean) => void)[] = [];
  const verifier: PasswordCheck = {
    verify: () => new Promise<boolean>((resolve) => pending.push(resolve)),
  };
  return { verifier, pending };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('password gate', () => {
  test('runs at most `concurrency` verifications; the queue waits; beyond it an immediate 503', async () => {
    const { verifier, pending } = heldVerifier();
    const registry = new Registry();
    const gate = new PasswordGate({ verifier, concurrency: 2, queue: 1, registry });
    const answers = [gate.verify('a', undefined), gate.verify('b', undefined), gate.verify('c', undefined)];
    await settle();
    assert.equal(pending.length, 2, 'two running, one queued');
    await assert.rejects(gate.verify('d', undefined), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.kind, 'Unavailable');
      assert.equal(err.oauthError, 'temporarily_unavailable');
      assert.ok(Number.isInteger(err.retryAfterSeconds) && err.retryAfterSeconds! >= 1);
      return true;
    });
    pending[0]!(true);
    await settle();
    assert.equal(pending.length, 3, 'the queued one starts when a slot frees');
    pending[1]!(false);
    pending[2]!(true);
    assert.deepEqual(await Promise.all(answers), [true, false, true]);
    const metrics = await registry.metrics();
    assert.match(metrics, /^platform_password_verifications_refused_total 1$/m);
    assert.match(metrics, /^platform_password_verifications_in_flight\{state="running"\} 0$/m);
  });

  test('enter holds a place until given back: beyond running + queued + held, a login is refused at once', async () => {
    const { verifier, pending } = heldVerifier();
    const registry = new Registry();
    const gate = new PasswordGate({ verifier, concurrency: 1, queue: 1, registry });
    const busy = (err: unknown) => err instanceof ApiError && err.oauthError === 'temporarily_unavailable';
    // Two logins hold places while their reservations are written: a third is refused before any work.
    const leaveA = gate.enter();
    const leaveB = gate.enter();
    assert.throws(() => gate.enter(), busy);
    // Each gives its place back as it calls verify: one runs, one waits, and neither is refused.
    leaveA();
    const answers = [gate.verify('a', undefined)];
    leaveB();
    answers.push(gate.verify('b', undefined));
    await settle();
    assert.equal(pending.length, 1);
    assert.throws(() => gate.enter(), busy);
    pending[0]!(true);
    await settle();
    // One running, none waiting: one place. Given back twice (a refusal path), it is still one place.
    const leaveC = gate.enter();
    leaveC();
    leaveC();
    gate.enter();
    assert.throws(() => gate.enter(), busy);
    pending[1]!(true);
    assert.deepEqual(await Promise.all(answers), [true, true]);
    const metrics = await registry.metrics();
    assert.match(metrics, /^platform_password_verifications_refused_total 3$/m);
    assert.match(metrics, /^platform_password_verifications_in_flight\{state="entering"\} 1$/m);
  });

  test('a failing verification frees its slot', async () => {
    const gate = new PasswordGate({
      verifier: { verify: () => Promise.reject(new Error('boom')) },
      concurrency: 1,
      queue: 0,
    });
    await assert.rejects(gate.verify('a', undefined), /boom/);
    await assert.rejects(gate.verify('a', undefined), /boom/, 'not a 503: the slot was freed');
  });

  test('concurrency 0 means one per core', () => {
    const gate = new PasswordGate({ verifier: heldVerifier().verifier, concurrency: 0, queue: 0, cores: 6 });
    assert.equal(gate.concurrency, 6);
  });
});
