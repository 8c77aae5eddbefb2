import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Identity } from '../kernel/identity.ts';

/** What the server learnt about a request on its way in; typed, unlike `res.locals`. */
export interface RequestContext {
  /** The caller, once the bearer door let the request in; absent on anonymous paths. */
  identity?: Identity;
}

// Held by the request itself, so it lives exactly as long as the request. A symbol property rather than
// a WeakMap: every request reads it three or four times, and a WeakMap's lookup and its upkeep in the
// garbage collector cost more than a property load on a request that always has the same shape.
const CONTEXT = Symbol('requestContext');
type WithContext = IncomingMessage & { [CONTEXT]?: RequestContext };

/** The context of a request (plain HTTP or an upgrade), created empty on first use. */
export function requestContext(req: IncomingMessage): RequestContext {
  return ((req as WithContext)[CONTEXT] ??= {});
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
