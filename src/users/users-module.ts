import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import { ConfigError, type AuthConfig, type Config } from '../config/config.ts';
import type { Logger } from '../observability/logger.ts';
import type { FeatureModule } from '../http/feature-module.ts';
import { cacheMetricsRef, configRef, kubeConfigRef, loggerRef, registryRef } from '../host-services.ts';
import { serviceRef } from '../kernel/module.ts';
import { counter } from '../observability/metrics.ts';
import type { Informer } from '../cluster/informer.ts';
import type { KubeCredentials } from '../cluster/kube-request.ts';
import { ensureBootstrapAdmin, readBootstrapPassword, type BootstrapAdmin } from './bootstrap-admin.ts';
import { IamApi } from './iam-api.ts';
import { iamGroupFor, type SessionObject, type UserObject } from './iam-resources.ts';
import { LoginRecordWriter } from './login-records.ts';
import { discoverUserSchema, UserSchemaProbe } from './user-schema.ts';
import { userDirectoryRef } from './user-directory.ts';
import { UserStore } from './user-store.ts';

/**
 * The platform's user accounts as the other features use them: the store with its lockout bookkeeping
 * (the token service authenticates against it, the IAM API writes it), the users' watch, what the
 * installed User schema supports, and the login records. One watch of the users for the whole server.
 */
export interface UserAccountStore {
  api: IamApi;
  store: UserStore;
  informer: Informer<UserObject>;
  records: LoginRecordWriter;
  /** What the installed CRDs support; known once discovery has answered. */
  schema: UserSchemaProbe;
}

export const userAccountStoreRef = serviceRef<UserAccountStore>('user-account-store');

/**
 * Users: their store, lockout and login records (the IAM group's `users`, `loginrecords` and
 * `loginthrottles` objects), and the first administrator. It serves no routes: the IAM module serves
 * the users API and the token service logs users in, both over this store.
 */
export const usersModule: FeatureModule = {
  name: 'users',
  requires: [configRef, loggerRef, registryRef, kubeConfigRef, cacheMetricsRef],
  provides: [userAccountStoreRef, userDirectoryRef],
  register(ctx) {
    const config = ctx.get(configRef);
    const authConfig = config.auth;
    const logger = ctx.get(loggerRef);
    const bootstrapAdmin = bootstrapAdminOf(authConfig.bootstrapAdmin);
    const accounts = createUserAccounts({
      config,
      logger,
      registry: ctx.get(registryRef),
      credentials: ctx.get(kubeConfigRef),
      cacheMetrics: ctx.get(cacheMetricsRef),
    });
    const { api, store, informer, schema } = accounts;
    ctx.provide(userAccountStoreRef, accounts);
    ctx.provide(userDirectoryRef, {
      iam: api.iam,
      get: (name) => store.get(name),
      list: () => informer.list(),
      stateTag: () => informer.resourceVersion,
    });

    let sweep: NodeJS.Timeout | undefined;
    return {
      readiness: {
        'users-cache': () => informer.synced,
        'user-schema': () => schema.known,
      },
      start() {
        schema.start();
        informer.start();
        if (bootstrapAdmin) {
          const admin = bootstrapAdmin;
          // Retried until the apiserver (and the CRD) can be reached; an existing user is left as it is.
          const createAdmin = (): void => {
            ensureBootstrapAdmin(admin, { api, logger }).catch((err: unknown) => {
              logger.warn('cannot create the first administrator yet, retrying', { error: String(err) });
              setTimeout(createAdmin, 5000).unref();
            });
          };
          createAdmin();
        }
        sweep = setInterval(() => {
          store
            .liftExpiredLocks()
            .catch((err: unknown) => logger.warn('lock sweep failed', { error: String(err) }));
        }, authConfig.sessionSweepIntervalSeconds * 1000);
        sweep.unref();
      },
      async stop() {
        clearInterval(sweep);
        await store.flushLoginTimes();
        schema.stop();
        await informer.stop();
      },
    };
  },
};

/**
 * The user store, its watch, schema probe and login-record writer, unstarted: the users module's, and the
 * login thread's own (src/tokens/login-worker.ts).
 */
export function createUserAccounts(deps: {
  config: Config;
  logger: Logger;
  registry: Registry;
  /** The kubeconfig on the main thread; what the main thread handed over on the login thread. */
  credentials: KubeCredentials;
  cacheMetrics: CacheMetrics;
}): UserAccountStore {
  const { config, logger } = deps;
  const api = new IamApi(deps.credentials, iamGroupFor(config.platformName));
  const informer = api.informer<UserObject>('users', {
    logger,
    metrics: deps.cacheMetrics,
    transform: dropManagedFields,
  });
  const schema = new UserSchemaProbe({
    discover: () => discoverUserSchema(deps.credentials, api.iam),
    log: (level, message, fields) => logger[level](message, fields),
  });
  const store = new UserStore({
    api,
    informer,
    policy: config.auth.lockout,
    logger,
    schema: () => schema.schema,
  });
  const recordWriteFailures = counter(deps.registry, {
    name: 'platform_login_record_write_failures_total',
    help: 'LoginRecord objects (or their retention pass) that could not be written.',
  });
  const records = new LoginRecordWriter({
    api,
    enabled: () => schema.schema.loginRecords,
    logger,
    onFailure: () => recordWriteFailures.inc(),
  });
  return { api, store, informer, records, schema };
}

/** Objects are kept without managedFields: nothing here reads them and they are most of a small object. */
export function dropManagedFields<T extends UserObject | SessionObject>(o: T): T {
  return { ...o, metadata: { ...o.metadata, managedFields: undefined } };
}

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
