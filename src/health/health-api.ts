import {
  ANONYMOUS,
  jsonResponse,
  textResponse,
  type ApiDescription,
  type Operation,
} from '../http/openapi-components.ts';

/** Probes and version: anonymous, plain text bodies in the kube-apiserver's style. */
export function healthApi(): ApiDescription {
  const alive = (operationId: string, summary: string): Operation => ({
    operationId,
    tags: ['health'],
    summary,
    security: ANONYMOUS,
    responses: { '200': textResponse('Alive.', { const: 'ok' }) },
  });
  return {
    tags: [{ name: 'health', description: 'Probes, version, metrics and this document; anonymous.' }],
    paths: {
      '/healthz': { get: alive('getHealthz', 'Process health probe') },
      '/livez': { get: alive('getLivez', 'Process liveness probe') },
      '/readyz': {
        get: {
          operationId: 'getReadyz',
          tags: ['health'],
          summary:
            'Readiness: every check passes (caches synced, kube-apiserver reached) and not shutting down',
          security: ANONYMOUS,
          parameters: [
            {
              name: 'verbose',
              in: 'query',
              description: 'Present (any value): list each check as `[+]name ok` / `[-]name failed`.',
              schema: { type: 'string' },
              allowEmptyValue: true,
            },
          ],
          responses: {
            '200': textResponse('Ready: `ok`, or the check list ending in `readyz check passed`.'),
            '503': textResponse('Not ready: `not ready`, or the check list ending in `readyz check failed`.'),
          },
        },
      },
      '/version': {
        get: {
          operationId: 'getVersion',
          tags: ['health'],
          summary: 'Version of this server',
          security: ANONYMOUS,
          responses: {
            '200': jsonResponse('Versions.', {
              type: 'object',
              required: ['platform', 'version', 'node'],
              properties: {
                platform: { type: 'string', description: 'Configured platform name.' },
                version: { type: 'string', description: 'Version of platform-apiserver.' },
                node: { type: 'string', description: 'Node.js version running it.', pattern: '^v\\d+\\.' },
              },
              additionalProperties: false,
            }),
          },
        },
      },
    },
  };
}
