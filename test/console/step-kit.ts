import type { Locator, Page } from 'playwright-core';
import type { RecordedCall } from './recording-proxy.ts';

/** A row of one of the console's tables: its key (`data-row-key`: the object's name) and cells it must show. */
export interface Row {
  key: string;
  /** The whole text of the row's cell under a column (by the column header's title): a member's role, a count. */
  cells?: Record<string, string>;
}

export interface Step {
  name: string;
  /** The page the step runs in, given the administrator's (default: that one); e.g. a second user's session. */
  session?(adminPage: Page): Promise<Page>;
  /** Navigates or acts; the page then settles. */
  act(page: Page, consoleUrl: string): Promise<void>;
  /** Texts that must be on screen (the step's data). */
  expect: string[];
  /** Table rows that must be on screen. */
  rows?: Row[];
  /** Whether the page must also be free of spinners, `Not Found` and error toasts (default true). */
  judgePage?: boolean;
  /**
   * Error toasts the original shows in the same place, for the same reason (each one named and explained
   * where it is listed); any other toast still fails the step.
   */
  knownToasts?: RegExp[];
  /** Extra check once settled; returns a failure reason, or undefined. */
  check?(page: Page, calls: RecordedCall[], timeoutMs: number): Promise<string | undefined>;
}

export const goto = (path: string) => async (page: Page, consoleUrl: string) => {
  await page.goto(`${consoleUrl}${path}`, { waitUntil: 'domcontentloaded' });
};

/** The table row of this object (the console keys its rows by name). */
export const tableRow = (page: Page, key: string): Locator => page.locator(`tbody tr[data-row-key="${key}"]`);

/** Waits for a row and its cells; returns what is missing, or undefined. */
export async function rowOnScreen(page: Page, row: Row, timeoutMs: number): Promise<string | undefined> {
  const tr = tableRow(page, row.key);
  const deadline = Date.now() + timeoutMs;
  try {
    await tr.first().waitFor({ state: 'visible', timeout: timeoutMs });
  } catch {
    return `no row "${row.key}"`;
  }
  // The row may already be on screen with the values from before the step's write: the console lists
  // again after its dialog answers, so the cells are waited for, not read once.
  for (;;) {
    const wrong = await wrongCell(tr.first(), row);
    if (wrong === undefined) return undefined;
    if (Date.now() > deadline) return wrong;
    await page.waitForTimeout(250);
  }
}

/** The first cell of the row not showing what it should, as a reason; undefined when all do. */
async function wrongCell(tr: Locator, row: Row): Promise<string | undefined> {
  for (const [column, want] of Object.entries(row.cells ?? {})) {
    const shown = await cellText(tr, column).catch(() => undefined);
    if (shown !== want)
      return `row "${row.key}", column ${column}: "${shown ?? 'no such column'}", not "${want}"`;
  }
  return undefined;
}

/** The text of a row's cell under the column titled `column` (a header's first line: sort menus follow it). */
async function cellText(tr: Locator, column: string): Promise<string | undefined> {
  const headers = await tr.locator('xpath=ancestor::table[1]/thead//th').allInnerTexts();
  const index = headers.findIndex((h) => h.split('\n')[0]?.trim() === column);
  if (index < 0) return undefined;
  return (await tr.locator('xpath=./td').nth(index).innerText()).trim();
}

/** Waits until the row is gone, or shows `state` (e.g. a namespace left Terminating); a reason if not. */
export async function rowGone(
  page: Page,
  key: string,
  timeoutMs: number,
  state?: string,
): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const tr = tableRow(page, key);
    if ((await tr.count()) === 0) return undefined;
    if (state && (await tr.first().getByText(state, { exact: true }).count()) > 0) return undefined;
    if (Date.now() > deadline) return `"${key}" still listed after ${timeoutMs / 1000} s`;
    await page.waitForTimeout(250);
  }
}

/** A row's action menu (the ⋮ button), then one of its items (`data-test="table-item-<key>"`). */
export async function rowAction(page: Page, key: string, action: string): Promise<void> {
  const tr = tableRow(page, key);
  await tr.locator('button:has(.kubed-icon-more)').click();
  await tr.locator(`[data-test="table-item-${action}"]`).click();
}

/** Clicks, and waits until the browser has the answer to the API request the click sends. */
export async function clickFor(page: Page, target: Locator, method: string, path: string): Promise<void> {
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === method && new URL(r.url()).pathname === path),
    target.click(),
  ]);
}

/** The console's delete dialog: type the name to confirm, then OK (which sends DELETE `path`). */
export async function confirmDelete(page: Page, name: string, path: string): Promise<void> {
  await page.locator('input[name="confirm"]').fill(name);
  await clickFor(page, page.locator('[data-test="modal-ok"]'), 'DELETE', path);
}

/** The status our server answered the first call of this method whose path (before `?`) is `path`. */
export function answered(calls: RecordedCall[], method: string, path: string): string | undefined {
  const call = calls.find((c) => c.method === method && c.url.split('?')[0] === path);
  if (!call) return `the console never sent ${method} ${path}`;
  return call.status < 300 ? undefined : `${method} ${path} answered ${call.status}`;
}

/** Installed in every page: remembers each error toast the console shows, even one that goes away. */
export const TOAST_RECORDER = `
  window.__errorToasts = [];
  new MutationObserver((mutations) => {
    for (const m of mutations) for (const n of m.addedNodes) {
      if (!(n instanceof Element)) continue;
      const toasts = n.matches('[class*="notice-error"]') ? [n] : [...n.querySelectorAll('[class*="notice-error"]')];
      for (const t of toasts) window.__errorToasts.push(t.textContent.trim());
    }
  }).observe(document, { childList: true, subtree: true });
`;
