import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/kernel/api-error.ts';
import { checkPassword, readPasswordChange, readUser } from '../../src/iam/user-input.ts';

const GROUP = 'iam.acme.io';
const user = (metadata: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
  apiVersion: `${GROUP}/v1alpha2`,
  kind: 'User',
  metadata,
  spec: { email: 'a@b.example', ...spec },
});
/** A 400 whose message starts with the field. */
const badField = (field: string) => (err: unknown) =>
  err instanceof ApiError && err.kind === 'BadRequest' && err.message.startsWith(`${field}: `);

describe('the password policy', () => {
  test('8 to 64 characters with a lower-case letter, an upper-case letter and a digit', () => {
    for (const ok of ['Abcdefg1', 'P4ssword-with-symbols!', `A1${'b'.repeat(62)}`])
      assert.equal(checkPassword(ok, 'p'), ok);
    for (const weak of ['Abcde1', 'abcdefg1', 'ABCDEFG1', 'Abcdefgh', `A1${'b'.repeat(63)}`, '', 7])
      assert.throws(() => checkPassword(weak, 'spec.password'), badField('spec.password'));
  });

  test('more than 72 bytes (what bcrypt reads) is refused even under 64 characters', () => {
    assert.throws(() => checkPassword(`Aa1${'é'.repeat(40)}`, 'password'), badField('password'));
  });
});

describe('a User body', () => {
  test('its writable fields, nothing else', () => {
    const input = readUser(
      user(
        { name: 'alice.b-1', annotations: { x: 'y' }, labels: { l: 'v' }, resourceVersion: '7' },
        { lang: 'en', description: 'd', password: 'Secret-1x', groups: ['g'] },
      ),
      GROUP,
    );
    assert.deepEqual(input, {
      name: 'alice.b-1',
      resourceVersion: '7',
      labels: { l: 'v' },
      annotations: { x: 'y' },
      spec: { email: 'a@b.example', lang: 'en', description: 'd', groups: ['g'] },
      password: 'Secret-1x',
    });
  });

  test('kind and apiVersion may be left out, but not be another', () => {
    assert.equal(readUser({ metadata: { name: 'a' } }, GROUP).name, 'a');
    assert.throws(() => readUser({ ...user({ name: 'a' }), kind: 'Group' }, GROUP), badField('kind'));
    assert.throws(
      () => readUser({ ...user({ name: 'a' }), apiVersion: 'iam.other.io/v1alpha2' }, GROUP),
      badField('apiVersion'),
    );
  });

  test('a name that is no DNS-1123 subdomain of at most 63 characters', () => {
    for (const name of ['Alice', 'a_b', '-a', 'a-', '', 'a'.repeat(64), 7, undefined])
      assert.throws(() => readUser(user({ name }), GROUP), badField('metadata.name'));
  });

  test('an e-mail address needs a local part, an @ and a dotted domain', () => {
    for (const email of [
      'no-at.example',
      'a@b',
      'a b@c.example',
      '@c.example',
      `${'a'.repeat(250)}@b.example`,
    ])
      assert.throws(() => readUser(user({ name: 'a' }, { email }), GROUP), badField('spec.email'));
  });

  test('not an object; annotations that are not strings', () => {
    for (const body of [null, [], 'x', 3]) assert.throws(() => readUser(body, GROUP), badField('body'));
    assert.throws(
      () => readUser(user({ name: 'a', annotations: { n: 1 } }), GROUP),
      badField('metadata.annotations'),
    );
  });
});

describe('a password change', () => {
  test('the new password follows the policy; the current one is optional', () => {
    assert.deepEqual(readPasswordChange({ password: 'Newpass-1' }), { password: 'Newpass-1' });
    assert.deepEqual(readPasswordChange({ currentPassword: 'old', password: 'Newpass-1' }), {
      currentPassword: 'old',
      password: 'Newpass-1',
    });
    assert.throws(() => readPasswordChange({ password: 'weak' }), badField('password'));
    assert.throws(
      () => readPasswordChange({ currentPassword: 3, password: 'Newpass-1' }),
      badField('currentPassword'),
    );
    assert.throws(() => readPasswordChange('x'), badField('body'));
  });
});
