import type { Contribution, Module, ModuleContext, ServiceRef } from './module.ts';
import { Readiness } from './readiness.ts';

/** Where the lifecycle reports a module that failed to stop (a logger's shape, not a logger). */
export interface LifecycleLog {
  warn(message: string, meta?: Record<string, unknown>): void;
}

/**
 * Runs a list of modules: registers them in dependency order (a module after every module that
 * provides what it requires; otherwise in list order), starts them in that order, answers readiness
 * from all their checks and stops them in reverse order.
 */
export class Lifecycle<Edge> {
  readonly readiness = new Readiness();
  readonly #services = new Map<string, unknown>();
  readonly #started: { name: string; contribution: Contribution<Edge> }[] = [];
  readonly #registered: { name: string; contribution: Contribution<Edge> }[] = [];
  readonly #log: LifecycleLog;

  constructor(log: LifecycleLog) {
    this.#log = log;
  }

  /** Offers a service of the host (configuration, logger, registry) to every module. */
  provide<T>(ref: ServiceRef<T>, value: T): this {
    if (this.#services.has(ref.id)) throw new Error(`service ${ref.id} provided twice`);
    this.#services.set(ref.id, value);
    return this;
  }

  /** A service of the host or of a registered module, if any provided it. */
  find<T>(ref: ServiceRef<T>): T | undefined {
    return this.#services.get(ref.id) as T | undefined;
  }

  /** Registers every module; returns their edge contributions in registration order. */
  async register(modules: readonly Module<Edge>[]): Promise<Edge[]> {
    const edges: Edge[] = [];
    for (const module of dependencyOrder(modules, new Set(this.#services.keys()))) {
      const contribution = await module.register(this.#contextFor(module));
      for (const ref of module.provides ?? [])
        if (!this.#services.has(ref.id)) throw new Error(`module ${module.name} did not provide ${ref.id}`);
      for (const [name, check] of Object.entries(contribution.readiness ?? {}))
        this.readiness.register(name, check);
      this.#registered.push({ name: module.name, contribution });
      if (contribution.edge !== undefined) edges.push(contribution.edge);
    }
    return edges;
  }

  /** Every registered module's start-up facts, merged. */
  summary(): Record<string, unknown> {
    return Object.assign({}, ...this.#registered.map((r) => r.contribution.summary ?? {})) as Record<
      string,
      unknown
    >;
  }

  async start(): Promise<void> {
    for (const entry of this.#registered) {
      await entry.contribution.start?.();
      this.#started.push(entry);
    }
  }

  /** Stops started modules in reverse order; one failing does not keep the others running. */
  async stop(): Promise<void> {
    for (const { name, contribution } of this.#started.splice(0).reverse()) {
      try {
        await contribution.stop?.();
      } catch (err) {
        this.#log.warn('module failed to stop', { module: name, error: String(err) });
      }
    }
  }

  #contextFor(module: Module<Edge>): ModuleContext {
    const allowed = new Set([...(module.requires ?? []), ...(module.provides ?? [])].map((r) => r.id));
    return {
      get: <T>(ref: ServiceRef<T>): T => {
        if (!allowed.has(ref.id) || !this.#services.has(ref.id))
          throw new Error(`module ${module.name} asked for ${ref.id}, which it does not require`);
        return this.#services.get(ref.id) as T;
      },
      provide: <T>(ref: ServiceRef<T>, value: T): void => {
        if (!(module.provides ?? []).some((r) => r.id === ref.id))
          throw new Error(`module ${module.name} provides ${ref.id} without declaring it`);
        if (this.#services.has(ref.id)) throw new Error(`service ${ref.id} provided twice`);
        this.#services.set(ref.id, value);
      },
    };
  }
}

/**
 * List order, except that a module waits for the modules providing what it requires. Throws for a
 * requirement nobody provides and for a cycle.
 */
export function dependencyOrder<Edge>(
  modules: readonly Module<Edge>[],
  hostServices: ReadonlySet<string>,
): Module<Edge>[] {
  const providerOf = new Map<string, Module<Edge>>();
  for (const module of modules)
    for (const ref of module.provides ?? []) {
      if (providerOf.has(ref.id) || hostServices.has(ref.id))
        throw new Error(`service ${ref.id} provided twice`);
      providerOf.set(ref.id, module);
    }
  const ordered: Module<Edge>[] = [];
  const visiting = new Set<Module<Edge>>();
  const visit = (module: Module<Edge>): void => {
    if (ordered.includes(module)) return;
    if (visiting.has(module))
      throw new Error(`modules depend on each other in a cycle through ${module.name}`);
    visiting.add(module);
    for (const ref of module.requires ?? []) {
      if (hostServices.has(ref.id)) continue;
      const provider = providerOf.get(ref.id);
      if (!provider) throw new Error(`module ${module.name} requires ${ref.id}, which nothing provides`);
      visit(provider);
    }
    visiting.delete(module);
    ordered.push(module);
  };
  for (const module of modules) visit(module);
  return ordered;
}
