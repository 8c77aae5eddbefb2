// Living beside the original's own resources (issue 14 item 5): a cluster prepared with the original's
// users CRD (no status subresource) and LoginRecord CRD, and `platformName: kubesphere`. Lockout and login
// bookkeeping work there with optimistic concurrency, in the original's shapes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  generateTestKeys,
  installCrdFiles,
  installIamCrds,
  passwordLogin,
  SEED_CRD_FILES,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const PLATFORM = 'kubesphere';
const IAM = { group: 'iam.kubesphere.io', version: 'v1alpha2' };
const suffix = randomBytes(3).toString('hex');
const PASSWORD = 'seed-Pa55word!';
const LOCKED = `seed-lena-${suffix}`;
const OTHER = `seed-otto-${suffix}`;
const RETAINED = `seed-rita-${suffix}`;
const MAX = 3;

interface LoginRecord {
  metadata: { name: string; labels?: Record<string, string>; creationTimestamp: string };
  spec: {
    type: string;
    success: boolean;
    reason: string;
    sourceIP?: string;
    userAgent?: string;
    provider: string;
  };
}

describe('the original’s users CRD (no status subresource) and LoginRecord CRD', () => {
  let kc: KubeConfig;
  let server: ServerProcess;
  let keys: ReturnType<typeof generateTestKeys>;
  const objects = () => kc.makeApiClient(CustomObjectsApi);

  const userOf = async (name: string) =>
    (await objects().getClusterCustomObject({ ...IAM, plural: 'users', name })) as {
      metadata: { annotations?: Record<string, string> };
      status?: Record<string, string>;
    };
  const recordsOf = async (name: string) =>
    (
      (await objects().listClusterCustomObject({
        ...IAM,
        plural: 'loginrecords',
        labelSelector: `iam.kubesphere.io/user-ref=${name}`,
      })) as { items: LoginRecord[] }
    ).items;
  const deleteRecords = async () => {
    for (const name of [LOCKED, OTHER, RETAINED])
      for (const r of await recordsOf(name).catch(() => []))
        await objects()
          .deleteClusterCustomObject({ ...IAM, plural: 'loginrecords', name: r.metadata.name })
          .catch(() => undefined);
  };

  before(async () => {
    const cp = await testControlPlane();
    kc = adminKubeConfig(cp.kubeconfigPath);
    // The original's CRDs as another owner installed them; ours only for what the original lacks.
    await installCrdFiles(kc, SEED_CRD_FILES, PLATFORM);
    await installIamCrds(kc, PLATFORM, { except: ['users'] });
    const crd = await kc
      .makeApiClient(ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: 'users.iam.kubesphere.io' });
    assert.equal(crd.spec.versions[0]!.subresources?.status, undefined, 'fixture has no status subresource');
    await deleteUsersAndSessions(kc, [LOCKED, OTHER, RETAINED], PLATFORM);
    await deleteRecords();
    for (const name of [LOCKED, OTHER, RETAINED])
      await createUser(kc, { name, password: PASSWORD, groups: [], email: `${name}@example.com` }, PLATFORM);
    keys = generateTestKeys();
    server = await startReadyServer([
      `--platformName=${PLATFORM}`,
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      `--auth.lockout.maxFailures=${MAX}`,
      '--auth.lockout.windowSeconds=600',
    ]);
  });

  after(async () => {
    await server?.stop();
    await deleteUsersAndSessions(kc, [LOCKED, OTHER, RETAINED], PLATFORM);
    await deleteRecords();
    keys?.cleanup();
  });

  test('the server states at start which user schema it found and what that enables', () => {
    const line = server.logs().find((l) => l['message'] === 'user schema found');
    assert.ok(line, 'schema line logged');
    assert.match(String(line['statusWrites']), /no status subresource/);
    assert.match(String(line['loginRecords']), /LoginRecord objects written/);
    assert.match(String(line['unknownNames']), /across replicas/);
  });

  test('a login records lastLoginTime and a LoginRecord; N failures lock the user as the original shows it', async () => {
    const ok = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': 'seed-console/3.4' },
      body: new URLSearchParams({
        grant_type: 'password',
        username: LOCKED,
        password: PASSWORD,
        client_id: PLATFORM,
        client_secret: PLATFORM,
      }).toString(),
    });
    assert.equal(ok.status, 200, await ok.clone().text());
    const token = ((await ok.json()) as { access_token: string }).access_token;
    await waitFor('lastLoginTime written with the object', async () => {
      const status = (await userOf(LOCKED)).status;
      return status?.['lastLoginTime'] && status['state'] === 'Active' ? true : undefined;
    });

    for (let i = 0; i < MAX; i++) {
      const res = await passwordLogin(server.url, LOCKED, `wrong-${i}`, { id: PLATFORM, secret: PLATFORM });
      assert.equal(res.status, 400, JSON.stringify(res.body));
    }
    const refused = await passwordLogin(server.url, LOCKED, PASSWORD, { id: PLATFORM, secret: PLATFORM });
    assert.equal(refused.status, 429);
    assert.equal(refused.body['error'], 'invalid_grant');

    const status = await waitFor('AuthLimitExceeded on the User', async () => {
      const s = (await userOf(LOCKED)).status;
      return s?.['state'] === 'AuthLimitExceeded' ? s : undefined;
    });
    assert.equal(typeof status['lastTransitionTime'], 'string');
    assert.match(status['reason'] ?? '', /Failed login attempts exceed 3/);
    // The original's schema keeps only its own status fields.
    assert.equal(status['lockedUntil'], undefined);
    assert.equal(status['recentFailedLogins'], undefined);

    // Records: one success and three failures, in the original's shape.
    const records = await waitFor('four login records', async () => {
      const list = await recordsOf(LOCKED);
      return list.length === MAX + 1 ? list : undefined;
    });
    const failures = records.filter((r) => !r.spec.success);
    assert.equal(failures.length, MAX);
    for (const r of records) {
      assert.equal(r.spec.type, 'Token');
      assert.equal(r.spec.provider, '');
      assert.equal(r.spec.sourceIP, '127.0.0.1');
      assert.ok(r.metadata.name.startsWith(`${LOCKED}-`));
      assert.equal(r.metadata.labels?.['iam.kubesphere.io/user-ref'], LOCKED);
    }
    assert.deepEqual(new Set(failures.map((r) => r.spec.reason)), new Set(['incorrect password']));
    const success = records.find((r) => r.spec.success)!;
    assert.equal(success.spec.reason, 'authenticated successfully');
    assert.equal(success.spec.userAgent, 'seed-console/3.4');

    // Listed by the original's path: own records, the v1alpha3 envelope, paging and sorting.
    const base = `${server.url}/kapis/iam.kubesphere.io/v1alpha2/users/${LOCKED}/loginrecords`;
    const get = async (query: string, bearer = token) => {
      const res = await fetch(`${base}${query}`, { headers: { Authorization: `Bearer ${bearer}` } });
      return { status: res.status, body: (await res.json()) as { items: LoginRecord[]; totalItems: number } };
    };
    const all = await get('');
    assert.equal(all.status, 200);
    assert.equal(all.body.totalItems, MAX + 1);
    const times = all.body.items.map((r) => Date.parse(r.metadata.creationTimestamp));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
      'newest first by default',
    );
    const page = await get('?limit=3&page=2&sortBy=name&ascending=true');
    assert.equal(page.body.totalItems, MAX + 1);
    const names = all.body.items.map((r) => r.metadata.name).sort();
    assert.deepEqual(
      page.body.items.map((r) => r.metadata.name),
      names.slice(3),
    );
    assert.equal((await get('?limit=0')).status, 400);

    // Another user may not read them without RBAC.
    const other = await passwordLogin(server.url, OTHER, PASSWORD, { id: PLATFORM, secret: PLATFORM });
    assert.equal(other.status, 200);
    const forbidden = await get('', other.body['access_token'] as string);
    assert.equal(forbidden.status, 403);
  });

  test('a later login moves lastLoginTime forward, written with the object (no status subresource)', async () => {
    const login = async () =>
      assert.equal(
        (await passwordLogin(server.url, OTHER, PASSWORD, { id: PLATFORM, secret: PLATFORM })).status,
        200,
      );
    const activeSince = (after: string) =>
      waitFor(`lastLoginTime after ${after}`, async () => {
        const status = (await userOf(OTHER)).status;
        const time = status?.['lastLoginTime'];
        return status?.['state'] === 'Active' && time && time > after ? time : undefined;
      });
    await login();
    const first = await activeSince('');
    // The state is Active now: the later login writes the time, with the whole status (no subresource).
    await login();
    await activeSince(first);
  });

  test("a replica's first record of a user runs the original's retention: at most 100 records are kept", async () => {
    const seeded = 103;
    for (let i = 0; i < seeded; i++)
      await objects().createClusterCustomObject({
        ...IAM,
        plural: 'loginrecords',
        body: {
          apiVersion: `${IAM.group}/${IAM.version}`,
          kind: 'LoginRecord',
          metadata: { generateName: `${RETAINED}-`, labels: { 'iam.kubesphere.io/user-ref': RETAINED } },
          spec: { type: 'Token', provider: '', success: true, reason: 'seeded' },
        },
      });
    // creationTimestamp counts whole seconds: the login's record must be newer than every seeded one.
    const seededIn = Math.floor(Date.now() / 1000);
    await waitFor(
      'the next second',
      async () => (Math.floor(Date.now() / 1000) > seededIn ? true : undefined),
      {
        intervalMs: 50,
      },
    );
    const answer = await passwordLogin(server.url, RETAINED, PASSWORD, { id: PLATFORM, secret: PLATFORM });
    assert.equal(answer.status, 200);
    const kept = await waitFor('the retention pass', async () => {
      const records = await recordsOf(RETAINED);
      return records.length === 100 ? records : undefined;
    });
    assert.equal(kept.filter((r) => r.spec.reason === 'seeded').length, 99, 'the oldest went first');
  });
});
