import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { kubeconfigYaml, type ControlPlane } from '../cluster/control-plane.ts';
import { waitForCrdsEstablished } from '../cluster/crds.ts';

const execFileAsync = promisify(execFile);

export const chartDir = fileURLToPath(new URL('../../charts/platform-apiserver', import.meta.url));
export const allFeaturesValues = path.join(chartDir, 'ci/all-features-values.yaml');

/** A Kubernetes object as rendered by the chart (only the fields tests look at are typed). */
export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/**
 * Runs helm and kubectl against one control plane. Helm's own config/cache/data go to a temp dir
 * (never the user's home); `cleanup()` removes it.
 */
export class ChartTools {
  readonly cp: ControlPlane;
  readonly dir: string;

  constructor(cp: ControlPlane) {
    this.cp = cp;
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'chart-tools-'));
  }

  async helm(args: string[]): Promise<string> {
    const env = {
      ...process.env,
      KUBECONFIG: this.cp.kubeconfigPath,
      HELM_CACHE_HOME: path.join(this.dir, 'helm-cache'),
      HELM_CONFIG_HOME: path.join(this.dir, 'helm-config'),
      HELM_DATA_HOME: path.join(this.dir, 'helm-data'),
    };
    return run(this.cp.binaries.helm, args, env);
  }

  /** kubectl with the admin kubeconfig, or another one (e.g. a ServiceAccount's). */
  async kubectl(args: string[], options: { input?: string; kubeconfig?: string } = {}): Promise<string> {
    const extra: string[] = [];
    if (options.input !== undefined) {
      const file = path.join(this.dir, `input-${randomBytes(4).toString('hex')}.yaml`);
      writeFileSync(file, options.input);
      extra.push('-f', file);
    }
    return run(
      this.cp.binaries.kubectl,
      [`--kubeconfig=${options.kubeconfig ?? this.cp.kubeconfigPath}`, ...args, ...extra],
      process.env,
    );
  }

  /** A kubeconfig for the control plane whose only credential is `token`; returns its path. */
  writeKubeconfig(name: string, token: string): string {
    const file = path.join(this.dir, `${name}.kubeconfig`);
    writeFileSync(file, kubeconfigYaml(this.cp.server, this.cp.caPem, [{ name, token }], name), {
      mode: 0o600,
    });
    return file;
  }

  /** `helm template` of the chart; returns the YAML stream. */
  async template(release: string, namespace: string, args: string[] = []): Promise<string> {
    return this.helm(['template', release, chartDir, `--namespace=${namespace}`, ...args]);
  }

  /** Applies the chart's CRDs for the default platform name (files/crds/) and waits until they are served. */
  async installChartCrds(): Promise<string[]> {
    const dir = path.join(chartDir, 'files', 'crds');
    const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
    if (files.length === 0) return [];
    await this.kubectl(['apply', '-f', dir]);
    const names = files.flatMap((f) =>
      parseObjects(readFileSync(path.join(dir, f), 'utf8')).map((o) => o.metadata.name),
    );
    await this.waitForCrds(names);
    return names;
  }

  /**
   * Waits until these CRDs are Established, polling: `kubectl wait --for=condition=Established` fails
   * at once on a CRD that has no status yet, which a busy kube-apiserver shows right after a create.
   */
  async waitForCrds(names: string[]): Promise<void> {
    const read = async (name: string) =>
      JSON.parse(await this.kubectl(['get', 'crd', name, '-o', 'json'])) as V1CustomResourceDefinition;
    await waitForCrdsEstablished(names, read, { timeoutMs: 30_000, intervalMs: 200 });
  }

  async createNamespace(prefix: string): Promise<string> {
    const name = `${prefix}-${randomBytes(3).toString('hex')}`;
    await this.kubectl(['create', 'namespace', name]);
    return name;
  }

  /**
   * Deletes a namespace and what is in it. Without kube-controller-manager nobody empties a
   * terminating namespace, so the test deletes the objects itself and then clears the finalizer.
   */
  async deleteNamespace(name: string): Promise<void> {
    await this.kubectl([
      'delete',
      'all,configmaps,secrets,serviceaccounts,ingresses,networkpolicies,poddisruptionbudgets',
      '--all',
      `--namespace=${name}`,
      '--wait=false',
    ]);
    await this.kubectl(['delete', 'namespace', name, '--wait=false']);
    await this.kubectl(['replace', '--raw', `/api/v1/namespaces/${name}/finalize`], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name },
        spec: { finalizers: [] },
      }),
    });
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function run(binary: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await execFileAsync(binary, args, { env, maxBuffer: 32 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const { stderr, stdout } = err as { stderr?: string; stdout?: string };
    throw new Error(
      // helm lint reports what failed on stdout and only a summary on stderr: keep both.
      `${path.basename(binary)} ${args.join(' ')} failed: ${([stderr, stdout].filter(Boolean).join('\n') || (err as Error).message).trim()}`,
      { cause: err },
    );
  }
}

/** The objects of a rendered YAML stream (empty documents dropped). */
export function parseObjects(yamlStream: string): RenderedObject[] {
  return parseAllDocuments(yamlStream)
    .map((doc) => doc.toJS() as RenderedObject | null)
    .filter((o): o is RenderedObject => o !== null);
}

export function findObject(objects: RenderedObject[], kind: string, name?: string): RenderedObject {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (!found) {
    throw new Error(`no ${kind}${name ? ` ${name}` : ''} among: ${objects.map((o) => o.kind).join(', ')}`);
  }
  return found;
}
