/**
 * `npm run test:console`: the original's web console (KubeSphere console v3.4.1, built from the source tree
 * named by CONSOLE_SRC) against our server on a real kube-apiserver + etcd, driven in Debian's Chromium
 * through the steps of issues 18, 33, 34 and 35, with a real Prometheus behind the monitoring API. Opt-in
 * (never part of `npm test`). Prints one row per step and exits non-zero when any step fails.
 * CONSOLE_ONLY=<regex> runs only the steps whose name it matches (and login). See docs/console-e2e.md.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startControlPlane } from '../cluster/control-plane.ts';
import { freePort } from '../cluster/free-port.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { adminKubeConfig } from '../support/iam-fixtures.ts';
import { startServerProcess } from '../support/server-process.ts';
import { cacheRoot, consoleSource, ensureConsoleBuild, UsageError } from './console-build.ts';
import { PLATFORM, seedConsoleCluster } from './console-cluster.ts';
import { startConsolePrometheus } from './console-prometheus.ts';
import { startConsole } from './console-process.ts';
import { runStep, STEPS, type StepResult } from './console-steps.ts';
import { startRecordingProxy } from './recording-proxy.ts';
import { TOAST_RECORDER } from './step-kit.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** How long one step may take to show its data; raised on a loaded machine with CONSOLE_STEP_TIMEOUT_MS. */
const STEP_TIMEOUT_MS = Number(process.env.CONSOLE_STEP_TIMEOUT_MS ?? 30_000);
/** While iterating: only the steps whose name matches (login always runs: the others need its session). */
const ONLY = process.env.CONSOLE_ONLY ? new RegExp(process.env.CONSOLE_ONLY, 'i') : undefined;

const log = (line: string): void => {
  process.stderr.write(`[console] ${line}\n`);
};

/** One row per step run, numbered as in STEPS (and its screenshot). */
function table(results: StepResult[], numbers: number[]): string {
  const width = Math.max(...results.map((r) => r.step.length));
  const rows = results.map((r, i) => {
    const notes = [r.reason, ...(r.pass ? [] : r.failedCalls.slice(0, 4).map((c) => `call ${c}`))]
      .filter(Boolean)
      .join('; ');
    return `${String(numbers[i]).padStart(2)}  ${r.step.padEnd(width)}  ${r.pass ? 'pass' : 'FAIL'}  ${notes}`;
  });
  const passed = results.filter((r) => r.pass).length;
  return [`#   ${'step'.padEnd(width)}  result`, ...rows, `${passed}/${results.length} steps pass`].join(
    '\n',
  );
}

async function main(): Promise<number> {
  const buildOnly = process.argv.includes('--build-only');
  const src = consoleSource();
  if (!buildOnly && !existsSync(CHROMIUM))
    throw new UsageError(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  const build = await ensureConsoleBuild(src, log);
  if (buildOnly) {
    log(`built: ${build.dir}`);
    return 0;
  }

  const runDir = join(cacheRoot(), 'console', 'runs', new Date().toISOString().replace(/[:.]/g, '-'));
  mkdirSync(runDir, { recursive: true });
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    log('starting a control plane (kube-apiserver + etcd)');
    const cp = await startControlPlane();
    cleanups.push(() => cp.stop());
    const kc = adminKubeConfig(cp.kubeconfigPath);
    await seedConsoleCluster(kc);
    log("starting Prometheus on the console cluster's series (backfilled, with the recording rules)");
    const prometheus = await startConsolePrometheus();
    cleanups.push(() => prometheus.stop());

    const server = await startServerProcess(
      [
        `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
        `--platformName=${PLATFORM}`,
        '--auth.addressRequestsPerMinute=0',
        `--monitoring.endpoint=${prometheus.url}`,
      ],
      { startTimeoutMs: 120_000 },
    );
    cleanups.push(() => server.stop());
    cleanups.push(async () => writeFileSync(join(runDir, 'server.log'), server.output().join('\n')));
    await waitFor(
      'our server ready',
      async () => ((await fetch(`${server.url}/readyz`)).ok ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    const proxy = await startRecordingProxy(server.url, join(runDir, 'calls.jsonl'));
    cleanups.push(() => proxy.close());
    log(`our server ${server.url}, recording proxy ${proxy.url} (calls: ${join(runDir, 'calls.jsonl')})`);

    const consoleApp = await startConsole(build, {
      port: await freePort(),
      apiServerUrl: proxy.url,
      logFile: join(runDir, 'console.log'),
    });
    cleanups.push(() => consoleApp.stop());
    log(`console ${consoleApp.url}`);

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    cleanups.push(() => browser.close());
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.addInitScript(TOAST_RECORDER);
    const page = await context.newPage();

    const results: StepResult[] = [];
    const numbers: number[] = [];
    for (const [i, step] of STEPS.entries()) {
      if (ONLY && step.name !== 'login' && !ONLY.test(step.name)) continue;
      const result = await runStep(step, page, consoleApp.url, proxy.calls, STEP_TIMEOUT_MS);
      results.push(result);
      numbers.push(i + 1);
      await result.page
        .screenshot({
          path: join(runDir, `${String(i + 1).padStart(2, '0')}-${step.name.replace(/\W+/g, '-')}.png`),
        })
        .catch(() => undefined);
      log(`${result.pass ? 'pass' : 'FAIL'} ${step.name}${result.reason ? `: ${result.reason}` : ''}`);
    }
    process.stdout.write(`\n${table(results, numbers)}\n\nscreenshots and logs: ${runDir}\n`);
    return results.every((r) => r.pass) ? 0 : 1;
  } finally {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((err: unknown) => log(`cleanup: ${String(err)}`));
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`test:console: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(
      `test:console failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exitCode = 1;
  },
);
