import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { generatedFiles } from '../../scripts/generate.ts';
import { CONFIG_KEYS } from '../../src/config/config.ts';
import { configKeys } from '../../src/config/keys.ts';
import { chartConfigSchema } from '../../src/config/render.ts';
import { ConfigSchema } from '../../src/config/schema.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(new URL(file, new URL('../../', import.meta.url)), 'utf8');

describe('files generated from the configuration schema', () => {
  test('are up to date (run npm run generate)', async () => {
    const files = await generatedFiles(root);
    assert.deepEqual(
      files.map((f) => f.path),
      ['charts/platform-apiserver/values.schema.json', 'docs/configuration.md'],
    );
    for (const f of files) assert.equal(f.current, f.wanted, `${f.path} is stale: run npm run generate`);
  });

  test('docs/configuration.md documents every configuration key', () => {
    const doc = read('docs/configuration.md');
    const missing = CONFIG_KEYS.filter((key) => !doc.includes(`| \`${key}\` |`));
    assert.deepEqual(missing, [], 'add a description to these keys in src/config/schema.ts');
    assert.ok(CONFIG_KEYS.length >= 45, `every key was found (${CONFIG_KEYS.length})`);
    const undescribed = configKeys(ConfigSchema).filter((k) => k.keywords.description.trim() === '');
    assert.deepEqual(undescribed, []);
  });

  test("the chart's config schema is closed at every level and requires nothing", () => {
    const open: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
      const record = new Map(Object.entries(node));
      if (record.get('type') === 'object' && record.get('additionalProperties') !== false) open.push(where);
      if (record.has('required')) open.push(`${where} (required)`);
      const properties = record.get('properties');
      if (typeof properties === 'object' && properties !== null) {
        for (const [name, child] of Object.entries(properties)) walk(child, `${where}.${name}`);
      }
    };
    walk(chartConfigSchema(), 'config');
    assert.deepEqual(open, []);
  });
});

describe("the chart's values against its schema", () => {
  const schema: unknown = JSON.parse(read('charts/platform-apiserver/values.schema.json'));
  assert.ok(typeof schema === 'object' && schema !== null);
  const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
  const values = (file: string): unknown => parseYaml(read(file));

  test('values.yaml, the CI values and the plain manifests’ values are valid', () => {
    for (const file of [
      'charts/platform-apiserver/values.yaml',
      'charts/platform-apiserver/ci/all-features-values.yaml',
      'deploy/manifests-values.yaml',
    ]) {
      assert.ok(validate(values(file)), `${file}: ${JSON.stringify(validate.errors)}`);
    }
  });

  test('an unknown or misspelt key under config is rejected, at any depth', () => {
    for (const config of [
      { platfromName: 'x' },
      { http: { prot: 1 } },
      { auth: { lockout: { maxTries: 3 } } },
    ]) {
      assert.equal(validate({ config }), false, JSON.stringify(config));
      assert.match(JSON.stringify(validate.errors), /additionalProperties/);
    }
  });

  test('every config value in values.yaml is the key’s default in the schema', () => {
    const chartValues = values('charts/platform-apiserver/values.yaml');
    assert.ok(typeof chartValues === 'object' && chartValues !== null && 'config' in chartValues);
    const defaults = new Map(configKeys(ConfigSchema).map((k) => [k.key, k.keywords.default]));
    const leaves = (node: unknown, prefix: string): [string, unknown][] =>
      typeof node === 'object' && node !== null && !Array.isArray(node)
        ? Object.entries(node).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k))
        : [[prefix, node]];
    const given = leaves(chartValues.config, '');
    assert.ok(given.length >= 5, 'values.yaml sets config values');
    for (const [key, value] of given) {
      assert.ok(defaults.has(key), `config.${key} is not a configuration key`);
      assert.deepEqual(value, defaults.get(key), `config.${key} in values.yaml differs from its default`);
    }
  });
});
