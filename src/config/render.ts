import Type, { type TObject, type TSchema } from 'typebox';
import { configKeys, keywordsOf } from './keys.ts';
import { ConfigSchema } from './schema.ts';

/*
 * What the configuration schema is rendered into outside the code: the `config` section of the chart's
 * values.schema.json and the table of docs/configuration.md. scripts/generate.ts writes both;
 * test/unit/generated-files.test.ts fails when either is stale.
 */

/** A JSON value as written into values.schema.json. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/**
 * The JSON Schema of the chart's `config` value: every key with its type, bounds, default and
 * description, and `additionalProperties: false` at every level, so helm rejects a misspelt key.
 * Nothing is required (the chart fills in what it owns; the server has a default for the rest).
 */
export function chartConfigSchema(): Json {
  const section = renderObject(ConfigSchema);
  return {
    ...section,
    description:
      'Server configuration (generated from src/config/schema.ts by npm run generate; every key is described in docs/configuration.md). Unknown keys are rejected.',
  };
}

function renderObject(schema: TObject): { [key: string]: Json } {
  const properties: { [key: string]: Json } = {};
  for (const [name, child] of Object.entries(schema.properties)) properties[name] = render(child);
  return {
    type: 'object',
    description: keywordsOf(schema).description,
    properties,
    additionalProperties: false,
  };
}

function render(schema: TSchema): Json {
  if (Type.IsObject(schema)) return renderObject(schema);
  const k = keywordsOf(schema);
  const out: { [key: string]: Json } = {};
  if (Type.IsInteger(schema)) out['type'] = 'integer';
  else if (Type.IsBoolean(schema)) out['type'] = 'boolean';
  else if (Type.IsEnum(schema)) Object.assign(out, { type: 'string', enum: schema.enum });
  else if (Type.IsArray(schema)) Object.assign(out, { type: 'array', items: render(schema.items) });
  else if (Type.IsString(schema)) out['type'] = 'string';
  else throw new Error('the chart schema has no rendering for this kind of key');
  if (k.description) out['description'] = plainText(k.description);
  if (isJson(k.default)) out['default'] = k.default;
  if (k.minimum !== undefined) out['minimum'] = k.minimum;
  if (k.maximum !== undefined) out['maximum'] = k.maximum;
  if (k.minLength !== undefined) out['minLength'] = k.minLength;
  // helm prints a value that does not match its pattern: a secret gets no pattern (the server checks it).
  if (k.pattern !== undefined && !k.writeOnly) out['pattern'] = k.pattern;
  if (k.writeOnly) out['writeOnly'] = true;
  return out;
}

/** Markdown links become their text: the chart's schema is read where relative links lead nowhere. */
function plainText(markdown: string): string {
  return markdown.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
}

function isJson(value: unknown): value is Json {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return true;
  if (Array.isArray(value)) return value.every(isJson);
  return typeof value === 'object' && Object.values(value).every(isJson);
}

/** The Markdown table of every key: name, default, meaning. */
export function configurationTable(): string {
  const rows = configKeys(ConfigSchema).map(({ key, keywords }) => {
    const shown = keywords.docDefault ?? shownDefault(keywords.default);
    return `| \`${key}\` | ${shown} | ${keywords.description.replaceAll('|', '\\|')} |`;
  });
  return ['| key | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

function shownDefault(value: unknown): string {
  if (value === '' || (Array.isArray(value) && value.length === 0)) return '*(empty)*';
  if (Array.isArray(value)) return value.map((item) => `\`${String(item)}\``).join(', ');
  return `\`${String(value)}\``;
}
