import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/kernel/api-error.ts';
import { parseListQuery } from '../../src/list-query/list-query.ts';
import { pushdownOf } from '../../src/resources/kind-readers.ts';
import type { KubeObject } from '../../src/resources/kube-object.ts';
import { BUILT_IN_KINDS, type ResourceKind } from '../../src/resources/kinds.ts';
import { ObjectSelector, selectObjects } from '../../src/resources/object-selection.ts';
import { listQueryOptions } from '../../src/resources/resources-routes.ts';
import { podStatus } from '../../src/resources/workload-status.ts';

const kind = (resource: string): ResourceKind => BUILT_IN_KINDS.find((k) => k.resource === resource)!;
const pods = kind('pods');
const query = (raw: Record<string, string>, of = pods) => parseListQuery(raw, listQueryOptions(of));
const select = (objects: KubeObject[], raw: Record<string, string>, of = pods) =>
  selectObjects(objects, { kind: of, query: query(raw, of), aliasAnnotation: 'acme.io/alias-name' });
const names = (objects: { metadata?: { name?: string } }[]) => objects.map((o) => o.metadata?.name);

function pod(
  name: string,
  created: number,
  extra: Partial<KubeObject> = {},
  labels: Record<string, string> = {},
) {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      labels,
      creationTimestamp: new Date(Date.UTC(2030, 0, 1, 0, 0, created)).toISOString(),
    },
    ...extra,
  };
}

describe('the object list pipeline', () => {
  const started = (s: number) => ({
    status: { startTime: new Date(Date.UTC(2030, 0, 2, 0, 0, s)).toISOString() },
  });
  const objects = [
    pod('a', 3, started(1), { app: 'web' }),
    pod('b', 2, started(3), { app: 'db' }),
    pod('c', 1, {}, {}),
    pod('d', 1, started(2), { app: 'web', tier: 'x' }),
  ];

  test('orders newest first by default, ties broken by name (reversed when descending)', () => {
    assert.deepEqual(names(select(objects, {}).items), ['a', 'b', 'd', 'c']);
    assert.deepEqual(names(select(objects, { ascending: 'true' }).items), ['c', 'd', 'b', 'a']);
  });

  test('startTime sorts by status.startTime, the creation time where a pod has not started', () => {
    assert.deepEqual(names(select(objects, { sortBy: 'startTime' }).items), ['b', 'd', 'a', 'c']);
  });

  test('a page keeps only what can be on it, and counts every match', () => {
    const selector = new ObjectSelector({
      kind: pods,
      query: query({ limit: '2', page: '2', sortBy: 'name', ascending: 'true' }),
      aliasAnnotation: 'x',
    });
    // Arriving in chunks, as from a paged list of the kube-apiserver.
    selector.add(objects.slice(0, 2));
    selector.add(objects.slice(2));
    const page = selector.result();
    assert.deepEqual(names(page.items), ['c', 'd']);
    assert.equal(page.totalItems, 4);
  });

  test('label selectors with !key and key!=value, the kind’s filters', () => {
    assert.deepEqual(names(select(objects, { labelSelector: '!app', sortBy: 'name' }).items), ['c']);
    assert.deepEqual(
      names(select(objects, { labelSelector: 'app!=web', sortBy: 'name', ascending: 'true' }).items),
      ['b', 'c'],
    );
    const claimed = pod('e', 1, { spec: { volumes: [{ persistentVolumeClaim: { claimName: 'data' } }] } });
    assert.deepEqual(names(select([...objects, claimed], { pvcName: 'data' }).items), ['e']);
    const running = pod('f', 1, {
      status: { phase: 'Running', containerStatuses: [{ ready: true, state: { running: {} } }] },
    });
    assert.equal(podStatus(running), 'Running');
    assert.deepEqual(names(select([...objects, running], { status: 'Running' }).items), ['f']);
  });

  test('the node, phase, labels and a single name are passed on to the kube-apiserver', () => {
    const { pushdown, applied } = pushdownOf(
      pods,
      query({ nodeName: 'n,1', phase: 'Running', labelSelector: '!a', label: 'b=c', names: 'x' }),
    );
    assert.equal(pushdown.labelSelector, '!a,b=c');
    assert.equal(pushdown.fieldSelector, 'spec.nodeName=n\\,1,status.phase=Running,metadata.name=x');
    assert.deepEqual([...applied].sort(), ['nodeName', 'phase']);
  });

  test('per-kind parameters: unknown sort keys and values are 400s naming the parameter', () => {
    const field = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return err instanceof ApiError ? err.details?.causes?.[0]?.field : undefined;
      }
      return undefined;
    };
    assert.equal(
      field(() => query({ sortBy: 'startTime' }, kind('deployments'))),
      'sortBy',
    );
    assert.equal(
      field(() => query({ phase: 'Sleeping' })),
      'phase',
    );
    assert.equal(
      field(() => query({ status: 'sleeping' }, kind('deployments'))),
      'status',
    );
    assert.equal(query({ status: 'updating' }, kind('deployments')).filters.get('status'), 'updating');
    // Nodes keep their own query (no kind filters): their canonical form is unchanged.
    assert.equal(parseListQuery({}).canonical, parseListQuery({ nodeName: 'x' }).canonical);
  });
});
