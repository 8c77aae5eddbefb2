import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { uncovered } from '../../src/iam/rbac-covers.ts';
import {
  aggregatedNames,
  clusterRoleBindingFor,
  clusterRoleFor,
  rbacNames,
  repaired,
  roleBindingFor,
  rulesOf,
  sourceOf,
  unionOfRules,
  type RbacObject,
} from '../../src/iam/rbac-translation.ts';

const names = rbacNames('kubesphere');
const RBAC = 'rbac.authorization.k8s.io';

describe('the platform role model as Kubernetes RBAC', () => {
  test('a GlobalRole becomes a labelled ClusterRole with its rules, as Kubernetes stores them', () => {
    const role = clusterRoleFor(names, 'GlobalRole', {
      metadata: { name: 'users-manager' },
      rules: [{ apiGroups: ['iam.kubesphere.io'], resources: ['users'], verbs: ['*'], resourceNames: [] }],
    });
    assert.equal(role.metadata.name, 'kubesphere:globalrole:users-manager');
    assert.deepEqual(role.metadata.labels, {
      'kubesphere.io/managed-by': 'platform-apiserver',
      'iam.kubesphere.io/generated-from': 'GlobalRole',
    });
    assert.deepEqual(role.rules, [{ verbs: ['*'], apiGroups: ['iam.kubesphere.io'], resources: ['users'] }]);
    assert.deepEqual(sourceOf(names, role), { kind: 'GlobalRole', name: 'users-manager' });
    assert.equal(sourceOf(names, { metadata: { name: 'edit', labels: {} } }), undefined);
  });

  test("bindings keep their users and groups; platform-admin is bound to cluster-admin, as the original's controller does", () => {
    const binding: RbacObject = {
      metadata: { name: 'ann-platform-admin' },
      roleRef: { apiGroup: 'iam.kubesphere.io', kind: 'GlobalRole', name: 'platform-admin' },
      subjects: [
        { kind: 'User', name: 'ann' },
        { kind: 'Group', name: 'ops', apiGroup: 'iam.kubesphere.io' },
        { kind: 'Robot', name: 'x' },
      ],
    };
    const crb = clusterRoleBindingFor(names, binding);
    assert.deepEqual(crb.roleRef, { apiGroup: RBAC, kind: 'ClusterRole', name: 'cluster-admin' });
    assert.deepEqual(crb.subjects, [
      { kind: 'User', apiGroup: RBAC, name: 'ann' },
      { kind: 'Group', apiGroup: RBAC, name: 'ops' },
    ]);
    const rb = roleBindingFor(
      names,
      { ...binding, roleRef: { apiGroup: 'iam.kubesphere.io', kind: 'WorkspaceRole', name: 'w-admin' } },
      'project-1',
    );
    assert.equal(rb.metadata.namespace, 'project-1');
    assert.equal(rb.metadata.name, 'kubesphere:workspacerolebinding:ann-platform-admin');
    assert.deepEqual(rb.roleRef, {
      apiGroup: RBAC,
      kind: 'ClusterRole',
      name: 'kubesphere:workspacerole:w-admin',
    });
  });

  test('drift: a changed rule or subject is put back, labels merged; an equal object is left alone', () => {
    const desired = clusterRoleFor(names, 'WorkspaceRole', {
      metadata: { name: 'w-viewer' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    const stored: RbacObject = {
      ...desired,
      metadata: {
        ...desired.metadata,
        resourceVersion: '7',
        labels: { ...desired.metadata.labels, extra: 'x' },
      },
    };
    assert.equal(repaired(stored, desired), undefined);
    const edited = repaired({ ...stored, rules: [] }, desired);
    assert.ok(edited && edited !== 'replace');
    assert.deepEqual(edited.rules, desired.rules);
    assert.equal(edited.metadata.resourceVersion, '7');
    assert.equal(edited.metadata.labels?.['extra'], 'x');

    const binding = roleBindingFor(
      names,
      {
        metadata: { name: 'b' },
        roleRef: { kind: 'WorkspaceRole', name: 'r' },
        subjects: [{ kind: 'User', name: 'u' }],
      },
      'ns',
    );
    assert.equal(
      repaired({ ...binding, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'other' } }, binding),
      'replace',
    );
    const resubjected = repaired({ ...binding, subjects: [] }, binding);
    assert.ok(resubjected && resubjected !== 'replace');
    assert.deepEqual(resubjected.subjects, binding.subjects);
  });

  test('aggregation: the union of the templates, duplicates dropped; a malformed annotation is none', () => {
    const one = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };
    const two = { apiGroups: [''], resources: ['pods'], verbs: ['list'] };
    assert.deepEqual(
      unionOfRules([
        { metadata: { name: 'a' }, rules: [one] },
        { metadata: { name: 'b' }, rules: [one, two] },
      ]),
      [one, two],
    );
    const annotated = (value: string): RbacObject => ({
      metadata: { name: 'r', annotations: { 'iam.kubesphere.io/aggregation-roles': value } },
    });
    assert.deepEqual(aggregatedNames(names, annotated('["a","b"]')), ['a', 'b']);
    assert.equal(aggregatedNames(names, annotated('not json')), undefined);
    assert.equal(aggregatedNames(names, annotated('[1]')), undefined);
    assert.deepEqual(rulesOf({ metadata: { name: 'r' }, rules: null }), []);
  });

  test("escalation: Kubernetes' covering rule", () => {
    const admin = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
    const wide = [{ apiGroups: [''], resources: ['secrets', 'pods'], verbs: ['get', 'list'] }];
    assert.deepEqual(uncovered(admin, wide), []);
    const podsOnly = [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }];
    assert.deepEqual(uncovered(podsOnly, wide), [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['list'] },
    ]);
    // A wildcard asked for is held only as a wildcard.
    assert.equal(uncovered(podsOnly, [{ apiGroups: [''], resources: ['*'], verbs: ['get'] }]).length, 1);
    // Names: an owner limited to names covers only those names.
    const named = [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'], verbs: ['get'] }];
    assert.deepEqual(uncovered(named, named), []);
    assert.equal(
      uncovered(named, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]).length,
      1,
    );
    // Subresources and URLs.
    assert.deepEqual(
      uncovered(
        [{ apiGroups: [''], resources: ['pods/*'], verbs: ['get'] }],
        [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }],
      ),
      [],
    );
    assert.deepEqual(
      uncovered(
        [{ nonResourceURLs: ['/healthz/*'], verbs: ['get'] }],
        [{ nonResourceURLs: ['/healthz/etcd'], verbs: ['get'] }],
      ),
      [],
    );
    assert.equal(uncovered([], [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]).length, 1);
  });
});
