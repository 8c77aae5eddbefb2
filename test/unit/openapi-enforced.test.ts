import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Parameter, Schema } from '../../src/http/openapi-components.ts';
import { ApiError } from '../../src/kernel/api-error.ts';
import { logsApi } from '../../src/log-query/logs-api.ts';
import { parseLogQuery } from '../../src/log-query/log-query.ts';
import { oauthApi } from '../../src/tokens/oauth-api.ts';
import { parseForm } from '../../src/tokens/oauth-request.ts';

/**
 * The OpenAPI document says what the server enforces: the schemas of request inputs refuse what the
 * server's own parsers refuse, and accept what they accept. (The label selector pattern has its own
 * check in label-selector.test.ts.)
 */
const ajv = new Ajv2020({ strict: false, logger: false });
const ctx = { platformName: 'acme', version: '1' };

describe('OpenAPI request schemas match what the server enforces', () => {
  const schemas = oauthApi().schemas as Record<string, Schema>;

  /** What the token endpoint refuses before looking at credentials: a missing field the grant needs. */
  const serverRefusesToken = (form: Map<string, string>) => {
    const grant = form.get('grant_type');
    if (grant === 'password') return !form.has('username') || !form.has('password');
    if (grant === 'refresh_token') return !form.has('refresh_token');
    return grant === undefined;
  };

  test('token request: required fields per grant, none of them empty', () => {
    const validate = ajv.compile(schemas['TokenRequest']!);
    const bodies = [
      'grant_type=password&username=alice&password=secret',
      'grant_type=password&username=alice',
      'grant_type=password&username=&password=secret',
      'grant_type=password&password=secret',
      'grant_type=refresh_token&refresh_token=abc',
      'grant_type=refresh_token',
      'grant_type=refresh_token&refresh_token=',
      'username=alice&password=secret',
    ];
    for (const body of bodies) {
      // The raw form, empty values included, as a client would check it against the document.
      const raw = Object.fromEntries(new URLSearchParams(body));
      const refused = serverRefusesToken(parseForm(Buffer.from(body)));
      assert.equal(validate(raw), !refused, `${body}: ${JSON.stringify(validate.errors)}`);
    }
  });

  test('revoke request: token required and not empty', () => {
    const validate = ajv.compile(schemas['RevokeRequest']!);
    assert.equal(validate({ token: 'abc' }), true);
    assert.equal(validate({ token: '' }), false);
    assert.equal(
      validate({ token: 'abc', token_type_hint: 'something-else' }),
      true,
      'hints are not enforced',
    );
    assert.equal(parseForm(Buffer.from('token=')).has('token'), false, 'empty counts as absent');
  });

  test('log list parameters: the documented patterns refuse exactly what the parser refuses', () => {
    const path = Object.values(logsApi(ctx).paths)[0] as { get: { parameters: Parameter[] } };
    const values = [
      'kube-system',
      ' kube-system , default ',
      'a,,b',
      ',',
      '',
      'Kube-System',
      'web-0.cache',
      '-web',
      'web-',
      'a_b',
      `${'a'.repeat(63)}`,
      `${'a'.repeat(64)}`,
      'x y',
    ];
    let checked = 0;
    for (const parameter of path.get.parameters) {
      if (!['namespaces', 'workloads', 'pods', 'containers'].includes(parameter.name)) continue;
      const pattern = new RegExp(parameter.schema['pattern'] as string, 'u');
      for (const value of values) {
        let accepted = true;
        try {
          parseLogQuery({ [parameter.name]: value }, 1_700_000_000);
        } catch (err) {
          assert.ok(err instanceof ApiError);
          accepted = false;
        }
        assert.equal(pattern.test(value), accepted, `${parameter.name}=${JSON.stringify(value)}`);
        checked++;
      }
    }
    assert.equal(checked, 4 * values.length, 'namespaces, workloads, pods, containers');
  });
});
