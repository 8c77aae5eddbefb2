import { after } from 'node:test';
import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';

export const CLUSTER_ENV = 'PLATFORM_TEST_CLUSTER';

type Described = Omit<ControlPlane, 'stop' | 'stopApiserver' | 'startApiserver'>;

export function describeControlPlane(cp: ControlPlane): string {
  const { stop: _stop, stopApiserver: _stopApi, startApiserver: _startApi, ...rest } = cp;
  return JSON.stringify(rest satisfies Described);
}

/**
 * The control plane of this test run: the one global setup started, or (when a file runs on its own)
 * a private one stopped after the file's tests.
 */
export async function testControlPlane(): Promise<ControlPlane> {
  const shared = process.env[CLUSTER_ENV];
  if (shared) {
    const described = JSON.parse(shared) as Described;
    // Owned by global setup: stopping it is not this file's business.
    const notHere = async () => {
      throw new Error(
        'the shared control plane cannot be stopped from a test file; use startControlPlane() for outage tests',
      );
    };
    return { ...described, stop: async () => {}, stopApiserver: notHere, startApiserver: notHere };
  }
  const own = await startControlPlane();
  after(() => own.stop());
  return own;
}
