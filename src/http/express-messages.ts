import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/**
 * Request and response constructors for node:http whose objects are born with the Express app's
 * prototypes (`app.request`, `app.response`), so Express's `Object.setPrototypeOf` in `app.handle`
 * finds the prototype already in place and changes nothing.
 *
 * Why: a prototype change gives the object a new V8 shape. In most processes V8 reuses one shape per
 * kind of request, but in about one process in seven (docs/benchmarks.md, "slow starts") every request
 * got a shape of its own for the process's whole life: every property access on a request or response
 * missed V8's inline caches and a page cost twice the CPU. Without the prototype change it has not
 * happened since (0 of 28 starts, against 4 of 21 before), and the common case is cheaper too.
 */
export function expressMessageConstructors(app: Express): {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
} {
  function AppRequest(socket: Socket) {
    return Reflect.construct(IncomingMessage, [socket], AppRequest) as IncomingMessage;
  }
  AppRequest.prototype = app.request;
  function AppResponse(req: IncomingMessage, options?: object) {
    return Reflect.construct(ServerResponse, [req, options], AppResponse) as ServerResponse;
  }
  AppResponse.prototype = app.response;
  return {
    IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof ServerResponse,
  };
}
