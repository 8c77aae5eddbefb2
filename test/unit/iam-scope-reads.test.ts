import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { membershipsOf } from '../../src/iam/members.ts';
import { selectRoles } from '../../src/iam/role-lists.ts';
import { roleVocabulary, type BindingObject, type RoleObject } from '../../src/iam/role-objects.ts';
import type { Place } from '../../src/iam/scope-access.ts';
import { publicUser } from '../../src/iam/user-view.ts';
import { parseListQuery } from '../../src/list-query/list-query.ts';
import { matchesMetadata, sortAndPage, type ListedObject } from '../../src/list-query/metadata-page.ts';
import type { UserObject } from '../../src/users/iam-resources.ts';

const words = roleVocabulary('acme');

describe('the v1alpha3 pipeline over metadata', () => {
  const item = (name: string, created: string, extra: Partial<ListedObject['metadata']> = {}) => ({
    metadata: { name, creationTimestamp: created, ...extra },
  });
  const items = [
    item('beta', '2024-01-02T00:00:00Z', {
      labels: { tier: 'gold' },
      annotations: { [words.alias]: 'Team B' },
    }),
    item('alpha', '2024-01-03T00:00:00Z', { annotations: { 'acme.io/creator': 'admin' } }),
    item('gamma', '2024-01-01T00:00:00Z', { uid: 'u-gamma' }),
    item('delta', '2024-01-02T00:00:00Z'),
  ];
  const names = (query: Record<string, string>) => {
    const q = parseListQuery(query);
    return sortAndPage(
      items.filter((i) => matchesMetadata(i, q, words.alias)),
      q,
    ).items.map((i) => i.metadata.name);
  };

  test('newest first by default, ties by name descending; ascending and by name', () => {
    assert.deepEqual(names({}), ['alpha', 'delta', 'beta', 'gamma']);
    assert.deepEqual(names({ ascending: 'true' }), ['gamma', 'beta', 'delta', 'alpha']);
    assert.deepEqual(names({ sortBy: 'name', ascending: 'true' }), ['alpha', 'beta', 'delta', 'gamma']);
  });

  test('filters: name, names, uid, label, annotation (a key alone: set), alias', () => {
    assert.deepEqual(names({ name: 'ta' }), ['delta', 'beta']);
    assert.deepEqual(names({ names: 'gamma,alpha' }), ['alpha', 'gamma']);
    assert.deepEqual(names({ uid: 'u-gamma' }), ['gamma']);
    assert.deepEqual(names({ label: 'tier=gold' }), ['beta']);
    assert.deepEqual(names({ labelSelector: '!tier' }), ['alpha', 'delta', 'gamma']);
    assert.deepEqual(names({ annotation: 'acme.io/creator' }), ['alpha']);
    assert.deepEqual(names({ alias: 'Team' }), ['beta']);
  });

  test('a page counts every match; past the end is empty', () => {
    const q = parseListQuery({ limit: '3', page: '2' });
    const page = sortAndPage(items, q);
    assert.equal(page.totalItems, 4);
    assert.deepEqual(
      page.items.map((i) => i.metadata.name),
      ['gamma'],
    );
    assert.deepEqual(sortAndPage(items, parseListQuery({ limit: '3', page: '3' })).items, []);
  });
});

