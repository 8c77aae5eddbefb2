import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, apiErrorKindOf, type ApiErrorOptions } from '../kernel/api-error.ts';
import type { Logger } from '../observability/logger.ts';
import { statusFor, type KubeStatus } from './status.ts';

/**
 * The one place where errors meet HTTP: an `ApiError` becomes a status code, headers and a body —
 * a Kubernetes `Status` object, or RFC 6749 `{error, error_description}` under /oauth/.
 */

/** An `ApiError` named by its HTTP status code, for code at the HTTP edge (middleware, test servers). */
export class HttpError extends ApiError {
  constructor(statusCode: number, message: string, options: ApiErrorOptions = {}) {
    super(apiErrorKindOf(statusCode), message, options);
  }
}

/** Errors raised by body parsers and similar middleware carry an HTTP status of their own. */
interface StatusCarrying {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
}

/** The ApiError an error stands for; undefined for anything unexpected (a 500). */
export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  const e = err as StatusCarrying & Error;
  const code = e?.statusCode ?? e?.status;
  if (typeof code === 'number' && code >= 400 && code < 500) {
    const message =
      e.type === 'entity.too.large'
        ? 'request body is too large'
        : e.type === 'entity.parse.failed'
          ? 'request body is not valid JSON'
          : e.expose && e.message
            ? e.message
            : 'bad request';
    return new HttpError(code, message);
  }
  return undefined;
}

/** The response headers an error asks for: how to authenticate, when to retry, what is accepted. */
export function headersOf(err: ApiError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (err.challenge !== undefined) headers['WWW-Authenticate'] = err.challenge;
  if (err.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.retryAfterSeconds);
  if (err.allow !== undefined) headers['Allow'] = err.allow;
  if (err.accept !== undefined) headers['Accept'] = err.accept;
  return headers;
}

/** The Kubernetes `Status` of an error. */
export function kubeStatusOf(err: ApiError): KubeStatus {
  return statusFor(
    err.statusCode,
    err.message,
    err.details,
    err.kind === 'AlreadyExists' ? 'AlreadyExists' : undefined,
  );
}

/** The RFC 6749 §5.2 body of an error of the OAuth endpoints. */
export function oauthBodyOf(err: ApiError): { error: string; error_description: string } {
  return { error: err.oauthError ?? 'invalid_request', error_description: err.message };
}

/** Answers a Kubernetes-style request with the error's Status (outside express: the proxy's own errors). */
export function writeErrorResponse(res: ServerResponse, err: ApiError): void {
  res
    .writeHead(err.statusCode, { ...headersOf(err), 'Content-Type': 'application/json' })
    .end(JSON.stringify(kubeStatusOf(err)));
}

/** An error response written straight to the socket of an upgrade request (it has no ServerResponse). */
export function writeUpgradeError(socket: Duplex, err: ApiError): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(kubeStatusOf(err));
  const headers = {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    ...headersOf(err),
  };
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n');
  socket.end(
    `HTTP/1.1 ${err.statusCode} ${STATUS_CODES[err.statusCode] ?? 'Error'}\r\n${head}\r\n\r\n${body}`,
  );
}

/** True for the paths whose errors are RFC 6749 bodies. */
function isOAuthPath(path: string): boolean {
  return path.startsWith('/oauth/');
}

/** Unknown paths: a Kubernetes `Status` 404, as the kube-apiserver answers. */
export const notFoundHandler: RequestHandler = (req, res) => {
  res
    .status(404)
    .json(statusFor(404, `the server could not find the requested resource (${req.method} ${req.path})`));
};

/**
 * The one place errors become responses. Known errors keep their code and message; anything else is a
 * 500 with a generic message and the details go to the log only.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const known = toApiError(err);
    if (known) {
      res.set(headersOf(known)).status(known.statusCode);
      res.json(isOAuthPath(req.path) ? oauthBodyOf(known) : kubeStatusOf(known));
      return;
    }
    logger.error('unhandled error', {
      error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
    });
    res.status(500);
    if (isOAuthPath(req.path)) {
      res.json({ error: 'server_error', error_description: 'internal error' });
    } else {
      res.json(statusFor(500, 'internal error'));
    }
  };
}
