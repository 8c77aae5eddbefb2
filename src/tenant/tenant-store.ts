import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { KubeObject } from './kube-object.ts';

/** The original's tenant resources of one platform name (`<p>` below). */
export interface TenantNames {
  /** `tenant.<p>.io` */
  tenantGroup: string;
  /** `iam.<p>.io` */
  iamGroup: string;
  /** `<p>.io/workspace`: the label naming a namespace's (or a role binding's) workspace. */
  workspaceLabel: string;
  /** `<p>.io/alias-name` */
  aliasAnnotation: string;
  /** `<p>`, the platform name. */
  platformName: string;
  /** `<p>.io/creator`: who created an object (a namespace's creator is bound as its admin). */
  creatorAnnotation: string;
  /** `iam.<p>.io/user-ref`: the user a role binding binds. */
  userRefLabel: string;
  /** `<p>.io/namespace`: a workspace namespace's own name (the original's, for NetworkPolicy selectors). */
  namespaceLabel: string;
  /** `<p>.io/managed-by`: on the objects the tenant reconciler generates, valued `MANAGED_BY`. */
  managedByLabel: string;
  /** `scope.<p>.io/namespace`: on the RoleBases holding the default roles of a project. */
  namespaceScopeLabel: string;
  /** `finalizers.workspacetemplate.<p>.io`: the reconciler's, on every WorkspaceTemplate. */
  templateFinalizer: string;
  /**
   * `orphan.finalizers.<p>.io`: on a WorkspaceTemplate deleted with `propagationPolicy: Orphan`; its
   * namespaces then stay, without the workspace label.
   */
  orphanFinalizer: string;
  /** `finalizers.tenant.<p>.io`: the original's, on Workspaces (removed when one is deleted). */
  workspaceFinalizer: string;
  /** `finalizers.<p>.io/namespaces`: on a workspace's namespace once its creator has been bound. */
  namespaceFinalizer: string;
}

/** The value of `managedByLabel`. */
export const MANAGED_BY = 'platform-apiserver';

export function tenantNames(platformName: string): TenantNames {
  return {
    tenantGroup: `tenant.${platformName}.io`,
    iamGroup: `iam.${platformName}.io`,
    workspaceLabel: `${platformName}.io/workspace`,
    aliasAnnotation: `${platformName}.io/alias-name`,
    platformName,
    creatorAnnotation: `${platformName}.io/creator`,
    userRefLabel: `iam.${platformName}.io/user-ref`,
    namespaceLabel: `${platformName}.io/namespace`,
    managedByLabel: `${platformName}.io/managed-by`,
    namespaceScopeLabel: `scope.${platformName}.io/namespace`,
    templateFinalizer: `finalizers.workspacetemplate.${platformName}.io`,
    orphanFinalizer: `orphan.finalizers.${platformName}.io`,
    workspaceFinalizer: `finalizers.tenant.${platformName}.io`,
    namespaceFinalizer: `finalizers.${platformName}.io/namespaces`,
  };
}

/** The two workspace resources of the original: WorkspaceTemplates (host clusters) and Workspaces. */
export type WorkspaceResource = 'workspacetemplates' | 'workspaces';

/** The version each is stored under in the original's CRDs. */
const VERSIONS: Record<WorkspaceResource, string> = {
  workspacetemplates: 'v1alpha2',
  workspaces: 'v1alpha1',
};

/**
 * The tenant objects straight from the kube-apiserver, with the server's own credentials: the writes,
 * and the reads a write checks first (current, not as the watch last saw them). The read routes are
 * answered from `TenantCache`; what a caller may see of them is decided by `WorkspaceAccess`.
 */
export class TenantStore {
  readonly #kc: KubeConfig;
  readonly #names: TenantNames;
  readonly #timeoutMs: number;

  constructor(options: { kubeConfig: KubeConfig; names: TenantNames; timeoutMs: number }) {
    this.#kc = options.kubeConfig;
    this.#names = options.names;
    this.#timeoutMs = options.timeoutMs;
  }

