import { STATUS_REASONS } from './status.ts';

/**
 * Shared pieces of the OpenAPI document: schemas, headers, security schemes and small builders that
 * the per-route-group modules (health-api.ts, oauth-api.ts, …) use to describe their operations.
 * The types cover the part of OpenAPI 3.1 this document uses; schemas are JSON Schema 2020-12.
 */

export type Schema = { [keyword: string]: unknown };
export interface Reference {
  $ref: string;
}
export interface Header {
  description?: string;
  required?: boolean;
  schema: Schema;
}
export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  description?: string;
  required?: boolean;
  allowEmptyValue?: boolean;
  schema: Schema;
  examples?: Record<string, { summary?: string; value: unknown }>;
}
export interface Response {
  description: string;
  headers?: Record<string, Header | Reference>;
  content?: Record<string, { schema: Schema | Reference }>;
}
/** Empty object: anonymous allowed (as an alternative); `{bearer: []}`: that scheme. */
export type SecurityRequirement = Record<string, string[]>;
export interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  security: SecurityRequirement[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema | Reference }> };
  responses: Record<string, Response>;
}
export type PathItem = Partial<
  Record<'get' | 'put' | 'post' | 'delete' | 'patch' | 'head' | 'options', Operation>
>;
export type Paths = Record<string, PathItem>;
export interface Tag {
  name: string;
  description?: string;
}
export interface SecurityScheme {
  type: 'http';
  scheme: 'bearer' | 'basic';
  bearerFormat?: string;
  description?: string;
}

/** What a route group's description may depend on. */
export interface ApiContext {
  /** Lowercase platform name: forms the API group domain resources.<name>.io. */
  platformName: string;
  /** Version of this server (package.json). */
  version: string;
}

/** One route group's part of the document: its paths and any schemas of its own. */
export interface ApiDescription {
  paths: Paths;
  schemas?: Record<string, Schema>;
  tags?: Tag[];
}

export function schemaRef(name: string): Reference {
  return { $ref: `#/components/schemas/${name}` };
}

const requestIdHeader = { $ref: '#/components/headers/X-Request-Id' };

/** Every response carries X-Request-Id (the caller's when plain and short, else a generated one). */
/** The v1alpha3 list envelope of the original's paged lists: a page of items and the count before paging. */
export function listEnvelope(itemSchemaName: string): Schema {
  return {
    type: 'object',
    required: ['items', 'totalItems'],
    properties: {
      items: { type: 'array', items: schemaRef(itemSchemaName) },
      totalItems: { type: 'integer', minimum: 0, description: 'Count after filtering, before paging.' },
    },
  };
}

export function response(description: string, extra: Omit<Response, 'description'> = {}): Response {
  return { description, ...extra, headers: { 'X-Request-Id': requestIdHeader, ...extra.headers } };
}

export function jsonResponse(
  description: string,
  schema: Schema | Reference,
  headers: Response['headers'] = {},
): Response {
  return response(description, { headers, content: { 'application/json': { schema } } });
}

export function textResponse(description: string, schema: Schema = { type: 'string' }): Response {
  return response(description, { content: { 'text/plain': { schema } } });
}

/** A Kubernetes `Status` error body, as every error on a non-/oauth path is answered. */
export function statusResponse(description: string, headers: Response['headers'] = {}): Response {
  return jsonResponse(description, schemaRef('Status'), headers);
}

/** An RFC 6749 §5.2 error body, as every error under /oauth/ is answered. */
export function oauthErrorResponse(description: string, headers: Response['headers'] = {}): Response {
  return jsonResponse(description, schemaRef('OAuthError'), headers);
}

/** Any error not listed for an operation: the one error mapper answers a Status (500 for unexpected ones). */
export const DEFAULT_STATUS_RESPONSE = statusResponse('Error, as a Kubernetes Status object.');

export const SCHEMAS: Record<string, Schema> = {
  Status: {
    type: 'object',
    description:
      'Kubernetes Status object: the error body of every path outside /oauth/ (as the kube-apiserver answers).',
    required: ['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'code'],
    properties: {
      kind: { const: 'Status' },
      apiVersion: { const: 'v1' },
      metadata: { type: 'object' },
      status: { const: 'Failure' },
      message: { type: 'string', description: 'Human-readable; names the bad parameter for 400s.' },
      reason: { type: 'string', enum: [...STATUS_REASONS] },
      code: { type: 'integer', minimum: 400, maximum: 599 },
      details: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          group: { type: 'string' },
          kind: { type: 'string' },
          causes: {
            type: 'array',
            items: {
              type: 'object',
              required: ['message'],
              properties: {
                reason: { type: 'string' },
                message: { type: 'string' },
                field: { type: 'string' },
              },
            },
          },
        },
      },
    },
    additionalProperties: false,
  },
  OAuthError: {
    type: 'object',
    description: 'RFC 6749 §5.2 error response: the error body of every path under /oauth/.',
    required: ['error'],
    properties: {
      error: {
        type: 'string',
        enum: [
          'invalid_request',
          'invalid_client',
          'invalid_grant',
          'unauthorized_client',
          'unsupported_grant_type',
          'invalid_scope',
          'unsupported_token_type',
          'invalid_token',
          'server_error',
          'temporarily_unavailable',
        ],
      },
      error_description: { type: 'string' },
    },
    additionalProperties: false,
  },
};

export const HEADERS: Record<string, Header> = {
  'X-Request-Id': {
    description:
      'Request id, also in every log line of the request: the caller’s X-Request-Id when it is 1–64 characters of [A-Za-z0-9._:-], else a generated UUID.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,64}$' },
  },
};

export const SECURITY_SCHEMES: Record<string, SecurityScheme> = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Access token from POST /oauth/token.',
  },
  clientBasic: {
    type: 'http',
    scheme: 'basic',
    description: 'OAuth client authentication (client_id:client_secret), RFC 6749 §2.3.1.',
  },
};

/** Operation-level security of anonymous routes. */
export const ANONYMOUS: SecurityRequirement[] = [];
/** Operation-level security of routes behind bearer authentication. */
export const BEARER: SecurityRequirement[] = [{ bearer: [] }];
