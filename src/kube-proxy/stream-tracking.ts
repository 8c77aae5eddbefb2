import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Plugin } from 'http-proxy-middleware';
import type { StreamOwner, StreamRegistry } from './stream-registry.ts';
import type { UndiciExchange } from './undici-exchange.ts';

/**
 * Registers every proxied request and upgrade with the stream registry for as long as it is open, and
 * knows how to end each kind when the registry says its session is over:
 * - a streamed response (watch, follow=true logs) is finished cleanly (the terminating chunk), so a
 *   client sees the watch end and its next request is refused with 401;
 * - a response with a Content-Length, or one the kube-apiserver has not answered yet, is cut;
 * - an upgraded connection (exec, attach, port-forward, WebSocket watch) has both sockets destroyed.
 * In every case the upstream connection is closed too, so the kube-apiserver stops sending.
 */
export interface StreamTracking {
  /** For each plain request's upstream request, as it is made (the identity comes from the request's auth). */
  trackRequest(exchange: UndiciExchange, req: http.IncomingMessage, res: http.ServerResponse): void;
  /** For the proxy's plugin list: follows the upstream side of the upgrades trackUpgrade() registered. */
  plugin: Plugin;
  /** For upgrades, which bypass express: call before handing the upgrade to the proxy. */
  trackUpgrade(req: http.IncomingMessage, socket: Duplex, owner: StreamOwner): void;
}

/** `ownerOf` names who a plain HTTP request was authenticated as (undefined: not tracked). */
export function streamTracking(
  registry: StreamRegistry,
  ownerOf: (req: http.IncomingMessage) => StreamOwner | undefined,
): StreamTracking {
  // The upstream side of each upgrade, as far as it exists yet: the request, then its socket.
  const upstreams = new WeakMap<http.IncomingMessage, { request?: http.ClientRequest; socket?: Duplex }>();

  const trackRequest = (exchange: UndiciExchange, req: http.IncomingMessage, res: http.ServerResponse) => {
    const identity = ownerOf(req);
    if (!identity) return;
    const untrack = registry.track(identity, () => {
      exchange.stop();
      const streamed = res.headersSent && res.getHeader('content-length') === undefined;
      if (streamed && !res.writableEnded) res.end();
      else res.destroy();
    });
    res.once('close', untrack);
  };

  const plugin: Plugin = (proxyServer) => {
    proxyServer.on('proxyReqWs', (proxyReq, req, socket) => {
      const upstream = upstreams.get(req);
      if (!upstream) return;
      // Ended while the upgrade was still being prepared: never open the upstream side.
      if (socket.destroyed) {
        proxyReq.destroy();
        return;
      }
      upstream.request = proxyReq;
      proxyReq.once('upgrade', (_proxyRes, proxySocket: Duplex) => {
        upstream.socket = proxySocket;
        if (socket.destroyed) proxySocket.destroy();
      });
    });
  };

  const trackUpgrade = (req: http.IncomingMessage, socket: Duplex, owner: StreamOwner) => {
    const upstream: { request?: http.ClientRequest; socket?: Duplex } = {};
    upstreams.set(req, upstream);
    const untrack = registry.track(owner, () => {
      if (upstream.socket) upstream.socket.destroy();
      else upstream.request?.destroy();
      socket.destroy();
    });
    socket.once('close', untrack);
  };

  return { trackRequest, plugin, trackUpgrade };
}
