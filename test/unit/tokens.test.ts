import assert from 'node:assert/strict';
import { createHmac, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { describe, test } from 'node:test';
import { calculateJwkThumbprint } from 'jose';
import jwt from 'jsonwebtoken';
import { ephemeralKeySet, jwksOf, signingKeyFrom, type KeySet } from '../../src/tokens/signing-keys.ts';
import { TokenError, TokenService, type TokenFailure } from '../../src/tokens/tokens.ts';

const T0_MS = Date.UTC(2026, 0, 1, 12, 0, 0);

function service(keys: KeySet, nowMs: () => number = () => T0_MS) {
  return new TokenService({
    keys,
    issuer: 'platform',
    audiences: ['platform', 'console'],
    accessTokenMaxAgeSeconds: 7200,
    refreshTokenMaxAgeSeconds: 14_400,
    clockSkewSeconds: 10,
    nowMs,
  });
}

function rejects(fn: () => unknown, failure: TokenFailure) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof TokenError, String(err));
    assert.equal(err.failure, failure, err.message);
    return true;
  });
}

const subject = { username: 'alice', clientId: 'platform', sessionId: 's1' };
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('TokenService', () => {
  const keys = ephemeralKeySet('ES256');

  test('issues an access/refresh pair with every documented claim', () => {
    const issued = service(keys).issue(subject);
    const access = service(keys).verify(issued.accessToken, 'access');
    const now = T0_MS / 1000;
    assert.deepEqual(
      { ...access, jti: typeof access.jti },
      {
        iss: 'platform',
        sub: 'alice',
        username: 'alice',
        aud: 'platform',
        iat: now,
        nbf: now,
        exp: now + 7200,
        jti: 'string',
        sid: 's1',
        token_type: 'access_token',
      },
    );
    assert.equal(jwt.decode(issued.refreshToken, { json: true })!['token_type'], 'refresh_token');
    const refresh = service(keys).verify(issued.refreshToken, 'refresh');
    assert.equal(refresh.exp, now + 14_400);
    assert.equal(refresh.jti, issued.refreshTokenId);
    assert.notEqual(refresh.jti, access.jti);
    assert.equal(issued.accessExpiresInSeconds, 7200);
    const header = jwt.decode(issued.accessToken, { complete: true })!.header;
    assert.equal(header.alg, 'ES256');
    assert.equal(header.kid, keys.signing.kid);
  });

  test('tokens issued with the former token_type values (access, refresh) are still accepted', () => {
    const s = service(keys);
    const issued = s.issue(subject);
    const resign = (token: string, type: string) => {
      const claims = { ...jwt.decode(token, { json: true })!, token_type: type };
      return jwt.sign(claims, keys.signing.signWith, {
        algorithm: keys.signing.algorithm,
        keyid: keys.signing.kid,
      });
    };
    assert.equal(s.verify(resign(issued.accessToken, 'access'), 'access').username, 'alice');
    assert.equal(s.verify(resign(issued.refreshToken, 'refresh'), 'refresh').jti, issued.refreshTokenId);
    rejects(() => s.verify(resign(issued.accessToken, 'refresh'), 'access'), 'wrong_type');
    rejects(() => s.verify(resign(issued.accessToken, 'id_token'), 'access'), 'malformed');
  });

  test('type confusion: a refresh token is not an access token and vice versa', () => {
    const issued = service(keys).issue(subject);
    rejects(() => service(keys).verify(issued.refreshToken, 'access'), 'wrong_type');
    rejects(() => service(keys).verify(issued.accessToken, 'refresh'), 'wrong_type');
  });

  test('expiry and not-before honour the leeway', () => {
    const issued = service(keys).issue(subject);
    const at = (offsetSeconds: number) => service(keys, () => T0_MS + offsetSeconds * 1000);
    assert.equal(at(7200 + 9).verify(issued.accessToken, 'access').username, 'alice');
    rejects(() => at(7200 + 11).verify(issued.accessToken, 'access'), 'expired');
    assert.equal(at(7200 + 11).verify(issued.accessToken, 'access', { ignoreExpiration: true }).sid, 's1');
    assert.equal(at(-9).verify(issued.accessToken, 'access').username, 'alice');
    rejects(() => at(-11).verify(issued.accessToken, 'access'), 'not_yet_valid');
  });

  test('forgeries: tampering, alg none, HS256 with the public key, unknown kid, other issuer or audience', () => {
    const s = service(keys);
    const token = s.issue(subject).accessToken;
    const [h, p, sig] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>;

    rejects(() => s.verify(`${h}.${b64({ ...claims, username: 'root' })}.${sig}`, 'access'), 'bad_signature');
    rejects(() => s.verify(`${b64({ ...header, alg: 'none' })}.${p}.`, 'access'), 'bad_signature');
    rejects(() => s.verify(`${b64({ alg: 'none' })}.${p}.`, 'access'), 'unknown_key');

    const publicPem = createPublicKey(keys.signing.signWith).export({ type: 'spki', format: 'pem' });
    const hsHead = b64({ ...header, alg: 'HS256' });
    const mac = createHmac('sha256', publicPem).update(`${hsHead}.${p}`).digest('base64url');
    rejects(() => s.verify(`${hsHead}.${p}.${mac}`, 'access'), 'bad_signature');

    const other = ephemeralKeySet('ES256');
    rejects(() => s.verify(service(other).issue(subject).accessToken, 'access'), 'unknown_key');
    const sign = (payload: object) =>
      jwt.sign(payload, keys.signing.signWith, { algorithm: 'ES256', keyid: keys.signing.kid });
    rejects(() => s.verify(sign({ ...claims, iss: 'evil' }), 'access'), 'wrong_issuer');
    rejects(() => s.verify(sign({ ...claims, aud: 'evil' }), 'access'), 'wrong_audience');
    rejects(() => s.verify(sign({ ...claims, sid: undefined }), 'access'), 'malformed');
    rejects(() => s.verify('a.b', 'access'), 'malformed');
    rejects(() => s.verify('###.b.c', 'access'), 'malformed');
    rejects(() => s.verify(`${b64('x')}.${p}.${sig}`, 'access'), 'malformed');
  });

  test('a remembered access token is still checked for expiry; other kinds are never remembered', () => {
    let now = T0_MS;
    const s = service(keys, () => now);
    const issued = s.issue(subject);
    assert.equal(s.verify(issued.accessToken, 'access').username, 'alice');
    assert.equal(s.verify(issued.accessToken, 'access').username, 'alice');
    now += (7200 + 11) * 1000;
    rejects(() => s.verify(issued.accessToken, 'access'), 'expired');
    rejects(() => s.verify(issued.refreshToken, 'access'), 'wrong_type');
  });

  test('rotation: tokens of a previous key verify while it is a verification key', () => {
    const old = ephemeralKeySet('ES256');
    const next = ephemeralKeySet('RS256');
    const rotated: KeySet = {
      signing: next.signing,
      byKid: new Map([...next.byKid, ...old.byKid]),
    };
    const oldToken = service(old).issue(subject).accessToken;
    assert.equal(service(rotated).verify(oldToken, 'access').username, 'alice');
    assert.equal(
      jwt.decode(service(rotated).issue(subject).accessToken, { complete: true })!.header.alg,
      'RS256',
    );
    assert.equal(jwksOf(rotated).keys.length, 2);
  });
});

describe('signing keys', () => {
  test('kid is the RFC 7638 thumbprint of the public key, so every replica derives the same one', async () => {
    for (const type of ['ec', 'rsa'] as const) {
      const pair =
        type === 'ec'
          ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
          : generateKeyPairSync('rsa', { modulusLength: 2048 });
      const key = signingKeyFrom(pair.privateKey, 'test');
      const jwk = pair.publicKey.export({ format: 'jwk' });
      assert.equal(
        key.kid,
        await calculateJwkThumbprint(jwk as Parameters<typeof calculateJwkThumbprint>[0]),
      );
      assert.equal(signingKeyFrom(pair.privateKey, 'again').kid, key.kid);
      assert.equal(key.publicJwk?.use, 'sig');
      assert.equal(key.publicJwk?.alg, type === 'ec' ? 'ES256' : 'RS256');
      assert.equal((key.publicJwk as { d?: string }).d, undefined, 'no private part published');
    }
  });

  test('unsupported curves are refused', () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    assert.throws(() => signingKeyFrom(pair.privateKey, 'p384.pem'), /P-256/);
  });
});
