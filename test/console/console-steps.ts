import type { Page } from 'playwright-core';
import type { RecordedCall } from './recording-proxy.ts';
import { SEED } from './console-cluster.ts';
import { goto, rowOnScreen, type Step } from './step-kit.ts';
import { userFlowSteps } from './steps-user-flow.ts';
import { MEMBERS_ROLES_STEPS } from './steps-members-roles.ts';
import { MONITORING_STEPS } from './steps-monitoring.ts';
import { RELEASE_STEPS } from './steps-release.ts';
import { TENANT_WRITE_STEPS } from './steps-tenant-writes.ts';

export interface StepResult {
  step: string;
  /** The page the step ran in (the administrator's, or another session's): its screenshot. */
  page: Page;
  pass: boolean;
  reason: string;
  /** API calls during the step that failed (status ≥ 400 or unreachable), for the table's notes. */
  failedCalls: string[];
}

const node = SEED.node;
const project = `/${SEED.workspace}/clusters/default/projects/${SEED.project}`;

/** Issue 18's steps but logout, in order; later steps rely on the session the first one opens. */
const BROWSE_STEPS: Step[] = [
  {
    name: 'login',
    act: async (page, consoleUrl) => {
      await page.goto(`${consoleUrl}/login`, { waitUntil: 'domcontentloaded' });
      await page.locator('input[name="username"]').fill(SEED.admin.name);
      await page.locator('input[name="password"]').fill(SEED.admin.password);
      await Promise.all([
        page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 60_000 }),
        page.locator('button[type="submit"]').click(),
      ]);
    },
    expect: [],
    // Login is judged by its outcome (a session, the console leaves /login); the page it lands on is step 2.
    judgePage: false,
    check: async (page) =>
      (await page.context().cookies()).some((c) => c.name === 'token') ? undefined : 'no token cookie',
  },
  { name: 'landing', act: goto('/'), expect: [`Hello ${SEED.admin.name}`, 'Platform Resources'] },
  {
    name: 'cluster overview',
    act: goto('/clusters/default/overview'),
    expect: ['System Components', 'Resource Usage', 'Kubernetes Status'],
  },
  { name: 'nodes list', act: goto('/clusters/default/nodes'), expect: ['Control plane nodes', 'node-0023'] },
  {
    name: 'nodes sort + page 2',
    act: async (page) => {
      const nodesQuery = (part: string) => (r: { url(): string }) =>
        r.url().includes('/nodes?') && r.url().includes(part);
      // The column header opens a menu: ascending or descending order.
      await page.locator('th', { hasText: 'Name' }).first().locator('a').click();
      await Promise.all([
        page.waitForResponse(nodesQuery('sortBy=name')),
        page
          .getByText(/^Ascending/)
          .first()
          .click(),
      ]);
      await Promise.all([
        page.waitForResponse(nodesQuery('page=2')),
        // The pagination's "next" button (an icon button).
        page.locator('button:has(.kubed-icon-next)').last().click(),
      ]);
    },
    // 20 nodes are listed (the edge ones are not): page 2 of 2, by name from node-0012 to node-0023.
    expect: ['2 / 2', 'node-0012', 'node-0023'],
    check: async (page) =>
      (await page.getByText('node-0011', { exact: true }).count()) > 0 ? 'node-0011 is on page 2' : undefined,
  },
  {
    name: 'nodes search',
    act: async (page) => {
      const search = page.locator('input[placeholder*="earch"]').first();
      await search.click();
      await search.fill('node-0024');
      await Promise.all([
        page.waitForResponse((r) => r.url().includes('/nodes?') && r.url().includes('name=node-0024')),
        search.press('Enter'),
      ]);
    },
    expect: ['node-0024'],
    check: async (page) =>
      (await page.getByText('node-0000', { exact: true }).count()) > 0
        ? 'search did not narrow the list'
        : undefined,
  },
  {
    name: 'node detail: status',
    act: goto(`/clusters/default/nodes/${node}`),
    expect: [node, 'Running Status'],
  },
  { name: 'node detail: pods', act: goto(`/clusters/default/nodes/${node}/pods`), expect: [SEED.pods[0]] },
  {
    name: 'node detail: events',
    act: goto(`/clusters/default/nodes/${node}/events`),
    expect: [SEED.eventReason],
  },
  { name: 'projects', act: goto('/clusters/default/projects'), expect: [SEED.project] },
  { name: 'project overview', act: goto(`${project}/overview`), expect: [SEED.project] },
  { name: 'deployments', act: goto(`${project}/deployments`), expect: [SEED.deployment] },
  { name: 'pods', act: goto(`${project}/pods`), expect: [SEED.pods[0], SEED.pods[1]] },
  { name: 'users', act: goto('/access/accounts'), expect: [SEED.admin.name] },
  { name: 'workspaces', act: goto('/access/workspaces'), expect: [SEED.workspace] },
];

