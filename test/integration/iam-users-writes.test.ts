// The users API's writes (issue 33 §1): create, update, change password, delete, as the original's
// console sends them, on a real kube-apiserver: with the original's role model (seed CRDs under a
// platform name of this file's own) and with only our CRDs.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  Watch,
} from '@kubernetes/client-node';
import bcrypt from 'bcrypt';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  installIamCrds,
  installOriginalRoleModel,
  listSessions,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const core = kc.makeApiClient(CoreV1Api);
const objects = kc.makeApiClient(CustomObjectsApi);
const sfx = randomBytes(3).toString('hex');
const PASSWORD = 'Writes-Pa55word';
const RBAC_GROUP = 'rbac.authorization.k8s.io';

const ignore404 = (err: unknown) => {
  if (!(err instanceof ApiException && err.code === 404)) throw err;
};

interface UserBody {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    resourceVersion?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  spec: Record<string, unknown>;
}
interface Answer {
  status: number;
  text: string;
  body: Record<string, unknown> & { message?: string; code?: number; kind?: string };
}

/** A watch of namespaces through the server's Kubernetes API proxy; resolves `ended` when it ends. */
async function proxiedWatch(url: string, token: string): Promise<{ ended: Promise<void>; abort(): void }> {
  const controller = new AbortController();
  let res: Response | undefined;
  // The user's RBAC binding was just made: the kube-apiserver may take a moment to apply it.
  await waitFor('the proxied watch opens', async () => {
    const attempt = await fetch(`${url}/api/v1/namespaces?watch=true`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: controller.signal,
    });
    if (attempt.status === 200) res = attempt;
    else await attempt.body?.cancel();
    return res ? true : undefined;
  });
  let received = '';
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res!.body as AsyncIterable<Uint8Array>)
        received += decoder.decode(chunk, { stream: true });
    } catch {
      /* cut: also an end */
    }
  })();
  await waitFor('the watch delivers', () => (received.includes('"ADDED"') ? true : undefined));
  return { ended, abort: () => controller.abort() };
}

