import type { UserObject } from '../users/iam-resources.ts';

/** Status fields a user list may show: the original's own. Lockout bookkeeping stays inside. */
const PUBLIC_STATUS = ['state', 'reason', 'lastTransitionTime', 'lastLoginTime'] as const;

/** Annotation that can carry a whole earlier object, password hash included (`kubectl apply`). */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * A User as the users API serves it: never the password hash (`spec.password`, nor inside the
 * last-applied annotation), never the login admission ledger (`iam.<platform>.io/login-attempts`) or
 * the recent failed logins and lock time (they tell an attacker how close an account is to being
 * locked); with the original's `iam.<platform>.io/globalrole` annotation when the user has one, and
 * as a member of a scope, with the role annotation of that scope.
 */
export function publicUser(
  user: UserObject,
  options: {
    ledgerAnnotation: string;
    globalRoleAnnotation: string;
    globalRole: string | undefined;
    /** A member's role at the scope it was listed in, as the original annotates it (`iam.<platform>.io/role`, …). */
    scopeRole?: { annotation: string; role: string };
  },
): UserObject {
  const annotations = { ...user.metadata.annotations };
  delete annotations[LAST_APPLIED];
  delete annotations[options.ledgerAnnotation];
  // The original sets it from the binding on every answer; a stale stored value never shows.
  delete annotations[options.globalRoleAnnotation];
  if (options.globalRole) annotations[options.globalRoleAnnotation] = options.globalRole;
  if (options.scopeRole) annotations[options.scopeRole.annotation] = options.scopeRole.role;
  const { managedFields: _managedFields, ...metadata } = user.metadata;
  const { password: _password, ...spec } = user.spec ?? {};
  const view: UserObject = {
    ...user,
    metadata: { ...metadata, annotations },
    spec,
  };
  if (Object.keys(annotations).length === 0) delete view.metadata.annotations;
  if (user.status) {
    const status = Object.fromEntries(
      PUBLIC_STATUS.flatMap((k) => (user.status?.[k] === undefined ? [] : [[k, user.status[k]]])),
    );
    view.status = status;
  }
  return view;
}
