import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { AUTHZ_STALE_HEADER } from '../../src/access/access-review.ts';
import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { createNodes } from '../cluster/node-fixtures.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { httpGet, type RawResponse } from '../support/http-client.ts';
import { serverKubeConfig, startNodesServer, type NodesServer } from '../support/nodes-server.ts';

const PREFIX = 'azout';
const REVIEW_TIMEOUT_MS = 5000;
/** Behavioural bound, not a benchmark: far below the review timeout a request used to wait. */
const FAST_MS = 1000;

// A private control plane: this file freezes its kube-apiserver with SIGSTOP.
const cp: ControlPlane = await startControlPlane();
after(() => cp.stop());

describe('authorization while the kube-apiserver is frozen (SIGSTOP)', () => {
  let server: NodesServer;
  let admin: Record<string, string>;
  const apiserverPid = () => cp.pids[1]!;
  const resume = () => {
    try {
      process.kill(apiserverPid(), 'SIGCONT');
    } catch {
      /* gone */
    }
  };

  const list = (): Promise<RawResponse> => httpGet(`${server.nodesUrl}?name=${PREFIX}-`, admin);
  const readyz = async () => {
    const res = await httpGet(`${server.url}/readyz?verbose`);
    return { status: res.status, text: res.body.toString() };
  };
  const metric = async (name: string) => {
    const text = await server.registry.getSingleMetricAsString(name);
    return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  };

  before(async () => {
    const core = serverKubeConfig(cp.kubeconfigPath).makeApiClient(CoreV1Api);
    await createNodes(core, 3, { prefix: PREFIX });
    admin = { Authorization: `Bearer ${cp.admin.token}` };
    server = await startNodesServer({
      kubeconfigPath: cp.kubeconfigPath,
      allowedTtlMs: 1000,
      staleIfErrorMs: 60_000,
      reviewTimeoutMs: REVIEW_TIMEOUT_MS,
    });
    await waitFor(
      'ready',
      async () => ((await httpGet(`${server.url}/readyz`)).status === 200 ? true : undefined),
      {
        timeoutMs: 15_000,
      },
    );
  });
  after(async () => {
    resume();
    await server?.stop();
  });

  test('node lists answer at once from the cached answer, staleness shown; fresh again after SIGCONT', async () => {
    const warm = await list();
    assert.equal(warm.status, 200);
    assert.equal(warm.headers[AUTHZ_STALE_HEADER.toLowerCase()], undefined, 'no staleness while answering');
    assert.match((await readyz()).text, /\[\+\]authz-reviews ok\n/);

    process.kill(apiserverPid(), 'SIGSTOP');
    const slow: string[] = [];
    const statuses = new Set<number>();
    let requests = 0;
    try {
      // Keep asking until a review has timed out (≥ 5 s into the freeze) and the answers served are
      // visibly old; every single request on the way must have answered fast.
      await waitFor(
        'a failed review and answers at least 6 s old',
        async () => {
          const startedAt = Date.now();
          const res = await list();
          const elapsedMs = Date.now() - startedAt;
          requests++;
          statuses.add(res.status);
          if (elapsedMs >= FAST_MS) slow.push(`${elapsedMs} ms (request ${requests})`);
          const age = Number(res.headers[AUTHZ_STALE_HEADER.toLowerCase()] ?? '-1');
          return age >= 6 && (await metric('platform_authz_review_failures_total')) >= 1 ? res : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      assert.deepEqual(slow, [], `requests slower than ${FAST_MS} ms during the freeze`);
      assert.deepEqual([...statuses], [200]);
      assert.ok(requests >= 10, `${requests} requests during the freeze`);

      const body = (await list()).json<{ totalItems: number }>();
      assert.equal(body.totalItems, 3, 'served from the node cache');

      const ready = await readyz();
      assert.equal(ready.status, 200, 'still ready: within the staleness bound');
      assert.match(
        ready.text,
        /\[\+\]authz-reviews ok: SubjectAccessReviews failing for \d+s; serving cached answers \(oldest served \d+s, limit 61s/,
      );
      assert.ok((await metric('platform_authz_stale_answer_age_seconds')) >= 6);
      assert.ok((await metric('platform_authz_unreachable_seconds')) >= 1);
      const checks = await server.registry.getSingleMetricAsString('platform_authz_checks_total');
      assert.match(checks, /verb="list",resource="nodes",decision="allowed",source="stale"\} [1-9]/);
    } finally {
      resume();
    }

    await waitFor(
      'fresh authorization answers after SIGCONT',
      async () => {
        const res = await list();
        return res.status === 200 && res.headers[AUTHZ_STALE_HEADER.toLowerCase()] === undefined
          ? res
          : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    assert.match((await readyz()).text, /\[\+\]authz-reviews ok\n/);
    assert.equal(await metric('platform_authz_unreachable_seconds'), 0);
    assert.equal(await metric('platform_authz_stale_answer_age_seconds'), 0);
  });
});
