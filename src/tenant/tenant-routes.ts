import { Router, type Request, type Response } from 'express';
import { identityOf } from '../http/request-context.ts';
import { parseListQuery } from '../list-query/list-query.ts';
import { pageObjects } from './object-page.ts';
import type { TenantNames, WorkspaceResource } from './tenant-store.ts';
import type { WorkspaceAccess } from './workspace-access.ts';

/** `/kapis/tenant.<p>.io` */
export function tenantApiPath(platformName: string): string {
  return `/kapis/tenant.${platformName}.io`;
}

/**
 * The original's tenant API as its console reads it: workspaces (WorkspaceTemplates on a host cluster,
 * Workspaces otherwise) and the namespaces of a workspace, limited to what the caller may see, in the
 * v1alpha3 list envelope. Served from the kube-apiserver per request (its own watch cache answers lists).
 */
export function tenantRoutes(deps: {
  platformName: string;
  names: TenantNames;
  access: WorkspaceAccess;
}): Router {
  const { names, access } = deps;
  const base = tenantApiPath(deps.platformName);
  const router = Router();

  const listWorkspaces = (resource: WorkspaceResource) => async (req: Request, res: Response) => {
    const query = parseListQuery(req.query);
    const visible = await access.visibleWorkspaces(identityOf(req), resource);
    res.set('Cache-Control', 'no-store').json(pageObjects(visible, query, names.aliasAnnotation));
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
