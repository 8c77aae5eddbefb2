import { parse as parseYaml } from 'yaml';
import { ipRangeError } from './ip-ranges.ts';

/**
 * The server's one typed configuration object.
 * Sources, later wins: built-in defaults < YAML file (--config / PLATFORM_CONFIG) < environment < flags.
 */
export interface Config {
  /** Lowercase platform name: forms API group domains (resources.<name>.io), the default OAuth client and the token issuer. */
  platformName: string;
  http: {
    host: string;
    port: number;
    /** How long in-flight requests may run after SIGTERM before the process exits anyway. */
    shutdownGraceSeconds: number;
    /** Upper bound on request header/body arrival, protects against slow clients. */
    requestTimeoutSeconds: number;
    /**
     * Addresses/CIDR ranges of reverse proxies (the Ingress controller) whose X-Forwarded-For is
     * believed. Empty: no proxy is trusted, the client address is the TCP peer.
     */
    trustedProxies: string[];
    /** PEM certificate (chain) and key to serve HTTPS; both empty: plain HTTP (TLS ends at the Ingress). */
    tlsCertFile: string;
    tlsKeyFile: string;
  };
  log: {
    level: LogLevel;
  };
  auth: AuthConfig;
  kubernetes: {
    /** Path to a kubeconfig. Empty: in-cluster ServiceAccount when running in a Pod, else the default kubeconfig. */
    kubeconfig: string;
    /** Context inside the kubeconfig; empty means its current-context. */
    context: string;
  };
  authz: {
    /** How long an "allowed" SubjectAccessReview answer is reused. */
    allowedTtlSeconds: number;
    /** How long a "denied" answer is reused: short, so a new binding takes effect quickly. */
    deniedTtlSeconds: number;
    /** How long past its TTL an answer may still be used while the kube-apiserver cannot be reached. */
    staleIfErrorSeconds: number;
    /** Bound on cached answers (identity × question). */
    cacheEntries: number;
    reviewTimeoutSeconds: number;
  };
  resources: {
    /** Responses of the resource APIs at least this large are gzip-compressed for clients that accept it. */
    gzipMinBytes: number;
    /** Bound on list bodies kept for repeated identical queries of an unchanged cache. */
    responseMemoMegabytes: number;
  };
  proxy: {
    /** How long the kube-apiserver may take to start answering a proxied request; streams are not limited after that. */
    responseTimeoutSeconds: number;
  };
  logging: LoggingConfig;
}

/** The log store behind the log query API (src/logging/). */
export interface LoggingConfig {
  /** Base URLs of the Elasticsearch/OpenSearch nodes. Empty: logging is not configured (the log API answers 503). */
  hosts: string[];
  /** Basic auth user; empty: no authentication. */
  username: string;
  password: string;
  tls: {
    /** PEM file of the CA(s) that sign the store's certificate; empty: the system's CAs. */
    caFile: string;
    /** Do not verify the store's certificate (verification is on by default). */
    insecureSkipVerify: boolean;
  };
  /** Daily indices are `<indexPrefix>-YYYY.MM.DD`, as the log collector writes them. */
  indexPrefix: string;
  /** Bound on each call to the store; a store that does not answer in time is a 503. */
  requestTimeoutSeconds: number;
  /** Most lines one export returns. */
  exportMaxLines: number;
}

export const SIGNING_ALGORITHMS = ['ES256', 'RS256', 'HS256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

/** The OAuth token service and bearer authentication (src/auth/). */
export interface AuthConfig {
  /** `iss` of every token and of the discovery document. Empty: the platform name. */
  issuer: string;
  /** External base URL used in the discovery document. Empty: derived from each request. */
  publicUrl: string;
  /** OAuth clients as `id:secret[,id:secret…]`. Empty: one client whose id and secret are the platform name. */
  clients: string;
  signingAlgorithm: SigningAlgorithm;
  /** PEM private key (ES256: P-256, RS256: RSA ≥ 2048 bits) that signs new tokens. Empty: an ephemeral key (dev only). */
  signingKeyFile: string;
  /** PEM files (public or private keys) still accepted for verification: keys being rotated in or out. */
  verificationKeyFiles: string[];
  /** File holding the shared secret (≥ 32 bytes) when signingAlgorithm is HS256. */
  hmacSecretFile: string;
  accessTokenMaxAgeSeconds: number;
  refreshTokenMaxAgeSeconds: number;
  /** Leeway for exp/nbf between replicas' clocks. */
  clockSkewSeconds: number;
  /** A new login ends the user's other sessions. */
  singleSession: boolean;
  lockout: {
    /** Failed logins of one user within the window that lock the account until the window passes. */
    maxFailures: number;
    windowSeconds: number;
  };
  /** Token-endpoint requests allowed per client address per minute (0: no limit). */
  addressRequestsPerMinute: number;
  /** How often each replica deletes expired sessions. */
  sessionSweepIntervalSeconds: number;
  /** The first administrator, created at start when no User of that name exists (empty username: none). */
  bootstrapAdmin: {
    username: string;
    /** File holding the password (e.g. a mounted Secret). */
    passwordFile: string;
    groups: string[];
  };
}

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  readonly key: string;
  constructor(key: string, message: string) {
    super(`invalid configuration: ${key}: ${message}`);
    this.name = 'ConfigError';
    this.key = key;
  }
}

