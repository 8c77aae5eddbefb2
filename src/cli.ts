#!/usr/bin/env node
// Administrator's commands: hash a password, write a User manifest, generate or inspect signing keys.
// Passwords are read from standard input, never from arguments (which other users can see in `ps`).
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { iamGroupFor } from './users/iam-resources.ts';
import { DEFAULT_BCRYPT_COST, hashPassword, MIN_BCRYPT_COST } from './users/passwords.ts';
import { kidOf } from './tokens/signing-keys.ts';

const USAGE = `usage: platform-apiserver <command>

  hash-password [--cost N]
      Reads a password from standard input; prints its bcrypt hash (cost ${DEFAULT_BCRYPT_COST}, at least ${MIN_BCRYPT_COST}).

  user create NAME [--email ADDRESS] [--group GROUP]... [--display-name TEXT] [--platform NAME] [--cost N]
      Reads the password from standard input; prints a User manifest for \`kubectl apply -f -\`.

  keys generate [--algorithm ES256|RS256]
      Prints a new PKCS#8 PEM private key for auth.signingKeyFile.

  keys kid FILE
      Prints the key id (kid) tokens signed with the PEM key in FILE carry, as /oauth/keys lists it.
`;

class UsageError extends Error {}

interface Parsed {
  positional: string[];
  options: Map<string, string[]>;
}

/** Flags of a subcommand: every known option takes a value and may repeat; anything else is a usage error. */
function parseFlags(args: readonly string[], known: readonly string[]): Parsed {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: Object.fromEntries(known.map((name) => [name, { type: 'string', multiple: true }] as const)),
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const flag = /'(--?[^' ]+)/.exec((err as Error).message)?.[1] ?? 'option';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown option ${flag}`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new UsageError(`option ${flag} needs a value`);
    throw err;
  }
  const options = new Map<string, string[]>();
  for (const [name, values] of Object.entries(parsed.values))
    if (Array.isArray(values)) options.set(name, values);
  return { positional: parsed.positionals, options };
}

function single(p: Parsed, name: string): string | undefined {
  const values = p.options.get(name);
  if (values && values.length > 1) throw new UsageError(`option --${name} given more than once`);
  return values?.[0];
}

function costOf(p: Parsed): number {
  const text = single(p, 'cost');
  if (text === undefined) return DEFAULT_BCRYPT_COST;
  const cost = Number(text);
  if (!Number.isInteger(cost) || cost < MIN_BCRYPT_COST || cost > 31) {
    throw new UsageError(`--cost must be an integer in [${MIN_BCRYPT_COST}, 31]`);
  }
  return cost;
}

/** The password on standard input, without the line break a terminal or `echo` adds. */
function readPassword(stdin: () => string): string {
  const password = stdin().replace(/\r?\n$/, '');
  if (password === '') throw new UsageError('no password on standard input');
  return password;
}

export async function runCli(
  args: readonly string[],
  io: { stdin: () => string; out: (text: string) => void },
): Promise<void> {
  const [command, sub] = args;
  if (command === 'hash-password') {
    const p = parseFlags(args.slice(1), ['cost']);
    if (p.positional.length > 0)
      throw new UsageError('hash-password takes no arguments; the password comes on stdin');
    io.out(`${await hashPassword(readPassword(io.stdin), costOf(p))}\n`);
    return;
  }
  if (command === 'user' && sub === 'create') {
    const p = parseFlags(args.slice(2), ['email', 'group', 'display-name', 'platform', 'cost']);
    const [name, ...extra] = p.positional;
    if (!name || extra.length > 0) throw new UsageError('user create needs exactly one NAME');
    if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name)) {
      throw new UsageError(
        `NAME ${JSON.stringify(name)} must be a lowercase DNS subdomain (a-z, 0-9, "-", ".")`,
      );
    }
    const email = single(p, 'email');
    if (email !== undefined && !/^[^@\s]+@[^@\s]+$/.test(email))
      throw new UsageError(`--email ${email} is not an address`);
    const iam = iamGroupFor(single(p, 'platform') ?? 'platform');
    const displayName = single(p, 'display-name');
    const manifest = {
      apiVersion: `${iam.group}/${iam.version}`,
      kind: 'User',
      metadata: { name },
      spec: {
        ...(email ? { email } : {}),
        ...(displayName ? { displayName } : {}),
        groups: p.options.get('group') ?? [],
        password: await hashPassword(readPassword(io.stdin), costOf(p)),
      },
    };
    io.out(stringify(manifest));
    return;
  }
  if (command === 'keys' && sub === 'generate') {
    const p = parseFlags(args.slice(2), ['algorithm']);
    const algorithm = single(p, 'algorithm') ?? 'ES256';
    if (algorithm !== 'ES256' && algorithm !== 'RS256')
      throw new UsageError('--algorithm must be ES256 or RS256');
    const pair =
      algorithm === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('rsa', { modulusLength: 3072 });
    io.out(pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    return;
  }
  if (command === 'keys' && sub === 'kid') {
    const [file, ...extra] = parseFlags(args.slice(2), []).positional;
    if (!file || extra.length > 0) throw new UsageError('keys kid needs exactly one FILE');
    // A private key file (signing key) or a public one (verification key): the kid depends on the public half only.
    io.out(`${kidOf(createPublicKey(readFileSync(file)), file)}\n`);
    return;
  }
  throw new UsageError(
    command === undefined || command === 'help' || command === '--help'
      ? ''
      : `unknown command ${args.join(' ')}`,
  );
}

if (import.meta.main) {
  try {
    await runCli(process.argv.slice(2), {
      stdin: () => readFileSync(0, 'utf8'),
      out: (text) => process.stdout.write(text),
    });
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(err.message ? `platform-apiserver: ${err.message}\n\n${USAGE}` : USAGE);
      process.exit(err.message ? 64 : 0);
    }
    process.stderr.write(`platform-apiserver: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
