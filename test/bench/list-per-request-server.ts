// The baseline without a cache: every request LISTs all nodes from the kube-apiserver, then sorts by
// name and pages in memory. Usage: node test/bench/list-per-request-server.ts <kubeconfig>; prints its URL.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import type { RawNode } from '../../src/nodes/node-view.ts';

const kc = new KubeConfig();
kc.loadFromFile(process.argv[2]!);
kc.setCurrentContext('admin');

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const limit = Number(url.searchParams.get('limit') ?? '10');
  const page = Number(url.searchParams.get('page') ?? '1');
  kubeRequest<{ items: RawNode[] }>(kc, '/api/v1/nodes', { timeoutMs: 60_000 })
    .then((list) => {
      const items = list.items.sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
      const body = JSON.stringify({
        items: items.slice((page - 1) * limit, page * limit),
        totalItems: items.length,
      });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(body);
    })
    .catch((err: Error) => {
      res.writeHead(502);
      res.end(err.message);
    });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
