import type { Informer } from '../cluster/informer.ts';

interface Namespaced {
  metadata: { name: string; namespace?: string };
}

/**
 * The names of a namespaced cache's objects by namespace, kept by its events (the first list's
 * included): one project's roles or bindings without a scan of every project's. Only names are held;
 * the objects are read from the cache, so a relist that replaces them keeps no old copy alive.
 */
export class NamespaceIndex<T extends Namespaced> {
  readonly #informer: Informer<T>;
  readonly #names = new Map<string, Set<string>>();

  constructor(informer: Informer<T>) {
    this.#informer = informer;
    informer.onEvent((type, object) => {
      const { name, namespace = '' } = object.metadata;
      const names = this.#names.get(namespace);
      if (type === 'ADDED') {
        if (names) names.add(name);
        else this.#names.set(namespace, new Set([name]));
      } else if (type === 'DELETED' && names) {
        names.delete(name);
        if (names.size === 0) this.#names.delete(namespace);
      }
    });
  }

  /** The cached objects of one namespace. */
  in(namespace: string): T[] {
    const found: T[] = [];
    for (const name of this.#names.get(namespace) ?? []) {
      const object = this.#informer.get(name, namespace);
      if (object) found.push(object);
    }
    return found;
  }
}
