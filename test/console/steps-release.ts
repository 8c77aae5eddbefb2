import type { Page } from 'playwright-core';
import { SEED } from './console-cluster.ts';
import { goto, type Step } from './step-kit.ts';

/** The release `/kapis/version` reports under `platformName: kubesphere` (docs/version.md), as the console shows it. */
const RELEASE = '3.4.1';

/**
 * The cluster menu's entries that the console greys out ("upgrade KubeSphere to …") below a release:
 * each group opens one at a time, and an enabled entry is a link (a disabled one has no `href`).
 */
const VERSIONED_ENTRIES = [
  { group: 'Configuration', entries: [['serviceaccounts', 'Service Accounts']] },
  {
    group: 'Storage',
    entries: [
      ['volume-snapshots', 'Volume Snapshots'],
      ['volume-snapshot-classes', 'Volume Snapshot Classes'],
    ],
  },
  { group: 'Monitoring & Alerting', entries: [['custom-monitoring', 'Custom Monitoring']] },
] as const;

async function versionedEntriesEnabled(page: Page, timeoutMs: number): Promise<string | undefined> {
  const missing: string[] = [];
  for (const { group, entries } of VERSIONED_ENTRIES) {
    await page.getByText(group, { exact: true }).first().click();
    for (const [path, title] of entries) {
      const link = page.locator(`a[href="/clusters/default/${path}"]`, { hasText: title });
      const shown = await link
        .first()
        .waitFor({ state: 'visible', timeout: timeoutMs })
        .then(() => true)
        .catch(() => false);
      if (!shown) missing.push(title);
    }
  }
  const disabled = await page.locator('a[disabled]').allInnerTexts();
  return (
    [
      ...missing.map((t) => `"${t}" is not an enabled menu entry`),
      ...(disabled.length > 0 ? [`disabled menu entries: ${disabled.join(', ')}`] : []),
    ].join('; ') || undefined
  );
}

/** Issue 34 §2: the console sees the release we implement, and the computed annotations it reads. */
export const RELEASE_STEPS: Step[] = [
  {
    name: 'cluster menu: versioned entries enabled',
    act: goto('/clusters/default/overview'),
    expect: VERSIONED_ENTRIES.map((g) => g.group),
    check: (page, _calls, timeoutMs) => versionedEntriesEnabled(page, timeoutMs),
  },
  {
    name: 'volumes: Persistent Volumes tab',
    act: async (page, consoleUrl) => {
      await goto('/clusters/default/volumes')(page, consoleUrl);
      await page.getByText(SEED.pvc, { exact: true }).first().waitFor({ state: 'visible' });
      await page.getByText('Persistent Volumes', { exact: true }).click();
    },
    expect: [SEED.pv],
    check: async (page) =>
      page.url().endsWith('/volumes/PV') ? undefined : `the tab did not open (at ${page.url()})`,
  },
  {
    name: 'storage classes: PVC count',
    act: goto('/clusters/default/storageclasses'),
    expect: [],
    // The PVCs column reads the class's `kubesphere.io/pvc-count`, which our server computes.
    rows: [{ key: SEED.storageClass, cells: { PVCs: '1' } }],
  },
  {
    name: 'landing: reported release',
    act: goto('/'),
    expect: ['Platform version'],
    check: async (page, _calls, timeoutMs) => {
      const value = page
        .getByText('Platform version', { exact: true })
        .locator('xpath=preceding-sibling::*[1]');
      const shown = await value
        .filter({ hasText: new RegExp(`^\\s*${RELEASE.replaceAll('.', '\\.')}\\s*$`) })
        .waitFor({ state: 'visible', timeout: timeoutMs })
        .then(() => undefined)
        .catch(() => value.innerText());
      return shown === undefined ? undefined : `platform version shown: "${shown}", not ${RELEASE}`;
    },
  },
];
