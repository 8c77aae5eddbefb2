import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Serves `handler` (an express app, say) on a free loopback port while `run` gets its base URL; then closes. */
export async function whileServing(
  handler: http.RequestListener,
  run: (url: string) => Promise<void>,
): Promise<void> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.close();
  }
}
