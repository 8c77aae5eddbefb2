import express, { type RequestHandler } from 'express';
import { HttpError } from './error-mapper.ts';

/** The media types a JSON write may be sent as: a whole object, or a patch of either kind. */
export type JsonMediaType =
  'application/json' | 'application/merge-patch+json' | 'application/json-patch+json';

/** What a route accepts: the whole object (POST, PUT, DELETE options) or a patch (PATCH). */
export const OBJECT_TYPES: readonly JsonMediaType[] = ['application/json'];
export const PATCH_TYPES: readonly JsonMediaType[] = [
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/json',
];

/** The body of a JSON write, parsed, with the media type it came as. */
export interface JsonBody {
  mediaType: JsonMediaType;
  /** Undefined when the request had no body and `optional` allowed it. */
  value: unknown;
}

/**
 * Reads a JSON request body of at most `limitBytes` into `res.locals.json` (a `JsonBody`). A body of
 * another media type → 415 naming the accepted ones; over the limit → 413; not JSON → 400. With
 * `optional`, a request without a body (DELETE with no options, as kubectl and the console send it)
 * passes with `value` undefined.
 */
export function jsonBody(options: {
  limitBytes: number;
  accept: readonly JsonMediaType[];
  optional?: boolean;
}): RequestHandler {
  const parse = express.json({ type: () => true, limit: options.limitBytes, strict: false, inflate: true });
  const accepted = options.accept.join(', ');
  return (req, res, next) => {
    const hasBody =
      (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') ||
      req.headers['transfer-encoding'] !== undefined;
    if (!hasBody && options.optional) {
      res.locals['json'] = { mediaType: 'application/json', value: undefined } satisfies JsonBody;
      next();
      return;
    }
    const mediaType = options.accept.find((type) => req.is(type) === type);
    if (!mediaType) {
      const sent = req.headers['content-type'] ?? '(none)';
      next(
        new HttpError(415, `Content-Type ${sent} is not supported here; send ${accepted}`, {
          accept: accepted,
        }),
      );
      return;
    }
    parse(req, res, (err?: unknown) => {
      if (err) {
        next(err);
        return;
      }
      res.locals['json'] = { mediaType, value: req.body as unknown } satisfies JsonBody;
      next();
    });
  };
}
