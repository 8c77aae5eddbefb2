import type { Page } from 'playwright-core';
import { SEED } from './console-cluster.ts';
import type { RecordedCall } from './recording-proxy.ts';
import {
  answered,
  clickFor,
  confirmDelete,
  goto,
  rowAction,
  rowGone,
  tableRow,
  TOAST_RECORDER,
  type Step,
} from './step-kit.ts';

const user = SEED.userFlow;
const iam = '/kapis/iam.kubesphere.io/v1alpha2';
const project = `/${user.workspace}/clusters/default/projects/${user.project}`;
const deploymentsApi = `/apis/apps/v1/namespaces/${user.project}/deployments`;

const DEPLOYMENT_YAML = [
  'apiVersion: apps/v1',
  'kind: Deployment',
  'metadata:',
  `  name: ${user.deployment}`,
  `  namespace: ${user.project}`,
  `  labels: { app: ${user.deployment} }`,
  'spec:',
  '  replicas: 1',
  `  selector: { matchLabels: { app: ${user.deployment} } }`,
  '  template:',
  `    metadata: { labels: { app: ${user.deployment} } }`,
  '    spec:',
  '      containers:',
  '        - { name: nginx, image: "nginx:1.27" }',
  '',
].join('\n');

/** Polls `probe` until it finds nothing wrong or the deadline passes; its last reason, or undefined. */
async function until(
  page: Page,
  timeoutMs: number,
  probe: () => Promise<string | undefined>,
): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = await probe();
    if (!reason || Date.now() > deadline) return reason;
    await page.waitForTimeout(250);
  }
}

/**
 * Picks an option of a form's select (the console's own control), found by the form item's label, and
 * waits until the control shows it: a click that lands while the menu is still opening is lost, and the
 * dialog would then send the value it opened with.
 */
async function choose(page: Page, label: string, option: string): Promise<void> {
  const select = page.locator('.form-item', { hasText: label }).first().locator('.select').first();
  for (let attempt = 1; ; attempt++) {
    await select.click();
    await page.locator('.select-option').getByText(option, { exact: true }).first().click();
    const wrong = await until(page, 2_000, async () => {
      const shown = (await select.innerText()).trim();
      return shown.split('\n')[0] === option
        ? undefined
        : `the ${label} picker shows "${shown}", not ${option}`;
    });
    if (!wrong) return;
    if (attempt === 3) throw new Error(wrong);
  }
}

/** The invite dialog of a members page: the user's "+" button, then a role of its menu, then OK. */
async function invite(page: Page, role: string, path: string): Promise<void> {
  await page.locator('[data-test="table-invite"]').click();
  const item = page.locator(`[data-user="${user.name}"]`);
  await item.locator('button').click();
  await page.locator('.menu-item', { hasText: role }).first().click();
  await clickFor(page, page.locator('[data-test="modal-ok"]'), 'POST', path);
}

/** The calls for the objects in the project (through the Kubernetes proxy or the resources API). */
const PROJECT_OBJECTS = new RegExp(
  `^/(api|apis|kapis/resources\\.kubesphere\\.io)/.*/namespaces/${user.project}/`,
);

/** Whether the calls for the project's objects were refused (a 403 each), as the user's access has ended. */
function projectRefused(calls: RecordedCall[]): string | undefined {
  const objects = calls.filter((c) => PROJECT_OBJECTS.test(c.url));
  const allowed = objects.find((c) => c.status < 400);
  if (allowed) return `still allowed: ${allowed.method} ${allowed.url.slice(0, 100)}`;
  const refusedProject = calls.some(
    (c) => c.url.endsWith(`/workspaces/${user.workspace}/namespaces/${user.project}`) && c.status === 403,
  );
  return refusedProject || objects.some((c) => c.status === 403)
    ? undefined
    : `no request for ${user.project} was refused`;
}

