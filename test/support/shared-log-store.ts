import { startOpenSearch, type OpenSearchNode } from '../logstore/opensearch.ts';

export const LOG_STORE_ENV = 'PLATFORM_TEST_LOG_STORE';

/** What test files need of the run's log store (it is shared: never stopped by a test file). */
export interface TestLogStore {
  /** http://127.0.0.1:<port> */
  url: string;
  version: string;
}

export function describeLogStore(node: OpenSearchNode): string {
  return JSON.stringify({ url: node.url, version: node.version } satisfies TestLogStore);
}

// A file run on its own gets one private log store however often it asks (test support only).
let privateLogStore: Promise<TestLogStore> | undefined;

/**
 * The real OpenSearch of this test run: the one global setup started, or (when a file runs on its
 * own) a private one, stopped when the file's process has nothing left to do (as testControlPlane()
 * does). Test files keep to index names of their own.
 */
export async function testLogStore(): Promise<TestLogStore> {
  const shared = process.env[LOG_STORE_ENV];
  if (shared) return JSON.parse(shared) as TestLogStore;
  privateLogStore ??= startOpenSearch().then((own) => {
    process.once('beforeExit', () => void own.stop());
    return { url: own.url, version: own.version };
  });
  return privateLogStore;
}
