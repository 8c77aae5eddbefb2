// One real control plane and one real log store (OpenSearch) for the whole `node --test` run: started
// together before the first test file, stopped after the last. Test files (separate processes) find
// them through PLATFORM_TEST_CLUSTER and PLATFORM_TEST_LOG_STORE.
import { startControlPlane, type ControlPlane } from './cluster/control-plane.ts';
import { startOpenSearch, type OpenSearchNode } from './logstore/opensearch.ts';
import { CLUSTER_ENV, describeControlPlane } from './support/shared-cluster.ts';
import { LOG_STORE_ENV, describeLogStore } from './support/shared-log-store.ts';

let controlPlane: ControlPlane | undefined;
let logStore: OpenSearchNode | undefined;

export async function globalSetup(): Promise<void> {
  const started = Date.now();
  const since = () => `${Date.now() - started} ms`;
  const [cp, store] = await Promise.allSettled([
    startControlPlane().then((cp) => {
      process.stderr.write(`# control plane ready at ${cp.server} in ${since()}\n`);
      return cp;
    }),
    startOpenSearch().then((node) => {
      process.stderr.write(`# log store (OpenSearch ${node.version}) ready at ${node.url} in ${since()}\n`);
      return node;
    }),
  ]);
  if (cp.status === 'fulfilled') controlPlane = cp.value;
  if (store.status === 'fulfilled') logStore = store.value;
  if (cp.status === 'rejected' || store.status === 'rejected') {
    await globalTeardown();
    throw cp.status === 'rejected' ? cp.reason : (store as PromiseRejectedResult).reason;
  }
  process.env[CLUSTER_ENV] = describeControlPlane(controlPlane!);
  process.env[LOG_STORE_ENV] = describeLogStore(logStore!);
}

export async function globalTeardown(): Promise<void> {
  await Promise.all([controlPlane?.stop(), logStore?.stop()]);
}
