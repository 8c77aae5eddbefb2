import { readFileSync } from 'node:fs';
import { loadConfig, ConfigError, type Config } from './config/config.ts';
import { AccessReviewer, subjectAccessReview } from './access/access-review.ts';
import { createCacheMetrics } from './cluster/cache-metrics.ts';
import { loadKubeConfig } from './cluster/kube-config.ts';
import { instrumentKubeConfig } from './cluster/kube-client-metrics.ts';
import { FirstContact } from './cluster/first-contact.ts';
import { createApp } from './http/app.ts';
import { healthRoutes } from './health/health-routes.ts';
import { metricsRoutes } from './health/metrics-routes.ts';
import { openApiRoutes } from './http/openapi-routes.ts';
import { Readiness } from './kernel/readiness.ts';
import { startServer, type RunningServer } from './http/server.ts';
import { loadTlsMaterial } from './http/tls-files.ts';
import { exitGracefullyOnSignals } from './http/shutdown-signals.ts';
import { configuredLogStore } from './log-query/configured-store.ts';
import { logRoutes } from './log-query/log-routes.ts';
import { createLoggingMetrics } from './log-query/logging-metrics.ts';
import { removedLoggingRoutes } from './log-query/removed-routes.ts';
import { createHttpMetrics } from './observability/http-metrics.ts';
import { createLogger, createRequestContextStore } from './observability/logger.ts';
import { createMetricsRegistry } from './observability/metrics.ts';
import { upstreamRequestDuration } from './observability/upstream-metrics.ts';
import { openApiDocument } from './http/openapi-document.ts';
import { healthApi } from './health/health-api.ts';
import { logsApi } from './log-query/logs-api.ts';
import { nodesApi } from './nodes/nodes-api.ts';
import { observabilityApi } from './health/observability-api.ts';
import { NodeCache } from './nodes/node-cache.ts';
import { nodesRoutes } from './nodes/nodes-routes.ts';
import { oauthApi } from './tokens/oauth-api.ts';
import { packageVersion } from './version.ts';
import { AddressLimiter } from './tokens/address-limiter.ts';
import { createAuthMetrics } from './tokens/auth-metrics.ts';
import { AccessTokenAuthenticator, bearerAuthentication } from './tokens/access-token-authenticator.ts';
import { createKubeProxy, kubeProxyRoutes } from './kube-proxy/kube-proxy.ts';
import { ensureBootstrapAdmin, readBootstrapPassword, type BootstrapAdmin } from './tokens/bootstrap-admin.ts';
import { ClientRegistry, parseClients } from './tokens/clients.ts';
import { IamApi } from './tokens/iam-api.ts';
import { iamGroupFor, type SessionObject, type UserObject } from './tokens/iam-resources.ts';
import { oauthRoutes } from './tokens/oauth-routes.ts';
import { OAuthService } from './tokens/oauth-service.ts';
import { PasswordVerifier } from './tokens/passwords.ts';
import { SessionStore } from './tokens/session-store.ts';
import { ephemeralKeySet, KeyError, loadKeySet, type KeySet } from './tokens/signing-keys.ts';
import { TokenService } from './tokens/tokens.ts';
import { UserStore } from './tokens/user-store.ts';

