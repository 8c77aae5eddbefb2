import type { Identity } from '../kernel/identity.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Logger } from '../observability/logger.ts';
import type { LogFilter } from './log-query.ts';

/**
 * Who may read which logs: Kubernetes RBAC, asked per namespace as "may this identity get pods/log
 * here?". A query naming namespaces needs that permission in each of them; a query without a namespace
 * filter reads every namespace and needs it cluster-wide.
 */

/** The question in a SubjectAccessReview's terms (the shape the authz module's reviewer takes). */
export interface LogAccessAttributes {
  verb: 'get';
  group: '';
  resource: 'pods';
  subresource: 'log';
  namespace?: string;
}

/** Answers one authorization question (cached SubjectAccessReview in production). Throws when undecidable. */
export type AccessCheck = (
  identity: Identity,
  attributes: LogAccessAttributes,
) => Promise<{ allowed: boolean }>;

const attributes = (namespace?: string): LogAccessAttributes => ({
  verb: 'get',
  group: '',
  resource: 'pods',
  subresource: 'log',
  ...(namespace ? { namespace } : {}),
});

/** Resolves when the identity may read every log the filter touches; throws 403 naming what is missing, or 503. */
export async function authorizeLogRead(
  check: AccessCheck,
  identity: Identity,
  filter: Pick<LogFilter, 'namespaces'>,
  logger: Logger,
): Promise<void> {
  const scopes = filter.namespaces.length > 0 ? filter.namespaces : [undefined];
  let answers: boolean[];
  try {
    answers = await Promise.all(scopes.map(async (ns) => (await check(identity, attributes(ns))).allowed));
  } catch (err) {
    logger.error('authorization check for logs failed', {
      user: identity.username,
      error: (err as Error).message,
    });
    throw new ApiError('Unavailable', 'authorization check is temporarily unavailable', {
      retryAfterSeconds: 1,
    });
  }
  const denied = scopes.filter((_, i) => !answers[i]);
  if (denied.length === 0) return;

  const user = `User "${identity.username}" cannot get resource "pods/log" in API group ""`;
  if (denied[0] === undefined) {
    throw new ApiError(
      'Forbidden',
      `pods/log is forbidden: ${user} at the cluster scope; a log query without the namespaces parameter reads every namespace, so name the namespaces whose logs you may read`,
      { details: { kind: 'pods' } },
    );
  }
  const names = denied.map((ns) => `"${ns}"`).join(', ');
  throw new ApiError(
    'Forbidden',
    `pods/log is forbidden: ${user} in the namespace${denied.length > 1 ? 's' : ''} ${names}`,
    {
      details: {
        kind: 'pods',
        causes: denied.map((ns) => ({
          reason: 'Forbidden',
          message: `namespace "${ns}"`,
          field: 'namespaces',
        })),
      },
    },
  );
}
