import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import type { CountMetric } from './platform-statistics.ts';

/**
 * `GET …/workspaces/{ws}?type=statistics`: a workspace's counts, which the original takes from its
 * caches (not its metrics backend): its namespaces (the `<p>.io/workspace` label), its members
 * (WorkspaceRoleBindings of the workspace naming a user, `iam.<p>.io/user-ref`) and its WorkspaceRoles.
 * DevOps projects are not served here, so their count says so instead of a number.
 */
export class WorkspaceStatistics {
  readonly #kc: KubeConfig;
  readonly #platformName: string;
  readonly #timeoutMs: number;

  constructor(options: { kubeConfig: KubeConfig; platformName: string; timeoutMs: number }) {
    this.#kc = options.kubeConfig;
    this.#platformName = options.platformName;
    this.#timeoutMs = options.timeoutMs;
  }

  async metrics(workspace: string, nowSeconds: number): Promise<CountMetric[]> {
    const p = this.#platformName;
    const inWorkspace = `${p}.io/workspace=${workspace}`;
    const counted = async (metric_name: string, path: string, selector: string): Promise<CountMetric> => {
      try {
        const count = await this.#count(`${path}?labelSelector=${encodeURIComponent(selector)}`);
        return {
          metric_name,
          data: { resultType: 'vector', result: [{ value: [nowSeconds, String(count)] }] },
        };
      } catch (err) {
        return { metric_name, data: {}, error: err instanceof Error ? err.message : String(err) };
      }
    };
    return [
      await counted('workspace_namespace_count', '/api/v1/namespaces', inWorkspace),
      {
        metric_name: 'workspace_devops_project_count',
        data: {},
        error: 'DevOps is not served by this server',
      },
      await counted(
        'workspace_member_count',
        `/apis/iam.${p}.io/v1alpha2/workspacerolebindings`,
        `${inWorkspace},iam.${p}.io/user-ref`,
      ),
      await counted('workspace_role_count', `/apis/iam.${p}.io/v1alpha2/workspaceroles`, inWorkspace),
    ];
  }

  /** Objects of a (label-selected) list; a type that is not installed has none. */
  async #count(path: string): Promise<number> {
    try {
      return (await kubeRequest<{ items: unknown[] }>(this.#kc, path, { timeoutMs: this.#timeoutMs })).items
        .length;
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 404) return 0;
      throw err;
    }
  }
}
