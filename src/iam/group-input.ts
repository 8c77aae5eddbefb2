import { ApiError } from '../kernel/api-error.ts';
import { invalid } from './member-writes.ts';

/** A Kubernetes object name: a DNS-1123 subdomain. */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON list, or 400 saying what it must be a list of. */
export function listOf(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw invalid('', `the body must be a JSON list of ${what}`);
  if (value.length === 0) throw invalid('', `the body must list at least one ${what}`);
  return value;
}

/** A non-empty string field, or 400 naming it. */
export function text(record: Record<string, unknown>, key: string, field: string): string {
  const value = record[key];
  if (typeof value !== 'string' || value === '') throw invalid(field, `${field} must be a non-empty string`);
  return value;
}

/** An optional map of strings (labels, annotations), or 400 naming it. */
export function stringMap(value: unknown, field: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value) || !Object.values(value).every((v) => typeof v === 'string'))
    throw invalid(field, `${field} must be an object of strings`);
  return value as Record<string, string>;
}

/** `kind` and `apiVersion` may be left out; when sent they must be these. */
export function checkType(body: Record<string, unknown>, kind: string, apiVersions: readonly string[]): void {
  if (body['kind'] !== undefined && body['kind'] !== kind)
    throw invalid('kind', `kind must be ${kind}, not ${JSON.stringify(body['kind'])}`);
  if (body['apiVersion'] !== undefined && !apiVersions.includes(body['apiVersion'] as string))
    throw invalid('apiVersion', `apiVersion must be ${apiVersions.join(' or ')}`);
}

export function checkName(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length > 253 || !DNS1123_SUBDOMAIN.test(value))
    throw invalid(
      field,
      `${field} must be a DNS-1123 subdomain (lower case letters, digits, '-' and '.'), not ${JSON.stringify(value ?? null)}`,
    );
  return value;
}

export function alreadyExists(group: string, resource: string, name: string, message: string): ApiError {
  return new ApiError('AlreadyExists', message, { details: { name, group, kind: resource } });
}
