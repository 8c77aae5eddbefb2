import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { kubeRequest, KubeRequestError } from '../../src/cluster/kube-request.ts';
import {
  namespaceRoleDefaults,
  workspaceRoleDefaults,
  type DefaultRole,
} from '../../src/tenant/default-roles.ts';
import { tenantPaths } from '../../src/tenant/tenant-paths.ts';
import { MANAGED_BY, tenantNames } from '../../src/tenant/tenant-store.ts';
import { waitFor } from '../cluster/wait-for.ts';

const TENANT_CRD_DIR = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'seed-crds',
  'tenant',
);
const CHART_CRD_DIR = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'charts',
  'platform-apiserver',
  'files',
  'crds',
);
/** The chart's CRDs of the original's workspace resources. */
const CHART_TENANT_CRDS = [
  'workspacetemplates.tenant.platform.io',
  'workspaces.tenant.platform.io',
  'workspaceroles.iam.platform.io',
  'workspacerolebindings.iam.platform.io',
];

/** The original's tenant resources (and the WorkspaceRoleBindings naming members) of one platform name. */
export function tenantGroups(platform: string) {
  return {
    templates: { group: `tenant.${platform}.io`, version: 'v1alpha2', plural: 'workspacetemplates' },
    workspaces: { group: `tenant.${platform}.io`, version: 'v1alpha1', plural: 'workspaces' },
    bindings: { group: `iam.${platform}.io`, version: 'v1alpha2', plural: 'workspacerolebindings' },
    workspaceLabel: `${platform}.io/workspace`,
  };
}

/**
 * Installs the seed-shaped WorkspaceTemplate, Workspace and WorkspaceRoleBinding CRDs for a platform name
 * (idempotent: the cluster is shared and CRDs stay) and waits until each can be listed.
 */
