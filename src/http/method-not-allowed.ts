import type { RequestHandler } from 'express';
import { ApiError } from '../kernel/api-error.ts';
import type { Paths } from './openapi-components.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

interface KnownPath {
  pattern: RegExp;
  allow: string;
}

/**
 * For requests no route answered: when the path is one the server serves with other methods, 405 with
 * `Allow` (a Status; RFC 6749 JSON under /oauth/), as the kube-apiserver answers an unsupported verb;
 * otherwise on to the 404. The known paths and their methods come from the OpenAPI document, which
 * describes exactly the routes that are wired (a GET route also answers HEAD).
 */
export function methodNotAllowed(paths: Paths): RequestHandler {
  const known: KnownPath[] = Object.entries(paths).map(([template, item]) => {
    const methods = METHODS.filter((m) => item[m] !== undefined).map((m) => m.toUpperCase());
    if (methods.includes('GET') && !methods.includes('HEAD'))
      methods.splice(methods.indexOf('GET') + 1, 0, 'HEAD');
    return { pattern: templatePattern(template), allow: methods.join(', ') };
  });
  return (req, _res, next) => {
    const match = known.find((k) => k.pattern.test(req.path));
    if (!match) {
      next();
      return;
    }
    next(
      new ApiError(
        'MethodNotAllowed',
        `method ${req.method} is not allowed on ${req.path}; use ${match.allow}`,
        {
          allow: match.allow,
        },
      ),
    );
  };
}

/** `/a/{name}/b` → /^\/a\/[^/]+\/b$/: a path parameter is one non-empty segment. */
function templatePattern(template: string): RegExp {
  const parts = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${parts.join('')}$`);
}
