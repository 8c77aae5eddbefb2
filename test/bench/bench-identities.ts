// Users, RBAC and real tokens for the benchmarks: Users as custom resources, allowed to read nodes through
// a ClusterRole bound to their group, and access tokens obtained from the server's /oauth/token.
import { CustomObjectsApi, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import bcrypt from 'bcrypt';
import { IAM, installIamCrds, passwordLogin, postForm } from '../support/iam-fixtures.ts';

export const BENCH_GROUP = 'bench-readers';
export const BENCH_PASSWORD = 'bench-Pa55word!';

/** CRDs, a ClusterRole reading nodes bound to BENCH_GROUP, and `count` users named `<prefix>-<i>`. */
export async function createBenchUsers(
  kc: KubeConfig,
  options: { prefix: string; count: number; cost: number },
): Promise<string[]> {
  await installIamCrds(kc);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const exists = (err: unknown) => {
    if ((err as { code?: number }).code !== 409) throw err;
  };
  await rbac
    .createClusterRole({
      body: {
        metadata: { name: 'bench-node-reader' },
        rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }],
      },
    })
    .catch(exists);
  await rbac
    .createClusterRoleBinding({
      body: {
        metadata: { name: 'bench-node-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bench-node-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: BENCH_GROUP }],
      },
    })
    .catch(exists);
  // One hash for all: the cost of a login is the comparison, not how the hash was made.
  const hash = await bcrypt.hash(BENCH_PASSWORD, options.cost);
  const objects = kc.makeApiClient(CustomObjectsApi);
  const names = Array.from({ length: options.count }, (_, i) => `${options.prefix}-${i}`);
  for (let i = 0; i < names.length; i += 16) {
    await Promise.all(
      names.slice(i, i + 16).map((name) =>
        objects
          .createClusterCustomObject({
            ...IAM,
            plural: 'users',
            body: {
              apiVersion: `${IAM.group}/${IAM.version}`,
              kind: 'User',
              metadata: { name },
              spec: { password: hash, groups: [BENCH_GROUP] },
            },
          })
          .catch(exists),
      ),
    );
  }
  return names;
}

export interface TokenPair {
  access: string;
  refresh: string;
}

export async function login(url: string, username: string): Promise<TokenPair> {
  let res = await passwordLogin(url, username, BENCH_PASSWORD);
  // The password gate refuses logins beyond its queue: wait as told, as a client would.
  while (res.status === 503) {
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000));
    res = await passwordLogin(url, username, BENCH_PASSWORD);
  }
  if (res.status !== 200) throw new Error(`login of ${username}: ${res.status} ${JSON.stringify(res.body)}`);
  return { access: String(res.body['access_token']), refresh: String(res.body['refresh_token']) };
}

export async function refresh(url: string, refreshToken: string): Promise<TokenPair> {
  const res = await postForm(`${url}/oauth/token`, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: 'platform',
    client_secret: 'platform',
  });
  if (res.status !== 200) throw new Error(`refresh: ${res.status} ${JSON.stringify(res.body)}`);
  return { access: String(res.body['access_token']), refresh: String(res.body['refresh_token']) };
}

/**
 * `perUser` distinct access tokens for each user: one login, then refreshes (each refresh issues a new
 * access token; the earlier ones stay valid while their session lives). Distinct tokens, distinct users:
 * the bearer check and the authorization cache see a realistic population.
 */
export async function distinctTokens(url: string, users: string[], perUser: number): Promise<string[]> {
  const tokens: string[] = [];
  // Eight at a time: within the password gate's slots and queue on a small machine.
  for (let i = 0; i < users.length; i += 8) {
    const chains = await Promise.all(
      users.slice(i, i + 8).map(async (user) => {
        let pair = await login(url, user);
        const mine = [pair.access];
        while (mine.length < perUser) {
          pair = await refresh(url, pair.refresh);
          mine.push(pair.access);
        }
        return mine;
      }),
    );
    tokens.push(...chains.flat());
  }
  return tokens;
}
