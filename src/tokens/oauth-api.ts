import {
  ANONYMOUS,
  jsonResponse,
  oauthErrorResponse,
  schemaRef,
  type ApiDescription,
  type Operation,
  type Response,
  type Schema,
  type SecurityRequirement,
} from '../http/openapi-components.ts';

const noStore = {
  'Cache-Control': { description: 'Always `no-store`.', schema: { const: 'no-store' } },
};
const cachable = {
  'Cache-Control': { description: 'Public, a few minutes.', schema: { type: 'string', pattern: '^public' } },
};
/** Discovery: public only when built from `auth.publicUrl`; built from the Host header it must not be shared. */
const discoveryCaching = {
  'Cache-Control': {
    description:
      '`public, max-age=300` with `auth.publicUrl` set; otherwise (built from the Host header) `private, no-store`.',
    schema: { enum: ['public, max-age=300', 'private, no-store'] },
  },
  Vary: {
    description: '`Host` when the document is built from the Host header.',
    schema: { type: 'string' },
  },
};
const challenge = (pattern: string) => ({
  'WWW-Authenticate': { description: 'The authentication challenge.', schema: { type: 'string', pattern } },
});

/** Errors every form endpoint (token, revoke) can answer, besides its own. */
const formErrors: Record<string, Response> = {
  '401': oauthErrorResponse(
    '`invalid_client`: client authentication failed; with `WWW-Authenticate` when HTTP Basic was used.',
    challenge('^Basic'),
  ),
  '413': oauthErrorResponse('`invalid_request`: body over 16 KiB.'),
  '415': oauthErrorResponse('`invalid_request`: not `application/x-www-form-urlencoded` in UTF-8.', {
    Accept: { schema: { const: 'application/x-www-form-urlencoded' } },
  }),
  '429': oauthErrorResponse(
    'Too many requests from this address (`invalid_request`), or the user is locked after failed logins (`invalid_grant`).',
    { 'Retry-After': { description: 'Seconds.', schema: { type: 'string', pattern: '^\\d+$' } } },
  ),
  default: oauthErrorResponse('`server_error`.'),
};

const formBody = (schema: string): Operation['requestBody'] => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema: schemaRef(schema) } },
});

/** Client credentials in the form (client_secret_post) or by HTTP Basic (client_secret_basic), not both. */
const CLIENT_AUTH: SecurityRequirement[] = [{}, { clientBasic: [] }];

const discovery = (operationId: string, summary: string): Operation => ({
  operationId,
  tags: ['oauth'],
  summary,
  security: ANONYMOUS,
  responses: {
    '200': jsonResponse('Server metadata.', schemaRef('AuthorizationServerMetadata'), discoveryCaching),
  },
});

/** An empty form field counts as absent (RFC 6749 §3.1), so a present one is at least one character. */
const PRESENT = { minLength: 1 } as const;

const clientFields: Record<string, Schema> = {
  client_id: { type: 'string', ...PRESENT, description: 'With client_secret, unless HTTP Basic is used.' },
  client_secret: { type: 'string', ...PRESENT, format: 'password' },
};

/**
 * /oauth/*: OAuth 2.0 token service (RFC 6749 password and refresh_token grants, RFC 7009 revocation),
 * logout, userinfo, JWKS and the discovery documents. Errors are RFC 6749 §5.2 JSON.
 */