describe("the original's role lists", () => {
  const role = (name: string, labels: Record<string, string> = {}, aggregates?: string[]): RoleObject => ({
    metadata: {
      name,
      creationTimestamp: '2024-01-01T00:00:00Z',
      labels,
      ...(aggregates ? { annotations: { [words.aggregationRoles]: JSON.stringify(aggregates) } } : {}),
    },
  });
  const template = { [words.templateLabel]: 'true' };
  const roles = [
    role('ws1-admin', { [words.workspaceLabel]: 'ws1' }, ['role-template-view-members', 'gone']),
    role('ws1-viewer', { [words.workspaceLabel]: 'ws1' }),
    role('ws2-admin', { [words.workspaceLabel]: 'ws2' }),
    role('role-template-view-members', template),
    role('role-template-manage-members', template),
  ];
  const select = (place: Place, query: Record<string, string>) =>
    selectRoles({
      place,
      query: parseListQuery(query, { filters: { aggregateTo: undefined } }),
      roles,
      lookup: (name) => roles.find((r) => r.metadata.name === name),
      vocabulary: words,
    }).items.map((r) => r.metadata.name);
  const ws1: Place = { scope: 'workspace', workspace: 'ws1' };

  test('a workspace lists the roles labelled with it', () => {
    assert.deepEqual(select(ws1, { sortBy: 'name', ascending: 'true' }), ['ws1-admin', 'ws1-viewer']);
  });

  test('asked for role templates, a workspace lists the shared ones (label, labelSelector)', () => {
    const templates = ['role-template-view-members', 'role-template-manage-members'];
    assert.deepEqual(select(ws1, { label: `${words.templateLabel}=true` }).sort(), [...templates].sort());
    assert.deepEqual(select(ws1, { labelSelector: words.templateLabel }).sort(), [...templates].sort());
  });

  test('aggregateTo: the templates a role aggregates, skipping missing ones; none for an unknown role', () => {
    assert.deepEqual(select(ws1, { aggregateTo: 'ws1-admin' }), ['role-template-view-members']);
    assert.deepEqual(select(ws1, { aggregateTo: 'no-such-role' }), []);
    assert.deepEqual(select({ scope: 'cluster' }, { aggregateTo: 'ws1-viewer' }), []);
  });

  test('other scopes list every role of their kind, filtered by the query', () => {
    assert.equal(select({ scope: 'cluster' }, {}).length, 5);
    assert.deepEqual(select({ scope: 'global' }, { name: 'ws2' }), ['ws2-admin']);
  });
});

describe("a scope's members, from its bindings", () => {
  const binding = (name: string, role: string, subjects: BindingObject['subjects']): BindingObject => ({
    metadata: { name },
    roleRef: { kind: 'Role', name: role },
    subjects,
  });
  const bindings = [
    binding('b-viewer', 'viewer', [
      { kind: 'User', name: 'ann' },
      { kind: 'User', name: 'bob' },
    ]),
    binding('a-admin', 'admin', [
      { kind: 'User', name: 'ann' },
      { kind: 'Group', name: 'team' },
      { kind: 'ServiceAccount', name: 'robot', namespace: 'ns' },
    ]),
    binding('c-empty', 'viewer', undefined),
  ];

  test('User subjects only; a user bound twice has the first binding by name', () => {
    assert.deepEqual(membershipsOf(bindings), [
      { username: 'ann', role: 'admin' },
      { username: 'bob', role: 'viewer' },
    ]);
  });

  test('a role filter counts only bindings to that role', () => {
    assert.deepEqual(membershipsOf(bindings, 'viewer'), [
      { username: 'ann', role: 'viewer' },
      { username: 'bob', role: 'viewer' },
    ]);
    assert.deepEqual(membershipsOf(bindings, 'operator'), []);
  });

  test("a member is shown with the scope's role annotation, never with a stored global role", () => {
    const user: UserObject = {
      apiVersion: 'iam.acme.io/v1alpha2',
      kind: 'User',
      metadata: { name: 'ann', annotations: { [words.globalRole]: 'stale', [words.namespaceRole]: 'stale' } },
      spec: { email: 'ann@example.com', password: '$2a$10$hash' },
    };
    const view = publicUser(user, {
      ledgerAnnotation: 'iam.acme.io/login-attempts',
      globalRoleAnnotation: words.globalRole,
      globalRole: undefined,
      scopeRole: { annotation: words.namespaceRole, role: 'admin' },
    });
    assert.deepEqual(view.metadata.annotations, { [words.namespaceRole]: 'admin' });
    assert.equal(view.spec?.password, undefined);
  });
});
