// `npm run bench:nodes`: the node benchmark (nodes-bench.ts) and then the pod-cache benchmark
// (pods-bench.ts), each given every flag of the command line (`npm run bench:nodes -- --quick`), one after
// the other so they never share the cores; a single-part mode of the node benchmark (--storm, --proxy,
// --page, --scale, --soak, --spread) runs it alone. Both print as they go; the last line of stdout is the node
// benchmark's JSON line, the one scripts read.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);

/** Runs one benchmark with the flags; its stdout is passed on and returned. */
function run(entry: string): Promise<string> {
  const child = spawn(process.execPath, [path.join(here, entry), ...argv], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    process.stdout.write(chunk);
  });
  const stop = () => child.kill('SIGTERM');
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      if (code === 0) resolve(out);
      else reject(new Error(`${entry} exited with ${code}`));
    }),
  );
}

// The node benchmark's single-part modes (--storm, --proxy, …) are about it alone.
const NODES_ONLY = ['storm', 'proxy', 'page', 'scale', 'soak', 'spread'];
const nodesOnly = argv.some((a) => NODES_ONLY.includes(a.replace(/^--/, '').split('=')[0]!));
const nodes = await run('nodes-bench.ts');
if (!nodesOnly) await run('pods-bench.ts');
const summary = nodes.trimEnd().split('\n').at(-1) ?? '';
process.stdout.write(`${summary}\n`);
