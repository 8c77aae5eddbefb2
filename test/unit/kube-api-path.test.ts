import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { safeKubeSegments, UnsafePathError } from '../../src/kube-proxy/kube-api-path.ts';

describe('safeKubeSegments', () => {
  test('accepts Kubernetes API paths and decodes segments', () => {
    assert.deepEqual(safeKubeSegments('/api'), ['api']);
    assert.deepEqual(safeKubeSegments('/openapi/v3/apis/apps/v1'), ['openapi', 'v3', 'apis', 'apps', 'v1']);
    assert.deepEqual(safeKubeSegments('/openapi/v2'), ['openapi', 'v2']);
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
    ['/metrics', /only \/api, \/apis/],
    ['/apiextensions', /only \/api, \/apis/],
    ['/openapi/platform/v3', /only \/api, \/apis/],
    ['/openapi', /only \/api, \/apis/],
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
