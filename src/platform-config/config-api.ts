import {
  ANONYMOUS,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  schemaRef,
  type ApiDescription,
} from '../http/openapi-components.ts';
import { configPrefix } from './config-routes.ts';

const noStore = { 'Cache-Control': { schema: { const: 'no-store' } } };
const nanoseconds = (description: string) => ({ type: 'integer', minimum: 0, description });

/** The public configuration endpoints, in the original's shapes. */
export function configApi(ctx: { platformName: string }): ApiDescription {
  const prefix = configPrefix(ctx.platformName);
  const operation = (operationId: string, summary: string, body: Parameters<typeof jsonResponse>[1]) => ({
    get: {
      operationId,
      tags: ['config'],
      summary,
      security: ANONYMOUS,
      responses: { '200': jsonResponse('The answer.', body, noStore), default: DEFAULT_STATUS_RESPONSE },
    },
  });
  return {
    tags: [
      {
        name: 'config',
        description: 'What a console may know before login; anonymous, a token sent is not looked at.',
      },
    ],
    schemas: {
      FeatureFlags: {
        type: 'object',
        description:
          "The original's component names, each true exactly when this server serves it (`kubernetes`, `authentication`, `authorization`; `logging` once a log store is configured).",
        required: ['kubernetes', 'authentication', 'authorization', 'logging', 'multicluster', 'monitoring'],
        additionalProperties: { type: 'boolean' },
      },
      PublicOAuthOptions: {
        type: 'object',
        description:
          'No secrets and no client ids: a fixed list of fields, never a copy of the configuration.',
        required: ['issuer', 'identityProviders', 'accessTokenMaxAge', 'accessTokenInactivityTimeout'],
        additionalProperties: false,
        properties: {
          issuer: { type: 'string' },
          identityProviders: {
            type: 'array',
            maxItems: 0,
            description: 'External identity providers: none (password login only).',
          },
          accessTokenMaxAge: nanoseconds('Access token lifetime in nanoseconds (Go duration encoding).'),
          accessTokenInactivityTimeout: nanoseconds(
            'How much longer a refresh token lives than an access token, in nanoseconds.',
          ),
        },
      },
    },
    paths: {
      [`${prefix}/configz`]: operation(
        'getConfigz',
        'Which of the original’s components this server serves (feature name → boolean)',
        schemaRef('FeatureFlags'),
      ),
      [`${prefix}/oauth`]: operation(
        'getOAuthConfig',
        'The identity providers a browser may use, in the original’s shape; never a secret',
        schemaRef('PublicOAuthOptions'),
      ),
      [`${prefix}/gpu/kinds`]: operation('getGpuKinds', 'GPU resource kinds: none configured', {
        type: 'array',
        maxItems: 0,
      }),
    },
  };
}
