import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { KubeConfig } from '@kubernetes/client-node';
import { Router, type RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { BearerDoor } from '../http/bearer-door.ts';
import { kubeStatusOf, toApiError, writeErrorResponse, writeUpgradeError } from '../http/error-mapper.ts';
import { identityOf, requestContext } from '../http/request-context.ts';
import { duplicateAuthorization } from '../http/single-authorization.ts';
import { setRouteTemplate } from '../http/route-template.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { RequestVerb } from '../observability/api-request-info.ts';
import type { Logger } from '../observability/logger.ts';
import { upstreamRequestDuration } from '../observability/upstream-metrics.ts';
import { impersonator, upstreamOf } from './impersonation.ts';
import { isKubeApiPath, routeTemplateOf, shapeRequest, type RequestShape } from './request-shaping.ts';
import type { StreamRegistry } from './stream-registry.ts';
import { streamTracking } from './stream-tracking.ts';
import { streamingProxy } from './streaming.ts';

export interface KubeProxyOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  registry: Registry;
  /** Time allowed for the kube-apiserver to start answering; streams (watch, exec) are not limited once it has. */
  responseTimeoutMs: number;
  /** Lets WebSocket upgrades in, which do not pass through the express middleware chain. */
  door: BearerDoor;
  /** Open connections by session: ended when their session or user ends. */
  streams?: StreamRegistry;
}

export interface KubeProxy {
  /** Express handler for /api and /apis (mounted behind bearer authentication). */
  handler: RequestHandler;
  /** For the HTTP server's 'upgrade' event (exec, attach, port-forward, WebSocket watch). */
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
}

/**
 * Answers up to this size are collected and sent in one write. A console page or a single object is far
 * below it; bigger lists stream as they arrive, so memory held per request stays bounded.
 */
const COLLECT_UP_TO_BYTES = 256 * 1024;

/**
 * Proxies the Kubernetes API as the calling user: the request is shaped (request-shaping.ts), goes
 * upstream with the server's own credentials impersonating the caller (impersonation.ts), and the
 * answer streams back (streaming.ts). Kubernetes RBAC decides.
 */
export async function createKubeProxy(options: KubeProxyOptions): Promise<KubeProxy> {
  const { logger } = options;
  const upstream = await upstreamOf(options.kubeConfig, options.responseTimeoutMs);
  const impersonate = impersonator(upstream);
  // Shared with the client-side instrumentation: source="proxy" tells the two apart.
  const tracking = options.streams
    ? streamTracking(options.streams, (req) => requestContext(req).identity)
    : undefined;
  const streaming = streamingProxy({
    upstream,
    responseTimeoutMs: options.responseTimeoutMs,
    duration: upstreamRequestDuration(options.registry),
    logger,
    writeError: { response: writeErrorResponse, socket: writeUpgradeError },
    collectUpToBytes: COLLECT_UP_TO_BYTES,
    ...(tracking ? { onRequest: tracking.trackRequest, plugins: [tracking.plugin] } : {}),
  });

  const handler: RequestHandler = (req, res, next) => {
    setRouteTemplate(res, routeTemplateOf(req.path));
    let shape: RequestShape;
    try {
      shape = shapeRequest(req);
    } catch (err) {
      if (err instanceof ApiError) {
        res.status(err.statusCode).json(kubeStatusOf(err));
        return;
      }
      next(err);
      return;
    }
    const impersonated = impersonate(req, identityOf(req));
    if (impersonated) impersonated.then(() => streaming.forward(req, res, shape), next);
    else streaming.forward(req, res, shape);
  };

  const upgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    let verb: RequestVerb;
    try {
      ({ verb } = shapeRequest(req));
    } catch (err) {
      writeUpgradeError(socket, err instanceof ApiError ? err : new ApiError('NotFound', 'not found'));
      return;
    }
    const duplicate = duplicateAuthorization(req);
    if (duplicate) {
      writeUpgradeError(socket, duplicate);
      return;
    }
    options.door
      .admit(req)
      .then(async (identity) => {
        tracking?.trackUpgrade(req, socket, identity);
        await impersonate(req, identity);
        streaming.forwardUpgrade(req, socket, head, verb);
      })
      .catch((err: unknown) => {
        const refusal = toApiError(err);
        logger.info('websocket upgrade refused', { reason: (err as Error).message });
        writeUpgradeError(socket, refusal ?? new ApiError('Internal', 'internal error'));
      });
  };

  return { handler, upgrade };
}

/**
 * The proxy as a router-level middleware that leaves req.url whole (mounting at '/api' would strip the
 * prefix the upstream needs).
 */
export function kubeProxyRoutes(proxy: KubeProxy): Router {
  return Router().use((req, res, next) => (isKubeApiPath(req.path) ? proxy.handler(req, res, next) : next()));
}