type FieldKind =
  /** `secret`: the value never appears in an error message. */
  | { type: 'string'; pattern?: RegExp; patternHint?: string; allowEmpty?: boolean; secret?: boolean }
  | { type: 'int'; min: number; max: number }
  | { type: 'bool' }
  | { type: 'enum'; values: readonly string[] }
  /** A YAML sequence of strings, or one comma-separated string (env, flags). */
  | { type: 'list'; itemError: (item: string) => string | undefined };

/** Every configuration key, its kind and its default. The dotted key is also the flag name. */
const FIELDS: Record<string, { kind: FieldKind; default: string | number | boolean | readonly string[] }> = {
  platformName: {
    kind: {
      type: 'string',
      pattern: /^[a-z][a-z0-9-]{0,30}[a-z0-9]$/,
      patternHint: 'a lowercase DNS label, e.g. "platform"',
    },
    default: 'platform',
  },
  'http.host': { kind: { type: 'string' }, default: '0.0.0.0' },
  'http.port': { kind: { type: 'int', min: 0, max: 65535 }, default: 9090 },
  'http.shutdownGraceSeconds': { kind: { type: 'int', min: 0, max: 3600 }, default: 30 },
  'http.requestTimeoutSeconds': { kind: { type: 'int', min: 1, max: 3600 }, default: 60 },
  'http.trustedProxies': { kind: { type: 'list', itemError: ipRangeError }, default: [] },
  'http.tlsCertFile': { kind: { type: 'string', allowEmpty: true }, default: '' },
  'http.tlsKeyFile': { kind: { type: 'string', allowEmpty: true }, default: '' },
  'log.level': { kind: { type: 'enum', values: LOG_LEVELS }, default: 'info' },
  'auth.issuer': { kind: { type: 'string', allowEmpty: true }, default: '' },
  'auth.publicUrl': {
    kind: {
      type: 'string',
      allowEmpty: true,
      pattern: /^(https?:\/\/[^/\s]+(\/\S*)?)?$/,
      patternHint: 'an http(s) URL',
    },
    default: '',
  },
  'auth.clients': {
    kind: {
      type: 'string',
      allowEmpty: true,
      pattern: /^([A-Za-z0-9._~-]+:[^,\s]+(,[A-Za-z0-9._~-]+:[^,\s]+)*)?$/,
      patternHint: 'a list like "id:secret,id2:secret2"',
      secret: true,
    },
    default: '',
  },
  'auth.signingAlgorithm': { kind: { type: 'enum', values: SIGNING_ALGORITHMS }, default: 'ES256' },
  'auth.signingKeyFile': { kind: { type: 'string', allowEmpty: true }, default: '' },
  'auth.verificationKeyFiles': { kind: { type: 'list', itemError: () => undefined }, default: [] },
  'auth.hmacSecretFile': { kind: { type: 'string', allowEmpty: true }, default: '' },
  'auth.accessTokenMaxAgeSeconds': { kind: { type: 'int', min: 60, max: 86_400 }, default: 7200 },
  'auth.refreshTokenMaxAgeSeconds': { kind: { type: 'int', min: 120, max: 90 * 86_400 }, default: 14_400 },
  'auth.clockSkewSeconds': { kind: { type: 'int', min: 0, max: 300 }, default: 10 },
  'auth.singleSession': { kind: { type: 'bool' }, default: false },
  'auth.lockout.maxFailures': { kind: { type: 'int', min: 1, max: 100 }, default: 10 },
  'auth.lockout.windowSeconds': { kind: { type: 'int', min: 1, max: 86_400 }, default: 600 },
  'auth.addressRequestsPerMinute': { kind: { type: 'int', min: 0, max: 1_000_000 }, default: 120 },
  'auth.sessionSweepIntervalSeconds': { kind: { type: 'int', min: 1, max: 86_400 }, default: 60 },
  'auth.bootstrapAdmin.username': {
    kind: {
      type: 'string',
      allowEmpty: true,
      pattern: /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$/,
      patternHint: 'a lowercase DNS subdomain (a User object name)',
    },
    default: '',
  },
  'auth.bootstrapAdmin.passwordFile': { kind: { type: 'string', allowEmpty: true }, default: '' },
  'auth.bootstrapAdmin.groups': {
    kind: {
      type: 'list',
      itemError: (g) => (g.length > 253 ? `group ${g.slice(0, 20)}… is too long` : undefined),
    },
    default: ['platform-admins'],
  },
  'kubernetes.kubeconfig': { kind: { type: 'string', allowEmpty: true }, default: '' },
  'kubernetes.context': { kind: { type: 'string', allowEmpty: true }, default: '' },
  'authz.allowedTtlSeconds': { kind: { type: 'int', min: 0, max: 3600 }, default: 10 },
  'authz.deniedTtlSeconds': { kind: { type: 'int', min: 0, max: 3600 }, default: 2 },
  'authz.staleIfErrorSeconds': { kind: { type: 'int', min: 0, max: 86400 }, default: 300 },
  'authz.cacheEntries': { kind: { type: 'int', min: 1, max: 10_000_000 }, default: 10_000 },
  'authz.reviewTimeoutSeconds': { kind: { type: 'int', min: 1, max: 300 }, default: 5 },
  'resources.gzipMinBytes': { kind: { type: 'int', min: 0, max: 1 << 30 }, default: 8192 },
  'resources.responseMemoMegabytes': { kind: { type: 'int', min: 0, max: 65536 }, default: 64 },
  'logging.hosts': { kind: { type: 'list', itemError: storeHostError }, default: [] },
  'logging.username': { kind: { type: 'string', allowEmpty: true }, default: '' },
  'logging.password': { kind: { type: 'string', allowEmpty: true, secret: true }, default: '' },
  'logging.tls.caFile': { kind: { type: 'string', allowEmpty: true }, default: '' },
  'logging.tls.insecureSkipVerify': { kind: { type: 'bool' }, default: false },
  'logging.indexPrefix': {
    kind: {
      type: 'string',
      pattern: /^[a-z0-9][a-z0-9._-]{0,200}$/,
      patternHint: 'an index name prefix (lowercase letters, digits, ".", "_", "-")',
    },
    default: 'ks-logstash-log',
  },
  'logging.requestTimeoutSeconds': { kind: { type: 'int', min: 1, max: 600 }, default: 30 },
  'logging.exportMaxLines': { kind: { type: 'int', min: 1, max: 10_000_000 }, default: 100_000 },
  'proxy.responseTimeoutSeconds': { kind: { type: 'int', min: 1, max: 3600 }, default: 30 },
};

