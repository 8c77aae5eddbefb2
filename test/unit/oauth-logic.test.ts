import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Request } from 'express';
import { AddressLimiter } from '../../src/tokens/address-limiter.ts';
import { isAnonymousPath } from '../../src/http/bearer-door.ts';
import { ClientRegistry, parseClients } from '../../src/tokens/clients.ts';
import { lockoutOf, statusAfterLock, statusAfterSuccess } from '../../src/users/lockout.ts';
import {
  admit,
  decodeLedger,
  EMPTY_LEDGER,
  encodeLedger,
  lockOf,
  normalized,
  RESERVATION_LEASE_MS,
  settle,
  type AttemptLedger,
  type Settlement,
} from '../../src/users/attempt-ledger.ts';
import { clientCredentialsOf, parseForm } from '../../src/tokens/oauth-request.ts';
import { bcryptCostOf, hashPassword, PasswordVerifier } from '../../src/users/passwords.ts';
import { ApiError as HttpError } from '../../src/kernel/api-error.ts';

function oauthFailure(fn: () => unknown, status: number, error: string, message?: RegExp) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof HttpError, String(err));
    assert.equal(err.statusCode, status);
    assert.equal(err.oauthError, error);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('form parsing', () => {
  test('decodes fields, + as space, and treats empty values as absent', () => {
    const form = parseForm(Buffer.from('grant_type=password&username=a%40b.c&password=p+w%26&scope=&flag'));
    assert.deepEqual(
      [...form],
      [
        ['grant_type', 'password'],
        ['username', 'a@b.c'],
        ['password', 'p w&'],
      ],
    );
  });

  test('repeated fields, bad escapes and invalid UTF-8 are errors', () => {
    oauthFailure(() => parseForm(Buffer.from('a=1&a=2')), 400, 'invalid_request', /"a" is repeated/);
    oauthFailure(() => parseForm(Buffer.from('a=1&a=')), 400, 'invalid_request', /repeated/);
    oauthFailure(() => parseForm(Buffer.from('a=%G1')), 400, 'invalid_request', /percent/);
    oauthFailure(() => parseForm(Buffer.from('a=%C3')), 400, 'invalid_request', /percent/);
    oauthFailure(() => parseForm(Buffer.from([0x61, 0x3d, 0xc3, 0x28])), 400, 'invalid_request', /UTF-8/);
    assert.equal(parseForm(Buffer.from('name=%C3%A9')).get('name'), 'é');
  });
});

describe('client credentials', () => {
  const req = (authorization?: string) => ({ headers: authorization ? { authorization } : {} }) as Request;
  const basic = (text: string) => 'Basic ' + Buffer.from(text).toString('base64');

  test('HTTP Basic with form-urlencoded id and secret, or form fields', () => {
    assert.deepEqual(clientCredentialsOf(req(basic('my%20app:s%3Acret')), new Map()), {
      clientId: 'my app',
      clientSecret: 's:cret',
      method: 'client_secret_basic',
    });
    assert.deepEqual(
      clientCredentialsOf(
        req(),
        new Map([
          ['client_id', 'x'],
          ['client_secret', 'y'],
        ]),
      ),
      { clientId: 'x', clientSecret: 'y', method: 'client_secret_post' },
    );
    // A bearer header is not client authentication and is ignored here.
    assert.equal(
      clientCredentialsOf(
        req('Bearer abc'),
        new Map([
          ['client_id', 'x'],
          ['client_secret', 'y'],
        ]),
      ).method,
      'client_secret_post',
    );
  });

  test('malformed Basic, missing credentials and both methods at once are refused', () => {
    for (const header of [
      'Basic',
      'Basic ###',
      basic('nocolon'),
      basic(':x'),
      basic('id:'),
      basic('a:%zz'),
      'Basic YQ',
    ]) {
      oauthFailure(() => clientCredentialsOf(req(header), new Map()), 401, 'invalid_client', /malformed/);
    }
    oauthFailure(() => clientCredentialsOf(req(), new Map()), 401, 'invalid_client');
    oauthFailure(() => clientCredentialsOf(req(), new Map([['client_id', 'x']])), 401, 'invalid_client');
    oauthFailure(
      () => clientCredentialsOf(req(basic('a:b')), new Map([['client_id', 'a']])),
      400,
      'invalid_request',
      /not both/,
    );
  });

  test('the default client is the platform name; configured clients replace it', () => {
    assert.deepEqual(parseClients('', 'acme'), [{ id: 'acme', secret: 'acme' }]);
    const registry = new ClientRegistry(parseClients('console:s3cret,cli:p:w', 'acme'));
    assert.deepEqual(registry.ids, ['console', 'cli']);
    assert.equal(registry.authenticate('console', 's3cret'), true);
    assert.equal(registry.authenticate('cli', 'p:w'), true);
    assert.equal(registry.authenticate('console', 's3cre'), false);
    assert.equal(registry.authenticate('acme', 'acme'), false);
    assert.equal(registry.authenticate('unknown', 's3cret'), false);
  });
});

