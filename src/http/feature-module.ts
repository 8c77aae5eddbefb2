import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Router } from 'express';
import { serviceRef, type Module } from '../kernel/module.ts';
import type { BearerDoor } from './bearer-door.ts';
import type { ApiDescription } from './openapi-components.ts';

/** What a feature adds to the HTTP server. */
export interface HttpEdge {
  /** Served without a bearer token (probes, the token endpoint, discovery). */
  publicRoutes?: Router[];
  /** Served behind the bearer door. */
  protectedRoutes?: Router[];
  /** The OpenAPI description of the feature's routes, kept beside them. */
  openApi?: ApiDescription[];
  /** Takes the server's 'upgrade' event (WebSockets, exec, port-forward). At most one module may. */
  upgrade?: (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void;
}

/** A feature module of this server: the kernel's Module with an HTTP edge. */
export type FeatureModule = Module<HttpEdge>;

/** The one bearer door, provided by the module that issues tokens; protected routes sit behind it. */
export const bearerDoorRef = serviceRef<BearerDoor>('bearer-door');
