import {
  HEADERS,
  SCHEMAS,
  SECURITY_SCHEMES,
  type ApiContext,
  type ApiDescription,
  type Header,
  type Paths,
  type Schema,
  type SecurityScheme,
  type Tag,
} from './openapi-components.ts';

export interface OpenApiDocument {
  openapi: string;
  info: {
    title: string;
    version: string;
    summary?: string;
    description?: string;
    license?: { name: string; identifier?: string };
  };
  servers: { url: string }[];
  tags: Tag[];
  paths: Paths;
  components: {
    schemas: Record<string, Schema>;
    headers: Record<string, Header>;
    securitySchemes: Record<string, SecurityScheme>;
  };
}

/**
 * The OpenAPI 3.1 document of the routes this process serves. main.ts passes the description of each
 * route group it mounts, so the document lists exactly what is wired. Throws when two groups claim
 * the same path or schema (a wiring bug).
 */
export function openApiDocument(ctx: ApiContext, groups: readonly ApiDescription[]): OpenApiDocument {
  const paths: Paths = {};
  const schemas: Record<string, Schema> = { ...SCHEMAS };
  const tags: Tag[] = [];
  for (const group of groups) {
    for (const [path, item] of Object.entries(group.paths)) {
      if (paths[path]) throw new Error(`OpenAPI: path ${path} described twice`);
      paths[path] = item;
    }
    for (const [name, schema] of Object.entries(group.schemas ?? {})) {
      if (schemas[name]) throw new Error(`OpenAPI: schema ${name} described twice`);
      schemas[name] = schema;
    }
    for (const tag of group.tags ?? []) if (!tags.some((t) => t.name === tag.name)) tags.push(tag);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'platform-apiserver',
      version: ctx.version,
      summary: `API server of the ${ctx.platformName} container platform`,
      description:
        'OAuth 2.0 tokens, cached resource APIs and an impersonating Kubernetes API proxy. Errors are Kubernetes `Status` objects, except under /oauth/ where they are RFC 6749 JSON.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/' }],
    tags,
    paths,
    components: {
      schemas,
      headers: HEADERS,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
