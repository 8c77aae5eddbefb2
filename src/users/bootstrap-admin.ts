import type { Logger } from '../observability/logger.ts';
import type { IamApi } from './iam-api.ts';
import type { UserObject } from './iam-resources.ts';
import { hashPassword, MAX_PASSWORD_BYTES } from './passwords.ts';

export interface BootstrapAdmin {
  username: string;
  password: string;
  groups: readonly string[];
}

/** Reads the first administrator's password file (one trailing newline dropped); throws a message naming the file. */
export function readBootstrapPassword(file: string, readFile: (path: string) => string): string {
  let text: string;
  try {
    text = readFile(file);
  } catch (err) {
    throw new Error(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
      cause: err,
    });
  }
  const password = text.replace(/\r?\n$/, '');
  if (password === '') throw new Error(`${file}: the password is empty`);
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw new Error(`${file}: the password is longer than ${MAX_PASSWORD_BYTES} bytes`);
  }
  return password;
}

/**
 * Creates the first administrator when no User of that name exists. An existing user is never touched,
 * so a password changed later is kept across restarts; replicas racing to create it all succeed (409 is
 * "someone else did"). Returns what happened.
 */
export async function ensureBootstrapAdmin(
  admin: BootstrapAdmin,
  deps: { api: IamApi; logger: Logger },
): Promise<'created' | 'exists'> {
  if (await deps.api.get<UserObject>('users', admin.username)) return 'exists';
  const user: UserObject = {
    apiVersion: `${deps.api.iam.group}/${deps.api.iam.version}`,
    kind: 'User',
    metadata: { name: admin.username },
    spec: { groups: [...admin.groups], password: await hashPassword(admin.password) },
  };
  try {
    await deps.api.create('users', user);
  } catch (err) {
    if ((err as { code?: unknown }).code === 409) return 'exists';
    throw err;
  }
  deps.logger.info('first administrator created', { user: admin.username, groups: admin.groups });
  return 'created';
}
