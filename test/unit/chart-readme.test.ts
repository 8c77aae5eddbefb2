import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';

const chart = new URL('../../charts/platform-apiserver/', import.meta.url);
const values = parseYaml(readFileSync(new URL('values.yaml', chart), 'utf8')) as Record<string, unknown>;
const readme = readFileSync(new URL('README.md', chart), 'utf8');

/** Dotted paths of every value, down to scalars, lists and empty maps. */
function leafPaths(node: unknown, prefix = ''): string[] {
  if (typeof node !== 'object' || node === null || Array.isArray(node) || Object.keys(node).length === 0) {
    return [prefix];
  }
  return Object.entries(node).flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k));
}

function lookup(path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], values);
}

test("the chart README's values table covers every value, and names only real ones", () => {
  const section = readme.slice(readme.indexOf('## Values'));
  const documented = [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
  assert.ok(documented.length > 20, 'the table was found');
  const unknown = documented.filter((key) => lookup(key) === undefined);
  assert.deepEqual(unknown, [], 'documented keys missing from values.yaml');
  const undocumented = leafPaths(values).filter(
    (path) => !documented.some((key) => path === key || path.startsWith(`${key}.`)),
  );
  assert.deepEqual(undocumented, [], 'values missing from the table in charts/platform-apiserver/README.md');
});
