import type { AccessReviewer } from '../access/access-review.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { parseListQuery, type RawQuery } from '../list-query/list-query.ts';
import { matchesMetadata, sortAndPage, type Page } from '../list-query/metadata-page.ts';
import type { UserDirectory } from '../users/user-directory.ts';
import type { EscalationCheck } from './escalation-check.ts';
import type { GroupAccess } from './group-access.ts';
import type { GroupObject } from './group-cache.ts';
import { alreadyExists, checkName, checkType, isRecord, listOf, stringMap, text } from './group-input.ts';
import type { IamKube } from './iam-kube.ts';
import { notFound as userNotFound } from './member-roles.ts';
import { invalid, isPathSegmentName } from './member-writes.ts';
import type { RoleCache } from './role-cache.ts';
import type { BindingObject, RoleObject, Subject } from './role-objects.ts';
import { notFound, type ScopeAccess } from './scope-access.ts';

const RBAC = 'rbac.authorization.k8s.io';
const RBAC_V1 = `/apis/${RBAC}/v1`;

type Binding = BindingObject & { apiVersion?: string; kind?: string };

/** Where a binding is written: a workspace (WorkspaceRoleBindings) or a project (RoleBindings in its namespace). */
type Place = { scope: 'workspace'; workspace: string } | { scope: 'namespace'; namespace: string };

/**
 * The role bindings of groups, as the original's console writes them for a group's roles in a workspace
 * and in its projects (`pkg/models/iam/am`): WorkspaceRoleBindings and RoleBindings named
 * `{subject}-{role}-` + a generated suffix, labelled `iam.<p>.io/group-ref` (or `user-ref`, for a user
 * subject) and, in a workspace, `<p>.io/workspace`. A project's RoleBindings are written **as the
 * caller** (impersonated), so Kubernetes RBAC decides, its escalation prevention included; a workspace's
 * are authorized by `GroupAccess` and written by the server. Every subject must exist — a user, or a
 * group of the workspace — so no binding can name a Kubernetes group the platform does not manage
 * (`system:authenticated`, …). A list is checked whole before anything is written.
 */
export class GroupRoleBindings {
  readonly #kube: IamKube;
  readonly #access: GroupAccess;
  readonly #scopes: ScopeAccess;
  readonly #roles: RoleCache;
  readonly #reviewer: AccessReviewer;
  readonly #users: UserDirectory;
  readonly #iamGroup: string;
  readonly #userRef: string;
  readonly #groupRef: string;
  readonly #workspaceLabel: string;
  readonly #alias: string;
  readonly #escalation: EscalationCheck | undefined;

  constructor(deps: {
    kube: IamKube;
    access: GroupAccess;
    scopes: ScopeAccess;
    roles: RoleCache;
    reviewer: AccessReviewer;
    users: UserDirectory;
    platformName: string;
    /** Refuses binding a workspace role whose rules the caller does not hold in its projects (403). */
    escalation?: EscalationCheck;
  }) {
    this.#escalation = deps.escalation;
    this.#kube = deps.kube;
    this.#access = deps.access;
    this.#scopes = deps.scopes;
    this.#roles = deps.roles;
    this.#reviewer = deps.reviewer;
    this.#users = deps.users;
    this.#iamGroup = `iam.${deps.platformName}.io`;
    this.#userRef = `${this.#iamGroup}/user-ref`;
    this.#groupRef = `${this.#iamGroup}/group-ref`;
    this.#workspaceLabel = `${deps.platformName}.io/workspace`;
    this.#alias = `${deps.platformName}.io/alias-name`;
  }

  /** The workspace's WorkspaceRoleBindings (the v1alpha3 envelope; read as the workspace's members are). */
  async listWorkspace(caller: Identity, workspace: string, raw: RawQuery): Promise<Page<BindingObject>> {
    await this.#scopes.authorize(caller, { scope: 'workspace', workspace }, 'members');
    const query = parseListQuery(raw);
    return sortAndPage(
      this.#roles.bindings('workspace', workspace).filter((b) => matchesMetadata(b, query, this.#alias)),
      query,
    );
  }

