import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isWatchQuery, parseApiPath, requestVerb } from '../../src/observability/api-request-info.ts';

describe('API request info', () => {
  test('group, version and resource of API paths and route templates', () => {
    const cases: [string, ReturnType<typeof parseApiPath>][] = [
      [
        '/api/v1/nodes',
        { group: '', version: 'v1', resource: 'nodes', named: false, subresource: false, watchPath: false },
      ],
      [
        '/api/v1/nodes/n1/status',
        { group: '', version: 'v1', resource: 'nodes', named: true, subresource: true, watchPath: false },
      ],
      [
        '/apis/apps/v1/namespaces/ns/deployments/d',
        {
          group: 'apps',
          version: 'v1',
          resource: 'deployments',
          named: true,
          subresource: false,
          watchPath: false,
        },
      ],
      [
        '/api/v1/namespaces',
        {
          group: '',
          version: 'v1',
          resource: 'namespaces',
          named: false,
          subresource: false,
          watchPath: false,
        },
      ],
      [
        '/api/v1/namespaces/ns',
        {
          group: '',
          version: 'v1',
          resource: 'namespaces',
          named: true,
          subresource: false,
          watchPath: false,
        },
      ],
      [
        '/api/v1/namespaces/ns/status',
        {
          group: '',
          version: 'v1',
          resource: 'namespaces',
          named: true,
          subresource: true,
          watchPath: false,
        },
      ],
      [
        '/api/v1/namespaces/ns/pods/p/log',
        { group: '', version: 'v1', resource: 'pods', named: true, subresource: true, watchPath: false },
      ],
      [
        '/api/v1/watch/namespaces/ns/pods',
        { group: '', version: 'v1', resource: 'pods', named: false, subresource: false, watchPath: true },
      ],
      [
        '/kapis/resources.platform.io/v1alpha3/nodes/:name',
        {
          group: 'resources.platform.io',
          version: 'v1alpha3',
          resource: 'nodes',
          named: true,
          subresource: false,
          watchPath: false,
        },
      ],
      // Templates with variables in group/version/resource positions give no label value.
      ['/apis/*path', undefined],
      [
        '/apis/:group/:version/:resource',
        { group: '', version: '', resource: '', named: false, subresource: false, watchPath: false },
      ],
      ['/api', undefined],
      ['/apis/apps', undefined],
      ['/healthz', undefined],
      ['/oauth/token', undefined],
    ];
    for (const [path, expected] of cases) assert.deepEqual(parseApiPath(path), expected, path);
  });

  test('Kubernetes verbs from method, path shape and watch', () => {
    const cases: [string, string, boolean, string][] = [
      ['GET', '/api/v1/nodes', false, 'LIST'],
      ['GET', '/api/v1/nodes', true, 'WATCH'],
      ['GET', '/api/v1/nodes/n1', false, 'GET'],
      ['GET', '/api/v1/watch/nodes', false, 'WATCH'],
      ['get', '/apis/apps/v1/namespaces/a/deployments', false, 'LIST'],
      ['DELETE', '/api/v1/namespaces/a/pods', false, 'DELETECOLLECTION'],
      ['DELETE', '/api/v1/namespaces/a/pods/p', false, 'DELETE'],
      ['POST', '/api/v1/namespaces/a/configmaps', false, 'POST'],
      ['PATCH', '/api/v1/nodes/n1', false, 'PATCH'],
      ['GET', '/healthz', false, 'GET'],
      ['POST', '/oauth/token', false, 'POST'],
      ['GET', '/api', false, 'GET'],
      ['BREW', '/api/v1/nodes', false, 'OTHER'],
      ['PROPFIND', '/x', false, 'OTHER'],
    ];
    for (const [method, path, watch, verb] of cases) {
      assert.equal(requestVerb(method, path, watch), verb, `${method} ${path} watch=${watch}`);
    }
  });

  test('watch query values', () => {
    assert.equal(isWatchQuery('true'), true);
    assert.equal(isWatchQuery('1'), true);
    assert.equal(isWatchQuery('false'), false);
    assert.equal(isWatchQuery(['true', 'true']), false);
    assert.equal(isWatchQuery(undefined), false);
  });
});
