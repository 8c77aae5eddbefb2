import assert from 'node:assert/strict';
import type http from 'node:http';
import { describe, test } from 'node:test';
import { authorizationHeaderCount } from '../../src/http/single-authorization.ts';
import { stripClientCredentials, upgradeBearerToken } from '../../src/kube-proxy/header-hygiene.ts';

const tokenProtocol = (token: string) =>
  `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`;

describe('proxy header hygiene', () => {
  test('credential and identity headers are removed, everything else is kept', () => {
    // Node lowercases header names, so "X-REMOTE-USER" and "x-remote-user" arrive alike.
    const headers: http.IncomingHttpHeaders = {
      authorization: 'Bearer platform-token',
      'proxy-authorization': 'Basic eDp5',
      'impersonate-user': 'admin',
      'impersonate-group': ['system:masters'],
      'impersonate-extra-scopes': 'x',
      'x-remote-user': 'admin',
      'x-remote-group': 'system:masters',
      'x-remote-extra-scopes': 'all',
      'x-remote-uid': '0',
      accept: 'application/json',
      'x-request-id': 'abc',
      'x-remotely': 'not a requestheader name',
    };
    stripClientCredentials(headers);
    assert.deepEqual(headers, {
      accept: 'application/json',
      'x-request-id': 'abc',
      'x-remotely': 'not a requestheader name',
    });
  });

  test('the bearer-token subprotocol is removed, other subprotocols are kept in order', () => {
    const headers: http.IncomingHttpHeaders = {
      authorization: 'Bearer other',
      'sec-websocket-protocol': `v5.channel.k8s.io, ${tokenProtocol('secret')}, v4.channel.k8s.io`,
    };
    stripClientCredentials(headers);
    assert.deepEqual(headers, { 'sec-websocket-protocol': 'v5.channel.k8s.io, v4.channel.k8s.io' });

    const only: http.IncomingHttpHeaders = { 'sec-websocket-protocol': tokenProtocol('secret') };
    stripClientCredentials(only);
    assert.deepEqual(only, {});
  });

  test('an upgrade’s token: the Authorization header wins, else the subprotocol', () => {
    assert.equal(
      upgradeBearerToken({
        authorization: 'Bearer from-header',
        'sec-websocket-protocol': tokenProtocol('from-protocol'),
      }),
      'from-header',
    );
    assert.equal(
      upgradeBearerToken({
        'sec-websocket-protocol': `base64.binary.k8s.io, ${tokenProtocol('from-protocol')}`,
      }),
      'from-protocol',
    );
    assert.equal(upgradeBearerToken({ 'sec-websocket-protocol': 'base64.binary.k8s.io' }), undefined);
    assert.equal(
      upgradeBearerToken({ 'sec-websocket-protocol': 'base64url.bearer.authorization.k8s.io.' }),
      undefined,
    );
  });

  test('duplicate Authorization lines are counted from the raw headers, any case', () => {
    assert.equal(authorizationHeaderCount(['Host', 'x', 'Authorization', 'Bearer a']), 1);
    assert.equal(authorizationHeaderCount(['authorization', 'Bearer a', 'AUTHORIZATION', 'Bearer b']), 2);
    assert.equal(authorizationHeaderCount(['Host', 'x']), 0);
  });
});
