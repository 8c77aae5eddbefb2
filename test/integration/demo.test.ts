// `npm run demo` as a newcomer meets it: start it, paste the commands it prints, press Ctrl-C. Several
// times, because its start-up once failed on a busy machine (a CRD without status yet).
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { controlPlaneBinaries } from '../cluster/binaries.ts';
import { freePort } from '../cluster/free-port.ts';
import { StopWaiting, waitFor } from '../cluster/wait-for.ts';

const RUNS = 3;
const DEMO_NODES = 12;
const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** A process, told apart from a later one that reuses its PID by its start time. */
interface Proc {
  pid: number;
  startTime: string;
  command: string;
}

/** PPID and start time from /proc/<pid>/stat (fields 4 and 22; the command in parentheses may hold spaces). */
function stat(pid: number): { ppid: number; startTime: string; state: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0]!, ppid: Number(fields[1]), startTime: fields[19]! };
}

function cmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

/** Every live process below `pid` (children, their children...). */
function descendants(pid: number): Proc[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(Number(entry));
    if (s) children.set(s.ppid, [...(children.get(s.ppid) ?? []), Number(entry)]);
  }
  const found: Proc[] = [];
  const visit = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      const s = stat(child);
      if (!s) continue;
      const command = cmdline(child);
      if (command === undefined) continue;
      found.push({ pid: child, startTime: s.startTime, command });
      visit(child);
    }
  };
  visit(pid);
  return found;
}

function alive(proc: Proc): boolean {
  const s = stat(proc.pid);
  return s !== undefined && s.startTime === proc.startTime && s.state !== 'Z';
}

interface Demo {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited(): boolean;
}

/** `node scripts/demo.ts --http.port=<port>`, as scripts/run.sh runs it, in its own process group. */
function startDemo(port: number): Demo {
  const child = spawn(process.execPath, ['scripts/demo.ts', `--http.port=${port}`], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = (stream: Readable) => {
    const collected: string[] = [];
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      collected.push(...parts);
    });
    stream.on('end', () => partial && collected.push(partial));
    return collected;
  };
  const stdout = lines(child.stdout!);
  const stderr = lines(child.stderr!);
  let done = false;
  // 'close': the exit status and all of the output (the pipes are drained).
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  return { child, stdout, stderr, exit, exited: () => done };
}

/** The printed line that contains `marker` (exactly one). */
function printed(lines: string[], marker: string): string {
  const found = lines.filter((l) => l.includes(marker));
  assert.equal(found.length, 1, `one printed line with ${marker}:\n${lines.join('\n')}`);
  return found[0]!;
}

/** Runs a printed command line as a newcomer pasting it into bash would. */
async function paste(script: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout } = await run('bash', ['-c', script], { env: { ...process.env, ...env }, timeout: 30_000 });
  return stdout;
}

