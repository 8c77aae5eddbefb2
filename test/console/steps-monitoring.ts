import type { Page, Response } from 'playwright-core';
import { SEED } from './console-cluster.ts';
import { goto, type Step } from './step-kit.ts';

const project = `/${SEED.workspace}/clusters/default/projects/${SEED.project}`;
/** The busiest of the seeded nodes (test/console/console-prometheus.ts: each node busier than the one before). */
const BUSIEST_NODE = `node-${String(SEED.nodes - 1).padStart(4, '0')}`;

/** What the console shows when a metric has no value: `NaN%`, `undefined`, `Infinity`. */
const NO_VALUE = /\bNaN\b|\bundefined\b|Infinity/;

/** A chart line with at least this many points is a series drawn, not an empty chart. */
const MIN_POINTS = 3;

/**
 * The page's numbers: no "NaN" (or undefined, Infinity) anywhere in `scope` (the whole page by default),
 * and each of `texts` shown. A reason, or undefined.
 */
async function numbersShown(
  page: Page,
  texts: (string | RegExp)[],
  scope = 'body',
): Promise<string | undefined> {
  const shown = await page.locator(scope).first().innerText();
  const reasons: string[] = [];
  const bad = NO_VALUE.exec(shown);
  if (bad) {
    const at = Math.max(0, bad.index - 60);
    reasons.push(`"${bad[0]}" on screen: …${shown.slice(at, bad.index + 20).replace(/\s+/g, ' ')}…`);
  }
  for (const text of texts) {
    const found = typeof text === 'string' ? shown.includes(text) : text.test(shown);
    if (!found) reasons.push(`${String(text)} not on screen`);
  }
  return reasons.join('; ') || undefined;
}

/** How many drawn chart lines (recharts' area and line curves) have at least MIN_POINTS points. */
async function drawnSeries(page: Page): Promise<number> {
  return page
    .locator('path.recharts-area-curve, path.recharts-line-curve')
    .evaluateAll(
      (paths, min) =>
        paths.filter((p) => ((p.getAttribute('d') ?? '').match(/[LC]/g) ?? []).length >= min - 1).length,
      MIN_POINTS,
    );
}

/** Waits until at least `count` chart lines are drawn; a reason if not. */
async function chartsDrawn(page: Page, count: number, timeoutMs: number): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const drawn = await drawnSeries(page);
    if (drawn >= count) return undefined;
    if (Date.now() > deadline) return `${drawn} chart line(s) drawn, not ${count}`;
    await page.waitForTimeout(250);
  }
}

interface MetricAnswer {
  results?: {
    metric_name?: string;
    error?: string;
    data?: { result?: { value?: [number, string]; values?: [number, string][] }[] };
  }[];
}

/**
 * A step on one page: it records the monitoring answers the console receives there, and passes when each
 * of `metrics` came back with data and none with an error, at least `charts` chart lines are drawn, the
 * `texts` are on screen and no "NaN" is.
 */
function monitoringStep(spec: {
  name: string;
  path: string;
  expect: string[];
  metrics: string[];
  texts?: (string | RegExp)[];
  charts?: number;
}): Step {
  let answers: Promise<MetricAnswer | undefined>[] = [];
  let stopRecording = (): void => undefined;
  return {
    name: spec.name,
    act: async (page, consoleUrl) => {
      answers = [];
      const record = (response: Response) => {
        if (new URL(response.url()).pathname.startsWith('/kapis/monitoring.'))
          answers.push(response.json().catch(() => undefined) as Promise<MetricAnswer | undefined>);
      };
      page.on('response', record);
      stopRecording = () => page.off('response', record);
      await goto(spec.path)(page, consoleUrl);
    },
    expect: spec.expect,
    check: async (page, _calls, timeoutMs) => {
      const reasons = [
        await chartsDrawn(page, spec.charts ?? 0, timeoutMs),
        await numbersShown(page, spec.texts ?? []),
      ];
      stopRecording();
      const withData = new Set<string>();
      for (const answer of await Promise.all(answers))
        for (const r of answer?.results ?? []) {
          if (r.error) reasons.push(`${r.metric_name}: error "${r.error}"`);
          // Data: a number other than 0 among its points (every metric asked for here has one in the seeded series).
          const numbers = (r.data?.result ?? []).flatMap((series) =>
            [...(series.value ? [series.value] : []), ...(series.values ?? [])].map((point) =>
              Number(point[1]),
            ),
          );
          if (numbers.some((n) => Number.isFinite(n) && n !== 0) && r.metric_name)
            withData.add(r.metric_name);
        }
      const empty = spec.metrics.filter((m) => !withData.has(m));
      if (empty.length > 0) reasons.push(`no data for ${empty.join(', ')}`);
      return reasons.filter(Boolean).join('; ') || undefined;
    },
  };
}

