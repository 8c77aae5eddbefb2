import { kubeRequest, KubeRequestError, type KubeCredentials } from '../cluster/kube-request.ts';
import type { IamGroup } from './iam-resources.ts';

/**
 * What the cluster's IAM group offers, found once at start through API discovery (readable by every
 * authenticated client: no extra RBAC). With `platformName: kubesphere` the users CRD may be the
 * original's, which has no status subresource.
 */
export interface UserSchema {
  /** `users/status` exists: status is written through it; otherwise with the object (same compare-and-swap). */
  statusSubresource: boolean;
  /** The original's `loginrecords` CRD exists: logins are also written as LoginRecord objects. */
  loginRecords: boolean;
  /** Our `loginthrottles` CRD exists: failed logins of unknown names are counted across replicas. */
  loginThrottles: boolean;
}

interface ApiResourceList {
  resources?: { name?: string }[];
}

export async function discoverUserSchema(kc: KubeCredentials, iam: IamGroup): Promise<UserSchema> {
  let list: ApiResourceList;
  try {
    list = await kubeRequest<ApiResourceList>(kc, `/apis/${iam.group}/${iam.version}`, { timeoutMs: 10_000 });
  } catch (err) {
    if (err instanceof KubeRequestError && err.statusCode === 404) {
      throw new Error(
        `the API group ${iam.group}/${iam.version} is not installed (install the chart's CRDs)`,
        {
          cause: err,
        },
      );
    }
    throw err;
  }
  const names = new Set((list.resources ?? []).map((r) => r.name));
  if (!names.has('users')) throw new Error(`the API group ${iam.group}/${iam.version} has no users resource`);
  return {
    statusSubresource: names.has('users/status'),
    loginRecords: names.has('loginrecords'),
    loginThrottles: names.has('loginthrottles'),
  };
}

/** One line for the start-up log: which schema was found and what it enables. */
export function describeUserSchema(schema: UserSchema): Record<string, string> {
  return {
    statusWrites: schema.statusSubresource
      ? 'users/status subresource'
      : 'no status subresource (the original’s users CRD): status written with the object',
    loginRecords: schema.loginRecords
      ? 'LoginRecord objects written for every password login of a known user'
      : 'LoginRecord CRD absent: no login records',
    unknownNames: schema.loginThrottles
      ? 'failed logins of unknown names counted across replicas (loginthrottles)'
      : 'loginthrottles CRD absent: failed logins of unknown names counted per replica only',
  };
}

/**
 * Discovers the schema at start, retrying until the kube-apiserver answers (the server starts without
 * it, like its caches), then states once what it found. Ready only once known.
 */
export class UserSchemaProbe {
  #schema: UserSchema | undefined;
  readonly #discover: () => Promise<UserSchema>;
  readonly #log: (message: string, fields: Record<string, unknown>) => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(deps: {
    discover: () => Promise<UserSchema>;
    log: (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;
  }) {
    this.#discover = deps.discover;
    this.#log = (message, fields) =>
      deps.log(message.startsWith('user schema') ? 'info' : 'warn', message, fields);
  }

  /** Until discovered: what our own chart installs (status subresource, shared unknown-name ledgers). */
  get schema(): UserSchema {
    return this.#schema ?? { statusSubresource: true, loginRecords: false, loginThrottles: true };
  }

  get known(): boolean {
    return this.#schema !== undefined;
  }

  start(): void {
    const attempt = (): void => {
      this.#discover().then(
        (schema) => {
          this.#schema = schema;
          this.#log('user schema found', describeUserSchema(schema));
        },
        (err: unknown) => {
          this.#log('cannot read the user schema yet, retrying', { error: String(err) });
          this.#timer = setTimeout(attempt, 2000);
          this.#timer.unref();
        },
      );
    };
    attempt();
  }

  stop(): void {
    clearTimeout(this.#timer);
  }
}