/** Fails unless `promise` settles within `ms`. */
async function within(what: string, promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
/** The bound for a stream to end with its session, plus the watch's delivery. */
const STREAM_END_MS = 2000;

function profile(options: { platform: string; original: boolean }) {
  const P = options.platform;
  const IAM = { group: `iam.${P}.io`, version: 'v1alpha2' };
  const GLOBAL_ROLE = `iam.${P}.io/globalrole`;
  const USER_REF = `iam.${P}.io/user-ref`;
  const prefix = (P === 'uwk' ? 'uk' : 'uo') + `-${sfx}`;
  const ADMIN = `${prefix}-admin`; // Kubernetes cluster-admin (and platform-admin where that model is)
  const PLAIN = `${prefix}-plain`; // no binding anywhere
  const NEW = `${prefix}-new`; // created through the API
  const NS = `${prefix}-ns`;
  const WATCHER = `${prefix}-namespace-watcher`;
  let server: ServerProcess;
  const tokens = new Map<string, string>();

  const login = async (user: string, password = PASSWORD) =>
    passwordLogin(server.url, user, password, { id: P, secret: P });
  const tokenOf = async (user: string) => {
    if (!tokens.has(user)) {
      const answer = await login(user);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      tokens.set(user, String(answer.body['access_token']));
    }
    return tokens.get(user)!;
  };
  const call = async (
    token: string,
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<Answer> => {
    const res = await fetch(`${server.url}/kapis/iam.${P}.io/v1alpha2/${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'Content-Type': contentType }),
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? (JSON.parse(text) as Answer['body']) : {} };
  };
  const as = async (user: string, method: string, path: string, body?: unknown) =>
    call(await tokenOf(user), method, path, body);
  /** A Status error with that code whose message matches. */
  const refused = (answer: Answer, code: number, message: RegExp) => {
    assert.equal(answer.status, code, answer.text);
    assert.equal(answer.body.kind, 'Status', answer.text);
    assert.equal(answer.body.code, code);
    assert.match(String(answer.body.message), message);
  };
  const stored = async (name: string) =>
    (await objects.getClusterCustomObject({ ...IAM, plural: 'users', name })) as UserBody & {
      metadata: { resourceVersion: string };
    };
  /** The user as the API serves it, once its cache has the version stored now (a login writes to it). */
  const current = async (name: string) => {
    let read: UserBody | undefined;
    await waitFor(`${name} as stored`, async () => {
      const version = (await stored(name)).metadata.resourceVersion;
      read = (await as(ADMIN, 'GET', `users/${name}`)).body as unknown as UserBody;
      return read.metadata.resourceVersion === version ? true : undefined;
    });
    return read!;
  };
  const globalBindings = async (user: string) =>
    (
      (await objects.listClusterCustomObject({
        ...IAM,
        plural: 'globalrolebindings',
        labelSelector: `${USER_REF}=${user}`,
      })) as { items: { metadata: { name: string }; roleRef: { name: string } }[] }
    ).items;
  const newUser = (name: string, extra: Partial<UserBody['spec']> = {}, annotations = {}): UserBody => ({
    apiVersion: `iam.${P}.io/v1alpha2`,
    kind: 'User',
    metadata: { name, annotations },
    spec: { email: `${name}@writes.example`, password: PASSWORD, lang: 'en', ...extra },
  });
  const custom = (plural: string, kind: string, metadata: object, rest: object) =>
    objects.createClusterCustomObject({
      ...IAM,
      plural,
      body: { apiVersion: `${IAM.group}/${IAM.version}`, kind, metadata, ...rest },
    });

  const cleanup = async () => {
    await server?.stop();
    if (options.original) {
      for (const plural of ['globalroles', 'globalrolebindings']) {
        const found = (await objects.listClusterCustomObject({ ...IAM, plural })) as {
          items: { metadata: { name: string } }[];
        };
        for (const item of found.items)
          await objects
            .deleteClusterCustomObject({ ...IAM, plural, name: item.metadata.name })
            .catch(ignore404);
      }
    }
    for (const name of [ADMIN, `${NEW}-crb`]) await rbac.deleteClusterRoleBinding({ name }).catch(ignore404);
    await rbac.deleteClusterRole({ name: WATCHER }).catch(ignore404);
    await core.deleteNamespace({ name: NS }).catch(ignore404);
    await deleteUsersAndSessions(kc, [ADMIN, PLAIN, NEW, `${NEW}-2`], P);
  };

  before(async () => {
    if (options.original) {
      await installOriginalRoleModel(kc, P);
    } else {
      await installIamCrds(kc, P);
    }
    await cleanup();
    for (const name of [ADMIN, PLAIN])
      await createUser(kc, { name, password: PASSWORD, groups: [], email: `${name}@writes.example` }, P);
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: ADMIN },
        roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: ADMIN }],
      },
    });
    if (options.original) {
      const everything = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
      await custom('globalroles', 'GlobalRole', { name: 'platform-admin' }, { rules: everything });
      await custom('globalroles', 'GlobalRole', { name: 'platform-regular' }, { rules: [] });
      await custom(
        'globalrolebindings',
        'GlobalRoleBinding',
        { name: `${ADMIN}-platform-admin`, labels: { [USER_REF]: ADMIN } },
        {
          roleRef: { apiGroup: IAM.group, kind: 'GlobalRole', name: 'platform-admin' },
          subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: ADMIN }],
        },
      );
    }
    await core.createNamespace({ body: { metadata: { name: NS } } });
    // The new user may watch namespaces through the proxy (a binding made before the user, labelled as
    // the original labels a user's bindings: it goes when the user is deleted).
    await rbac.createClusterRole({
      body: {
        metadata: { name: WATCHER },
        rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: `${NEW}-crb`, labels: { [USER_REF]: NEW } },
        roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: WATCHER },
        subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: NEW }],
      },
    });
    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${P}`,
      '--auth.addressRequestsPerMinute=0',
      '--leaderElection.enabled=false',
    ]);
  });
  after(cleanup);

  test('create: the password stored only as a bcrypt hash, never answered; the new user logs in', async () => {
    // Every version of the new User the kube-apiserver ever holds, from before the create on.
    const seen: string[] = [];
    const watch = await new Watch(kc).watch(
      `/apis/${IAM.group}/${IAM.version}/users`,
      { fieldSelector: `metadata.name=${NEW}` },
      (_type, object) => seen.push(JSON.stringify(object)),
      () => undefined,
    );
    const role = options.original ? { [GLOBAL_ROLE]: 'platform-regular' } : {};
    const created = await as(ADMIN, 'POST', 'users', newUser(NEW, { description: 'made here' }, role));
    assert.equal(created.status, 200, created.text);
    assert.doesNotMatch(created.text, new RegExp(PASSWORD));
    assert.doesNotMatch(created.text, /\$2[aby]\$/);
    const body = created.body as unknown as UserBody;
    assert.equal(body.metadata.name, NEW);
    assert.equal(body.spec['password'], undefined);
    assert.equal(body.spec['email'], `${NEW}@writes.example`);
    assert.equal(body.metadata.annotations?.[GLOBAL_ROLE], options.original ? 'platform-regular' : undefined);

    const user = await stored(NEW);
    // Active at once, as the original's controller makes a user once its password is hashed (the
    // console shows a user without a state as Pending).
    const stateOf = (u: unknown) => (u as { status?: { state?: string } }).status?.state;
    assert.equal(stateOf(body), 'Active');
    assert.equal(stateOf(user), 'Active');
    await waitFor('the watch sees the User', () => (seen.length > 0 ? true : undefined));
    watch.abort();
    for (const version of seen) {
      assert.doesNotMatch(version, new RegExp(PASSWORD));
      assert.match(version, /"password":"\$2[aby]\$\d\d\$/);
    }
    const hash = String(user.spec['password']);
    assert.match(hash, /^\$2[aby]\$\d\d\$/);
    assert.equal(await bcrypt.compare(PASSWORD, hash), true);
    assert.equal(user.spec['lang'], 'en');
    assert.equal(user.spec['description'], 'made here');
    // The role is the binding, not an annotation kept on the User.
    assert.equal(user.metadata.annotations?.[GLOBAL_ROLE], undefined);
    if (options.original) {
      const bindings = await globalBindings(NEW);
      assert.deepEqual(
        bindings.map((b) => [b.metadata.name, b.roleRef.name]),
        [[`${NEW}-platform-regular`, 'platform-regular']],
      );
    }

    const answer = await login(NEW);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const own = await call(String(answer.body['access_token']), 'GET', `users/${NEW}`);
    assert.equal(own.status, 200, own.text);
  });

  test('create: bad input is a 400 naming the field; a duplicate 409; too large 413; no RBAC 403', async () => {
    const token = await tokenOf(ADMIN);
    refused(await call(token, 'POST', 'users', '{"metadata": '), 400, /./);
    refused(await as(ADMIN, 'POST', 'users', { ...newUser(`${NEW}-2`), kind: 'Group' }), 400, /^kind: /);
    refused(await as(ADMIN, 'POST', 'users', newUser('Not_A_Name')), 400, /^metadata\.name: .*DNS-1123/);
    refused(
      await as(ADMIN, 'POST', 'users', newUser(`${NEW}-2`, { email: 'no-at-sign.example' })),
      400,
      /^spec\.email: /,
    );
    for (const weak of ['Sh0rt', 'alllowercase1', 'ALLUPPER1X', 'NoDigitsHere', 'Aa1'.padEnd(65, 'x')])
      refused(
        await as(ADMIN, 'POST', 'users', newUser(`${NEW}-2`, { password: weak })),
        400,
        /^spec\.password: must be 8 to 64 characters/,
      );
    refused(
      await as(ADMIN, 'POST', 'users', newUser(`${NEW}-2`, { groups: ['system:masters'] })),
      400,
      /^spec\.groups: /,
    );
    refused(await as(ADMIN, 'POST', 'users', newUser(NEW)), 409, /already exists/);
    const huge = newUser(`${NEW}-2`, { description: 'x'.repeat(70 * 1024) });
    refused(await as(ADMIN, 'POST', 'users', huge), 413, /./);
    refused(await as(PLAIN, 'POST', 'users', newUser(`${NEW}-2`)), 403, /./);
    if (options.original) {
      refused(
        await as(ADMIN, 'POST', 'users', newUser(`${NEW}-2`, {}, { [GLOBAL_ROLE]: 'no-such-role' })),
        404,
        /globalroles.* "no-such-role" not found/,
      );
    } else {
      refused(
        await as(ADMIN, 'POST', 'users', newUser(`${NEW}-2`, {}, { [GLOBAL_ROLE]: 'platform-admin' })),
        400,
        /globalrole\]: platform roles .* are not installed/,
      );
    }
    // Nothing was written by any of them.
    await assert.rejects(stored(`${NEW}-2`), (err) => err instanceof ApiException && err.code === 404);
  });

  test('update: email, lang, annotations and the role; never the password; a stale version 409', async () => {
    const before = await stored(NEW);
    const read = await current(NEW);
    const change: UserBody = {
      ...read,
      metadata: {
        ...read.metadata,
        annotations: {
          ...read.metadata.annotations,
          'writes.example/note': 'edited',
          ...(options.original ? { [GLOBAL_ROLE]: 'platform-admin' } : {}),
        },
      },
      spec: { ...read.spec, email: `${NEW}@changed.example`, lang: 'zh', password: 'Ignored-Pa55word' },
    };
    // Another user without RBAC `update` on users.
    refused(await as(PLAIN, 'PUT', `users/${NEW}`, change), 403, /./);
    refused(await as(ADMIN, 'PUT', `users/${PLAIN}`, change), 400, /does not match the name on the URL/);
    const updated = await as(ADMIN, 'PUT', `users/${NEW}`, change);
    assert.equal(updated.status, 200, updated.text);
    if (options.original) {
      // Read right after the answer (as the console lists users after its dialog), the user shows the
      // new role: the write waited for the role cache the reads use.
      const reread = await as(ADMIN, 'GET', `users/${NEW}`);
      assert.equal(
        (reread.body as unknown as UserBody).metadata.annotations?.[GLOBAL_ROLE],
        'platform-admin',
      );
    }
    assert.doesNotMatch(updated.text, /\$2[aby]\$|Ignored-Pa55word/);
    const after = await stored(NEW);
    assert.equal(after.spec['email'], `${NEW}@changed.example`);
    assert.equal(after.spec['lang'], 'zh');
    assert.equal(after.metadata.annotations?.['writes.example/note'], 'edited');
    assert.equal(after.spec['password'], before.spec['password']);
    if (options.original) {
      assert.equal(
        (updated.body as unknown as UserBody).metadata.annotations?.[GLOBAL_ROLE],
        'platform-admin',
      );
      const bindings = await globalBindings(NEW);
      assert.deepEqual(
        bindings.map((b) => b.metadata.name),
        [`${NEW}-platform-admin`],
      );
    }
    // The version read before this update is stale now.
    refused(
      await as(ADMIN, 'PUT', `users/${NEW}`, { ...change, spec: { ...change.spec, lang: 'en' } }),
      409,
      /has been modified/,
    );
    const self = await login(NEW);
    const own = (await call(String(self.body['access_token']), 'GET', `users/${NEW}`))
      .body as unknown as UserBody;
    // A user edits their own e-mail address without RBAC. Sent without a resourceVersion, the change
    // applies to the stored object (the login just wrote to it).
    const { resourceVersion: _version, ...metadata } = own.metadata;
    const mine = await call(String(self.body['access_token']), 'PUT', `users/${NEW}`, {
      ...own,
      metadata,
      spec: { ...own.spec, email: `${NEW}@self.example` },
    });
    assert.equal(mine.status, 200, mine.text);
    assert.equal((await stored(NEW)).spec['email'], `${NEW}@self.example`);
  });

  test('the last platform administrator cannot be deleted or demoted (409); another can', async () => {
    if (options.original) {
      // NEW is a platform-admin too now: demoting NEW is fine, then ADMIN is the last one.
      const read = await current(NEW);
      const demoted = await as(ADMIN, 'PUT', `users/${NEW}`, {
        ...read,
        metadata: {
          ...read.metadata,
          annotations: { ...read.metadata.annotations, [GLOBAL_ROLE]: 'platform-regular' },
        },
      });
      assert.equal(demoted.status, 200, demoted.text);
      await waitFor('the demotion in the role cache', async () => {
        const user = (await as(ADMIN, 'GET', `users/${NEW}`)).body as unknown as UserBody;
        return user.metadata.annotations?.[GLOBAL_ROLE] === 'platform-regular' ? true : undefined;
      });
      const admin = await current(ADMIN);
      refused(
        await as(ADMIN, 'PUT', `users/${ADMIN}`, {
          ...admin,
          metadata: {
            ...admin.metadata,
            annotations: { ...admin.metadata.annotations, [GLOBAL_ROLE]: 'platform-regular' },
          },
        }),
        409,
        /last platform administrator \(global role platform-admin\): demoting/,
      );
    }
    refused(
      await as(ADMIN, 'DELETE', `users/${ADMIN}`),
      409,
      /last platform administrator \(global role platform-admin\): deleting/,
    );
    assert.equal((await stored(ADMIN)).metadata.name, ADMIN);
  });

  test('password: one’s own needs the current one; other sessions end; an administrator resets', async () => {
    const first = String((await login(NEW)).body['access_token']);
    const second = String((await login(NEW)).body['access_token']);
    const next = 'Next-Pa55word';
    refused(
      await call(first, 'PUT', `users/${NEW}/password`, { password: next }),
      400,
      /^currentPassword: required/,
    );
    refused(
      await call(first, 'PUT', `users/${NEW}/password`, {
        currentPassword: 'Wrong-Pa55word',
        password: next,
      }),
      400,
      /incorrect old password/,
    );
    refused(
      await call(first, 'PUT', `users/${NEW}/password`, { currentPassword: PASSWORD, password: 'weak' }),
      400,
      /^password: must be 8 to 64 characters/,
    );
    refused(await as(PLAIN, 'PUT', `users/${NEW}/password`, { password: next }), 403, /users\/password/);
    const stream = await proxiedWatch(server.url, second);
    const changed = await call(first, 'PUT', `users/${NEW}/password`, {
      currentPassword: PASSWORD,
      password: next,
    });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(changed.body, { message: 'success' });
    // The other session is over, its proxied watch too; the caller's own goes on.
    assert.equal((await call(second, 'GET', `users/${NEW}`)).status, 401);
    await within('the other session’s proxied watch ends', stream.ended, STREAM_END_MS);
    assert.equal((await call(first, 'GET', `users/${NEW}`)).status, 200);
    assert.equal((await login(NEW, PASSWORD)).status, 400);
    assert.equal((await login(NEW, next)).status, 200);

    // An administrator resets it without the current one: every session of the user ends.
    const reset = await as(ADMIN, 'PUT', `users/${NEW}/password`, { password: PASSWORD });
    assert.equal(reset.status, 200, reset.text);
    assert.equal((await call(first, 'GET', `users/${NEW}`)).status, 401);
    assert.deepEqual(await listSessions(kc, NEW, P), []);
    assert.equal(await bcrypt.compare(PASSWORD, String((await stored(NEW)).spec['password'])), true);
  });

  test('delete: the sessions end at once, the user’s bindings go, the user is gone', async () => {
    const token = String((await login(NEW)).body['access_token']);
    assert.equal((await call(token, 'GET', `users/${NEW}`)).status, 200);
    const labels = { [USER_REF]: NEW };
    await rbac.createNamespacedRoleBinding({
      namespace: NS,
      body: {
        metadata: { name: `${NEW}-view`, labels },
        roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: NEW }],
      },
    });
    refused(await as(PLAIN, 'DELETE', `users/${NEW}`), 403, /./);
    const stream = await proxiedWatch(server.url, token);
    const deleted = await as(ADMIN, 'DELETE', `users/${NEW}`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.body, { message: 'success' });
    assert.equal((await call(token, 'GET', `users/${NEW}`)).status, 401);
    await within('the deleted user’s proxied watch ends', stream.ended, STREAM_END_MS);
    assert.deepEqual(await listSessions(kc, NEW, P), []);
    await assert.rejects(stored(NEW), (err) => err instanceof ApiException && err.code === 404);
    const selector = { labelSelector: `${USER_REF}=${NEW}` };
    assert.deepEqual((await rbac.listNamespacedRoleBinding({ namespace: NS, ...selector })).items, []);
    assert.deepEqual((await rbac.listClusterRoleBinding(selector)).items, []);
    if (options.original) assert.deepEqual(await globalBindings(NEW), []);
    refused(await as(ADMIN, 'DELETE', `users/${NEW}`), 404, /not found/);
    assert.equal((await login(NEW)).status, 400);
  });

  test('no password and no hash in the server’s logs', () => {
    const output = server.output().join('\n');
    for (const secret of [PASSWORD, 'Next-Pa55word', 'Wrong-Pa55word', 'Ignored-Pa55word'])
      assert.equal(output.includes(secret), false, secret);
    assert.doesNotMatch(output, /\$2[aby]\$\d\d\$/);
  });
}

describe("the original's role model installed (seed CRDs under this file's platform name)", () => {
  profile({ platform: 'uwo', original: true });
});

describe('only our CRDs (roles derived from Kubernetes RBAC)', () => {
  profile({ platform: 'uwk', original: false });
});
