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
import { waitFor } from '../cluster/wait-for.ts';

const TENANT_CRD_DIR = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'seed-crds',
  'tenant',
);

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
    await objects.deleteClusterCustomObject({ ...g.templates, name }).catch(ignoreMissing);
    await objects.deleteClusterCustomObject({ ...g.workspaces, name }).catch(ignoreMissing);
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
