import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { ApiException, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { notEstablishedBecause, waitForCrdsEstablished, type ReadCrd } from '../cluster/crds.ts';
import { errorLine } from '../cluster/error-line.ts';

// A CRD as the kube-apiserver returns it (JSON text, so that `conditions: null` is what is on the wire).
const crd = (json: string) => JSON.parse(json) as V1CustomResourceDefinition;
const established = crd('{"status":{"conditions":[{"type":"Established","status":"True"}]}}');
const notFound = () =>
  new ApiException(
    404,
    'Not Found',
    JSON.stringify({ kind: 'Status', message: 'customresourcedefinitions "a.example.io" not found' }),
    {},
  );

/** A fake reader that answers each name's reads from its list in turn (the last answer repeats). */
function reader(answers: Record<string, (V1CustomResourceDefinition | Error)[]>): {
  read: ReadCrd;
  reads: Record<string, number>;
} {
  const reads: Record<string, number> = {};
  const read: ReadCrd = async (name) => {
    const list = answers[name] ?? [];
    const answer = list[Math.min(reads[name] ?? 0, list.length - 1)];
    reads[name] = (reads[name] ?? 0) + 1;
    if (answer instanceof Error) throw answer;
    return answer!;
  };
  return { read, reads };
}

describe('waiting for CRDs to be Established', () => {
  test('a CRD without status, with null conditions or not Established yet is waited for, not an error', async () => {
    const { read, reads } = reader({
      'a.example.io': [
        crd('{}'),
        crd('{"status":{}}'),
        crd('{"status":{"conditions":null}}'),
        crd('{"status":{"conditions":[{"type":"NamesAccepted","status":"True"}]}}'),
        crd('{"status":{"conditions":[{"type":"Established","status":"False","reason":"Installing"}]}}'),
        established,
      ],
      'b.example.io': [notFound(), established],
    });
    await waitForCrdsEstablished(['a.example.io', 'b.example.io'], read, { timeoutMs: 5000, intervalMs: 1 });
    // Each is read until it is Established, and not after.
    assert.deepEqual(reads, { 'a.example.io': 6, 'b.example.io': 2 });
  });

  test('after the deadline it fails naming each CRD that is not Established, and why', async () => {
    const { read } = reader({
      'a.example.io': [crd('{"status":{"conditions":null}}')],
      'b.example.io': [established],
      'c.example.io': [
        crd(
          '{"status":{"conditions":[{"type":"Established","status":"False","reason":"Installing","message":"the initial names have not been accepted"}]}}',
        ),
      ],
      'd.example.io': [notFound()],
    });
    await assert.rejects(
      waitForCrdsEstablished(['a.example.io', 'b.example.io', 'c.example.io', 'd.example.io'], read, {
        timeoutMs: 30,
        intervalMs: 5,
      }),
      {
        message:
          'not Established after 30 ms: a.example.io: no status conditions yet; ' +
          'c.example.io: Established False (Installing: the initial names have not been accepted); ' +
          'd.example.io: cannot read it: HTTP 404: customresourcedefinitions "a.example.io" not found',
      },
    );
  });

  test('why a CRD is not Established', () => {
    assert.equal(notEstablishedBecause(established), undefined);
    assert.equal(notEstablishedBecause(crd('{"metadata":{"name":"x"}}')), 'no status conditions yet');
    assert.equal(notEstablishedBecause(crd('{"status":{"conditions":[]}}')), 'no Established condition yet');
    assert.equal(
      notEstablishedBecause(crd('{"status":{"conditions":[{"type":"Established","status":"Unknown"}]}}')),
      'Established Unknown',
    );
  });
});

describe('the one line a start-up failure prints', () => {
  test("a failed command's stderr, as text, first line, trimmed (execFileSync's error carries Buffers)", () => {
    let failure: unknown;
    try {
      execFileSync(
        'bash',
        ['-c', 'printf "\\n  error: no objects passed to apply  \\nsee --help\\n" >&2; exit 3'],
        {
          stdio: 'pipe',
        },
      );
    } catch (err) {
      failure = err;
    }
    assert.ok(Buffer.isBuffer((failure as { stderr: unknown }).stderr));
    assert.equal(errorLine(failure), 'error: no objects passed to apply');
  });

  test("a command that said nothing on stderr: the error's message", () => {
    let failure: unknown;
    try {
      execFileSync('bash', ['-c', 'exit 3'], { stdio: 'pipe' });
    } catch (err) {
      failure = err;
    }
    assert.match(errorLine(failure), /^Command failed: bash -c exit 3$/);
  });

  test("a failed API call: its code and the kube-apiserver's message, not the client's dump", () => {
    assert.equal(errorLine(notFound()), 'HTTP 404: customresourcedefinitions "a.example.io" not found');
    assert.equal(errorLine(new ApiException(503, 'Service Unavailable', 'not json', {})), 'HTTP 503');
  });

  test('other errors: the first non-empty line of the message', () => {
    assert.equal(
      errorLine(
        new Error('\ntimed out after 90000 ms waiting for kube-apiserver /readyz\nkube-apiserver output:\n…'),
      ),
      'timed out after 90000 ms waiting for kube-apiserver /readyz',
    );
    assert.equal(errorLine('plain text'), 'plain text');
    assert.equal(errorLine(new Error('')), 'unknown error');
  });
});
