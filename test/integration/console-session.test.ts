// What the original's web console asks before and around every page (../shared reference: console.md
// L1, R1, O1, O2, R-b, R-g), replayed exactly as it sends it, for our default platform name and for
// `kubesphere` (the console's own, with the original's users CRD): the public configuration endpoints,
// /kapis/version without a token, login, refresh with the refresh token also sent as a Bearer header,
// and logout by GET.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  installCrdFiles,
  installIamCrds,
  SEED_CRD_FILES,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);
const suffix = randomBytes(3).toString('hex');

for (const platform of ['platform', 'kubesphere']) {
  describe(`the console's session calls, platformName ${platform}`, () => {
    const user = {
      name: `console-sam-${suffix}`,
      password: 'sam-Pa55word!',
      groups: ['developers'],
      email: `sam-${suffix}@console.example`,
    };
    // The console's own defaults: client id and secret are the platform name (server/config.yaml).
    const client = { client_id: platform, client_secret: platform };
    const config = `/kapis/config.${platform}.io/v1alpha2/configs`;
    let server: ServerProcess;

    const get = async (path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${server.url}${path}`, { headers });
      const text = await res.text();
      return { status: res.status, type: res.headers.get('content-type') ?? '', text };
    };
    const form = async (fields: Record<string, string>, headers: Record<string, string> = {}) => {
      const res = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    /** L1: the console server's login request, with the fields it sends. */
    const consoleLogin = () =>
      form(
        {
          username: user.name,
          encrypt: 'c2FtLVBhNTV3b3JkIQ==',
          password: user.password,
          grant_type: 'password',
          ...client,
        },
        { 'x-client-ip': '203.0.113.7' },
      );

    before(async () => {
      if (platform === 'kubesphere') {
        await installCrdFiles(kc, SEED_CRD_FILES, platform);
        await installIamCrds(kc, platform, { except: ['users'] });
      } else {
        await installIamCrds(kc, platform);
      }
      await deleteUsersAndSessions(kc, [user.name], platform);
      await createUser(kc, user, platform);
      server = await startReadyServer([
        `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
        `--platformName=${platform}`,
        '--auth.addressRequestsPerMinute=0',
      ]);
    });
    after(async () => {
      await server?.stop();
      await deleteUsersAndSessions(kc, [user.name], platform);
    });

    test('configz, oauth, gpu kinds and /kapis/version answer without a token, and alike with any token', async () => {
      const login = await consoleLogin();
      assert.equal(login.status, 200, JSON.stringify(login.body));
      const bearers: Record<string, string>[] = [
        {},
        { authorization: `Bearer ${login.body['access_token'] as string}` },
        // Not looked at, as on /kapis/version: these paths skip authentication in the original too.
        { authorization: 'Bearer not-a-token' },
      ];
      for (const headers of bearers) {
        const configz = await get(`${config}/configz`, headers);
        assert.equal(configz.status, 200, configz.text);
        assert.match(configz.type, /json/);
        const flags = JSON.parse(configz.text) as Record<string, boolean>;
        assert.ok(Object.values(flags).every((v) => typeof v === 'boolean'));
        // What we serve is on; what the console would then call and we do not serve is off.
        for (const on of ['kubernetes', 'authentication', 'authorization']) assert.equal(flags[on], true, on);
        for (const off of [
          'multicluster',
          'devops',
          'monitoring',
          'openpitrix',
          'openpitrix.appstore',
          'servicemesh',
          'network',
          'alerting',
          'auditing',
          'events',
          'metering',
          'edgeruntime',
          // No log store is configured here.
          'logging',
        ]) {
          assert.equal(flags[off], false, off);
        }

        const oauth = await get(`${config}/oauth`, headers);
        assert.equal(oauth.status, 200, oauth.text);
        const options = JSON.parse(oauth.text) as Record<string, unknown>;
        assert.deepEqual(options, {
          issuer: platform,
          identityProviders: [],
          accessTokenMaxAge: 7200 * 1e9,
          accessTokenInactivityTimeout: (14_400 - 7200) * 1e9,
        });
        assert.doesNotMatch(oauth.text, /secret|password/i);

        const gpu = await get(`${config}/gpu/kinds`, headers);
        assert.equal(gpu.status, 200, gpu.text);
        assert.deepEqual(JSON.parse(gpu.text), []);

        const version = await get('/kapis/version', headers);
        assert.equal(version.status, 200, version.text);
        const served = JSON.parse(version.text) as Record<string, unknown>;
        const own = served['platformApiserver'] as Record<string, unknown>;
        assert.match(String(own['version']), /^v\d+\.\d+/);
        assert.match(String(own['gitCommit']), /^[0-9a-f]{40}$/);
        assert.equal(own['buildDate'], served['buildDate']);
        // The console picks paths by gitVersion: under its platform name, the release whose API we implement.
        const [gitVersion, gitMajor, gitMinor] =
          platform === 'kubesphere' ? ['v3.4.1', '3', '4'] : [own['version'], undefined, undefined];
        assert.equal(served['gitVersion'], gitVersion);
        if (gitMajor) assert.deepEqual([served['gitMajor'], served['gitMinor']], [gitMajor, gitMinor]);
        assert.equal(served['gitCommit'], own['gitCommit']);
      }
    });

    test('R1: refresh with the refresh token also sent as a Bearer header, as the console sends it', async () => {
      const login = await consoleLogin();
      assert.equal(login.status, 200);
      const refreshToken = login.body['refresh_token'] as string;
      const refreshed = await form(
        { grant_type: 'refresh_token', refresh_token: refreshToken, ...client },
        { authorization: `Bearer ${refreshToken}` },
      );
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      assert.equal(typeof refreshed.body['access_token'], 'string');
      assert.ok(Number(refreshed.body['expires_in']) > 600, 'or the console refreshes on every call');
      const me = await get('/oauth/userinfo', {
        authorization: `Bearer ${refreshed.body['access_token'] as string}`,
      });
      assert.equal(me.status, 200, me.text);
      assert.equal((JSON.parse(me.text) as Record<string, unknown>)['username'], user.name);
    });

    test('O1: GET /oauth/logout with the access token ends the session like POST', async () => {
      const login = await consoleLogin();
      const access = login.body['access_token'] as string;
      const bearer = { authorization: `Bearer ${access}` };
      assert.equal((await get('/oauth/userinfo', bearer)).status, 200);
      const head = await fetch(`${server.url}/oauth/logout`, { method: 'HEAD', headers: bearer });
      assert.equal(head.status, 405, 'HEAD is safe: it must not end the session');
      assert.equal((await get('/oauth/userinfo', bearer)).status, 200, 'the session survived HEAD');

      const logout = await get('/oauth/logout', bearer);
      assert.equal(logout.status, 200, logout.text);
      assert.deepEqual(JSON.parse(logout.text), { message: 'success' });
      assert.equal((await get('/oauth/userinfo', bearer)).status, 401, 'the access token is dead');
      const refresh = await form({
        grant_type: 'refresh_token',
        refresh_token: login.body['refresh_token'] as string,
        ...client,
      });
      assert.equal(refresh.status, 400);
      assert.equal(refresh.body['error'], 'invalid_grant', 'and so is the refresh token');

      const anonymous = await get('/oauth/logout');
      assert.equal(anonymous.status, 401, anonymous.text);
      assert.equal((JSON.parse(anonymous.text) as Record<string, unknown>)['error'], 'invalid_token');
      const put = await fetch(`${server.url}/oauth/logout`, { method: 'PUT' });
      assert.equal(put.status, 405);
      assert.equal(put.headers.get('allow'), 'GET, POST');
    });
  });
}
