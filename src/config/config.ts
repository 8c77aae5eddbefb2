import { parse as parseYaml } from 'yaml';
import Type, { type Static, type TObject } from 'typebox';
import Value from 'typebox/value';
import { configKeys, envNameFor, type ConfigKey } from './keys.ts';
import { ConfigSchema, LOG_LEVELS, SIGNING_ALGORITHMS } from './schema.ts';

export { envNameFor, LOG_LEVELS, SIGNING_ALGORITHMS };

/**
 * The server's one typed configuration object, derived from the schema (src/config/schema.ts), where
 * every key is declared and documented once.
 * Sources, later wins: built-in defaults < YAML file (--config / PLATFORM_CONFIG) < environment < flags.
 */
export type Config = Static<typeof ConfigSchema>;
/** The OAuth token service and bearer authentication. */
export type AuthConfig = Config['auth'];
/** The log store behind the log query API. */
export type LoggingConfig = Config['logging'];
export type LogLevel = (typeof LOG_LEVELS)[number];
/** Which requests get an access line (observability/access-log-policy.ts). */
export type AccessLogSettings = Config['log']['access'];
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

export class ConfigError extends Error {
  readonly key: string;
  constructor(key: string, message: string) {
    super(`invalid configuration: ${key}: ${message}`);
    this.name = 'ConfigError';
    this.key = key;
  }
}

const KEYS: readonly ConfigKey[] = configKeys(ConfigSchema);
const BY_NAME = new Map(KEYS.map((k) => [k.key, k]));

/** Every configuration key, dotted (also the flag name). */
export const CONFIG_KEYS: readonly string[] = KEYS.map((k) => k.key);

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
  for (const { key, keywords } of KEYS) raw.set(key, keywords.default);
  if (filePath) {
    for (const [key, value] of flattenFile(filePath, sources.readFile)) raw.set(key, value);
  }
  for (const { key } of KEYS) {
    const value = sources.env[envNameFor(key)];
    if (value !== undefined) raw.set(key, value);
  }
  for (const [key, value] of flags) {
    if (!BY_NAME.has(key))
      throw new ConfigError(
        `--${key}`,
        `unknown flag; known flags: --config, ${CONFIG_KEYS.map((k) => `--${k}`).join(', ')}`,
      );
    raw.set(key, value);
  }

  const values = new Map(KEYS.map((k) => [k.key, coerce(k, raw.get(k.key))]));
  const config = typed(nest(ConfigSchema, values));
  checkAcrossKeys(config);
  return config;
}

/** The coerced values as the nested object the schema describes. */
function nest(schema: TObject, values: ReadonlyMap<string, unknown>, prefix = ''): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema.properties).map(([name, child]) => {
      const key = prefix ? `${prefix}.${name}` : name;
      return [name, Type.IsObject(child) ? nest(child, values, key) : values.get(key)];
    }),
  );
}

/**
 * The whole object checked against the schema once more, which also tells TypeScript it is a Config.
 * `coerce` has already checked every key, so a failure here is a gap in `coerce`; it still names the key.
 */
function typed(candidate: unknown): Config {
  if (Value.Check(ConfigSchema, candidate)) return candidate;
  const [first] = Value.Errors(ConfigSchema, candidate);
  // The instance path of a list item ends in its index: the key is the path without it.
  const key =
    (first?.instancePath ?? '')
      .split('/')
      .filter((part) => part !== '' && !/^\d+$/.test(part))
      .join('.') || 'config';
  throw new ConfigError(key, first?.message ?? 'does not match the schema');
}

