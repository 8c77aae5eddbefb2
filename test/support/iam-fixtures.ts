import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiException,
  ApiextensionsV1Api,
  CustomObjectsApi,
  KubeConfig,
  loadYaml,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import bcrypt from 'bcrypt';
import { waitFor } from '../cluster/wait-for.ts';
import { startServerProcess, type ServerProcess } from './server-process.ts';

const CRD_DIR = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'charts',
  'platform-apiserver',
  'files',
  'crds',
);
export const IAM = { group: 'iam.platform.io', version: 'v1alpha2' } as const;

/** The IAM group of another platform name (the shipped CRDs are for `platform`). */
function iamOf(platform: string) {
  return { group: `iam.${platform}.io`, version: IAM.version };
}

export function adminKubeConfig(kubeconfigPath: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  kc.setCurrentContext('admin');
  return kc;
}

/** The chart's workspace CRDs in the IAM group: installed by installChartTenantCrds (tenant-fixtures.ts). */
const WORKSPACE_CRDS = ['workspaceroles', 'workspacerolebindings'];

/**
 * Installs the CRDs of users, sessions and login throttles shipped with the chart (idempotent: the
 * cluster is shared by the whole run and the CRDs stay installed) and waits until the apiserver reports
 * them Established.
 */
export async function installIamCrds(
  kc: KubeConfig,
  platform = 'platform',
  options: { except?: string[] } = {},
): Promise<void> {
  const except = [...WORKSPACE_CRDS, ...(options.except ?? [])];
  const files = readdirSync(CRD_DIR).filter(
    (f) => f.endsWith('.yaml') && !except.some((plural) => f.startsWith(`${plural}.`)),
  );
  await installCrdFiles(
    kc,
    files.map((f) => path.join(CRD_DIR, f)),
    platform,
  );
}

/** The original's users (no status subresource) and LoginRecord CRDs, as test fixtures. */
export const SEED_CRD_FILES = ['users', 'loginrecords'].map((plural) =>
  path.join(
    path.dirname(fileURLToPath(import.meta.url)),
    '..',
    'fixtures',
    'seed-crds',
    `${plural}.iam.kubesphere.io.yaml`,
  ),
);

/**
 * Minimal stand-ins for the original's role CRDs (GlobalRole, GlobalRoleBinding, WorkspaceRole,
 * WorkspaceRoleBinding), written for these tests: their presence puts the server on the original's
 * role model.
 */
export const SEED_ROLE_CRD_FILES = [
  'globalroles',
  'globalrolebindings',
  'workspaceroles',
  'workspacerolebindings',
].map((plural) =>
  path.join(
    path.dirname(fileURLToPath(import.meta.url)),
    '..',
    'fixtures',
    'seed-crds',
    `${plural}.iam.kubesphere.io.yaml`,
  ),
);

/** Minimal stand-ins for the original's Group and GroupBinding CRDs (its config/ks-core/crds), for tests. */
export const SEED_GROUP_CRD_FILES = ['groups', 'groupbindings'].map((plural) =>
  path.join(
    path.dirname(fileURLToPath(import.meta.url)),
    '..',
    'fixtures',
    'seed-crds',
    `${plural}.iam.kubesphere.io.yaml`,
  ),
);