  /** One workspace, or undefined when it (or its resource type) does not exist. */
  getWorkspace(resource: WorkspaceResource, name: string): Promise<KubeObject | undefined> {
    return this.#get(
      `/apis/${this.#names.tenantGroup}/${VERSIONS[resource]}/${resource}/${encodeURIComponent(name)}`,
    );
  }

  getNamespace(name: string): Promise<KubeObject | undefined> {
    return this.#get(`/api/v1/namespaces/${encodeURIComponent(name)}`);
  }

  // --- writes, with the server's own credentials (the caller was authorized before) ----------------

  createWorkspaceTemplate(template: KubeObject): Promise<KubeObject> {
    return this.#write('POST', this.#templatesPath(), template);
  }

  replaceWorkspaceTemplate(name: string, template: KubeObject): Promise<KubeObject> {
    return this.#write('PUT', this.#templatesPath(name), template);
  }

  /** A merge patch; `metadata.resourceVersion` in it makes it conditional. */
  patchWorkspaceTemplate(name: string, patch: unknown): Promise<KubeObject> {
    return this.#write('PATCH', this.#templatesPath(name), patch, 'application/merge-patch+json');
  }

  async deleteWorkspaceTemplate(name: string): Promise<void> {
    await this.#write('DELETE', this.#templatesPath(name));
  }

  createNamespace(namespace: KubeObject): Promise<KubeObject> {
    return this.#write('POST', '/api/v1/namespaces', namespace);
  }

  replaceNamespace(name: string, namespace: KubeObject): Promise<KubeObject> {
    return this.#write('PUT', `/api/v1/namespaces/${encodeURIComponent(name)}`, namespace);
  }

  async deleteNamespace(name: string): Promise<void> {
    await this.#write('DELETE', `/api/v1/namespaces/${encodeURIComponent(name)}`);
  }

  #templatesPath(name?: string): string {
    const base = `/apis/${this.#names.tenantGroup}/${VERSIONS.workspacetemplates}/workspacetemplates`;
    return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
  }

  /** One write; the kube-apiserver's refusal becomes the same kind of error, with its message. */
  async #write(
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<KubeObject> {
    try {
      return await kubeRequest<KubeObject>(this.#kc, path, {
        method,
        timeoutMs: this.#timeoutMs,
        ...(body === undefined ? {} : { body }),
        ...(contentType ? { contentType } : {}),
      });
    } catch (err) {
      throw writeRefused(err);
    }
  }

  async #get(path: string): Promise<KubeObject | undefined> {
    try {
      return await kubeRequest<KubeObject>(this.#kc, path, { timeoutMs: this.#timeoutMs });
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 404) return undefined;
      throw unavailable(err);
    }
  }
}

/**
 * A write the kube-apiserver refused, in its own words: what it says of the object (invalid, exists,
 * changed since read, gone) is the caller's to fix. Its 403 would be about the server's own account,
 * which the caller cannot fix: an internal error, named as such.
 */
function writeRefused(err: unknown): ApiError {
  if (!(err instanceof KubeRequestError)) return unavailable(err);
  const message = err.statusMessage ?? err.message;
  switch (err.statusCode) {
    case 400:
    case 422:
      return new ApiError('BadRequest', message);
    case 404:
      return new ApiError('NotFound', message);
    case 409:
      return new ApiError(err.statusReason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict', message);
    case 403:
      return new ApiError('Internal', `the server's own account may not make this change: ${message}`);
    default:
      return unavailable(err);
  }
}

/** The kube-apiserver failed or did not answer: the caller may try again. */
function unavailable(err: unknown): ApiError {
  const detail = err instanceof Error ? err.message : String(err);
  return new ApiError('Unavailable', `cannot read tenant resources from the kube-apiserver: ${detail}`, {
    retryAfterSeconds: 1,
  });
}
