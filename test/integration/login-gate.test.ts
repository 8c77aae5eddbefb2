// The password-verification gate under a storm (issue 16): beyond its slots and queue a login is refused
// at once with 503 + Retry-After, and nothing is written for it — no reservation in the login ledger (two
// kube-apiserver writes that would only be undone) — while the admitted login completes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  generateTestKeys,
  getUser,
  installIamCrds,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const PASSWORD = 'gate-Pa55word!';
const USER = `gate-slow-${randomBytes(3).toString('hex')}`;

describe('password gate full', () => {
  let kc: KubeConfig;
  let server: ServerProcess;
  let keys: ReturnType<typeof generateTestKeys>;

  before(async () => {
    const cp = await testControlPlane();
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, [USER]);
    // Cost 15: one comparison takes seconds, so the slot stays taken while the test knocks.
    await createUser(kc, { name: USER, password: PASSWORD, groups: [], passwordCost: 15 });
    keys = generateTestKeys();
    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      '--auth.passwordConcurrency=1',
      '--auth.passwordQueue=0',
    ]);
  });

  after(async () => {
    await server?.stop();
    await deleteUsersAndSessions(kc, [USER]);
    keys?.cleanup();
  });

  const metric = async (pattern: RegExp): Promise<number> => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    return Number(pattern.exec(text)?.[1] ?? NaN);
  };
  const running = () => metric(/^platform_password_verifications_in_flight\{state="running"\} (\d+)$/m);
  const userVersion = async () => (await getUser(kc, USER)).metadata.resourceVersion;

  test('logins beyond the slot: 503 at once, the User untouched; the admitted one succeeds', async () => {
    const admitted = passwordLogin(server.url, USER, PASSWORD);
    await waitFor('the first login comparing', async () => ((await running()) === 1 ? true : undefined), {
      timeoutMs: 20_000,
    });
    // Its reservation is written: from here on, only a write for another login would change the User.
    const before = await userVersion();
    const refused = await Promise.all([1, 2, 3].map(() => passwordLogin(server.url, USER, PASSWORD)));
    const afterRefusals = await userVersion();
    assert.equal(await running(), 1, 'the first comparison was still running throughout');
    for (const answer of refused) {
      assert.equal(answer.status, 503);
      assert.equal(answer.body['error'], 'temporarily_unavailable');
      assert.ok(Number(answer.headers.get('retry-after')) >= 1);
    }
    assert.equal(afterRefusals, before, 'nothing was written for the refused logins');
    assert.equal(await metric(/^platform_password_verifications_refused_total (\d+)$/m), 3);
    const first = await admitted;
    assert.equal(first.status, 200, JSON.stringify(first.body));
  });
});