/** Installs CRD files (group iam.platform.io or iam.kubesphere.io, moved to `iam.<platform>.io`), idempotently. */
export async function installCrdFiles(kc: KubeConfig, paths: string[], platform: string): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const files = paths;
  const names: string[] = [];
  const plurals: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
      .replaceAll('iam.platform.io', iamOf(platform).group)
      .replaceAll('iam.kubesphere.io', iamOf(platform).group);
    // The client's own loader: its typed model keeps `x-kubernetes-*` schema keys (a plain parse loses them).
    const crd = loadYaml<V1CustomResourceDefinition>(text);
    if (!crd.spec.group.startsWith('iam.')) continue;
    names.push(crd.metadata!.name!);
    plurals.push(crd.spec.names.plural);
    try {
      await api.createCustomResourceDefinition({ body: crd });
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 409)) throw err;
      const current = await api.readCustomResourceDefinition({ name: crd.metadata!.name! });
      await api.replaceCustomResourceDefinition({
        name: crd.metadata!.name!,
        body: { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata!.resourceVersion! } },
      });
    }
  }
  for (const name of names) {
    await waitFor(
      `CRD ${name} Established`,
      async () => {
        const crd = await api.readCustomResourceDefinition({ name });
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')
          ? true
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  }
  // Established comes a moment before the storage serves requests ("storage is (re)initializing").
  const objects = kc.makeApiClient(CustomObjectsApi);
  for (const plural of plurals) {
    await waitFor(
      `${plural} listable`,
      async () => (await objects.listClusterCustomObject({ ...iamOf(platform), plural })) && true,
      {
        timeoutMs: 30_000,
        intervalMs: 100,
      },
    );
  }
}

/**
 * The original's role model for a platform name, as where the original is installed: its users, login
 * records, role, Group and GroupBinding CRDs (seed-shaped), and ours but those.
 */
export async function installOriginalRoleModel(kc: KubeConfig, platform: string): Promise<void> {
  await installCrdFiles(kc, [...SEED_CRD_FILES, ...SEED_ROLE_CRD_FILES, ...SEED_GROUP_CRD_FILES], platform);
  await installIamCrds(kc, platform, { except: ['users', 'groups', 'groupbindings'] });
}

export interface TestUser {
  name: string;
  password: string;
  groups: string[];
  email?: string;
  annotations?: Record<string, string>;
  /** bcrypt cost of the stored hash; 10 (the minimum, to keep tests fast) by default. */
  passwordCost?: number;
}

/** Creates a User through the API (bcrypt cost 10 unless the user says otherwise). */
export async function createUser(
  kc: KubeConfig,
  user: TestUser,
  platform = 'platform',
): Promise<Record<string, unknown>> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const iam = iamOf(platform);
  const body = {
    apiVersion: `${iam.group}/${iam.version}`,
    kind: 'User',
    metadata: { name: user.name, ...(user.annotations ? { annotations: user.annotations } : {}) },
    spec: {
      password: await bcrypt.hash(user.password, user.passwordCost ?? 10),
      groups: user.groups,
      ...(user.email ? { email: user.email } : {}),
    },
  };
  return (await whileInitializing(`create user ${user.name}`, () =>
    api.createClusterCustomObject({ ...iam, plural: 'users', body }),
  )) as Record<string, unknown>;
}

/** Sets status.state as an administrator would; retries when the server's own status writes get in between. */
export async function setUserState(
  kc: KubeConfig,
  name: string,
  state: 'Active' | 'Disabled',
): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  await waitFor(`user ${name} status.state=${state}`, async () => {
    const current = (await api.getClusterCustomObject({ ...IAM, plural: 'users', name })) as {
      status?: Record<string, unknown>;
    };
    try {
      await api.replaceClusterCustomObjectStatus({
        ...IAM,
        plural: 'users',
        name,
        body: { ...current, status: { ...current.status, state } },
      });
      return true;
    } catch (err) {
      if (err instanceof ApiException && err.code === 409) return undefined;
      throw err;
    }
  });
}

export interface StoredUser {
  metadata: { resourceVersion: string };
  status?: Record<string, unknown>;
}

export async function getUser(kc: KubeConfig, name: string): Promise<StoredUser> {
  const api = kc.makeApiClient(CustomObjectsApi);
  return (await api.getClusterCustomObject({ ...IAM, plural: 'users', name })) as StoredUser;
}

export async function listSessions(
  kc: KubeConfig,
  username: string,
  platform = 'platform',
): Promise<{ metadata: { name: string }; spec: { username: string; incarnation?: number } }[]> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const list = (await whileInitializing('list sessions', () =>
    api.listClusterCustomObject({ ...iamOf(platform), plural: 'sessions' }),
  )) as {
    items: { metadata: { name: string }; spec: { username: string; incarnation?: number } }[];
  };
  return list.items.filter((s) => s.spec.username === username);
}

