import Type, {
  type TArray,
  type TBoolean,
  type TEnum,
  type TInteger,
  type TSchema,
  type TString,
} from 'typebox';
import { ipRangeError } from './ip-ranges.ts';

/*
 * Every configuration key, declared once. Each key's schema carries its type, its bounds, its default and
 * the text of its row in docs/configuration.md. From this one declaration come the `Config` type
 * (config.ts), the parser of file, environment and flags (config.ts), the `config` section of the
 * chart's values.schema.json and the table in docs/configuration.md (both written by `npm run generate`).
 *
 * Besides JSON Schema's keywords a key may carry two of ours, which the chart's schema leaves out:
 * `patternHint` says in words what `pattern` wants (it is what an error message shows), and
 * `docDefault` describes a default that is computed at start rather than written here.
 * JSON Schema's `writeOnly` marks a secret: its value is never echoed, and the chart's schema gets no
 * `pattern` for it (helm would print the value when it did not match).
 */

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export const ACCESS_LOG_MODES = ['all', 'sampled', 'exceptions'] as const;
export const SIGNING_ALGORITHMS = ['ES256', 'RS256', 'HS256'] as const;

interface Documented {
  /** The key's row in docs/configuration.md (Markdown, one paragraph). */
  doc: string;
  /** Shown instead of the default when the real default is computed at start. */
  docDefault?: string;
}

interface TextOptions extends Documented {
  default: string;
  /** An empty string is a valid value (most file paths: empty means "none"). */
  allowEmpty?: boolean;
  /** A JSON Schema (ECMAScript and RE2 alike) pattern the whole value must match. */
  pattern?: string;
  patternHint?: string;
  /** A secret: never echoed in an error message, no pattern in the chart's schema. */
  secret?: boolean;
}

function text(o: TextOptions): TString {
  return Type.String({
    default: o.default,
    ...(o.allowEmpty ? {} : { minLength: 1 }),
    ...(o.pattern === undefined ? {} : { pattern: o.pattern }),
    ...(o.patternHint === undefined ? {} : { patternHint: o.patternHint }),
    ...(o.secret ? { writeOnly: true } : {}),
    ...described(o),
  });
}

/** An optional file path or name: empty means none. */
function path(doc: string): TString {
  return text({ default: '', allowEmpty: true, doc });
}

function integer(o: Documented & { default: number; minimum: number; maximum: number }): TInteger {
  return Type.Integer({ default: o.default, minimum: o.minimum, maximum: o.maximum, ...described(o) });
}

function flag(o: Documented & { default: boolean }): TBoolean {
  return Type.Boolean({ default: o.default, ...described(o) });
}

function oneOf<const Values extends string[]>(
  values: readonly [...Values],
  o: Documented & { default: Values[number] },
): TEnum<Values> {
  return Type.Enum(values, { type: 'string', default: o.default, ...described(o) });
}

/**
 * A list of strings: a YAML sequence in the file, comma-separated in the environment and flags.
 * `itemError` says why one item is wrong (the parser and the final check both apply it).
 */
function list(
  o: Documented & { default: string[]; itemError?: (item: string) => string | undefined },
): TArray<TString> {
  const itemError = o.itemError;
  const item = Type.String({ minLength: 1 });
  return Type.Array(
    itemError
      ? Type.Refine(
          item,
          (s) => itemError(s) === undefined,
          (s) => itemError(s) ?? '',
        )
      : item,
    { default: o.default, ...described(o) },
  );
}

function described(o: Documented): { description: string; docDefault?: string } {
  return o.docDefault === undefined
    ? { description: o.doc }
    : { description: o.doc, docDefault: o.docDefault };
}

