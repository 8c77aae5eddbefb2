import type { Page } from 'playwright-core';
import { SEED } from './console-cluster.ts';
import { goto, type Step } from './step-kit.ts';

const admin = SEED.admin.name;
const project = `/${SEED.workspace}/clusters/default/projects/${SEED.project}`;
const roleRows = (names: readonly string[]) => names.map((key) => ({ key }));

/** The number above a project settings label ("Project roles", "Project members"). */
async function countAbove(page: Page, label: RegExp): Promise<number> {
  const text = await page
    .locator('p', { hasText: label })
    .first()
    .locator('xpath=preceding-sibling::div[1]')
    .innerText();
  return Number(text.trim());
}

/** Waits until project settings show these role and member counts; a reason if they do not in time. */
async function countsShown(
  page: Page,
  roles: number,
  members: number,
  timeoutMs: number,
): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const shown = [await countAbove(page, /^Project roles?$/), await countAbove(page, /^Project members?$/)];
    if (shown[0] === roles && shown[1] === members) return undefined;
    if (Date.now() > deadline)
      return `shows ${shown[0]} roles and ${shown[1]} members, not ${roles} and ${members}`;
    await page.waitForTimeout(250);
  }
}

/** Issue 33 §3: the members and roles of every scope, read through the IAM API. */
export const MEMBERS_ROLES_STEPS: Step[] = [
  {
    name: 'cluster members',
    act: goto('/clusters/default/members'),
    expect: [],
    rows: [{ key: admin, cells: { Role: 'cluster-admin' } }],
  },
  {
    name: 'cluster roles',
    act: goto('/clusters/default/roles'),
    expect: [],
    rows: [{ key: SEED.clusterRole }],
  },
  {
    name: 'workspace members',
    act: goto(`/workspaces/${SEED.workspace}/members`),
    expect: [],
    rows: [{ key: admin, cells: { Role: SEED.workspaceRoles[0] } }],
  },
  {
    name: 'workspace roles',
    act: goto(`/workspaces/${SEED.workspace}/roles`),
    expect: [],
    rows: roleRows(SEED.workspaceRoles),
  },
  {
    name: 'project members',
    act: goto(`${project}/members`),
    expect: [],
    rows: [{ key: admin, cells: { Role: 'admin' } }],
  },
  { name: 'project roles', act: goto(`${project}/roles`), expect: [], rows: roleRows(SEED.projectRoles) },
  { name: 'platform roles', act: goto('/access/roles'), expect: [], rows: roleRows(SEED.platformRoles) },
  {
    name: 'platform role detail',
    act: goto(`/access/roles/${SEED.platformRoles[0]}`),
    // Its Permissions card: the modules of the role templates it aggregates.
    expect: [SEED.platformRoles[0], 'Access Control', 'User Management', 'Platform Settings Management'],
  },
  {
    name: 'project settings: counts',
    act: goto(`${project}/base-info`),
    expect: ['Project Information'],
    // The counts show 0 until the role and member lists have loaded: wait for them, with the deadline.
    check: (page, _calls, timeoutMs) => countsShown(page, SEED.projectRoles.length, 1, timeoutMs),
  },
];
