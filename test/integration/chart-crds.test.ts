// The chart's CRDs follow platformName, and a CRD of that name another owner installed (the original
// system's users CRD, without status subresource) is never replaced or modified by `helm install`.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ApiextensionsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { ChartTools, chartDir } from '../support/chart-tools.ts';
import { adminKubeConfig, installCrdFiles, SEED_CRD_FILES } from '../support/iam-fixtures.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

// A platform name of this test's own: the CRDs it creates (cluster-wide) cannot disturb other tests.
const PLATFORM = `crdtest${randomBytes(3).toString('hex')}`;
const GROUP = `iam.${PLATFORM}.io`;
const TENANT = `tenant.${PLATFORM}.io`;
/** Every CRD of the chart: the server's own, and the original's workspace resources. */
const CRDS = [
  `groupbindings.${GROUP}`,
  `groups.${GROUP}`,
  `loginthrottles.${GROUP}`,
  `sessions.${GROUP}`,
  `users.${GROUP}`,
  `workspacerolebindings.${GROUP}`,
  `workspaceroles.${GROUP}`,
  `workspaces.${TENANT}`,
  `workspacetemplates.${TENANT}`,
];

describe('helm chart CRDs beside another owner’s', () => {
  let kc: KubeConfig;
  let tools: ChartTools;
  let namespace: string;
  const release = 'crd-owner';
  const crds = () => kc.makeApiClient(ApiextensionsV1Api);

  before(async () => {
    const cp = await testControlPlane();
    kc = adminKubeConfig(cp.kubeconfigPath);
    tools = new ChartTools(cp);
    namespace = await tools.createNamespace('chart-crds');
    // The original's users CRD, as its own installer put it there (no label of ours).
    await installCrdFiles(kc, SEED_CRD_FILES.slice(0, 1), PLATFORM);
  });

  after(async () => {
    await tools.helm(['uninstall', release, `--namespace=${namespace}`]).catch(() => undefined);
    await tools.deleteNamespace(namespace);
    for (const name of CRDS)
      await crds()
        .deleteCustomResourceDefinition({ name })
        .catch(() => undefined);
    tools.cleanup();
  });

  test('helm template renders the CRDs in iam.<platformName>.io and tenant.<platformName>.io', async () => {
    const rendered = await tools.template(release, namespace, ['--set', `config.platformName=${PLATFORM}`]);
    const names = [...rendered.matchAll(/^kind: CustomResourceDefinition\n(?:.*\n)*? {2}name: (\S+)/gm)].map(
      (m) => m[1],
    );
    assert.deepEqual(names.sort(), CRDS);
    assert.doesNotMatch(rendered, /(iam|tenant)\.platform\.io/);
    // The printer columns show the workspace label of this platform name.
    assert.match(rendered, new RegExp(`jsonPath: \\.metadata\\.labels\\.${PLATFORM}\\\\\\.io/workspace`));
    assert.doesNotMatch(rendered, /platform\\\.io\//);
  });

  test('helm install leaves the foreign users CRD alone, says so, and installs the missing ones', async () => {
    const before = await crds().readCustomResourceDefinition({ name: `users.${GROUP}` });
    const out = await tools.helm([
      'install',
      release,
      chartDir,
      `--namespace=${namespace}`,
      '--set',
      `config.platformName=${PLATFORM}`,
    ]);
    assert.match(
      out,
      new RegExp(
        `CRD users\\.${GROUP.replaceAll('.', '\\.')} already exists, installed by another owner .*left alone`,
      ),
    );
    const afterInstall = await crds().readCustomResourceDefinition({ name: `users.${GROUP}` });
    assert.equal(afterInstall.metadata!.resourceVersion, before.metadata!.resourceVersion, 'not modified');
    assert.equal(afterInstall.spec.versions[0]!.subresources?.status, undefined);
    assert.equal(afterInstall.metadata!.labels?.['platform-apiserver.io/crd-owner'], undefined);

    for (const name of CRDS.filter((n) => n !== `users.${GROUP}`)) {
      const ours = await crds().readCustomResourceDefinition({ name });
      assert.equal(ours.metadata!.labels?.['platform-apiserver.io/crd-owner'], 'platform-apiserver');
      assert.equal(ours.metadata!.annotations?.['helm.sh/resource-policy'], 'keep');
    }

    // An upgrade renders this release's own CRDs again and still leaves the foreign one alone.
    await tools.helm([
      'upgrade',
      release,
      chartDir,
      `--namespace=${namespace}`,
      '--set',
      `config.platformName=${PLATFORM}`,
    ]);
    const afterUpgrade = await crds().readCustomResourceDefinition({ name: `users.${GROUP}` });
    assert.equal(afterUpgrade.metadata!.resourceVersion, before.metadata!.resourceVersion);

    // Uninstalling keeps every CRD (deleting one would delete all Users or Sessions).
    await tools.helm(['uninstall', release, `--namespace=${namespace}`]);
    for (const name of CRDS) assert.ok(await crds().readCustomResourceDefinition({ name }));
  });
});
