import { SEED } from './console-cluster.ts';
import { answered, clickFor, confirmDelete, goto, rowAction, rowGone, type Step } from './step-kit.ts';

const admin = SEED.admin.name;
const ws = SEED.newWorkspace;
const ns = SEED.newProject;
const newProject = `/${ws}/clusters/default/projects/${ns}`;
const tenant = '/kapis/tenant.kubesphere.io';

/**
 * Issue 34 §3: a workspace and a project in it created and deleted through the console's dialogs, in
 * this order (each relies on the one before). The new project's default roles and its creator as `admin`
 * are our tenant reconciler's work.
 */
export const TENANT_WRITE_STEPS: Step[] = [
  {
    name: 'create workspace',
    act: async (page, consoleUrl) => {
      await goto('/access/workspaces')(page, consoleUrl);
      await page.locator('[data-test="table-create"]').click();
      await page.locator('input[name="metadata.name"]').fill(ws);
      // The Administrator picker lists the platform's users.
      await page.locator('.form-item', { hasText: 'Administrator' }).locator('.select').click();
      await page.locator('.select-option').getByText(admin, { exact: true }).first().click();
      const create = page.getByRole('button', { name: 'Create', exact: true }).last();
      await clickFor(page, create, 'POST', `${tenant}/v1alpha3/workspacetemplates`);
    },
    expect: [],
    rows: [{ key: ws }],
    check: async (_page, calls) => answered(calls, 'POST', `${tenant}/v1alpha3/workspacetemplates`),
  },
  {
    name: 'create project',
    act: async (page, consoleUrl) => {
      await goto(`/workspaces/${ws}/projects`)(page, consoleUrl);
      await page.locator('[data-test="table-create"]').click();
      await page.locator('input[name="metadata.name"]').fill(ns);
      const ok = page.locator('[data-test="modal-ok"]');
      await clickFor(page, ok, 'POST', `${tenant}/v1alpha2/workspaces/${ws}/namespaces`);
    },
    expect: [],
    rows: [{ key: ns, cells: { Status: 'Active' } }],
    check: async (_page, calls) => answered(calls, 'POST', `${tenant}/v1alpha2/workspaces/${ws}/namespaces`),
  },
  {
    name: 'new project: default roles',
    act: goto(`${newProject}/roles`),
    expect: [],
    rows: SEED.projectRoles.map((key) => ({ key })),
  },
  {
    name: 'new project: creator is admin',
    act: goto(`${newProject}/members`),
    expect: [],
    rows: [{ key: admin, cells: { Role: 'admin' } }],
  },
  {
    name: 'delete project',
    act: async (page, consoleUrl) => {
      await goto(`/workspaces/${ws}/projects`)(page, consoleUrl);
      await rowAction(page, ns, 'delete');
      await confirmDelete(page, ns, `${tenant}/v1alpha2/workspaces/${ws}/namespaces/${ns}`);
    },
    expect: [],
    // Without a namespace controller (a bare control plane) a deleted namespace stays Terminating.
    check: async (page, calls, timeoutMs) =>
      answered(calls, 'DELETE', `${tenant}/v1alpha2/workspaces/${ws}/namespaces/${ns}`) ??
      rowGone(page, ns, timeoutMs, 'Terminating'),
  },
  {
    name: 'delete workspace',
    act: async (page, consoleUrl) => {
      await goto('/access/workspaces')(page, consoleUrl);
      await rowAction(page, ws, 'delete');
      // The dialog as it opens: its projects are kept ("Delete projects in the workspace" unticked).
      await confirmDelete(page, ws, `${tenant}/v1alpha3/workspacetemplates/${ws}`);
    },
    expect: [],
    check: async (page, calls, timeoutMs) =>
      answered(calls, 'DELETE', `${tenant}/v1alpha3/workspacetemplates/${ws}`) ??
      rowGone(page, ws, timeoutMs),
  },
];
