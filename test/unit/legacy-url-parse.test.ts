import assert from 'node:assert/strict';
import { test } from 'node:test';
import url from 'node:url';
import { settleLegacyUrlParseWarning } from '../../src/kube-proxy/legacy-url-parse.ts';

const deprecationCodes = async (run: () => void): Promise<string[]> => {
  const codes: string[] = [];
  const listener = (warning: Error & { code?: string }) => codes.push(warning.code ?? warning.name);
  process.on('warning', listener);
  try {
    run();
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return codes;
};

// Node warns about the first url.parse() from outside node_modules and, until it has, inspects the
// caller's stack at every call. Settled, it has warned (silently): a later call from here warns no more.
test('settling the url.parse() warning prints nothing and leaves deprecation warnings as they were', async () => {
  const before = process.noDeprecation;
  assert.deepEqual(await deprecationCodes(settleLegacyUrlParseWarning), []);
  assert.equal(process.noDeprecation, before);
  assert.deepEqual(
    await deprecationCodes(() => url.parse('/api/v1/nodes?limit=10')),
    [],
    'url.parse() still warns: Node no longer settles the warning this way',
  );
});
