// The live heap of a server under test, read through its inspector (the Chrome DevTools Protocol over
// Node's own WebSocket client): a full garbage collection first, so what is left is what the process
// holds, not garbage waiting for the next collection. The server runs with `--inspect=127.0.0.1:<port>`
// (inspectorFlag); nothing is paused or profiled, and nothing stays attached between readings.
import net from 'node:net';

export interface LiveMemory {
  /** V8 heap in use after a full collection. */
  heapUsedMb: number;
  /** Memory of Buffers and other objects outside the V8 heap, after the collection. */
  externalMb: number;
  /** The process's RSS at that moment. */
  rssMb: number;
}

/** A free loopback port and the node flag that opens the inspector on it. */
export async function inspectorFlag(): Promise<{ port: number; flag: string }> {
  const port = await new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
  return { port, flag: `--inspect=127.0.0.1:${port}` };
}

interface CdpAnswer {
  id: number;
  result?: { result?: { value?: unknown } };
  error?: { message: string };
}

/** Collects all garbage in the process behind the inspector on `port`, then reads its memory. */
export async function liveMemory(port: number): Promise<LiveMemory> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error(`cannot reach the inspector on port ${port}`));
  });
  const pending = new Map<number, (answer: CdpAnswer) => void>();
  socket.onmessage = (event) => {
    const answer = JSON.parse(String(event.data)) as CdpAnswer;
    pending.get(answer.id)?.(answer);
    pending.delete(answer.id);
  };
  let nextId = 0;
  const send = (method: string, params: object = {}) =>
    new Promise<CdpAnswer>((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, (answer) =>
        answer.error ? reject(new Error(`${method}: ${answer.error.message}`)) : resolve(answer),
      );
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    // Twice: objects a finalizer or a weak reference kept alive through the first are freed by the second.
    await send('HeapProfiler.collectGarbage');
    await send('HeapProfiler.collectGarbage');
    const answer = await send('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    });
    const usage = JSON.parse(String(answer.result?.result?.value)) as NodeJS.MemoryUsage;
    const mb = (bytes: number) => bytes / 1024 / 1024;
    return { heapUsedMb: mb(usage.heapUsed), externalMb: mb(usage.external), rssMb: mb(usage.rss) };
  } finally {
    socket.close();
  }
}
