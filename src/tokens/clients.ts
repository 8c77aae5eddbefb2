import { createHash, timingSafeEqual } from 'node:crypto';

export interface OAuthClient {
  id: string;
  secret: string;
}

/**
 * Parses `auth.clients` (`id:secret[,id:secret…]`). Empty means the default client, whose id and secret are
 * both the platform name — the well-known credential of the system we re-create; production should set its own.
 */
export function parseClients(setting: string, platformName: string): OAuthClient[] {
  if (setting.trim() === '') return [{ id: platformName, secret: platformName }];
  return setting.split(',').map((entry) => {
    const colon = entry.indexOf(':');
    return { id: entry.slice(0, colon), secret: entry.slice(colon + 1) };
  });
}

/** The configured OAuth clients. Secrets are compared in constant time. */
export class ClientRegistry {
  readonly #digests: Map<string, Buffer>;
  /** Compared against when the id is unknown, so the answer takes the same time either way. */
  readonly #unknown = digest('unknown client');

  constructor(clients: readonly OAuthClient[]) {
    this.#digests = new Map(clients.map((c) => [c.id, digest(c.secret)]));
  }

  get ids(): string[] {
    return [...this.#digests.keys()];
  }

  authenticate(clientId: string, clientSecret: string): boolean {
    const expected = this.#digests.get(clientId);
    // Comparing fixed-length digests hides the secret's length as well as its content.
    const same = timingSafeEqual(expected ?? this.#unknown, digest(clientSecret));
    return expected !== undefined && same;
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
