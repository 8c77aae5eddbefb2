/**
 * A token bucket per client address for the token endpoint: `requestsPerMinute` may arrive in a burst,
 * refilled evenly over the minute. Per replica, in memory: it shields the endpoint (and bcrypt's CPU) from
 * one noisy address; the per-account lockout, kept in the cluster, is what stops password guessing.
 */
export class AddressLimiter {
  readonly #capacity: number;
  readonly #refillPerMs: number;
  readonly #maxAddresses: number;
  readonly #nowMs: () => number;
  readonly #buckets = new Map<string, { tokens: number; atMs: number }>();

  constructor(options: { requestsPerMinute: number; maxAddresses?: number; nowMs?: () => number }) {
    this.#capacity = options.requestsPerMinute;
    this.#refillPerMs = options.requestsPerMinute / 60_000;
    this.#maxAddresses = options.maxAddresses ?? 10_000;
    this.#nowMs = options.nowMs ?? Date.now;
  }

  /** Takes one request from the address's bucket; when empty, says how long until the next is allowed. */
  take(address: string): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    if (this.#capacity <= 0) return { allowed: true };
    const now = this.#nowMs();
    const bucket = this.#buckets.get(address) ?? { tokens: this.#capacity, atMs: now };
    bucket.tokens = Math.min(this.#capacity, bucket.tokens + (now - bucket.atMs) * this.#refillPerMs);
    bucket.atMs = now;
    // Re-insert so the map's order is least-recently-used first, for eviction.
    this.#buckets.delete(address);
    this.#buckets.set(address, bucket);
    while (this.#buckets.size > this.#maxAddresses) this.#buckets.delete(this.#buckets.keys().next().value!);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.#refillPerMs / 1000)),
    };
  }
}
