import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Freshness } from '../../src/cluster/informer.ts';
import { claimsOf, sameClaims } from '../../src/nodes/pod-claims.ts';
import type { ClaimUsage } from '../../src/nodes/pod-cache.ts';
import {
  claimAnnotator,
  storageClassAnnotator,
  type ClassCounts,
  type SnapshotDrivers,
} from '../../src/resources/computed-annotations.ts';
import type { KubeObject } from '../../src/resources/kube-object.ts';
import { storageClassesOf } from '../../src/resources/storage-class-usage.ts';

const CURRENT: Freshness = { connected: true, staleSeconds: 0 };

describe('the claims a pod mounts', () => {
  test('named claims and generic ephemeral ones (<pod>-<volume>), each once; none: undefined', () => {
    const pod = {
      metadata: { name: 'db-0', namespace: 'a' },
      spec: {
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } },
          { name: 'config', configMap: { name: 'x' } },
          { name: 'again', persistentVolumeClaim: { claimName: 'data-db-0' } },
          { name: 'scratch', ephemeral: { volumeClaimTemplate: {} } },
          { name: 'broken', persistentVolumeClaim: {} },
        ],
      },
    };
    assert.deepEqual(claimsOf(pod), ['data-db-0', 'db-0-scratch']);
    assert.equal(claimsOf({ metadata: { name: 'web' }, spec: { volumes: [{ name: 'tmp' }] } }), undefined);
    assert.equal(claimsOf({ metadata: { name: 'web' } }), undefined);
  });

  test('sameClaims compares the lists', () => {
    assert.ok(sameClaims(undefined, undefined));
    assert.ok(sameClaims(['a', 'b'], ['a', 'b']));
    assert.ok(!sameClaims(['a'], undefined));
    assert.ok(!sameClaims(['a'], ['b']));
    assert.ok(!sameClaims(['a'], ['a', 'b']));
  });
});

describe('the storage classes a claim counts towards', () => {
  const claim = (storageClassName?: string, annotation?: string): KubeObject => ({
    metadata: {
      name: 'c',
      ...(annotation ? { annotations: { 'volume.beta.kubernetes.io/storage-class': annotation } } : {}),
    },
    spec: storageClassName === undefined ? {} : { storageClassName },
  });
  test('spec.storageClassName and the beta annotation, as the original counts them', () => {
    assert.deepEqual(storageClassesOf(claim('fast')), ['fast']);
    assert.deepEqual(storageClassesOf(claim(undefined, 'old')), ['old']);
    assert.deepEqual(storageClassesOf(claim('fast', 'fast')), ['fast']);
    assert.deepEqual(storageClassesOf(claim('fast', 'old')), ['fast', 'old']);
    assert.deepEqual(storageClassesOf(claim('')), [], 'an empty class is no class');
  });
});

describe('computed annotations', () => {
  test('pvc-count on a StorageClass, under the platform prefix, without touching the object', () => {
    const counts: ClassCounts = {
      synced: true,
      tag: '41',
      freshness: () => CURRENT,
      count: (name) => (name === 'fast' ? 3 : 0),
    };
    const annotator = storageClassAnnotator('kubesphere', counts);
    const sc: KubeObject = { metadata: { name: 'fast', annotations: { keep: 'me' } } };
    Object.freeze(sc.metadata!.annotations);
    assert.deepEqual(annotator.annotate(sc).metadata?.annotations, {
      keep: 'me',
      'kubesphere.io/pvc-count': '3',
    });
    assert.deepEqual(sc.metadata?.annotations, { keep: 'me' });
    assert.deepEqual(
      storageClassAnnotator('platform', counts).annotate({ metadata: { name: 'slow' } }).metadata,
      {
        name: 'slow',
        annotations: { 'platform.io/pvc-count': '0' },
      },
    );
    assert.equal(annotator.tag(), '41');
  });

  test('in-use and allow-snapshot on a claim: the provisioner from the beta annotation, else the GA one', () => {
    const claims: ClaimUsage = {
      synced: true,
      claimsTag: '7',
      freshness: () => CURRENT,
      inUse: (namespace, claim) => namespace === 'a' && claim === 'data',
    };
    const drivers: SnapshotDrivers = {
      ready: true,
      tag: '9',
      freshness: () => ({ connected: false, staleSeconds: 12 }),
      allows: (provisioner) => provisioner === 'csi.example.com',
    };
    const annotator = claimAnnotator('kubesphere', claims, drivers);
    const pvc = (namespace: string, name: string, annotations: Record<string, string> = {}): KubeObject => ({
      metadata: { name, namespace, annotations },
    });
    const of = (o: KubeObject) => {
      const a = annotator.annotate(o).metadata!.annotations!;
      return [a['kubesphere.io/in-use'], a['kubesphere.io/allow-snapshot']];
    };
    assert.deepEqual(of(pvc('a', 'data')), ['true', 'false']);
    assert.deepEqual(of(pvc('b', 'data')), ['false', 'false'], 'another namespace');
    const beta = { 'volume.beta.kubernetes.io/storage-provisioner': 'csi.example.com' };
    assert.deepEqual(of(pvc('a', 'other', beta)), ['false', 'true']);
    const ga = { 'volume.kubernetes.io/storage-provisioner': 'csi.example.com' };
    assert.deepEqual(of(pvc('a', 'other', ga)), ['false', 'true']);
    const both = { ...ga, 'volume.beta.kubernetes.io/storage-provisioner': 'nfs.example.com' };
    assert.deepEqual(of(pvc('a', 'other', both)), ['false', 'false'], 'the beta one counts, as there');
    // A claim that carries the annotations already (a copy written back) gets them recomputed.
    assert.deepEqual(of(pvc('a', 'other', { 'kubesphere.io/in-use': 'true' })), ['false', 'false']);
    assert.equal(annotator.tag(), '7.9');
    assert.deepEqual(annotator.freshness(), { connected: false, staleSeconds: 12 }, 'the least current');
    assert.equal(annotator.ready, true);
    assert.equal(claimAnnotator('kubesphere', claims, { ...drivers, ready: false }).ready, false);
  });
});
