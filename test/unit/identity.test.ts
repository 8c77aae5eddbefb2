import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { groupsToImpersonate } from '../../src/kernel/identity.ts';

describe('the groups a request impersonates', () => {
  test('system:authenticated is left to the kube-apiserver, which adds it for every user but anonymous', () => {
    assert.deepEqual(
      groupsToImpersonate({ username: 'alice', groups: ['developers', 'system:authenticated'] }),
      ['developers'],
    );
    assert.deepEqual(groupsToImpersonate({ username: 'alice', groups: ['system:authenticated'] }), []);
    assert.deepEqual(
      groupsToImpersonate({ username: 'system:anonymous', groups: ['system:authenticated'] }),
      ['system:authenticated'],
    );
  });
});
