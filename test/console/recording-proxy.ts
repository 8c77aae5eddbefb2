import { appendFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';

/** One request the console sent to the API server, as recorded. */
export interface RecordedCall {
  at: string;
  method: string;
  url: string;
  /** Whether an Authorization header was sent. */
  token: boolean;
  /** Upstream status; 101 for a WebSocket upgrade; 0 when the upstream could not be reached. */
  status: number;
}

export interface RecordingProxy {
  url: string;
  calls: RecordedCall[];
  close(): Promise<void>;
}

/**
 * A small HTTP (and WebSocket) proxy between the console's server and ours that writes one JSON line per
 * request (URL, whether a token was sent, status) to a log file: it shows in seconds which call a page
 * depends on.
 */
export async function startRecordingProxy(upstream: string, logFile: string): Promise<RecordingProxy> {
  const target = new URL(upstream);
  const calls: RecordedCall[] = [];
  const record = (req: http.IncomingMessage, status: number) => {
    const call: RecordedCall = {
      at: new Date().toISOString(),
      method: req.method ?? 'GET',
      url: req.url ?? '',
      token: Boolean(req.headers.authorization),
      status,
    };
    calls.push(call);
    appendFileSync(logFile, `${JSON.stringify(call)}\n`);
  };
  const server = http.createServer((req, res) => {
    const forward = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        record(req, answer.statusCode ?? 0);
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    forward.on('error', () => {
      record(req, 0);
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(forward);
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    const up = net.connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      up.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) up.write(head);
      up.once('data', (first: Buffer) => {
        const status = Number(/^HTTP\/1\.\d (\d{3})/.exec(first.toString('latin1'))?.[1] ?? 0);
        record(req, status);
        socket.write(first);
        up.pipe(socket);
        socket.pipe(up);
      });
    });
    const end = () => {
      up.destroy();
      socket.destroy();
    };
    up.on('error', end);
    socket.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