const LOGOUT: Step = {
  name: 'logout',
  act: async (page, consoleUrl) => {
    await page.goto(`${consoleUrl}/clusters/default/overview`, { waitUntil: 'domcontentloaded' });
    // The header's user menu (a dropdown under the user name).
    await page.getByText(SEED.admin.name, { exact: true }).first().click();
    await Promise.all([
      page.waitForURL((url) => url.pathname.startsWith('/login'), { timeout: 30_000 }),
      page.getByText('Log Out', { exact: true }).click(),
    ]);
  },
  expect: [],
  check: async (_page, calls) => {
    const logout = calls.find((c) => c.url.startsWith('/oauth/logout'));
    if (!logout) return 'the console never called /oauth/logout';
    return logout.status === 200 ? undefined : `GET /oauth/logout answered ${logout.status}`;
  },
};

/**
 * Every step, in order: issue 18's, then what issues 33, 34 and 35 added (the release the console sees, the
 * members and roles of every scope, a workspace and a project created and deleted, a user created,
 * invited, logged in as, removed and deleted, the monitoring pages' numbers and charts), and logout last.
 */
export const STEPS: Step[] = [
  ...BROWSE_STEPS,
  ...RELEASE_STEPS,
  ...MEMBERS_ROLES_STEPS,
  ...TENANT_WRITE_STEPS,
  ...userFlowSteps(),
  ...MONITORING_STEPS,
  LOGOUT,
];

async function settled(page: Page, deadlineMs: number): Promise<string | undefined> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const spinning = await page.locator('[class*="spin-spinning"]:visible').count();
    if (spinning === 0) return undefined;
    if (Date.now() > deadline) return `${spinning} spinner(s) still turning after ${deadlineMs / 1000} s`;
    await page.waitForTimeout(250);
  }
}

/** Runs one step and judges it: its data on screen, no spinner left, no `Not Found`, no error toast. */
export async function runStep(
  step: Step,
  adminPage: Page,
  consoleUrl: string,
  calls: RecordedCall[],
  timeoutMs: number,
): Promise<StepResult> {
  const first = calls.length;
  const reasons: string[] = [];
  let page = adminPage;
  try {
    if (step.session) page = await step.session(adminPage);
    // Toasts of the previous step (same document: the interactive steps) are not this step's.
    await page.evaluate('window.__errorToasts = []').catch(() => undefined);
    await step.act(page, consoleUrl);
    for (const text of step.expect) {
      await page
        .getByText(text)
        .first()
        .waitFor({ state: 'visible', timeout: timeoutMs })
        .catch(() => reasons.push(`"${text}" not on screen`));
    }
    for (const row of step.rows ?? []) {
      const missing = await rowOnScreen(page, row, timeoutMs);
      if (missing) reasons.push(missing);
    }
    if (step.judgePage !== false) {
      const spinner = await settled(page, timeoutMs);
      if (spinner) reasons.push(spinner);
      const body = (
        await page
          .locator('body')
          .innerText()
          .catch(() => '')
      ).trim();
      if (/^Not Found$/m.test(body)) reasons.push('page says Not Found');
      const toasts = ((await page.evaluate('window.__errorToasts || []')) as string[]).filter(
        (toast) => !step.knownToasts?.some((known) => known.test(toast)),
      );
      if (toasts.length > 0) reasons.push(`error toast: ${toasts.join(' | ').slice(0, 200)}`);
    }
    const stepCalls = calls.slice(first);
    const extra = await step.check?.(page, stepCalls, timeoutMs);
    if (extra) reasons.push(extra);
  } catch (err) {
    reasons.push((err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200));
  }
  const failedCalls = calls
    .slice(first)
    .filter((c) => c.status === 0 || c.status >= 400)
    .map((c) => `${c.status} ${c.method} ${c.url.slice(0, 120)}`);
  return {
    step: step.name,
    page,
    pass: reasons.length === 0,
    reason: reasons.join('; '),
    failedCalls,
  };
}
