import { AsyncLocalStorage } from 'node:async_hooks';
import winston from 'winston';
import type { LogLevel } from '../config/config.ts';

/** What every log line written while serving one request carries. */
export interface RequestContext {
  requestId: string;
  /** The caller, once authenticated. */
  readonly user?: string | undefined;
}

export type RequestContextStore = AsyncLocalStorage<RequestContext>;

export function createRequestContextStore(): RequestContextStore {
  return new AsyncLocalStorage<RequestContext>();
}

export type Logger = winston.Logger;

/**
 * Keys whose values are secrets. Matched case-insensitively against every key of a log entry,
 * however deeply nested, so a careless `logger.info('x', { headers })` cannot leak a credential.
 */
const SECRET_KEY = /authorization|password|passwd|secret|token|cookie|private.?key|^key$|signing/i;
export const REDACTED = '[REDACTED]';

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value instanceof Error) return { name: value.name, message: value.message };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? REDACTED : redact(v, depth + 1);
  return out;
}

export interface LoggerOptions {
  level: LogLevel;
  context?: RequestContextStore;
  /** Where lines go; defaults to stdout. Tests pass a stream to capture output. */
  stream?: NodeJS.WritableStream;
}

/** JSON lines: {time, level, message, requestId?, ...fields}, secrets redacted. */
export function createLogger(options: LoggerOptions): Logger {
  const addContext = winston.format((info) => {
    const ctx = options.context?.getStore();
    if (ctx) {
      if (info['requestId'] === undefined) info['requestId'] = ctx.requestId;
      if (ctx.user !== undefined && info['user'] === undefined) info['user'] = ctx.user;
    }
    return info;
  });
  const redactSecrets = winston.format((info) => {
    for (const key of Object.keys(info)) {
      if (key === 'level' || key === 'message') continue;
      info[key] = SECRET_KEY.test(key) ? REDACTED : redact(info[key]);
    }
    return info;
  });
  const transport = options.stream
    ? new winston.transports.Stream({ stream: options.stream })
    : new winston.transports.Console();
  return winston.createLogger({
    level: options.level,
    format: winston.format.combine(
      winston.format.timestamp({ alias: 'time' }),
      addContext(),
      redactSecrets(),
      winston.format((info) => {
        delete info['timestamp'];
        return info;
      })(),
      winston.format.json(),
    ),
    transports: [transport],
  });
}
