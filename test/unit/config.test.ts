import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, envNameFor, loadConfig, type ConfigSources } from '../../src/config/config.ts';

function sources(overrides: Partial<ConfigSources> & { files?: Record<string, string> } = {}): ConfigSources {
  const files = overrides.files ?? {};
  return {
    argv: overrides.argv ?? [],
    env: overrides.env ?? {},
    readFile:
      overrides.readFile ??
      ((p) => {
        const text = files[p];
        if (text === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
        return text;
      }),
  };
}

function rejectsWithKey(fn: () => unknown, key: string, message?: RegExp) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.equal(err.key, key);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('config', () => {
  test('defaults', () => {
    const c = loadConfig(sources());
    assert.equal(c.platformName, 'platform');
    assert.equal(c.compatibleRelease, 'v3.4.1');
    assert.equal(c.http.port, 9090);
    assert.equal(c.http.shutdownGraceSeconds, 30);
    assert.equal(c.log.level, 'info');
  });

  test('precedence: defaults < file < env < flags', () => {
    const files = { '/etc/p.yaml': 'http:\n  port: 1000\n  shutdownGraceSeconds: 5\nlog:\n  level: debug\n' };
    const fromFile = loadConfig(sources({ argv: ['--config', '/etc/p.yaml'], files }));
    assert.deepEqual(
      [fromFile.http.port, fromFile.http.shutdownGraceSeconds, fromFile.log.level],
      [1000, 5, 'debug'],
    );
    const fromEnv = loadConfig(
      sources({ argv: ['--config=/etc/p.yaml'], env: { PLATFORM_HTTP_PORT: '2000' }, files }),
    );
    assert.equal(fromEnv.http.port, 2000);
    assert.equal(fromEnv.http.shutdownGraceSeconds, 5);
    const fromFlag = loadConfig(
      sources({
        argv: ['--http.port=3000'],
        env: { PLATFORM_HTTP_PORT: '2000', PLATFORM_CONFIG: '/etc/p.yaml' },
        files,
      }),
    );
    assert.equal(fromFlag.http.port, 3000);
    assert.equal(fromFlag.log.level, 'debug', 'PLATFORM_CONFIG names the file too');
  });

  test('env names are derived from keys', () => {
    assert.equal(envNameFor('http.shutdownGraceSeconds'), 'PLATFORM_HTTP_SHUTDOWN_GRACE_SECONDS');
    assert.equal(envNameFor('platformName'), 'PLATFORM_PLATFORM_NAME');
  });

  test('bad values name the key', () => {
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--http.port=abc'] })),
      'http.port',
      /expected an integer, got "abc"/,
    );
    rejectsWithKey(
      () => loadConfig(sources({ env: { PLATFORM_HTTP_PORT: '70000' } })),
      'http.port',
      /out of range/,
    );
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--log.level', 'loud'] })),
      'log.level',
      /one of error, warn, info, debug/,
    );
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--platformName=Bad_Name'] })),
      'platformName',
      /lowercase DNS label/,
    );
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--compatibleRelease=3.4'] })),
      'compatibleRelease',
      /a release like "v3.4.1"/,
    );
    rejectsWithKey(() => loadConfig(sources({ argv: ['--http.prot=1'] })), '--http.prot', /unknown flag/);
    rejectsWithKey(() => loadConfig(sources({ argv: ['--http.port'] })), '--http.port', /needs a value/);
  });

  test('bad files name the key or the file', () => {
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--config=/missing.yaml'] })),
      'config',
      /cannot read file \/missing.yaml: ENOENT/,
    );
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--config=/c.yaml'], files: { '/c.yaml': 'http: [' } })),
      'config',
      /not valid YAML/,
    );
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--config=/c.yaml'], files: { '/c.yaml': 'http:\n  porrt: 1\n' } })),
      'http.porrt',
      /unknown key/,
    );
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--config=/c.yaml'], files: { '/c.yaml': 'http:\n  port: "x"\n' } })),
      'http.port',
    );
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--config=/c.yaml'], files: { '/c.yaml': 'log: 3\n' } })),
      'log',
      /expected a mapping/,
    );
  });

  test('auth keys: defaults, bool values and cross-field checks', () => {
    const c = loadConfig(sources());
    assert.equal(c.auth.accessTokenMaxAgeSeconds, 7200);
    assert.equal(c.auth.refreshTokenMaxAgeSeconds, 14_400);
    assert.equal(c.auth.signingAlgorithm, 'ES256');
    assert.equal(c.auth.singleSession, false);
    assert.deepEqual(c.auth.lockout, { maxFailures: 10, windowSeconds: 600 });
    assert.equal(loadConfig(sources({ argv: ['--auth.singleSession=true'] })).auth.singleSession, true);
    assert.equal(
      loadConfig(
        sources({ files: { '/c.yaml': 'auth:\n  singleSession: true\n' }, argv: ['--config=/c.yaml'] }),
      ).auth.singleSession,
      true,
    );
    rejectsWithKey(() => loadConfig(sources({ argv: ['--auth.singleSession=yes'] })), 'auth.singleSession');
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--auth.refreshTokenMaxAgeSeconds=3600'] })),
      'auth.refreshTokenMaxAgeSeconds',
      /longer than auth\.accessTokenMaxAgeSeconds/,
    );
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--auth.signingAlgorithm=HS256'] })),
      'auth.hmacSecretFile',
    );
    rejectsWithKey(() => loadConfig(sources({ argv: ['--auth.clients=no-secret'] })), 'auth.clients');
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--auth.lockout.maxFailures=0'] })),
      'auth.lockout.maxFailures',
    );
    assert.equal(loadConfig(sources({ env: { PLATFORM_AUTH_CLIENTS: 'a:b,c:d' } })).auth.clients, 'a:b,c:d');
  });
});

describe('config: TLS serving', () => {
  test('certificate and key come together', () => {
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--http.tlsCertFile=/tls/tls.crt'] })),
      'http.tlsKeyFile',
      /both/,
    );
    rejectsWithKey(
      () => loadConfig(sources({ argv: ['--http.tlsKeyFile=/tls/tls.key'] })),
      'http.tlsCertFile',
      /both/,
    );
    const both = loadConfig(
      sources({ argv: ['--http.tlsCertFile=/tls/tls.crt', '--http.tlsKeyFile=/tls/tls.key'] }),
    );
    assert.deepEqual([both.http.tlsCertFile, both.http.tlsKeyFile], ['/tls/tls.crt', '/tls/tls.key']);
  });
});

describe('config: secrets in error messages', () => {
  test('a malformed auth.clients value is named, never echoed', () => {
    assert.throws(
      () => loadConfig(sources({ argv: ['--auth.clients=web:topsecret,bad'] })),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.key, 'auth.clients');
        assert.doesNotMatch(err.message, /topsecret/);
        assert.match(err.message, /the value is not a list like/);
        return true;
      },
    );
  });
});
