import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { ControlPlane } from '../cluster/control-plane.ts';
import type { TestCertificates } from './test-certificates.ts';

/** One request as it arrived at the upstream: method, path and every header line as sent. */
export interface RecordedRequest {
  method: string;
  url: string;
  /** Name/value pairs in wire order and case (IncomingMessage.rawHeaders). */
  rawHeaders: string[];
}

export interface RecordingUpstream {
  url: string;
  requests: RecordedRequest[];
  /** A kubeconfig (admin token) that points at the recorder instead of the kube-apiserver. */
  kubeconfigPath: string;
  close(): Promise<void>;
}

/**
 * A TLS-terminating pass-through placed between the platform server and the real kube-apiserver: it
 * records every request's header lines exactly as the platform server sent them (what the kube-apiserver
 * would see) and forwards the request unchanged, upgrades included, so the real kube-apiserver still
 * answers. The platform server reaches it through a kubeconfig with the control plane's admin token.
 */
export async function startRecordingUpstream(
  cp: ControlPlane,
  tls: TestCertificates,
  dir: string,
): Promise<RecordingUpstream> {
  const requests: RecordedRequest[] = [];
  const target = new URL(cp.server);
  const forward = (req: import('node:http').IncomingMessage) =>
    https.request({
      hostname: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      // Header lines as received: req.headers would join repeated ones (Impersonate-Group) into one.
      headers: req.rawHeaders,
      ca: cp.caPem,
    });
  const record = (req: import('node:http').IncomingMessage) =>
    requests.push({ method: req.method ?? '', url: req.url ?? '', rawHeaders: [...req.rawHeaders] });

  const server = https.createServer(
    { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
    (req, res) => {
      record(req);
      const upstream = forward(req);
      upstream.on('response', (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        res.flushHeaders();
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    },
  );
  server.on('upgrade', (req, socket: Duplex, head: Buffer) => {
    record(req);
    const upstream = forward(req);
    upstream.on('upgrade', (answer, upstreamSocket, upstreamHead) => {
      const lines = [`HTTP/1.1 101 Switching Protocols`];
      for (let i = 0; i < answer.rawHeaders.length; i += 2)
        lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upstreamHead.length) socket.write(upstreamHead);
      if (head.length) upstreamSocket.write(head);
      upstreamSocket.pipe(socket).pipe(upstreamSocket);
      socket.on('close', () => upstreamSocket.destroy());
      upstreamSocket.on('close', () => socket.destroy());
    });
    upstream.on('response', (answer) => {
      socket.end(`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}\r\nConnection: close\r\n\r\n`);
    });
    upstream.on('error', () => socket.destroy());
    upstream.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const kubeconfigPath = path.join(dir, 'kubeconfig-recorder');
  writeFileSync(
    kubeconfigPath,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: recorder',
      `  cluster: {server: "${url}", certificate-authority-data: "${Buffer.from(tls.caPem).toString('base64')}"}`,
      'users:',
      `- name: admin`,
      `  user: {token: "${cp.admin.token}"}`,
      'contexts:',
      '- name: admin',
      '  context: {cluster: recorder, user: admin}',
      'current-context: admin',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return {
    url,
    requests,
    kubeconfigPath,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
