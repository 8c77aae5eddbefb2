import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';

export const CLUSTER_ENV = 'PLATFORM_TEST_CLUSTER';

type Described = Omit<ControlPlane, 'stop' | 'stopApiserver' | 'startApiserver'>;

export function describeControlPlane(cp: ControlPlane): string {
  const { stop: _stop, stopApiserver: _stopApi, startApiserver: _startApi, ...rest } = cp;
  return JSON.stringify(rest satisfies Described);
}

// A file run on its own gets one private control plane however often it asks (test support only).
let privateControlPlane: Promise<ControlPlane> | undefined;

/**
 * The control plane of this test run: the one global setup started, or (when a file runs on its own)
 * a private one, stopped when the file's process has nothing left to do. (A node:test `after()` would
 * attach to whichever hook called this, and stop it too early.)
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
  privateControlPlane ??= startControlPlane().then((own) => {
    process.once('beforeExit', () => void own.stop());
    return own;
  });
  return privateControlPlane;
}