describe('lockout', () => {
  const policy = { maxFailures: 3, windowSeconds: 600 };
  const t = (seconds: number) => Date.UTC(2026, 0, 1) + seconds * 1000;

  /** Reserves and settles one check; undefined when it was refused. */
  const check = (ledger: AttemptLedger, id: string, at: number, outcome: Settlement) => {
    const admission = admit(ledger, id, t(at), policy);
    if (!admission.admitted) return undefined;
    return settle(admission.ledger, id, outcome, t(at), policy);
  };

  test('admission: running checks count, so at most maxFailures checks are admitted at once', () => {
    let ledger: AttemptLedger = EMPTY_LEDGER;
    for (const id of ['a', 'b', 'c']) {
      const admission = admit(ledger, id, t(0), policy);
      assert.ok(admission.admitted);
      ledger = admission.ledger;
    }
    // Nothing failed: refused while the running checks settle, with a retry within a second, not a window.
    assert.deepEqual(admit(ledger, 'd', t(1), policy), {
      admitted: false,
      retryAfterSeconds: 1,
      checksRunning: true,
    });
    // One running check succeeds: the others still count, the success forgets settled failures only.
    ledger = settle(ledger, 'a', 'success', t(2), policy).ledger;
    assert.ok(admit(ledger, 'd', t(2), policy).admitted);
    // A released check (the password was never compared) leaves no trace.
    assert.deepEqual(settle(ledger, 'b', 'released', t(2), policy).ledger.pending, { c: t(0) });
  });

  test('N failures within the window lock for one window; older failures do not count', () => {
    let ledger: AttemptLedger = EMPTY_LEDGER;
    ledger = check(ledger, 'a', 0, 'failure')!.ledger;
    ledger = check(ledger, 'b', 100, 'failure')!.ledger;
    // The first failure has left the window when the third arrives: no lock yet.
    const late = check(ledger, 'c', 601, 'failure')!;
    assert.equal(late.lockedNow, false);
    assert.deepEqual(late.ledger.failures, [t(100), t(601)]);
    const locked = check(late.ledger, 'd', 650, 'failure')!;
    assert.equal(locked.lockedNow, true);
    assert.deepEqual(lockOf(locked.ledger, t(660)), { locked: true, retryAfterSeconds: 590 });
    assert.equal(check(locked.ledger, 'e', 660, 'success'), undefined, 'refused before any check');
    // After the window a new count starts: the failures that caused the lock are spent.
    assert.deepEqual(lockOf(locked.ledger, t(1250)), { locked: false });
    assert.deepEqual(normalized(locked.ledger, t(1251), policy).failures, []);
  });

  test('a reservation left by a replica that died counts as a failure when its lease ends, never twice', () => {
    const admission = admit(EMPTY_LEDGER, 'lost', t(0), policy);
    assert.ok(admission.admitted);
    const later = normalized(admission.ledger, t(0) + RESERVATION_LEASE_MS + 1, policy);
    assert.deepEqual(later, { failures: [t(0)], pending: {} });
    const settledLate = settle(admission.ledger, 'lost', 'failure', t(0) + RESERVATION_LEASE_MS + 1, policy);
    assert.deepEqual(settledLate.ledger.failures, [t(0)]);
  });

  test('the ledger survives its annotation text; unreadable text is an empty ledger', () => {
    const ledger: AttemptLedger = { failures: [t(1)], pending: { x: t(2) }, lockedUntil: t(3) };
    assert.deepEqual(decodeLedger(encodeLedger(ledger)), ledger);
    assert.deepEqual(decodeLedger('{not json'), EMPTY_LEDGER);
    assert.deepEqual(decodeLedger(undefined), EMPTY_LEDGER);
  });

  test('status in the original shape: AuthLimitExceeded with lastTransitionTime; lock end without lockedUntil', () => {
    const locked = statusAfterLock(undefined, t(0), policy);
    assert.equal(locked.state, 'AuthLimitExceeded');
    assert.equal(locked.lastTransitionTime, new Date(t(0)).toISOString());
    assert.equal(locked.reason, 'Failed login attempts exceed 3 in last 600s');
    // The original's schema prunes lockedUntil: the lock lasts one window from lastTransitionTime.
    const pruned = { ...locked };
    delete pruned.lockedUntil;
    assert.deepEqual(lockoutOf(pruned, t(10), policy), { locked: true, retryAfterSeconds: 590 });
    assert.deepEqual(lockoutOf(pruned, t(601), policy), { locked: false });
    assert.equal(statusAfterLock({ state: 'Disabled' }, t(0), policy).state, 'Disabled');
  });

  test('success lifts an expired lock and records the login', () => {
    const locked = statusAfterLock({ recentFailedLogins: [] }, t(0), { maxFailures: 1, windowSeconds: 60 });
    const after = statusAfterSuccess(locked, t(61), { maxFailures: 1, windowSeconds: 60 });
    assert.equal(after.state, 'Active');
    assert.equal(after.recentFailedLogins, undefined);
    assert.equal(after.lockedUntil, undefined);
    assert.equal(after.lastLoginTime, new Date(t(61)).toISOString());
    assert.equal(
      statusAfterSuccess(undefined, t(0), policy).state,
      'Active',
      'a first login shows the state',
    );
  });
});