/** Rules that involve more than one key. */
function checkAcrossKeys(config: Config): void {
  const { auth, http, logging, leaderElection } = config;
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
  if (Boolean(http.tlsCertFile) !== Boolean(http.tlsKeyFile)) {
    throw new ConfigError(
      http.tlsCertFile ? 'http.tlsKeyFile' : 'http.tlsCertFile',
      'set both http.tlsCertFile and http.tlsKeyFile, or neither',
    );
  }
  if (logging.password && !logging.username)
    throw new ConfigError('logging.password', 'is set but logging.username is empty');
  if (leaderElection.renewDeadlineSeconds >= leaderElection.leaseDurationSeconds) {
    throw new ConfigError(
      'leaderElection.renewDeadlineSeconds',
      `${leaderElection.renewDeadlineSeconds} must be shorter than leaderElection.leaseDurationSeconds (${leaderElection.leaseDurationSeconds})`,
    );
  }
  if (leaderElection.retryPeriodSeconds >= leaderElection.renewDeadlineSeconds) {
    throw new ConfigError(
      'leaderElection.retryPeriodSeconds',
      `${leaderElection.retryPeriodSeconds} must be shorter than leaderElection.renewDeadlineSeconds (${leaderElection.renewDeadlineSeconds})`,
    );
  }
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
    throw new ConfigError('config', `cannot read file ${path}: ${errorCode(err)}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(
      'config',
      `file ${path} is not valid YAML: ${String(err instanceof Error ? err.message : err).split('\n')[0]}`,
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
      if (BY_NAME.has(key)) out.set(key, v);
      else if (CONFIG_KEYS.some((known) => known.startsWith(`${key}.`))) walk(v, key);
      else throw new ConfigError(key, `unknown key in ${path}`);
    }
  };
  walk(doc, '');
  return out;
}

/** A raw value (from YAML, or a string from the environment or a flag) as the key's type, or a ConfigError. */
function coerce({ key, schema, keywords }: ConfigKey, value: unknown): unknown {
  const { minimum, maximum, minLength, pattern, patternHint, writeOnly: secret } = keywords;
  if (Type.IsInteger(schema)) {
    const n =
      typeof value === 'number'
        ? value
        : typeof value === 'string' && /^-?\d+$/.test(value.trim())
          ? Number(value)
          : NaN;
    if (!Number.isInteger(n)) throw new ConfigError(key, `expected an integer, got ${describe(value)}`);
    if ((minimum !== undefined && n < minimum) || (maximum !== undefined && n > maximum))
      throw new ConfigError(key, `${n} is out of range [${minimum}, ${maximum}]`);
    return n;
  }
  if (Type.IsBoolean(schema)) {
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw new ConfigError(key, `expected true or false, got ${describe(value)}`);
  }
  if (Type.IsEnum(schema)) {
    if (typeof value !== 'string' || !schema.enum.includes(value)) {
      throw new ConfigError(key, `expected one of ${schema.enum.join(', ')}, got ${describe(value)}`);
    }
    return value;
  }
  if (Type.IsArray(schema)) {
    const items =
      typeof value === 'string'
        ? value.split(',')
        : Array.isArray(value) && value.every((v) => typeof v === 'string')
          ? value
          : undefined;
    if (!items) throw new ConfigError(key, `expected a list of strings, got ${describe(value)}`);
    const trimmed = items.map((item) => item.trim()).filter((item) => item !== '');
    const refinements = Type.IsRefine(schema.items) ? schema.items['~refine'] : [];
    for (const item of trimmed) {
      const failed = refinements.find((r) => !r.check(item));
      if (failed) throw new ConfigError(key, failed.error(item));
    }
    return trimmed;
  }
  if (Type.IsString(schema)) {
    if (typeof value !== 'string')
      throw new ConfigError(key, `expected a string, got ${secret ? `a ${typeof value}` : describe(value)}`);
    if (minLength !== undefined && value.length < minLength) throw new ConfigError(key, 'must not be empty');
    if (pattern !== undefined && !new RegExp(pattern, 'u').test(value)) {
      // A secret's value is never echoed, not even a malformed one.
      const shown = secret ? 'the value' : JSON.stringify(value);
      throw new ConfigError(key, `${shown} is not ${patternHint ?? `matching ${pattern}`}`);
    }
    return value;
  }
  throw new Error(`config key ${key}: the parser has no rule for its schema`);
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `${typeof value} ${JSON.stringify(value)}`;
}

function errorCode(err: unknown): string {
  const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
  return typeof code === 'string' ? code : 'error';
}
