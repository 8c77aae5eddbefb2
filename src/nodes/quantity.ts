/**
 * Kubernetes resource quantities (`100m`, `1.5Gi`, `2e3`, `1G`), reduced to the integers the
 * scheduler counts with: CPU in whole millicores, memory in whole bytes, each value rounded up
 * (k8s.io/apimachinery `Quantity.MilliValue()` / `Value()`). Parsing is exact (BigInt), so `0.1` and
 * `100m` are the same 100 millicores.
 */

const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL_EXPONENT: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

// sign, digits with optional fraction, then a binary suffix, a decimal suffix or an exponent.
const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE]?)$/;

/** ceil(numerator / denominator) for a positive denominator. */
function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  const q = numerator / denominator;
  return q * denominator < numerator ? q + 1n : q;
}

/**
 * `text` × `scale`, rounded up to an integer (scale 1000 gives milli-units). Undefined when `text`
 * is not a quantity. Values beyond what a double holds exactly are not realistic resources.
 */
function scaled(text: string, scale: bigint): number | undefined {
  const match = QUANTITY.exec(text.trim());
  if (!match) return undefined;
  const [, sign, number, suffix] = match as unknown as [string, string, string, string];
  const [whole, fraction = ''] = number.split('.');
  let numerator = BigInt(`${whole || '0'}${fraction}`) * scale;
  let exponent = -fraction.length;
  if (Object.hasOwn(BINARY, suffix)) numerator *= BINARY[suffix]!;
  else if (/^[eE]./.test(suffix))
    exponent += Number(suffix.slice(1)); // `E` alone is exa
  else exponent += DECIMAL_EXPONENT[suffix]!;
  if (Math.abs(exponent) > 40) return undefined; // absurd; not a resource anyone requests
  const value =
    exponent >= 0 ? numerator * 10n ** BigInt(exponent) : ceilDiv(numerator, 10n ** BigInt(-exponent));
  return sign === '-' ? -Number(value) : Number(value);
}

/** Millicores of a CPU quantity (`250m` → 250, `2` → 2000), rounded up; undefined if malformed. */
export function milliValue(text: string): number | undefined {
  return scaled(text, 1000n);
}

/** Whole units of a quantity (`1Ki` → 1024, `1k` → 1000), rounded up; undefined if malformed. */
export function unitValue(text: string): number | undefined {
  return scaled(text, 1n);
}

const DECIMAL_SUFFIX: Record<number, string> = {
  [-3]: 'm',
  0: '',
  3: 'k',
  6: 'M',
  9: 'G',
  12: 'T',
  15: 'P',
  18: 'E',
};

/** `n × 10^exponent` in Kubernetes' canonical decimal form: the largest suffix that keeps it whole. */
function decimalForm(n: number, exponent: number): string {
  if (n === 0) return '0';
  while (n % 1000 === 0 && exponent < 18) {
    n /= 1000;
    exponent += 3;
  }
  return `${n}${DECIMAL_SUFFIX[exponent]}`;
}

/** Millicores as Kubernetes prints a CPU quantity: `350m`, `2`, `1500m`, `0`. */
export function formatMilli(milli: number): string {
  return decimalForm(milli, -3);
}

const BINARY_SUFFIXES = ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki'] as const;

/**
 * Bytes as the shortest exact quantity: a binary suffix when a power of 1024 divides it (`384Mi`),
 * else a decimal one when a power of 1000 does (`1500M`), else plain bytes (`1000001`).
 */
export function formatBytes(bytes: number): string {
  if (bytes === 0) return '0';
  for (const suffix of BINARY_SUFFIXES) {
    const unit = Number(BINARY[suffix]);
    if (Math.abs(bytes) >= unit && bytes % unit === 0) return `${bytes / unit}${suffix}`;
  }
  return decimalForm(bytes, 0);
}
