import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../observability/logger.ts';
import { HttpError, statusFor } from './status.ts';

/** Errors raised by body parsers and similar middleware carry an HTTP status of their own. */
interface StatusCarrying {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
}

function toHttpError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
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
    const known = toHttpError(err);
    if (known) {
      res.set(known.headers).status(known.statusCode);
      if (req.path.startsWith('/oauth/')) {
        res.json({ error: known.oauthError ?? 'invalid_request', error_description: known.message });
      } else {
        res.json(statusFor(known.statusCode, known.message, known.details));
      }
      return;
    }
    logger.error('unhandled error', {
      error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
    });
    res.status(500);
    if (req.path.startsWith('/oauth/')) {
      res.json({ error: 'server_error', error_description: 'internal error' });
    } else {
      res.json(statusFor(500, 'internal error'));
    }
  };
}
