import net from 'node:net';

export interface TcpGate {
  /** 127.0.0.1:<port> forwarding to the target while open. */
  address: string;
  /** Connections accepted and forwarded so far. */
  readonly accepted: number;
  /** Refuses new connections and cuts the open ones: the target looks unreachable. */
  close(): void;
  open(): void;
  stop(): Promise<void>;
}

/**
 * A TCP forwarder in front of a server, to make it unreachable for one client at a time of the
 * test's choosing (bytes pass through untouched, so TLS is end to end).
 */
export async function startTcpGate(targetHost: string, targetPort: number): Promise<TcpGate> {
  let isOpen = true;
  let accepted = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (!isOpen) {
      client.destroy();
      return;
    }
    accepted++;
    const upstream = net.connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    close() {
      isOpen = false;
      for (const s of sockets) s.destroy();
    },
    open() {
      isOpen = true;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
