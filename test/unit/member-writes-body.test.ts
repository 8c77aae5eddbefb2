import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseMember, parseMembers } from '../../src/iam/member-writes.ts';
import { ApiError } from '../../src/kernel/api-error.ts';

/** The field a BadRequest names (its first cause). */
function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError);
    assert.equal(err.kind, 'BadRequest');
    return err.details?.causes?.[0]?.field;
  }
  assert.fail('expected a BadRequest');
}

test('an invite is a list of {username, roleRef}; extra fields are dropped', () => {
  assert.deepEqual(parseMembers([{ username: 'a', roleRef: 'viewer', extra: 1 }]), [
    { username: 'a', roleRef: 'viewer' },
  ]);
  assert.deepEqual(parseMembers([]), []);
});

test('a malformed invite or member names the field', () => {
  assert.equal(
    fieldOf(() => parseMembers({ username: 'a', roleRef: 'b' })),
    '',
  );
  assert.equal(
    fieldOf(() => parseMembers([{ username: 'a', roleRef: 'b' }, 'x'])),
    '[1]',
  );
  assert.equal(
    fieldOf(() => parseMembers([{ username: 'a', roleRef: '' }])),
    '[0].roleRef',
  );
  assert.equal(
    fieldOf(() => parseMember({ roleRef: 'b' })),
    'username',
  );
  assert.equal(
    fieldOf(() => parseMember([])),
    '',
  );
});

test('a member is a user name (DNS-1123) and a role name; a cluster role may be named with a colon', () => {
  assert.deepEqual(parseMember({ username: 'a.b-1', roleRef: 'system:aggregate-to-view' }), {
    username: 'a.b-1',
    roleRef: 'system:aggregate-to-view',
  });
  assert.equal(
    fieldOf(() => parseMembers([{ username: 'Alice', roleRef: 'viewer' }])),
    '[0].username',
  );
  assert.equal(
    fieldOf(() => parseMember({ username: 'a_b', roleRef: 'viewer' })),
    'username',
  );
  for (const roleRef of ['a/b', '..', 'x%2F'])
    assert.equal(
      fieldOf(() => parseMember({ username: 'a', roleRef })),
      'roleRef',
    );
});