  /**
   * The RoleBindings of every project of the workspace, filtered and sorted by the list query, as a plain
   * JSON list (the original's shape). A caller RBAC does not let list RoleBindings everywhere sees those
   * of the projects where it may list them, once it may see the workspace.
   */
  async listProjects(caller: Identity, workspace: string, raw: RawQuery): Promise<BindingObject[]> {
    const everywhere = { verb: 'list', group: RBAC, resource: 'rolebindings' };
    await this.#access.read(caller, workspace, everywhere);
    if (!this.#roles.ready)
      throw new ApiError('Unavailable', 'the role caches are starting', { retryAfterSeconds: 1 });
    const query = parseListQuery(raw);
    const all = (await this.#reviewer.check(caller, everywhere)).allowed;
    const selector = encodeURIComponent(`${this.#workspaceLabel}=${workspace}`);
    const projects = await this.#kube.items<{ metadata: { name: string } }>(
      `/api/v1/namespaces?labelSelector=${selector}`,
    );
    const found: BindingObject[] = [];
    for (const { metadata } of projects) {
      if (!all && !(await this.#reviewer.check(caller, { ...everywhere, namespace: metadata.name })).allowed)
        continue;
      for (const b of this.#roles.bindings('namespace', metadata.name))
        if (matchesMetadata(b, query, this.#alias)) found.push(b);
    }
    return sortAndPage(found, query).items;
  }

  async createWorkspace(caller: Identity, workspace: string, body: unknown): Promise<BindingObject[]> {
    const bindings = this.#parse(body, { scope: 'workspace', workspace });
    await this.#access.write(caller, workspace, 'create', 'workspacerolebindings');
    const existing = this.#roles.bindings('workspace', workspace);
    const roles: RoleObject[] = [];
    for (const [i, b] of bindings.entries()) {
      const role = await this.#kube.get<RoleObject>(
        `/apis/${this.#iamGroup}/v1alpha2/workspaceroles/${encodeURIComponent(b.roleRef.name)}`,
      );
      if (!role || role.metadata.labels?.[this.#workspaceLabel] !== workspace)
        throw notFound(this.#iamGroup, 'workspaceroles', b.roleRef.name);
      await this.#checkSubjects(b, i, workspace);
      this.#refuseDuplicate(b, existing, 'workspacerolebindings');
      roles.push(role);
    }
    await this.#noEscalation(caller, workspace, roles);
    return this.#createAll(bindings, `/apis/${this.#iamGroup}/v1alpha2/workspacerolebindings`);
  }

  /**
   * A WorkspaceRoleBinding is in force in the workspace's projects (the RBAC reconciler): the caller must
   * hold each role's rules in every project it has now (docs/iam-api.md#what-is-in-force).
   */
  async #noEscalation(caller: Identity, workspace: string, roles: readonly RoleObject[]): Promise<void> {
    if (!this.#escalation) return;
    const selector = encodeURIComponent(`${this.#workspaceLabel}=${workspace}`);
    const projects = (
      (
        await this.#kube.get<{ items: { metadata: { name: string } }[] }>(
          `/api/v1/namespaces?labelSelector=${selector}`,
        )
      )?.items ?? []
    ).map((ns) => ns.metadata.name);
    if (projects.length === 0) return;
    for (const role of roles)
      await this.#escalation.workspaceRoleBinding(
        caller,
        { name: role.metadata.name, rules: role.rules ?? [] },
        projects,
      );
  }

  async removeWorkspace(caller: Identity, workspace: string, name: string): Promise<void> {
    await this.#access.write(caller, workspace, 'delete', 'workspacerolebindings');
    const path = `/apis/${this.#iamGroup}/v1alpha2/workspacerolebindings/${encodeURIComponent(name)}`;
    const binding = await this.#kube.get<BindingObject>(path);
    if (binding?.metadata.labels?.[this.#workspaceLabel] !== workspace)
      throw notFound(this.#iamGroup, 'workspacerolebindings', name);
    await this.#kube.delete(path, `deleting workspacerolebinding ${name}`);
  }

  /** RoleBindings in a project, written as the caller after a dry run of each (all or nothing refused). */
  async createNamespace(caller: Identity, namespace: string, body: unknown): Promise<BindingObject[]> {
    const bindings = this.#parse(body, { scope: 'namespace', namespace });
    await this.#reviewer.authorize(caller, {
      verb: 'create',
      group: RBAC,
      resource: 'rolebindings',
      namespace,
    });
    const ns = await this.#kube.get<{ metadata: RoleObject['metadata'] }>(
      `/api/v1/namespaces/${encodeURIComponent(namespace)}`,
    );
    if (!ns) throw notFound('', 'namespaces', namespace);
    const workspace = ns.metadata.labels?.[this.#workspaceLabel];
    const collection = `${RBAC_V1}/namespaces/${encodeURIComponent(namespace)}/rolebindings`;
    const existing = await this.#kube.items<BindingObject>(collection);
    for (const [i, b] of bindings.entries()) {
      const role = await this.#kube.get(
        `${RBAC_V1}/namespaces/${encodeURIComponent(namespace)}/roles/${encodeURIComponent(b.roleRef.name)}`,
      );
      if (!role) throw notFound(RBAC, 'roles', b.roleRef.name);
      await this.#checkSubjects(b, i, workspace);
      this.#refuseDuplicate(b, existing, 'rolebindings');
    }
    for (const b of bindings)
      await this.#kube.write(
        'POST',
        `${collection}?dryRun=All`,
        `no role binding was made: binding ${b.roleRef.name}`,
        {
          body: b,
          caller,
        },
      );
    return this.#createAll(bindings, collection, caller);
  }

  /** Deleted as the caller: Kubernetes RBAC decides. */
  async removeNamespace(caller: Identity, namespace: string, name: string): Promise<void> {
    await this.#reviewer.authorize(caller, {
      verb: 'delete',
      group: RBAC,
      resource: 'rolebindings',
      namespace,
    });
    await this.#kube.write(
      'DELETE',
      `${RBAC_V1}/namespaces/${encodeURIComponent(namespace)}/rolebindings/${encodeURIComponent(name)}`,
      `deleting rolebinding ${name}`,
      { caller },
    );
  }

  /** Every binding labelled with the group (WorkspaceRoleBindings, ClusterRoleBindings, RoleBindings): a group being deleted. */
  async removeAllOf(group: string): Promise<void> {
    const selector = `?labelSelector=${encodeURIComponent(`${this.#groupRef}=${group}`)}`;
    const wrb = `/apis/${this.#iamGroup}/v1alpha2/workspacerolebindings`;
    for (const b of await this.#kube.items<BindingObject>(`${wrb}${selector}`))
      await this.#kube.delete(
        `${wrb}/${encodeURIComponent(b.metadata.name)}`,
        `deleting workspacerolebinding ${b.metadata.name}`,
      );
    for (const b of await this.#kube.items<BindingObject>(`${RBAC_V1}/clusterrolebindings${selector}`))
      await this.#kube.delete(
        `${RBAC_V1}/clusterrolebindings/${encodeURIComponent(b.metadata.name)}`,
        `deleting clusterrolebinding ${b.metadata.name}`,
      );
    for (const b of await this.#kube.items<BindingObject>(`${RBAC_V1}/rolebindings${selector}`))
      await this.#kube.delete(
        `${RBAC_V1}/namespaces/${encodeURIComponent(b.metadata.namespace ?? '')}/rolebindings/${encodeURIComponent(b.metadata.name)}`,
        `deleting rolebinding ${b.metadata.name}`,
      );
  }

  /** Each binding as the original writes it: a generated name after its first subject and role, the reference labels. */
  #parse(body: unknown, place: Place): Binding[] {
    const kind = place.scope === 'workspace' ? 'WorkspaceRoleBinding' : 'RoleBinding';
    const apiVersion = place.scope === 'workspace' ? `${this.#iamGroup}/v1alpha2` : `${RBAC}/v1`;
    const roleKind = place.scope === 'workspace' ? 'WorkspaceRole' : 'Role';
    return listOf(body, `${kind} objects`).map((item, i) => {
      const at = `[${i}]`;
      if (!isRecord(item)) throw invalid(at, `${at} must be a ${kind} object`);
      try {
        checkType(item, kind, [apiVersion]);
      } catch (err) {
        throw relabel(err, at);
      }
      const metadata = item['metadata'] ?? {};
      if (!isRecord(metadata)) throw invalid(`${at}.metadata`, `${at}.metadata must be an object`);
      if (metadata['name'] !== undefined) checkName(metadata['name'], `${at}.metadata.name`);
      if (
        metadata['namespace'] !== undefined &&
        (place.scope !== 'namespace' || metadata['namespace'] !== place.namespace)
      )
        throw invalid(`${at}.metadata.namespace`, `${at}.metadata.namespace must be the path's`);
      const labels = stringMap(metadata['labels'], `${at}.metadata.labels`) ?? {};
      const roleRef = item['roleRef'];
      if (!isRecord(roleRef)) throw invalid(`${at}.roleRef`, `${at}.roleRef must be an object`);
      const role = text(roleRef, 'name', `${at}.roleRef.name`);
      if (place.scope === 'workspace') checkName(role, `${at}.roleRef.name`);
      else if (!isPathSegmentName(role))
        throw invalid(
          `${at}.roleRef.name`,
          `${at}.roleRef.name must be a role name (no '/' or '%', not '.' or '..')`,
        );
      if (roleRef['kind'] !== undefined && roleRef['kind'] !== roleKind)
        throw invalid(`${at}.roleRef.kind`, `${at}.roleRef.kind must be ${roleKind}`);
      const subjects = item['subjects'];
      if (!Array.isArray(subjects) || subjects.length === 0)
        throw invalid(`${at}.subjects`, `${at}.subjects must list at least one subject`);
      const parsed: Subject[] = subjects.map((s: unknown, j) => {
        const field = `${at}.subjects[${j}]`;
        if (!isRecord(s)) throw invalid(field, `${field} must be an object`);
        const subjectKind = text(s, 'kind', `${field}.kind`);
        if (subjectKind !== 'User' && subjectKind !== 'Group')
          throw invalid(
            `${field}.kind`,
            `${field}.kind must be User or Group, not ${JSON.stringify(subjectKind)}`,
          );
        // Users and Groups are objects of the platform: a name that is no object name names nothing here.
        const name = checkName(text(s, 'name', `${field}.name`), `${field}.name`);
        return { kind: subjectKind, apiGroup: RBAC, name };
      });
      const first = parsed[0] as Subject;
      const ref = first.kind === 'Group' ? this.#groupRef : this.#userRef;
      const name = metadata['name'] as string | undefined;
      return {
        apiVersion,
        kind,
        metadata: {
          ...(name ? { name } : { name: '', generateName: `${first.name}-${role}-` }),
          ...(place.scope === 'namespace' ? { namespace: place.namespace } : {}),
          labels: {
            ...labels,
            [ref]: first.name,
            ...(place.scope === 'workspace' ? { [this.#workspaceLabel]: place.workspace } : {}),
          },
          ...(metadata['annotations']
            ? { annotations: stringMap(metadata['annotations'], `${at}.metadata.annotations`) }
            : {}),
        },
        subjects: parsed,
        roleRef: {
          apiGroup: place.scope === 'workspace' ? this.#iamGroup : RBAC,
          kind: roleKind,
          name: role,
        },
      } as Binding;
    });
  }

  /** Users exist; groups are Groups (of the workspace, when there is one): no binding to a group the platform does not manage. */
  async #checkSubjects(binding: BindingObject, i: number, workspace: string | undefined): Promise<void> {
    for (const s of binding.subjects ?? []) {
      if (s.kind === 'User') {
        if (!(await this.#users.get(s.name))) throw userNotFound(this.#iamGroup, s.name);
        continue;
      }
      const group = await this.#kube.get<GroupObject>(
        `/apis/${this.#iamGroup}/v1alpha2/groups/${encodeURIComponent(s.name)}`,
      );
      if (!group || (workspace !== undefined && group.metadata.labels?.[this.#workspaceLabel] !== workspace))
        throw new ApiError(
          'NotFound',
          `groups.${this.#iamGroup} "${s.name}" not found${workspace ? ` in workspace "${workspace}"` : ''} (subject of [${i}])`,
          { details: { name: s.name, group: this.#iamGroup, kind: 'groups' } },
        );
    }
  }

  /** The same role already bound to the same first subject here → 409 (the original made a second binding). */
  #refuseDuplicate(binding: BindingObject, existing: readonly BindingObject[], resource: string): void {
    const first = binding.subjects?.[0];
    const same = existing.find(
      (b) =>
        b.metadata.name === binding.metadata.name ||
        (b.roleRef.name === binding.roleRef.name &&
          (b.subjects ?? []).some((s) => s.kind === first?.kind && s.name === first?.name)),
    );
    if (same)
      throw alreadyExists(
        resource === 'rolebindings' ? RBAC : this.#iamGroup,
        resource,
        same.metadata.name,
        `${first?.kind} "${first?.name}" is already bound to "${binding.roleRef.name}" by ${resource} "${same.metadata.name}"; nothing was written`,
      );
  }

  async #createAll(bindings: Binding[], collection: string, caller?: Identity): Promise<BindingObject[]> {
    const made: BindingObject[] = [];
    for (const b of bindings) {
      const { metadata } = b;
      const body = { ...b, metadata: metadata.name ? metadata : omitName(metadata) };
      try {
        made.push(
          await this.#kube.write<BindingObject>('POST', collection, `binding ${b.roleRef.name}`, {
            body,
            ...(caller ? { caller } : {}),
          }),
        );
      } catch (err) {
        const done = made.map((m) => m.metadata.name).join(', ') || 'none';
        const message = err instanceof ApiError ? err.message : String(err);
        throw new ApiError(err instanceof ApiError ? err.kind : 'BadGateway', `${message}; made: ${done}`);
      }
    }
    return made;
  }
}

function omitName(metadata: BindingObject['metadata']): Omit<BindingObject['metadata'], 'name'> {
  const { name: _, ...rest } = metadata;
  return rest;
}

function relabel(err: unknown, at: string): unknown {
  if (!(err instanceof ApiError)) return err;
  const field = err.details?.causes?.[0]?.field ?? '';
  return invalid(`${at}.${field}`, `${at}.${err.message}`);
}
