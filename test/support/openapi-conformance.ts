import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type {
  Header,
  Operation,
  Reference,
  Response as ResponseSpec,
} from '../../src/http/openapi-components.ts';
import type { OpenApiDocument } from '../../src/http/openapi-document.ts';

// ajv-formats is CommonJS: its plugin function is module.exports and module.exports.default.
const addFormats = addFormatsModule.default;

const DOCUMENT_ID = 'urn:platform-apiserver:openapi';

/** Where Schema Objects sit in an OpenAPI 3.1 document: under these keys, and as the values of `components.schemas`. */
const SCHEMA_KEYS = new Set(['schema']);
/** Values that are examples, not structure: their keys say nothing about schemas. */
const EXAMPLE_KEYS = new Set(['example', 'examples']);

/** Each Schema Object of the document that JSON Schema 2020-12's meta-schema rejects, with why. */
export function invalidSchemaObjects(document: OpenApiDocument): string[] {
  const metaSchema = new Ajv2020({ strict: false, allErrors: true });
  const problems: string[] = [];
  const check = (schema: unknown, where: string) => {
    if (metaSchema.validateSchema(schema as object)) return;
    for (const e of metaSchema.errors ?? []) problems.push(`${where}${e.instancePath}: ${e.message ?? ''}`);
  };
  const walk = (value: unknown, where: string) => {
    if (value === null || typeof value !== 'object') return;
    for (const [key, child] of Object.entries(value)) {
      const at = `${where}/${key}`;
      if (EXAMPLE_KEYS.has(key)) continue;
      // The meta-schema checks a Schema Object's subschemas itself: no need to walk into it.
      if (SCHEMA_KEYS.has(key) && !Array.isArray(value)) check(child, at);
      else walk(child, at);
    }
  };
  const { schemas, ...otherComponents } = (document.components ?? {}) as Record<string, unknown>;
  for (const [name, schema] of Object.entries((schemas ?? {}) as Record<string, unknown>)) {
    check(schema, `#/components/schemas/${name}`);
  }
  walk(otherComponents, '#/components');
  walk(document.paths, '#/paths');
  return problems;
}

/** A response as a client saw it. */
export interface ObservedResponse {
  method: string;
  /** Path without query string. */
  path: string;
  status: number;
  headers: Headers;
  body: string;
}

interface CompiledOperation {
  method: string;
  template: string;
  pattern: RegExp;
  operation: Operation;
}

