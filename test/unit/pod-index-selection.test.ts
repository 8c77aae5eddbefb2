import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseListQuery } from '../../src/list-query/list-query.ts';
import { packPod, unpackPod } from '../../src/nodes/pod-body.ts';
import { INDEX_EPOCH_MS, type IndexedPod } from '../../src/nodes/pod-cache.ts';
import type { KubeObject } from '../../src/resources/kube-object.ts';
import { BUILT_IN_KINDS } from '../../src/resources/kinds.ts';
import { selectObjects } from '../../src/resources/object-selection.ts';
import { indexAnswers, selectIndexPage } from '../../src/resources/pod-index-reader.ts';
import { listQueryOptions } from '../../src/resources/resources-routes.ts';

const pods = BUILT_IN_KINDS.find((k) => k.resource === 'pods')!;
const query = (raw: Record<string, string>) => parseListQuery(raw, listQueryOptions(pods));

/** A small deterministic cluster: names, namespaces, nodes and (second-resolution) times collide on purpose. */
function cluster(): { objects: KubeObject[]; records: IndexedPod[] } {
  const objects: KubeObject[] = [];
  const records: IndexedPod[] = [];
  let seed = 7;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  for (let i = 0; i < 300; i++) {
    const namespace = `ns-${next(4)}`;
    const name = `pod-${next(60)}`;
    if (objects.some((o) => o.metadata?.namespace === namespace && o.metadata?.name === name)) continue;
    const node = next(5) === 0 ? undefined : `node-${next(3)}`;
    const created = Date.UTC(2026, 0, 1) + next(20) * 1000;
    const started = next(3) === 0 ? undefined : Date.UTC(2026, 0, 1) + next(20) * 1000;
    const object: KubeObject = {
      metadata: {
        name,
        namespace,
        creationTimestamp: new Date(created).toISOString(),
        resourceVersion: `${i}`,
      },
      spec: node ? { nodeName: node } : {},
      status: started ? { startTime: new Date(started).toISOString() } : {},
    };
    objects.push(object);
    const createdS = (created - INDEX_EPOCH_MS) / 1000;
    records.push({
      key: `${namespace}/${name}`,
      namespace,
      node,
      createdS,
      startedS: started ? (started - INDEX_EPOCH_MS) / 1000 : createdS,
      resourceVersion: `${i}`,
      body: packPod(object),
    });
  }
  return { objects, records };
}

describe('pod index selection', () => {
  const { objects, records } = cluster();
  const cases: [string | undefined, Record<string, string>][] = [
    [undefined, { limit: '6', nodeName: 'node-1', sortBy: 'startTime' }],
    [undefined, { limit: '6', page: '3', nodeName: 'node-2', sortBy: 'startTime', ascending: 'true' }],
    ['ns-1', { limit: '10', sortBy: 'startTime' }],
    ['ns-2', { limit: '10', page: '2', sortBy: 'createTime' }],
    ['ns-0', { limit: '5', sortBy: 'name', ascending: 'true', name: '1' }],
    [undefined, { limit: '100', sortBy: 'creationTimestamp', names: 'pod-1,pod-2,pod-3' }],
    [undefined, { limit: '7', page: '99', sortBy: 'name' }],
  ];
  for (const [namespace, raw] of cases) {
    test(`equals the list pipeline: ${namespace ?? '*'} ${new URLSearchParams(raw)}`, () => {
      const q = query(raw);
      assert.ok(indexAnswers(q));
      const inScope = objects.filter((o) => namespace === undefined || o.metadata?.namespace === namespace);
      const listed = selectObjects(inScope, { kind: pods, query: q, aliasAnnotation: 'a' });
      const indexed = selectIndexPage(records, namespace, q);
      assert.deepEqual(
        indexed.pods.map((p) => p.key),
        listed.items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`),
      );
      assert.equal(indexed.totalItems, listed.totalItems);
    });
  }

  test('a packed pod unpacks to its served JSON: kind and apiVersion first, no managedFields', () => {
    const pod = {
      metadata: { name: 'p', namespace: 'n', managedFields: [{ manager: 'kubelet' }], labels: { ü: 'é' } },
      spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'img' }] },
      status: { phase: 'Running' },
    };
    const packed = packPod(pod);
    assert.ok(packed.length < JSON.stringify(pod).length, 'smaller than the pod');
    assert.equal(
      unpackPod(packed).toString(),
      JSON.stringify({
        kind: 'Pod',
        apiVersion: 'v1',
        metadata: { name: 'p', namespace: 'n', labels: { ü: 'é' } },
        spec: pod.spec,
        status: pod.status,
      }),
    );
    // As listed (no kind) or watched (kind first): the same bytes.
    assert.equal(
      unpackPod(packPod({ kind: 'Pod', apiVersion: 'v1', ...pod })).toString(),
      unpackPod(packed).toString(),
    );
  });

  test('queries the records cannot answer go upstream', () => {
    const unanswerable: Record<string, string>[] = [
      {},
      { limit: '101' },
      { limit: '10', labelSelector: 'app=web' },
      { limit: '10', ownerKind: 'ReplicaSet' },
      { limit: '10', pvcName: 'data' },
      { limit: '10', serviceName: 'web' },
      { limit: '10', status: 'Running' },
      { limit: '10', phase: 'Running' },
      { limit: '10', namespace: 'ns-1' },
      { limit: '10', sortBy: 'updateTime' },
      { limit: '10', uid: 'x' },
      { limit: '10', annotation: 'a=b' },
      { limit: '10', alias: 'x' },
    ];
    for (const raw of unanswerable) {
      assert.equal(indexAnswers(query(raw)), false, JSON.stringify(raw));
    }
  });
});
