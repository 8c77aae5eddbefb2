// The heap the IAM caches hold, alone: the server's own role cache (src/iam/role-cache.ts: roles and
// bindings of every scope, namespace and workspace names) and users cache (the users module's
// informer, with its transform) started against a cluster in a process of their own, nothing else in
// it. Heap used after a full collection before they start and after each has its first list; the
// difference is what each holds. Run by iam.bench.ts (needs --expose-gc); prints one JSON line.
//   node --expose-gc test/bench/iam-cache-heap.ts <kubeconfig> <platformName>
import { PassThrough } from 'node:stream';
import type { KubernetesObject } from '@kubernetes/client-node';
import { waitFor } from '../cluster/wait-for.ts';
import { roleVocabulary } from '../../src/iam/role-objects.ts';
import { RoleCache } from '../../src/iam/role-cache.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { IamApi } from '../../src/users/iam-api.ts';
import { iamGroupFor } from '../../src/users/iam-resources.ts';
import { adminKubeConfig } from '../support/iam-fixtures.ts';

const [kubeconfig, platformName] = process.argv.slice(2);
if (!kubeconfig || !platformName) throw new Error('usage: iam-cache-heap.ts <kubeconfig> <platformName>');
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const liveHeapMb = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};

const kc = adminKubeConfig(kubeconfig);
const logger = createLogger({ level: 'warn', stream: new PassThrough().resume() });
const iam = iamGroupFor(platformName);

const before = liveHeapMb();
const roles = new RoleCache({
  kubeConfig: kc,
  iam,
  tenantGroup: `tenant.${platformName}.io`,
  vocabulary: roleVocabulary(platformName),
  logger,
});
roles.start();
await waitFor('the role cache', () => (roles.ready ? true : undefined), {
  timeoutMs: 300_000,
  intervalMs: 100,
});
const withRoles = liveHeapMb();

// As the users module builds its users cache (src/users/users-module.ts): managedFields dropped.
const users = new IamApi(kc, iam).informer<KubernetesObject>('users', {
  logger,
  transform: (o) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } }),
});
users.start();
await waitFor('the users cache', () => (users.synced ? true : undefined), {
  timeoutMs: 300_000,
  intervalMs: 100,
});
const withUsers = liveHeapMb();

console.log(
  JSON.stringify({ roleCacheMb: withRoles - before, usersCacheMb: withUsers - withRoles, users: users.size }),
);
await Promise.all([roles.stop(), users.stop()]);
