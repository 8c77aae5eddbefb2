import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { STATUS_REASONS, statusFor } from '../../src/http/status.ts';
import type { ApiContext } from '../../src/http/openapi-components.ts';
import { openApiDocument } from '../../src/http/openapi-document.ts';
import { healthApi } from '../../src/health/health-api.ts';
import { kubeVersionApi } from '../../src/kube-proxy/kube-version-api.ts';
import { logsApi } from '../../src/log-query/logs-api.ts';
import { nodesApi } from '../../src/nodes/nodes-api.ts';
import { oauthApi } from '../../src/tokens/oauth-api.ts';
import { loginRecordsApi } from '../../src/iam/login-records-api.ts';
import { observabilityApi } from '../../src/health/observability-api.ts';
import { versionApi } from '../../src/build-info/version-api.ts';
import { configApi } from '../../src/platform-config/config-api.ts';
import { usersApi } from '../../src/iam/users-api.ts';
import { memberRolesApi } from '../../src/iam/member-roles-api.ts';
import { resourcesApi } from '../../src/resources/resources-api.ts';
import { overviewApi } from '../../src/resources/overview-api.ts';
import { BUILT_IN_KINDS } from '../../src/resources/kinds.ts';
import { tenantApi } from '../../src/tenant/tenant-api.ts';
import { monitoringApi } from '../../src/monitoring/monitoring-api.ts';
import {
  invalidSchemaObjects,
  OpenApiConformance,
  type ObservedResponse,
} from '../support/openapi-conformance.ts';

const ctx: ApiContext = { platformName: 'acme', version: '1.2.3' };
const allGroups = () => [
  healthApi(),
  observabilityApi(),
  oauthApi(),
  nodesApi(ctx),
  logsApi(ctx),
  kubeVersionApi(),
];
/** Every route group main.ts can mount, as the server serves them together. */
const everyGroup = () => [
  ...allGroups(),
  versionApi(),
  configApi(ctx),
  loginRecordsApi(ctx),
  usersApi(ctx),
  memberRolesApi(ctx),
  resourcesApi(
    ctx,
    BUILT_IN_KINDS.filter((k) => k.source !== 'nodes'),
  ),
  overviewApi(ctx),
  tenantApi(ctx),
  monitoringApi(ctx),
];

const status404 = JSON.stringify(statusFor(404, 'nodes "x" not found'));
const headers = (contentType: string, extra: Record<string, string> = {}) =>
  new Headers({ 'content-type': contentType, 'x-request-id': 'req-1', ...extra });
const json = (status: number, method: string, path: string, body: unknown, extra = {}): ObservedResponse => ({
  method,
  path,
  status,
  headers: headers('application/json; charset=utf-8', extra),
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
const nodesPath = '/kapis/resources.acme.io/v1alpha3/nodes';
const cached = { etag: 'W/"1"', 'cache-control': 'private, no-cache' };
const node = (overrides: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: 'n1',
    selfLink: '/api/v1/nodes/n1',
    uid: '4b0c5f7e-3c2a-4b8e-9d1f-0a1b2c3d4e5f',
    resourceVersion: '42',
    creationTimestamp: '2024-05-01T10:00:00Z',
    labels: { 'node-role.kubernetes.io/worker': '' },
    // Every served node carries the eight allocation annotations.
    annotations: Object.fromEntries(
      ['cpu', 'memory'].flatMap((r) =>
        ['requests', 'limits'].flatMap((side) => [
          [`node.acme.io/${r}-${side}`, '0'],
          [`node.acme.io/${r}-${side}-fraction`, '0%'],
        ]),
      ),
    ),
    ...overrides,
  },
  spec: {},
  status: {},
});

