import { serviceRef } from '../kernel/module.ts';
import type { IamGroup, UserObject } from './iam-resources.ts';

/**
 * The users this server already keeps in its watch-backed cache, read-only, for features that show
 * them (the users API): no second watch of the same objects. Objects are frozen and shared; they
 * include what only the token service may see (the password hash): callers strip before serving.
 */
export interface UserDirectory {
  iam: IamGroup;
  /** The user, reading through to the kube-apiserver once when the cache does not know the name (yet). */
  get(name: string): Promise<UserObject | undefined>;
  /** Every cached user. */
  list(): readonly UserObject[];
  /** Changes whenever a cached user does (the resourceVersion the cache is current at). */
  stateTag(): string;
}

export const userDirectoryRef = serviceRef<UserDirectory>('user-directory');
