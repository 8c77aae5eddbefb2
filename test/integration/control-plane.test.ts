import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { createNodes, deleteNodes, nodeFixture } from '../cluster/node-fixtures.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const run = promisify(execFile);

function coreApi(cp: ControlPlane, context = 'admin'): CoreV1Api {
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  kc.setCurrentContext(context);
  return kc.makeApiClient(CoreV1Api);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('real control plane', () => {
  let cp: ControlPlane;
  before(async () => {
    cp = await testControlPlane();
  });

  test('creates, updates status, reads back and deletes a realistic Node through @kubernetes/client-node', async () => {
    const core = coreApi(cp);
    const fixture = nodeFixture(10, { prefix: 'crud' });
    const created = await core.createNode({ body: fixture });
    assert.equal(created.metadata?.name, 'crud-0010');
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.match(created.metadata?.resourceVersion ?? '', /^\d+$/);

    const read = await core.readNode({ name: 'crud-0010' });
    // Status set on create is kept; labels with empty values and JSON-text annotations survive verbatim.
    assert.equal(read.metadata?.labels?.['node-role.kubernetes.io/control-plane'], '');
    assert.equal(
      read.metadata?.annotations?.['platform.io/labels'],
      fixture.metadata!.annotations!['platform.io/labels'],
    );
    assert.deepEqual(JSON.parse(read.metadata!.annotations!['platform.io/labels']!), {
      zone: 'zone-b',
      pool: 'general',
    });
    assert.equal(
      read.status?.conditions?.find((c) => c.type === 'Ready')?.status,
      'False',
      'every 11th fixture is NotReady',
    );
    assert.equal(read.status?.capacity?.['cpu'], '12');
    assert.equal(read.status?.nodeInfo?.kubeletVersion, 'v1.36.3');
    assert.deepEqual(
      read.spec?.taints?.map((t) => t.key),
      ['node-role.kubernetes.io/control-plane'],
    );

    // Status changes go through the /status subresource; a plain update would drop them.
    const patched = await core.patchNodeStatus({
      name: 'crud-0010',
      body: [{ op: 'replace', path: '/status/conditions/3/status', value: 'True' }],
    });
    assert.equal(patched.status?.conditions?.[3]?.type, 'Ready');
    assert.equal(patched.status?.conditions?.[3]?.status, 'True');
    assert.ok(Number(patched.metadata!.resourceVersion) > Number(created.metadata!.resourceVersion));

    const relabeled = await core.patchNode({
      name: 'crud-0010',
      body: [{ op: 'add', path: '/metadata/labels/extra', value: 'yes' }],
    });
    assert.equal(relabeled.metadata?.labels?.['extra'], 'yes');

    await core.deleteNode({ name: 'crud-0010' });
    await assert.rejects(core.readNode({ name: 'crud-0010' }), (err: { code?: number }) => err.code === 404);
  });

  test('generator creates many nodes through the API, each with status', async () => {
    const core = coreApi(cp);
    const names = await createNodes(core, 60, { prefix: 'gen' });
    assert.equal(names.length, 60);
    const list = await core.listNode({ labelSelector: 'node-role.kubernetes.io/worker' });
    const generated = list.items.filter((n) => n.metadata?.name?.startsWith('gen-'));
    assert.equal(generated.length, 36, 'three of every five fixtures are workers');
    assert.ok(generated.every((n) => (n.status?.conditions?.length ?? 0) === 4));
    const expectedUnschedulable = Array.from({ length: 60 }, (_, i) => i).filter(
      (i) => i % 5 >= 1 && i % 5 <= 3 && i % 7 === 6,
    );
    assert.equal(generated.filter((n) => n.spec?.unschedulable).length, expectedUnschedulable.length);
    await deleteNodes(core, 'gen');
    const after = await core.listNode();
    assert.equal(after.items.filter((n) => n.metadata?.name?.startsWith('gen-')).length, 0);
  });

  test('RBAC applies: an unprivileged identity may not list nodes, the admin may', async () => {
    await assert.rejects(coreApi(cp, 'alice').listNode(), (err: { code?: number }) => err.code === 403);
    const { stdout } = await run(cp.binaries.kubectl, [
      '--kubeconfig',
      cp.kubeconfigPath,
      'auth',
      'can-i',
      'list',
      'nodes',
    ]);
    assert.equal(stdout.trim(), 'yes');
  });
});

describe('control plane lifecycle', () => {
  test('stop() leaves no process and no temp dir behind', async () => {
    const own = await startControlPlane();
    assert.equal(own.pids.length, 2);
    assert.ok(own.pids.every(processAlive));
    assert.ok(existsSync(own.dir));
    await own.stop();
    assert.ok(
      own.pids.every((pid) => !processAlive(pid)),
      'etcd and kube-apiserver are gone',
    );
    assert.ok(!existsSync(own.dir), 'temp dir removed');
  });

  test('a binary that fails to start is a clear error, not a hang', async () => {
    const startedAt = Date.now();
    await assert.rejects(
      startControlPlane({ apiserverArgs: ['--no-such-flag=1'], startTimeoutMs: 30_000 }),
      /kube-apiserver exited \(\d+\) before it was ready[\s\S]*unknown flag: --no-such-flag/,
    );
    assert.ok(
      Date.now() - startedAt < 25_000,
      'fails as soon as the process exits, not at the start deadline',
    );
  });

  test('missing Go fails the binary build loudly', async () => {
    const emptyCache = mkdtempSync(path.join(os.tmpdir(), 'no-go-'));
    after(() => rmSync(emptyCache, { recursive: true, force: true }));
    const script = new URL('../cluster/build-binaries.sh', import.meta.url).pathname;
    await assert.rejects(
      run('bash', [script], {
        env: { PATH: '/usr/bin:/bin', HOME: emptyCache, PLATFORM_CACHE_DIR: emptyCache },
      }),
      (err: { code?: number; stderr?: string }) =>
        err.code === 2 && /Go is not installed/.test(err.stderr ?? ''),
    );
  });
});
