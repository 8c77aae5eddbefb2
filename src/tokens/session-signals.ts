import type { InformerListener } from '../cluster/informer.ts';
import type { SessionListener, SessionSignals } from '../kernel/session-signals.ts';
import { stateOf, type SessionObject, type UserObject } from '../users/iam-resources.ts';
import type { SessionRef } from './session-store.ts';

/** The part of an informer this needs. */
interface Events<T> {
  onEvent(listener: InformerListener<T>): () => void;
}

/**
 * Session and user changes from the watch-backed caches. Every replica watches the same objects, so a
 * logout, revocation, refresh-token reuse or sweep on any replica (a deleted Session) and a user
 * disabled or deleted by an administrator reach every replica within the watch's delivery time. A
 * refresh moves the session's expiry. The lookup follows the rules of bearer authentication: the
 * session exists and has not expired, its user exists with the uid it was opened for, not disabled.
 */
export function sessionSignals(deps: {
  sessionEvents: Events<SessionObject>;
  userEvents: Events<UserObject>;
  sessions: { getHeld(ref: SessionRef): Promise<SessionObject | undefined> };
  users: {
    peek(username: string): UserObject | undefined;
    get(username: string): Promise<UserObject | undefined>;
  };
}): SessionSignals {
  return {
    async lookup(owner) {
      if (owner.sessionId === undefined) return undefined;
      const session = await deps.sessions.getHeld({ sid: owner.sessionId, sinc: owner.sessionIncarnation });
      if (!session) return undefined;
      const user = deps.users.peek(owner.username) ?? (await deps.users.get(owner.username));
      if (!user || user.metadata.uid !== session.spec.userUID || stateOf(user) === 'Disabled')
        return undefined;
      return { expiresAtMs: Date.parse(session.spec.expiresAt) };
    },
    subscribe(listener: SessionListener) {
      const offSessions = deps.sessionEvents.onEvent((type, session, previous) => {
        // Taken over by a later login (a new incarnation): what the earlier login opened ends with it.
        const takenOver = previous !== undefined && previous.spec.incarnation !== session.spec.incarnation;
        if (type === 'DELETED' || takenOver) listener.endSession(session.metadata.name, 'session_ended');
        else listener.sessionExpiry(session.metadata.name, Date.parse(session.spec.expiresAt));
      });
      const offUsers = deps.userEvents.onEvent((type, user, previous) => {
        if (type === 'DELETED') listener.endUser(user.metadata.name, 'user_deleted');
        else if (stateOf(user) === 'Disabled') listener.endUser(user.metadata.name, 'user_disabled');
        // Re-created under the same name (a relist can report that as a change): the old user's sessions are dead.
        else if (previous && previous.metadata.uid !== user.metadata.uid)
          listener.endUser(user.metadata.name, 'user_deleted');
      });
      return () => {
        offSessions();
        offUsers();
      };
    },
  };
}
