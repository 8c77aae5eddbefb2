import type { ResourceAttributes } from '../access/access-review.ts';
import type { RoleObject, RoleVocabulary } from './role-objects.ts';

/**
 * Role templates derived from Kubernetes RBAC, for a cluster where the original's role resources are
 * not installed. The original's console decides which menus to show from role templates
 * (`{module: action}`); here each console module the server backs maps to one access review for
 * `view` and one for `manage` (the console's `manage` implies view, edit, create and delete). A member
 * gets a template for every module the review allows, so the menus match what the server then serves.
 * Modules whose APIs this server does not serve (app store, monitoring, alerting, DevOps) are never
 * granted, nor the GlobalRole and WorkspaceRole lists, which are empty where this model is used. The table is the documentation:
 * docs/console-compat.md repeats it.
 */
export type Scope = 'global' | 'cluster' | 'workspace' | 'namespace';

interface Check {
  verb: string;
  group: string;
  resource: string;
}

export interface ModuleRule {
  module: string;
  view: Check;
  manage: Check;
}

const on = (group: string, resource: string) => ({
  view: { verb: 'list', group, resource },
  manage: { verb: 'create', group, resource },
});
const kube = (module: string, group: string, resource = module): ModuleRule => ({
  module,
  ...on(group, resource),
});

/** Workload and configuration modules, as the console names them, checked cluster-wide or in one namespace. */
const WORKLOADS: ModuleRule[] = [
  kube('deployments', 'apps'),
  kube('statefulsets', 'apps'),
  kube('daemonsets', 'apps'),
  kube('jobs', 'batch'),
  kube('cronjobs', 'batch'),
  kube('pods', ''),
  kube('services', ''),
  kube('ingresses', 'networking.k8s.io'),
  kube('networkpolicies', 'networking.k8s.io'),
  kube('secrets', ''),
  kube('configmaps', ''),
  kube('serviceaccounts', ''),
  kube('volumes', '', 'persistentvolumeclaims'),
];

/** The tables per scope; `platform` is the platform name (its API groups). */
export function moduleRules(scope: Scope, platform: string): ModuleRule[] {
  switch (scope) {
    case 'global':
      return [
        // Cluster management: the one cluster this server fronts.
        {
          module: 'clusters',
          view: { verb: 'list', group: '', resource: 'nodes' },
          manage: { verb: 'update', group: '', resource: 'nodes' },
        },
        {
          module: 'users',
          view: { verb: 'list', group: `iam.${platform}.io`, resource: 'users' },
          manage: { verb: 'update', group: `iam.${platform}.io`, resource: 'users' },
        },
        {
          module: 'workspaces',
          view: { verb: 'list', group: `tenant.${platform}.io`, resource: 'workspacetemplates' },
          manage: { verb: 'update', group: `tenant.${platform}.io`, resource: 'workspacetemplates' },
        },
      ];
    case 'cluster':
      return [
        {
          module: 'nodes',
          view: { verb: 'list', group: '', resource: 'nodes' },
          manage: { verb: 'update', group: '', resource: 'nodes' },
        },
        kube('projects', '', 'namespaces'),
        kube('components', '', 'services'),
        ...WORKLOADS,
        kube('customresources', 'apiextensions.k8s.io', 'customresourcedefinitions'),
        kube('storageclasses', 'storage.k8s.io'),
        kube('roles', 'rbac.authorization.k8s.io', 'clusterroles'),
        kube('members', 'rbac.authorization.k8s.io', 'clusterrolebindings'),
      ];
    case 'workspace':
      return [kube('projects', '', 'namespaces')];
    case 'namespace':
      return [
        ...WORKLOADS,
        kube('roles', 'rbac.authorization.k8s.io', 'roles'),
        kube('members', 'rbac.authorization.k8s.io', 'rolebindings'),
      ];
  }
}

/** "May do anything": the derived counterpart of the original's `platform-admin` global role. */
export const EVERYTHING: ResourceAttributes = { verb: '*', group: '*', resource: '*' };

export type Allowed = (attributes: ResourceAttributes) => Promise<boolean>;

/**
 * The derived templates of a member: for each module, `manage` when its review allows, else `view`
 * when that one does, else nothing. Reviews run concurrently (and are cached by the reviewer).
 */
export async function derivedTemplates(options: {
  scope: Scope;
  platform: string;
  vocabulary: RoleVocabulary;
  allowed: Allowed;
  namespace?: string;
}): Promise<RoleObject[]> {
  const where = options.namespace ? { namespace: options.namespace } : {};
  const rules = moduleRules(options.scope, options.platform);
  const actions = await Promise.all(
    rules.map(async (rule) => {
      if (await options.allowed({ ...rule.manage, ...where })) return 'manage';
      if (await options.allowed({ ...rule.view, ...where })) return 'view';
      return undefined;
    }),
  );
  return rules.flatMap((rule, i) => {
    const action = actions[i];
    return action ? [templateObject(options, rule.module, action)] : [];
  });
}

const KINDS: Record<Scope, (platform: string) => { apiVersion: string; kind: string }> = {
  global: (p) => ({ apiVersion: `iam.${p}.io/v1alpha2`, kind: 'GlobalRole' }),
  cluster: () => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' }),
  workspace: (p) => ({ apiVersion: `iam.${p}.io/v1alpha2`, kind: 'WorkspaceRole' }),
  namespace: () => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' }),
};

/** A role template in the original's shape, named as its own templates are (`role-template-<action>-<module>`). */
function templateObject(
  options: { scope: Scope; platform: string; vocabulary: RoleVocabulary; namespace?: string },
  module: string,
  action: 'view' | 'manage',
): RoleObject {
  return {
    ...KINDS[options.scope](options.platform),
    metadata: {
      name: `role-template-${action}-${module}`,
      ...(options.namespace ? { namespace: options.namespace } : {}),
      labels: { [options.vocabulary.templateLabel]: 'true' },
      annotations: {
        [options.vocabulary.templateRules]: JSON.stringify({ [module]: action }),
        [options.vocabulary.derivedFrom]: 'kubernetes-rbac',
      },
    },
    rules: [],
  };
}
