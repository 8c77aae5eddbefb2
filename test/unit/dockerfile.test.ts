import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';

// The image is built for real by `npm run image` and run by the end-to-end tests (test/e2e/); these
// quick checks keep deploy/Dockerfile consistent with the repository, .dockerignore and the chart.
const root = new URL('../../', import.meta.url);
const read = (p: string) => readFileSync(new URL(p, root), 'utf8');

interface Instruction {
  op: string;
  args: string;
}

function instructions(dockerfile: string): Instruction[] {
  return dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op = '', ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

const all = instructions(read('deploy/Dockerfile'));
const stageStarts = all.flatMap((ins, i) => (ins.op === 'FROM' ? [i] : []));
const finalStage = all.slice(stageStarts.at(-1));
const buildStage = all.slice(stageStarts[0], stageStarts.at(-1));
const values = parseYaml(read('charts/platform-apiserver/values.yaml')) as {
  containerPort: number;
  podSecurityContext: { runAsUser: number; runAsGroup: number };
};

/** Whether .dockerignore lets `path` into the build context (its patterns: `*` and `!name[/]`). */
function inContext(path: string): boolean {
  let included = true;
  for (const raw of read('.dockerignore').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/\/$/, '');
    assert.ok(pattern === '*' || /^[\w.-]+(\/[\w.-]+)*$/.test(pattern), `unsupported pattern ${line}`);
    if (pattern === '*' || path === pattern || path.startsWith(`${pattern}/`)) included = negated;
  }
  return included;
}

test('multi-stage build on Node 24 LTS, both stages on the same Debian release', () => {
  assert.equal(stageStarts.length, 2, 'a build stage and a runtime stage');
  const arg = (name: string) =>
    all.find((i) => i.op === 'ARG' && i.args.startsWith(`${name}=`))?.args.slice(name.length + 1);
  // Docker users' defaults; scripts/build-image.sh passes its own bookworm-based images.
  assert.equal(arg('BUILD_IMAGE'), 'node:24-bookworm');
  // The build stage's node binary runs on the runtime image: both are Debian 12 (bookworm).
  assert.equal(arg('RUNTIME_IMAGE'), 'gcr.io/distroless/cc-debian12');
  assert.equal(all[stageStarts[0]!]!.args, '${BUILD_IMAGE} AS build');
  assert.equal(finalStage[0]!.args, '${RUNTIME_IMAGE}');
});

test('the runtime stage has no build tools, production dependencies only, and a numeric non-root user', () => {
  // Nothing runs in the runtime stage (its base has no shell): it only receives build outputs.
  assert.deepEqual(
    finalStage.filter((i) => i.op === 'RUN'),
    [],
  );
  assert.ok(
    buildStage.some((i) => i.op === 'RUN' && /npm prune --omit=dev/.test(i.args)),
    'dev dependencies pruned',
  );
  const copies = finalStage.filter((i) => i.op === 'COPY').map((i) => i.args);
  assert.ok(
    copies.every((c) => c.startsWith('--from=build ')),
    'the runtime stage copies only build outputs',
  );
  // Of the Node installation, only the binary: no npm, npx or corepack.
  assert.ok(copies.includes('--from=build /usr/local/bin/node /usr/local/bin/node'));
  assert.ok(!copies.some((c) => c.includes('lib/node_modules')), 'no npm in the runtime stage');
  const user = finalStage.filter((i) => i.op === 'USER').at(-1)?.args ?? '';
  assert.match(user, /^[1-9]\d*:[1-9]\d*$/);
  assert.equal(
    user,
    `${values.podSecurityContext.runAsUser}:${values.podSecurityContext.runAsGroup}`,
    "the chart's runAsUser/runAsGroup",
  );
  assert.equal(finalStage.find((i) => i.op === 'EXPOSE')?.args, String(values.containerPort));
  assert.equal(
    finalStage.find((i) => i.op === 'ENTRYPOINT')?.args,
    '["/usr/local/bin/node", "dist/main.js"]',
  );
});

test('every path the build stage copies exists and is in the build context', () => {
  const sources = buildStage
    .filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))
    .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
  assert.deepEqual(sources, [
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'src',
  ]);
  for (const source of sources) {
    assert.ok(existsSync(new URL(source, root)), `${source} exists`);
    assert.ok(inContext(source), `${source} is not excluded by .dockerignore`);
  }
  for (const excluded of ['node_modules', 'test', '.git', 'dist', 'charts', 'README.md']) {
    assert.equal(inContext(excluded), false, `${excluded} stays out of the build context`);
  }
  // What the build runs exists: `npm run build` compiles with tsconfig.build.json into dist/, then
  // writes the build facts /kapis/version serves (a script under src/, so it is in the context).
  const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
  assert.equal(
    pkg.scripts['build'],
    'tsc -p tsconfig.build.json && node src/build-info/write-build-info.ts dist',
  );
  assert.ok(existsSync(new URL('src/build-info/write-build-info.ts', root)));
  assert.equal(
    (JSON.parse(read('tsconfig.build.json')) as { compilerOptions: { outDir: string } }).compilerOptions
      .outDir,
    'dist',
  );
  assert.ok(existsSync(new URL('src/main.ts', root)), 'dist/main.js is compiled from src/main.ts');
});
