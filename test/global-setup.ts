// One real control plane for the whole `node --test` run: started before the first test file, stopped
// after the last. Test files (separate processes) find it through PLATFORM_TEST_CLUSTER.
import { startControlPlane, type ControlPlane } from './cluster/control-plane.ts';
import { CLUSTER_ENV, describeControlPlane } from './support/shared-cluster.ts';

let controlPlane: ControlPlane | undefined;

export async function globalSetup(): Promise<void> {
  const started = Date.now();
  controlPlane = await startControlPlane();
  process.env[CLUSTER_ENV] = describeControlPlane(controlPlane);
  process.stderr.write(`# control plane ready at ${controlPlane.server} in ${Date.now() - started} ms\n`);
}

export async function globalTeardown(): Promise<void> {
  await controlPlane?.stop();
}
