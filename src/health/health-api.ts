import { ANONYMOUS, textResponse, type ApiDescription, type Operation } from '../http/openapi-components.ts';

/** Probes: anonymous, plain text bodies in the kube-apiserver's style. */
export function healthApi(): ApiDescription {
  const alive = (operationId: string, summary: string): Operation => ({
    operationId,
    tags: ['health'],
    summary,
    security: ANONYMOUS,
    responses: { '200': textResponse('Alive.', { const: 'ok' }) },
  });
  return {
    tags: [{ name: 'health', description: 'Probes, metrics and this document; anonymous.' }],
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
    },
  };
}