/** Composes the server from its configuration. The only place that wires modules together. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<RunningServer> {
  const config: Config = loadConfig({ argv, env, readFile: (p) => readFileSync(p, 'utf8') });
  // Fail fast: an unreadable or mismatched certificate pair names its key before any cluster work.
  if (config.http.tlsCertFile)
    loadTlsMaterial({ certFile: config.http.tlsCertFile, keyFile: config.http.tlsKeyFile });

  const requestContext = createRequestContextStore();
  const logger = createLogger({ level: config.log.level, context: requestContext });
  const registry = createMetricsRegistry();
  const loggingMetrics = createLoggingMetrics(registry);
  const kc = loadKubeConfig(config.kubernetes, env);
  const logging = configuredLogStore(config.logging, {
    metrics: loggingMetrics,
    readFile: (p) => readFileSync(p, 'utf8'),
  });

  // Before any client is made from kc: every request to the kube-apiserver is then measured.
  instrumentKubeConfig(kc, upstreamRequestDuration(registry));

  const readiness = new Readiness();
  const firstContact = new FirstContact(kc, logger);
  readiness.register('kube-apiserver', () => firstContact.reached);
  firstContact.start();

  const cacheMetrics = createCacheMetrics(registry);
  const nodeCache = new NodeCache({ kubeConfig: kc, logger, metrics: cacheMetrics });
  readiness.register('nodes-cache', () => nodeCache.synced);
  nodeCache.start();
  const accessReviewer = new AccessReviewer({
    review: subjectAccessReview(kc, config.authz.reviewTimeoutSeconds * 1000),
    allowedTtlMs: config.authz.allowedTtlSeconds * 1000,
    deniedTtlMs: config.authz.deniedTtlSeconds * 1000,
    staleIfErrorMs: config.authz.staleIfErrorSeconds * 1000,
    maxEntries: config.authz.cacheEntries,
    registry,
    logger,
  });

  // --- authentication: keys, users and sessions (custom resources), the token service, bearer checks ---
  const authConfig = config.auth;
  const configuredKeys = loadKeySet({
    algorithm: authConfig.signingAlgorithm,
    signingKeyFile: authConfig.signingKeyFile,
    verificationKeyFiles: authConfig.verificationKeyFiles,
    hmacSecretFile: authConfig.hmacSecretFile,
    readFile: (p) => readFileSync(p.trim()),
  });
  const keys: KeySet =
    configuredKeys ?? ephemeralKeySet(authConfig.signingAlgorithm === 'RS256' ? 'RS256' : 'ES256');
  if (!configuredKeys) {
    logger.warn(
      'NO SIGNING KEY CONFIGURED (auth.signingKeyFile): using an ephemeral key. Tokens die with this process and ' +
        'other replicas reject them. Development only: production supplies keys from a Secret.',
      { kid: keys.signing.kid },
    );
  }
  let bootstrapAdmin: BootstrapAdmin | undefined;
  if (authConfig.bootstrapAdmin.username) {
    try {
      bootstrapAdmin = {
        username: authConfig.bootstrapAdmin.username,
        groups: authConfig.bootstrapAdmin.groups,
        password: readBootstrapPassword(authConfig.bootstrapAdmin.passwordFile, (p) =>
          readFileSync(p, 'utf8'),
        ),
      };
    } catch (err) {
      throw new ConfigError('auth.bootstrapAdmin.passwordFile', (err as Error).message);
    }
  }
  const iamApi = new IamApi(kc, iamGroupFor(config.platformName));
  const dropManagedFields = <T extends UserObject | SessionObject>(o: T): T => ({
    ...o,
    metadata: { ...o.metadata, managedFields: undefined },
  });
  const userInformer = iamApi.informer<UserObject>('users', {
    logger,
    metrics: cacheMetrics,
    transform: dropManagedFields,
  });
  const sessionInformer = iamApi.informer<SessionObject>('sessions', {
    logger,
    metrics: cacheMetrics,
    transform: dropManagedFields,
  });
  readiness.register('users-cache', () => userInformer.synced);
  readiness.register('sessions-cache', () => sessionInformer.synced);
  const users = new UserStore({ api: iamApi, informer: userInformer, policy: authConfig.lockout, logger });
  const sessions = new SessionStore({ api: iamApi, informer: sessionInformer, logger });
  const clients = parseClients(authConfig.clients, config.platformName);
  const tokens = new TokenService({
    keys,
    issuer: authConfig.issuer || config.platformName,
    audiences: clients.map((c) => c.id),
    accessTokenMaxAgeSeconds: authConfig.accessTokenMaxAgeSeconds,
    refreshTokenMaxAgeSeconds: authConfig.refreshTokenMaxAgeSeconds,
    clockSkewSeconds: authConfig.clockSkewSeconds,
  });
  const authMetrics = createAuthMetrics(registry, () => sessions.count);
  const oauth = new OAuthService({
    tokens,
    users,
    sessions,
    passwords: await PasswordVerifier.create(),
    singleSession: authConfig.singleSession,
    logger,
    metrics: authMetrics,
  });
  userInformer.start();
  sessionInformer.start();
  if (bootstrapAdmin) {
    const admin = bootstrapAdmin;
    // Retried until the apiserver (and the CRD) can be reached; an existing user is left as it is.
    const createAdmin = (): void => {
      ensureBootstrapAdmin(admin, { api: iamApi, logger }).catch((err: unknown) => {
        logger.warn('cannot create the first administrator yet, retrying', { error: String(err) });
        setTimeout(createAdmin, 5000).unref();
      });
    };
    createAdmin();
  }
  const sweep = setInterval(() => {
    sessions
      .sweepExpired()
      .then((ended) => authMetrics.sessionsEnded.inc({ reason: 'expired' }, ended))
      .then(() => users.liftExpiredLocks())
      .catch((err: unknown) => logger.warn('session sweep failed', { error: String(err) }));
  }, authConfig.sessionSweepIntervalSeconds * 1000);
  sweep.unref();
  const authenticator = new AccessTokenAuthenticator({ tokens, users, sessions });
  const kubeProxy = await createKubeProxy({
    kubeConfig: kc,
    logger,
    registry,
    responseTimeoutMs: config.proxy.responseTimeoutSeconds * 1000,
    authenticate: (token) => authenticator.authenticate(token),
  });

  const version = packageVersion();
  // One entry per mounted route group: the document describes exactly what is wired below.
  const apiContext = { platformName: config.platformName, version };
  const apiDocument = openApiDocument(apiContext, [
    healthApi(),
    observabilityApi(),
    oauthApi(),
    nodesApi(apiContext),
    logsApi(apiContext),
  ]);

  const app = createApp({
    logger,
    requestContext,
    httpMetrics: createHttpMetrics(registry),
    authenticate: bearerAuthentication({ authenticator, realm: config.platformName, metrics: authMetrics }),
    publicRoutes: [
      healthRoutes(readiness, {
        platform: config.platformName,
        version,
        node: process.version,
      }),
      metricsRoutes(registry),
      openApiRoutes(apiDocument),
      oauthRoutes({
        service: oauth,
        authenticator,
        clients: new ClientRegistry(clients),
        keys,
        limiter: new AddressLimiter({ requestsPerMinute: authConfig.addressRequestsPerMinute }),
        metrics: authMetrics,
        issuer: authConfig.issuer || config.platformName,
        publicUrl: authConfig.publicUrl,
      }),
    ],
    protectedRoutes: [
      nodesRoutes({
        platformName: config.platformName,
        nodes: nodeCache,
        authorizer: accessReviewer,
        registry,
        gzipMinBytes: config.resources.gzipMinBytes,
        memoMaxBytes: config.resources.responseMemoMegabytes * 1024 * 1024,
      }),
      logRoutes({
        platformName: config.platformName,
        logging,
        check: (identity, attributes) => accessReviewer.check(identity, attributes),
        logger,
        metrics: loggingMetrics,
      }),
      removedLoggingRoutes(config.platformName),
      kubeProxyRoutes(kubeProxy),
    ],
    trustedProxies: config.http.trustedProxies,
  });
  const running = await startServer(app, {
    host: config.http.host,
    port: config.http.port,
    requestTimeoutSeconds: config.http.requestTimeoutSeconds,
    readiness,
    logger,
    ...(config.http.tlsCertFile
      ? { tls: { certFile: config.http.tlsCertFile, keyFile: config.http.tlsKeyFile } }
      : {}),
  });
  running.server.on('upgrade', kubeProxy.upgrade);
  logger.info('listening', {
    url: running.url,
    platform: config.platformName,
    kubernetes: kc.getCurrentCluster()?.server,
    logStore: logging ? config.logging.hosts : 'not configured',
  });

  exitGracefullyOnSignals(running, {
    graceMs: config.http.shutdownGraceSeconds * 1000,
    logger,
    beforeDrain: () => {
      firstContact.stop();
      clearInterval(sweep);
      void nodeCache.stop();
      void userInformer.stop();
      void sessionInformer.stop();
    },
  });
  return running;
}

/** The message for a start refused because of configuration (exit code 2), naming the key. */
function configurationProblem(err: unknown): string | undefined {
  if (err instanceof ConfigError) return err.message;
  if (err instanceof KeyError) return `invalid configuration: ${err.configKey}: ${err.message}`;
  return undefined;
}

if (import.meta.main) {
  try {
    await main(process.argv.slice(2), process.env);
  } catch (err) {
    const problem = configurationProblem(err);
    if (problem === undefined) throw err;
    process.stderr.write(`platform-apiserver: ${problem}\n`);
    process.exit(2);
  }
}