export function oauthApi(): ApiDescription {
  return {
    tags: [{ name: 'oauth', description: 'OAuth 2.0 token service; errors are RFC 6749 JSON.' }],
    schemas: {
      TokenRequest: {
        type: 'object',
        description:
          'Form fields; a repeated field or one that is not valid UTF-8 is `invalid_request`, an empty one counts as absent.',
        required: ['grant_type'],
        properties: {
          grant_type: { type: 'string', enum: ['password', 'refresh_token'] },
          username: { type: 'string', ...PRESENT, description: 'password grant: user name or email' },
          password: { type: 'string', ...PRESENT, format: 'password', description: 'password grant' },
          refresh_token: { type: 'string', ...PRESENT, description: 'refresh_token grant' },
          ...clientFields,
        },
        // What each grant requires; a missing one is `invalid_request` naming it.
        allOf: [
          {
            if: { properties: { grant_type: { const: 'password' } }, required: ['grant_type'] },
            then: { required: ['username', 'password'] },
          },
          {
            if: { properties: { grant_type: { const: 'refresh_token' } }, required: ['grant_type'] },
            then: { required: ['refresh_token'] },
          },
        ],
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
      RevokeRequest: {
        type: 'object',
        required: ['token'],
        properties: {
          token: {
            type: 'string',
            ...PRESENT,
            description: 'An access or refresh token; its whole session ends.',
          },
          token_type_hint: {
            type: 'string',
            description:
              '`access_token` or `refresh_token` (RFC 7009): which kind is looked up first; any other value is ignored.',
            examples: ['access_token', 'refresh_token'],
          },
          ...clientFields,
        },
      },
      Jwks: {
        type: 'object',
        required: ['keys'],
        properties: {
          keys: {
            type: 'array',
            items: {
              type: 'object',
              required: ['kty', 'kid'],
              properties: {
                kty: { type: 'string', enum: ['EC', 'RSA'] },
                kid: { type: 'string' },
                alg: { type: 'string' },
                use: { const: 'sig' },
              },
              not: { anyOf: [{ required: ['d'] }, { required: ['p'] }, { required: ['k'] }] },
            },
          },
        },
      },
      AuthorizationServerMetadata: {
        type: 'object',
        description: 'RFC 8414 / OpenID Connect discovery metadata.',
        required: ['issuer', 'token_endpoint', 'jwks_uri', 'grant_types_supported'],
        properties: {
          issuer: { type: 'string' },
          token_endpoint: { type: 'string', format: 'uri' },
          revocation_endpoint: { type: 'string', format: 'uri' },
          jwks_uri: { type: 'string', format: 'uri' },
          grant_types_supported: { type: 'array', items: { type: 'string' } },
          token_endpoint_auth_methods_supported: { type: 'array', items: { type: 'string' } },
        },
      },
      UserInfo: {
        type: 'object',
        required: ['sub', 'username', 'groups'],
        properties: {
          sub: { type: 'string' },
          username: { type: 'string' },
          groups: { type: 'array', items: { type: 'string' } },
        },
      },
    },
    paths: {
      '/oauth/token': {
        post: {
          operationId: 'issueToken',
          tags: ['oauth'],
          summary: 'Issue an access and refresh token (password or refresh_token grant)',
          security: CLIENT_AUTH,
          requestBody: formBody('TokenRequest'),
          responses: {
            '200': jsonResponse('Tokens.', schemaRef('TokenResponse'), noStore),
            '400': oauthErrorResponse(
              '`invalid_request` (missing, repeated or malformed field), `invalid_grant` (wrong credentials, unknown or disabled user, bad refresh token: one message), `unsupported_grant_type` (a `grant_type` other than `password` and `refresh_token`, or none, as the original answers).',
            ),
            ...formErrors,
          },
        },
      },
      '/oauth/revoke': {
        post: {
          operationId: 'revokeToken',
          tags: ['oauth'],
          summary: 'RFC 7009: end the session of an access or refresh token',
          security: CLIENT_AUTH,
          requestBody: formBody('RevokeRequest'),
          responses: {
            '200': jsonResponse('Revoked (also for unknown or invalid tokens, RFC 7009 §2.2).', {
              type: 'object',
              maxProperties: 0,
            }),
            '400': oauthErrorResponse(
              '`invalid_request`, or `unauthorized_client` for a token of another client.',
            ),
            ...formErrors,
          },
        },
      },
      '/oauth/logout': {
        post: {
          operationId: 'logout',
          tags: ['oauth'],
          summary: 'End the session of the access token sent as `Authorization: Bearer` (expired ones too)',
          security: [{ bearer: [] }],
          responses: {
            '200': jsonResponse(
              'Session ended.',
              { type: 'object', required: ['message'], properties: { message: { const: 'success' } } },
              noStore,
            ),
            '401': oauthErrorResponse('`invalid_token`.', challenge('^Bearer')),
            default: oauthErrorResponse('`server_error`.'),
          },
        },
        get: {
          operationId: 'logoutGet',
          tags: ['oauth'],
          summary:
            'As POST, the way the original’s console calls it: end the session of the access token sent as `Authorization: Bearer` (expired ones too)',
          security: [{ bearer: [] }],
          responses: {
            '200': jsonResponse(
              'Session ended.',
              { type: 'object', required: ['message'], properties: { message: { const: 'success' } } },
              noStore,
            ),
            '401': oauthErrorResponse('`invalid_token`.', challenge('^Bearer')),
            default: oauthErrorResponse('`server_error`.'),
          },
        },
      },
      '/oauth/userinfo': {
        get: {
          operationId: 'getUserInfo',
          tags: ['oauth'],
          summary: 'Who the bearer token belongs to, as the APIs behind authentication see it',
          security: [{ bearer: [] }],
          responses: {
            '200': jsonResponse('The caller.', schemaRef('UserInfo'), noStore),
            '401': oauthErrorResponse('`invalid_token`.', challenge('^Bearer')),
            default: oauthErrorResponse('`server_error`.'),
          },
        },
      },
      '/oauth/keys': {
        get: {
          operationId: 'getJwks',
          tags: ['oauth'],
          summary: 'Public keys that verify tokens (JWKS); empty with HS256',
          security: ANONYMOUS,
          responses: { '200': jsonResponse('Key set.', schemaRef('Jwks'), cachable) },
        },
      },
      '/.well-known/openid-configuration': {
        get: discovery('getOpenIdConfiguration', 'OpenID Connect style discovery document'),
      },
      '/.well-known/oauth-authorization-server': {
        get: discovery('getAuthorizationServerMetadata', 'RFC 8414 authorization server metadata'),
      },
      '/oauth/.well-known/openid-configuration': {
        get: discovery('getOAuthOpenIdConfiguration', 'The discovery document under /oauth/'),
      },
    },
  };
}
