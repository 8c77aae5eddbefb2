import { ApiError } from '../kernel/api-error.ts';
import { serviceRef } from '../kernel/module.ts';
import { codeOf, ConflictError } from './iam-api.ts';
import { hashPassword } from './passwords.ts';
import type { UserObject } from './iam-resources.ts';
import type { UserStore } from './user-store.ts';

/**
 * What the users API needs to write users: the writes themselves (through the store logins read, so a
 * user just created can log in and a user just deleted cannot), password hashing and checking (the
 * bounded gate logins use), and ending a user's sessions. A password is hashed here, before any object
 * carrying it exists: the kube-apiserver only ever receives the hash.
 */
export interface UserAccounts {
  /** Creates the user; its `spec.password` is the hash of `password`. AlreadyExists surfaces as the apiserver's 409. */
  create(user: UserObject, password: string): Promise<UserObject>;
  /** Compare-and-swap on `user.metadata.resourceVersion`; the stored password hash is kept. */
  replace(user: UserObject): Promise<UserObject>;
  /**
   * Changes the user by compare-and-swap, re-reading and retrying over concurrent writes (for callers
   * that sent no resourceVersion); undefined when the user is gone.
   */
  update(name: string, change: (user: UserObject) => UserObject): Promise<UserObject | undefined>;
  /** Replaces the user's password hash (retried over concurrent writes); undefined when the user is gone. */
  setPassword(name: string, password: string): Promise<UserObject | undefined>;
  /** Whether `password` is the user's current one (off the event loop, bounded like logins). */
  verifyPassword(user: UserObject, password: string): Promise<boolean>;
  /** Deletes the user; false when it was already gone. */
  remove(name: string): Promise<boolean>;
  /** Ends every session of the user except `keep` (the caller's own); the number ended. */
  endSessions(username: string, keep?: string): Promise<number>;
}

/**
 * What the token service offers the users API: checking a password through the same bounded gate logins
 * use, and ending a user's sessions (with the proxy's streams they carry).
 */
export interface UserSessions {
  verifyPassword(password: string, storedHash: string | undefined): Promise<boolean>;
  /** Ends every session of the user except `keep`; the number ended. */
  endSessions(username: string, keep?: string): Promise<number>;
}

/** Provided by the token service, which owns sessions. */
export const userSessionsRef = serviceRef<UserSessions>('user-sessions');

export function userAccounts(deps: {
  users: UserStore;
  sessions: UserSessions;
  iamGroup: string;
}): UserAccounts {
  const { users, sessions, iamGroup } = deps;
  /** A write that lost a compare-and-swap → 409 Conflict; a schema refusal → 400. */
  const withConflicts = async <T>(name: string, write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } catch (err) {
      if (!(err instanceof ConflictError)) throw refusal(err, name);
      throw new ApiError(
        'Conflict',
        `users.${iamGroup} "${name}": the object has been modified; read it again and retry`,
        { details: { name, group: iamGroup, kind: 'users' } },
      );
    }
  };
  return {
    async create(user, password) {
      const hash = await hashPassword(password);
      try {
        return await users.create({ ...user, spec: { ...user.spec, password: hash } });
      } catch (err) {
        if (codeOf(err) !== 409) throw refusal(err, user.metadata.name);
        throw new ApiError('AlreadyExists', `users.${iamGroup} "${user.metadata.name}" already exists`, {
          details: { name: user.metadata.name, group: iamGroup, kind: 'users' },
        });
      }
    },
    replace: (user) => withConflicts(user.metadata.name, () => users.replace(user)),
    update: (name, change) => withConflicts(name, () => users.update(name, change)),
    async setPassword(name, password) {
      const hash = await hashPassword(password);
      return withConflicts(name, () =>
        users.update(name, (user) => ({ ...user, spec: { ...user.spec, password: hash } })),
      );
    },
    verifyPassword: (user, password) => sessions.verifyPassword(password, user.spec?.password),
    remove: (name) => users.remove(name),
    endSessions: (username, keep) => sessions.endSessions(username, keep),
  };
}

/**
 * The apiserver refused the object (its schema, say): a 400 whose message never repeats what was sent,
 * since the apiserver's own message can quote the password hash. Anything else stays an internal error.
 */
function refusal(err: unknown, name: string): unknown {
  if (codeOf(err) !== 422) return err;
  return new ApiError('BadRequest', `the kube-apiserver refused user "${name}" (its schema)`);
}
