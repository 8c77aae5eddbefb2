import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeKubeRequest, safeKubeSegments, UnsafePathError } from '../../src/proxy/kube-api-path.ts';

describe('safeKubeSegments', () => {
  test('accepts Kubernetes API paths and decodes segments', () => {
    assert.deepEqual(safeKubeSegments('/api'), ['api']);
    assert.deepEqual(safeKubeSegments('/apis/'), ['apis']);
    assert.deepEqual(safeKubeSegments('/api/v1/namespaces/default/configmaps/a%3Ab'), [
      'api',
      'v1',
      'namespaces',
      'default',
      'configmaps',
      'a:b',
    ]);
  });

  for (const [path, why] of [
    ['/api/../healthz', /"\."|\.\./],
    ['/api/v1/%2e%2e/%2e%2e/logs', /"\."|\.\./],
    ['/api/v1/%2E%2E/x', /"\."|\.\./],
    ['/api/./v1', /"\."/],
    ['/api//v1', /empty/],
    ['/api/v1/nodes%2f..%2f..%2fmetrics', /encoded slash/],
    ['/api/v1/nodes%5c..', /backslash/],
    ['/api/v1/%zz', /malformed/],
    ['/api/v1/a%00b', /control/],
    ['/metrics', /only \/api and \/apis/],
    ['/apiextensions', /only \/api and \/apis/],
    ['api/v1', /absolute/],
  ] as const) {
    test(`refuses ${path}`, () => {
      assert.throws(
        () => safeKubeSegments(path),
        (err: unknown) => err instanceof UnsafePathError && why.test(err.message),
      );
    });
  }
});

describe('describeKubeRequest', () => {
  const verb = (method: string, path: string, query = '') =>
    describeKubeRequest(method, safeKubeSegments(path), new URLSearchParams(query)).verb;

  test('verbs follow the kube-apiserver RequestInfo rules', () => {
    assert.equal(verb('GET', '/api/v1/nodes'), 'list');
    assert.equal(verb('GET', '/api/v1/nodes', 'watch=true'), 'watch');
    assert.equal(verb('GET', '/api/v1/nodes', 'watch=1'), 'watch');
    assert.equal(verb('GET', '/api/v1/nodes/n1'), 'get');
    assert.equal(verb('GET', '/api/v1/namespaces/ns'), 'get');
    assert.equal(verb('GET', '/api/v1/namespaces'), 'list');
    assert.equal(verb('POST', '/api/v1/namespaces/ns/configmaps'), 'create');
    assert.equal(verb('PUT', '/api/v1/namespaces/ns/configmaps/c'), 'update');
    assert.equal(verb('PATCH', '/apis/apps/v1/namespaces/ns/deployments/d/scale'), 'patch');
    assert.equal(verb('DELETE', '/api/v1/namespaces/ns/pods/p'), 'delete');
    assert.equal(verb('DELETE', '/api/v1/namespaces/ns/pods'), 'deletecollection');
    assert.equal(verb('TRACE', '/api/v1/nodes'), 'other');
  });

  test('group, namespace, resource, name and subresource', () => {
    const r = describeKubeRequest(
      'GET',
      safeKubeSegments('/apis/apps/v1/namespaces/ns/deployments/d/status'),
      new URLSearchParams(),
    );
    assert.deepEqual(r, {
      verb: 'get',
      group: 'apps',
      namespace: 'ns',
      resource: 'deployments',
      name: 'd',
      subresource: 'status',
    });
    const core = describeKubeRequest(
      'GET',
      safeKubeSegments('/api/v1/nodes/n1/proxy'),
      new URLSearchParams(),
    );
    assert.deepEqual(core, { verb: 'get', group: '', resource: 'nodes', name: 'n1', subresource: 'proxy' });
  });
});