describe('OpenAPI document', () => {
  test('with every route group it is valid OpenAPI 3.1 (official schema, JSON Schema 2020-12 dialect)', async () => {
    const doc = openApiDocument(ctx, allGroups());
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1.2.3');
    await OpenApiConformance.create(doc);
    assert.ok(doc.paths[nodesPath], 'the group domain follows the platform name');
    assert.ok(doc.paths[`${nodesPath}/{name}`]);
  });

  test('with every route group the server mounts, every Schema Object is JSON Schema 2020-12', async () => {
    const doc = openApiDocument(ctx, everyGroup());
    assert.deepEqual(invalidSchemaObjects(doc), []);
    await OpenApiConformance.create(doc);
  });

  test('a Schema Object that is not JSON Schema 2020-12 is refused, wherever it sits', async () => {
    const doc = openApiDocument(ctx, [healthApi()]);
    const tuple = { type: 'array', items: [{ type: 'number' }, { type: 'string' }] };
    const inResponse = structuredClone(doc) as unknown as {
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
      components: { schemas: Record<string, unknown> };
    };
    inResponse.paths['/healthz']!.get.responses['200'] = {
      description: 'a draft-04 tuple',
      content: { 'application/json': { schema: { type: 'object', properties: { value: tuple } } } },
    };
    assert.match(
      invalidSchemaObjects(inResponse as unknown as typeof doc).join('\n'),
      /^#\/paths\/~?\/?.*healthz\/get\/responses\/200\/content\/application\/json\/schema\/properties\/value\/items: must be (object|boolean)/m,
    );
    await assert.rejects(
      OpenApiConformance.create(inResponse as unknown as typeof doc),
      /Schema Objects that are not JSON Schema 2020-12/,
    );
    const inComponents = structuredClone(doc) as unknown as typeof inResponse;
    inComponents.components.schemas['Tuple'] = tuple;
    assert.match(
      invalidSchemaObjects(inComponents as unknown as typeof doc).join('\n'),
      /^#\/components\/schemas\/Tuple\/items/m,
    );
  });

  test('the validator rejects a broken document (the check above is real)', async () => {
    const doc = openApiDocument(ctx, [healthApi()]);
    const broken = structuredClone(doc) as unknown as { paths: Record<string, Record<string, unknown>> };
    broken.paths['/healthz']!['get'] = { operationId: 'x', responses: 'none' };
    await assert.rejects(
      OpenApiConformance.create(broken as unknown as typeof doc),
      /the OpenAPI document is invalid/,
    );
  });

  test('operation ids are unique', () => {
    const ids = Object.values(openApiDocument(ctx, allGroups()).paths).flatMap((item) =>
      Object.values(item).map((op) => op.operationId),
    );
    assert.equal(new Set(ids).size, ids.length);
  });

  test('two groups describing one path is a wiring error', () => {
    assert.throws(() => openApiDocument(ctx, [healthApi(), healthApi()]), /path \/healthz described twice/);
  });

  test('the Status schema lists every reason the error mapper can produce', () => {
    for (let code = 400; code < 600; code++) {
      assert.ok(STATUS_REASONS.includes(statusFor(code, 'x').reason), `code ${code}`);
    }
  });

  test('the checker accepts conforming responses and names each departure', async () => {
    const kubeVersion = { major: '1', minor: '36', gitVersion: 'v1.36.3', platform: 'linux/amd64' };
    const check = await OpenApiConformance.create(openApiDocument(ctx, allGroups()));
    const ok: ObservedResponse[] = [
      {
        method: 'GET',
        path: '/healthz',
        status: 200,
        headers: headers('text/plain; charset=utf-8'),
        body: 'ok',
      },
      json(200, 'GET', '/version', kubeVersion),
      json(200, 'GET', nodesPath, { items: [node()], totalItems: 7 }, cached),
      json(404, 'GET', `${nodesPath}/x`, status404),
      {
        method: 'GET',
        path: `${nodesPath}/n1`,
        status: 304,
        headers: headers('', cached),
        body: '',
      },
      json(
        401,
        'POST',
        '/oauth/token',
        { error: 'invalid_client' },
        { 'www-authenticate': 'Basic realm="x"' },
      ),
      json(404, 'GET', '/no/such/thing', status404),
      json(405, 'DELETE', '/healthz', JSON.stringify(statusFor(405, 'use GET, HEAD')), {
        allow: 'GET, HEAD',
      }),
      json(405, 'GET', '/oauth/token', { error: 'invalid_request', error_description: 'use POST' }),
      json(401, 'GET', '/no/such/thing', JSON.stringify(statusFor(401, 'Unauthorized'))),
    ];
    for (const r of ok) assert.deepEqual(check.problems(r), [], `${r.method} ${r.path}`);

    const bad: [ObservedResponse, RegExp][] = [
      [json(200, 'GET', '/version', { platform: 'acme' }), /body must have required property 'gitVersion'/],
      [
        { method: 'GET', path: '/healthz', status: 200, headers: headers('text/plain'), body: 'fine' },
        /body must be equal to constant/,
      ],
      [
        { method: 'GET', path: '/healthz', status: 418, headers: headers('text/plain'), body: 'ok' },
        /status not documented for getHealthz/,
      ],
      [json(200, 'GET', '/healthz', '"ok"'), /content type application\/json not documented/],
      [
        json(200, 'GET', nodesPath, { items: [node({ managedFields: [] })], totalItems: 1 }, cached),
        /body\/items\/0\/metadata must NOT be valid/,
      ],
      [json(200, 'GET', nodesPath, { items: [] }, cached), /must have required property 'totalItems'/],
      [json(200, 'GET', nodesPath, { items: [], totalItems: 0 }), /required header ETag missing/],
      [
        json(400, 'POST', '/oauth/token', { error: 'bogus' }),
        /body\/error must be equal to one of the allowed values/,
      ],
      [
        json(404, 'GET', `${nodesPath}/x`, { message: 'not found' }),
        /body must have required property 'kind'/,
      ],
      [json(404, 'GET', '/nowhere', 'Not Found'), /body is not JSON/],
      [json(200, 'GET', '/nowhere', {}), /no operation in the document, and not a 401, 404 or 405/],
      [json(405, 'GET', '/oauth/token', status404), /body must have required property 'error'/],
      [json(200, 'GET', '/version', kubeVersion, { 'x-request-id': 'has space' }), /header X-Request-Id/],
    ];
    for (const [r, expected] of bad) {
      const problems = check.problems(r);
      assert.ok(
        problems.some((p) => expected.test(p)),
        `${r.method} ${r.path} ${r.status}: expected ${expected}, got ${JSON.stringify(problems)}`,
      );
    }
  });
});
