import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** Where Kubernetes mounts the namespace of a Pod's ServiceAccount. */
export const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The namespace of the leader Lease: the configured one, else the server's own namespace when it runs in
 * a Pod (`POD_NAMESPACE`, as the downward API sets it, else the ServiceAccount's namespace file), else
 * `default`.
 */
export function leaseNamespace(
  configured: string,
  env: Readonly<Record<string, string | undefined>>,
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): string {
  if (configured) return configured;
  const fromEnv = env['POD_NAMESPACE']?.trim();
  if (fromEnv) return fromEnv;
  try {
    const fromFile = readFile(SERVICE_ACCOUNT_NAMESPACE_FILE).trim();
    if (fromFile) return fromFile;
  } catch {
    /* not in a Pod */
  }
  return 'default';
}

/**
 * This process's name in the lease: the Pod's name (its hostname) and a random part, so a restarted
 * Pod of the same name is a new holder and never mistakes the previous one's lease for its own.
 */
export function leaseHolderIdentity(host: string = hostname()): string {
  return `${host}_${randomBytes(6).toString('hex')}`;
}
