import type http from 'node:http';

/**
 * Request headers that carry a caller's credentials or claimed identity. None of them may reach the
 * kube-apiserver from a client: the proxy talks to it with the server's own credentials, and a
 * kube-apiserver that trusts an authenticating front proxy (requestheader authentication) would take
 * X-Remote-User/X-Remote-Group/X-Remote-Extra-* (and X-Remote-Uid) as the caller's identity.
 */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|impersonate-.*|x-remote-.*)$/;

/** The WebSocket subprotocol in which browsers send a bearer token (they cannot set headers). */
export const KUBE_PROTOCOL_TOKEN_PREFIX = 'base64url.bearer.authorization.k8s.io.';

/**
 * Removes every client-sent credential from the headers, whatever their case (Node lowercases names):
 * Authorization, Proxy-Authorization, Impersonate-*, X-Remote-*, and any bearer-token WebSocket
 * subprotocol. The caller then adds the server's own credentials and the impersonation.
 */
export function stripClientCredentials(headers: http.IncomingHttpHeaders): void {
  for (const name of Object.keys(headers)) {
    if (CREDENTIAL_HEADER.test(name)) delete headers[name];
  }
  const protocols = offeredProtocols(headers);
  if (protocols.length === 0) return;
  const kept = protocols.filter((p) => !p.startsWith(KUBE_PROTOCOL_TOKEN_PREFIX));
  if (kept.length === protocols.length) return;
  if (kept.length > 0) headers['sec-websocket-protocol'] = kept.join(', ');
  else delete headers['sec-websocket-protocol'];
}

/**
 * The caller's token on an upgrade: `Authorization: Bearer …`, or — browsers cannot set headers on a
 * WebSocket — the Kubernetes subprotocol `base64url.bearer.authorization.k8s.io.<token>`. The header
 * wins when both are present. Reading does not remove anything: stripClientCredentials() does that
 * for every request, so the subprotocol never reaches the upstream in either case.
 */
export function upgradeBearerToken(headers: http.IncomingHttpHeaders): string | undefined {
  const header = headers['authorization'];
  const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
  if (match) return match[1];
  const carrier = offeredProtocols(headers).find((p) => p.startsWith(KUBE_PROTOCOL_TOKEN_PREFIX));
  if (!carrier) return undefined;
  const token = Buffer.from(carrier.slice(KUBE_PROTOCOL_TOKEN_PREFIX.length), 'base64url').toString('utf8');
  return token === '' ? undefined : token;
}

function offeredProtocols(headers: http.IncomingHttpHeaders): string[] {
  const value = headers['sec-websocket-protocol'];
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '');
  return joined
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}
