import { Router, type Request, type Response } from 'express';
import { jsonBody, OBJECT_TYPES, PATCH_TYPES, type JsonBody } from '../http/json-body.ts';
import { identityOf } from '../http/request-context.ts';
import { sendJsonBytes } from '../http/json-bytes.ts';
import { ListQueryParser, parseListQuery } from '../list-query/list-query.ts';
import { pageObjects } from './object-page.ts';
import type { TenantNames, WorkspaceResource } from './tenant-store.ts';
import type { Patch, TenantWriter } from './tenant-writes.ts';
import type { WorkspaceAccess } from './workspace-access.ts';
import type { WorkspacePages } from './workspace-pages.ts';

/** The largest object a write may send (the kube-apiserver's own limit is 3 MiB; these are small). */
export const MAX_OBJECT_BYTES = 256 * 1024;

const objectBody = jsonBody({ limitBytes: MAX_OBJECT_BYTES, accept: OBJECT_TYPES });
const patchBody = jsonBody({ limitBytes: MAX_OBJECT_BYTES, accept: PATCH_TYPES });
/** DeleteOptions: optional (the console sends `{}`, scripts often nothing). */
const deleteBody = jsonBody({ limitBytes: MAX_OBJECT_BYTES, accept: OBJECT_TYPES, optional: true });

const bodyOf = (res: Response): unknown => (res.locals['json'] as JsonBody).value;

/** `application/json` with an array is a JSON patch, as the original reads its template patches. */
function patchOf(res: Response): Patch {
  const { mediaType, value } = res.locals['json'] as JsonBody;
  const json =
    mediaType === 'application/json-patch+json' || (mediaType === 'application/json' && Array.isArray(value));
  return { kind: json ? 'json' : 'merge', value };
}

/** `/kapis/tenant.<p>.io` */
export function tenantApiPath(platformName: string): string {
  return `/kapis/tenant.${platformName}.io`;
}

/**
 * The original's tenant API as its console reads it: workspaces (WorkspaceTemplates on a host cluster,
 * Workspaces otherwise) and the namespaces of a workspace, limited to what the caller may see, in the
 * v1alpha3 list envelope. Served from the tenant caches (tenant-cache.ts), authorized by cached
 * SubjectAccessReviews (workspace-access.ts): no request to the kube-apiserver per page.
 */
export function tenantRoutes(deps: {
  platformName: string;
  names: TenantNames;
  access: WorkspaceAccess;
  pages: WorkspacePages;
  writer: TenantWriter;
}): Router {
  const { names, access, writer } = deps;
  const base = tenantApiPath(deps.platformName);
  const router = Router();

  const workspaceQueries = new ListQueryParser();
  const listWorkspaces = (resource: WorkspaceResource) => async (req: Request, res: Response) => {
    const query = workspaceQueries.parse(req.url, () => req.query);
    sendJsonBytes(res, await deps.pages.page(identityOf(req), resource, query));
  };
  const getWorkspace =
    (resource: WorkspaceResource) => async (req: Request<{ workspace: string }>, res: Response) => {
      res
        .set('Cache-Control', 'no-store')
        .json(await access.workspace(identityOf(req), resource, req.params.workspace));
    };

  router.get(`${base}/v1alpha3/workspacetemplates`, listWorkspaces('workspacetemplates'));
  router.get(`${base}/v1alpha3/workspacetemplates/:workspace`, getWorkspace('workspacetemplates'));
  router.get(`${base}/v1alpha3/workspaces`, listWorkspaces('workspaces'));
  router.get(`${base}/v1alpha3/workspaces/:workspace`, getWorkspace('workspaces'));
  router.get(`${base}/v1alpha2/workspaces`, listWorkspaces('workspaces'));
  router.get(`${base}/v1alpha2/workspaces/:workspace`, getWorkspace('workspaces'));

  // Writes of WorkspaceTemplates, on both paths the original serves them (v1alpha2 names them workspaces).
  for (const path of [`${base}/v1alpha3/workspacetemplates`, `${base}/v1alpha2/workspaces`]) {
    router.post(path, objectBody, async (req: Request, res: Response) => {
      res.json(await writer.createWorkspaceTemplate(identityOf(req), bodyOf(res)));
    });
    router.put(
      `${path}/:workspace`,
      objectBody,
      async (req: Request<{ workspace: string }>, res: Response) => {
        res.json(await writer.replaceWorkspaceTemplate(identityOf(req), req.params.workspace, bodyOf(res)));
      },
    );
    router.patch(
      `${path}/:workspace`,
      patchBody,
      async (req: Request<{ workspace: string }>, res: Response) => {
        res.json(await writer.patchWorkspaceTemplate(identityOf(req), req.params.workspace, patchOf(res)));
      },
    );
    router.delete(
      `${path}/:workspace`,
      deleteBody,
      async (req: Request<{ workspace: string }>, res: Response) => {
        res.json(await writer.deleteWorkspaceTemplate(identityOf(req), req.params.workspace, bodyOf(res)));
      },
    );
  }

  const namespaces = `${base}/v1alpha2/workspaces/:workspace/namespaces`;
  router.post(namespaces, objectBody, async (req: Request<{ workspace: string }>, res: Response) => {
    res.json(await writer.createNamespace(identityOf(req), req.params.workspace, bodyOf(res)));
  });
  type NamespacePath = Request<{ workspace: string; namespace: string }>;
  router.put(`${namespaces}/:namespace`, objectBody, async (req: NamespacePath, res: Response) => {
    const { workspace, namespace } = req.params;
    res.json(await writer.replaceNamespace(identityOf(req), workspace, namespace, bodyOf(res)));
  });
  router.patch(`${namespaces}/:namespace`, patchBody, async (req: NamespacePath, res: Response) => {
    const { workspace, namespace } = req.params;
    res.json(await writer.patchNamespace(identityOf(req), workspace, namespace, patchOf(res)));
  });
  router.delete(`${namespaces}/:namespace`, deleteBody, async (req: NamespacePath, res: Response) => {
    const { workspace, namespace } = req.params;
    res.json(await writer.deleteNamespace(identityOf(req), workspace, namespace));
  });

  router.get(
    `${base}/v1alpha2/workspaces/:workspace/workspacemembers/:member/namespaces`,
    async (req: Request<{ workspace: string; member: string }>, res: Response) => {
      const query = parseListQuery(req.query);
      const { workspace, member } = req.params;
      const visible = await access.memberNamespaces(identityOf(req), workspace, member);
      res.set('Cache-Control', 'no-store').json(pageObjects(visible, query, names.aliasAnnotation));
    },
  );

  router.get(
    `${base}/v1alpha2/workspaces/:workspace/namespaces`,
    async (req: Request<{ workspace: string }>, res: Response) => {
      const query = parseListQuery(req.query);
      const visible = await access.workspaceNamespaces(identityOf(req), req.params.workspace);
      res.set('Cache-Control', 'no-store').json(pageObjects(visible, query, names.aliasAnnotation));
    },
  );
  router.get(
    `${base}/v1alpha2/workspaces/:workspace/namespaces/:namespace`,
    async (req: Request<{ workspace: string; namespace: string }>, res: Response) => {
      const { workspace, namespace } = req.params;
      res
        .set('Cache-Control', 'no-store')
        .json(await access.workspaceNamespace(identityOf(req), workspace, namespace));
    },
  );
  return router;
}