/**
 * Issue 33 §3, a platform team's day: the administrator creates a user with a platform role, edits their
 * email, changes their role, invites them to a workspace and to one of its projects (as `operator`,
 * then `admin`); the user logs in in a second browser context, sees only that workspace and project and
 * creates a Deployment there; then the administrator removes them from the project (their requests for
 * it are refused) and deletes them (their session ends). In this order: each step relies on the ones
 * before it.
 */
export function userFlowSteps(): Step[] {
  let userPage: Page | undefined;
  /** The user's own browser context: no cookie of the administrator's, the same toast recorder. */
  const asUser = async (adminPage: Page): Promise<Page> => {
    if (userPage) return userPage;
    const browser = adminPage.context().browser();
    if (!browser) throw new Error('the administrator page has no browser');
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.addInitScript(TOAST_RECORDER);
    userPage = await context.newPage();
    return userPage;
  };

  return [
    {
      name: 'user: create with a platform role',
      act: async (page, consoleUrl) => {
        await goto('/access/accounts')(page, consoleUrl);
        await page.locator('[data-test="table-create"]').click();
        await page.locator('input[name="metadata.name"]').fill(user.name);
        await page.locator('input[name="spec.email"]').fill(user.email);
        // The role picker lists the platform roles (`globalroles?limit=-1`).
        await choose(page, 'Platform Role', user.firstRole);
        await page.locator('input[name="spec.password"]').fill(user.password);
        await clickFor(page, page.locator('[data-test="modal-ok"]'), 'POST', `${iam}/users`);
      },
      expect: [user.email],
      rows: [{ key: user.name, cells: { 'Platform Role': user.firstRole } }],
      check: async (_page, calls) => answered(calls, 'POST', `${iam}/users`),
    },
    {
      name: 'user: edit email',
      act: async (page) => {
        await rowAction(page, user.name, 'edit');
        await page.locator('input[name="spec.email"]').fill(user.newEmail);
        await clickFor(page, page.locator('[data-test="modal-ok"]'), 'PUT', `${iam}/users/${user.name}`);
      },
      expect: [user.newEmail],
      rows: [{ key: user.name, cells: { 'Platform Role': user.firstRole } }],
      check: async (_page, calls) => answered(calls, 'PUT', `${iam}/users/${user.name}`),
    },
    {
      name: 'user: change platform role',
      act: async (page) => {
        await rowAction(page, user.name, 'edit');
        await choose(page, 'Platform Role', user.role);
        await clickFor(page, page.locator('[data-test="modal-ok"]'), 'PUT', `${iam}/users/${user.name}`);
      },
      expect: [user.newEmail],
      rows: [{ key: user.name, cells: { 'Platform Role': user.role } }],
      check: async (_page, calls) => answered(calls, 'PUT', `${iam}/users/${user.name}`),
    },
    {
      name: 'user: invite to workspace',
      act: async (page, consoleUrl) => {
        await goto(`/workspaces/${user.workspace}/members`)(page, consoleUrl);
        await invite(
          page,
          `${user.workspace}-regular`,
          `${iam}/workspaces/${user.workspace}/workspacemembers`,
        );
      },
      expect: [],
      rows: [{ key: user.name, cells: { Role: `${user.workspace}-regular` } }],
      check: async (_page, calls) =>
        answered(calls, 'POST', `${iam}/workspaces/${user.workspace}/workspacemembers`),
    },
    {
      name: 'user: invite to project as operator',
      act: async (page, consoleUrl) => {
        await goto(`${project}/members`)(page, consoleUrl);
        // The dialog offers the workspace's members only.
        await invite(page, 'operator', `${iam}/namespaces/${user.project}/members`);
      },
      expect: [],
      rows: [{ key: user.name, cells: { Role: 'operator' } }],
      check: async (_page, calls) => answered(calls, 'POST', `${iam}/namespaces/${user.project}/members`),
    },
    {
      name: 'user: change project role',
      act: async (page) => {
        await rowAction(page, user.name, 'modify');
        await choose(page, 'Role', 'admin');
        const path = `${iam}/namespaces/${user.project}/members/${user.name}`;
        await clickFor(page, page.locator('[data-test="modal-ok"]'), 'PUT', path);
      },
      expect: [],
      rows: [{ key: user.name, cells: { Role: 'admin' } }],
      check: async (_page, calls) =>
        answered(calls, 'PUT', `${iam}/namespaces/${user.project}/members/${user.name}`),
    },
    {
      name: 'user: log in (second browser context)',
      session: asUser,
      act: async (page, consoleUrl) => {
        await page.goto(`${consoleUrl}/login`, { waitUntil: 'domcontentloaded' });
        await page.locator('input[name="username"]').fill(user.name);
        await page.locator('input[name="password"]').fill(user.password);
        await Promise.all([
          page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 60_000 }),
          page.locator('button[type="submit"]').click(),
        ]);
      },
      expect: [],
      judgePage: false,
      check: async (page) =>
        (await page.context().cookies()).some((c) => c.name === 'token') ? undefined : 'no token cookie',
    },
    {
      name: 'user: sees only their workspace',
      session: asUser,
      // A user without a platform-wide role lands in their (first) workspace; its card opens the
      // workspace picker, which lists the workspaces they may see.
      act: async (page, consoleUrl) => {
        await goto('/')(page, consoleUrl);
        await page.waitForURL((url) => url.pathname.startsWith(`/workspaces/${user.workspace}`));
        await Promise.all([
          page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/workspacetemplates')),
          page.locator('.pointer', { hasText: user.workspace }).first().click(),
        ]);
      },
      expect: [],
      check: async (page, _calls, timeoutMs) => {
        const picker = page.getByRole('dialog');
        try {
          await picker.getByText(user.workspace, { exact: true }).first().waitFor({ timeout: timeoutMs });
        } catch {
          return `the workspace picker does not list ${user.workspace}`;
        }
        return (await picker.getByText(SEED.workspace, { exact: true }).count()) > 0
          ? `the workspace picker lists another workspace (${SEED.workspace})`
          : undefined;
      },
    },
    {
      name: 'user: sees only their project',
      session: asUser,
      act: goto(`/workspaces/${user.workspace}/projects`),
      expect: [],
      rows: [{ key: user.project, cells: { Status: 'Active' } }],
      check: async (page) => {
        const shown = await page.locator('tbody tr[data-row-key]').count();
        if ((await tableRow(page, user.otherProject).count()) > 0)
          return `another project (${user.otherProject}) is listed`;
        return shown === 1 ? undefined : `${shown} projects listed, not 1`;
      },
    },
    {
      name: 'user: create a deployment',
      session: asUser,
      act: async (page, consoleUrl) => {
        await goto(`${project}/deployments`)(page, consoleUrl);
        await page.locator('[data-test="table-create"]').click();
        await page.getByText('Edit YAML', { exact: true }).click();
        const editor = page.locator('.ace_editor');
        await editor.waitFor({ state: 'visible' });
        // The dialog's YAML editor (Ace): its content replaced as a paste would.
        await page.evaluate(
          `document.querySelector('.ace_editor').env.editor.setValue(${JSON.stringify(DEPLOYMENT_YAML)}, 1)`,
        );
        const create = page.getByRole('button', { name: 'Create', exact: true }).last();
        await clickFor(page, create, 'POST', deploymentsApi);
        await editor.waitFor({ state: 'detached' });
      },
      expect: [],
      // The dialog's first page asks for the cluster's federated projects (`GET
      // /kapis/resources.kubesphere.io/v1alpha3/namespaces?labelSelector=kubefed.io/managed=true`), which
      // a project member may not list: the original refuses it too (ks-installer's `authenticated` role lets
      // every user list nodes and read the tenant API, not list namespaces cluster-wide), and its console
      // shows the 403 as a toast.
      knownToasts: [
        new RegExp(
          `namespaces is forbidden: User "${user.name}" cannot list resource "namespaces" in API group "" at the cluster scope`,
        ),
      ],
      check: async (page, calls, timeoutMs) =>
        answered(calls, 'POST', deploymentsApi) ??
        (await until(page, timeoutMs, async () =>
          (await page.locator('tbody tr', { hasText: user.deployment }).count()) > 0
            ? undefined
            : `${user.deployment} is not listed`,
        )),
    },
    {
      name: 'user: removed from project',
      act: async (page, consoleUrl) => {
        await goto(`${project}/members`)(page, consoleUrl);
        await rowAction(page, user.name, 'delete');
        await confirmDelete(page, user.name, `${iam}/namespaces/${user.project}/members/${user.name}`);
      },
      expect: [],
      check: async (page, calls, timeoutMs) =>
        answered(calls, 'DELETE', `${iam}/namespaces/${user.project}/members/${user.name}`) ??
        rowGone(page, user.name, timeoutMs),
    },
    {
      name: 'user: project access ends',
      session: asUser,
      // Their next visit to the project's workloads. The console first asks our tenant API for the
      // project: refused, it sends them back to their workspace's projects, now none; allowed (its
      // visibility is a SubjectAccessReview, and an "allowed" answer is cached for
      // `authz.allowedTtlSeconds`), it asks for the workloads, which Kubernetes RBAC refuses at once.
      act: async (page, consoleUrl) => {
        await Promise.all([
          page.waitForResponse((r) =>
            r.url().includes(`/workspaces/${user.workspace}/namespaces/${user.project}`),
          ),
          goto(`${project}/deployments`)(page, consoleUrl),
        ]);
        await Promise.race([
          page
            .waitForURL((url) => url.pathname === `/workspaces/${user.workspace}/projects`)
            .catch(() => undefined),
          page
            .waitForResponse((r) => r.url().includes(`/namespaces/${user.project}/deployments`))
            .catch(() => undefined),
        ]);
      },
      expect: [],
      // Toasts are how the console says a request was refused: judged below.
      judgePage: false,
      check: async (page, calls, timeoutMs) =>
        projectRefused(calls) ??
        (await until(page, timeoutMs, async () => {
          const bounced =
            new URL(page.url()).pathname === `/workspaces/${user.workspace}/projects` &&
            (await page.getByText('No Project Found').count()) > 0;
          const toasts = (await page.evaluate('window.__errorToasts || []')) as string[];
          return bounced || toasts.some((t) => /forbidden/i.test(t))
            ? undefined
            : 'the page does not say the project is no longer theirs';
        })) ??
        ((await page.locator('tbody tr', { hasText: user.deployment }).count()) > 0
          ? `${user.deployment} still shown`
          : undefined),
    },
    {
      name: 'user: delete',
      act: async (page, consoleUrl) => {
        await goto('/access/accounts')(page, consoleUrl);
        await rowAction(page, user.name, 'delete');
        await confirmDelete(page, user.name, `${iam}/users/${user.name}`);
      },
      expect: [],
      check: async (page, calls, timeoutMs) =>
        answered(calls, 'DELETE', `${iam}/users/${user.name}`) ?? rowGone(page, user.name, timeoutMs),
    },
    {
      name: 'user: session ends',
      session: asUser,
      // Any page: the console server's first request with the deleted user's token is refused.
      act: goto(`${project}/deployments`),
      expect: [],
      judgePage: false,
      check: async (page, _calls, timeoutMs) => {
        try {
          await page.waitForURL((url) => url.pathname.startsWith('/login'), { timeout: timeoutMs });
          return undefined;
        } catch {
          return `not sent to the login page (at ${new URL(page.url()).pathname})`;
        }
      },
    },
  ];
}
