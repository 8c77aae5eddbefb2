import { KubeConfig } from '@kubernetes/client-node';
import { ConfigError, type Config } from '../config/config.ts';

/**
 * The server's own credentials for the kube-apiserver: an explicit kubeconfig, else the in-cluster
 * ServiceAccount when running in a Pod, else the default kubeconfig ($KUBECONFIG or ~/.kube/config).
 */
export function loadKubeConfig(
  cfg: Config['kubernetes'],
  env: Readonly<Record<string, string | undefined>>,
): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (cfg.kubeconfig) kc.loadFromFile(cfg.kubeconfig);
    else if (env['KUBERNETES_SERVICE_HOST']) kc.loadFromCluster();
    else kc.loadFromDefault();
  } catch (err) {
    throw new ConfigError('kubernetes.kubeconfig', `cannot load kubeconfig: ${(err as Error).message}`);
  }
  if (cfg.context) {
    if (!kc.getContextObject(cfg.context)) {
      throw new ConfigError(
        'kubernetes.context',
        `context ${JSON.stringify(cfg.context)} not found in the kubeconfig`,
      );
    }
    kc.setCurrentContext(cfg.context);
  }
  if (!kc.getCurrentCluster()) {
    throw new ConfigError(
      'kubernetes.kubeconfig',
      'no cluster configured: set kubernetes.kubeconfig, run in a Pod, or set KUBECONFIG',
    );
  }
  return kc;
}
