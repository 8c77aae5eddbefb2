import type { Scope } from './derived-rules.ts';
import type { RoleCache } from './role-cache.ts';
import { bindingsOf } from './role-templates.ts';

/**
 * How long a role or member write waits for the role cache to show it before it answers (it answers
 * either way). The lists read that cache, and the console lists right after its dialog answers.
 */
export const WRITE_VISIBLE_MS = 2_000;

/**
 * Waits (bounded) until the cached bindings of a scope show the user with `role` only, or (`role`
 * undefined) not at all: the state a member write leaves.
 */
export async function memberShown(
  cache: RoleCache,
  scope: Scope,
  place: string,
  username: string,
  role: string | undefined,
): Promise<void> {
  await cache.until(() => {
    const bound = bindingsOf(cache.bindings(scope, place), username);
    return role === undefined
      ? bound.length === 0
      : bound.length > 0 && bound.every((b) => b.roleRef.name === role);
  }, WRITE_VISIBLE_MS);
}
