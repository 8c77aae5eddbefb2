import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import { describe, test } from 'node:test';
import { BearerDoor } from '../../src/http/bearer-door.ts';
import { headersOf, kubeStatusOf } from '../../src/http/error-mapper.ts';
import { requestContext } from '../../src/http/request-context.ts';
import { ApiError } from '../../src/kernel/api-error.ts';

class Refused extends Error {
  readonly outcome = 'expired';
}

function door(counts: string[]) {
  return new BearerDoor({
    authenticate: async (token) => {
      if (token === 'good') return { username: 'alice', groups: ['system:authenticated'] };
      throw new Refused('token has expired');
    },
    refusalOf: (err) => (err instanceof Refused ? err : undefined),
    realm: 'platform',
    counter: { inc: ({ outcome }) => void counts.push(outcome) },
  });
}

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('the bearer door', () => {
  test('a header token and a WebSocket subprotocol token are let in alike; identity in the request context', async () => {
    const counts: string[] = [];
    const byHeader = request({ authorization: 'Bearer good' });
    assert.equal((await door(counts).admit(byHeader)).username, 'alice');
    assert.equal(requestContext(byHeader).identity?.username, 'alice');
    const protocol = `base64url.bearer.authorization.k8s.io.${Buffer.from('good').toString('base64url')}`;
    const byProtocol = request({
      upgrade: 'websocket',
      'sec-websocket-protocol': `${protocol}, base64.binary.k8s.io`,
    });
    assert.equal((await door(counts).admit(byProtocol)).username, 'alice');
    assert.equal(
      byProtocol.headers['sec-websocket-protocol'],
      'base64.binary.k8s.io',
      'the token never goes upstream',
    );
    assert.deepEqual(counts, ['success', 'success']);
  });

  test('missing, malformed and refused tokens: one 401 Status with an RFC 6750 challenge, counted by outcome', async () => {
    const counts: string[] = [];
    const cases: [Record<string, string>, RegExp][] = [
      [{}, /a bearer token is required/],
      [{ authorization: 'Basic YTpi' }, /not "Bearer <token>"/],
      [{ authorization: 'Bearer bad' }, /token has expired/],
    ];
    for (const [headers, message] of cases) {
      const err = await door(counts)
        .admit(request(headers))
        .catch((e: unknown) => e);
      assert.ok(err instanceof ApiError);
      assert.equal(kubeStatusOf(err).code, 401);
      assert.match(kubeStatusOf(err).message, message);
      assert.match(headersOf(err)['WWW-Authenticate'] ?? '', /^Bearer realm="platform"/);
    }
    assert.deepEqual(counts, ['missing', 'invalid', 'expired']);
  });

  test('an authenticator that answers from memory: the middleware passes the request on in the same turn', () => {
    const counts: string[] = [];
    const syncDoor = new BearerDoor({
      authenticate: (token) => {
        if (token === 'good') return { username: 'alice', groups: [] };
        if (token === 'broken') throw new Error('cache corrupted');
        throw new Refused('token has expired');
      },
      refusalOf: (err) => (err instanceof Refused ? err : undefined),
      realm: 'platform',
      counter: { inc: ({ outcome }) => void counts.push(outcome) },
    });
    const middleware = syncDoor.middleware();
    const pass = (authorization: string) => {
      const req = { headers: { authorization }, path: '/api/v1/nodes' } as unknown as Request;
      const passed: unknown[] = [];
      middleware(req, {} as Response, (err?: unknown) => void passed.push(err));
      return { req, passed };
    };
    const good = pass('Bearer good');
    assert.deepEqual(good.passed, [undefined], 'next() before the middleware returned');
    assert.equal(requestContext(good.req).identity?.username, 'alice');
    const expired = pass('Bearer old').passed;
    assert.equal(expired.length, 1);
    assert.ok(expired[0] instanceof ApiError);
    assert.equal(kubeStatusOf(expired[0]).code, 401);
    const broken = pass('Bearer broken').passed;
    assert.equal(broken.length, 1);
    assert.equal((broken[0] as Error).message, 'cache corrupted', 'an unexpected failure stays a 500');
    assert.deepEqual(counts, ['success', 'expired']);
  });

  test('requests on one connection: each is judged by its own header, however the one before it went', async () => {
    const counts: string[] = [];
    const seen: string[] = [];
    const remembering = new BearerDoor({
      authenticate: async (token) => {
        seen.push(token);
        if (token === 'good' || token === 'other') return { username: token, groups: [] };
        throw new Refused('token has expired');
      },
      refusalOf: (err) => (err instanceof Refused ? err : undefined),
      realm: 'platform',
      counter: { inc: ({ outcome }) => void counts.push(outcome) },
    });
    const socket = {};
    const on = (authorization: string) =>
      ({ headers: { authorization }, socket }) as unknown as IncomingMessage;
    const outcome = (req: IncomingMessage) =>
      remembering.admit(req).then(
        (identity) => identity.username,
        (err: unknown) => (err instanceof ApiError ? kubeStatusOf(err).message : String(err)),
      );
    assert.equal(await outcome(on('Bearer good')), 'good');
    assert.equal(await outcome(on('Bearer good')), 'good');
    assert.equal(await outcome(on('Bearer  other ')), 'other', 'another header, another token');
    assert.match(await outcome(on('Basic YTpi')), /not "Bearer <token>"/);
    assert.match(await outcome(on('Bearer bad')), /token has expired/);
    assert.equal(await outcome(on('Bearer good')), 'good');
    assert.deepEqual(seen, ['good', 'good', 'other', 'bad', 'good'], 'every request is authenticated');
    assert.deepEqual(counts, ['success', 'success', 'success', 'invalid', 'expired', 'success']);
  });
});
