import type { ReadinessCheck } from './readiness.ts';

/**
 * The contract every feature implements to plug into the server. A module declares the services it
 * needs and the ones it offers; the lifecycle (lifecycle.ts) registers modules in dependency order,
 * then starts them, reports their readiness and stops them in reverse order.
 *
 * The kernel knows no transport: what a module adds to it (routes, its OpenAPI fragment, an upgrade
 * handler) is the `Edge` type parameter, which the HTTP layer fixes (`http/feature-module.ts`).
 */

/** A typed name for something the host or a module provides: a config, a registry, an authenticator. */
export interface ServiceRef<T> {
  readonly id: string;
  /** Never set: carries T so that `get(ref)` is typed. */
  readonly type?: T;
}

export function serviceRef<T>(id: string): ServiceRef<T> {
  return { id };
}

/** What a module sees while it registers. */
export interface ModuleContext {
  /** A service the module declared in `requires`; throws for one it did not declare (a wiring bug). */
  get<T>(ref: ServiceRef<T>): T;
  /** Offers a service the module declared in `provides` to the modules that require it. */
  provide<T>(ref: ServiceRef<T>, value: T): void;
}

/** What a registered module contributes. Nothing runs until `start`. */
export interface Contribution<Edge> {
  /** Routes, OpenAPI fragment and the like, handed to the transport as they are. */
  edge?: Edge;
  /** Named checks; the process is ready when all pass (e.g. a cache's first sync). */
  readiness?: Readonly<Record<string, ReadinessCheck>>;
  /** Starts background work (watches, timers). */
  start?(): void | Promise<void>;
  /** Stops it; called in reverse order of start when the process drains. */
  stop?(): void | Promise<void>;
  /** Facts worth one line at start-up (what the module connects to); the host logs them when listening. */
  summary?: Readonly<Record<string, unknown>>;
}

export interface Module<Edge> {
  readonly name: string;
  /** Services resolved before `register` runs: the host's or those another module provides. */
  readonly requires?: readonly ServiceRef<unknown>[];
  /** Services this module provides during `register`. */
  readonly provides?: readonly ServiceRef<unknown>[];
  /**
   * Builds the module's parts and their metrics (on the registry it requires). Must not start work:
   * a module that fails to register leaves nothing running.
   */
  register(context: ModuleContext): Contribution<Edge> | Promise<Contribution<Edge>>;
}

/** Identity of a module definition; lets `defineModule` infer Edge at the call site. */
export function defineModule<Edge>(module: Module<Edge>): Module<Edge> {
  return module;
}
