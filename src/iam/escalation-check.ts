import type { KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import { http1Dispatcher, kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { asApiError } from './member-writes.ts';
import { uncovered, type Rule } from './rbac-covers.ts';
import {
  boundClusterRole,
  rbacNames,
  rbacSubjects,
  type RbacNames,
  type RbacSubject,
} from './rbac-translation.ts';

const RBAC = 'rbac.authorization.k8s.io';
const RBAC_V1 = `/apis/${RBAC}/v1`;

/**
 * No escalation through the platform's own role kinds. A GlobalRole or WorkspaceRole becomes a ClusterRole
 * and their bindings ClusterRoleBindings and RoleBindings (the RBAC reconciler), which this server writes
 * with its own account: so before a role or a GlobalRoleBinding is written, the caller is asked to write
 * the equivalent Kubernetes object themselves, as a dry run (`dryRun=All`: checked, never stored). Kubernetes then decides as it
 * would for the real thing: RBAC `create` on the kind, and a role only with rules the caller holds (or
 * `escalate`), a binding only to a role whose rules the caller holds where it applies (or `bind`). Its
 * 403 is passed on.
 */
export class EscalationCheck {
  readonly #kc: KubeConfig;
  readonly #platform: string;
  readonly #names: RbacNames;
  readonly #timeoutMs: number;
  #dispatcher: Promise<Dispatcher> | undefined;

  constructor(deps: { kubeConfig: KubeConfig; platformName: string; timeoutMs: number }) {
    this.#kc = deps.kubeConfig;
    this.#platform = deps.platformName;
    this.#names = rbacNames(deps.platformName);
    this.#timeoutMs = deps.timeoutMs;
  }

  /** A role with these rules: 403 unless the caller may create a ClusterRole holding them. */
  async role(caller: Identity, rules: readonly unknown[]): Promise<void> {
    await this.#dryRun(caller, `${RBAC_V1}/clusterroles`, {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRole',
      metadata: { generateName: `${this.#platform}-escalation-check-` },
      rules,
    });
  }

  /** A GlobalRoleBinding to `role`: 403 unless the caller may create the ClusterRoleBinding it becomes. */
  async globalRoleBinding(caller: Identity, role: string, subjects: readonly RbacSubject[]): Promise<void> {
    const clusterRole = boundClusterRole(this.#names, 'GlobalRole', role);
    await this.#dryRun(caller, `${RBAC_V1}/clusterrolebindings`, {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { generateName: `${this.#platform}-escalation-check-` },
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: clusterRole },
      subjects: rbacSubjects(subjects),
    });
  }

  /**
   * A WorkspaceRoleBinding to a WorkspaceRole with these rules, in force in these namespaces (its
   * workspace's): 403 unless the caller holds every rule in each — Kubernetes' escalation rule for the
   * RoleBinding it becomes. Asked of Kubernetes as a SelfSubjectRulesReview as the caller per namespace,
   * not as a dry run of the RoleBinding: that would also need RBAC `create` on RoleBindings there, which
   * a workspace's admin (authorized here by their workspace role) need not have.
   */
  async workspaceRoleBinding(
    caller: Identity,
    role: { name: string; rules: readonly unknown[] },
    namespaces: readonly string[],
  ): Promise<void> {
    const requested = role.rules.filter(isRule);
    // A few at a time: a workspace may have many projects.
    for (let i = 0; i < namespaces.length; i += 8)
      await Promise.all(
        namespaces.slice(i, i + 8).map(async (ns) => {
          const missing = uncovered(await this.#rulesOf(caller, ns), requested);
          if (missing.length > 0)
            throw new ApiError(
              'Forbidden',
              `user "${caller.username}" is attempting to grant RBAC permissions not currently held in namespace "${ns}" (binding the workspace role "${role.name}"): ${missing
                .slice(0, 5)
                .map((r) => JSON.stringify(r))
                .join(', ')}${missing.length > 5 ? ', …' : ''}`,
            );
        }),
      );
  }

  /** The rules the caller holds in a namespace (their cluster-wide ones included). */
  async #rulesOf(caller: Identity, namespace: string): Promise<Rule[]> {
    const review = await this.#send<{
      status?: { resourceRules?: Rule[]; nonResourceRules?: Rule[] };
    }>(caller, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace },
    });
    return [...(review.status?.resourceRules ?? []), ...(review.status?.nonResourceRules ?? [])];
  }

  async #send<T>(caller: Identity, path: string, body: unknown): Promise<T> {
    this.#dispatcher ??= http1Dispatcher(this.#kc).catch((err: unknown) => {
      this.#dispatcher = undefined;
      throw err;
    });
    try {
      return await kubeRequest<T>(this.#kc, path, {
        method: 'POST',
        body,
        timeoutMs: this.#timeoutMs,
        impersonate: caller,
        dispatcher: await this.#dispatcher,
      });
    } catch (err) {
      throw asApiError(err, 'checking for escalation');
    }
  }

  async #dryRun(caller: Identity, collection: string, body: unknown): Promise<void> {
    this.#dispatcher ??= http1Dispatcher(this.#kc).catch((err: unknown) => {
      this.#dispatcher = undefined;
      throw err;
    });
    try {
      await kubeRequest(this.#kc, `${collection}?dryRun=All`, {
        method: 'POST',
        body,
        timeoutMs: this.#timeoutMs,
        impersonate: caller,
        dispatcher: await this.#dispatcher,
      });
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 404)
        // The role's ClusterRole is not made yet (the reconciler is behind, or nobody leads).
        throw new ApiError(
          'Unavailable',
          `the role is not in force yet (${err.statusMessage ?? 'not found'})`,
          {
            retryAfterSeconds: 1,
          },
        );
      if (err instanceof KubeRequestError && err.statusCode === 403)
        throw new ApiError('Forbidden', err.statusMessage ?? 'forbidden');
      throw asApiError(err, 'checking for escalation');
    }
  }
}

function isRule(value: unknown): value is Rule {
  return typeof value === 'object' && value !== null && Array.isArray((value as Rule).verbs);
}
