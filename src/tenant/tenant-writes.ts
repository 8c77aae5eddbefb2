import type { ResourceAttributes } from '../access/access-review.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import type { KubeObject } from './kube-object.ts';
import { applyJsonPatch, applyMergePatch } from './object-patch.ts';
import type { TenantNames, TenantStore } from './tenant-store.ts';
import type { AccessChecker } from './workspace-access.ts';

/** A patch as the caller sent it: a merge patch (RFC 7386) or a JSON patch (RFC 6902). */
export interface Patch {
  kind: 'merge' | 'json';
  value: unknown;
}

/** `{"message":"success"}`: what the original answers a delete with. */
export const DELETED = { message: 'success' } as const;

/** A DNS-1123 label: what a namespace name must be, and what a workspace name must be to name its roles. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

const PROPAGATION_POLICIES = ['Orphan', 'Background', 'Foreground'];

/**
 * The original's tenant writes: WorkspaceTemplates, and the namespaces (projects) of a workspace. Each
 * write is authorized as the caller with Kubernetes RBAC (a SubjectAccessReview), checked here for what
 * the kube-apiserver cannot know (the workspace a namespace belongs to, fields the server sets), then
 * made with the server's own credentials in one request, so nothing is left half made: what follows from
 * it (the Workspace of a template, default roles, the creator's binding) is the reconciler's work.
 */
export class TenantWriter {
  readonly #store: TenantStore;
  readonly #access: AccessChecker;
  readonly #names: TenantNames;
  readonly #creatorAnnotation: string;
  readonly #orphanFinalizer: string;

  constructor(options: {
    store: TenantStore;
    access: AccessChecker;
    names: TenantNames;
    platformName: string;
  }) {
    this.#store = options.store;
    this.#access = options.access;
    this.#names = options.names;
    this.#creatorAnnotation = `${options.platformName}.io/creator`;
    this.#orphanFinalizer = `orphan.finalizers.${options.platformName}.io`;
  }

  // --- WorkspaceTemplates -------------------------------------------------------------------------

