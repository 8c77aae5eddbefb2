/** Who is calling, as Kubernetes sees it: what the proxy impersonates and SubjectAccessReviews ask about. */
export interface Identity {
  username: string;
  /** Kubernetes groups, including `system:authenticated`. */
  groups: string[];
  /** Session the access token belongs to, when it came from a token of ours. */
  sessionId?: string;
}