export const CONFIG_KEYS = Object.keys(FIELDS);

/** Environment variable for a key: http.shutdownGraceSeconds → PLATFORM_HTTP_SHUTDOWN_GRACE_SECONDS. */
export function envNameFor(key: string): string {
  return (
    'PLATFORM_' +
    key
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .replace(/\./g, '_')
      .toUpperCase()
  );
}

export interface ConfigSources {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  readFile: (path: string) => string;
}

/** Builds and validates the configuration. Throws ConfigError naming the first bad key. */
export function loadConfig(sources: ConfigSources): Config {
  const flags = parseFlags(sources.argv);
  const filePath = flags.get('config') ?? sources.env['PLATFORM_CONFIG'];
  flags.delete('config');

  const raw = new Map<string, unknown>();
  for (const [key, field] of Object.entries(FIELDS)) raw.set(key, field.default);

  if (filePath) {
    for (const [key, value] of flattenFile(filePath, sources.readFile)) raw.set(key, value);
  }
  for (const key of CONFIG_KEYS) {
    const value = sources.env[envNameFor(key)];
    if (value !== undefined) raw.set(key, value);
  }
  for (const [key, value] of flags) {
    if (!(key in FIELDS))
      throw new ConfigError(
        `--${key}`,
        `unknown flag; known flags: --config, ${CONFIG_KEYS.map((k) => `--${k}`).join(', ')}`,
      );
    raw.set(key, value);
  }

  const value = (key: string) => coerce(key, FIELDS[key]!.kind, raw.get(key));
  const auth: AuthConfig = {
    issuer: value('auth.issuer') as string,
    publicUrl: value('auth.publicUrl') as string,
    clients: value('auth.clients') as string,
    signingAlgorithm: value('auth.signingAlgorithm') as SigningAlgorithm,
    signingKeyFile: value('auth.signingKeyFile') as string,
    verificationKeyFiles: value('auth.verificationKeyFiles') as string[],
    hmacSecretFile: value('auth.hmacSecretFile') as string,
    accessTokenMaxAgeSeconds: value('auth.accessTokenMaxAgeSeconds') as number,
    refreshTokenMaxAgeSeconds: value('auth.refreshTokenMaxAgeSeconds') as number,
    clockSkewSeconds: value('auth.clockSkewSeconds') as number,
    singleSession: value('auth.singleSession') as boolean,
    lockout: {
      maxFailures: value('auth.lockout.maxFailures') as number,
      windowSeconds: value('auth.lockout.windowSeconds') as number,
    },
    addressRequestsPerMinute: value('auth.addressRequestsPerMinute') as number,
    sessionSweepIntervalSeconds: value('auth.sessionSweepIntervalSeconds') as number,
    bootstrapAdmin: {
      username: value('auth.bootstrapAdmin.username') as string,
      passwordFile: value('auth.bootstrapAdmin.passwordFile') as string,
      groups: value('auth.bootstrapAdmin.groups') as string[],
    },
  };
  if (auth.bootstrapAdmin.username && !auth.bootstrapAdmin.passwordFile) {
    throw new ConfigError(
      'auth.bootstrapAdmin.passwordFile',
      'required when auth.bootstrapAdmin.username is set',
    );
  }
  if (auth.refreshTokenMaxAgeSeconds <= auth.accessTokenMaxAgeSeconds) {
    throw new ConfigError(
      'auth.refreshTokenMaxAgeSeconds',
      `${auth.refreshTokenMaxAgeSeconds} must be longer than auth.accessTokenMaxAgeSeconds (${auth.accessTokenMaxAgeSeconds})`,
    );
  }
  if (auth.signingAlgorithm === 'HS256' && !auth.hmacSecretFile) {
    throw new ConfigError('auth.hmacSecretFile', 'required when auth.signingAlgorithm is HS256');
  }
  const tlsCert = value('http.tlsCertFile') as string;
  const tlsKey = value('http.tlsKeyFile') as string;
  if (Boolean(tlsCert) !== Boolean(tlsKey)) {
    throw new ConfigError(
      tlsCert ? 'http.tlsKeyFile' : 'http.tlsCertFile',
      'set both http.tlsCertFile and http.tlsKeyFile, or neither',
    );
  }
  const config: Config = {
    platformName: value('platformName') as string,
    http: {
      host: value('http.host') as string,
      port: value('http.port') as number,
      shutdownGraceSeconds: value('http.shutdownGraceSeconds') as number,
      requestTimeoutSeconds: value('http.requestTimeoutSeconds') as number,
      trustedProxies: value('http.trustedProxies') as string[],
      tlsCertFile: value('http.tlsCertFile') as string,
      tlsKeyFile: value('http.tlsKeyFile') as string,
    },
    log: { level: value('log.level') as LogLevel },
    auth,
    kubernetes: {
      kubeconfig: value('kubernetes.kubeconfig') as string,
      context: value('kubernetes.context') as string,
    },
    authz: {
      allowedTtlSeconds: value('authz.allowedTtlSeconds') as number,
      deniedTtlSeconds: value('authz.deniedTtlSeconds') as number,
      staleIfErrorSeconds: value('authz.staleIfErrorSeconds') as number,
      cacheEntries: value('authz.cacheEntries') as number,
      reviewTimeoutSeconds: value('authz.reviewTimeoutSeconds') as number,
    },
    resources: {
      gzipMinBytes: value('resources.gzipMinBytes') as number,
      responseMemoMegabytes: value('resources.responseMemoMegabytes') as number,
    },
    logging: {
      hosts: value('logging.hosts') as string[],
      username: value('logging.username') as string,
      password: value('logging.password') as string,
      tls: {
        caFile: value('logging.tls.caFile') as string,
        insecureSkipVerify: value('logging.tls.insecureSkipVerify') as boolean,
      },
      indexPrefix: value('logging.indexPrefix') as string,
      requestTimeoutSeconds: value('logging.requestTimeoutSeconds') as number,
      exportMaxLines: value('logging.exportMaxLines') as number,
    },
    proxy: {
      responseTimeoutSeconds: value('proxy.responseTimeoutSeconds') as number,
    },
  };
  if (config.logging.password && !config.logging.username)
    throw new ConfigError('logging.password', 'is set but logging.username is empty');
  return config;
}

