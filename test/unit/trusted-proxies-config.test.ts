import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig, type ConfigSources } from '../../src/config/config.ts';
import { ipRangeError } from '../../src/config/ip-ranges.ts';

function sources(argv: string[], env: Record<string, string> = {}, files: Record<string, string> = {}) {
  return {
    argv,
    env,
    readFile: (p: string) => {
      const text = files[p];
      if (text === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return text;
    },
  } satisfies ConfigSources;
}

describe('http.trustedProxies', () => {
  test('defaults to trusting no proxy', () => {
    assert.deepEqual(loadConfig(sources([])).http.trustedProxies, []);
  });

  test('a YAML list, a comma-separated env value or flag', () => {
    const file = {
      '/c.yaml': 'http:\n  trustedProxies:\n    - 10.0.0.0/8\n    - fd00::/8\n    - loopback\n',
    };
    assert.deepEqual(loadConfig(sources(['--config=/c.yaml'], {}, file)).http.trustedProxies, [
      '10.0.0.0/8',
      'fd00::/8',
      'loopback',
    ]);
    assert.deepEqual(
      loadConfig(sources([], { PLATFORM_HTTP_TRUSTED_PROXIES: '127.0.0.3, 192.168.1.0/24' })).http
        .trustedProxies,
      ['127.0.0.3', '192.168.1.0/24'],
    );
    assert.deepEqual(
      loadConfig(sources(['--http.trustedProxies=', '--log.level=info'])).http.trustedProxies,
      [],
    );
  });

  test('a bad entry names the key and the entry', () => {
    for (const [input, message] of [
      ['10.0.0.300', /"10\.0\.0\.300" is not an IP address/],
      ['10.0.0.0/33', /invalid prefix length \(0-32 for IPv4\)/],
      ['fd00::/129', /invalid prefix length \(0-128 for IPv6\)/],
      ['ingress-nginx', /not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal/],
    ] as const) {
      assert.throws(
        () => loadConfig(sources([`--http.trustedProxies=127.0.0.1,${input}`])),
        (err: unknown) =>
          err instanceof ConfigError && err.key === 'http.trustedProxies' && message.test(err.message),
        input,
      );
    }
    assert.throws(
      () => loadConfig(sources(['--config=/c.yaml'], {}, { '/c.yaml': 'http:\n  trustedProxies: [1, 2]\n' })),
      /http\.trustedProxies: expected a list of strings/,
    );
  });

  test('ipRangeError accepts addresses, CIDR ranges and named ranges', () => {
    for (const ok of [
      '127.0.0.1',
      '::1',
      '10.0.0.0/8',
      '0.0.0.0/0',
      '2001:db8::/32',
      'uniquelocal',
      'linklocal',
    ]) {
      assert.equal(ipRangeError(ok), undefined, ok);
    }
    for (const bad of ['', '10.0.0.0/', '10.0.0.0/-1', '10.0.0.0/8/8', 'localhost', '*']) {
      assert.notEqual(ipRangeError(bad), undefined, bad);
    }
  });
});
