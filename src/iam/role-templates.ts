import type { BindingObject, RoleObject } from './role-objects.ts';

/**
 * The original's rule for "which role templates does this member have" (its `am` operator and the
 * `RetrieveMemberRoleTemplates` handler, 3.4), as pure functions over cached objects.
 */

/** Whether a binding names the user, or (when groups are given) one of the user's groups. */
export function namesMember(binding: BindingObject, username: string, groups?: readonly string[]): boolean {
  return (binding.subjects ?? []).some(
    (s) => (s.kind === 'User' && s.name === username) || (s.kind === 'Group' && !!groups?.includes(s.name)),
  );
}

/**
 * The bindings naming the member, in a stable order (by name): the original takes the first of them
 * for a global or cluster role (logging a conflict when there are more), all of them in a workspace or
 * namespace.
 */
export function bindingsOf(
  bindings: readonly BindingObject[],
  username: string,
  groups?: readonly string[],
): BindingObject[] {
  return bindings
    .filter((b) => namesMember(b, username, groups))
    .sort((a, b) => compare(a.metadata.name, b.metadata.name));
}

/** The names in a role's aggregation annotation; anything but a JSON array of strings counts as none. */
export function aggregatedNames(role: RoleObject, aggregationAnnotation: string): string[] {
  const text = role.metadata.annotations?.[aggregationAnnotation];
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((n): n is string => typeof n === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * The role templates each role aggregates, merged by name (a template named by two roles is listed
 * once); names of roles that do not exist are skipped, as the original does. Ordered as the original's
 * default list order: newest first, ties by name descending.
 */
export function templatesOf(
  roles: readonly RoleObject[],
  lookup: (name: string) => RoleObject | undefined,
  aggregationAnnotation: string,
): RoleObject[] {
  const templates = new Map<string, RoleObject>();
  for (const role of roles) {
    for (const name of aggregatedNames(role, aggregationAnnotation)) {
      const template = lookup(name);
      if (template) templates.set(template.metadata.name, template);
    }
  }
  return [...templates.values()].sort(newestFirst);
}

function newestFirst(a: RoleObject, b: RoleObject): number {
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  return tb - ta || compare(b.metadata.name, a.metadata.name);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
