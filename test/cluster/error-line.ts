import { ApiException } from '@kubernetes/client-node';

/**
 * What went wrong, in one line for a person: a failed command's stderr as text (execFileSync's errors
 * carry it as a Buffer), the kube-apiserver's own message for a failed API call, else the error's
 * message; its first non-empty line, trimmed.
 */
export function errorLine(err: unknown): string {
  return (
    firstLine(stderrOf(err)) ?? firstLine(apiMessageOf(err)) ?? firstLine(messageOf(err)) ?? 'unknown error'
  );
}

function firstLine(text: string | undefined): string | undefined {
  return text
    ?.split('\n')
    .map((line) => line.trim())
    .find((line) => line !== '');
}

function stderrOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('stderr' in err)) return undefined;
  const { stderr } = err;
  if (Buffer.isBuffer(stderr)) return stderr.toString('utf8');
  return typeof stderr === 'string' ? stderr : undefined;
}

/** The `message` of the Status an API call failed with ("HTTP-Code: 404" is the first line of its own). */
function apiMessageOf(err: unknown): string | undefined {
  if (!(err instanceof ApiException)) return undefined;
  const body: unknown = typeof err.body === 'string' ? parseJson(err.body) : err.body;
  const message =
    typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string'
      ? body.message
      : undefined;
  return `HTTP ${err.code}${message ? `: ${message}` : ''}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
