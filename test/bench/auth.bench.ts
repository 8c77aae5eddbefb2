// Auth hot-path and login costs. Prints figures and side-by-side ratios; asserts nothing.
//   source scripts/ensure-node.sh && node test/bench/auth.bench.ts
import { monitorEventLoopDelay } from 'node:perf_hooks';
import bcrypt from 'bcrypt';
import { DEFAULT_BCRYPT_COST, hashPassword, PasswordVerifier } from '../../src/users/passwords.ts';
import { ephemeralKeySet, type KeySet } from '../../src/tokens/signing-keys.ts';
import { createSecretKey, randomBytes } from 'node:crypto';
import { TokenService } from '../../src/tokens/tokens.ts';

function tokens(keys: KeySet, verifiedCacheSize = 0): TokenService {
  return new TokenService({
    verifiedCacheSize,
    keys,
    issuer: 'platform',
    audiences: ['platform'],
    accessTokenMaxAgeSeconds: 7200,
    refreshTokenMaxAgeSeconds: 14_400,
    clockSkewSeconds: 10,
  });
}

function hmacKeys(): KeySet {
  const key = createSecretKey(randomBytes(48));
  const signing = { kid: 'hs', algorithm: 'HS256' as const, verifyWith: key, signWith: key };
  return { signing, byKid: new Map([['hs', signing]]) };
}

function opsPerSecond(fn: () => void, durationMs = 1500): number {
  for (let i = 0; i < 200; i++) fn(); // warm-up
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < durationMs) {
    for (let i = 0; i < 50; i++) fn();
    n += 50;
  }
  return n / ((performance.now() - start) / 1000);
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

console.log('## access-token verification (TokenService.verify, full signature check, one core)');
const results: Record<string, number> = {};
for (const [name, keys] of [
  ['ES256', ephemeralKeySet('ES256')],
  ['RS256', ephemeralKeySet('RS256')],
  ['HS256', hmacKeys()],
] as const) {
  const service = tokens(keys);
  const token = service.issue({ username: 'alice', clientId: 'platform', sessionId: 's' }).accessToken;
  results[name] = opsPerSecond(() => service.verify(token, 'access'));
  const signs = opsPerSecond(
    () => service.issue({ username: 'alice', clientId: 'platform', sessionId: 's' }),
    800,
  );
  console.log(
    `${name}: verify ${fmt(results[name])}/s (${fmt(1e6 / results[name], 1)} µs each); issue pair ${fmt(signs)}/s`,
  );
}
const cached = tokens(ephemeralKeySet('ES256'), 10_000);
const cachedToken = cached.issue({ username: 'alice', clientId: 'platform', sessionId: 's' }).accessToken;
const cachedRate = opsPerSecond(() => cached.verify(cachedToken, 'access'));
console.log(
  `ES256 repeat verification of a known token (what the server does, verified-token cache): ${fmt(cachedRate)}/s ` +
    `(${fmt(1e6 / cachedRate, 2)} µs each) — ${fmt(cachedRate / results['ES256']!, 0)}× the full check`,
);
console.log(
  `ratio verify/s: HS256 ${fmt(results['HS256']! / results['ES256']!, 2)}× ES256, RS256 ${fmt(results['RS256']! / results['ES256']!, 2)}× ES256`,
);

console.log(`\n## password verification (bcrypt cost ${DEFAULT_BCRYPT_COST})`);
const hash = await hashPassword('correct horse battery staple');
const verifier = await PasswordVerifier.create();
const time = async (fn: () => Promise<unknown>, n: number) => {
  const start = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return (performance.now() - start) / n;
};
const wrongMs = await time(() => verifier.verify('wrong password', hash), 8);
const unknownMs = await time(() => verifier.verify('wrong password', undefined), 8);
const rightMs = await time(() => verifier.verify('correct horse battery staple', hash), 8);
console.log(
  `mean per check: right ${fmt(rightMs, 1)} ms, wrong ${fmt(wrongMs, 1)} ms, unknown user ${fmt(unknownMs, 1)} ms ` +
    `(unknown/wrong ratio ${fmt(unknownMs / wrongMs, 2)})`,
);

console.log('\n## event loop while 8 logins are in flight');
const measure = async (label: string, work: () => Promise<unknown>) => {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const start = performance.now();
  await work();
  const elapsed = performance.now() - start;
  histogram.disable();
  console.log(
    `${label}: ${fmt(elapsed)} ms total, event-loop delay max ${fmt(histogram.max / 1e6, 1)} ms, p99 ${fmt(histogram.percentile(99) / 1e6, 1)} ms`,
  );
  return histogram.max / 1e6;
};
const offLoop = await measure('bcrypt.compare (thread pool, what the server uses)', () =>
  Promise.all(Array.from({ length: 8 }, () => verifier.verify('wrong password', hash))),
);
const onLoop = await measure('bcrypt.compareSync (on the event loop, for comparison)', async () => {
  for (let i = 0; i < 8; i++) {
    bcrypt.compareSync('wrong password', hash);
    await new Promise((r) => setImmediate(r));
  }
});
console.log(`max event-loop stall: sync/async ratio ${fmt(onLoop / offLoop, 1)}×`);