describe('npm run demo: start-up, the printed commands, Ctrl-C', () => {
  const binaries = controlPlaneBinaries();

  before(() => {
    // What `npm run demo` does before it starts the demo (scripts/run.sh): the server runs from dist/.
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  });

  for (let round = 1; round <= RUNS; round++) {
    test(`run ${round} of ${RUNS}`, { timeout: 180_000 }, async (t) => {
      const port = await freePort();
      const demo = startDemo(port);
      // What this run's demo started, for the clean-up of a failed run.
      const owned: { procs: Proc[]; dir?: string } = { procs: [] };
      t.after(() => {
        // Only if the test failed half-way: what this demo started, by PID, and its temp dir.
        if (!demo.exited()) process.kill(-demo.child.pid!, 'SIGKILL');
        for (const proc of owned.procs) if (alive(proc)) process.kill(proc.pid, 'SIGKILL');
        if (owned.dir) rmSync(owned.dir, { recursive: true, force: true });
      });
      const output = () => `stdout:\n${demo.stdout.join('\n')}\nstderr:\n${demo.stderr.join('\n')}`;

      await waitFor(
        'the demo to print its commands',
        () => {
          if (demo.exited()) throw new StopWaiting(`the demo exited before it was ready\n${output()}`);
          return demo.stdout.some((l) => l.includes(' get nodes ')) ? true : undefined;
        },
        { timeoutMs: 150_000, intervalMs: 100 },
      );
      const url = `http://127.0.0.1:${port}`;
      assert.ok(
        demo.stdout.includes(`demo: platform-apiserver on ${url}  (Ctrl-C stops everything)`),
        output(),
      );
      const kubeconfig = /\(kubeconfig: (\S+)\)$/.exec(printed(demo.stdout, 'demo nodes (kubeconfig: '))?.[1];
      assert.ok(kubeconfig, output());
      const cpDir = path.dirname(kubeconfig);
      owned.dir = cpDir;
      assert.ok(existsSync(cpDir), 'the control plane has its temp dir');

      // Who the demo started, before Ctrl-C: etcd, kube-apiserver and the server.
      const started = descendants(demo.child.pid!);
      owned.procs = started;
      const commands = started.map((p) => p.command);
      for (const binary of [binaries.etcd, binaries.kubeApiserver, path.join(root, 'dist', 'main.js')])
        assert.ok(
          commands.some((c) => c.includes(`${binary} `)),
          `${binary} runs under the demo:\n${commands.join('\n')}`,
        );

      // The token command spans two printed lines (a backslash continuation), as pasted.
      const first = demo.stdout.findIndex((l) => l.includes('TOKEN=$(curl'));
      assert.ok(demo.stdout[first]?.endsWith('\\'), output());
      const tokenCommand = `${demo.stdout[first]}\n${demo.stdout[first + 1]}`;
      const token = await paste(`${tokenCommand}\nprintf '%s' "$TOKEN"`);
      assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT access token');

      const page = JSON.parse(
        await paste(printed(demo.stdout, '/kapis/resources.platform.io/v1alpha3/nodes'), { TOKEN: token }),
      ) as { items: { metadata: { name: string } }[]; totalItems: number };
      assert.equal(page.totalItems, DEMO_NODES);
      assert.deepEqual(
        page.items.map((n) => n.metadata.name),
        ['demo-0000', 'demo-0001', 'demo-0002'],
      );

      const proxied = JSON.parse(await paste(printed(demo.stdout, '/api/v1/nodes'), { TOKEN: token })) as {
        kind: string;
        items: unknown[];
      };
      assert.equal(proxied.kind, 'NodeList');
      assert.equal(proxied.items.length, DEMO_NODES);

      const metricsAndOpenApi = await paste(printed(demo.stdout, '/metrics'));
      assert.match(metricsAndOpenApi, /^# (HELP|TYPE) /m);
      assert.match(metricsAndOpenApi, /"openapi":"3\./);

      const kubectlCommand = printed(demo.stdout, ' get nodes ');
      assert.ok(
        kubectlCommand.trimStart().startsWith(binaries.kubectl),
        'the pinned kubectl, not one on PATH',
      );
      const listed = (await paste(kubectlCommand)).split('\n').filter((l) => /^demo-\d{4}\s/.test(l));
      assert.equal(listed.length, DEMO_NODES);

      // Ctrl-C: the terminal sends SIGINT to the foreground process group; under `npm run demo`, npm
      // (in that group too) forwards it to its child, the demo, once more.
      process.kill(-demo.child.pid!, 'SIGINT');
      process.kill(demo.child.pid!, 'SIGINT');
      const exit = await waitFor(
        'the demo to exit after Ctrl-C',
        () => (demo.exited() ? demo.exit : undefined),
        {
          timeoutMs: 60_000,
          intervalMs: 100,
        },
      );
      assert.deepEqual(exit, { code: 0, signal: null }, output());
      assert.equal(demo.stdout.at(-1), 'demo: stopped; control plane removed.', output());
      assert.deepEqual(
        started.filter(alive).map((p) => p.command),
        [],
        'every process the demo started is gone',
      );
      assert.equal(existsSync(cpDir), false, 'the control plane temp dir is removed');
      assert.deepEqual(demo.stderr, [], 'nothing on stderr');
    });
  }
});
