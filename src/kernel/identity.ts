/** Who is calling, as Kubernetes sees it: what the proxy impersonates and SubjectAccessReviews ask about. */
export interface Identity {
  username: string;
  /** Kubernetes groups, including `system:authenticated`. */
  groups: readonly string[];
  /** Session the access token belongs to, when it came from a token of ours. */
  sessionId?: string;
  /** The session's incarnation the token was issued for (a later login may take the session over). */
  sessionIncarnation?: number;
}

/** The group of every authenticated caller. */
export const AUTHENTICATED_GROUP = 'system:authenticated';

/**
 * The groups to send as Impersonate-Group. The kube-apiserver adds system:authenticated to every
 * impersonated user but system:anonymous, so naming it only costs one more impersonation check (an
 * RBAC evaluation for the server's own account) on every request; the identity it decides for is the same.
 */
export function groupsToImpersonate(identity: { username: string; groups: readonly string[] }): string[] {
  if (identity.username === 'system:anonymous') return [...identity.groups];
  return identity.groups.filter((group) => group !== AUTHENTICATED_GROUP);
}
