import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';

/** The custom resources of identity and access, in the group `iam.<platform>.io`. */
export interface IamGroup {
  group: string;
  version: 'v1alpha2';
}

export function iamGroupFor(platformName: string): IamGroup {
  return { group: `iam.${platformName}.io`, version: 'v1alpha2' };
}

export type UserState = 'Active' | 'Disabled' | 'AuthLimitExceeded';

/** A platform user (cluster-scoped `users.iam.<platform>.io`). */
export interface UserObject extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string };
  spec?: {
    email?: string;
    /** bcrypt hash; the CRD schema refuses anything else, so plaintext cannot be stored. */
    password?: string;
    /** Kubernetes groups, sent to the kube-apiserver when impersonating the user. */
    groups?: string[];
    displayName?: string;
    lang?: string;
    description?: string;
  };
  status?: UserStatus;
}

export interface UserStatus {
  /** Absent means Active: a user created with kubectl has no status yet. */
  state?: UserState;
  reason?: string;
  lastTransitionTime?: string;
  lastLoginTime?: string;
  /** Failed logins inside the current lockout window (RFC 3339), oldest first. */
  recentFailedLogins?: string[];
  /** While state is AuthLimitExceeded: when logins are accepted again. */
  lockedUntil?: string;
}

/** A login session (cluster-scoped `sessions.iam.<platform>.io`): what refresh rotates and logout deletes. */
export interface SessionObject extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string };
  spec: {
    username: string;
    /** uid of the User at login: a user deleted and re-created under the same name does not inherit sessions. */
    userUID: string;
    clientId: string;
    /** jti of the one refresh token that may be redeemed next; any other refresh token of the session is a reuse. */
    refreshTokenId: string;
    /** When the current refresh token expires (RFC 3339); the session is deleted after that. */
    expiresAt: string;
    /**
     * Which login holds the session: 1 when it is created, one more each time a later login of its user
     * takes it over at the session limit. Tokens carry it (`sinc`); one carrying a lower number belongs to a
     * login that has ended. Absent in sessions written before it existed (or where the CRD drops it): those
     * accept their tokens as before and are never taken over.
     */
    incarnation?: number;
    /** jti of the refresh token redeemed last: repeated within the grace window it is a retry, not a reuse. */
    previousRefreshTokenId?: string;
    /** When that happened (RFC 3339). */
    rotatedAt?: string;
    sourceAddress?: string;
  };
}

/** Label on sessions naming their user, when the name fits in a label value. */
export function userLabelKey(iam: IamGroup): string {
  return `${iam.group}/user`;
}

export function stateOf(user: UserObject): UserState {
  return user.status?.state ?? 'Active';
}