describe('address limiter', () => {
  test('a burst of requestsPerMinute, then one more per refill interval', () => {
    let now = 0;
    const limiter = new AddressLimiter({ requestsPerMinute: 6, nowMs: () => now });
    for (let i = 0; i < 6; i++) assert.equal(limiter.take('10.0.0.1').allowed, true);
    assert.deepEqual(limiter.take('10.0.0.1'), { allowed: false, retryAfterSeconds: 10 });
    assert.equal(limiter.take('10.0.0.2').allowed, true, 'addresses are independent');
    now += 10_000;
    assert.equal(limiter.take('10.0.0.1').allowed, true);
    assert.equal(limiter.take('10.0.0.1').allowed, false);
    assert.equal(new AddressLimiter({ requestsPerMinute: 0 }).take('x').allowed, true, '0 disables');
  });

  test('memory is bounded: least recently used addresses are forgotten', () => {
    const limiter = new AddressLimiter({ requestsPerMinute: 1, maxAddresses: 2, nowMs: () => 0 });
    limiter.take('a');
    limiter.take('b');
    limiter.take('c');
    assert.equal(limiter.take('a').allowed, true, '"a" was evicted, so it starts with a full bucket');
  });
});

describe('anonymous paths', () => {
  test('OAuth, discovery, probes, version, metrics and OpenAPI skip bearer authentication', () => {
    for (const path of [
      '/oauth/token',
      '/.well-known/openid-configuration',
      '/healthz',
      '/livez',
      '/readyz',
      '/version',
      '/metrics',
      '/openapi/platform/v3',
    ]) {
      assert.equal(isAnonymousPath(path), true, path);
    }
    for (const path of [
      '/kapis/resources.platform.io/v1alpha3/nodes',
      '/api/v1/pods',
      '/apis',
      '/openapi/v3',
      '/openapi/v2',
      '/openapi/v3/apis/apps/v1',
      '/oauthx',
      '/metricsx',
      '/',
    ]) {
      assert.equal(isAnonymousPath(path), false, path);
    }
  });
});

describe('passwords', () => {
  test('bcrypt with cost ≥ 10; wrong, malformed or weak hashes never match', async () => {
    const hash = await hashPassword('s3cret password', 10);
    assert.equal(bcryptCostOf(hash), 10);
    const verifier = await PasswordVerifier.create(10);
    assert.equal(await verifier.verify('s3cret password', hash), true);
    assert.equal(await verifier.verify('s3cret passwort', hash), false);
    assert.equal(await verifier.verify('s3cret password', undefined), false);
    assert.equal(
      await verifier.verify('s3cret password', 's3cret password'),
      false,
      'plaintext is not a hash',
    );
    const weak = hash.replace('$10$', '$04$');
    assert.equal(await verifier.verify('s3cret password', weak), false);
    await assert.rejects(hashPassword('x', 9), /cost/);
    await assert.rejects(hashPassword('x'.repeat(73), 10), /72 bytes/);
    await assert.rejects(hashPassword('', 10), /empty/);
  });

  test('htpasswd-style $2y$ hashes verify like $2b$ ones', async () => {
    const verifier = await PasswordVerifier.create(10);
    const y = (await hashPassword('from htpasswd', 10)).replace(/^\$2b\$/, '$2y$');
    assert.match(y, /^\$2y\$10\$/);
    assert.equal(await verifier.verify('from htpasswd', y), true);
    assert.equal(await verifier.verify('from htpassw', y), false);
  });
});
