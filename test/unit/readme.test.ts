import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
};

test("the README's two quick-start commands exist and go through the bootstrap script", () => {
  const quickStart = readme.slice(readme.indexOf('## Quick start'));
  assert.match(quickStart, /^npm run demo\b/m);
  assert.match(quickStart, /^npm test\b/m);
  assert.equal(pkg.scripts['demo'], 'bash scripts/run.sh demo');
  assert.equal(pkg.scripts['test'], 'bash scripts/run.sh test');
});
