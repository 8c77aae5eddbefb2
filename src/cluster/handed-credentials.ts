import type { KubeConfig } from '@kubernetes/client-node';
import type https from 'node:https';
import { Agent, getGlobalDispatcher, type Dispatcher } from 'undici';
import type { SeriesHistogram } from '../observability/series-metrics.ts';
import type { UpstreamLabel } from '../observability/upstream-metrics.ts';
import { timingInterceptor } from './kube-client-metrics.ts';
import type { KubeCredentials, RequestAuthentication } from './kube-request.ts';
import { materialKey } from './upstream-agent.ts';

/**
 * The server's credentials for the kube-apiserver as plain data, as every request of its own gets them
 * now: for another thread, which then needs neither the kubeconfig nor the client library that reads it
 * (loading @kubernetes/client-node costs a thread about 60 MB). Secret: never logged.
 */
export interface CredentialsData {
  server: string;
  /** Headers every request carries: a bearer token, basic auth. */
  headers: Record<string, string>;
  /** TLS options of the connections (CA, client certificate), as the client library builds them; none for plain http. */
  connect: Record<string, unknown> | undefined;
}

/**
 * What `kc` would authenticate a request with at this moment. The headers change when a token is renewed
 * (a projected ServiceAccount token, an exec plugin), the TLS material when a certificate is rotated: the
 * caller asks again from time to time (the login thread's owner, every 10 s). Refuses a kubeconfig whose
 * cluster is reached through a proxy, which the handed form does not carry.
 */
export async function credentialsData(kc: KubeConfig): Promise<CredentialsData> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');
  if (cluster.proxyUrl) throw new Error('the kubeconfig reaches its cluster through a proxy (proxy-url)');
  const options: https.RequestOptions & https.AgentOptions = {};
  await kc.applyToHTTPSOptions(options);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value !== undefined) headers[name] = String(value);
  }
  // applySecurityAuthentication (every request on the main thread) sends basic auth as this header.
  if (options.auth) headers['Authorization'] = `Basic ${Buffer.from(options.auth).toString('base64')}`;
  // The library picks the TLS fields out of the options itself, as it does for its own requests.
  const dispatcher = kc.createDispatcherOptions(cluster, options);
  return {
    server: cluster.server,
    headers,
    connect: dispatcher.type === 'agent' ? (dispatcher.connect as Record<string, unknown>) : undefined,
  };
}

/** The connections for one TLS material. */
interface Connection {
  materialKey: string;
  pool: Agent | undefined;
  dispatcher: Dispatcher;
}

/**
 * Credentials handed over by another thread: one keep-alive pool per TLS material (a new material, a new
 * pool; the old one closes once its requests end), each request measured as the main thread's are.
 */
export class HandedCredentials implements KubeCredentials {
  #data: CredentialsData;
  #connection: Connection;
  readonly #interceptor: Dispatcher.DispatcherComposeInterceptor;

  constructor(data: CredentialsData, duration: SeriesHistogram<UpstreamLabel>) {
    this.#interceptor = timingInterceptor(duration);
    this.#data = data;
    this.#connection = this.#connect(data.connect);
  }

  getCurrentCluster(): { readonly server: string } {
    return { server: this.#data.server };
  }

  async applySecurityAuthentication(context: RequestAuthentication): Promise<void> {
    for (const [name, value] of Object.entries(this.#data.headers)) context.setHeaderParam(name, value);
    context.setDispatcher(this.#connection.dispatcher);
  }

  /** Takes what the other thread holds now. */
  update(data: CredentialsData): void {
    this.#data = data;
    if (materialKey(data.connect ?? {}) === this.#connection.materialKey) return;
    const previous = this.#connection.pool;
    this.#connection = this.#connect(data.connect);
    void previous?.close().catch(() => {});
  }

  async close(): Promise<void> {
    await this.#connection.pool?.close();
  }

  #connect(connect: CredentialsData['connect']): Connection {
    const pool = connect ? new Agent({ connect }) : undefined;
    return {
      materialKey: materialKey(connect ?? {}),
      pool,
      dispatcher: (pool ?? getGlobalDispatcher()).compose(this.#interceptor),
    };
  }
}
