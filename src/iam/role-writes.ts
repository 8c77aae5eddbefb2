import type { KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import type { AccessReviewer } from '../access/access-review.ts';
import { http1Dispatcher, kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { asApiError, invalid, type RbacPlace } from './member-writes.ts';
import type { RoleObject, RoleVocabulary } from './role-objects.ts';
import { notFound } from './scope-access.ts';

const RBAC = 'rbac.authorization.k8s.io';
const RBAC_V1 = `/apis/${RBAC}/v1`;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

type Verb = 'create' | 'update' | 'patch' | 'delete';

/**
 * Creates, replaces, patches and deletes the Roles of a project and the ClusterRoles of the cluster, as
 * the original does (`pkg/models/iam/am`), every write made **as the caller** (impersonated): Kubernetes
 * RBAC decides it, escalation prevention included (a role granting what the caller does not hold → 403).
 *
 * A role annotated `iam.<p>.io/aggregation-roles` (a JSON list of role-template names) gets, at write
 * time, the rules of those templates — Roles of the same namespace, or ClusterRoles — in place of any it
 * was sent; an unknown template → 404 naming it. Without the annotation the rules are kept as sent.
 * Built-in roles (see `builtInReason`) are neither changed nor deleted (403 naming why).
 */
export class RbacRoleWrites {
  readonly #kc: KubeConfig;
  readonly #reviewer: AccessReviewer;
  readonly #words: RoleVocabulary;
  readonly #creator: string;
  readonly #managedBy: string;
  readonly #timeoutMs: number;
  #dispatcher: Promise<Dispatcher> | undefined;

  constructor(deps: {
    kubeConfig: KubeConfig;
    reviewer: AccessReviewer;
    vocabulary: RoleVocabulary;
    platformName: string;
    timeoutMs: number;
  }) {
    this.#kc = deps.kubeConfig;
    this.#reviewer = deps.reviewer;
    this.#words = deps.vocabulary;
    this.#creator = `${deps.platformName}.io/creator`;
    this.#managedBy = `${deps.platformName}.io/managed-by`;
    this.#timeoutMs = deps.timeoutMs;
  }

  async create(caller: Identity, place: RbacPlace, body: unknown): Promise<RoleObject> {
    await this.#authorize(caller, place, 'create');
    await this.#namespace(place);
    const role = this.#parse(place, body);
    if (role.metadata.resourceVersion)
      throw invalid('metadata.resourceVersion', 'resourceVersion must not be set on a create');
    await this.#aggregate(place, role);
    return this.#write(caller, 'POST', this.#collection(place), role, `creating ${role.metadata.name}`);
  }

  async replace(caller: Identity, place: RbacPlace, name: string, body: unknown): Promise<RoleObject> {
    await this.#authorize(caller, place, 'update');
    const current = await this.#existing(place, name);
    const role = this.#parse(place, body);
    if (role.metadata.name !== name)
      throw invalid(
        'metadata.name',
        `the name of the object (${role.metadata.name}) does not match the name on the URL (${name})`,
      );
    this.#refuseBuiltIn(current, 'changed');
    role.metadata.resourceVersion ??= current.metadata.resourceVersion;
    await this.#aggregate(place, role);
    return this.#write(caller, 'PUT', this.#item(place, name), role, `replacing ${name}`);
  }

  /** A JSON merge patch (RFC 7386) of the stored role, written whole with its resourceVersion (a race → 409). */
  async patch(caller: Identity, place: RbacPlace, name: string, patch: unknown): Promise<RoleObject> {
    await this.#authorize(caller, place, 'patch');
    const current = await this.#existing(place, name);
    if (!isRecord(patch)) throw invalid('', 'the body must be a JSON merge patch (an object)');
    this.#refuseBuiltIn(current, 'changed');
    const merged = this.#parse(place, mergePatch(current, patch));
    if (merged.metadata.name !== name) throw invalid('metadata.name', 'the name of a role cannot be changed');
    await this.#aggregate(place, merged);
    return this.#write(caller, 'PUT', this.#item(place, name), merged, `patching ${name}`);
  }

  async remove(caller: Identity, place: RbacPlace, name: string): Promise<void> {
    await this.#authorize(caller, place, 'delete');
    const current = await this.#existing(place, name);
    this.#refuseBuiltIn(current, 'deleted');
    await this.#write(caller, 'DELETE', this.#item(place, name), undefined, `deleting ${name}`);
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

  /** A SubjectAccessReview first, so a caller without the verb learns nothing of roles or templates. */
  async #authorize(caller: Identity, place: RbacPlace, verb: Verb): Promise<void> {
    await this.#reviewer.authorize(
      caller,
      place.scope === 'cluster'
        ? { verb, group: RBAC, resource: 'clusterroles' }
        : { verb, group: RBAC, resource: 'roles', namespace: place.namespace },
    );
  }

  async #namespace(place: RbacPlace): Promise<void> {
    if (place.scope === 'cluster') return;
    if (!(await this.#get(`/api/v1/namespaces/${encodeURIComponent(place.namespace)}`)))
      throw notFound('', 'namespaces', place.namespace);
  }

  async #existing(place: RbacPlace, name: string): Promise<RoleObject> {
    await this.#namespace(place);
    const found = await this.#get<RoleObject>(this.#item(place, name));
    if (!found) throw notFound(RBAC, place.scope === 'cluster' ? 'clusterroles' : 'roles', name);
    return found;
  }

  /** The body checked as a Role (in the path's namespace) or a ClusterRole. */
  #parse(place: RbacPlace, body: unknown): RoleObject {
    const kind = place.scope === 'cluster' ? 'ClusterRole' : 'Role';
    if (!isRecord(body)) throw invalid('', `the body must be a ${kind} object`);
    if (body['kind'] !== undefined && body['kind'] !== kind)
      throw invalid('kind', `kind must be ${kind}, not ${JSON.stringify(body['kind'])}`);
    if (body['apiVersion'] !== undefined && body['apiVersion'] !== `${RBAC}/v1`)
      throw invalid('apiVersion', `apiVersion must be ${RBAC}/v1`);
    const metadata = body['metadata'];
    if (!isRecord(metadata)) throw invalid('metadata', 'metadata must be an object');
    const name = metadata['name'];
    if (typeof name !== 'string' || name.length > 253 || !DNS1123_SUBDOMAIN.test(name))
      throw invalid(
        'metadata.name',
        `metadata.name must be a DNS-1123 subdomain (lower case letters, digits, '-' and '.'), not ${JSON.stringify(name ?? null)}`,
      );
    if (
      place.scope === 'namespace' &&
      metadata['namespace'] !== undefined &&
      metadata['namespace'] !== place.namespace
    )
      throw invalid('metadata.namespace', `metadata.namespace must be ${place.namespace}, the path's`);
    if (body['rules'] !== undefined && body['rules'] !== null && !Array.isArray(body['rules']))
      throw invalid('rules', 'rules must be a list');
    const role = {
      ...body,
      apiVersion: `${RBAC}/v1`,
      kind,
      metadata: { ...metadata, ...(place.scope === 'namespace' ? { namespace: place.namespace } : {}) },
    } as RoleObject;
    this.#aggregationNames(role);
    return role;
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
  async #aggregate(place: RbacPlace, role: RoleObject): Promise<void> {
    const names = this.#aggregationNames(role);
    if (names === undefined) return;
    const rules: unknown[] = [];
    const seen = new Set<string>();
    for (const name of new Set(names)) {
      const template = await this.#get<RoleObject>(this.#item(place, name));
      if (!template)
        throw new ApiError(
          'NotFound',
          `role template "${name}" named in ${this.#words.aggregationRoles} not found ${place.scope === 'cluster' ? 'among the ClusterRoles' : `among the Roles of namespace "${place.namespace}"`}`,
          { details: { name, group: RBAC, kind: place.scope === 'cluster' ? 'clusterroles' : 'roles' } },
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

  #collection(place: RbacPlace): string {
    return place.scope === 'cluster'
      ? `${RBAC_V1}/clusterroles`
      : `${RBAC_V1}/namespaces/${encodeURIComponent(place.namespace)}/roles`;
  }

  #item(place: RbacPlace, name: string): string {
    return `${this.#collection(place)}/${encodeURIComponent(name)}`;
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

  async #write(
    caller: Identity,
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
        impersonate: caller,
        dispatcher: await this.#dispatcher,
      });
    } catch (err) {
      throw asApiError(err, doing);
    }
  }
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