/** Deletes the users and every session of theirs. */
export async function deleteUsersAndSessions(
  kc: KubeConfig,
  usernames: string[],
  platform = 'platform',
): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const iam = iamOf(platform);
  for (const name of usernames) {
    for (const session of await listSessions(kc, name, platform)) {
      await api
        .deleteClusterCustomObject({ ...iam, plural: 'sessions', name: session.metadata.name })
        .catch(ignore404);
    }
    await api.deleteClusterCustomObject({ ...iam, plural: 'users', name }).catch(ignore404);
  }
}

export async function deleteUser(kc: KubeConfig, name: string): Promise<void> {
  await kc
    .makeApiClient(CustomObjectsApi)
    .deleteClusterCustomObject({ ...IAM, plural: 'users', name })
    .catch(ignore404);
}

/**
 * Retries while a freshly installed CRD's storage answers 429 "storage is (re)initializing" — it may do so
 * a few times after the CRD is Established, while its status settles.
 */
async function whileInitializing<T>(what: string, call: () => Promise<T>): Promise<T> {
  let result: T | undefined;
  await waitFor(what, async () => {
    try {
      result = await call();
      return true;
    } catch (err) {
      if (err instanceof ApiException && err.code === 429) return undefined;
      throw err;
    }
  });
  return result as T;
}

function ignore404(err: unknown): void {
  if (!(err instanceof ApiException && err.code === 404)) throw err;
}

/** A temp dir with freshly generated signing keys (never committed): ES256 current + ES256 previous + RSA. */
export function generateTestKeys(): {
  dir: string;
  es256: string;
  es256Next: string;
  rs256: string;
  hmac: string;
  cleanup(): void;
} {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'platform-keys-'));
  const write = (name: string, pem: string | Buffer) => {
    const file = path.join(dir, name);
    writeFileSync(file, pem, { mode: 0o600 });
    return file;
  };
  const ec = () =>
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  });
  return {
    dir,
    es256: write('es256.pem', ec()),
    es256Next: write('es256-next.pem', ec()),
    rs256: write('rs256.pem', rsa),
    hmac: write('hmac.secret', randomBytes(48).toString('base64')),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A form-urlencoded POST, as any OAuth client sends it. */
export async function postForm(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

export async function passwordLogin(
  baseUrl: string,
  username: string,
  password: string,
  client = { id: 'platform', secret: 'platform' },
) {
  return postForm(`${baseUrl}/oauth/token`, {
    grant_type: 'password',
    username,
    password,
    client_id: client.id,
    client_secret: client.secret,
  });
}

/**
 * The real server with the given flags, once it listens, /readyz passes (its user and session caches
 * synced) and its login thread serves logins (it starts after readiness; until then the main thread does).
 */
export async function startReadyServer(
  args: string[],
  options: { startTimeoutMs?: number } = {},
): Promise<ServerProcess> {
  const server = await startServerProcess(args, options);
  try {
    await waitFor(
      'server /readyz',
      async () => ((await fetch(`${server.url}/readyz`)).status === 200 ? true : undefined),
      {
        timeoutMs: Math.max(30_000, options.startTimeoutMs ?? 0),
      },
    );
    // No gauge without a login thread (auth.loginThread=false).
    await waitFor(
      'the login thread',
      async () =>
        /^platform_login_thread_ready 0$/m.test(await (await fetch(`${server.url}/metrics`)).text())
          ? undefined
          : true,
      { timeoutMs: 30_000 },
    );
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

const MAIN_TS = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/** Runs the server expecting it to exit at once (bad configuration); resolves with exit code and stderr. */
export function runServerToExit(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN_TS, '--http.host=127.0.0.1', '--http.port=0', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    // A deadline, not a timing check: a cold start on a loaded machine takes well over 10 s.
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
