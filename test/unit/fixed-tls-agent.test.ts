import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { FixedTlsAgent } from '../../src/kube-proxy/fixed-tls-agent.ts';
import { makeServingCertificate, type TestCertificates } from '../support/test-certificates.ts';

describe('an https agent with fixed TLS material', () => {
  let certs: TestCertificates;
  before(() => {
    certs = makeServingCertificate();
  });
  after(() => certs.cleanup());

  test('its pool names leave out the material it fixes, and keep what tells connections apart', () => {
    const ca = readFileSync(certs.caFile);
    const agent = new FixedTlsAgent({ ca, keepAlive: true });
    const name = agent.getName({ host: 'kube.example', port: 6443, ca });
    assert.ok(!name.includes('BEGIN CERTIFICATE'), name);
    assert.ok(name.length < 100, `${name.length} characters`);
    // A request's own CA is overridden by the agent's when it connects: the same pool.
    assert.equal(agent.getName({ host: 'kube.example', port: 6443 }), name);
    assert.notEqual(agent.getName({ host: 'other.example', port: 6443, ca }), name);
    assert.notEqual(agent.getName({ host: 'kube.example', port: 6443, ca, servername: 'kube' }), name);
    assert.notEqual(agent.getName({ host: 'kube.example', port: 6443, ca, rejectUnauthorized: false }), name);
    // Node's own agent puts the whole CA in the name.
    assert.ok(
      new https.Agent({ ca }).getName({ host: 'kube.example', port: 6443, ca }).includes('BEGIN CERTIFICATE'),
    );
  });

  test('without fixed material it names pools as Node does', () => {
    const agent = new FixedTlsAgent({ keepAlive: true });
    const ca = readFileSync(certs.caFile);
    const options = { host: 'kube.example', port: 6443, ca };
    assert.equal(agent.getName(options), new https.Agent().getName(options));
  });

  test('requests through it verify the server with its CA and reuse one connection', async () => {
    const server = https.createServer(
      { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) },
      (_req, res) => res.end('ok'),
    );
    let connections = 0;
    server.on('secureConnection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new FixedTlsAgent({ ca: readFileSync(certs.caFile), keepAlive: true });
    const get = () =>
      new Promise<string>((resolve, reject) => {
        https
          .get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () => resolve(body));
          })
          .on('error', reject);
      });
    try {
      for (let i = 0; i < 5; i++) assert.equal(await get(), 'ok');
      assert.equal(connections, 1);
      // Without the CA the same server is refused: the agent's material is what verified it.
      const untrusting = new FixedTlsAgent({ keepAlive: false });
      await assert.rejects(
        new Promise((resolve, reject) => {
          https.get({ host: '127.0.0.1', port, path: '/', agent: untrusting }, resolve).on('error', reject);
        }),
        /self[- ]signed|unable to verify|certificate/i,
      );
    } finally {
      agent.destroy();
      server.close();
    }
  });
});
