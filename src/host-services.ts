import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { CacheMetrics } from './cluster/cache-metrics.ts';
import type { Config } from './config/config.ts';
import type { Readiness } from './kernel/readiness.ts';
import { serviceRef } from './kernel/module.ts';
import type { Logger } from './observability/logger.ts';
import type { MetricsExport } from './observability/metrics-export.ts';

/** What main.ts provides to every module: the process-wide pieces no feature owns. */
export const configRef = serviceRef<Config>('config');
export const loggerRef = serviceRef<Logger>('logger');
export const registryRef = serviceRef<Registry>('metrics-registry');
/** What /metrics exports: the registry, and the metrics of the process's other threads. */
export const metricsExportRef = serviceRef<MetricsExport>('metrics-export');
/** Already instrumented: every request made from it is measured. */
export const kubeConfigRef = serviceRef<KubeConfig>('kubeconfig');
/** Informer cache metrics, shared by every watch-backed cache. */
export const cacheMetricsRef = serviceRef<CacheMetrics>('cache-metrics');
/** The environment the server was started with (the login thread starts from it too). */
export const processEnvRef = serviceRef<Readonly<Record<string, string | undefined>>>('process-env');
/**
 * Resolves once the process is ready and has given back its start-up memory: what would add a start-up
 * burst of its own (the login thread) starts then, so the two bursts do not add up.
 */
export const startUpReleasedRef = serviceRef<Promise<void>>('start-up-released');
export const readinessRef = serviceRef<Readiness>('readiness');
