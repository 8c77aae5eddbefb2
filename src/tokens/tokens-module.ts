import { readFileSync } from 'node:fs';
import { credentialsData } from '../cluster/handed-credentials.ts';
import { ConfigError, type AuthConfig } from '../config/config.ts';
import { BearerDoor } from '../http/bearer-door.ts';
import { bearerDoorRef, type FeatureModule } from '../http/feature-module.ts';
import {
  cacheMetricsRef,
  configRef,
  kubeConfigRef,
  loggerRef,
  metricsExportRef,
  processEnvRef,
  registryRef,
  startUpReleasedRef,
} from '../host-services.ts';
import { sessionSignalsRef } from '../kernel/session-signals.ts';
import { counter, gauge } from '../observability/metrics.ts';
import { AccessTokenAuthenticator, BearerError } from './access-token-authenticator.ts';
import { AddressLimiter } from './address-limiter.ts';
import { ClientRegistry } from './clients.ts';
import { LoginThread } from './login-thread.ts';
import { oauthApi } from './oauth-api.ts';
import { composeOAuth } from './oauth-composition.ts';
import { oauthRoutes, type PasswordGrants } from './oauth-routes.ts';
import type { OAuthService } from './oauth-service.ts';
import { sessionSignals } from './session-signals.ts';
import { ephemeralKeySet, KeyError, loadKeySet, type KeySet } from './signing-keys.ts';
import { userSessionsRef } from '../users/user-accounts.ts';
import { userAccountStoreRef } from '../users/users-module.ts';

/**
 * Sessions and signing keys; the OAuth endpoints that issue tokens (logging in the users of the users
 * module's store); the bearer door every protected route (and the proxy's upgrades) passes through.
 */
export const tokensModule: FeatureModule = {
  name: 'tokens',
  requires: [
    configRef,
    kubeConfigRef,
    loggerRef,
    registryRef,
    metricsExportRef,
    processEnvRef,
    startUpReleasedRef,
    cacheMetricsRef,
    userAccountStoreRef,
  ],
  provides: [bearerDoorRef, sessionSignalsRef, userSessionsRef],
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
    const kubeConfig = ctx.get(kubeConfigRef);
    const accounts = ctx.get(userAccountStoreRef);
    const { store: users, informer: userInformer } = accounts;
    const registry = ctx.get(registryRef);
    const { sessionInformer, sessions, tokens, metrics, passwords, admission, service, clients, issuer } =
      await composeOAuth({ config, logger, registry, cacheMetrics, accounts, keys, reportsSessions: true });
    const loginThread = authConfig.loginThread
      ? new LoginThread({
          workerData: { config, keys },
          credentials: () => credentialsData(kubeConfig),
          env: ctx.get(processEnvRef),
          logger,
          restarts: counter(registry, {
            name: 'platform_login_thread_restarts_total',
            help: 'Times the login thread (auth.loginThread) died and was started again.',
          }),
        })
      : undefined;
    if (loginThread) {
      ctx.get(metricsExportRef).add(() => loginThread.metrics());
      gauge(registry, {
        name: 'platform_login_thread_ready',
        help: '1 while the login thread serves the password grant; 0 while the main thread does (start-up, restart).',
        collect: (g) => g.set(loginThread.ready ? 1 : 0),
      });
    }
    const startUpReleased = ctx.get(startUpReleasedRef);
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

    ctx.provide(userSessionsRef, {
      verifyPassword: (password, storedHash) => passwords.verify(password, storedHash),
      async endSessions(username, keep) {
        const ending = (await sessions.currentSessionsOf(username)).filter((s) => s.metadata.name !== keep);
        const ended = await Promise.all(ending.map((s) => sessions.delete(s.metadata.name)));
        return ended.filter(Boolean).length;
      },
    });

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
            service,
            passwordGrants: grantsOn(loginThread, service),
            authenticator,
            clients: new ClientRegistry(clients),
            keys,
            limiter: new AddressLimiter({ requestsPerMinute: authConfig.addressRequestsPerMinute }),
            metrics,
            issuer,
            publicUrl: authConfig.publicUrl,
          }),
        ],
        openApi: [oauthApi()],
      },
      readiness: { 'sessions-cache': () => sessionInformer.synced },
      start() {
        sessionInformer.start();
        // After the process's start-up burst, not beside it: the thread's own start-up (its modules, its
        // first lists) would add tens of MB to the process's peak.
        if (loginThread) void startUpReleased.then(() => loginThread.start());
        sweep = setInterval(() => {
          sessions
            .sweepExpired()
            .then((ended) => metrics.sessionsEnded.inc({ reason: 'expired' }, ended))
            .catch((err: unknown) => logger.warn('session sweep failed', { error: String(err) }));
        }, authConfig.sessionSweepIntervalSeconds * 1000);
        sweep.unref();
      },
      async stop() {
        clearInterval(sweep);
        await loginThread?.stop();
        // Successes whose settlement waits for a ride are written now, not left to count as failures.
        await admission.flush();
        await sessionInformer.stop();
      },
    };
  },
};

/**
 * Where a password grant is decided: on the login thread while it is ready; on the main thread without one
 * (auth.loginThread: false), and while it starts or starts again, so that logins never wait for it.
 */
function grantsOn(loginThread: LoginThread | undefined, service: OAuthService): PasswordGrants {
  return {
    passwordGrant: (request) =>
      loginThread?.ready ? loginThread.passwordGrant(request) : service.passwordGrant(request.attempt),
  };
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
