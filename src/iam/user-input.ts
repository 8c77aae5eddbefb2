import { ApiError } from '../kernel/api-error.ts';

/**
 * The original's password rule as its console states it ("8 to 64 characters with at least one
 * lower-case letter, one upper-case letter and one digit"); bcrypt reads only 72 bytes, so a longer
 * encoding is refused too rather than silently cut.
 */
export const PASSWORD_RULE =
  'must be 8 to 64 characters (at most 72 bytes) with at least one lower-case letter, one upper-case letter and one digit';

/**
 * A user name: a DNS-1123 subdomain of at most 63 characters, so it fits the label values that tie
 * role bindings (`iam.<platform>.io/user-ref`) and sessions to their user.
 */
const USER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const EMAIL = /^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$/;
const MAX_EMAIL = 254;
const MAX_LANG = 32;
const MAX_DESCRIPTION = 1024;

export function invalid(field: string, message: string): ApiError {
  return new ApiError('BadRequest', `${field}: ${message}`, {
    details: { causes: [{ reason: 'FieldValueInvalid', message, field }] },
  });
}

export function checkPassword(password: unknown, field: string): string {
  if (typeof password !== 'string') throw invalid(field, 'required, a string');
  const ok =
    password.length >= 8 &&
    password.length <= 64 &&
    Buffer.byteLength(password, 'utf8') <= 72 &&
    /[a-z]/.test(password) &&
    /[A-Z]/.test(password) &&
    /\d/.test(password);
  if (!ok) throw invalid(field, PASSWORD_RULE);
  return password;
}

/** The fields of a User a caller may write, read from a request body (never the status). */
export interface UserInput {
  name: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations: Record<string, string>;
  spec: { email?: string; lang?: string; description?: string; displayName?: string; groups?: string[] };
  /** `spec.password` as sent (create only; validated by the caller). */
  password?: unknown;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function stringMap(value: unknown, field: string): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value) || !Object.values(value).every((v) => typeof v === 'string'))
    throw invalid(field, 'must be an object of strings');
  return value as Record<string, string>;
}

function optionalString(spec: Json, key: string, max: number): string | undefined {
  const value = spec[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > max)
    throw invalid(`spec.${key}`, `must be a string of at most ${max} characters`);
  return value;
}

/** A User body (`kind: User` of the platform's IAM group) → its writable fields, each checked. */
export function readUser(body: unknown, iamGroup: string): UserInput {
  if (!isObject(body)) throw invalid('body', 'must be a User object');
  if (body['kind'] !== undefined && body['kind'] !== 'User') throw invalid('kind', 'must be User');
  const apiVersion = `${iamGroup}/v1alpha2`;
  if (body['apiVersion'] !== undefined && body['apiVersion'] !== apiVersion)
    throw invalid('apiVersion', `must be ${apiVersion}`);
  const metadata = body['metadata'];
  if (!isObject(metadata)) throw invalid('metadata', 'required, an object');
  const name = metadata['name'];
  if (typeof name !== 'string' || name.length > 63 || !USER_NAME.test(name))
    throw invalid(
      'metadata.name',
      'must be a lower-case DNS-1123 subdomain of at most 63 characters (a-z, 0-9, "-", ".")',
    );
  const spec = body['spec'] === undefined ? {} : body['spec'];
  if (!isObject(spec)) throw invalid('spec', 'must be an object');
  const email = optionalString(spec, 'email', MAX_EMAIL);
  if (email !== undefined && !EMAIL.test(email)) throw invalid('spec.email', 'must be an e-mail address');
  const groups = spec['groups'];
  if (groups !== undefined && !(Array.isArray(groups) && groups.every((g) => typeof g === 'string')))
    throw invalid('spec.groups', 'must be a list of strings');
  const resourceVersion = metadata['resourceVersion'];
  if (resourceVersion !== undefined && typeof resourceVersion !== 'string')
    throw invalid('metadata.resourceVersion', 'must be a string');
  const labels = stringMap(metadata['labels'], 'metadata.labels');
  const input: UserInput = {
    name,
    annotations: stringMap(metadata['annotations'], 'metadata.annotations') ?? {},
    spec: {},
    password: spec['password'],
  };
  if (resourceVersion) input.resourceVersion = resourceVersion;
  if (labels) input.labels = labels;
  if (email !== undefined) input.spec.email = email;
  const lang = optionalString(spec, 'lang', MAX_LANG);
  if (lang !== undefined) input.spec.lang = lang;
  const description = optionalString(spec, 'description', MAX_DESCRIPTION);
  if (description !== undefined) input.spec.description = description;
  const displayName = optionalString(spec, 'displayName', 256);
  if (displayName !== undefined) input.spec.displayName = displayName;
  if (groups !== undefined) input.spec.groups = groups as string[];
  return input;
}

/** `{currentPassword?, password}` of `PUT …/users/{u}/password`. */
export function readPasswordChange(body: unknown): { currentPassword?: string; password: string } {
  if (!isObject(body)) throw invalid('body', 'must be an object with "password"');
  const current = body['currentPassword'];
  if (current !== undefined && typeof current !== 'string')
    throw invalid('currentPassword', 'must be a string');
  const password = checkPassword(body['password'], 'password');
  return current ? { currentPassword: current, password } : { password };
}
