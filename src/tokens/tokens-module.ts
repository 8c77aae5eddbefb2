import { readFileSync } from 'node:fs';
import { ConfigError, type AuthConfig } from '../config/config.ts';
import { BearerDoor } from '../http/bearer-door.ts';
import { bearerDoorRef, type FeatureModule } from '../http/feature-module.ts';
import { cacheMetricsRef, configRef, kubeConfigRef, loggerRef, registryRef } from '../host-services.ts';
import { sessionSignalsRef } from '../kernel/session-signals.ts';
import { AccessTokenAuthenticator, BearerError } from './access-token-authenticator.ts';
import { AddressLimiter } from './address-limiter.ts';
import { createAuthMetrics } from './auth-metrics.ts';
import { ensureBootstrapAdmin, readBootstrapPassword, type BootstrapAdmin } from './bootstrap-admin.ts';
import { ClientRegistry, parseClients } from './clients.ts';
import { IamApi } from './iam-api.ts';
import { iamGroupFor, type SessionObject, type UserObject } from './iam-resources.ts';
import { oauthApi } from './oauth-api.ts';
import { oauthRoutes } from './oauth-routes.ts';
import { OAuthService } from './oauth-service.ts';
import { PasswordGate } from './password-gate.ts';
import { PasswordVerifier } from './passwords.ts';
import { SessionStore } from './session-store.ts';
import { sessionSignals } from './session-signals.ts';
import { ephemeralKeySet, KeyError, loadKeySet, type KeySet } from './signing-keys.ts';
import { TokenService } from './tokens.ts';
import { accessReviewerRef } from '../access/access-module.ts';
import { LoginAdmission } from './login-admission.ts';
import { LoginRecordWriter } from './login-records.ts';
import { loginRecordsRoutes } from './login-records-routes.ts';
import { loginRecordsApi } from './login-records-api.ts';
import { packageVersion } from '../version.ts';
import { UnknownNameLedgers } from './unknown-name-ledgers.ts';
import { discoverUserSchema, UserSchemaProbe } from './user-schema.ts';
import { userAccounts, userAccountsRef } from './user-accounts.ts';
import { userDirectoryRef } from './user-directory.ts';
import { UserStore } from './user-store.ts';

/**
 * Users, sessions and signing keys; the OAuth endpoints that issue tokens; the bearer door every
 * protected route (and the proxy's upgrades) passes through.
 */
