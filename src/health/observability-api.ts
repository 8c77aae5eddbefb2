import { ANONYMOUS, jsonResponse, textResponse, type ApiDescription } from '../http/openapi-components.ts';

/** /metrics and this document itself. */
export function observabilityApi(): ApiDescription {
  return {
    paths: {
      '/metrics': {
        get: {
          operationId: 'getMetrics',
          tags: ['health'],
          summary: 'Prometheus metrics (text exposition format 0.0.4); the list is in the README',
          security: ANONYMOUS,
          responses: { '200': textResponse('Metrics.') },
        },
      },
      '/openapi/platform/v3': {
        get: {
          operationId: 'getOpenApiDocument',
          tags: ['health'],
          summary: 'This OpenAPI 3.1 document',
          security: ANONYMOUS,
          responses: {
            '200': jsonResponse('The document.', {
              type: 'object',
              required: ['openapi', 'info', 'paths'],
              properties: { openapi: { type: 'string', pattern: '^3\\.1\\.' } },
            }),
          },
        },
      },
    },
  };
}
