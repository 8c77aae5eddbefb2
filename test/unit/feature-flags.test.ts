import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { featureFlags } from '../../src/platform-config/feature-flags.ts';

const flags = (argv: string[]) =>
  featureFlags(
    loadConfig({
      argv,
      env: {},
      readFile: () => {
        throw Object.assign(new Error('no file'), { code: 'ENOENT' });
      },
    }),
  );

describe('configz feature flags', () => {
  test('monitoring is reported exactly when a Prometheus endpoint is configured, as the original does', () => {
    assert.equal(flags([]).monitoring, false);
    assert.equal(flags(['--monitoring.endpoint=http://prometheus.example:9090']).monitoring, true);
  });

  test('logging is reported exactly when a log store is configured; the rest of the flags do not move', () => {
    const plain = flags([]);
    assert.equal(plain.logging, false);
    assert.deepEqual(
      Object.entries(plain)
        .filter(([, on]) => on)
        .map(([name]) => name),
      ['kubernetes', 'authentication', 'authorization'],
    );
    const both = flags([
      '--monitoring.endpoint=https://prometheus.example',
      '--logging.hosts=https://logs.example:9200',
    ]);
    assert.equal(both.logging, true);
    assert.equal(both.monitoring, true);
    assert.equal(both.devops, false);
  });
});
