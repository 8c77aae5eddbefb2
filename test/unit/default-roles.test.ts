import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  namespaceRoleDefaults,
  workspaceRoleDefaults,
  type RoleBase,
} from '../../src/tenant/default-roles.ts';
import { tenantNames } from '../../src/tenant/tenant-store.ts';

const ks = tenantNames('kubesphere');

describe('default workspace and project roles', () => {
  test('the built-in ones are the original installer’s RoleBases (3.4), to the byte', () => {
    // SHA-256 of the compact JSON {ws: [...], ns: [...]} of the roles of the RoleBases workspace-admin,
    // -regular, -self-provisioner, -viewer and project-admin, -operator, -viewer in ks-installer v3.4.1
    // (roles/ks-core/prepare/files/ks-init/role-templates.yaml): name, labels, annotations and rules
    // (apiGroups, resources, verbs) of each, in name order.
    const text = JSON.stringify({ ws: workspaceRoleDefaults([], ks), ns: namespaceRoleDefaults([], ks) });
    assert.equal(
      createHash('sha256').update(text).digest('hex'),
      '786cdbd7a6838acb359d67537add38a7754b6fc26b9f58939beef18e4ef93064',
    );
  });

  test('under another platform name, its own API groups and annotation keys', () => {
    const acme = tenantNames('acme');
    const operator = namespaceRoleDefaults([], acme).find((r) => r.name === 'operator')!;
    const groups = operator.rules[1]!.apiGroups!;
    assert.ok(groups.includes('monitoring.acme.io') && groups.includes('monitoring.coreos.com'));
    assert.ok(!groups.some((g) => g.includes('kubesphere')));
    const admin = workspaceRoleDefaults([], acme).find((r) => r.name === 'admin')!;
    assert.deepEqual(Object.keys(admin.annotations), ['iam.acme.io/aggregation-roles', 'acme.io/creator']);
  });

  test("the cluster's RoleBases, when they hold any of the kind, replace the built-in ones", () => {
    const bases: RoleBase[] = [
      {
        metadata: { name: 'project-admin', labels: { 'scope.kubesphere.io/namespace': '' } },
        role: { kind: 'Role', metadata: { name: 'admin' }, rules: [{ verbs: ['get'] }] },
      },
      // Devops-only: not a project role.
      {
        metadata: { name: 'devops-basic', labels: { 'scope.kubesphere.io/devops': '' } },
        role: { kind: 'Role', metadata: { name: 'basic' }, rules: [] },
      },
      {
        metadata: { name: 'workspace-owner' },
        role: { kind: 'WorkspaceRole', metadata: { name: 'owner', labels: { a: 'b' } }, rules: [] },
      },
      // No name: ignored, as the original's controller skips it.
      { metadata: { name: 'broken' }, role: { kind: 'WorkspaceRole', metadata: {} } },
    ];
    assert.deepEqual(
      namespaceRoleDefaults(bases, ks).map((r) => [r.name, r.rules]),
      [['admin', [{ verbs: ['get'] }]]],
    );
    assert.deepEqual(
      workspaceRoleDefaults(bases, ks).map((r) => [r.name, r.labels]),
      [['owner', { a: 'b' }]],
    );
    // RoleBases of one kind only: the other kind keeps its built-in defaults.
    assert.equal(workspaceRoleDefaults(bases.slice(0, 2), ks).length, 4);
  });
});
