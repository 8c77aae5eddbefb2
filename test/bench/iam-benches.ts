// `npm run bench:iam`: the IAM benchmark (iam.bench.ts), then the workspace memberships' one
// (iam-in-force.bench.ts) where it exists, each with this command line's flags (both read `--quick`
// and the scale flags). Stops at the first that fails.
//   source scripts/ensure-node.sh && npm run bench:iam [-- --quick]
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const benches = ['iam.bench.ts', 'iam-in-force.bench.ts']
  .map((file) => fileURLToPath(new URL(file, import.meta.url)))
  .filter((file) => existsSync(file));

for (const file of benches) {
  console.log(`\n# node ${file} ${process.argv.slice(2).join(' ')}`);
  const code = await new Promise<number | null>((resolve) =>
    spawn(process.execPath, [file, ...process.argv.slice(2)], { stdio: 'inherit' }).once('exit', resolve),
  );
  if (code !== 0) {
    process.exitCode = code ?? 1;
    break;
  }
}
