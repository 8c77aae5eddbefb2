import {
  createHash,
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import type { SigningAlgorithm } from '../config/config.ts';

/** One key the token service knows: it verifies tokens whose header names its `kid`; the signing key also signs. */
export interface VerificationKey {
  kid: string;
  algorithm: SigningAlgorithm;
  /** What jsonwebtoken verifies with: the public key, or the shared secret for HS256. */
  verifyWith: KeyObject;
  /** Public JWK for /oauth/keys; absent for HS256 (a shared secret is never published). */
  publicJwk?: PublicJwk;
}

export interface SigningKey extends VerificationKey {
  signWith: KeyObject;
}

export interface PublicJwk extends JsonWebKey {
  kid: string;
  alg: SigningAlgorithm;
  use: 'sig';
}

/** The keys of one process: one that signs, and every key whose tokens are still accepted (the signing one included). */
export interface KeySet {
  signing: SigningKey;
  byKid: ReadonlyMap<string, VerificationKey>;
}

/** Raised when a configured key is missing, unreadable or unfit; the message names the file and never its contents. */
export class KeyError extends Error {
  readonly configKey: string;
  constructor(configKey: string, message: string) {
    super(message);
    this.name = 'KeyError';
    this.configKey = configKey;
  }
}

export interface KeySources {
  algorithm: SigningAlgorithm;
  signingKeyFile: string;
  /** Extra PEM files accepted for verification only. */
  verificationKeyFiles: readonly string[];
  hmacSecretFile: string;
  readFile: (path: string) => Buffer;
}

const MIN_HMAC_SECRET_BYTES = 32;
const MIN_RSA_BITS = 2048;

/**
 * Loads the key set from files. With no signing key configured for ES256/RS256, returns undefined so the
 * caller decides (the server generates an ephemeral key with a loud warning).
 */
export function loadKeySet(sources: KeySources): KeySet | undefined {
  const signing = loadSigningKey(sources);
  if (!signing) return undefined;
  const byKid = new Map<string, VerificationKey>([[signing.kid, signing]]);
  for (const file of sources.verificationKeyFiles) {
    const key = loadVerificationKey(file, sources.readFile);
    byKid.set(key.kid, key);
  }
  return { signing, byKid };
}

/** A fresh in-memory key pair: for development and tests only (tokens die with the process). */
export function ephemeralKeySet(algorithm: Exclude<SigningAlgorithm, 'HS256'>): KeySet {
  const pair =
    algorithm === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: MIN_RSA_BITS });
  const signing = signingKeyFrom(pair.privateKey, 'ephemeral key');
  return { signing, byKid: new Map([[signing.kid, signing]]) };
}

/** The signing key for a private key object: its algorithm follows from the key type. */
export function signingKeyFrom(privateKey: KeyObject, origin: string): SigningKey {
  const publicKey = createPublicKey(privateKey);
  const algorithm = algorithmOf(publicKey, origin);
  const jwk = publicJwkOf(publicKey, algorithm);
  return { kid: jwk.kid, algorithm, verifyWith: publicKey, signWith: privateKey, publicJwk: jwk };
}

function loadSigningKey(sources: KeySources): SigningKey | undefined {
  if (sources.algorithm === 'HS256') {
    const secret = readKeyFile('auth.hmacSecretFile', sources.hmacSecretFile, sources.readFile);
    const trimmed = Buffer.from(secret.toString('utf8').trim(), 'utf8');
    if (trimmed.length < MIN_HMAC_SECRET_BYTES) {
      throw new KeyError(
        'auth.hmacSecretFile',
        `${sources.hmacSecretFile}: the HS256 secret must be at least ${MIN_HMAC_SECRET_BYTES} bytes`,
      );
    }
    const key = createSecretKey(trimmed);
    // A kid that names the secret without revealing it: a hash of a hash of a high-entropy secret.
    const kid = 'hs256-' + sha256(sha256(trimmed)).toString('base64url').slice(0, 16);
    return { kid, algorithm: 'HS256', verifyWith: key, signWith: key };
  }
  if (!sources.signingKeyFile) return undefined;
  const pem = readKeyFile('auth.signingKeyFile', sources.signingKeyFile, sources.readFile);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    throw new KeyError(
      'auth.signingKeyFile',
      `${sources.signingKeyFile}: not a PEM private key (expected PKCS#8, SEC1 or PKCS#1)`,
    );
  }
  const key = signingKeyFrom(privateKey, sources.signingKeyFile);
  if (key.algorithm !== sources.algorithm) {
    throw new KeyError(
      'auth.signingKeyFile',
      `${sources.signingKeyFile}: holds a ${key.algorithm} key but auth.signingAlgorithm is ${sources.algorithm}`,
    );
  }
  return key;
}

function loadVerificationKey(file: string, readFile: (p: string) => Buffer): VerificationKey {
  const pem = readKeyFile('auth.verificationKeyFiles', file, readFile);
  let publicKey: KeyObject;
  try {
    // A private key PEM is accepted too (its public half is derived), so an old signing key file can be reused as is.
    publicKey = createPublicKey(pem);
  } catch {
    throw new KeyError('auth.verificationKeyFiles', `${file}: not a PEM public or private key`);
  }
  const algorithm = algorithmOf(publicKey, file);
  const jwk = publicJwkOf(publicKey, algorithm);
  return { kid: jwk.kid, algorithm, verifyWith: publicKey, publicJwk: jwk };
}

function readKeyFile(configKey: string, file: string, readFile: (p: string) => Buffer): Buffer {
  try {
    return readFile(file);
  } catch (err) {
    throw new KeyError(configKey, `${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

function algorithmOf(publicKey: KeyObject, origin: string): Exclude<SigningAlgorithm, 'HS256'> {
  const type = publicKey.asymmetricKeyType;
  if (type === 'ec') {
    const curve = publicKey.asymmetricKeyDetails?.namedCurve;
    if (curve !== 'prime256v1') {
      throw new KeyError(
        'auth.signingKeyFile',
        `${origin}: EC keys must use curve P-256 (ES256), got ${curve}`,
      );
    }
    return 'ES256';
  }
  if (type === 'rsa') {
    const bits = publicKey.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS) {
      throw new KeyError(
        'auth.signingKeyFile',
        `${origin}: RSA keys need at least ${MIN_RSA_BITS} bits, got ${bits}`,
      );
    }
    return 'RS256';
  }
  throw new KeyError('auth.signingKeyFile', `${origin}: unsupported key type ${type} (use EC P-256 or RSA)`);
}

/** The public JWK with `kid` = its RFC 7638 thumbprint, so every replica derives the same kid from the same key. */
function publicJwkOf(publicKey: KeyObject, alg: Exclude<SigningAlgorithm, 'HS256'>): PublicJwk {
  const jwk = publicKey.export({ format: 'jwk' });
  const members =
    jwk.kty === 'EC'
      ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
      : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  const kid = sha256(Buffer.from(JSON.stringify(members))).toString('base64url');
  return { ...members, kid, alg, use: 'sig' };
}

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

/** The kid tokens signed by this key pair carry (for a public key, or a private key's public half). */
export function kidOf(publicKey: KeyObject, origin: string): string {
  return publicJwkOf(publicKey, algorithmOf(publicKey, origin)).kid;
}

/** JWKS document: the public keys of every asymmetric key in the set. */
export function jwksOf(keys: KeySet): { keys: PublicJwk[] } {
  return { keys: [...keys.byKid.values()].flatMap((k) => (k.publicJwk ? [k.publicJwk] : [])) };
}
