import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Identity } from '../kernel/identity.ts';

/** What the server learnt about a request on its way in; typed, unlike `res.locals`. */
export interface RequestContext {
  /** The caller, once the bearer door let the request in; absent on anonymous paths. */
  identity?: Identity;
}

// Keyed by the request object itself: the context lives exactly as long as the request.
const contexts = new WeakMap<IncomingMessage, RequestContext>();

/** The context of a request (plain HTTP or an upgrade), created empty on first use. */
export function requestContext(req: IncomingMessage): RequestContext {
  let context = contexts.get(req);
  if (!context) {
    context = {};
    contexts.set(req, context);
  }
  return context;
}

/** Records the caller of the request a response answers (what an authentication middleware does). */
export function setIdentity(res: ServerResponse, identity: Identity): void {
  requestContext(res.req).identity = identity;
}

/** The caller's identity. Throws if called on a route that is not behind authentication (a wiring bug). */
export function identityOf(req: IncomingMessage): Identity {
  const identity = requestContext(req).identity;
  if (!identity) throw new Error('identityOf() on a route without authentication');
  return identity;
}
