import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';

/** One counted metric, in the original's Metric shape: a vector with one sample, or an error. */
export type CountMetric =
  | { metric_name: string; data: { resultType: 'vector'; result: { value: [number, string] }[] } }
  | { metric_name: string; data: Record<string, never>; error: string };

interface ListPage {
  items: unknown[];
  metadata?: { remainingItemCount?: number };
}

/**
 * `GET …/kubesphere`: the platform's counts, which the original takes from its caches rather than
 * from its metrics backend, so they are real here too — one cluster (this server serves no other),
 * the WorkspaceTemplates and the users. The original's app template count exists only with its app
 * store, which this server does not serve, so it is left out as the original leaves it out without one.
 */
export class PlatformStatistics {
  readonly #kc: KubeConfig;
  readonly #platformName: string;
  readonly #timeoutMs: number;

  constructor(options: { kubeConfig: KubeConfig; platformName: string; timeoutMs: number }) {
    this.#kc = options.kubeConfig;
    this.#platformName = options.platformName;
    this.#timeoutMs = options.timeoutMs;
  }

  async metrics(nowSeconds: number): Promise<CountMetric[]> {
    const p = this.#platformName;
    const sample = (metric_name: string, count: number): CountMetric => ({
      metric_name,
      data: { resultType: 'vector', result: [{ value: [nowSeconds, String(count)] }] },
    });
    const counted = async (metric_name: string, path: string): Promise<CountMetric> => {
      try {
        return sample(metric_name, await this.#count(path));
      } catch (err) {
        return { metric_name, data: {}, error: err instanceof Error ? err.message : String(err) };
      }
    };
    return [
      sample('kubesphere_cluser_count', 1), // sic: the original's spelling, which its console reads
      await counted('kubesphere_workspace_count', `/apis/tenant.${p}.io/v1alpha2/workspacetemplates`),
      await counted('kubesphere_user_count', `/apis/iam.${p}.io/v1alpha2/users`),
    ];
  }

  /** How many objects a list holds, read as one item plus the kube-apiserver's count of the rest. */
  async #count(path: string): Promise<number> {
    try {
      const page = await kubeRequest<ListPage>(this.#kc, `${path}?limit=1`, { timeoutMs: this.#timeoutMs });
      return page.items.length + (page.metadata?.remainingItemCount ?? 0);
    } catch (err) {
      // A resource type that is not installed has no objects.
      if (err instanceof KubeRequestError && err.statusCode === 404) return 0;
      throw err;
    }
  }
}