const pointer = (...parts: string[]) =>
  `${DOCUMENT_ID}#/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

/**
 * Checks real responses against the server's OpenAPI 3.1 document. The document itself is validated
 * against the official OpenAPI 3.1 schema (@seriousme/openapi-schema-validator); bodies and headers
 * are validated with ajv's JSON Schema 2020-12 validator using the document's own schemas.
 */
export class OpenApiConformance {
  readonly document: OpenApiDocument;
  /** `operationId status` of every response checked so far. */
  readonly seen = new Set<string>();
  readonly #ajv: Ajv2020;
  readonly #operations: CompiledOperation[];

  private constructor(document: OpenApiDocument) {
    this.document = document;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.#ajv);
    this.#ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    this.#operations = Object.entries(document.paths)
      .flatMap(([template, item]) =>
        Object.entries(item).map(([method, operation]) => ({
          method: method.toUpperCase(),
          template,
          pattern: new RegExp(
            `^${template
              .split(/(\{[^}]+\})/)
              .map((part) => (part.startsWith('{') ? '([^/]+)' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
              .join('')}$`,
          ),
          operation: operation as Operation,
        })),
      )
      // Literal paths win over templated ones, as in OpenAPI path matching.
      .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  }

  /**
   * Validates the document (throws listing the errors) and prepares the checks. The official
   * OpenAPI 3.1 schema checks the document's structure but takes every Schema Object as any object
   * (its dialect is left to the tools), so each Schema Object is also checked against JSON Schema
   * 2020-12, the dialect OpenAPI 3.1 fixes: `items` written as a list of schemas (a draft-04 tuple)
   * passes the first check and fails this one.
   */
  static async create(document: OpenApiDocument): Promise<OpenApiConformance> {
    const result = await new Validator().validate(
      structuredClone(document) as unknown as Record<string, unknown>,
    );
    assert.ok(result.valid, `the OpenAPI document is invalid: ${JSON.stringify(result.errors, null, 2)}`);
    const schemaProblems = invalidSchemaObjects(document);
    assert.deepEqual(
      schemaProblems,
      [],
      `the OpenAPI document is invalid: Schema Objects that are not JSON Schema 2020-12:\n${schemaProblems.join('\n')}`,
    );
    return new OpenApiConformance(document);
  }

  /** Fetches the document a running server serves at /openapi/platform/v3. */
  static async fromServer(baseUrl: string): Promise<OpenApiConformance> {
    const res = await fetch(`${baseUrl}/openapi/platform/v3`);
    assert.equal(res.status, 200, 'GET /openapi/platform/v3');
    return OpenApiConformance.create((await res.json()) as OpenApiDocument);
  }

  /** The operation a request addresses, if the document describes one. */
  operationFor(method: string, path: string): CompiledOperation | undefined {
    return this.#operations.find((o) => o.method === method.toUpperCase() && o.pattern.test(path));
  }

  /** Everything in which a response departs from the document; empty when it conforms. */
  problems(r: ObservedResponse): string[] {
    const where = `${r.method} ${r.path} → ${r.status}`;
    const compiled = this.operationFor(r.method, r.path);
    if (!compiled) {
      // Paths and methods the document does not describe: 401 when authentication answers before
      // routing, else 404 (405 for another method of an OAuth endpoint), in the path's error shape.
      if (![401, 404, 405].includes(r.status)) {
        return [`${where}: no operation in the document, and not a 401, 404 or 405`];
      }
      const shape = r.path.startsWith('/oauth/') ? 'OAuthError' : 'Status';
      return this.#bodyProblems(where, r, 'application/json', pointer('components', 'schemas', shape));
    }
    const { operation } = compiled;
    const statusKey = [String(r.status), `${String(r.status)[0]}XX`, 'default'].find(
      (k) => operation.responses[k] !== undefined,
    );
    if (!statusKey) return [`${where}: status not documented for ${operation.operationId}`];
    this.seen.add(`${operation.operationId} ${r.status}`);
    const spec = operation.responses[statusKey] as ResponseSpec;
    const problems = this.#headerProblems(where, r, spec);
    const base = ['paths', compiled.template, compiled.method.toLowerCase(), 'responses', statusKey];
    if (!spec.content) {
      if (r.body !== '') problems.push(`${where}: documented without a body, got ${r.body.slice(0, 100)}`);
      return problems;
    }
    const mediaType = (r.headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (!(mediaType in spec.content)) {
      problems.push(
        `${where}: content type ${mediaType || '(none)'} not documented (${Object.keys(spec.content).join(', ')})`,
      );
      return problems;
    }
    return [
      ...problems,
      ...this.#bodyProblems(where, r, mediaType, pointer(...base, 'content', mediaType, 'schema')),
    ];
  }

  /** Asserts conformance of a fetch() response and returns its body text. */
  async assertConforms(method: string, res: globalThis.Response): Promise<string> {
    const body = await res.text();
    const { pathname } = new URL(res.url);
    const problems = this.problems({
      method,
      path: pathname,
      status: res.status,
      headers: res.headers,
      body,
    });
    assert.deepEqual(
      problems,
      [],
      `response does not conform to the OpenAPI document:\n${problems.join('\n')}`,
    );
    return body;
  }

  /** fetch() that asserts the response conforms; returns the response and its body text. */
  async fetch(url: string, init: RequestInit = {}): Promise<{ res: globalThis.Response; body: string }> {
    const res = await fetch(url, init);
    return { res, body: await this.assertConforms(init.method ?? 'GET', res) };
  }

  #validator(schemaPointer: string): ValidateFunction {
    const validate = this.#ajv.getSchema(schemaPointer);
    assert.ok(validate, `no schema at ${schemaPointer}`);
    return validate;
  }

  #bodyProblems(where: string, r: ObservedResponse, mediaType: string, schemaPointer: string): string[] {
    let value: unknown = r.body;
    if (mediaType.endsWith('json')) {
      try {
        value = JSON.parse(r.body);
      } catch {
        return [`${where}: body is not JSON: ${r.body.slice(0, 100)}`];
      }
    }
    const validate = this.#validator(schemaPointer);
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${where}: body${e.instancePath} ${e.message ?? ''}`);
  }

  #headerProblems(where: string, r: ObservedResponse, spec: ResponseSpec): string[] {
    const problems: string[] = [];
    for (const [name, headerOrRef] of Object.entries(spec.headers ?? {})) {
      const header = this.#resolveHeader(headerOrRef);
      const value = r.headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`${where}: required header ${name} missing`);
        continue;
      }
      // Header schemas are small and self-contained (no $ref); ajv caches what it compiles.
      const validate = this.#ajv.compile(header.schema);
      if (!validate(value)) {
        problems.push(
          `${where}: header ${name}: ${JSON.stringify(value)} ${validate.errors?.[0]?.message ?? ''}`,
        );
      }
    }
    return problems;
  }

  #resolveHeader(h: Header | Reference): Header {
    if (!('$ref' in h)) return h;
    const name = h.$ref.replace('#/components/headers/', '');
    const found = this.document.components.headers[name];
    assert.ok(found, `unresolved header ${h.$ref}`);
    return found;
  }
}
