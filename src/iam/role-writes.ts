import type { KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import type { AccessReviewer } from '../access/access-review.ts';
import { http1Dispatcher, kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import type { EscalationCheck } from './escalation-check.ts';
import { asApiError, invalid } from './member-writes.ts';
import type { RoleObject, RoleVocabulary } from './role-objects.ts';
import { notFound, type Place } from './scope-access.ts';

const RBAC = 'rbac.authorization.k8s.io';
const RBAC_V1 = `/apis/${RBAC}/v1`;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

type Verb = 'create' | 'update' | 'patch' | 'delete';

/** Where a scope's roles are stored and how they are written. */
interface Target {
  kind: 'GlobalRole' | 'ClusterRole' | 'WorkspaceRole' | 'Role';
  apiVersion: string;
  group: string;
  resource: string;
  namespace?: string;
  /** Label the server sets (a WorkspaceRole's workspace); a stored role without it is not of this scope. */
  label?: [string, string];
  collection: string;
  /** Kubernetes RBAC roles are written as the caller; the original's CRD objects by the server. */
  impersonate: boolean;
  /** Where the aggregated templates are looked up, for messages. */
  templates: string;
}

/**
 * Creates, replaces, patches and deletes the roles of every scope, as the original does
 * (`pkg/models/iam/am`). Kubernetes Roles and ClusterRoles are written **as the caller** (impersonated):
 * Kubernetes RBAC decides, escalation prevention included (a role granting what the caller does not hold
 * → 403). The original's GlobalRoles and WorkspaceRoles are written by the server after a
 * SubjectAccessReview as the caller; where their CRDs are not installed → 404 naming the resource.
 *
 * A role annotated `iam.<p>.io/aggregation-roles` (a JSON list of role-template names) gets, at write
 * time, the rules of those templates — roles of the same kind (a project's: of the same namespace) — in
 * place of any it was sent; an unknown template → 404 naming it. Without the annotation the rules are
 * kept as sent.
 * Built-in roles (see `builtInReason`) are neither changed nor deleted (403 naming why).
 */
export class RoleWrites {
  readonly #kc: KubeConfig;
  readonly #reviewer: AccessReviewer;
  readonly #words: RoleVocabulary;
  readonly #creator: string;
  readonly #managedBy: string;
  readonly #iam: string;
  readonly #tenant: string;
  readonly #timeoutMs: number;
  readonly #escalation: EscalationCheck | undefined;
  #dispatcher: Promise<Dispatcher> | undefined;

  constructor(deps: {
    kubeConfig: KubeConfig;
    reviewer: AccessReviewer;
    vocabulary: RoleVocabulary;
    platformName: string;
    timeoutMs: number;
    /** Refuses a GlobalRole or WorkspaceRole with rules the caller does not hold (403). */
    escalation?: EscalationCheck;
  }) {
    this.#kc = deps.kubeConfig;
    this.#reviewer = deps.reviewer;
    this.#words = deps.vocabulary;
    this.#escalation = deps.escalation;
    this.#creator = `${deps.platformName}.io/creator`;
    this.#managedBy = `${deps.platformName}.io/managed-by`;
    this.#iam = `iam.${deps.platformName}.io`;
    this.#tenant = `tenant.${deps.platformName}.io`;
    this.#timeoutMs = deps.timeoutMs;
  }

  async create(caller: Identity, place: Place, body: unknown): Promise<RoleObject> {
    const target = await this.#target(caller, place, 'create');
    const role = this.#parse(target, body);
    if (role.metadata.resourceVersion)
      throw invalid('metadata.resourceVersion', 'resourceVersion must not be set on a create');
    await this.#aggregate(target, role);
    await this.#noEscalation(caller, target, role);
    return this.#write(caller, target, 'POST', target.collection, role, `creating ${role.metadata.name}`);
  }

  async replace(caller: Identity, place: Place, name: string, body: unknown): Promise<RoleObject> {
    const target = await this.#target(caller, place, 'update');
    const current = await this.#existing(target, name);
    const role = this.#parse(target, body);
    if (role.metadata.name !== name)
      throw invalid(
        'metadata.name',
        `the name of the object (${role.metadata.name}) does not match the name on the URL (${name})`,
      );
    this.#refuseBuiltIn(current, 'changed');
    role.metadata.resourceVersion ??= current.metadata.resourceVersion;
    await this.#aggregate(target, role);
    await this.#noEscalation(caller, target, role);
    return this.#write(caller, target, 'PUT', item(target, name), role, `replacing ${name}`);
  }

  /** A JSON merge patch (RFC 7386) of the stored role, written whole with its resourceVersion (a race → 409). */
  async patch(caller: Identity, place: Place, name: string, patch: unknown): Promise<RoleObject> {
    const target = await this.#target(caller, place, 'patch');
    const current = await this.#existing(target, name);
    if (!isRecord(patch)) throw invalid('', 'the body must be a JSON merge patch (an object)');
    this.#refuseBuiltIn(current, 'changed');
    const merged = this.#parse(target, mergePatch(current, patch));
    if (merged.metadata.name !== name) throw invalid('metadata.name', 'the name of a role cannot be changed');
    await this.#aggregate(target, merged);
    await this.#noEscalation(caller, target, merged);
    return this.#write(caller, target, 'PUT', item(target, name), merged, `patching ${name}`);
  }

  async remove(caller: Identity, place: Place, name: string): Promise<void> {
    const target = await this.#target(caller, place, 'delete');
    const current = await this.#existing(target, name);
    this.#refuseBuiltIn(current, 'deleted');
    await this.#write(caller, target, 'DELETE', item(target, name), undefined, `deleting ${name}`);
  }

  /**
   * Why a role is built in, or undefined. The original marks its role templates with the label
   * `iam.<p>.io/role-template` and the roles it makes from its RoleBases with `<p>.io/creator: system`;
   * this server's tenant reconciler labels what it makes `<p>.io/managed-by`; Kubernetes' own default
   * roles carry `kubernetes.io/bootstrapping: rbac-defaults`.
   */
  builtInReason(role: RoleObject): string | undefined {
    const labels = role.metadata.labels ?? {};
    if (this.#words.templateLabel in labels)
      return `it is a role template (label ${this.#words.templateLabel})`;
    if (labels['kubernetes.io/bootstrapping'] === 'rbac-defaults')
      return "it is one of Kubernetes' default roles (label kubernetes.io/bootstrapping: rbac-defaults)";
    if (this.#managedBy in labels) return `it is made by the platform (label ${this.#managedBy})`;
    if (role.metadata.annotations?.[this.#creator] === 'system')
      return `it is built in (annotation ${this.#creator}: system)`;
    return undefined;
  }

  #refuseBuiltIn(role: RoleObject, done: 'changed' | 'deleted'): void {
    const why = this.builtInReason(role);
    if (why) throw new ApiError('Forbidden', `role "${role.metadata.name}" cannot be ${done}: ${why}`);
  }

  /**
   * The scope's storage, after a SubjectAccessReview as the caller (so a caller without the verb learns
   * nothing of roles or templates) and a check that the scope and its resource exist.
   */
  async #target(caller: Identity, place: Place, verb: Verb): Promise<Target> {
    const target = this.#targetOf(place);
    await this.#reviewer.authorize(caller, {
      verb,
      group: target.group,
      resource: target.resource,
      ...(target.namespace === undefined ? {} : { namespace: target.namespace }),
    });
    if (place.scope === 'namespace') {
      if (!(await this.#get(`/api/v1/namespaces/${encodeURIComponent(place.namespace)}`)))
        throw notFound('', 'namespaces', place.namespace);
    } else if (!target.impersonate) {
      // A missing CRD answers 404 for its whole collection: say so, rather than "role not found".
      if (!(await this.#get(`${target.collection}?limit=1`)))
        throw new ApiError(
          'NotFound',
          `the resource ${target.resource}.${target.group} is not installed in this cluster`,
          { details: { group: target.group, kind: target.resource } },
        );
      if (place.scope === 'workspace') {
        const ws = `/apis/${this.#tenant}/v1alpha2/workspacetemplates/${encodeURIComponent(place.workspace)}`;
        if (!(await this.#get(ws))) throw notFound(this.#tenant, 'workspacetemplates', place.workspace);
      }
    }
    return target;
  }

  #targetOf(place: Place): Target {
    const iamV = `/apis/${this.#iam}/v1alpha2`;
    switch (place.scope) {
      case 'global':
        return {
          kind: 'GlobalRole',
          apiVersion: `${this.#iam}/v1alpha2`,
          group: this.#iam,
          resource: 'globalroles',
          collection: `${iamV}/globalroles`,
          impersonate: false,
          templates: 'among the GlobalRoles',
        };
      case 'workspace':
        return {
          kind: 'WorkspaceRole',
          apiVersion: `${this.#iam}/v1alpha2`,
          group: this.#iam,
          resource: 'workspaceroles',
          label: [this.#words.workspaceLabel, place.workspace],
          collection: `${iamV}/workspaceroles`,
          impersonate: false,
          templates: 'among the WorkspaceRoles',
        };
      case 'cluster':
        return {
          kind: 'ClusterRole',
          apiVersion: `${RBAC}/v1`,
          group: RBAC,
          resource: 'clusterroles',
          collection: `${RBAC_V1}/clusterroles`,
          impersonate: true,
          templates: 'among the ClusterRoles',
        };
      case 'namespace':
        return {
          kind: 'Role',
          apiVersion: `${RBAC}/v1`,
          group: RBAC,
          resource: 'roles',
          namespace: place.namespace,
          collection: `${RBAC_V1}/namespaces/${encodeURIComponent(place.namespace)}/roles`,
          impersonate: true,
          templates: `among the Roles of namespace "${place.namespace}"`,
        };
    }
  }

  /** The stored role; 404 when there is none (a WorkspaceRole: none of this workspace). */
  async #existing(target: Target, name: string): Promise<RoleObject> {
    const found = await this.#get<RoleObject>(item(target, name));
    if (!found || (target.label && found.metadata.labels?.[target.label[0]] !== target.label[1]))
      throw notFound(target.group, target.resource, name);
    return found;
  }

  /** The body checked as a role of the target's kind (a Role: in the path's namespace). */
  #parse(target: Target, body: unknown): RoleObject {
    const { kind, apiVersion } = target;
    if (!isRecord(body)) throw invalid('', `the body must be a ${kind} object`);
    if (body['kind'] !== undefined && body['kind'] !== kind)
      throw invalid('kind', `kind must be ${kind}, not ${JSON.stringify(body['kind'])}`);
    if (body['apiVersion'] !== undefined && body['apiVersion'] !== apiVersion)
      throw invalid('apiVersion', `apiVersion must be ${apiVersion}`);
    const metadata = body['metadata'];
    if (!isRecord(metadata)) throw invalid('metadata', 'metadata must be an object');
    const name = metadata['name'];
    if (typeof name !== 'string' || name.length > 253 || !DNS1123_SUBDOMAIN.test(name))
      throw invalid(
        'metadata.name',
        `metadata.name must be a DNS-1123 subdomain (lower case letters, digits, '-' and '.'), not ${JSON.stringify(name ?? null)}`,
      );
    const namespace = target.namespace;
    if (metadata['namespace'] !== undefined && metadata['namespace'] !== namespace)
      throw invalid(
        'metadata.namespace',
        namespace ? `metadata.namespace must be ${namespace}, the path's` : `a ${kind} has no namespace`,
      );
    if (body['rules'] !== undefined && body['rules'] !== null && !Array.isArray(body['rules']))
      throw invalid('rules', 'rules must be a list');
    const labels = isRecord(metadata['labels']) ? metadata['labels'] : {};
    const role = {
      ...body,
      apiVersion,
      kind,
      metadata: {
        ...metadata,
        ...(namespace === undefined ? {} : { namespace }),
        ...(target.label ? { labels: { ...labels, [target.label[0]]: target.label[1] } } : {}),
      },
    } as RoleObject;
    this.#aggregationNames(role);
    return role;
  }

  /**
   * The original's role kinds are written by the server, and become ClusterRoles (the RBAC reconciler):
   * the caller must be able to create such a ClusterRole themselves (a dry run as the caller), as
   * Kubernetes checks for the roles written as the caller.
   */
  async #noEscalation(caller: Identity, target: Target, role: RoleObject): Promise<void> {
    if (target.impersonate) return;
    await this.#escalation?.role(caller, role.rules ?? []);
  }

  /** The annotation's names; undefined without it; 400 when it is not a JSON list of strings. */
  #aggregationNames(role: RoleObject): string[] | undefined {
    const text = role.metadata.annotations?.[this.#words.aggregationRoles];
    if (text === undefined) return undefined;
    const field = `metadata.annotations[${this.#words.aggregationRoles}]`;
    let names: unknown;
    try {
      names = JSON.parse(text);
    } catch {
      throw invalid(field, `${field} must be a JSON list of role template names`);
    }
    if (!Array.isArray(names) || !names.every((n) => typeof n === 'string'))
      throw invalid(field, `${field} must be a JSON list of role template names`);
    return names as string[];
  }

  /** The rules of the aggregated templates, in place of the role's own (duplicates dropped). */
  async #aggregate(target: Target, role: RoleObject): Promise<void> {
    const names = this.#aggregationNames(role);
    if (names === undefined) return;
    const rules: unknown[] = [];
    const seen = new Set<string>();
    for (const name of new Set(names)) {
      const template = await this.#get<RoleObject>(item(target, name));
      if (!template)
        throw new ApiError(
          'NotFound',
          `role template "${name}" named in ${this.#words.aggregationRoles} not found ${target.templates}`,
          { details: { name, group: target.group, kind: target.resource } },
        );
      for (const rule of template.rules ?? []) {
        const key = JSON.stringify(rule);
        if (seen.has(key)) continue;
        seen.add(key);
        rules.push(rule);
      }
    }
    role.rules = rules;
  }

  /** A read with the server's own credentials; undefined on 404. */
  async #get<T>(path: string): Promise<T | undefined> {
    try {
      return await kubeRequest<T>(this.#kc, path, { timeoutMs: this.#timeoutMs });
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 404) return undefined;
      throw asApiError(err, 'reading the roles');
    }
  }

  /** As the caller (impersonated) for Kubernetes RBAC roles; with the server's own credentials otherwise. */
  async #write(
    caller: Identity,
    target: Target,
    method: 'POST' | 'PUT' | 'DELETE',
    path: string,
    body: RoleObject | undefined,
    doing: string,
  ): Promise<RoleObject> {
    this.#dispatcher ??= http1Dispatcher(this.#kc).catch((err: unknown) => {
      this.#dispatcher = undefined;
      throw err;
    });
    try {
      return await kubeRequest<RoleObject>(this.#kc, path, {
        method,
        ...(body === undefined ? {} : { body }),
        timeoutMs: this.#timeoutMs,
        ...(target.impersonate ? { impersonate: caller } : {}),
        dispatcher: await this.#dispatcher,
      });
    } catch (err) {
      throw asApiError(err, doing);
    }
  }
}

function item(target: Target, name: string): string {
  return `${target.collection}/${encodeURIComponent(name)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 7386: objects merged key by key, `null` removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const result: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}
