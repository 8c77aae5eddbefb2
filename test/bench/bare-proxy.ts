// The proxy's ceiling: the smallest Node proxy to the kube-apiserver — a keep-alive TLS agent, the
// impersonation headers our proxy sends, the answer collected and sent in one write with its length (the
// cheapest relay measured). No authentication, metrics, logging or routing: what any Node proxy pays.
// Usage: BARE_PROXY_TOKEN=<a token of the kube-apiserver> node test/bench/bare-proxy.ts <kube-apiserver URL>
//   <CA file> <user to impersonate> <group>; prints its URL on stdout.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

const [server, caFile, user, group] = process.argv.slice(2) as [string, string, string, string];
const target = new URL(server);
const agent = new https.Agent({ keepAlive: true, ca: readFileSync(caFile) });
const headers = {
  authorization: `Bearer ${process.env['BARE_PROXY_TOKEN']}`,
  'impersonate-user': user,
  'impersonate-group': group,
};

const proxy = http.createServer((req, res) => {
  const upstream = https.request(
    { host: target.hostname, port: target.port, path: req.url, method: req.method, agent, headers },
    (answer) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      answer.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        bytes += chunk.length;
      });
      answer.on('end', () => {
        res.writeHead(answer.statusCode ?? 502, {
          'Content-Type': answer.headers['content-type'] ?? 'application/json',
          'Content-Length': bytes,
        });
        res.socket?.cork();
        for (const chunk of chunks) res.write(chunk);
        res.end();
        res.socket?.uncork();
      });
    },
  );
  upstream.on('error', () => res.destroy());
  upstream.end();
});
proxy.keepAliveTimeout = 65_000;
proxy.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}\n`);
});
