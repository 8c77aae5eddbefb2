import type { BindingObject } from './role-objects.ts';

/** A user bound at a scope, with the role its binding names. */
export interface Membership {
  username: string;
  role: string;
}

/**
 * The members of a scope from its role bindings, as the original lists them
 * (`pkg/models/resources/v1alpha3/user`): every `User` subject of every binding (groups and service
 * accounts are not members), with the binding's role; with `role` given, only bindings to that role
 * count. A user bound twice is listed once, with the first binding's role — the original takes the
 * first in its cache's order (and logs a conflict), here the first by binding name, so the answer is
 * stable.
 */
export function membershipsOf(bindings: readonly BindingObject[], role?: string): Membership[] {
  const members = new Map<string, Membership>();
  const ordered = [...bindings].sort((a, b) => compare(a.metadata.name, b.metadata.name));
  for (const binding of ordered) {
    if (role !== undefined && binding.roleRef.name !== role) continue;
    for (const subject of binding.subjects ?? []) {
      if (subject.kind !== 'User' || members.has(subject.name)) continue;
      members.set(subject.name, { username: subject.name, role: binding.roleRef.name });
    }
  }
  return [...members.values()];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
