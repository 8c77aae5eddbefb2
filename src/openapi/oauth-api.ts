import { jsonResponse, oauthErrorResponse, type ApiDescription } from './components.ts';

const noStore = {
  'Cache-Control': { description: 'Always `no-store`.', schema: { const: 'no-store' } },
};

/** POST /oauth/token: OAuth 2.0 password and refresh_token grants (RFC 6749). */
export function oauthTokenApi(): ApiDescription {
  return {
    tags: [{ name: 'oauth', description: 'OAuth 2.0 token service; errors are RFC 6749 JSON.' }],
    schemas: {
      TokenRequest: {
        type: 'object',
        description:
          'Form fields. The client authenticates with client_id + client_secret here or with HTTP Basic (RFC 6749 §2.3.1). A repeated field is invalid_request.',
        required: ['grant_type'],
        properties: {
          grant_type: { type: 'string', enum: ['password', 'refresh_token'] },
          username: { type: 'string', description: 'password grant' },
          password: { type: 'string', format: 'password', description: 'password grant' },
          refresh_token: { type: 'string', description: 'refresh_token grant' },
          client_id: { type: 'string' },
          client_secret: { type: 'string', format: 'password' },
        },
      },
      TokenResponse: {
        type: 'object',
        required: ['access_token', 'token_type', 'refresh_token', 'expires_in'],
        properties: {
          access_token: { type: 'string', description: 'JWT; send as `Authorization: Bearer <token>`.' },
          token_type: { const: 'Bearer' },
          refresh_token: {
            type: 'string',
            description: 'JWT; single use, rotated by the refresh_token grant.',
          },
          expires_in: { type: 'integer', minimum: 1, description: 'Access token lifetime in seconds.' },
        },
      },
    },
    paths: {
      '/oauth/token': {
        post: {
          operationId: 'issueToken',
          tags: ['oauth'],
          summary: 'Issue an access and refresh token (password or refresh_token grant)',
          // Client credentials in the form or by HTTP Basic: either is accepted.
          security: [{}, { clientBasic: [] }],
          requestBody: {
            required: true,
            content: {
              'application/x-www-form-urlencoded': {
                schema: { $ref: '#/components/schemas/TokenRequest' },
              },
            },
          },
          responses: {
            '200': jsonResponse('Tokens.', { $ref: '#/components/schemas/TokenResponse' }, noStore),
            '400': oauthErrorResponse(
              '`invalid_request` (missing or repeated field), `invalid_grant` (wrong credentials or refresh token: one message for all), `unsupported_grant_type`.',
            ),
            '401': oauthErrorResponse('`invalid_client`; with `WWW-Authenticate` when HTTP Basic was used.', {
              'WWW-Authenticate': { schema: { type: 'string' } },
            }),
            '413': oauthErrorResponse('`invalid_request`: body over 16 KiB.'),
            '415': oauthErrorResponse('`invalid_request`: not application/x-www-form-urlencoded.'),
            '429': oauthErrorResponse('Too many failed logins for this user or address; retry later.', {
              'Retry-After': { description: 'Seconds.', schema: { type: 'string', pattern: '^\\d+$' } },
            }),
            default: oauthErrorResponse('`server_error`.'),
          },
        },
      },
    },
  };
}
