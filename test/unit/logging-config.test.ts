import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { configuredLogStore } from '../../src/log-query/configured-store.ts';
import { createLoggingMetrics } from '../../src/log-query/logging-metrics.ts';
import { Registry } from 'prom-client';

const load = (argv: string[] = [], env: Record<string, string> = {}, files: Record<string, string> = {}) =>
  loadConfig({
    argv,
    env,
    readFile: (p) => {
      const text = files[p];
      if (text === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return text;
    },
  });

function rejects(fn: () => unknown, key: string, message: RegExp, secret?: string) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ConfigError, String(err));
    assert.equal(err.key, key);
    assert.match(err.message, message);
    if (secret) assert.ok(!err.message.includes(secret), `the message shows the secret: ${err.message}`);
    return true;
  });
}

describe('logging configuration', () => {
  test('defaults: not configured, verification on', () => {
    const c = load().logging;
    assert.deepEqual(c.hosts, []);
    assert.equal(c.tls.insecureSkipVerify, false);
    assert.equal(c.indexPrefix, 'ks-logstash-log');
    assert.equal(c.requestTimeoutSeconds, 30);
    assert.equal(c.exportMaxLines, 100_000);
    assert.equal(
      configuredLogStore(c, { metrics: createLoggingMetrics(new Registry()), readFile: () => '' }),
      undefined,
    );
  });

  test('from a file, the environment and flags', () => {
    const files = {
      '/etc/p.yaml':
        'logging:\n  hosts: [https://a:9200, https://b:9200]\n  username: reader\n  tls:\n    caFile: /ca.pem\n',
    };
    const c = load(
      ['--config=/etc/p.yaml', '--logging.tls.insecureSkipVerify=true', '--logging.indexPrefix=logs'],
      { PLATFORM_LOGGING_PASSWORD: 's3cret', PLATFORM_LOGGING_EXPORT_MAX_LINES: '5000' },
      files,
    ).logging;
    assert.deepEqual(c.hosts, ['https://a:9200', 'https://b:9200']);
    assert.equal(c.username, 'reader');
    assert.equal(c.password, 's3cret');
    assert.equal(c.tls.caFile, '/ca.pem');
    assert.equal(c.tls.insecureSkipVerify, true);
    assert.equal(c.indexPrefix, 'logs');
    assert.equal(c.exportMaxLines, 5000);
    assert.deepEqual(load([], { PLATFORM_LOGGING_HOSTS: 'http://x:9200, http://y:9200' }).logging.hosts, [
      'http://x:9200',
      'http://y:9200',
    ]);
  });

  test('bad values name their key and never show a password', () => {
    rejects(() => load(['--logging.hosts=opensearch:9200']), 'logging.hosts', /http: or https:/);
    rejects(() => load(['--logging.hosts=not a url']), 'logging.hosts', /is not a URL/);
    rejects(
      () => load(['--logging.hosts=https://reader:hunter2@store:9200']),
      'logging.hosts',
      /credentials in the URL.*logging\.username/,
      'hunter2',
    );
    rejects(
      () => load(['--logging.hosts=https://u:pw123@store:99999']),
      'logging.hosts',
      /an item is not a URL/,
      'pw123',
    );
    rejects(() => load(['--logging.hosts=https://store:9200/?x=1']), 'logging.hosts', /query or fragment/);
    rejects(
      () => load([], { PLATFORM_LOGGING_PASSWORD: 'pw' }),
      'logging.password',
      /logging\.username is empty/,
    );
    rejects(
      () => load(['--config=/p.yaml'], {}, { '/p.yaml': 'logging:\n  username: u\n  password: 987654321\n' }),
      'logging.password',
      /expected a string, got a number/,
      '987654321',
    );
    rejects(() => load(['--logging.indexPrefix=Logs*']), 'logging.indexPrefix', /index name prefix/);
    rejects(
      () => load(['--logging.tls.insecureSkipVerify=yes']),
      'logging.tls.insecureSkipVerify',
      /true or false/,
    );
    rejects(
      () => load(['--logging.requestTimeoutSeconds=0']),
      'logging.requestTimeoutSeconds',
      /out of range/,
    );
  });

  test('an unreadable CA file is a configuration error naming logging.tls.caFile', () => {
    const c = load(['--logging.hosts=https://store:9200', '--logging.tls.caFile=/missing.pem']).logging;
    rejects(
      () =>
        configuredLogStore(c, {
          metrics: createLoggingMetrics(new Registry()),
          readFile: () => {
            throw Object.assign(new Error('nope'), { code: 'ENOENT' });
          },
        }),
      'logging.tls.caFile',
      /cannot read \/missing\.pem: ENOENT/,
    );
  });
});
