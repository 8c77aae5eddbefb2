import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const loggerTs = fileURLToPath(new URL('../../src/observability/logger.ts', import.meta.url));
const warningsTs = fileURLToPath(new URL('../../src/observability/process-warnings.ts', import.meta.url));

/**
 * A real Node process, so the listener replaced is Node's own: it logs through the server's JSON logger,
 * then makes the call http-proxy makes on the first proxied request (`util._extend`, DEP0060).
 */
function runWithWarning(nodeFlags: string[] = []) {
  const script = `
    import util from 'node:util';
    import { createLogger } from ${JSON.stringify(loggerTs)};
    import { logProcessWarnings } from ${JSON.stringify(warningsTs)};
    logProcessWarnings(createLogger({ level: 'info', stream: process.stdout }));
    util._extend({}, { a: 1 });
    util._extend({}, { b: 2 });
    process.emitWarning('a feature is experimental', { type: 'ExperimentalWarning' });
  `;
  const child = spawnSync(process.execPath, [...nodeFlags, '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(child.status, 0, child.stderr);
  const lines = child.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { lines, stderr: child.stderr };
}

test('process warnings are JSON log lines, once each, and nothing is printed to stderr', () => {
  const { lines, stderr } = runWithWarning();
  assert.equal(stderr, '');
  assert.equal(lines.length, 2, JSON.stringify(lines));
  const [deprecation, experimental] = lines;
  assert.equal(deprecation!['level'], 'warn');
  assert.equal(deprecation!['message'], 'process warning');
  assert.equal(deprecation!['warning'], 'DeprecationWarning');
  assert.equal(deprecation!['code'], 'DEP0060');
  assert.match(String(deprecation!['detail']), /util\._extend/);
  assert.equal(experimental!['warning'], 'ExperimentalWarning');
  assert.equal(experimental!['code'], undefined);
});

test('under --no-warnings, warnings stay silent', () => {
  const { lines, stderr } = runWithWarning(['--no-warnings']);
  assert.equal(stderr, '');
  assert.deepEqual(lines, []);
});