export async function installTenantCrds(kc: KubeConfig, platform: string): Promise<void> {
  const crds = readdirSync(TENANT_CRD_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map(
      (f) =>
        parseYaml(
          readFileSync(path.join(TENANT_CRD_DIR, f), 'utf8')
            .replaceAll('tenant.kubesphere.io', `tenant.${platform}.io`)
            .replaceAll('iam.kubesphere.io', `iam.${platform}.io`),
        ) as V1CustomResourceDefinition,
    );
  await createCrds(kc, crds);
}

/**
 * Installs the chart's own WorkspaceTemplate, Workspace, WorkspaceRole and WorkspaceRoleBinding CRDs for
 * a platform name, as the chart renders them (an existing CRD of that name is left as it is).
 */
export async function installChartTenantCrds(kc: KubeConfig, platform: string): Promise<void> {
  const crds = CHART_TENANT_CRDS.map(
    (name) =>
      parseYaml(
        readFileSync(path.join(CHART_CRD_DIR, `${name}.yaml`), 'utf8')
          .replaceAll('tenant.platform.io', `tenant.${platform}.io`)
          .replaceAll('iam.platform.io', `iam.${platform}.io`)
          .replaceAll('labels.platform\\.io/', `labels.${platform}\\.io/`)
          .replaceAll('annotations.platform\\.io/', `annotations.${platform}\\.io/`),
      ) as V1CustomResourceDefinition,
  );
  await createCrds(kc, crds);
}

async function createCrds(kc: KubeConfig, crds: V1CustomResourceDefinition[]): Promise<void> {
  for (const crd of crds) {
    // Raw JSON: the typed client's serializer would drop `x-kubernetes-preserve-unknown-fields` (it knows
    // the field only by its camel-cased model name), and the apiserver would then prune every field.
    try {
      await kubeRequest(kc, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        method: 'POST',
        body: crd,
        timeoutMs: 30_000,
      });
    } catch (err) {
      if (!(err instanceof KubeRequestError && err.statusCode === 409)) throw err;
    }
  }
  const objects = kc.makeApiClient(CustomObjectsApi);
  for (const crd of crds) {
    const version = crd.spec.versions[0]!.name;
    await waitFor(
      `${crd.metadata!.name} listable`,
      async () => {
        try {
          await objects.listClusterCustomObject({
            group: crd.spec.group,
            version,
            plural: crd.spec.names.plural,
          });
          return true;
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  }
}

/** A workspace as the original's console creates it: the WorkspaceTemplate and (its controller's) Workspace. */
export async function createWorkspace(
  kc: KubeConfig,
  platform: string,
  name: string,
  manager = 'admin',
): Promise<void> {
  const g = tenantGroups(platform);
  const objects = kc.makeApiClient(CustomObjectsApi);
  await objects.createClusterCustomObject({
    ...g.templates,
    body: {
      apiVersion: `${g.templates.group}/${g.templates.version}`,
      kind: 'WorkspaceTemplate',
      metadata: { name, annotations: { [`${platform}.io/creator`]: manager } },
      spec: { template: { spec: { manager } }, placement: {} },
    },
  });
  await objects.createClusterCustomObject({
    ...g.workspaces,
    body: {
      apiVersion: `${g.workspaces.group}/${g.workspaces.version}`,
      kind: 'Workspace',
      metadata: { name },
      spec: { manager },
    },
  });
}

/** A WorkspaceRoleBinding making a user (or group) a member of a workspace, as the original writes them. */
export async function bindWorkspaceMember(
  kc: KubeConfig,
  platform: string,
  workspace: string,
  subject: { kind: 'User' | 'Group'; name: string },
): Promise<void> {
  const g = tenantGroups(platform);
  await kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({
    ...g.bindings,
    body: {
      apiVersion: `${g.bindings.group}/${g.bindings.version}`,
      kind: 'WorkspaceRoleBinding',
      metadata: {
        name: `${subject.name}-${workspace}-viewer`,
        labels: { [g.workspaceLabel]: workspace, [`iam.${platform}.io/user-ref`]: subject.name },
      },
      roleRef: { apiGroup: `iam.${platform}.io`, kind: 'WorkspaceRole', name: `${workspace}-viewer` },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }],
    },
  });
}

/** A namespace (project) of a workspace: labelled `<platform>.io/workspace`. */
export async function createWorkspaceNamespace(
  kc: KubeConfig,
  platform: string,
  workspace: string,
  name: string,
): Promise<void> {
  await kc.makeApiClient(CoreV1Api).createNamespace({
    body: { metadata: { name, labels: { [tenantGroups(platform).workspaceLabel]: workspace } } },
  });
}

/** Deletes what the helpers above created for these workspaces (namespaces stay Terminating: no controller). */
export async function deleteWorkspaces(
  kc: KubeConfig,
  platform: string,
  workspaces: string[],
): Promise<void> {
  const g = tenantGroups(platform);
  const objects = kc.makeApiClient(CustomObjectsApi);
  const ignoreMissing = (err: unknown) => {
    if (!(err instanceof ApiException && err.code === 404)) throw err;
  };
  for (const name of workspaces) {
    // A server's tenant reconciler may have put its finalizer on them; it may be stopped already.
    for (const ref of [g.templates, g.workspaces]) {
      await clearFinalizers(kc, `/apis/${ref.group}/${ref.version}/${ref.plural}/${name}`);
      await objects.deleteClusterCustomObject({ ...ref, name }).catch(ignoreMissing);
    }
  }
  const bindings = (await objects.listClusterCustomObject({ ...g.bindings })) as {
    items: { metadata: { name: string; labels?: Record<string, string> } }[];
  };
  for (const b of bindings.items)
    if (workspaces.includes(b.metadata.labels?.[g.workspaceLabel] ?? ''))
      await objects.deleteClusterCustomObject({ ...g.bindings, name: b.metadata.name }).catch(ignoreMissing);
  const core = kc.makeApiClient(CoreV1Api);
  for (const workspace of workspaces) {
    const namespaces = await core.listNamespace({ labelSelector: `${g.workspaceLabel}=${workspace}` });
    for (const ns of namespaces.items)
      await core.deleteNamespace({ name: ns.metadata!.name! }).catch(ignoreMissing);
  }
}

/** Removes every finalizer of an object (nothing when it does not exist). */
export async function clearFinalizers(kc: KubeConfig, path: string): Promise<void> {
  try {
    await kubeRequest(kc, path, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { metadata: { finalizers: null } },
      timeoutMs: 10_000,
    });
  } catch (err) {
    if (!(err instanceof KubeRequestError && err.statusCode === 404)) throw err;
  }
}

/** The original's RoleBase CRD (seed-shaped), for installCrdFiles. */
export const ROLE_BASE_CRD_FILE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'seed-crds',
  'rolebases.iam.kubesphere.io.yaml',
);

