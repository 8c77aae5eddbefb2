import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CONFIG_KEYS } from '../../src/config/config.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
};

test('the README documents every configuration key', () => {
  const missing = CONFIG_KEYS.filter((key) => !readme.includes(`| \`${key}\` |`));
  assert.deepEqual(missing, [], 'add these keys to the configuration table in README.md');
});

test("the README's two quick-start commands exist and go through the bootstrap script", () => {
  const quickStart = readme.slice(readme.indexOf('## Quick start'));
  assert.match(quickStart, /^npm run demo\b/m);
  assert.match(quickStart, /^npm test\b/m);
  assert.equal(pkg.scripts['demo'], 'bash scripts/run.sh demo');
  assert.equal(pkg.scripts['test'], 'bash scripts/run.sh test');
});