/** Why an item of `logging.hosts` is not an http(s) base URL without credentials, or undefined when it is. */
function storeHostError(host: string): string | undefined {
  let url: URL;
  try {
    url = new URL(host);
  } catch {
    // Not echoed when it may hold credentials (user:password@host).
    return `${host.includes('@') ? 'an item' : JSON.stringify(host)} is not a URL (e.g. https://opensearch:9200)`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `${url.protocol} is not http: or https: in ${JSON.stringify(url.host)}`;
  if (url.username || url.password)
    return `credentials in the URL of ${url.host} are not allowed: use logging.username and logging.password`;
  if (url.search || url.hash) return `the URL of ${url.host} must not have a query or fragment`;
  return undefined;
}

function parseFlags(argv: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--'))
      throw new ConfigError(arg, 'unexpected argument; flags look like --http.port=9090');
    const eq = arg.indexOf('=');
    if (eq > 0) {
      flags.set(arg.slice(2, eq), arg.slice(eq + 1));
    } else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new ConfigError(arg, 'flag needs a value');
      flags.set(arg.slice(2), next);
      i++;
    }
  }
  return flags;
}

function flattenFile(path: string, readFile: (p: string) => string): Map<string, unknown> {
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    throw new ConfigError(
      'config',
      `cannot read file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(
      'config',
      `file ${path} is not valid YAML: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  const out = new Map<string, unknown>();
  if (doc === null || doc === undefined) return out;
  const walk = (node: unknown, prefix: string) => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      throw new ConfigError(prefix || 'config', `expected a mapping in ${path}`);
    }
    for (const [k, v] of Object.entries(node)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (key in FIELDS) out.set(key, v);
      else if (CONFIG_KEYS.some((known) => known.startsWith(`${key}.`))) walk(v, key);
      else throw new ConfigError(key, `unknown key in ${path}`);
    }
  };
  walk(doc, '');
  return out;
}

