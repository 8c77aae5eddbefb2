import https from 'node:https';

/** The TLS material an agent fixes for every connection it makes. */
const FIXED_TLS_OPTIONS = ['ca', 'cert', 'key'] as const;

/**
 * An https.Agent whose CA, client certificate and key are its own. Node keys the agent's connection pools
 * by a name that includes that material (`https.Agent#getName`): at each request the agent converts the
 * PEM Buffers to strings and looks the result, several kB long, up as a property name — three times (once
 * as it is sent, twice as its connection is freed). An agent's own options override a request's (Node
 * merges them last), so for material the agent sets, the name's part never differs between its requests;
 * it is left out of the name. Anything else that distinguishes a connection (host, port, servername,
 * verification) stays in.
 */
export class FixedTlsAgent extends https.Agent {
  readonly #fixed: readonly string[];

  constructor(options: https.AgentOptions) {
    super(options);
    this.#fixed = FIXED_TLS_OPTIONS.filter((name) => options[name] !== undefined);
  }

  /**
   * The material is blanked on the options object itself for the call and put back after it, rather than
   * on a copy: Node passes its own merged copy of a request's options, and copying its twenty-odd
   * properties three times a request cost more than the rest of the name.
   */
  override getName(options?: https.RequestOptions): string {
    if (!options || this.#fixed.length === 0) return super.getName(options);
    const fields = options as Record<string, unknown>;
    const saved = this.#fixed.map((name) => fields[name]);
    try {
      for (const name of this.#fixed) fields[name] = undefined;
      return super.getName(options);
    } finally {
      this.#fixed.forEach((name, i) => (fields[name] = saved[i]));
    }
  }
}
