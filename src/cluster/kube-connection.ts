import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { Config } from '../config/config.ts';
import type { Logger } from '../observability/logger.ts';
import { upstreamRequestDuration } from '../observability/upstream-metrics.ts';
import { instrumentKubeConfig } from './kube-client-metrics.ts';
import { loadKubeConfig } from './kube-config.ts';
import { shareKubeDispatcher } from './upstream-agent.ts';

/**
 * The kubeconfig every module makes its clients from. Prepared before any client exists, so that every
 * request to the kube-apiserver shares one keep-alive pool (not a new one per request) and is measured.
 */
export function connectKubeConfig(
  settings: Config['kubernetes'],
  env: Readonly<Record<string, string | undefined>>,
  deps: { registry: Registry; logger: Logger },
): KubeConfig {
  const kubeConfig = loadKubeConfig(settings, env);
  if (!shareKubeDispatcher(kubeConfig))
    deps.logger.warn('cannot share one connection pool for kube-apiserver requests');
  instrumentKubeConfig(kubeConfig, upstreamRequestDuration(deps.registry));
  return kubeConfig;
}
