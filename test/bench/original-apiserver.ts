// The original's ks-apiserver (KubeSphere v3.4.1, built from its public source by
// build-original-apiserver.sh) as a benchmark subject: its CRDs installed from its source's
// config/ks-core/crds, and the binary started in its own process with a minimal kubesphere.yaml.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CustomObjectsApi, type KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { kubeRequest, KubeRequestError } from '../../src/cluster/kube-request.ts';
import { kubeconfigYaml, type ControlPlane } from '../cluster/control-plane.ts';
import { freePort } from '../cluster/free-port.ts';
import { StopWaiting, waitFor } from '../cluster/wait-for.ts';
import { memoryOf } from './real-server.ts';

/** The build script's output and where it keeps the source's CRDs (beside the binary). */
export function originalPaths(): { binary: string; crdDir: string } {
  const binary = process.env['ORIGINAL_APISERVER'];
  if (!binary || !existsSync(binary))
    throw new Error(
      'ORIGINAL_APISERVER must name a built ks-apiserver v3.4.1: test/bench/build-original-apiserver.sh ' +
        'builds one and prints its path (docs/benchmarks.md)',
    );
  const crdDir = process.env['ORIGINAL_CRDS'] ?? `${binary}-crds`;
  if (!existsSync(crdDir))
    throw new Error(
      `no CRDs of the original at ${crdDir}: set ORIGINAL_CRDS to its source's config/ks-core/crds`,
    );
  return { binary, crdDir };
}

/**
 * Installs the CRDs of the original's ks-core chart (its source's config/ks-core/crds) as the original's
 * installer does, and waits until each can be listed. An existing CRD of that name stays. One that this
 * Kubernetes rejects as invalid (v3.4.1's applications.app.k8s.io lacks types newer validation requires;
 * ks-apiserver does not cache it) is left out: the answer names those installed and those rejected.
 */
export async function installOriginalCrds(
  kc: KubeConfig,
  crdDir: string,
): Promise<{ installed: string[]; rejected: string[] }> {
  const crds = readdirSync(crdDir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) =>
      parseAllDocuments(readFileSync(path.join(crdDir, f), 'utf8'))
        .map((d) => d.toJS() as V1CustomResourceDefinition | null)
        .filter((d): d is V1CustomResourceDefinition => d?.kind === 'CustomResourceDefinition'),
    );
  const installed: V1CustomResourceDefinition[] = [];
  const rejected: string[] = [];
  for (const crd of crds) {
    // Raw JSON: the typed client's serializer drops `x-kubernetes-preserve-unknown-fields`.
    try {
      await kubeRequest(kc, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        method: 'POST',
        body: crd,
        timeoutMs: 30_000,
      });
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 422) {
        rejected.push(crd.metadata!.name!);
        continue;
      }
      if (!(err instanceof KubeRequestError && err.statusCode === 409)) throw err;
    }
    installed.push(crd);
  }
  const objects = kc.makeApiClient(CustomObjectsApi);
  for (const crd of installed) {
    const version = crd.spec.versions.find((v) => v.storage)?.name ?? crd.spec.versions[0]!.name;
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
  return { installed: installed.map((c) => c.metadata!.name!), rejected };
}

export interface OriginalServer {
  url: string;
  pid: number;
  readySeconds: number;
  logFile: string;
  memory(): { rssMb: number; peakRssMb: number };
  stop(): Promise<void>;
}

/** The OAuth client the original's console logs in with (its chart's default). */
export const CONSOLE_CLIENT = { id: 'kubesphere', secret: 'kubesphere' };

/**
 * Starts the original in `dir` (its kubesphere.yaml is read from the working directory): the
 * kube-apiserver as the admin, authentication with a random jwtSecret and the console's OAuth client,
 * several logins per user allowed (the chart's default), nothing else (no multicluster, DevOps, logging,
 * monitoring; its monitoring endpoint is required, and is never called by the routes measured).
 * Ready when it answers `/kapis/version`, which it serves only once its informers have synced.
 */
export async function startOriginal(options: {
  binary: string;
  cp: ControlPlane;
  dir: string;
  readyTimeoutMs?: number;
}): Promise<OriginalServer> {
  const { cp, dir } = options;
  const kubeconfig = path.join(dir, 'original.kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml(cp.server, cp.caPem, [cp.admin], cp.admin.name), { mode: 0o600 });
  const config = {
    kubernetes: { kubeconfig, qps: 1e6, burst: 1_000_000 },
    authentication: {
      authenticateRateLimiterMaxTries: 10,
      authenticateRateLimiterDuration: '10m0s',
      loginHistoryRetentionPeriod: '168h',
      maximumClockSkew: '10s',
      multipleLogin: true,
      jwtSecret: randomBytes(24).toString('hex'),
      oauthOptions: {
        accessTokenMaxAge: '2h',
        accessTokenInactivityTimeout: '2h',
        clients: [
          {
            name: CONSOLE_CLIENT.id,
            secret: CONSOLE_CLIENT.secret,
            grantMethod: 'auto',
            redirectURIs: ['*'],
          },
        ],
      },
    },
    monitoring: { endpoint: 'http://127.0.0.1:1' },
  };
  // JSON is YAML: the file viper reads.
  writeFileSync(path.join(dir, 'kubesphere.yaml'), JSON.stringify(config, null, 2), { mode: 0o600 });
  const port = await freePort();
  const logFile = path.join(dir, 'original.log');
  const fd = openSync(logFile, 'w');
  const startedAt = performance.now();
  const child = spawn(options.binary, [`--insecure-port=${port}`, '--v=0'], {
    cwd: dir,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let gone = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      gone = true;
      process.off('exit', killOnExit);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      'the original ks-apiserver answering /kapis/version',
      async () => {
        if (gone) throw new StopWaiting(`the original exited before it was ready; see ${logFile}`);
        const ok = await fetch(`${url}/kapis/version`).then(
          (r) => r.status === 200,
          () => false,
        );
        return ok ? true : undefined;
      },
      { timeoutMs: options.readyTimeoutMs ?? 600_000, intervalMs: 200 },
    );
  } catch (err) {
    child.kill('SIGKILL');
    const tail = readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
    throw new Error(`${(err as Error).message}\nthe original's last log lines:\n${tail}`, { cause: err });
  }
  const pid = child.pid!;
  return {
    url,
    pid,
    readySeconds: (performance.now() - startedAt) / 1000,
    logFile,
    memory: () => memoryOf(pid),
    async stop() {
      if (!gone) child.kill('SIGTERM');
      await exited;
    },
  };
}
