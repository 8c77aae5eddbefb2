import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../scripts/run-processes.sh', import.meta.url));
const started: ChildProcess[] = [];
after(() => {
  for (const child of started) child.kill('SIGKILL');
});

/** A long-lived process with `runId` (or none) in its environment, as a run's server or etcd would be. */
function idle(runId: string | undefined): number {
  const env = { ...process.env };
  delete env['PLATFORM_RUN_ID'];
  if (runId) env['PLATFORM_RUN_ID'] = runId;
  // Its own process group, like the control plane's processes; killed by PID in after().
  const child = spawn('sleep', ['600'], { env, detached: true, stdio: 'ignore' });
  started.push(child);
  assert.ok(child.pid);
  return child.pid;
}

describe('scripts/run-processes.sh', () => {
  test('lists the processes of one run only, not those of another run or of no run, nor the asking shell', () => {
    const ours = `test-${randomUUID()}`;
    const mine = [idle(ours), idle(ours)];
    const others = [idle(`test-${randomUUID()}`), idle(undefined)];
    // Asked from a shell that carries the run id itself, as .ci/run does.
    const res = spawnSync('bash', [script, ours], {
      env: { ...process.env, PLATFORM_RUN_ID: ours },
      encoding: 'utf8',
    });
    assert.equal(res.status, 0, res.stderr);
    const found = res.stdout.trim().split('\n').filter(Boolean).map(Number);
    assert.deepEqual(found.toSorted(), mine.toSorted());
    for (const pid of others) assert.ok(!found.includes(pid));
  });

  test('without a run id it refuses to run, rather than list every process', () => {
    const res = spawnSync('bash', [script], { encoding: 'utf8' });
    assert.notEqual(res.status, 0);
    assert.match(res.stderr, /usage: run-processes.sh RUN_ID/);
  });
});
