import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseGroupMembers } from '../../src/iam/group-members.ts';
import { ApiError } from '../../src/kernel/api-error.ts';

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

test("the console's group members: a non-empty list of {userName, groupName}, extra fields dropped", () => {
  assert.deepEqual(parseGroupMembers([{ userName: 'alice', groupName: 'devx7k2p', extra: true }]), [
    { userName: 'alice', groupName: 'devx7k2p' },
  ]);
});

test('a malformed list of group members names the field', () => {
  assert.equal(
    fieldOf(() => parseGroupMembers({ userName: 'a', groupName: 'g' })),
    '',
  );
  assert.equal(
    fieldOf(() => parseGroupMembers([])),
    '',
  );
  assert.equal(
    fieldOf(() => parseGroupMembers([{ userName: 'a', groupName: 'g' }, 7])),
    '[1]',
  );
  assert.equal(
    fieldOf(() => parseGroupMembers([{ groupName: 'g' }])),
    '[0].userName',
  );
  assert.equal(
    fieldOf(() => parseGroupMembers([{ userName: 'Alice', groupName: 'g' }])),
    '[0].userName',
  );
  assert.equal(
    fieldOf(() => parseGroupMembers([{ userName: 'a', groupName: 'system:masters' }])),
    '[0].groupName',
  );
});