/**
 * Issue 35: with a Prometheus configured (the console cluster's series, test/console/console-prometheus.ts),
 * the pages that chart metrics show numbers and charts — no "NaN", no empty chart, no metric without data
 * or with an error, no error toast. The numbers are those of the seeded series (25 nodes of 4 cores, each
 * busier than the one before; 100 GB disks; the Deployment's two pods on node-0001).
 */
export const MONITORING_STEPS: Step[] = [
  monitoringStep({
    name: 'monitoring: landing',
    path: '/',
    expect: ['Platform Resources'],
    metrics: ['kubesphere_workspace_count', 'kubesphere_user_count'],
  }),
  monitoringStep({
    name: 'monitoring: cluster overview',
    path: '/clusters/default/overview',
    expect: ['Resource Usage', BUSIEST_NODE],
    metrics: [
      'cluster_cpu_usage',
      'cluster_cpu_total',
      'cluster_memory_usage_wo_cache',
      'cluster_memory_total',
      'cluster_disk_size_usage',
      'cluster_disk_size_capacity',
      'cluster_pod_running_count',
      'cluster_pod_quota',
      'apiserver_request_rate',
      'apiserver_request_latencies',
      'scheduler_schedule_attempts',
      'node_cpu_utilisation',
    ],
    // CPU 48.4 of 100 cores, disk 0.8 of 2.5 TB, 2 of 2,750 pods; 20 API requests/s of 50 ms; 120 scheduled.
    texts: [
      '48%',
      '48.4 cores',
      '100 cores',
      '32%',
      '0.8 TB',
      '2.5 TB',
      '2750',
      /\b20(\.0+)? requests\/s/,
      '50 ms',
      '120',
    ],
  }),
  monitoringStep({
    name: 'monitoring: node ranking',
    path: '/clusters/default/monitor-cluster/ranking',
    expect: [BUSIEST_NODE],
    metrics: [
      'node_cpu_utilisation',
      'node_memory_utilisation',
      'node_disk_size_utilisation',
      'node_pod_utilisation',
      'node_load1',
      'node_disk_inode_utilisation',
    ],
    // The busiest node first: 0.868 of 4 cores busy.
    texts: [/node-0024[^]*87%[^]*3\.47\/4 core/],
  }),
  monitoringStep({
    name: 'monitoring: node monitoring tab',
    path: `/clusters/default/nodes/${SEED.node}/monitors`,
    expect: [SEED.node, 'CPU Usage (%)'],
    metrics: [
      'node_cpu_utilisation',
      'node_load1',
      'node_memory_utilisation',
      'node_disk_size_utilisation',
      'node_disk_inode_utilisation',
      'node_disk_read_iops',
      'node_disk_read_throughput',
      'node_net_bytes_transmitted',
      'node_net_bytes_received',
    ],
    charts: 6,
  }),
  monitoringStep({
    name: 'monitoring: project overview',
    path: `${project}/overview`,
    expect: [SEED.project, SEED.deployment],
    metrics: ['namespace_pod_count', 'workload_cpu_usage'],
    // The Deployment's two pods use 0.125 + 0.25 cores.
    texts: ['0.38'],
    charts: 1,
  }),
  monitoringStep({
    name: 'monitoring: pod monitoring',
    path: `${project}/pods/${SEED.pods[0]}/monitors`,
    expect: [SEED.pods[0], 'CPU Usage'],
    metrics: [
      'pod_cpu_usage',
      'pod_memory_usage_wo_cache',
      'pod_net_bytes_transmitted',
      'pod_net_bytes_received',
    ],
    charts: 4,
  }),
];
