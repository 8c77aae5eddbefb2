import type { Response } from 'express';

/** Who is calling, as Kubernetes sees it: what the proxy impersonates and SubjectAccessReviews ask about. */
export interface Identity {
  username: string;
  /** Kubernetes groups, including `system:authenticated`. */
  groups: string[];
  /** Session the access token belongs to, when it came from a token of ours. */
  sessionId?: string;
}

/** Set by the bearer authentication middleware; read by everything behind it. */
export function setIdentity(res: Response, identity: Identity): void {
  res.locals['identity'] = identity;
}

/** The caller's identity. Throws if called on a route that is not behind authentication (a wiring bug). */
export function identityOf(res: Response): Identity {
  const identity = res.locals['identity'] as Identity | undefined;
  if (!identity) throw new Error('identityOf() on a route without authentication');
  return identity;
}

/** The caller's identity when the request passed authentication, else undefined (logs, metrics). */
export function identityIfAny(res: Response): Identity | undefined {
  return res.locals['identity'] as Identity | undefined;
}
