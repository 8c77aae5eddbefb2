import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BufferedOutput } from '../../src/observability/buffered-output.ts';
import { createLogger } from '../../src/observability/logger.ts';

function sink() {
  const writes: string[] = [];
  return { writes, write: (chunk: Buffer) => writes.push(chunk.toString('utf8')) };
}

describe('buffered log output', () => {
  test('lines are gathered and written in one call when the buffer fills', () => {
    const out = sink();
    const buffered = new BufferedOutput({ sink: out, flushIntervalMs: 60_000, maxBufferBytes: 10 });
    buffered.write('abc\n');
    buffered.write('def\n');
    assert.deepEqual(out.writes, [], 'nothing written below the bound');
    assert.equal(buffered.pendingBytes, 8);
    buffered.write('ghi\n');
    assert.deepEqual(out.writes, ['abc\ndef\nghi\n']);
    assert.equal(buffered.pendingBytes, 0);
  });

  test('a timer writes what waits after the flush interval', async () => {
    const out = sink();
    const buffered = new BufferedOutput({ sink: out, flushIntervalMs: 5, maxBufferBytes: 1 << 20 });
    buffered.write('one\n');
    await new Promise<void>((resolve) => {
      const check = () => (out.writes.length > 0 ? resolve() : setImmediate(check));
      check();
    });
    assert.deepEqual(out.writes, ['one\n']);
  });

  test('ending the stream writes the rest (graceful stop)', async () => {
    const out = sink();
    const buffered = new BufferedOutput({ sink: out, flushIntervalMs: 60_000, maxBufferBytes: 1 << 20 });
    const logger = createLogger({ level: 'info', stream: buffered });
    for (let i = 0; i < 100; i++) logger.info('request', { i });
    await new Promise<void>((resolve) => {
      buffered.once('finish', () => resolve());
      buffered.end();
    });
    const lines = out.writes.join('').split('\n').filter(Boolean);
    assert.equal(lines.length, 100);
    assert.equal((JSON.parse(lines[99]!) as { i: number }).i, 99);
  });

  test('a process that exits writes every buffered line of the server output first', () => {
    // bufferedStdout() flushes on 'exit': the lines below are still buffered when process.exit runs.
    const module = fileURLToPath(new URL('../../src/observability/buffered-output.ts', import.meta.url));
    const script =
      `const { bufferedStdout } = await import(${JSON.stringify(module)});` +
      `const out = bufferedStdout(); for (let i = 0; i < 5000; i++) out.write('line ' + i + '\\n'); process.exit(0);`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const lines = child.stdout.split('\n').filter(Boolean);
    assert.equal(lines.length, 5000);
    assert.equal(lines[4999], 'line 4999');
  });
});
