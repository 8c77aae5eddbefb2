// Signing keys: clear startup errors for missing or unfit keys, the ephemeral development key, and the
// RS256 and HS256 alternatives end to end.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { decodeProtectedHeader } from 'jose';
import { ensureBootstrapAdmin } from '../../src/users/bootstrap-admin.ts';
import { IamApi } from '../../src/users/iam-api.ts';
import { iamGroupFor } from '../../src/users/iam-resources.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  generateTestKeys,
  installIamCrds,
  runServerToExit,
  startReadyServer,
  passwordLogin,
} from '../support/iam-fixtures.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const ADMIN = 'keys-first-admin';
const USER = { name: 'keys-kim', password: 'kim-Pa55word!', groups: [] as string[] };

describe('signing keys', () => {
  let kc: KubeConfig;
  let kubeconfig: string;
  let keys: ReturnType<typeof generateTestKeys>;

  before(async () => {
    const cp = await testControlPlane();
    kubeconfig = `--kubernetes.kubeconfig=${cp.kubeconfigPath}`;
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, [USER.name, ADMIN]);
    await createUser(kc, USER);
    keys = generateTestKeys();
  });

  after(async () => {
    await deleteUsersAndSessions(kc, [USER.name, ADMIN]);
    keys?.cleanup();
  });

  test('missing, malformed or unfit keys stop the server at start with a message naming the key', async () => {
    const garbage = path.join(keys.dir, 'garbage.pem');
    writeFileSync(garbage, 'not a key');
    const weakRsa = path.join(keys.dir, 'weak.pem');
    writeFileSync(
      weakRsa,
      generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    const shortSecret = path.join(keys.dir, 'short.secret');
    writeFileSync(shortSecret, 'too-short');
    const cases: [string[], RegExp][] = [
      [
        [
          '--auth.bootstrapAdmin.username=keys-admin',
          `--auth.bootstrapAdmin.passwordFile=${path.join(keys.dir, 'none')}`,
        ],
        /auth\.bootstrapAdmin\.passwordFile: .*none: cannot read \(ENOENT\)/,
      ],
      [['--auth.bootstrapAdmin.username=keys-admin'], /auth\.bootstrapAdmin\.passwordFile: required/],
      [
        [`--auth.signingKeyFile=${path.join(keys.dir, 'nope.pem')}`],
        /auth\.signingKeyFile: .*nope\.pem: cannot read \(ENOENT\)/,
      ],
      [[`--auth.signingKeyFile=${garbage}`], /auth\.signingKeyFile: .*not a PEM private key/],
      [[`--auth.signingKeyFile=${keys.rs256}`], /holds a RS256 key but auth\.signingAlgorithm is ES256/],
      [[`--auth.signingKeyFile=${weakRsa}`, '--auth.signingAlgorithm=RS256'], /at least 2048 bits/],
      [
        [`--auth.signingKeyFile=${keys.es256}`, `--auth.verificationKeyFiles=${garbage}`],
        /auth\.verificationKeyFiles: /,
      ],
      [
        ['--auth.signingAlgorithm=HS256'],
        /auth\.hmacSecretFile: required when auth\.signingAlgorithm is HS256/,
      ],
      [['--auth.signingAlgorithm=HS256', `--auth.hmacSecretFile=${shortSecret}`], /at least 32 bytes/],
      [['--auth.accessTokenMaxAgeSeconds=7200', '--auth.refreshTokenMaxAgeSeconds=3600'], /must be longer/],
    ];
    // A few at a time: ten server starts at once on a loaded 2-core machine can outlast the exit deadline.
    const results: Awaited<ReturnType<typeof runServerToExit>>[] = [];
    for (let i = 0; i < cases.length; i += 3) {
      const batch = cases.slice(i, i + 3).map(([args]) => runServerToExit([kubeconfig, ...args]));
      results.push(...(await Promise.all(batch)));
    }
    cases.forEach(([args, message], i) => {
      const { code, stderr } = results[i]!;
      assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
      assert.match(stderr, message);
      assert.ok(!stderr.includes('PRIVATE KEY'));
    });
  });

  test('without a configured key: an ephemeral key and a loud warning; the first admin is created once', async () => {
    const passwordFile = path.join(keys.dir, 'admin-password');
    writeFileSync(passwordFile, 'first-Adm1n-password\n');
    const server = await startReadyServer([
      kubeconfig,
      '--auth.addressRequestsPerMinute=0',
      `--auth.bootstrapAdmin.username=${ADMIN}`,
      `--auth.bootstrapAdmin.passwordFile=${passwordFile}`,
    ]);
    try {
      const warning = server
        .logs()
        .find((l) => l['level'] === 'warn' && /NO SIGNING KEY CONFIGURED/.test(String(l['message'])));
      assert.ok(warning, 'warning logged');
      const login = await passwordLogin(server.url, USER.name, USER.password);
      assert.equal(login.status, 200);

      const admin = await waitFor('first admin can log in', async () => {
        const res = await passwordLogin(server.url, ADMIN, 'first-Adm1n-password');
        return res.status === 200 ? res : undefined;
      });
      const info = await fetch(`${server.url}/oauth/userinfo`, {
        headers: { Authorization: `Bearer ${admin.body['access_token'] as string}` },
      });
      assert.deepEqual(((await info.json()) as { groups: string[] }).groups, [
        'platform-admins',
        'system:authenticated',
      ]);
      // Started again (another replica, a restart) with another password: the existing user is left alone.
      const api = new IamApi(kc, iamGroupFor('platform'));
      const again = await ensureBootstrapAdmin(
        { username: ADMIN, password: 'another-password', groups: [] },
        { api, logger: createLogger({ level: 'error' }) },
      );
      assert.equal(again, 'exists');
      assert.equal((await passwordLogin(server.url, ADMIN, 'first-Adm1n-password')).status, 200);
      assert.ok(!server.output().join('\n').includes('first-Adm1n-password'));
    } finally {
      await server.stop();
    }
  });

  for (const variant of ['RS256', 'HS256'] as const) {
    test(`${variant} signing works end to end`, async () => {
      const keyArgs =
        variant === 'RS256'
          ? ['--auth.signingAlgorithm=RS256', `--auth.signingKeyFile=${keys.rs256}`]
          : ['--auth.signingAlgorithm=HS256', `--auth.hmacSecretFile=${keys.hmac}`];
      const server = await startReadyServer([kubeconfig, '--auth.addressRequestsPerMinute=0', ...keyArgs]);
      try {
        const login = await passwordLogin(server.url, USER.name, USER.password);
        assert.equal(login.status, 200);
        const access = login.body['access_token'] as string;
        assert.equal(decodeProtectedHeader(access).alg, variant);
        const res = await fetch(`${server.url}/oauth/userinfo`, {
          headers: { Authorization: `Bearer ${access}` },
        });
        assert.equal(res.status, 200);
        const jwks = (await (await fetch(`${server.url}/oauth/keys`)).json()) as { keys: { kty: string }[] };
        // A shared secret is never published; an RSA public key is.
        assert.deepEqual(
          jwks.keys.map((k) => k.kty),
          variant === 'RS256' ? ['RSA'] : [],
        );
      } finally {
        await server.stop();
      }
    });
  }
});