function coerce(key: string, kind: FieldKind, value: unknown): string | number | boolean | string[] {
  switch (kind.type) {
    case 'string': {
      if (typeof value !== 'string')
        throw new ConfigError(
          key,
          `expected a string, got ${kind.secret ? `a ${typeof value}` : describe(value)}`,
        );
      if (!kind.allowEmpty && value === '') throw new ConfigError(key, 'must not be empty');
      if (kind.pattern && !kind.pattern.test(value)) {
        // A secret's value is never echoed, not even a malformed one.
        const shown = kind.secret ? 'the value' : JSON.stringify(value);
        throw new ConfigError(key, `${shown} is not ${kind.patternHint ?? `matching ${kind.pattern}`}`);
      }
      return value;
    }
    case 'int': {
      const n =
        typeof value === 'number'
          ? value
          : typeof value === 'string' && /^-?\d+$/.test(value.trim())
            ? Number(value)
            : NaN;
      if (!Number.isInteger(n)) throw new ConfigError(key, `expected an integer, got ${describe(value)}`);
      if (n < kind.min || n > kind.max)
        throw new ConfigError(key, `${n} is out of range [${kind.min}, ${kind.max}]`);
      return n;
    }
    case 'bool': {
      if (value === true || value === 'true') return true;
      if (value === false || value === 'false') return false;
      throw new ConfigError(key, `expected true or false, got ${describe(value)}`);
    }
    case 'enum': {
      if (typeof value !== 'string' || !kind.values.includes(value)) {
        throw new ConfigError(key, `expected one of ${kind.values.join(', ')}, got ${describe(value)}`);
      }
      return value;
    }
    case 'list': {
      const items =
        typeof value === 'string'
          ? value.split(',')
          : Array.isArray(value) && value.every((v) => typeof v === 'string')
            ? value
            : undefined;
      if (!items) throw new ConfigError(key, `expected a list of strings, got ${describe(value)}`);
      const trimmed = items.map((item) => item.trim()).filter((item) => item !== '');
      for (const item of trimmed) {
        const problem = kind.itemError(item);
        if (problem) throw new ConfigError(key, problem);
      }
      return trimmed;
    }
  }
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `${typeof value} ${JSON.stringify(value)}`;
}
