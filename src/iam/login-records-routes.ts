import { Router, type Request, type Response } from 'express';
import type { ResourceAttributes } from '../access/access-review.ts';
import { identityOf } from '../http/request-context.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { parseListQuery } from '../list-query/list-query.ts';
import type { IamGroup } from '../users/iam-resources.ts';
import type { LoginRecordObject, LoginRecordWriter } from '../users/login-records.ts';

export interface RecordsAuthorizer {
  authorize(identity: Identity, attributes: ResourceAttributes): Promise<unknown>;
}

/**
 * `GET /kapis/iam.<platform>.io/v1alpha2/users/{user}/loginrecords`, the original's login history: the
 * v1alpha3 list envelope with its paging, sorting, `name` and `labelSelector`. Callers read their own
 * records; anyone else's need Kubernetes RBAC `list` on `loginrecords` of the IAM group.
 */
export function loginRecordsRoutes(deps: {
  iam: IamGroup;
  records: LoginRecordWriter;
  /** Whether the loginrecords CRD exists (found at start). */
  enabled: () => boolean;
  authorizer: RecordsAuthorizer;
}): Router {
  const router = Router();
  router.get(
    `/kapis/${deps.iam.group}/${deps.iam.version}/users/:user/loginrecords`,
    async (req: Request<{ user: string }>, res: Response) => {
      const { user } = req.params;
      const identity = identityOf(req);
      if (identity.username !== user) {
        await deps.authorizer.authorize(identity, {
          verb: 'list',
          group: deps.iam.group,
          resource: 'loginrecords',
        });
      }
      const query = parseListQuery(req.query);
      if (!deps.enabled()) {
        throw new ApiError(
          'NotFound',
          'login records are not kept here: the loginrecords CRD is not installed',
          {
            details: { group: deps.iam.group, kind: 'loginrecords' },
          },
        );
      }
      const matching = (await deps.records.list(user)).filter(
        (r) =>
          (query.name === undefined || r.metadata.name.includes(query.name)) &&
          query.labelSelector.matches(r.metadata.labels),
      );
      const sorted = matching.sort((a, b) => {
        const order =
          query.sortBy === 'name' ? compare(a.metadata.name, b.metadata.name) : compareCreated(a, b);
        return query.ascending ? order : -order;
      });
      const items =
        query.limit === undefined
          ? sorted
          : sorted.slice((query.page - 1) * query.limit, query.page * query.limit);
      res.set('Cache-Control', 'no-store').json({ items, totalItems: matching.length });
    },
  );
  return router;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Creation time, ties broken by name (as the original's creationTimestamp sort). */
function compareCreated(a: LoginRecordObject, b: LoginRecordObject): number {
  const ta = Date.parse(String(a.metadata.creationTimestamp ?? '')) || 0;
  const tb = Date.parse(String(b.metadata.creationTimestamp ?? '')) || 0;
  return ta - tb || compare(a.metadata.name, b.metadata.name);
}