/** A group of keys (a nested mapping in the file). Closed: an unknown key is an error. */
function group<Properties extends Record<string, TSchema>>(description: string, properties: Properties) {
  return Type.Object(properties, { description, additionalProperties: false });
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

function groupNameError(group: string): string | undefined {
  return group.length > 253 ? `group ${group.slice(0, 20)}… is too long` : undefined;
}

export const ConfigSchema = Type.Object(
  {
    platformName: text({
      default: 'platform',
      pattern: '^[a-z][a-z0-9-]{0,30}[a-z0-9]$',
      patternHint: 'a lowercase DNS label, e.g. "platform"',
      doc: 'Lowercase platform name: forms API group domains (`resources.<name>.io`), the default OAuth client id/secret and the token issuer.',
    }),
    compatibleRelease: text({
      default: 'v3.4.1',
      pattern: '^v\\d+\\.\\d+\\.\\d+$',
      patternHint: 'a release like "v3.4.1"',
      doc: "With `platformName: kubesphere`: the original's release whose API this server implements. `/kapis/version` reports it as `gitVersion` (and its numbers as `gitMajor`, `gitMinor`), so the original's console chooses that release's paths and features; this server's own version is in `platformApiserver`. Ignored under any other platform name. See [`/kapis/version`](version.md).",
    }),
    http: group('The HTTP listener.', {
      host: text({ default: '0.0.0.0', doc: 'Listen address.' }),
      port: integer({
        default: 9090,
        minimum: 0,
        maximum: 65535,
        doc: 'Listen port (`0` picks a free one; the `listening` log line says which).',
      }),
      shutdownGraceSeconds: integer({
        default: 30,
        minimum: 0,
        maximum: 3600,
        doc: 'After SIGTERM/SIGINT: readiness turns false, the listener closes, in-flight requests get this long to finish, then the process exits 0.',
      }),
      requestTimeoutSeconds: integer({
        default: 60,
        minimum: 1,
        maximum: 3600,
        doc: "Limit for a client to send a request's headers and body (slow-client protection; responses such as watches are not limited).",
      }),
      trustedProxies: list({
        default: [],
        itemError: ipRangeError,
        doc: 'Addresses or CIDR ranges (`10.244.0.0/16`, `fd00::/8`, or `loopback`, `linklocal`, `uniquelocal`) of reverse proxies whose `X-Forwarded-For` is believed; a YAML list, or comma-separated in the environment variable and flag. The client address (access log `remoteAddress`, login limiter) is the right-most `X-Forwarded-For` entry not added by a trusted proxy; from any other peer the header is ignored, so a client cannot claim another address. Empty: the TCP peer, always.',
      }),
      tlsCertFile: path(
        'PEM certificate (with chain) to serve HTTPS directly, for clusters where no Ingress terminates TLS; reloaded when the file changes (cert-manager rotation). Set together with `http.tlsKeyFile`.',
      ),
      tlsKeyFile: path('PEM private key of that certificate. Both empty: plain HTTP behind the Ingress.'),
      threadPoolNice: integer({
        default: 10,
        minimum: 0,
        maximum: 19,
        doc: "Nice value added to libuv's pool threads (bcrypt comparisons, gzip of large bodies) so they use idle cycles but yield to the event loop: a login storm does not slow other routes. `0`: unchanged. Linux only.",
      }),
    }),
    log: group("The server's own log (JSON lines on stdout).", {
      level: oneOf(LOG_LEVELS, { default: 'info', doc: '`error`, `warn`, `info` or `debug`.' }),
      access: group('Which requests get an access line ([access log](access-log.md)).', {
        mode: oneOf(ACCESS_LOG_MODES, {
          default: 'sampled',
          doc: '`all`; `sampled`: every exceptional request (4xx/5xx including 401/403, every write including logins and token refreshes, slow or aborted requests) plus one routine successful read or probe in `log.access.sampleEvery`, marked `sampled: N`; `exceptions`: exceptional requests only. Volumes per 1,000 req/s in [the access log](access-log.md#volume).',
        }),
        sampleEvery: integer({
          default: 100,
          minimum: 1,
          maximum: 1_000_000,
          doc: 'Under `sampled`, one routine request in this many is logged.',
        }),
        slowMs: integer({
          default: 1000,
          minimum: 1,
          maximum: 3_600_000,
          doc: 'Requests at least this slow are always logged (watches and other streams too, when they end).',
        }),
      }),
    }),
    auth: group('The OAuth token service and bearer authentication.', {
      issuer: text({
        default: '',
        allowEmpty: true,
        docDefault: '*(platform name)*',
        doc: '`iss` of every token and of the discovery document.',
      }),
      publicUrl: text({
        default: '',
        allowEmpty: true,
        pattern: '^(https?://[^/\\s]+(/\\S*)?)?$',
        patternHint: 'an http(s) URL',
        doc: 'External base URL used in the discovery document; empty: taken from each request.',
      }),
      clients: text({
        default: '',
        allowEmpty: true,
        pattern: '^([A-Za-z0-9._~-]+:[^,\\s]+(,[A-Za-z0-9._~-]+:[^,\\s]+)*)?$',
        patternHint: 'a list like "id:secret,id2:secret2"',
        secret: true,
        docDefault: '*(platform name as id and secret)*',
        doc: 'OAuth clients as `id:secret[,id:secret…]`; setting it replaces the default client. Never shown in errors.',
      }),
      signingAlgorithm: oneOf(SIGNING_ALGORITHMS, {
        default: 'ES256',
        doc: '`ES256`, `RS256` or `HS256`.',
      }),
      signingKeyFile: path(
        'PEM private key that signs tokens (ES256: P-256, RS256: RSA ≥ 2048 bits). Empty: an ephemeral key with a loud warning (development only).',
      ),
      verificationKeyFiles: list({
        default: [],
        doc: 'PEM files (private or public; a YAML list or comma-separated) whose tokens are still accepted: keys being rotated in or out.',
      }),
      hmacSecretFile: path(
        'File with the shared secret (≥ 32 bytes) when `auth.signingAlgorithm` is `HS256`.',
      ),
      accessTokenMaxAgeSeconds: integer({
        default: 7200,
        minimum: 60,
        maximum: 86_400,
        doc: 'Access token lifetime (`expires_in`).',
      }),
      refreshTokenMaxAgeSeconds: integer({
        default: 14_400,
        minimum: 120,
        maximum: 90 * 86_400,
        doc: "Refresh token lifetime (must be longer than the access token's); a session ends when its refresh token expires unrefreshed.",
      }),
      refreshGraceSeconds: integer({
        default: 5,
        minimum: 0,
        maximum: 60,
        doc: 'A refresh token repeated within this many seconds of its redemption (a retry, or the same token sent to two replicas at once) gets a valid answer for the same session instead of revoking it; later reuse still revokes. `0` turns the grace off.',
      }),
      clockSkewSeconds: integer({
        default: 10,
        minimum: 0,
        maximum: 300,
        doc: 'Leeway for `exp`/`nbf` between clocks.',
      }),
      singleSession: flag({ default: false, doc: "A new login ends the user's other sessions." }),
      maxSessionsPerUser: integer({
        default: 100,
        minimum: 0,
        maximum: 100_000,
        doc: "Sessions one user may hold at once. A login beyond it ends the user's sessions nearest to expiry (the least recently refreshed), so a script that logs in without logging out cannot pile them up. `0`: no limit.",
      }),
      lockout: group('Locking an account after repeated failed logins.', {
        maxFailures: integer({
          default: 10,
          minimum: 1,
          maximum: 100,
          doc: 'Failed logins of one user within the window that lock the account (429) until the window passes.',
        }),
        windowSeconds: integer({ default: 600, minimum: 1, maximum: 86_400, doc: 'The lockout window.' }),
      }),
      passwordConcurrency: integer({
        default: 0,
        minimum: 0,
        maximum: 1024,
        docDefault: '`0` (one per CPU core)',
        doc: 'Password verifications (bcrypt) run at once; `0`: one per CPU core.',
      }),
      passwordQueue: integer({
        default: 8,
        minimum: 0,
        maximum: 100_000,
        doc: 'Logins waiting for a verification slot; beyond them a login is refused at once with 503 `temporarily_unavailable` and `Retry-After`, so a login storm cannot starve other routes.',
      }),
      loginThread: flag({
        default: true,
        doc: 'Serve the password grant on a thread of its own (its own watches of users and sessions), so a login storm’s session, ledger and record writes do not delay the other routes; it costs about 25 MB of memory. `false`: on the main thread.',
      }),
      addressRequestsPerMinute: integer({
        default: 120,
        minimum: 0,
        maximum: 1_000_000,
        doc: 'Token/revoke requests allowed per client address per minute on each replica (`0`: no limit).',
      }),
      sessionSweepIntervalSeconds: integer({
        default: 60,
        minimum: 1,
        maximum: 86_400,
        doc: 'How often each replica deletes expired sessions and lifts expired lockouts.',
      }),
      bootstrapAdmin: group('The first administrator, created at start when no User of that name exists.', {
        username: text({
          default: '',
          allowEmpty: true,
          pattern: '^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$',
          patternHint: 'a lowercase DNS subdomain (a User object name)',
          doc: 'First administrator, created at start when no User of that name exists (an existing one is never changed). Empty: none.',
        }),
        passwordFile: path(
          "File with that administrator's password (e.g. a mounted Secret); required with the username.",
        ),
        groups: list({
          default: ['platform-admins'],
          itemError: groupNameError,
          doc: "That administrator's groups (a YAML list or comma-separated).",
        }),
      }),
    }),
    kubernetes: group('How the server reaches the kube-apiserver.', {
      kubeconfig: path(
        'Path of a kubeconfig; empty means in-cluster config in a Pod, else the default kubeconfig.',
      ),
      context: path('Context in that kubeconfig; empty means its current context.'),
    }),
    leaderElection: group(
      'The background work that runs in one replica at a time ([reconcilers](reconcilers.md)), elected with a Kubernetes Lease.',
      {
        enabled: flag({
          default: true,
          doc: 'Compete for the lease and, while holding it, run the reconcilers. `false`: never run them (for example while the original system’s controller manager still does this work).',
        }),
        leaseName: text({
          default: '',
          allowEmpty: true,
          pattern: '^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)?$',
          patternHint: 'a lowercase DNS subdomain (a Lease name)',
          docDefault: '`<platformName>-apiserver`',
          doc: 'Name of the `coordination.k8s.io/v1` Lease the replicas compete for.',
        }),
        leaseNamespace: text({
          default: '',
          allowEmpty: true,
          pattern: '^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?$',
          patternHint: 'a namespace name',
          docDefault: "the Pod's namespace, else `default`",
          doc: "Namespace of that Lease. Empty: the server's own namespace when it runs in a Pod (`POD_NAMESPACE`, else the ServiceAccount's namespace file), otherwise `default`.",
        }),
        leaseDurationSeconds: integer({
          default: 15,
          minimum: 2,
          maximum: 300,
          doc: 'How long the lease stands without renewal before another replica may take it: a leader that died without releasing it (SIGKILL, a lost node) is replaced after about this long plus `leaderElection.retryPeriodSeconds`; a stopped leader releases it at once.',
        }),
        renewDeadlineSeconds: integer({
          default: 10,
          minimum: 1,
          maximum: 299,
          doc: 'A leader that could not renew the lease for this long stops its work (shorter than `leaderElection.leaseDurationSeconds`, so it has stopped before anyone else may start).',
        }),
        retryPeriodSeconds: integer({
          default: 2,
          minimum: 1,
          maximum: 60,
          doc: 'How often the leader renews the lease and the other replicas try to take it.',
        }),
      },
    ),
    authz: group('The cache of SubjectAccessReview answers.', {
      allowedTtlSeconds: integer({
        default: 10,
        minimum: 0,
        maximum: 3600,
        doc: 'How long an "allowed" SubjectAccessReview answer is reused for the same user, groups and question.',
      }),
      deniedTtlSeconds: integer({
        default: 2,
        minimum: 0,
        maximum: 3600,
        doc: 'How long a "denied" answer is reused (short, so a new RoleBinding takes effect quickly).',
      }),
      staleIfErrorSeconds: integer({
        default: 300,
        minimum: 0,
        maximum: 86_400,
        doc: 'How long past its TTL an answer may still be used while the kube-apiserver cannot be reached.',
      }),
      cacheEntries: integer({
        default: 10_000,
        minimum: 1,
        maximum: 10_000_000,
        doc: 'Bound on cached authorization answers (least recently used go first).',
      }),
      reviewTimeoutSeconds: integer({
        default: 5,
        minimum: 1,
        maximum: 300,
        doc: 'Timeout of one SubjectAccessReview call.',
      }),
    }),
    resources: group('The cached resource APIs (`/kapis/resources.<platformName>.io/…`).', {
      gzipMinBytes: integer({
        default: 8192,
        minimum: 0,
        maximum: 1 << 30,
        doc: 'Resource API responses at least this large are gzip-compressed for clients that send `Accept-Encoding: gzip`.',
      }),
      responseMemoMegabytes: integer({
        default: 64,
        minimum: 0,
        maximum: 65536,
        doc: 'Bound on list bodies kept for repeated identical queries while the cache is unchanged.',
      }),
    }),
    proxy: group('The impersonating Kubernetes API proxy (`/api`, `/apis`).', {
      responseTimeoutSeconds: integer({
        default: 30,
        minimum: 1,
        maximum: 3600,
        doc: 'How long the kube-apiserver may take to start answering a proxied `/api`, `/apis` request before the caller gets a 504 `Status`; once it answers, streams (watch, exec) are not limited.',
      }),
    }),
    logging: group('The log store behind the log query API.', {
      hosts: list({
        default: [],
        itemError: storeHostError,
        doc: 'Base URLs of the Elasticsearch 7+/OpenSearch nodes holding the container logs (`https://opensearch-cluster-data.logging.svc:9200`); a YAML list, or comma-separated. No credentials in the URL. Empty: logging is not configured and the log API answers 503 (nothing else is affected). See [the log query API](log-query.md#configuring-the-log-store).',
      }),
      username: path('Basic-auth user for the log store; empty: no authentication.'),
      password: text({
        default: '',
        allowEmpty: true,
        secret: true,
        doc: 'Basic-auth password; give it through `PLATFORM_LOGGING_PASSWORD` (e.g. from a Secret) rather than a flag. Never logged or shown in errors.',
      }),
      tls: group("Verifying the log store's certificate.", {
        caFile: path(
          "PEM file of the CA(s) that sign the store's certificate (https hosts); empty: the system's CAs.",
        ),
        insecureSkipVerify: flag({
          default: false,
          doc: 'Accept any certificate from the store. Verification is on by default; this is for tests only.',
        }),
      }),
      indexPrefix: text({
        default: 'ks-logstash-log',
        pattern: '^[a-z0-9][a-z0-9._-]{0,200}$',
        patternHint: 'an index name prefix (lowercase letters, digits, ".", "_", "-")',
        doc: "Daily indices are `<indexPrefix>-YYYY.MM.DD` (UTC), as the log collector's Elasticsearch output writes them.",
      }),
      requestTimeoutSeconds: integer({
        default: 30,
        minimum: 1,
        maximum: 600,
        doc: 'Bound on each call to the store (connect, send, answer); a store that does not answer in time is a 503.',
      }),
      exportMaxLines: integer({
        default: 100_000,
        minimum: 1,
        maximum: 10_000_000,
        doc: 'Most lines one `operation=export` returns.',
      }),
    }),
    monitoring: group(
      'The Prometheus behind the monitoring API (`/kapis/monitoring.<platformName>.io/v1alpha3`).',
      {
        endpoint: text({
          default: '',
          allowEmpty: true,
          pattern: '^$|^https?://[^@/]+(/.*)?$',
          patternHint:
            'an http(s) base URL without credentials (e.g. http://prometheus-operated.monitoring.svc:9090)',
          doc: "Base URL of the Prometheus HTTP API (the original's key). Empty: monitoring is not configured and every named metric answers with a not-configured error (the platform and workspace counts stay real). See [the monitoring API](monitoring-api.md#settings).",
        }),
        bearerTokenFile: path(
          'File holding a bearer token sent to Prometheus (read at start, e.g. a mounted ServiceAccount token); empty: none. Never logged.',
        ),
        caFile: path(
          "PEM file of the CA(s) that sign Prometheus' certificate (https endpoints); empty: the system's CAs.",
        ),
        queryTimeoutSeconds: integer({
          default: 10,
          minimum: 1,
          maximum: 300,
          doc: "Bound on each Prometheus query (also sent as its `timeout`); a query over it is that metric's `error`, the others are answered.",
        }),
        maxConcurrentQueries: integer({
          default: 16,
          minimum: 1,
          maximum: 1000,
          doc: 'Prometheus queries this server runs at once (every request together); the rest wait their turn within their timeout.',
        }),
        maxPointsPerQuery: integer({
          default: 11_000,
          minimum: 1,
          maximum: 1_000_000,
          doc: 'Most points per series a range query may ask for (`(end - start) / step + 1`); more is a 400 naming this limit, before Prometheus is asked (Prometheus itself refuses more than 11,000).',
        }),
        cacheTtlSeconds: integer({
          default: 5,
          minimum: 0,
          maximum: 300,
          doc: 'How long one Prometheus answer is reused for the same query (identical queries in flight share one call too), so that many consoles on one page cost one query. `0`: only in-flight queries are shared.',
        }),
      },
    ),
  },
  {
    description: 'Server configuration; unknown keys are rejected.',
    additionalProperties: false,
  },
);