/**
 * RoleBases as the original's installer ships them: the default workspace and project roles (the
 * server's built-in copies of them) and one role template of a project's, so a test can tell that the
 * cluster's RoleBases were used. Idempotent.
 */
export async function createRoleBases(kc: KubeConfig, platform: string): Promise<void> {
  const names = tenantNames(platform);
  const scope = { [names.namespaceScopeLabel]: '' };
  const base = (name: string, kind: string, role: DefaultRole, labels?: Record<string, string>) => ({
    apiVersion: `${names.iamGroup}/v1alpha2`,
    kind: 'RoleBase',
    metadata: { name, ...(labels ? { labels } : {}) },
    role: {
      apiVersion: kind === 'Role' ? 'rbac.authorization.k8s.io/v1' : `${names.iamGroup}/v1alpha2`,
      kind,
      metadata: { name: role.name, annotations: role.annotations, labels: role.labels },
      rules: role.rules,
    },
  });
  const objects = [
    ...workspaceRoleDefaults([], names).map((r) => base(`workspace-${r.name}`, 'WorkspaceRole', r)),
    ...namespaceRoleDefaults([], names).map((r) => base(`project-${r.name}`, 'Role', r, scope)),
    base(
      'role-template-namespace-basic',
      'Role',
      {
        name: 'role-template-view-basic',
        labels: { [`${names.iamGroup}/role-template`]: 'true' },
        annotations: { [`${names.iamGroup}/module`]: 'Project Settings' },
        rules: [{ apiGroups: ['*'], resources: ['namespaces'], verbs: ['get'] }],
      },
      scope,
    ),
  ];
  for (const object of objects) {
    try {
      await kubeRequest(kc, `/apis/${names.iamGroup}/v1alpha2/rolebases`, {
        method: 'POST',
        body: object,
        timeoutMs: 10_000,
      });
    } catch (err) {
      if (!(err instanceof KubeRequestError && err.statusCode === 409)) throw err;
    }
  }
}

/**
 * Removes what a test and the tenant reconciler made for these workspaces and namespaces: templates,
 * Workspaces, workspace roles and bindings, and the namespaces themselves (their finalizers cleared:
 * no namespace controller here empties them).
 */
export async function deleteReconciled(
  kc: KubeConfig,
  platform: string,
  workspaces: string[],
  namespaces: string[],
): Promise<void> {
  const names = tenantNames(platform);
  const paths = tenantPaths(names);
  const remove = async (objectPath: string) => {
    await clearFinalizers(kc, objectPath);
    try {
      await kubeRequest(kc, objectPath, { method: 'DELETE', timeoutMs: 10_000 });
    } catch (err) {
      if (!(err instanceof KubeRequestError && err.statusCode === 404)) throw err;
    }
  };
  const named = async (collection: string, labelSelector: string) => {
    try {
      const query = `?labelSelector=${encodeURIComponent(labelSelector)}`;
      const list = await kubeRequest<{ items: { metadata: { name: string } }[] }>(kc, collection + query, {
        timeoutMs: 10_000,
      });
      return list.items.map((i) => i.metadata.name);
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 404) return [];
      throw err;
    }
  };
  for (const workspace of workspaces) {
    await remove(`${paths.templates}/${workspace}`);
    await remove(`${paths.workspaces}/${workspace}`);
    for (const collection of [paths.workspaceRoles, paths.workspaceRoleBindings])
      for (const name of await named(collection, `${names.workspaceLabel}=${workspace}`))
        await remove(`${collection}/${name}`);
  }
  for (const namespace of namespaces) {
    for (const collection of [paths.roles(namespace), paths.roleBindings(namespace)])
      for (const name of await named(collection, `${names.managedByLabel}=${MANAGED_BY}`))
        await remove(`${collection}/${name}`);
    await remove(`/api/v1/namespaces/${namespace}`);
    try {
      await kubeRequest(kc, `/api/v1/namespaces/${namespace}/finalize`, {
        method: 'PUT',
        body: {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: namespace },
          spec: { finalizers: [] },
        },
        timeoutMs: 10_000,
      });
    } catch (err) {
      if (!(err instanceof KubeRequestError && err.statusCode === 404)) throw err;
    }
  }
}
