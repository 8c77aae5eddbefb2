import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { describe, test } from 'node:test';
import bcrypt from 'bcrypt';
import { parse as parseYaml } from 'yaml';
import { runCli } from '../../src/cli.ts';
import { signingKeyFrom } from '../../src/tokens/signing-keys.ts';

async function cli(args: string[], stdin = ''): Promise<string> {
  let out = '';
  await runCli(args, { stdin: () => stdin, out: (text) => (out += text) });
  return out;
}

describe('cli', () => {
  test('hash-password reads stdin (one trailing newline dropped) and prints a bcrypt hash', async () => {
    const hash = (await cli(['hash-password', '--cost', '10'], 'pass word\n')).trim();
    assert.match(hash, /^\$2b\$10\$/);
    assert.equal(await bcrypt.compare('pass word', hash), true);
  });

  test('user create prints a User manifest for the platform group, with a hash and no plaintext', async () => {
    const text = await cli(
      [
        'user',
        'create',
        'alice',
        '--email',
        'a@example.com',
        '--group',
        'dev',
        '--group',
        'ops',
        '--platform',
        'acme',
        '--cost',
        '10',
      ],
      's3cret',
    );
    assert.ok(!text.includes('s3cret'));
    const manifest = parseYaml(text) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string };
      spec: Record<string, unknown>;
    };
    assert.equal(manifest.apiVersion, 'iam.acme.io/v1alpha2');
    assert.equal(manifest.kind, 'User');
    assert.equal(manifest.metadata.name, 'alice');
    assert.deepEqual(manifest.spec['groups'], ['dev', 'ops']);
    assert.equal(manifest.spec['email'], 'a@example.com');
    assert.equal(await bcrypt.compare('s3cret', String(manifest.spec['password'])), true);
  });

  test('keys generate writes a usable signing key', async () => {
    for (const algorithm of ['ES256', 'RS256']) {
      const pem = await cli(['keys', 'generate', '--algorithm', algorithm]);
      assert.equal(signingKeyFrom(createPrivateKey(pem), 'generated').algorithm, algorithm);
    }
  });

  test('bad usage is refused with a message', async () => {
    await assert.rejects(cli(['user', 'create', 'Not_A_Name'], 'pw'), /lowercase DNS subdomain/);
    await assert.rejects(cli(['user', 'create', 'bob'], ''), /no password on standard input/);
    await assert.rejects(cli(['hash-password', '--cost', '4'], 'pw'), /--cost/);
    await assert.rejects(cli(['hash-password', 'secret-as-argument']), /stdin/);
    await assert.rejects(cli(['user', 'create', 'bob', '--colour', 'red'], 'pw'), /unknown option --colour/);
    await assert.rejects(cli(['keys', 'generate', '--algorithm', 'HS256']), /ES256 or RS256/);
    await assert.rejects(cli(['frobnicate']), /unknown command/);
  });
});
