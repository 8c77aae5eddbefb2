/**
 * Whether one set of RBAC rules grants everything another does: Kubernetes' escalation rule
 * (`pkg/registry/rbac/validation`: `Covers`), used where Kubernetes cannot be asked by a dry run. Each
 * requested rule is broken into single permissions (one group, resource, verb and name, or one URL and
 * verb), and each must be granted by some rule the owner holds.
 */

export interface Rule {
  apiGroups?: readonly string[];
  resources?: readonly string[];
  resourceNames?: readonly string[];
  nonResourceURLs?: readonly string[];
  verbs: readonly string[];
}

/** The requested rules' single permissions that `owner` does not hold (none: it covers them). */
export function uncovered(owner: readonly Rule[], requested: readonly Rule[]): Rule[] {
  const missing: Rule[] = [];
  for (const rule of requested)
    for (const atom of atoms(rule)) if (!owner.some((o) => grants(o, atom))) missing.push(atom);
  return missing;
}

function atoms(rule: Rule): Rule[] {
  const out: Rule[] = [];
  for (const verb of rule.verbs) {
    for (const url of rule.nonResourceURLs ?? []) out.push({ nonResourceURLs: [url], verbs: [verb] });
    for (const group of rule.apiGroups ?? [])
      for (const resource of rule.resources ?? []) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        for (const name of names)
          out.push({ apiGroups: [group], resources: [resource], resourceNames: [name], verbs: [verb] });
      }
  }
  return out;
}

function grants(owner: Rule, atom: Rule): boolean {
  if (!has(owner.verbs, atom.verbs[0]!)) return false;
  if (atom.nonResourceURLs)
    return (owner.nonResourceURLs ?? []).some((url) => urlMatches(url, atom.nonResourceURLs![0]!));
  const [group, resource] = [atom.apiGroups![0]!, atom.resources![0]!];
  if (!has(owner.apiGroups ?? [], group) || !resourceMatches(owner.resources ?? [], resource)) return false;
  const names = owner.resourceNames ?? [];
  if (names.length === 0) return true;
  const name = atom.resourceNames?.[0];
  return name !== undefined && names.includes(name);
}

function has(values: readonly string[], value: string): boolean {
  return values.includes('*') || values.includes(value);
}

// Owned `*`, the resource itself, "*" + "/sub" (that subresource of any resource) or "res/" + "*" (any
// subresource of res).
function resourceMatches(owned: readonly string[], resource: string): boolean {
  if (owned.includes('*') || owned.includes(resource)) return true;
  const slash = resource.indexOf('/');
  if (slash < 0) return false;
  return owned.includes(`*${resource.slice(slash)}`) || owned.includes(`${resource.slice(0, slash)}/*`);
}

function urlMatches(owned: string, url: string): boolean {
  if (owned === '*' || owned === url) return true;
  return owned.endsWith('*') && url.startsWith(owned.slice(0, -1));
}
