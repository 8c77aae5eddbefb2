import assert from 'node:assert/strict';
import type http from 'node:http';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/kernel/api-error.ts';
import { shapeRequest } from '../../src/kube-proxy/request-shaping.ts';

const shape = (url: string, method = 'GET') => shapeRequest({ url, method } as http.IncomingMessage);

describe('proxy request shaping', () => {
  test('verbs, and which answers are one object or one list', () => {
    const cases: [string, string, string, boolean][] = [
      ['GET', '/api/v1/nodes', 'LIST', true],
      ['GET', '/api/v1/nodes?limit=10', 'LIST', true],
      ['GET', '/api/v1/nodes/node-1', 'GET', true],
      ['GET', '/api/v1/namespaces/demo/pods/web/log?follow=true', 'GET', false],
      ['GET', '/api/v1/nodes?watch=1', 'WATCH', false],
      ['GET', '/api/v1/nodes?limit=10&watch=true&resourceVersion=5', 'WATCH', false],
      // Percent-encoded names and values are decoded before they are read.
      ['GET', '/api/v1/nodes?%77atch=true', 'WATCH', false],
      ['GET', '/api/v1/nodes?watch=%31', 'WATCH', false],
      ['GET', '/api/v1/nodes?watch=false', 'LIST', true],
      ['GET', '/api/v1/nodes?watchers=1', 'LIST', true],
      ['GET', '/apis/apps/v1/watch/namespaces/demo/deployments', 'WATCH', false],
      ['DELETE', '/api/v1/namespaces/demo/pods', 'DELETECOLLECTION', false],
      ['POST', '/api/v1/namespaces/demo/pods?watch=1', 'POST', false],
    ];
    for (const [method, url, verb, oneObjectOrList] of cases) {
      assert.deepEqual(shape(url, method), { verb, oneObjectOrList }, `${method} ${url}`);
    }
  });

  test('a path that could resolve outside the Kubernetes API is refused with a BadRequest naming it', () => {
    for (const url of ['/api/v1/../../healthz', '/api/v1/nodes/%2e%2e?watch=1']) {
      assert.throws(
        () => shape(url),
        (err: unknown) =>
          err instanceof ApiError &&
          err.statusCode === 400 &&
          /invalid Kubernetes API path/.test(err.message),
        url,
      );
    }
  });
});
