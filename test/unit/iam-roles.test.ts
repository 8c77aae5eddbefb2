import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ResourceAttributes } from '../../src/access/access-review.ts';
import { derivedTemplates, moduleRules } from '../../src/iam/derived-rules.ts';
import { roleVocabulary, type BindingObject, type RoleObject } from '../../src/iam/role-objects.ts';
import { aggregatedNames, bindingsOf, templatesOf } from '../../src/iam/role-templates.ts';
import { publicUser } from '../../src/iam/user-view.ts';
import type { UserObject } from '../../src/users/iam-resources.ts';

const words = roleVocabulary('acme');
const role = (name: string, created: string, aggregates?: unknown): RoleObject => ({
  metadata: {
    name,
    creationTimestamp: created,
    ...(aggregates === undefined
      ? {}
      : {
          annotations: {
            [words.aggregationRoles]:
              typeof aggregates === 'string' ? aggregates : JSON.stringify(aggregates),
          },
        }),
  },
});
const binding = (name: string, subjects: BindingObject['subjects'], roleName = 'r'): BindingObject => ({
  metadata: { name },
  subjects,
  roleRef: { kind: 'GlobalRole', name: roleName },
});

describe("the original's role template rule", () => {
  test('bindings name the user, or one of its groups when groups are given; first by name', () => {
    const bindings = [
      binding('b', [{ kind: 'User', name: 'ann' }]),
      binding('a', [{ kind: 'Group', name: 'team' }]),
      binding('c', [{ kind: 'User', name: 'bob' }]),
      binding('d', []),
    ];
    assert.deepEqual(
      bindingsOf(bindings, 'ann').map((b) => b.metadata.name),
      ['b'],
    );
    assert.deepEqual(
      bindingsOf(bindings, 'ann', ['team']).map((b) => b.metadata.name),
      ['a', 'b'],
    );
    assert.deepEqual(bindingsOf(bindings, 'zed', ['other']), []);
  });

  test('aggregation annotation: a JSON list of names, anything else counts as none', () => {
    assert.deepEqual(aggregatedNames(role('x', '', ['a', 'b']), words.aggregationRoles), ['a', 'b']);
    assert.deepEqual(aggregatedNames(role('x', '', ['a', 3, null]), words.aggregationRoles), ['a']);
    assert.deepEqual(aggregatedNames(role('x', '', 'not json'), words.aggregationRoles), []);
    assert.deepEqual(aggregatedNames(role('x', '', { a: 1 }), words.aggregationRoles), []);
    assert.deepEqual(aggregatedNames(role('x', ''), words.aggregationRoles), []);
  });

  test('templates: merged by name, missing ones skipped, newest first then name descending', () => {
    const stored = new Map(
      [
        role('t-old', '2024-01-01T00:00:00Z'),
        role('t-new', '2025-01-01T00:00:00Z'),
        role('t-a', '2024-06-01T00:00:00Z'),
        role('t-b', '2024-06-01T00:00:00Z'),
      ].map((r) => [r.metadata.name, r]),
    );
    const roles = [role('one', '', ['t-old', 't-a', 'gone']), role('two', '', ['t-a', 't-b', 't-new'])];
    assert.deepEqual(
      templatesOf(roles, (n) => stored.get(n), words.aggregationRoles).map((r) => r.metadata.name),
      ['t-new', 't-b', 't-a', 't-old'],
    );
  });
});

describe('a user as the users API shows it', () => {
  const user: UserObject = {
    apiVersion: 'iam.acme.io/v1alpha2',
    kind: 'User',
    metadata: {
      name: 'ann',
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{"password":"$2a$10$x"}}',
        'iam.acme.io/login-attempts': '{"f":[1]}',
        'iam.acme.io/globalrole': 'stale',
        'acme.io/alias-name': 'Ann',
      },
      managedFields: [{ manager: 'kubectl' }],
    },
    spec: { email: 'ann@example.com', password: '$2a$10$hash', groups: ['g'] },
    status: { state: 'Active', lastLoginTime: 't', recentFailedLogins: ['t1'], lockedUntil: 't2' },
  };
  const options = { ledgerAnnotation: 'iam.acme.io/login-attempts', globalRoleAnnotation: words.globalRole };

  test('no hash, no ledger, no last-applied, no lockout bookkeeping; the global role from the binding', () => {
    const view = publicUser(user, { ...options, globalRole: 'platform-admin' });
    assert.doesNotMatch(
      JSON.stringify(view),
      /\$2a|password|login-attempts|last-applied|recentFailed|lockedUntil|managedFields/,
    );
    assert.deepEqual(view.metadata.annotations, {
      'acme.io/alias-name': 'Ann',
      'iam.acme.io/globalrole': 'platform-admin',
    });
    assert.deepEqual(view.spec, { email: 'ann@example.com', groups: ['g'] });
    assert.deepEqual(view.status, { state: 'Active', lastLoginTime: 't' });
    assert.equal(user.spec?.password, '$2a$10$hash', 'the cached object is not changed');
  });

  test('without a global role, a stored annotation of that name is not shown either', () => {
    const view = publicUser(user, { ...options, globalRole: undefined });
    assert.equal(view.metadata.annotations?.[words.globalRole], undefined);
  });
});

describe('role templates derived from Kubernetes RBAC', () => {
  const key = (a: ResourceAttributes) => `${a.verb} ${a.group}/${a.resource} ${a.namespace ?? ''}`;

  test('manage where its review allows, else view, else nothing; one object per module', async () => {
    const grants = new Set(['update /nodes ', 'list iam.acme.io/users ']);
    const asked: string[] = [];
    const templates = await derivedTemplates({
      scope: 'global',
      platform: 'acme',
      vocabulary: words,
      allowed: async (a) => {
        asked.push(key(a));
        return grants.has(key(a));
      },
    });
    assert.deepEqual(
      templates.map((t) => [t.kind, t.metadata.name, t.metadata.annotations?.[words.templateRules]]),
      [
        ['GlobalRole', 'role-template-manage-clusters', '{"clusters":"manage"}'],
        ['GlobalRole', 'role-template-view-users', '{"users":"view"}'],
      ],
    );
    assert.ok(!asked.includes('list /nodes '), 'view is not asked once manage is allowed');
  });

  test('namespace scope: reviews in the namespace, Roles in it', async () => {
    const templates = await derivedTemplates({
      scope: 'namespace',
      platform: 'acme',
      vocabulary: words,
      namespace: 'dev',
      allowed: async (a) => a.namespace === 'dev' && a.verb === 'list' && a.resource === 'pods',
    });
    assert.deepEqual(
      templates.map((t) => [t.kind, t.metadata.namespace, t.metadata.name]),
      [['Role', 'dev', 'role-template-view-pods']],
    );
  });

  test('every module of every scope names one review per action, in the platform’s groups', () => {
    for (const scope of ['global', 'cluster', 'workspace', 'namespace'] as const) {
      const rules = moduleRules(scope, 'acme');
      assert.equal(new Set(rules.map((r) => r.module)).size, rules.length, `${scope}: modules unique`);
      for (const r of rules)
        assert.ok(r.view.verb && r.manage.verb && r.view.resource, `${scope} ${r.module}`);
    }
    assert.ok(moduleRules('global', 'acme').some((r) => r.view.group === 'iam.acme.io'));
  });
});