export const tokensModule: FeatureModule = {
  name: 'tokens',
  requires: [configRef, loggerRef, registryRef, kubeConfigRef, cacheMetricsRef, accessReviewerRef],
  provides: [bearerDoorRef, sessionSignalsRef, userDirectoryRef, userAccountsRef],
  async register(ctx) {
    const config = ctx.get(configRef);
    const authConfig = config.auth;
    const logger = ctx.get(loggerRef);
    const cacheMetrics = ctx.get(cacheMetricsRef);
    const configuredKeys = configuredKeySet(authConfig);
    const keys: KeySet =
      configuredKeys ?? ephemeralKeySet(authConfig.signingAlgorithm === 'RS256' ? 'RS256' : 'ES256');
    if (!configuredKeys) {
      logger.warn(
        'NO SIGNING KEY CONFIGURED (auth.signingKeyFile): using an ephemeral key. Tokens die with this process and ' +
          'other replicas reject them. Development only: production supplies keys from a Secret.',
        { kid: keys.signing.kid },
      );
    }
    const bootstrapAdmin = bootstrapAdminOf(authConfig.bootstrapAdmin);

    const iamApi = new IamApi(ctx.get(kubeConfigRef), iamGroupFor(config.platformName));
    const dropManagedFields = <T extends UserObject | SessionObject>(o: T): T => ({
      ...o,
      metadata: { ...o.metadata, managedFields: undefined },
    });
    const informerOptions = { logger, metrics: cacheMetrics, transform: dropManagedFields };
    const userInformer = iamApi.informer<UserObject>('users', informerOptions);
    const sessionInformer = iamApi.informer<SessionObject>('sessions', informerOptions);
    const userSchema = new UserSchemaProbe({
      discover: () => discoverUserSchema(ctx.get(kubeConfigRef), iamApi.iam),
      log: (level, message, fields) => logger[level](message, fields),
    });
    const users = new UserStore({
      api: iamApi,
      informer: userInformer,
      policy: authConfig.lockout,
      logger,
      schema: () => userSchema.schema,
    });
    const sessions = new SessionStore({
      api: iamApi,
      informer: sessionInformer,
      logger,
      refreshGraceSeconds: authConfig.refreshGraceSeconds,
    });
    const clients = parseClients(authConfig.clients, config.platformName);
    const issuer = authConfig.issuer || config.platformName;
    const tokens = new TokenService({
      keys,
      issuer,
      audiences: clients.map((c) => c.id),
      accessTokenMaxAgeSeconds: authConfig.accessTokenMaxAgeSeconds,
      refreshTokenMaxAgeSeconds: authConfig.refreshTokenMaxAgeSeconds,
      clockSkewSeconds: authConfig.clockSkewSeconds,
    });
    const metrics = createAuthMetrics(ctx.get(registryRef), () => sessions.count);
    const records = new LoginRecordWriter({
      api: iamApi,
      enabled: () => userSchema.schema.loginRecords,
      logger,
      onFailure: () => metrics.loginRecordWriteFailures.inc(),
    });
    const passwords = new PasswordGate({
      verifier: await PasswordVerifier.create(),
      concurrency: authConfig.passwordConcurrency,
      queue: authConfig.passwordQueue,
      registry: ctx.get(registryRef),
    });
    const oauth = new OAuthService({
      tokens,
      users,
      sessions,
      passwords,
      singleSession: authConfig.singleSession,
      sessionLimit: authConfig.maxSessionsPerUser,
      logger,
      metrics,
      admission: new LoginAdmission({ policy: authConfig.lockout }),
      unknownNames: new UnknownNameLedgers({
        api: iamApi,
        policy: authConfig.lockout,
        shared: () => userSchema.schema.loginThrottles,
      }),
      policy: authConfig.lockout,
      records,
    });
    const authenticator = new AccessTokenAuthenticator({ tokens, users, sessions });
    ctx.provide(
      bearerDoorRef,
      new BearerDoor({
        authenticate: (token) => authenticator.identify(token),
        refusalOf: (err) => (err instanceof BearerError ? err : undefined),
        realm: config.platformName,
        counter: metrics.bearerAuthentications,
      }),
    );

    ctx.provide(userDirectoryRef, {
      iam: iamApi.iam,
      get: (name) => users.get(name),
      list: () => userInformer.list(),
    });

    ctx.provide(userAccountsRef, userAccounts({ users, sessions, passwords, iamGroup: iamApi.iam.group }));

    // What open connections (the proxy's watches and upgrades) need to end with their session.
    ctx.provide(
      sessionSignalsRef,
      sessionSignals({ sessionEvents: sessionInformer, userEvents: userInformer, sessions, users }),
    );

    let sweep: NodeJS.Timeout | undefined;
    return {
      edge: {
        publicRoutes: [
          oauthRoutes({
            service: oauth,
            authenticator,
            clients: new ClientRegistry(clients),
            keys,
            limiter: new AddressLimiter({ requestsPerMinute: authConfig.addressRequestsPerMinute }),
            metrics,
            issuer,
            publicUrl: authConfig.publicUrl,
          }),
        ],
        protectedRoutes: [
          loginRecordsRoutes({
            iam: iamApi.iam,
            records,
            enabled: () => userSchema.schema.loginRecords,
            authorizer: ctx.get(accessReviewerRef),
          }),
        ],
        openApi: [
          oauthApi(),
          loginRecordsApi({ platformName: config.platformName, version: packageVersion() }),
        ],
      },
      readiness: {
        'users-cache': () => userInformer.synced,
        'sessions-cache': () => sessionInformer.synced,
        'user-schema': () => userSchema.known,
      },
      start() {
        userSchema.start();
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
        sweep = setInterval(() => {
          sessions
            .sweepExpired()
            .then((ended) => metrics.sessionsEnded.inc({ reason: 'expired' }, ended))
            .then(() => users.liftExpiredLocks())
            .catch((err: unknown) => logger.warn('session sweep failed', { error: String(err) }));
        }, authConfig.sessionSweepIntervalSeconds * 1000);
        sweep.unref();
      },
      async stop() {
        clearInterval(sweep);
        userSchema.stop();
        await Promise.all([userInformer.stop(), sessionInformer.stop()]);
      },
    };
  },
};

/** The first administrator to create, if configured; an unreadable password file is a configuration error. */
function bootstrapAdminOf(config: AuthConfig['bootstrapAdmin']): BootstrapAdmin | undefined {
  if (!config.username) return undefined;
  try {
    return {
      username: config.username,
      groups: config.groups,
      password: readBootstrapPassword(config.passwordFile, (p) => readFileSync(p, 'utf8')),
    };
  } catch (err) {
    throw new ConfigError('auth.bootstrapAdmin.passwordFile', (err as Error).message);
  }
}

/** The configured signing and verification keys; an unusable key is a configuration error naming its key. */
function configuredKeySet(config: AuthConfig): KeySet | undefined {
  try {
    return loadKeySet({
      algorithm: config.signingAlgorithm,
      signingKeyFile: config.signingKeyFile,
      verificationKeyFiles: config.verificationKeyFiles,
      hmacSecretFile: config.hmacSecretFile,
      readFile: (p) => readFileSync(p.trim()),
    });
  } catch (err) {
    if (err instanceof KeyError) throw new ConfigError(err.configKey, err.message);
    throw err;
  }
}
