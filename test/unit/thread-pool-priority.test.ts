import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// Linux only, like the server's target (it reads /proc/self/task).
test("libuv's pool threads are niced, the event loop's thread is not", () => {
  const module = fileURLToPath(new URL('../../src/http/thread-pool-priority.ts', import.meta.url));
  // In a child: the pool starts on its first job, then its threads are niced, twice (idempotent).
  const script = `
    import { readdirSync, readFileSync } from 'node:fs';
    import { readFile } from 'node:fs/promises';
    import os from 'node:os';
    const { lowerThreadPoolPriority } = await import(${JSON.stringify(module)});
    await readFile(${JSON.stringify(module)});
    const changed = [lowerThreadPoolPriority(10), lowerThreadPoolPriority(10)];
    const pool = readdirSync('/proc/self/task')
      .filter((t) => readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim() === 'libuv-worker')
      .map((t) => os.getPriority(Number(t)));
    console.log(JSON.stringify({ changed, pool, main: os.getPriority() }));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  const out = JSON.parse(child.stdout) as { changed: number[]; pool: number[]; main: number };
  assert.ok(out.pool.length >= 1);
  assert.deepEqual(out.changed, [out.pool.length, out.pool.length]);
  assert.ok(
    out.pool.every((p) => p === Math.min(19, out.main + 10)),
    JSON.stringify(out),
  );
});