  async createWorkspaceTemplate(identity: Identity, body: unknown): Promise<KubeObject> {
    const template = this.#workspaceTemplate(body);
    await this.#authorize(identity, this.#templateAttributes('create'));
    setAnnotation(template, this.#creatorAnnotation, identity.username);
    return this.#store.createWorkspaceTemplate(template);
  }

  async replaceWorkspaceTemplate(identity: Identity, name: string, body: unknown): Promise<KubeObject> {
    const template = this.#workspaceTemplate(body);
    matchName(template, name);
    await this.#authorize(identity, this.#templateAttributes('update', name));
    const current = await this.#existingTemplate(name);
    keepAnnotation(template, current, this.#creatorAnnotation);
    // Finalizers are the reconciler's and the delete route's, not the caller's to drop.
    template.metadata['finalizers'] = current.metadata['finalizers'];
    // Without one, the write is unconditional from what was just read (a PUT of a custom resource needs one).
    template.metadata['resourceVersion'] ??= current.metadata['resourceVersion'];
    return this.#store.replaceWorkspaceTemplate(name, template);
  }

  async patchWorkspaceTemplate(identity: Identity, name: string, patch: Patch): Promise<KubeObject> {
    await this.#authorize(identity, this.#templateAttributes('patch', name));
    const current = await this.#existingTemplate(name);
    const patched = this.#workspaceTemplate(applyPatch(current, patch));
    matchName(patched, name);
    keepAnnotation(patched, current, this.#creatorAnnotation);
    patched.metadata['finalizers'] = current.metadata['finalizers'];
    // Written with the resourceVersion it was read at: a change in between is a 409, not lost.
    return this.#store.replaceWorkspaceTemplate(name, patched);
  }

  /**
   * Deletes a template. `propagationPolicy: Orphan` keeps its namespaces (unbound from the workspace);
   * otherwise they go with it. As in the original, Orphan is recorded as a finalizer on the template, so
   * the reconciler knows what to do whenever it gets to it.
   */
  async deleteWorkspaceTemplate(identity: Identity, name: string, options: unknown): Promise<typeof DELETED> {
    const policy = deletePropagation(options);
    await this.#authorize(identity, this.#templateAttributes('delete', name));
    if (policy === 'Orphan') {
      const current = await this.#existingTemplate(name);
      const finalizers = (current.metadata['finalizers'] as string[] | undefined) ?? [];
      if (!finalizers.includes(this.#orphanFinalizer)) {
        await this.#store.patchWorkspaceTemplate(name, {
          metadata: {
            finalizers: [...finalizers, this.#orphanFinalizer],
            resourceVersion: current.metadata['resourceVersion'],
          },
        });
      }
    }
    await this.#store.deleteWorkspaceTemplate(name);
    return DELETED;
  }

  // --- Namespaces of a workspace --------------------------------------------------------------------

  /** Creates a namespace in a workspace: its workspace label and creator are the server's to set. */
  async createNamespace(identity: Identity, workspace: string, body: unknown): Promise<KubeObject> {
    const namespace = this.#namespace(body);
    const label = namespace.metadata.labels?.[this.#names.workspaceLabel];
    if (label !== undefined && label !== workspace)
      throw invalid(
        `metadata.labels["${this.#names.workspaceLabel}"]`,
        `names workspace "${label}", but the namespace is created in workspace "${workspace}"`,
      );
    await this.#mayCreateNamespaceIn(identity, workspace);
    await this.#existingWorkspace(workspace);
    setLabel(namespace, this.#names.workspaceLabel, workspace);
    setAnnotation(namespace, this.#creatorAnnotation, identity.username);
    return this.#store.createNamespace(namespace);
  }

  async replaceNamespace(
    identity: Identity,
    workspace: string,
    name: string,
    body: unknown,
  ): Promise<KubeObject> {
    const namespace = this.#namespace(body);
    matchName(namespace, name);
    await this.#authorize(identity, namespaceAttributes('update', name));
    const current = await this.#namespaceIn(workspace, name);
    return this.#writeNamespace(identity, workspace, current, namespace);
  }

  /** A patch may move the namespace to another workspace, for a caller who may create namespaces there. */
  async patchNamespace(
    identity: Identity,
    workspace: string,
    name: string,
    patch: Patch,
  ): Promise<KubeObject> {
    await this.#authorize(identity, namespaceAttributes('patch', name));
    const current = await this.#namespaceIn(workspace, name);
    const patched = this.#namespace(applyPatch(current, patch));
    matchName(patched, name);
    return this.#writeNamespace(identity, workspace, current, patched);
  }

  async deleteNamespace(identity: Identity, workspace: string, name: string): Promise<typeof DELETED> {
    await this.#authorize(identity, namespaceAttributes('delete', name));
    await this.#namespaceIn(workspace, name);
    await this.#store.deleteNamespace(name);
    return DELETED;
  }

  // --- helpers ------------------------------------------------------------------------------------

  /** Writes a namespace of `workspace` as `next`: its label missing means "stays", another workspace means a move. */
  async #writeNamespace(
    identity: Identity,
    workspace: string,
    current: KubeObject,
    next: KubeObject,
  ): Promise<KubeObject> {
    const target = next.metadata.labels?.[this.#names.workspaceLabel] ?? workspace;
    if (target !== workspace) {
      await this.#mayCreateNamespaceIn(identity, target);
      await this.#existingWorkspace(target);
    }
    setLabel(next, this.#names.workspaceLabel, target);
    keepAnnotation(next, current, this.#creatorAnnotation);
    // Finalizers are the reconciler's (it marks a namespace it has bound its creator in), not the caller's.
    next.metadata['finalizers'] = current.metadata['finalizers'];
    next.metadata['resourceVersion'] ??= current.metadata['resourceVersion'];
    return this.#store.replaceNamespace(next.metadata.name, next);
  }

  /**
   * Creating a namespace in a workspace: allowed to whom RBAC lets create namespaces, or create the
   * `namespaces` subresource of that workspace (`workspaces/namespaces` in the tenant group, by name):
   * a grant for one workspace, which Kubernetes RBAC can express and the platform's workspace roles
   * are made of.
   */
  async #mayCreateNamespaceIn(identity: Identity, workspace: string): Promise<void> {
    const anywhere = await this.#access.check(identity, {
      verb: 'create',
      group: '',
      resource: 'namespaces',
    });
    if (anywhere.allowed) return;
    const attributes: ResourceAttributes = {
      verb: 'create',
      group: this.#names.tenantGroup,
      resource: 'workspaces',
      subresource: 'namespaces',
      name: workspace,
    };
    if ((await this.#access.check(identity, attributes)).allowed) return;
    throw new ApiError(
      'Forbidden',
      `namespaces is forbidden: User "${identity.username}" cannot create namespaces in workspace "${workspace}": ` +
        `RBAC allows neither "create" on "namespaces" nor "create" on "workspaces/namespaces" named "${workspace}" in API group "${this.#names.tenantGroup}"`,
      { details: { name: workspace, group: this.#names.tenantGroup, kind: 'workspaces' } },
    );
  }

  async #authorize(identity: Identity, attributes: ResourceAttributes): Promise<void> {
    if ((await this.#access.check(identity, attributes)).allowed) return;
    const { verb, group, resource, name } = attributes;
    const what = group ? `${resource}.${group}` : resource;
    throw new ApiError(
      'Forbidden',
      `${what}${name ? ` "${name}"` : ''} is forbidden: User "${identity.username}" cannot ${verb} resource "${resource}" in API group "${group}" at the cluster scope`,
      { details: { ...(name ? { name } : {}), group, kind: resource } },
    );
  }

  #templateAttributes(verb: string, name?: string): ResourceAttributes {
    return {
      verb,
      group: this.#names.tenantGroup,
      resource: 'workspacetemplates',
      ...(name ? { name } : {}),
    };
  }

  async #existingTemplate(name: string): Promise<KubeObject> {
    const found = await this.#store.getWorkspace('workspacetemplates', name);
    if (!found) throw notFound(`workspacetemplates.${this.#names.tenantGroup}`, name);
    return found;
  }

  /** The workspace a namespace goes into exists: as a WorkspaceTemplate, or (member clusters) a Workspace. */
  async #existingWorkspace(name: string): Promise<void> {
    if (await this.#store.getWorkspace('workspacetemplates', name)) return;
    if (await this.#store.getWorkspace('workspaces', name)) return;
    throw new ApiError('NotFound', `workspace "${name}" not found`, {
      details: { name, group: this.#names.tenantGroup, kind: 'workspaces' },
    });
  }

  /** The namespace, if it belongs to the workspace; else 404 (as the original answers). */
  async #namespaceIn(workspace: string, name: string): Promise<KubeObject> {
    const found = await this.#store.getNamespace(name);
    if (!found || found.metadata.labels?.[this.#names.workspaceLabel] !== workspace)
      throw notFound('namespaces', name);
    return found;
  }

  #workspaceTemplate(body: unknown): KubeObject {
    const object = kubeObject(body, {
      kind: 'WorkspaceTemplate',
      apiVersions: [`${this.#names.tenantGroup}/v1alpha2`],
    });
    const spec = object['spec'];
    if (spec !== undefined && !isRecord(spec)) throw invalid('spec', 'must be an object');
    const manager =
      isRecord(spec) && isRecord(spec['template']) && isRecord(spec['template']['spec'])
        ? spec['template']['spec']['manager']
        : undefined;
    if (manager !== undefined && typeof manager !== 'string')
      throw invalid('spec.template.spec.manager', 'must be a user name (a string)');
    // The original's CRD requires both; its console leaves `placement` out on a single cluster (and
    // `template` when no administrator is chosen). Empty ones mean the same: this cluster, no settings.
    const filled = isRecord(spec) ? spec : {};
    for (const field of ['placement', 'template'] as const) {
      if (filled[field] === undefined) filled[field] = {};
      else if (!isRecord(filled[field])) throw invalid(`spec.${field}`, 'must be an object');
    }
    object['spec'] = filled;
    return object;
  }

  #namespace(body: unknown): KubeObject {
    return kubeObject(body, { kind: 'Namespace', apiVersions: ['v1'] });
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The body as an object of the expected kind: `kind` and `apiVersion` may be left out (the original's
 * clients often do) and are then filled in; a name that is not a DNS-1123 label is refused.
 */
function kubeObject(body: unknown, expected: { kind: string; apiVersions: string[] }): KubeObject {
  if (!isRecord(body)) throw new ApiError('BadRequest', `the request body must be a ${expected.kind} object`);
  const object = structuredClone(body);
  if (object['kind'] !== undefined && object['kind'] !== expected.kind)
    throw invalid('kind', `must be "${expected.kind}", not ${JSON.stringify(object['kind'])}`);
  if (object['apiVersion'] !== undefined && !expected.apiVersions.includes(object['apiVersion'] as string))
    throw invalid(
      'apiVersion',
      `must be "${expected.apiVersions[0]}", not ${JSON.stringify(object['apiVersion'])}`,
    );
  object['kind'] = expected.kind;
  object['apiVersion'] = expected.apiVersions[0];
  const metadata = object['metadata'];
  if (!isRecord(metadata)) throw invalid('metadata', 'is required (an object with a name)');
  const name = metadata['name'];
  if (typeof name !== 'string' || name === '') throw invalid('metadata.name', 'is required');
  if (!DNS_LABEL.test(name))
    throw invalid(
      'metadata.name',
      `${JSON.stringify(name)} is not a DNS-1123 label: at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit`,
    );
  for (const field of ['labels', 'annotations'] as const) {
    const map = metadata[field];
    if (map === undefined) continue;
    if (!isRecord(map) || Object.values(map).some((v) => typeof v !== 'string'))
      throw invalid(`metadata.${field}`, 'must be an object of strings');
  }
  return object as KubeObject;
}

function matchName(object: KubeObject, name: string): void {
  if (object.metadata.name !== name)
    throw invalid(
      'metadata.name',
      `the name of the object (${object.metadata.name}) does not match the name on the URL (${name})`,
    );
}

function applyPatch(current: KubeObject, patch: Patch): unknown {
  return patch.kind === 'merge'
    ? applyMergePatch(current, patch.value)
    : applyJsonPatch(current, patch.value);
}

function setLabel(object: KubeObject, key: string, value: string): void {
  object.metadata.labels = { ...object.metadata.labels, [key]: value };
}

function setAnnotation(object: KubeObject, key: string, value: string): void {
  object.metadata.annotations = { ...object.metadata.annotations, [key]: value };
}

/** Who created an object is recorded once, by the server: a write keeps the value it had. */
function keepAnnotation(next: KubeObject, current: KubeObject, key: string): void {
  const kept = current.metadata.annotations?.[key];
  const annotations = { ...next.metadata.annotations };
  if (kept === undefined) delete annotations[key];
  else annotations[key] = kept;
  next.metadata.annotations = annotations;
}

/** DeleteOptions as the original reads them: none, `{}`, or a propagation policy. */
function deletePropagation(options: unknown): string | undefined {
  if (options === undefined || options === null) return undefined;
  if (!isRecord(options))
    throw new ApiError('BadRequest', 'the request body must be DeleteOptions (an object)');
  if (options['kind'] !== undefined && options['kind'] !== 'DeleteOptions')
    throw invalid('kind', `must be "DeleteOptions", not ${JSON.stringify(options['kind'])}`);
  const policy = options['propagationPolicy'];
  if (policy === undefined) return undefined;
  if (typeof policy !== 'string' || !PROPAGATION_POLICIES.includes(policy))
    throw invalid('propagationPolicy', `must be one of ${PROPAGATION_POLICIES.join(', ')}`);
  return policy;
}

function invalid(field: string, message: string): ApiError {
  return new ApiError('BadRequest', `${field}: ${message}`, {
    details: { causes: [{ reason: 'FieldValueInvalid', message, field }] },
  });
}

function notFound(what: string, name: string): ApiError {
  return new ApiError('NotFound', `${what} "${name}" not found`, { details: { name, kind: what } });
}

function namespaceAttributes(verb: string, name: string): ResourceAttributes {
  // A namespace is cluster-scoped, but RBAC also decides on it through Roles in the namespace itself.
  return { verb, group: '', resource: 'namespaces', name, namespace: name };
}
