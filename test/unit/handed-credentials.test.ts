import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { Dispatcher } from 'undici';
import { credentialsData, HandedCredentials } from '../../src/cluster/handed-credentials.ts';
import type { RequestAuthentication } from '../../src/cluster/kube-request.ts';
import { upstreamRequestDuration } from '../../src/observability/upstream-metrics.ts';

function kubeConfig(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: 'https://kube.test:6443',
        caData: Buffer.from('a CA').toString('base64'),
        ...cluster,
      },
    ],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

class Collected implements RequestAuthentication {
  headers: Record<string, string> = {};
  dispatcher: Dispatcher | undefined;
  setHeaderParam(name: string, value: string) {
    this.headers[name] = value;
  }
  getDispatcher() {
    return this.dispatcher;
  }
  setDispatcher(dispatcher: Dispatcher) {
    this.dispatcher = dispatcher;
  }
}

test('a token and the TLS material are handed over as the main thread sends them', async () => {
  const kc = kubeConfig({
    token: 'the-token',
    certData: Buffer.from('a cert').toString('base64'),
    keyData: Buffer.from('a key').toString('base64'),
  });
  const data = await credentialsData(kc);
  assert.equal(data.server, 'https://kube.test:6443');
  assert.deepEqual(data.headers, { Authorization: 'Bearer the-token' });
  assert.equal(String(data.connect?.['ca']), 'a CA');
  assert.equal(String(data.connect?.['cert']), 'a cert');
  assert.equal(String(data.connect?.['key']), 'a key');

  // The same headers as the library's own authentication of a request on the main thread.
  const main = new Collected();
  await kc.applySecurityAuthentication(main as never);
  const handed = new Collected();
  await new HandedCredentials(data, upstreamRequestDuration(new Registry())).applySecurityAuthentication(
    handed,
  );
  assert.deepEqual(handed.headers, main.headers);
  assert.ok(handed.dispatcher);
});

test('basic auth and skipped TLS verification are handed over too', async () => {
  const data = await credentialsData(
    kubeConfig({ username: 'ann', password: 'secret' }, { skipTLSVerify: true }),
  );
  assert.deepEqual(data.headers, { Authorization: `Basic ${Buffer.from('ann:secret').toString('base64')}` });
  assert.equal(data.connect?.['rejectUnauthorized'], false);
});

test('a cluster reached through a proxy cannot be handed over, and the refusal says why', async () => {
  await assert.rejects(
    credentialsData(kubeConfig({ token: 't' }, { proxyUrl: 'http://proxy.test:3128' })),
    /proxy-url/,
  );
});

test('new headers are taken at once; the pool is replaced only when the TLS material changes', async () => {
  const kc = kubeConfig({ token: 'first' });
  const credentials = new HandedCredentials(
    await credentialsData(kc),
    upstreamRequestDuration(new Registry()),
  );
  const auth = async () => {
    const collected = new Collected();
    await credentials.applySecurityAuthentication(collected);
    return collected;
  };
  const before = await auth();

  credentials.update(await credentialsData(kubeConfig({ token: 'second' })));
  const renewed = await auth();
  assert.equal(renewed.headers['Authorization'], 'Bearer second');
  assert.equal(renewed.dispatcher, before.dispatcher);

  credentials.update(
    await credentialsData(
      kubeConfig({ token: 'second' }, { caData: Buffer.from('another CA').toString('base64') }),
    ),
  );
  const rotated = await auth();
  assert.notEqual(rotated.dispatcher, before.dispatcher);
  await credentials.close();
});
