import type { Registry } from 'prom-client';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import type { Informer } from '../cluster/informer.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../observability/logger.ts';
import type { SessionObject } from '../users/iam-resources.ts';
import { LoginAdmission } from '../users/login-admission.ts';
import { PasswordVerifier } from '../users/passwords.ts';
import { UnknownNameLedgers } from '../users/unknown-name-ledgers.ts';
import { dropManagedFields, type UserAccountStore } from '../users/users-module.ts';
import { createAuthMetrics, type AuthMetrics } from './auth-metrics.ts';
import { parseClients, type OAuthClient } from './clients.ts';
import { OAuthService } from './oauth-service.ts';
import { PasswordGate } from './password-gate.ts';
import { SessionStore } from './session-store.ts';
import type { KeySet } from './signing-keys.ts';
import { TokenService } from './tokens.ts';

/** The token service and what it is made of, unstarted (the sessions' watch starts with its owner). */
export interface OAuthParts {
  sessionInformer: Informer<SessionObject>;
  sessions: SessionStore;
  tokens: TokenService;
  metrics: AuthMetrics;
  passwords: PasswordGate;
  admission: LoginAdmission;
  service: OAuthService;
  clients: OAuthClient[];
  issuer: string;
}

/**
 * Composes the token service over a user store: the tokens module's, and the login thread's own
 * (src/tokens/login-worker.ts), so both log users in by exactly the same rules.
 */
export async function composeOAuth(deps: {
  config: Config;
  logger: Logger;
  registry: Registry;
  cacheMetrics: CacheMetrics;
  accounts: UserAccountStore;
  keys: KeySet;
  /** Whether this composition's sessions cache is the one the sessions gauge reports. */
  reportsSessions: boolean;
}): Promise<OAuthParts> {
  const { config, logger, registry, accounts, keys } = deps;
  const authConfig = config.auth;
  const { api: iamApi, store: users, records, schema: userSchema } = accounts;
  const sessionInformer = iamApi.informer<SessionObject>('sessions', {
    logger,
    metrics: deps.cacheMetrics,
    transform: dropManagedFields,
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
  const metrics = createAuthMetrics(registry, deps.reportsSessions ? () => sessions.count : undefined);
  const passwords = new PasswordGate({
    verifier: await PasswordVerifier.create(),
    concurrency: authConfig.passwordConcurrency,
    queue: authConfig.passwordQueue,
    registry,
  });
  const admission = new LoginAdmission({ policy: authConfig.lockout });
  const service = new OAuthService({
    tokens,
    users,
    sessions,
    passwords,
    singleSession: authConfig.singleSession,
    sessionLimit: authConfig.maxSessionsPerUser,
    logger,
    metrics,
    admission,
    unknownNames: new UnknownNameLedgers({
      api: iamApi,
      policy: authConfig.lockout,
      shared: () => userSchema.schema.loginThrottles,
    }),
    policy: authConfig.lockout,
    records,
  });
  return { sessionInformer, sessions, tokens, metrics, passwords, admission, service, clients, issuer };
}
