// The logins' control: a bare bcrypt pool behind node:http. POST /oauth/token compares the form's password
// with a hash of the given cost and answers 200 (or 401): no session, no token, no kube-apiserver. The same
// threads as the server's: libuv's pool (same size: the same environment), at most one comparison per core
// at once (the server's password gate), the pool threads at the server's nice value (http.threadPoolNice,
// 10). What a bare pool turns the cores into while the same storm runs: the ceiling of the server's logins/s.
// Usage: node test/bench/bare-pool.ts <password> <cost> <nice>; prints its URL on stdout.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import bcrypt from 'bcrypt';
import { lowerThreadPoolPriority } from '../../src/http/thread-pool-priority.ts';

const [password, cost, nice] = process.argv.slice(2) as [string, string, string];
const hash = await bcrypt.hash(password, Number(cost));
// The hash above started the pool's threads: they can be niced now.
lowerThreadPoolPriority(Number(nice));
const slots = os.availableParallelism();
let running = 0;
const waiting: (() => void)[] = [];

async function compare(candidate: string): Promise<boolean> {
  if (running >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await bcrypt.compare(candidate, hash);
  } finally {
    running--;
    waiting.shift()?.();
  }
}

const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    void compare(new URLSearchParams(body).get('password') ?? '').then((ok) => {
      res.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' });
      res.end(ok ? '{"access_token":"x"}' : '{"error":"invalid_grant"}');
    });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
