import Type, { type TObject, type TSchema } from 'typebox';

/** One configuration key: its dotted name (also its flag), its schema and the keywords read from it. */
export interface ConfigKey {
  key: string;
  schema: TSchema;
  keywords: Keywords;
}

/** The keywords of a key's schema that the parser, the docs and the chart's schema use. */
export interface Keywords {
  default: unknown;
  description: string;
  docDefault?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
  patternHint?: string;
  /** JSON Schema's `writeOnly`: a secret, never echoed. */
  writeOnly: boolean;
}

/** The keys under an object schema, depth first in declaration order; nested objects are groups, not keys. */
export function configKeys(schema: TObject, prefix = ''): ConfigKey[] {
  return Object.entries(schema.properties).flatMap(([name, child]) => {
    const key = prefix ? `${prefix}.${name}` : name;
    return Type.IsObject(child)
      ? configKeys(child, key)
      : [{ key, schema: child, keywords: keywordsOf(child) }];
  });
}

/** Environment variable for a key: http.shutdownGraceSeconds → PLATFORM_HTTP_SHUTDOWN_GRACE_SECONDS. */
export function envNameFor(key: string): string {
  return (
    'PLATFORM_' +
    key
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .replace(/\./g, '_')
      .toUpperCase()
  );
}

export function keywordsOf(schema: TSchema): Keywords {
  // A schema is a plain JSON object: its own enumerable properties are its keywords.
  const all = new Map<string, unknown>(Object.entries(schema));
  const number = (name: string) => {
    const v = all.get(name);
    return typeof v === 'number' ? v : undefined;
  };
  const string = (name: string) => {
    const v = all.get(name);
    return typeof v === 'string' ? v : undefined;
  };
  return {
    default: all.get('default'),
    description: string('description') ?? '',
    docDefault: string('docDefault'),
    minimum: number('minimum'),
    maximum: number('maximum'),
    minLength: number('minLength'),
    pattern: string('pattern'),
    patternHint: string('patternHint'),
    writeOnly: all.get('writeOnly') === true,
  };
}
