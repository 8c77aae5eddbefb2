import bcrypt from 'bcrypt';

/** bcrypt cost below which a stored hash is considered too weak to be worth the risk (the floor). */
export const MIN_BCRYPT_COST = 10;
export const DEFAULT_BCRYPT_COST = 12;
/** bcrypt reads at most 72 bytes; longer passwords would silently collide, so they are refused. */
export const MAX_PASSWORD_BYTES = 72;

const BCRYPT_HASH = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;

/** The cost factor of a bcrypt hash, or undefined when the text is not a bcrypt hash. */
export function bcryptCostOf(hash: string): number | undefined {
  const match = BCRYPT_HASH.exec(hash);
  return match ? Number(match[1]) : undefined;
}

/**
 * Hashes a password. bcrypt's async functions run on libuv's thread pool, so a login in flight never
 * blocks the event loop (see test/bench/password-hashing.bench.ts).
 */
export async function hashPassword(password: string, cost = DEFAULT_BCRYPT_COST): Promise<string> {
  if (cost < MIN_BCRYPT_COST || cost > 31)
    throw new RangeError(`bcrypt cost must be in [${MIN_BCRYPT_COST}, 31]`);
  if (password.length === 0) throw new RangeError('password must not be empty');
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw new RangeError(`password must be at most ${MAX_PASSWORD_BYTES} bytes`);
  }
  return bcrypt.hash(password, cost);
}

/**
 * Compares a password with a stored hash, off the event loop. Without a usable hash (unknown user,
 * malformed or too-weak hash) it still spends one bcrypt comparison on a dummy hash, so the answer takes
 * as long as a real one and does not tell whether the user exists.
 */
export class PasswordVerifier {
  readonly #dummyHash: string;

  private constructor(dummyHash: string) {
    this.#dummyHash = dummyHash;
  }

  /** The dummy hash uses the cost new hashes get, so a miss costs what a typical hit does. */
  static async create(cost = DEFAULT_BCRYPT_COST): Promise<PasswordVerifier> {
    return new PasswordVerifier(await bcrypt.hash('not a password of anyone', cost));
  }

  async verify(password: string, storedHash: string | undefined): Promise<boolean> {
    const cost = storedHash === undefined ? undefined : bcryptCostOf(storedHash);
    const usable = cost !== undefined && cost >= MIN_BCRYPT_COST;
    const tooLong = Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES;
    // `$2y$` (what htpasswd writes) is the same algorithm as `$2b$`, but the native binding only
    // accepts the latter two spellings; the CRD accepts all three.
    const hash = usable ? storedHash!.replace(/^\$2y\$/, '$2b$') : this.#dummyHash;
    const matches = await bcrypt.compare(password, hash);
    return usable && !tooLong && matches;
  }
}
