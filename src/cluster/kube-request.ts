import type { KubeConfig } from '@kubernetes/client-node';
import type https from 'node:https';
import { Agent, request, type Dispatcher } from 'undici';
import { groupsToImpersonate } from '../kernel/identity.ts';

/** A kube-apiserver answer that is not 2xx. `statusCode` follows the client library's error shape. */
export class KubeRequestError extends Error {
  readonly statusCode: number;
  /** The message of the kube-apiserver's Status body, when it sent one. */
  readonly statusMessage: string | undefined;
  /** The reason of that Status (`AlreadyExists`, `Conflict`, `Invalid`, …), when it sent one. */
  readonly statusReason: string | undefined;
  constructor(statusCode: number, message: string, statusMessage?: string, statusReason?: string) {
    super(message);
    this.name = 'KubeRequestError';
    this.statusCode = statusCode;
    this.statusMessage = statusMessage;
    this.statusReason = statusReason;
  }
}

/**
 * What a request of the server's own needs from its credentials: the cluster's address, and the headers and
 * connection pool of one request. A KubeConfig is one (its `applySecurityAuthentication` only sets headers
 * and the dispatcher on the context it is given); the login thread has its own, handed over by the main
 * thread (handed-credentials.ts), so that it need not load the Kubernetes client library.
 */
export interface KubeCredentials {
  getCurrentCluster(): { readonly server: string } | null;
  applySecurityAuthentication(context: RequestAuthentication): Promise<void>;
}

/** The part of the client library's RequestContext that authentication writes to. */
export interface RequestAuthentication {
  setHeaderParam(name: string, value: string): void;
  getDispatcher(): Dispatcher | undefined;
  setDispatcher(dispatcher: Dispatcher): void;
}

/** Collects what the credentials set for one request; a header set twice keeps its last value, as there. */
class CollectedAuthentication implements RequestAuthentication {
  readonly headers = new Map<string, string>();
  #dispatcher: Dispatcher | undefined;
  setHeaderParam(name: string, value: string): void {
    this.headers.set(name, value);
  }
  getDispatcher(): Dispatcher | undefined {
    return this.#dispatcher;
  }
  setDispatcher(dispatcher: Dispatcher): void {
    this.#dispatcher = dispatcher;
  }
}

export interface KubeRequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  /** Content type of the body; JSON by default (a JSON patch needs its own). */
  contentType?: string;
  /** Aborts the request (connect, headers and body) after this long. */
  timeoutMs: number;
  /**
   * Ask as this user and groups (Impersonate-User/-Group), so Kubernetes RBAC decides for them. Needs a
   * `dispatcher` from `http1Dispatcher`: over HTTP/2 the client joins repeated headers into one line,
   * which the kube-apiserver would read as a single group named "a, b".
   */
  impersonate?: { username: string; groups: readonly string[] };
  /** Connections to use instead of the kubeconfig's shared pool. */
  dispatcher?: Dispatcher;
}

/** A connection pool to the kubeconfig's cluster that speaks HTTP/1.1 only (see `impersonate`). */
export async function http1Dispatcher(kc: KubeConfig): Promise<Dispatcher> {
  // TLS material (CA, client certificate) is fixed for the life of the process; tokens are set per request.
  const tls: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  return new Agent({
    allowH2: false,
    connect: {
      ...(tls.ca ? { ca: tls.ca } : {}),
      ...(tls.cert ? { cert: tls.cert } : {}),
      ...(tls.key ? { key: tls.key } : {}),
      ...(tls.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
      ...(tls.servername ? { servername: tls.servername } : {}),
    },
  });
}

/**
 * One JSON request to the kube-apiserver with the server's own credentials, returning the parsed body
 * as the apiserver sent it. Unlike the generated typed clients it does not turn timestamps into Date
 * objects, so what we serve keeps the apiserver's exact text; and it is always bounded by a timeout.
 */
export async function kubeRequest<T>(
  kc: KubeCredentials,
  path: string,
  options: KubeRequestOptions,
): Promise<T> {
  return JSON.parse(
    await (await kubeResponse(kc, path, options, AbortSignal.timeout(options.timeoutMs))).body.text(),
  ) as T;
}

/** As kubeRequest, but the body as bytes: for a caller that parses it piece by piece (a large LIST). */
export async function kubeRequestBytes(
  kc: KubeCredentials,
  path: string,
  options: KubeRequestOptions,
): Promise<Buffer> {
  return Buffer.from(
    await (await kubeResponse(kc, path, options, AbortSignal.timeout(options.timeoutMs))).body.arrayBuffer(),
  );
}

/**
 * A GET whose body streams for as long as the caller wants it (a watch), with the server's own
 * credentials: the answer, its status checked as kubeRequest's, its body not yet read. `signal` ends it.
 */
export function kubeStream(
  kc: KubeCredentials,
  path: string,
  signal: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  return kubeResponse(kc, path, {}, signal);
}

/** The answer, its status checked (anything but 2xx throws KubeRequestError), its body not yet read. */
async function kubeResponse(
  kc: KubeCredentials,
  path: string,
  options: Omit<KubeRequestOptions, 'timeoutMs'>,
  signal: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');
  const method = options.method ?? 'GET';
  const auth = new CollectedAuthentication();
  await kc.applySecurityAuthentication(auth);
  // A flat name/value list, not fetch's Headers (which would join repeated names into one line): each
  // impersonated group must be a header line of its own.
  const headers: string[] = [...[...auth.headers].flat(), 'Accept', 'application/json'];
  if (options.impersonate) {
    if (!options.dispatcher) throw new Error('impersonated requests need an HTTP/1.1 dispatcher');
    headers.push('Impersonate-User', options.impersonate.username);
    for (const group of groupsToImpersonate(options.impersonate)) headers.push('Impersonate-Group', group);
  }
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers.push('Content-Type', options.contentType ?? 'application/json');
  }
  const response = await request(cluster.server + path, {
    method,
    headers,
    body,
    dispatcher: options.dispatcher ?? auth.getDispatcher(),
    signal,
  });
  if (response.statusCode < 200 || response.statusCode > 299) {
    const text = await response.body.text();
    let message = `${method} ${path}: HTTP ${response.statusCode}`;
    let statusMessage: string | undefined;
    let statusReason: string | undefined;
    try {
      const status = JSON.parse(text) as { message?: unknown; reason?: unknown };
      if (typeof status.message === 'string') statusMessage = status.message;
      if (typeof status.reason === 'string') statusReason = status.reason;
    } catch {
      /* not a Status body */
    }
    if (statusMessage !== undefined) message += `: ${statusMessage}`;
    throw new KubeRequestError(response.statusCode, message, statusMessage, statusReason);
  }
  return response;
}
