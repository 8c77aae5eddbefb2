import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch } from 'undici';

/** A kube-apiserver answer that is not 2xx. `statusCode` follows the client library's error shape. */
export class KubeRequestError extends Error {
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.name = 'KubeRequestError';
    this.statusCode = statusCode;
  }
}

export interface KubeRequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  body?: unknown;
  /** Content type of the body; JSON by default (a JSON patch needs its own). */
  contentType?: string;
  /** Aborts the request (connect, headers and body) after this long. */
  timeoutMs: number;
}

/**
 * One JSON request to the kube-apiserver with the server's own credentials, returning the parsed body
 * as the apiserver sent it. Unlike the generated typed clients it does not turn timestamps into Date
 * objects, so what we serve keeps the apiserver's exact text; and it is always bounded by a timeout.
 */
export async function kubeRequest<T>(kc: KubeConfig, path: string, options: KubeRequestOptions): Promise<T> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');
  const method = options.method ?? 'GET';
  const ctx = new RequestContext(cluster.server + path, HttpMethod[method]);
  await kc.applySecurityAuthentication(ctx);
  const headers: Record<string, string> = { ...ctx.getHeaders(), Accept: 'application/json' };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] = options.contentType ?? 'application/json';
  }
  const response = await fetch(ctx.getUrl(), {
    method,
    headers,
    body,
    dispatcher: ctx.getDispatcher(),
    signal: AbortSignal.timeout(options.timeoutMs),
  });
  const text = await response.text();
  if (!response.ok) {
    let message = `${method} ${path}: HTTP ${response.status}`;
    try {
      const status = JSON.parse(text) as { message?: unknown };
      if (typeof status.message === 'string') message += `: ${status.message}`;
    } catch {
      /* not a Status body */
    }
    throw new KubeRequestError(response.status, message);
  }
  return JSON.parse(text) as T;
}
